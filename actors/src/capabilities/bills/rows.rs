//! The digital-bill rows a brand keeps: the widget catalogue, link configurations, widget mappings, bills and the day's funnel.

use crate::keys;
use crate::query::QueryError;
use crate::repo::{BILL_CONFIGS, BILL_FUNNEL, BILL_WIDGETS};
use crate::tenant_core::Tenant;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[allow(unused_imports)]
use super::*;

/// The platforms an order may come from (`bill_platform` values).
pub const PLATFORMS: [&str; 5] = ["app", "website", "kiosk", "pos", "chat_api"];

/// One kind of the widget catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// What was given back on a billed order (shown on its page).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BillRefund {
    /// Money given back.
    pub amount: rust_decimal::Decimal,
    /// The whole order was cancelled or refunded.
    pub whole: bool,
}

/// A digital bill: the spec's bill customer record, with what the bill page shows (table
/// `digital_bills`, partition brand, clustering `bill_id`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// What was given back after the bill was sent (a cancellation, refund or return).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund: Option<BillRefund>,
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// The brand's configurations, by business (cached in the tenant's [`Tenant::cache`] as
/// [`BillConfigs`]).
pub async fn configs(tenant: &mut Tenant) -> Result<BTreeMap<String, LinkConfig>, engage_storage::StoreError> {
    if let Some(configs) = tenant.cache.get::<BillConfigs>() {
        return Ok(configs.clone());
    }
    let rows: Vec<LinkConfig> = tenant.repo().all(BILL_CONFIGS, &tenant.id).await?;
    let configs: BTreeMap<String, LinkConfig> = rows.into_iter().map(|c| (c.business_id.clone(), c)).collect();
    tenant.cache.set::<BillConfigs>(configs.clone());
    Ok(configs)
}

/// How `business`'s customer pages present the brand: the names of
/// [`crate::capabilities::branding`] with the `brandColor` of the configuration that applies to it.
pub async fn branding(
    tenant: &mut Tenant,
    business: &str,
) -> Result<crate::capabilities::branding::Branding, QueryError> {
    let configs = configs(tenant).await?;
    let color = applicable(&configs, &tenant.id, business).map(|c| c.brand_color.clone());
    crate::capabilities::branding::of(tenant, business, color).await
}

/// The configuration that applies to outlet `business`: its own, else the brand's.
pub fn applicable<'a>(
    configs: &'a BTreeMap<String, LinkConfig>,
    tenant: &str,
    business: &str,
) -> Option<&'a LinkConfig> {
    configs.get(business).or_else(|| configs.get(tenant).filter(|c| c.brand_level()))
}

/// The brand's widget mappings in `sequence` (cached in [`Tenant::bill_widgets`]: generation reads
/// them for every bill).
pub(super) async fn widgets(tenant: &mut Tenant) -> Result<Vec<WidgetMapping>, QueryError> {
    if let Some(all) = tenant.cache.get::<BillWidgets>() {
        return Ok(all.clone());
    }
    let mut all: Vec<WidgetMapping> = tenant.repo().all(BILL_WIDGETS, &tenant.id).await?;
    all.sort_by_key(|w| (w.sequence, w.id));
    tenant.cache.set::<BillWidgets>(all.clone());
    Ok(all)
}

/// The active widgets a bill of outlet `business` shows: the outlet's when it maps any, else the
/// brand's; in `sequence`.
pub async fn widgets_for(tenant: &mut Tenant, business: &str) -> Result<Vec<WidgetMapping>, QueryError> {
    let all = widgets(tenant).await?;
    let own: Vec<WidgetMapping> = all.iter().filter(|w| w.business_id == business).cloned().collect();
    let chosen = if own.is_empty() { all.into_iter().filter(|w| w.business_id == tenant.id).collect() } else { own };
    Ok(chosen.into_iter().filter(|w| w.status == 1).collect())
}

pub(super) async fn load_bill(tenant: &Tenant, bill_id: &str) -> Result<Option<Bill>, QueryError> {
    Ok(tenant.repo().get(&keys::digital_bill(&tenant.id, bill_id)).await?)
}

/// The funnel row of (`day`, `business`), zero when there is none.
pub async fn funnel(tenant: &Tenant, day: &str, business: &str) -> Result<Funnel, engage_storage::StoreError> {
    let stored: Option<Funnel> = tenant.repo().get(&keys::bill_funnel(&tenant.id, day, business)).await?;
    Ok(stored.unwrap_or_else(|| Funnel {
        date: day.to_owned(),
        parent_business_id: tenant.id.clone(),
        child_business_id: business.to_owned(),
        ..Funnel::default()
    }))
}

/// The write of a funnel row changed at `now`.
pub fn put_funnel(tenant: &Tenant, mut row: Funnel, now: DateTime<Utc>) -> engage_storage::WriteOp {
    row.created_at.get_or_insert(now);
    row.updated_at = Some(now);
    keys::bill_funnel(&tenant.id, &row.date, &row.child_business_id).put(&row)
}

/// The funnel rows between two IST days, of one outlet or all.
pub async fn funnel_rows(
    tenant: &Tenant,
    business: Option<&str>,
    start: &str,
    end: &str,
) -> Result<Vec<Funnel>, engage_storage::StoreError> {
    let mut rows = Vec::new();
    tenant
        .repo()
        .visit(BILL_FUNNEL, &tenant.id, |row: Funnel| {
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

/// The brand's bill configurations by business, as the brand caches them ([`Tenant::cache`]).
pub type BillConfigs = BTreeMap<String, LinkConfig>;

/// The brand's widget mappings, as the brand caches them.
pub type BillWidgets = Vec<WidgetMapping>;
