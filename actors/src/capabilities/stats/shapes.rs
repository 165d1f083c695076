//! The shape of each metric's answer, as a type: [`super::answers::answer`] writes these fields,
//! and the routes read its answer back into the metric's type, so `/openapi.json` documents every
//! field and an answer that strays from its type fails loudly (a test calls every metric). Money
//! is a JSON number rounded to 2 places, shares and changes are percentages to 1 place; a change
//! is null when the previous figure is 0.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The period a metric covers and the one before it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PeriodShape {
    /// First IST day, `YYYY-MM-DD`.
    pub start: String,
    /// Last IST day.
    pub end: String,
    /// Days in it.
    pub days: i64,
    /// The period before it, as many days.
    pub previous: Span,
}

/// A span of IST days.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Span {
    /// First day.
    pub start: String,
    /// Last day.
    pub end: String,
}

/// The headline figures of a period.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Totals {
    /// Orders (refunded ones count, their refunds are subtracted from revenue).
    pub orders: i64,
    /// Revenue net of refunds.
    pub revenue: f64,
    /// Revenue per order.
    pub average_order_value: f64,
    /// Discounts given.
    pub discounts: f64,
    /// First orders of customers new to the brand.
    pub new_customers: i64,
    /// Orders of returning customers.
    pub returning_orders: i64,
    /// Loyalty points earned.
    pub points_earned: i64,
    /// Loyalty points redeemed.
    pub points_redeemed: i64,
    /// Orders refunded (wholly or in part).
    pub refunded_orders: i64,
    /// Amount refunded.
    pub refunded_amount: f64,
    /// Revenue before refunds.
    pub gross_revenue: f64,
}

/// The change of each headline figure from the previous period, in percent (null: it was 0).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Changes {
    /// Orders.
    pub orders: Option<f64>,
    /// Revenue.
    pub revenue: Option<f64>,
    /// Average order value.
    pub average_order_value: Option<f64>,
    /// New customers.
    pub new_customers: Option<f64>,
    /// Returning orders.
    pub returning_orders: Option<f64>,
}

/// A day's orders and revenue.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct DayFigure {
    /// The IST day.
    pub date: String,
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: f64,
}

/// `/stats/dashboard/summary`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// The period.
    pub period: PeriodShape,
    /// Its figures.
    pub totals: Totals,
    /// The previous period's.
    pub previous: Totals,
    /// The change.
    pub change: Changes,
    /// The day with the most revenue; null without orders.
    pub best_day: Option<DayFigure>,
    /// Outlets with orders in the period.
    pub active_outlets: usize,
}

/// One day of `/stats/metrics/orders`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SeriesDay {
    /// The IST day.
    pub date: String,
    /// Its figures.
    #[serde(flatten)]
    pub totals: Totals,
}

/// `/stats/metrics/orders`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OrdersMetric {
    /// The period.
    pub period: PeriodShape,
    /// Every IST day of the period (zeros included).
    pub series: Vec<SeriesDay>,
    /// The period's figures.
    pub totals: Totals,
    /// The previous period's.
    pub previous: Totals,
    /// The change.
    pub change: Changes,
}

/// One channel of `/stats/metrics/fulfillment`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ChannelFigures {
    /// dine-in, takeaway, delivery, … (unspecified when the order names none).
    pub channel: String,
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: f64,
    /// Share of the period's orders, %.
    pub share: f64,
    /// Revenue per order.
    pub average_order_value: f64,
    /// Average preparation minutes (null: no order said).
    pub avg_prep_minutes: Option<f64>,
    /// Average delivery minutes (null: no order said).
    pub avg_delivery_minutes: Option<f64>,
}

/// `/stats/metrics/fulfillment`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct FulfillmentMetric {
    /// The period.
    pub period: PeriodShape,
    /// By orders.
    pub channels: Vec<ChannelFigures>,
    /// Orders in the period.
    pub orders: i64,
}

/// One outlet of `/stats/metrics/outlets`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OutletRank {
    /// The outlet.
    pub business_id: String,
    /// The outlet's name as `/crm_api/add_b_config` set it (`business_name`), or null.
    #[serde(default)]
    pub name: Option<String>,
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: f64,
    /// Share of the brand's revenue, %.
    pub share: f64,
    /// 1 for the most revenue.
    pub rank: usize,
    /// Revenue per order.
    pub average_order_value: f64,
    /// Revenue in the previous period.
    pub previous_revenue: f64,
    /// Change of revenue, % (null: none before).
    pub change: Option<f64>,
    /// More than 20% below the brand's median revenue.
    pub underperforming: bool,
    /// Whether it is the outlet the request named (when it named one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected: Option<bool>,
}

/// `/stats/metrics/outlets`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OutletsMetric {
    /// The period.
    pub period: PeriodShape,
    /// By revenue.
    pub outlets: Vec<OutletRank>,
    /// The median of the outlets' revenue.
    pub median_revenue: f64,
    /// The outlet the request named, when it named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_business_id: Option<String>,
}

/// One cell of `/stats/metrics/hour-heatmap`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct HeatCell {
    /// 0 Monday … 6 Sunday.
    pub weekday: u8,
    /// Its name.
    pub day_name: String,
    /// IST hour, 0 to 23.
    pub hour: u8,
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: f64,
}

/// The busiest cell.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Peak {
    /// 0 Monday … 6 Sunday.
    pub weekday: u8,
    /// Its name.
    pub day_name: String,
    /// IST hour.
    pub hour: u8,
    /// Orders.
    pub orders: i64,
}

/// `/stats/metrics/hour-heatmap`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct HeatmapMetric {
    /// The period.
    pub period: PeriodShape,
    /// 168 cells, Monday 0:00 first.
    pub cells: Vec<HeatCell>,
    /// The busiest (null without orders).
    pub peak: Option<Peak>,
}

/// One meal band.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Band {
    /// breakfast, lunch, snacks, dinner, late_night.
    pub band: String,
    /// First IST hour.
    pub from_hour: u8,
    /// Last IST hour.
    pub to_hour: u8,
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: f64,
    /// Share of orders, %.
    pub share: f64,
}

/// `/stats/metrics/meal-breakdown`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MealMetric {
    /// The period.
    pub period: PeriodShape,
    /// The five bands.
    pub bands: Vec<Band>,
    /// Orders in the period.
    pub orders: i64,
}

/// An item sold.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ItemFigures {
    /// Its name.
    pub name: String,
    /// Quantity.
    pub quantity: i64,
    /// Quantity × price.
    pub revenue: f64,
    /// Share of item revenue, %.
    pub share: f64,
}

/// `/stats/metrics/items`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ItemsMetric {
    /// The period.
    pub period: PeriodShape,
    /// By revenue.
    pub items: Vec<ItemFigures>,
    /// Revenue of all items.
    pub item_revenue: f64,
}

/// `/stats/metrics/top-items`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct TopItemsMetric {
    /// The period.
    pub period: PeriodShape,
    /// How many of each.
    pub limit: usize,
    /// By quantity.
    pub by_quantity: Vec<ItemFigures>,
    /// By revenue.
    pub by_revenue: Vec<ItemFigures>,
}

/// A city's orders.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CityFigures {
    /// The city (unknown when the order names none).
    pub city: String,
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: f64,
    /// Share of revenue, %.
    pub share: f64,
}

/// A pincode's orders.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PincodeFigures {
    /// The pincode (unknown when the order names none).
    pub pincode: String,
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: f64,
    /// Share of revenue, %.
    pub share: f64,
}

/// `/stats/metrics/geo`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct GeoMetric {
    /// The period.
    pub period: PeriodShape,
    /// By orders.
    pub cities: Vec<CityFigures>,
    /// By orders.
    pub pincodes: Vec<PincodeFigures>,
}

/// One side of `/stats/metrics/special-days`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct DaysSide {
    /// Days.
    pub days: i64,
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: f64,
    /// Orders per day.
    pub orders_per_day: f64,
    /// Revenue per day.
    pub revenue_per_day: f64,
    /// Revenue per order.
    pub average_order_value: f64,
}

/// A special day of the period.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct LabelledDay {
    /// The IST day.
    pub date: String,
    /// Its label (a weekend day's name when not marked).
    pub label: String,
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: f64,
}

/// `/stats/metrics/special-days`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SpecialDaysMetric {
    /// The period.
    pub period: PeriodShape,
    /// Marked days and weekends.
    pub special: DaysSide,
    /// The other days.
    pub ordinary: DaysSide,
    /// Revenue per special day against per ordinary day, % (null: no ordinary revenue).
    pub revenue_per_day_lift: Option<f64>,
    /// The special days.
    pub days: Vec<LabelledDay>,
}

/// An outlet below the median.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Lagging {
    /// The outlet.
    pub business_id: String,
    /// The outlet's name as `/crm_api/add_b_config` set it (`business_name`), or null.
    #[serde(default)]
    pub name: Option<String>,
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: f64,
    /// How far below the median, %.
    pub below_median: f64,
    /// The same as a fraction (4 places).
    pub gap: Option<f64>,
}

/// `/stats/metrics/underperforming`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct UnderperformingMetric {
    /// The period.
    pub period: PeriodShape,
    /// `revenue`.
    pub figure: String,
    /// 0.2: more than 20% below the median.
    pub margin: Option<f64>,
    /// The median revenue.
    pub median: f64,
    /// Below this is underperforming.
    pub threshold: f64,
    /// Outlets with orders in the period or the one before.
    pub outlets_compared: usize,
    /// Those below the threshold, least revenue first.
    pub outlets: Vec<Lagging>,
}

/// The digital bills' funnel.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct BillFunnel {
    /// Bills sent.
    pub sent: u64,
    /// By SMS.
    pub sms: u64,
    /// By chat.
    pub chat: u64,
    /// Opens.
    pub opens: u64,
    /// Bills opened at least once.
    pub unique_opens: u64,
    /// `unique_opens` / `sent`, %.
    pub open_rate: f64,
}

/// The feedback forms' funnel.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct FeedbackFunnel {
    /// Forms sent.
    pub sent: u64,
    /// Opens.
    pub opens: u64,
    /// Forms opened at least once.
    pub unique_opens: u64,
    /// Forms submitted.
    pub submitted: u64,
    /// `submitted` / `sent`, %.
    pub response_rate: f64,
}

/// The holdout group's figures.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Holdout {
    /// Customers held out.
    pub customers: u64,
    /// Of them, converted anyway.
    pub converted: u64,
    /// %.
    pub conversion_rate: f64,
}

/// One journey type's figures.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct JourneyTypeFigures {
    /// The type.
    pub campaign_type: String,
    /// Customers sent to.
    pub customers: u64,
    /// Messages delivered.
    pub delivered: u64,
    /// Customers who ordered after.
    pub converted: u64,
    /// Orders attributed.
    pub orders: u64,
    /// Their revenue.
    pub revenue: f64,
    /// `converted` / `customers`, %.
    pub conversion_rate: f64,
}

/// The journeys' figures.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct JourneyFigures {
    /// Customers sent to.
    pub customers: u64,
    /// Messages delivered.
    pub delivered: u64,
    /// Customers who ordered after.
    pub converted: u64,
    /// Orders attributed.
    pub orders: u64,
    /// Their revenue.
    pub revenue: f64,
    /// %.
    pub conversion_rate: f64,
    /// The holdout group.
    pub holdout: Holdout,
    /// By journey type.
    pub by_type: Vec<JourneyTypeFigures>,
}

/// `/stats/metrics/campaigns`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CampaignsMetric {
    /// The period.
    pub period: PeriodShape,
    /// Digital bills.
    pub bills: BillFunnel,
    /// Feedback forms.
    pub feedback: FeedbackFunnel,
    /// Journeys.
    pub journeys: JourneyFigures,
    /// Marketing messages not sent because the customer unsubscribed from the channel (at
    /// queueing, or withdrawn at the drain): nothing was debited for them.
    pub skipped_for_consent: ConsentSkips,
    /// What the brands' own providers reported of the messages sent (`docs/senders.md`,
    /// "Receipts"): counted on the day each receipt came.
    pub receipts: Receipts,
}

/// Providers' receipts, in all and by channel.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Receipts {
    /// Messages delivered (a message read without a delivery receipt counts too).
    pub delivered: u64,
    /// Messages read.
    pub read: u64,
    /// Messages the provider could not deliver (credited back).
    pub failed: u64,
    /// SMS.
    pub sms: ChannelReceipts,
    /// Chat.
    pub chat: ChannelReceipts,
}

/// Providers' receipts of one channel.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ChannelReceipts {
    /// Delivered.
    pub delivered: u64,
    /// Read.
    pub read: u64,
    /// Failed.
    pub failed: u64,
}

/// Marketing messages skipped for consent, by channel.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ConsentSkips {
    /// All channels.
    pub total: u64,
    /// SMS.
    pub sms: u64,
    /// Chat.
    pub chat: u64,
    /// Push.
    pub push: u64,
}
