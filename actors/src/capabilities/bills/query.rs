//! The digital-bill questions (`BillsQuery`) and their reply types.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::query::question;

#[allow(unused_imports)]
use super::*;

/// A widget's fields as staff set them.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WidgetFields {
    /// Render order.
    pub sequence: Option<i64>,
    /// Title.
    pub title: Option<String>,
    /// Text or target URL.
    pub value: Option<String>,
    /// Banner image URL.
    pub static_banner_link: Option<String>,
    /// 0/1.
    pub status: Option<u8>,
}

/// What an insight records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InsightEvent {
    /// A click: `clicks` + 1.
    Click,
    /// Watch time: `watchTime` set.
    Watch,
}

/// A query of the bills capability.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum BillsQuery {
    /// See [`SaveConfig`].
    SaveConfig(SaveConfig),
    /// See [`SetStatus`].
    SetStatus(SetStatus),
    /// See [`Config`].
    Config(Config),
    /// See [`AddWidget`].
    AddWidget(AddWidget),
    /// See [`EditWidget`].
    EditWidget(EditWidget),
    /// See [`Customers`].
    Customers(Customers),
    /// See [`GetMis`].
    Mis(GetMis),
    /// See [`Open`].
    Open(Open),
    /// See [`FeedbackOpen`].
    FeedbackOpen(FeedbackOpen),
    /// See [`Download`].
    Download(Download),
    /// See [`Insight`].
    Insight(Insight),
    /// See [`Generate`].
    Generate(Generate),
    /// See [`Report`].
    Report(Report),
    /// See [`super::codes::ResolveBill`].
    ResolveBill(super::codes::ResolveBill),
}

question! {
    /// Create or replace a business's configuration (its `insertedAt` is kept): [`LinkConfig`].
    pub struct SaveConfig {
        /// The configuration.
        pub config: Box<LinkConfig>,
    } -> LinkConfig;
}

question! {
    /// Turn a business's bills on or off (also `business_configs.digital_bill`): [`LinkConfig`];
    /// not found when it has no configuration.
    pub struct SetStatus {
        /// The outlet, or the brand.
        pub business_id: String,
        /// 0/1.
        pub status: u8,
        /// Now.
        pub now: DateTime<Utc>,
    } -> LinkConfig;
}

question! {
    /// A business's configuration and widgets, and the brand's when the business has none:
    /// [`ConfigView`].
    pub struct Config {
        /// The outlet, or the brand.
        pub business_id: String,
    } -> ConfigView;
}

question! {
    /// Map a widget kind for a business: [`WidgetMapping`].
    pub struct AddWidget {
        /// The outlet, or the brand.
        pub business_id: String,
        /// Catalogue id.
        pub widget_id: u32,
        /// Its fields.
        pub fields: WidgetFields,
        /// Now.
        pub now: DateTime<Utc>,
    } -> WidgetMapping;
}

question! {
    /// Change a widget: [`WidgetMapping`]; not found when unknown.
    pub struct EditWidget {
        /// The mapping's id.
        pub id: u64,
        /// The fields to change.
        pub fields: WidgetFields,
    } -> WidgetMapping;
}

question! {
    /// A page of sent bills, newest first: [`BillPage`].
    pub struct Customers {
        /// Only this outlet's.
        pub business_id: Option<String>,
        /// From 1.
        pub page: u64,
        /// First IST day, when given.
        pub start: Option<String>,
        /// Last IST day, when given.
        pub end: Option<String>,
    } -> BillPage;
}

question! {
    /// The funnel between two IST days: [`Mis`].
    pub struct GetMis {
        /// Only this outlet's.
        pub business_id: Option<String>,
        /// First IST day.
        pub start: String,
        /// Last IST day.
        pub end: String,
    } -> Mis;
}

question! {
    /// An open of the bill (`/invoice/open`, `GET /b/<code>`): [`Counted`].
    pub struct Open {
        /// The bill.
        pub bill_id: String,
        /// Now.
        pub now: DateTime<Utc>,
    } -> Counted;
}

question! {
    /// An open of the bill's feedback link: [`Counted`].
    pub struct FeedbackOpen {
        /// The bill.
        pub bill_id: String,
    } -> Counted;
}

question! {
    /// A download of the bill: [`Counted`].
    pub struct Download {
        /// The bill.
        pub bill_id: String,
    } -> Counted;
}

question! {
    /// A widget click or watch time: [`Counted`].
    pub struct Insight {
        /// The bill.
        pub bill_id: String,
        /// Catalogue id.
        pub widget_id: u32,
        /// Click or watch.
        pub event: InsightEvent,
        /// Seconds (watch).
        pub watch_time: u64,
    } -> Counted;
}

question! {
    /// One page of the generation job over the queue records of one IST day: [`Generated`].
    pub struct Generate {
        /// Now.
        pub now: DateTime<Utc>,
        /// The IST day.
        pub day: String,
        /// The clustering key after which to read.
        pub after: Option<String>,
    } -> Generated;
}

question! {
    /// The daily report's figures for IST day `day`: [`BillReport`].
    pub struct Report {
        /// The day reported (yesterday, for the 11:32 job).
        pub day: String,
    } -> BillReport;
}

/// A configuration, its widgets, and the brand's record when the business has none.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConfigView {
    /// The business's own record.
    pub config: Option<LinkConfig>,
    /// The brand's record, when the business has none of its own (what applies to it).
    pub inherited: Option<LinkConfig>,
    /// Its widgets, in `sequence`.
    pub widgets: Vec<WidgetMapping>,
}

/// A page of bills.
pub type BillPage = crate::query::Page<Bill>;

/// The funnel of a period.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mis {
    /// Totals (`date` is empty).
    pub totals: Funnel,
    /// unique_clicks / total_bill_sent, percent.
    pub opening_percentage: f64,
    /// Per IST day and outlet.
    pub days: Vec<Funnel>,
}

/// What an event on a bill did.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Counted {
    /// False for an unknown bill (nothing changed).
    pub counted: bool,
    /// The bill after it, when known.
    pub bill: Option<Bill>,
    /// How the bill's page presents the brand (for `Open`).
    #[serde(default)]
    pub branding: crate::capabilities::branding::Branding,
}
