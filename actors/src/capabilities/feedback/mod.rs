//! Feedback (spec "Feedback, ratings and NPS", "Feedback behaviour" 1–2): each business's
//! feedback configuration, the feedback-form link sent after an order ([`SendFeedback`]), its
//! funnel (sent, opened, submitted) and the ratings the form stores (source `'3'`).
//!
//! Decisions the spec leaves open (documented in `docs/feedback.md`):
//! - the configuration is written by `/crm_api/save/feedback/config` (staff) and read by
//!   `/crm_api/get/feedback/config`; the brand's own record is `child_business_id` `"0"`;
//! - an outlet's record applies when its `feedback_flow` is 1, else the brand's when its
//!   `feedback_flow` is 1; otherwise no link is sent;
//! - one feedback request per (outlet, order): the order's first version sends it, updates and
//!   replays send nothing;
//! - a form submitted again for the same order replaces its rating (the funnel counts the first).

mod answers;
mod query;
mod reaction;
mod rows;

use answers::*;
pub use query::*;
pub use reaction::*;
pub use rows::*;

pub mod legacy;
pub use legacy::QueueLegacySms;
pub mod nps;
pub mod recovery;

use crate::domain::time::ist_day;
use crate::query::QueryError;

/// Feedback requests listed per page.
pub const FEEDBACK_PAGE: usize = 20;
/// Days a feedback-form link stays valid after it is sent.
pub const FORM_VALIDITY_DAYS: i64 = 30;

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _)
    SaveConfig: SaveConfig { config } => save_config(tenant, *config).await,
    Config: Config { child_business_id } => {
        let found = configs(tenant).await.map_err(QueryError::from).map(|c| c.get(&child_business_id).cloned());
        found.and_then(|c| c.ok_or(QueryError::NotFound))
    },
    Open: Open { claims } => open(tenant, claims).await,
    Submit: Submit { claims, token, submission, now } => {
        submit(tenant, claims, token, submission, now).await
    },
    Requests: Requests { business_id, page, start, end } => {
        requests(tenant, business_id, page, start, end).await
    },
    Mis: Mis { business_id, start, end } => mis(tenant, business_id, start, end).await,
    StoreReviews: StoreReviews { store, page } => {
        let mut all: Vec<crate::reviews::StoreReview> = match tenant
            .repo()
            .all(crate::repo::STORE_REVIEWS, &crate::keys::store_reviews_partition(&tenant.id, &store))
            .await
        {
            Ok(all) => all,
            Err(error) => return Err(error.into()),
        };
        all.sort_by(|a, b| b.last_modified.cmp(&a.last_modified));
        let records = all.into_iter().map(|r| r.record).collect();
        Ok(ReviewPage::of(records, page, FEEDBACK_PAGE))
    },
    SyncConfigs: SyncConfigs { now } => sync_configs(tenant, now).await,
    GetOrdersSummary: GetOrdersSummary { business_id, start, end, page } => {
        orders_summary(tenant, business_id, &start, &end, page).await
    },
    NpsRecord: NpsRecord { answer, now } => nps::record(tenant, answer, now).await,
    NpsList: NpsList { business_id, rating, mobile_number, page } => {
        nps::list(tenant, business_id, rating, mobile_number, page).await
    },
    GetNpsReport: GetNpsReport { business_id, start, end, buckets } => {
        nps::report(tenant, business_id, &start, &end, buckets).await
    },
    NpsExport: NpsExport { business_id, start, end } => nps::responses(tenant, |r| {
            let day = ist_day(r.insertedAt);
            business_id.as_ref().is_none_or(|b| *b == r.businessId) && day >= start && day <= end
        })
        .await
        .map(|data| nps::NpsPage { total: data.len() as u64, data }),
    NpsConvert: NpsConvert { day } => nps::convert(tenant, &day).await,
    legacy::QueueLegacySms: question => legacy::queue(tenant, question).await,
    Ratings: Ratings { business_id, sources, page, start, end } => {
        ratings_in(tenant, business_id.as_deref(), start.as_deref(), end.as_deref()).await.map(|all| {
            let matching: Vec<Rating> =
                all.into_iter().filter(|r| sources.is_empty() || sources.contains(&r.source)).collect();
            RatingPage::of(matching, page, FEEDBACK_PAGE)
        })
    },
    GetRatingDays: GetRatingDays { business_id, start, end } => {
        rating_days(tenant, business_id, start, end).await
    },
}

#[cfg(test)]
mod tests;
