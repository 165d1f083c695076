//! Digital bills (spec "Digital bills", "Digital bill behaviour"): each business's bill
//! configuration (`link_config`) and widgets, the bills themselves (one per outlet and order), and
//! their open / click / download funnel.
//!
//! | piece | where |
//! |---|---|
//! | configurations, widgets, reads, the funnel | this module ([`BillsQuery`]) |
//! | generation: the order reaction [`GenerateBill`] and the 09:57 job's pages | [`generate`] |
//! | the daily report's figures (the 11:32 job writes the workbook) | [`report`] |
//!
//! Decisions the spec leaves open (documented in `docs/digital-bills.md`):
//! - a business's own configuration wins over the brand's (`parentId` `"0"`), also when it is off;
//! - `time` is minutes (0, or 15 to 240); `linkValidity` is days (0: the link never expires);
//! - an unknown `bill_id` on an open, insight or download changes nothing and answers
//!   `counted: false` (200): the caller did nothing wrong it could fix by retrying;
//! - `widget_id` in an insight is the catalogue id (`widgetId`); a business maps each kind once.

mod answers;
mod query;
mod rows;

use answers::*;
pub use query::*;
pub use rows::*;

mod codes;
pub mod generate;
pub mod report;

pub use codes::{BillRef, ResolveBill};
pub use generate::{GenerateBill, Generated, Skip};
pub use report::{BillReport, FunnelFigures, SkipCount, Unsent};

/// Bills listed per page by `/get_digital_bill_customers`.
pub const BILL_PAGE: usize = 10;
/// Queue records read per generation page.
pub const GENERATION_BATCH: usize = 10_000;

/// Longest a generation page works in the tenant actor before it answers with where to go on: a
/// page of 10,000 orders (a bill and a durable batch each) would outlast the 10 s a tenant
/// question may take, and the job would call a large brand failed on every run.
pub const GENERATION_SLICE: std::time::Duration = std::time::Duration::from_secs(2);

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _)
    SaveConfig: SaveConfig { config } => save_config(tenant, *config).await,
    SetStatus: SetStatus { business_id, status, now } => {
        set_status(tenant, business_id, status, now).await
    },
    Config: Config { business_id } => config_view(tenant, business_id).await,
    AddWidget: AddWidget { business_id, widget_id, fields, now } => {
        add_widget(tenant, business_id, widget_id, fields, now).await
    },
    EditWidget: EditWidget { id, fields } => edit_widget(tenant, id, fields).await,
    Customers: Customers { business_id, page, start, end } => {
        customers(tenant, business_id, page, start, end).await
    },
    GetMis: GetMis { business_id, start, end } => mis(tenant, business_id, start, end).await,
    Open: Open { bill_id, now } => open(tenant, &bill_id, now).await,
    FeedbackOpen: FeedbackOpen { bill_id } => touch(tenant, &bill_id, |bill| {
            bill.feedback_opens += 1;
            Some(Vec::new())
        })
        .await,
    Download: Download { bill_id } => touch(tenant, &bill_id, |bill| {
            bill.download_flag += 1;
            Some(Vec::new())
        })
        .await,
    Insight: Insight { bill_id, widget_id, event, watch_time } => {
        touch(tenant, &bill_id, |bill| {
                // a widget the bill does not show is not counted
                let widget = bill.widgets.iter_mut().find(|w| w.widget_id == widget_id)?;
                match event {
                    InsightEvent::Click => widget.clicks += 1,
                    InsightEvent::Watch => widget.watch_time = watch_time,
                }
                Some(Vec::new())
            })
            .await
    },
    Generate: Generate { now, day, after } => generate::page(tenant, now, &day, after).await,
    Report: Report { day } => report::figures(tenant, &day).await,
    codes::ResolveBill: ResolveBill { sent } => codes::resolve(tenant, sent).await,
}
