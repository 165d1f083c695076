//! The digital-bill questions (`BillsQuery`) and their reply types.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::*;

/// A widget's fields as staff set them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Create or replace a business's configuration (its `insertedAt` is kept): [`LinkConfig`].
    SaveConfig {
        /// The configuration.
        config: Box<LinkConfig>,
    },
    /// Turn a business's bills on or off (also `business_configs.digital_bill`): [`LinkConfig`];
    /// not found when it has no configuration.
    SetStatus {
        /// The outlet, or the brand.
        business_id: String,
        /// 0/1.
        status: u8,
        /// Now.
        now: DateTime<Utc>,
    },
    /// A business's configuration and widgets, and the brand's when the business has none:
    /// [`ConfigView`].
    Config {
        /// The outlet, or the brand.
        business_id: String,
    },
    /// Map a widget kind for a business: [`WidgetMapping`].
    AddWidget {
        /// The outlet, or the brand.
        business_id: String,
        /// Catalogue id.
        widget_id: u32,
        /// Its fields.
        fields: WidgetFields,
        /// Now.
        now: DateTime<Utc>,
    },
    /// Change a widget: [`WidgetMapping`]; not found when unknown.
    EditWidget {
        /// The mapping's id.
        id: u64,
        /// The fields to change.
        fields: WidgetFields,
    },
    /// A page of sent bills, newest first: [`BillPage`].
    Customers {
        /// Only this outlet's.
        business_id: Option<String>,
        /// From 1.
        page: u64,
        /// First IST day, when given.
        start: Option<String>,
        /// Last IST day, when given.
        end: Option<String>,
    },
    /// The funnel between two IST days: [`Mis`].
    Mis {
        /// Only this outlet's.
        business_id: Option<String>,
        /// First IST day.
        start: String,
        /// Last IST day.
        end: String,
    },
    /// An open of the bill (`/invoice/open`, `GET /b/<code>`): [`Counted`].
    Open {
        /// The bill.
        bill_id: String,
        /// Now.
        now: DateTime<Utc>,
    },
    /// An open of the bill's feedback link: [`Counted`].
    FeedbackOpen {
        /// The bill.
        bill_id: String,
    },
    /// A download of the bill: [`Counted`].
    Download {
        /// The bill.
        bill_id: String,
    },
    /// A widget click or watch time: [`Counted`].
    Insight {
        /// The bill.
        bill_id: String,
        /// Catalogue id.
        widget_id: u32,
        /// Click or watch.
        event: InsightEvent,
        /// Seconds (watch).
        watch_time: u64,
    },
    /// One page of the generation job over the queue records of one IST day: [`Generated`].
    Generate {
        /// Now.
        now: DateTime<Utc>,
        /// The IST day.
        day: String,
        /// The clustering key after which to read.
        after: Option<String>,
    },
    /// The daily report's figures for IST day `day`: [`BillReport`].
    Report {
        /// The day reported (yesterday, for the 11:32 job).
        day: String,
    },
}

/// A configuration, its widgets, and the brand's record when the business has none.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Mis {
    /// Totals (`date` is empty).
    pub totals: Funnel,
    /// unique_clicks / total_bill_sent, percent.
    pub opening_percentage: f64,
    /// Per IST day and outlet.
    pub days: Vec<Funnel>,
}

/// What an event on a bill did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Counted {
    /// False for an unknown bill (nothing changed).
    pub counted: bool,
    /// The bill after it, when known.
    pub bill: Option<Bill>,
    /// How the bill's page presents the brand (for `Open`).
    #[serde(default)]
    pub branding: crate::capabilities::branding::Branding,
}
