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

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::brand::Brand;
use crate::capabilities::business;
use crate::domain::time::ist_day;
use crate::keys;
use crate::query::{reply, within, QueryError, QueryReply};
use crate::repo::{BILL_CONFIGS, BILL_FUNNEL, BILL_WIDGETS, DIGITAL_BILLS};

pub mod generate;
pub mod report;

pub use generate::{GenerateBill, Generated, Skip};
pub use report::{BillReport, FunnelFigures, SkipCount, Unsent};

/// Bills listed per page by `/get_digital_bill_customers`.
pub const BILL_PAGE: usize = 10;
/// Queue records read per generation page.
pub const GENERATION_BATCH: usize = 10_000;
/// The platforms an order may come from (`bill_platform` values).
pub const PLATFORMS: [&str; 5] = ["app", "website", "kiosk", "pos", "chat_api"];

/// One kind of the widget catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Widget {
    /// Catalogue id.
    pub id: u32,
    /// Name.
    pub name: &'static str,
    /// Machine name of the kind.
    pub kind: &'static str,
    /// 1: available.
    pub status: u8,
}

/// The widget catalogue: the six kinds of the spec.
pub const WIDGETS: [Widget; 6] = [
    Widget { id: 1, name: "Itemized receipt", kind: "itemized_receipt", status: 1 },
    Widget { id: 2, name: "Loyalty info", kind: "loyalty_info", status: 1 },
    Widget { id: 3, name: "Upsell / product", kind: "upsell", status: 1 },
    Widget { id: 4, name: "Static banner", kind: "static_banner", status: 1 },
    Widget { id: 5, name: "Feedback form link", kind: "feedback_link", status: 1 },
    Widget { id: 6, name: "Profile completion", kind: "profile_completion", status: 1 },
];

/// The catalogue entry of `id`.
pub fn widget_kind(id: u32) -> Option<&'static Widget> {
    WIDGETS.iter().find(|w| w.id == id)
}

/// A business's bill configuration (spec `link_config`; table `bill_configs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkConfig {
    /// The outlet, or the brand for a brand-level record.
    #[serde(rename = "businessId")]
    pub business_id: String,
    /// The brand, or `"0"` for a brand-level record.
    #[serde(rename = "parentId")]
    pub parent_id: String,
    /// 1 SMS, 2 chat.
    pub mode: u8,
    /// Bill type.
    #[serde(rename = "type")]
    pub bill_type: i64,
    /// Days the bill link stays valid (0: always).
    #[serde(rename = "linkValidity")]
    pub link_validity: i64,
    /// Colour of the bill page.
    #[serde(rename = "brandColor")]
    pub brand_color: String,
    /// 0/1: the page shows its footer button.
    #[serde(rename = "enableFooter")]
    pub enable_footer: u8,
    /// The footer button's label.
    #[serde(rename = "footerButton")]
    pub footer_button: String,
    /// Delivery delay, minutes.
    pub time: i64,
    /// 0/1.
    pub status: u8,
    /// SMS template.
    pub sms_template: Option<String>,
    /// Chat template.
    pub chat_template: Option<String>,
    /// `UTILITY` (default) or `MARKETING`: the chat price.
    #[serde(default)]
    pub chat_template_type: crate::domain::wallet::TemplateType,
    /// Sender.
    pub sender_id: Option<String>,
    /// SMS template variables.
    pub sms_variables: Option<String>,
    /// Chat template variables.
    pub chat_variables: Option<String>,
    /// Platforms that get bills (empty: all).
    #[serde(default)]
    pub bill_platform: Vec<String>,
    /// Created.
    #[serde(rename = "insertedAt")]
    pub inserted_at: DateTime<Utc>,
    /// Changed.
    #[serde(rename = "updatedAt")]
    pub updated_at: DateTime<Utc>,
}

impl LinkConfig {
    /// Whether it is the brand's own record.
    pub fn brand_level(&self) -> bool {
        self.parent_id == "0"
    }
}

/// A widget of a business's bills (spec "Widget mapping"; table `bill_widgets`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WidgetMapping {
    /// The mapping's id within the brand.
    pub id: u64,
    /// The outlet, or the brand.
    #[serde(rename = "businessId")]
    pub business_id: String,
    /// The brand, or `"0"`.
    #[serde(rename = "parentId")]
    pub parent_id: String,
    /// Catalogue id.
    #[serde(rename = "widgetId")]
    pub widget_id: u32,
    /// Render order.
    pub sequence: i64,
    /// Title.
    pub title: String,
    /// Text or target URL.
    pub value: String,
    /// Banner image URL.
    pub static_banner_link: String,
    /// 0/1.
    pub status: u8,
    /// Created.
    #[serde(rename = "insertedAt")]
    pub inserted_at: DateTime<Utc>,
}

/// A widget as one bill shows it, with its figures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BillWidget {
    /// Catalogue id.
    #[serde(rename = "widgetId")]
    pub widget_id: u32,
    /// The kind's machine name.
    pub kind: String,
    /// Title.
    pub title: String,
    /// Text or target URL.
    pub value: String,
    /// Banner image URL.
    pub static_banner_link: String,
    /// Clicks.
    pub clicks: u64,
    /// Seconds watched (the last report).
    #[serde(rename = "watchTime")]
    pub watch_time: u64,
}

/// A line of the bill.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BillItem {
    /// Name.
    pub name: String,
    /// Quantity.
    pub qty: rust_decimal::Decimal,
    /// Unit price.
    pub price: rust_decimal::Decimal,
    /// qty × price.
    pub total: rust_decimal::Decimal,
}

/// The order as the bill shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BillOrder {
    /// Before tax and discount (the payload's `subtotal`, else the items' total, else `amount`).
    pub subtotal: rust_decimal::Decimal,
    /// The payload's `tax` (0 when absent).
    pub tax: rust_decimal::Decimal,
    /// The payload's `discount` (0 when absent).
    pub discount: rust_decimal::Decimal,
    /// The amount paid.
    pub amount: rust_decimal::Decimal,
    /// Loyalty points earned on it.
    pub loyalty_points: i64,
    /// `orderTime`, when given.
    pub order_time: Option<String>,
}

/// A digital bill: the spec's bill customer record, with what the bill page shows (table
/// `digital_bills`, partition brand, clustering `bill_id`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bill {
    /// Its id (also the code of its own short link, `/b/<bill_id>`).
    pub bill_id: String,
    /// Customer name.
    pub name: String,
    /// Customer number.
    pub number: String,
    /// Order id.
    pub order_id: String,
    /// When it was generated and queued.
    pub sent_at: DateTime<Utc>,
    /// When the message goes out (`sent_at` + `time` minutes).
    pub scheduled_at: DateTime<Utc>,
    /// 1 SMS, 2 chat.
    pub mode: u8,
    /// Its link.
    pub short_url: String,
    /// Opens.
    pub clicked: u64,
    /// Downloads.
    pub download_flag: u64,
    /// Messages sent for it.
    pub sent_count: u64,
    /// Delivery receipts (not reported by the providers engage drives: 0).
    pub delivered: u64,
    /// Read receipts (0, as `delivered`).
    pub read_count: u64,
    /// The last delivery error, when any.
    pub message_error: Option<String>,
    /// Its widgets, in `sequence`.
    pub widgets: Vec<BillWidget>,
    /// ROI attributed (not computed for bills).
    pub roi_calculated: u8,
    /// The order's platform.
    pub order_source: String,
    /// The brand.
    pub parent_business_id: String,
    /// The outlet.
    pub child_business_id: String,
    /// The order.
    pub order: BillOrder,
    /// Its lines.
    pub items: Vec<BillItem>,
    /// The JWT-signed feedback-form link.
    pub feedback_url: String,
    /// Opens of the feedback link from the bill.
    #[serde(default)]
    pub feedback_opens: u64,
    /// The link service's id of it, when a link service made the short link.
    #[serde(default)]
    pub link_service_bill_id: Option<String>,
    /// The page's colour.
    pub brand_color: String,
    /// The footer button's label, when the footer is on.
    pub footer_button: Option<String>,
    /// When the link stops working.
    pub expires_at: Option<DateTime<Utc>>,
    /// The send that paid for it.
    pub send_id: String,
}

/// A day's funnel of one outlet (table `bill_funnel`, partition brand, clustering `day|outlet`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Funnel {
    /// IST day.
    pub date: String,
    /// Bills sent.
    pub total_bill_sent: u64,
    /// Opens.
    pub total_clicks: u64,
    /// Bills opened at least once.
    pub unique_clicks: u64,
    /// By SMS.
    pub total_sms_sent: u64,
    /// By chat.
    pub total_chat_sent: u64,
    /// The brand.
    pub parent_business_id: String,
    /// The outlet.
    pub child_business_id: String,
    /// Created.
    pub created_at: Option<DateTime<Utc>>,
    /// Changed.
    pub updated_at: Option<DateTime<Utc>>,
}

impl Funnel {
    /// Adds `other`'s counters.
    pub fn add(&mut self, other: &Funnel) {
        self.total_bill_sent += other.total_bill_sent;
        self.total_clicks += other.total_clicks;
        self.unique_clicks += other.unique_clicks;
        self.total_sms_sent += other.total_sms_sent;
        self.total_chat_sent += other.total_chat_sent;
    }

    /// unique_clicks / total_bill_sent, in percent (two decimals; 0 without bills).
    pub fn opening_percentage(&self) -> f64 {
        if self.total_bill_sent == 0 {
            return 0.0;
        }
        (self.unique_clicks as f64 * 10_000.0 / self.total_bill_sent as f64).round() / 100.0
    }
}

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
}

/// The brand's configurations, by business (cached in [`Brand::bill_configs`]).
pub async fn configs(brand: &mut Brand) -> Result<BTreeMap<String, LinkConfig>, engage_storage::StoreError> {
    if let Some(configs) = &brand.bill_configs {
        return Ok(configs.clone());
    }
    let rows: Vec<LinkConfig> = brand.repo().all(BILL_CONFIGS, &brand.tenant).await?;
    let configs: BTreeMap<String, LinkConfig> = rows.into_iter().map(|c| (c.business_id.clone(), c)).collect();
    brand.bill_configs = Some(configs.clone());
    Ok(configs)
}

/// The configuration that applies to outlet `business`: its own, else the brand's.
pub fn applicable<'a>(
    configs: &'a BTreeMap<String, LinkConfig>,
    tenant: &str,
    business: &str,
) -> Option<&'a LinkConfig> {
    configs.get(business).or_else(|| configs.get(tenant).filter(|c| c.brand_level()))
}

/// The brand's widget mappings in `sequence` (cached in [`Brand::bill_widgets`]: generation reads
/// them for every bill).
async fn widgets(brand: &mut Brand) -> Result<Vec<WidgetMapping>, QueryError> {
    if let Some(all) = &brand.bill_widgets {
        return Ok(all.clone());
    }
    let mut all: Vec<WidgetMapping> = brand.repo().all(BILL_WIDGETS, &brand.tenant).await?;
    all.sort_by_key(|w| (w.sequence, w.id));
    brand.bill_widgets = Some(all.clone());
    Ok(all)
}

/// The active widgets a bill of outlet `business` shows: the outlet's when it maps any, else the
/// brand's; in `sequence`.
pub async fn widgets_for(brand: &mut Brand, business: &str) -> Result<Vec<WidgetMapping>, QueryError> {
    let all = widgets(brand).await?;
    let own: Vec<WidgetMapping> = all.iter().filter(|w| w.business_id == business).cloned().collect();
    let chosen = if own.is_empty() { all.into_iter().filter(|w| w.business_id == brand.tenant).collect() } else { own };
    Ok(chosen.into_iter().filter(|w| w.status == 1).collect())
}

async fn load_bill(brand: &Brand, bill_id: &str) -> Result<Option<Bill>, QueryError> {
    Ok(brand.repo().get(&keys::digital_bill(&brand.tenant, bill_id)).await?)
}

/// The funnel row of (`day`, `business`), zero when there is none.
pub async fn funnel(brand: &Brand, day: &str, business: &str) -> Result<Funnel, engage_storage::StoreError> {
    let stored: Option<Funnel> = brand.repo().get(&keys::bill_funnel(&brand.tenant, day, business)).await?;
    Ok(stored.unwrap_or_else(|| Funnel {
        date: day.to_owned(),
        parent_business_id: brand.tenant.clone(),
        child_business_id: business.to_owned(),
        ..Funnel::default()
    }))
}

/// The write of a funnel row changed at `now`.
pub fn put_funnel(brand: &Brand, mut row: Funnel, now: DateTime<Utc>) -> engage_storage::WriteOp {
    row.created_at.get_or_insert(now);
    row.updated_at = Some(now);
    keys::bill_funnel(&brand.tenant, &row.date, &row.child_business_id).put(&row)
}

/// Applies `change` to a known bill and writes it (with the writes `change` answers after it);
/// `counted: false` for an unknown bill, or when `change` answers `None` (nothing to count).
async fn touch(
    brand: &mut Brand,
    bill_id: &str,
    change: impl FnOnce(&mut Bill) -> Option<Vec<engage_storage::WriteOp>>,
) -> Result<Counted, QueryError> {
    let Some(mut bill) = load_bill(brand, bill_id).await? else {
        metrics::counter!("engage_bill_events_total", "outcome" => "unknown_bill").increment(1);
        return Ok(Counted { counted: false, bill: None });
    };
    let Some(extra) = change(&mut bill) else {
        metrics::counter!("engage_bill_events_total", "outcome" => "unknown_widget").increment(1);
        return Ok(Counted { counted: false, bill: Some(bill) });
    };
    let mut ops = vec![keys::digital_bill(&brand.tenant, bill_id).put(&bill)];
    ops.extend(extra);
    brand.batch(ops).await?;
    metrics::counter!("engage_bill_events_total", "outcome" => "counted").increment(1);
    Ok(Counted { counted: true, bill: Some(bill) })
}

/// An open: `clicked` + 1; the day's funnel `total_clicks` + 1, and `unique_clicks` + 1 when it is
/// the bill's first open (behaviour 7).
async fn open(brand: &mut Brand, bill_id: &str, now: DateTime<Utc>) -> Result<Counted, QueryError> {
    let Some(bill) = load_bill(brand, bill_id).await? else { return touch(brand, bill_id, |_| None).await };
    let mut row = funnel(brand, &ist_day(now), &bill.child_business_id).await?;
    row.total_clicks += 1;
    let mut bill = bill;
    if bill.clicked == 0 {
        row.unique_clicks += 1;
    }
    bill.clicked += 1;
    brand.batch(vec![keys::digital_bill(&brand.tenant, bill_id).put(&bill), put_funnel(brand, row, now)]).await?;
    metrics::counter!("engage_bill_events_total", "outcome" => "counted").increment(1);
    Ok(Counted { counted: true, bill: Some(bill) })
}

async fn customers(
    brand: &Brand,
    business: Option<String>,
    page: u64,
    start: Option<String>,
    end: Option<String>,
) -> Result<BillPage, QueryError> {
    let mut bills = Vec::new();
    brand
        .repo()
        .visit(DIGITAL_BILLS, &brand.tenant, |bill: Bill| {
            let day = ist_day(bill.sent_at);
            if business.as_ref().is_none_or(|b| *b == bill.child_business_id)
                && within(&day, start.as_deref(), end.as_deref())
            {
                bills.push(bill);
            }
        })
        .await?;
    bills.sort_by(|a, b| b.sent_at.cmp(&a.sent_at).then_with(|| a.bill_id.cmp(&b.bill_id)));
    Ok(BillPage::of(bills, page, BILL_PAGE))
}

/// The funnel rows between two IST days, of one outlet or all.
pub async fn funnel_rows(
    brand: &Brand,
    business: Option<&str>,
    start: &str,
    end: &str,
) -> Result<Vec<Funnel>, engage_storage::StoreError> {
    let mut rows = Vec::new();
    brand
        .repo()
        .visit(BILL_FUNNEL, &brand.tenant, |row: Funnel| {
            if business.is_none_or(|b| b == row.child_business_id)
                && row.date.as_str() >= start
                && row.date.as_str() <= end
            {
                rows.push(row);
            }
        })
        .await?;
    Ok(rows)
}

async fn mis(brand: &Brand, business: Option<String>, start: String, end: String) -> Result<Mis, QueryError> {
    let days = funnel_rows(brand, business.as_deref(), &start, &end).await?;
    let mut totals = Funnel { parent_business_id: brand.tenant.clone(), ..Funnel::default() };
    totals.child_business_id = business.unwrap_or_default();
    for day in &days {
        totals.add(day);
    }
    Ok(Mis { opening_percentage: totals.opening_percentage(), totals, days })
}

async fn save_config(brand: &mut Brand, mut config: LinkConfig) -> Result<LinkConfig, QueryError> {
    let key = keys::bill_config(&brand.tenant, &config.business_id);
    if let Some(old) = brand.repo().get::<LinkConfig>(&key).await? {
        config.inserted_at = old.inserted_at;
    }
    let ops = vec![key.put(&config), keys::bill_brand(&brand.tenant).put(&serde_json::json!({}))];
    brand.bill_configs = None;
    brand.batch(ops).await?;
    Ok(config)
}

async fn set_status(
    brand: &mut Brand,
    business: String,
    status: u8,
    now: DateTime<Utc>,
) -> Result<LinkConfig, QueryError> {
    let key = keys::bill_config(&brand.tenant, &business);
    let Some(mut config) = brand.repo().get::<LinkConfig>(&key).await? else { return Err(QueryError::NotFound) };
    config.status = status;
    config.updated_at = now;
    // business_configs: `0` is the brand's own record, as the journeys' flag sync writes it
    let mut flags = business::config(brand, if config.brand_level() { "0" } else { &business }).await?;
    flags.digital_bill = Some(status);
    brand.bill_configs = None;
    brand.batch(vec![key.put(&config), business::put(brand, &flags)]).await?;
    Ok(config)
}

async fn config_view(brand: &mut Brand, business: String) -> Result<ConfigView, QueryError> {
    let all = configs(brand).await?;
    let config = all.get(&business).cloned();
    let inherited = if config.is_none() { all.get(&brand.tenant).filter(|c| c.brand_level()).cloned() } else { None };
    let widgets = widgets(brand).await?.into_iter().filter(|w| w.business_id == business).collect();
    Ok(ConfigView { config, inherited, widgets })
}

fn apply_fields(widget: &mut WidgetMapping, fields: WidgetFields) {
    if let Some(sequence) = fields.sequence {
        widget.sequence = sequence;
    }
    if let Some(title) = fields.title {
        widget.title = title;
    }
    if let Some(value) = fields.value {
        widget.value = value;
    }
    if let Some(link) = fields.static_banner_link {
        widget.static_banner_link = link;
    }
    if let Some(status) = fields.status {
        widget.status = status;
    }
}

async fn add_widget(
    brand: &mut Brand,
    business: String,
    widget_id: u32,
    fields: WidgetFields,
    now: DateTime<Utc>,
) -> Result<WidgetMapping, QueryError> {
    let Some(kind) = widget_kind(widget_id) else {
        return Err(QueryError::Invalid(format!("/widget_id: {widget_id} is not in the widget catalogue (1 to 6)")));
    };
    let all = widgets(brand).await?;
    if all.iter().any(|w| w.business_id == business && w.widget_id == widget_id) {
        return Err(QueryError::Duplicate(format!(
            "this business already has the {} widget; change it with /links/editWidget",
            kind.name
        )));
    }
    let parent_id = if business == brand.tenant { "0".to_owned() } else { brand.tenant.clone() };
    let mut widget = WidgetMapping {
        id: all.iter().map(|w| w.id).max().unwrap_or(0) + 1,
        business_id: business,
        parent_id,
        widget_id,
        sequence: all.len() as i64 + 1,
        title: kind.name.to_owned(),
        value: String::new(),
        static_banner_link: String::new(),
        status: 1,
        inserted_at: now,
    };
    apply_fields(&mut widget, fields);
    brand.bill_widgets = None;
    brand.batch(vec![keys::bill_widget(&brand.tenant, widget.id).put(&widget)]).await?;
    Ok(widget)
}

async fn edit_widget(brand: &mut Brand, id: u64, fields: WidgetFields) -> Result<WidgetMapping, QueryError> {
    let key = keys::bill_widget(&brand.tenant, id);
    let Some(mut widget) = brand.repo().get::<WidgetMapping>(&key).await? else { return Err(QueryError::NotFound) };
    apply_fields(&mut widget, fields);
    brand.bill_widgets = None;
    brand.batch(vec![key.put(&widget)]).await?;
    Ok(widget)
}

/// Answers a bills query.
pub async fn handle(brand: &mut Brand, query: BillsQuery) -> QueryReply {
    match query {
        BillsQuery::SaveConfig { config } => reply(save_config(brand, *config).await),
        BillsQuery::SetStatus { business_id, status, now } => reply(set_status(brand, business_id, status, now).await),
        BillsQuery::Config { business_id } => reply(config_view(brand, business_id).await),
        BillsQuery::AddWidget { business_id, widget_id, fields, now } => {
            reply(add_widget(brand, business_id, widget_id, fields, now).await)
        }
        BillsQuery::EditWidget { id, fields } => reply(edit_widget(brand, id, fields).await),
        BillsQuery::Customers { business_id, page, start, end } => {
            reply(customers(brand, business_id, page, start, end).await)
        }
        BillsQuery::Mis { business_id, start, end } => reply(mis(brand, business_id, start, end).await),
        BillsQuery::Open { bill_id, now } => reply(open(brand, &bill_id, now).await),
        BillsQuery::FeedbackOpen { bill_id } => reply(
            touch(brand, &bill_id, |bill| {
                bill.feedback_opens += 1;
                Some(Vec::new())
            })
            .await,
        ),
        BillsQuery::Download { bill_id } => reply(
            touch(brand, &bill_id, |bill| {
                bill.download_flag += 1;
                Some(Vec::new())
            })
            .await,
        ),
        BillsQuery::Insight { bill_id, widget_id, event, watch_time } => {
            reply(
                touch(brand, &bill_id, |bill| {
                    // a widget the bill does not show is not counted
                    let widget = bill.widgets.iter_mut().find(|w| w.widget_id == widget_id)?;
                    match event {
                        InsightEvent::Click => widget.clicks += 1,
                        InsightEvent::Watch => widget.watch_time = watch_time,
                    }
                    Some(Vec::new())
                })
                .await,
            )
        }
        BillsQuery::Generate { now, day, after } => reply(generate::page(brand, now, &day, after).await),
        BillsQuery::Report { day } => reply(report::figures(brand, &day).await),
    }
}
