//! Dashboard metrics (spec "Metrics routes (/stats, all POST, staff token)"): twelve routes, one
//! handler. The figures come from the rollups the brand's tenant actor keeps
//! ([`engage_actors::capabilities::stats`]); what each answers is in `docs/dashboard-metrics.md`.
//!
//! | Route | Answer (`{status: true, data: {period, …}}`) |
//! |---|---|
//! | `/stats/dashboard/summary` | `totals`, `previous`, `change` (%), `best_day`, `active_outlets` |
//! | `/stats/metrics/orders` | `series` (one entry per IST day), `totals`, `previous`, `change` |
//! | `/stats/metrics/fulfillment` | `channels`: orders, revenue, share, average prep and delivery minutes |
//! | `/stats/metrics/outlets` | `outlets` ranked by revenue (with the previous period's and `underperforming`), `median_revenue` |
//! | `/stats/metrics/hour-heatmap` | `cells`: 7 weekdays × 24 IST hours, `peak` |
//! | `/stats/metrics/meal-breakdown` | `bands`: breakfast 6–10, lunch 11–14, snacks 15–18, dinner 19–22, late night 23–5 |
//! | `/stats/metrics/items` | `items` by revenue: quantity, revenue, share |
//! | `/stats/metrics/campaigns` | `bills`, `feedback` funnels, `journeys` (sends, conversions, revenue, holdout) |
//! | `/stats/metrics/geo` | `cities`, `pincodes` |
//! | `/stats/metrics/top-items` | `by_quantity`, `by_revenue` (`limit`, 10) |
//! | `/stats/metrics/special-days` | `special` (marked days and weekends) vs `ordinary`, per day, and the `days` |
//! | `/stats/metrics/underperforming` | outlets with revenue more than 20% below the brand's median |
//! | `/stats/special-days` (engage's) | marks days special: `{status: true, data: {days}}` |

pub mod requests;

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use engage_actors::capabilities::stats::{shapes, MarkSpecialDays, Metric, ReadMetric, SpecialDays};

use crate::platform::edge::errors::StaffError;
use crate::platform::edge::requests::{SpecialDaysRequest, StatsRequest};
use crate::platform::edge::routes::Routes;
use crate::platform::edge::{staff_answer, Data, Staff, StaffAnswer};
use crate::state::AppState;

/// The longest period a metric covers, in days.
pub use crate::platform::edge::MAX_DAYS;

/// The twelve metric paths, with what they answer (for `/openapi.json`).
pub const METRICS: [(&str, Metric, &str); 12] = [
    ("/stats/dashboard/summary", Metric::Summary, "The period's totals (orders, revenue, average order value, discounts, new customers, returning orders, points earned and redeemed), the previous period's and the change in %, the best day, active outlets"),
    ("/stats/metrics/orders", Metric::Orders, "Orders and revenue per IST day of the period (every day, zeros included), with totals, the previous period's and the change"),
    ("/stats/metrics/fulfillment", Metric::Fulfillment, "Orders by channel (the order's channel or fulfillment: dine-in, takeaway, delivery, …; unspecified when absent): orders, revenue, share, average prep and delivery minutes"),
    ("/stats/metrics/outlets", Metric::Outlets, "Outlets ranked by revenue: orders, revenue, share, average order value, the previous period's revenue and change, and whether it is underperforming; the median revenue"),
    ("/stats/metrics/hour-heatmap", Metric::HourHeatmap, "Orders and revenue by IST weekday (0 Monday) and hour: 168 cells, and the peak"),
    ("/stats/metrics/meal-breakdown", Metric::MealBreakdown, "Orders and revenue by meal band of the IST hour: breakfast 6-10, lunch 11-14, snacks 15-18, dinner 19-22, late_night 23-5"),
    ("/stats/metrics/items", Metric::Items, "Every item sold: quantity, revenue (quantity x price) and share of item revenue, by revenue"),
    ("/stats/metrics/campaigns", Metric::Campaigns, "Campaign figures: digital bills (sent, opens, open rate), feedback (sent, opens, submitted, response rate), journeys (customers, delivered, converted, attributed orders and revenue, holdout)"),
    ("/stats/metrics/geo", Metric::Geo, "Orders and revenue by city and by pincode (unknown when the order carries none)"),
    ("/stats/metrics/top-items", Metric::TopItems, "The top items (limit, 10 by default) by quantity and by revenue"),
    ("/stats/metrics/special-days", Metric::SpecialDays, "Special days (marked with /stats/special-days, and weekends) against ordinary days: days, orders and revenue, per day, and the revenue-per-day lift"),
    ("/stats/metrics/underperforming", Metric::Underperforming, "Outlets whose revenue is more than 20% below the median of the brand's outlets (those with orders in the period or the one before), with the median and the gap"),
];

/// Routes of this module, each declared once ([`Routes`]): a row of [`METRICS`] is its route.
pub fn routes() -> Routes {
    let mut routes = Routes::new()
        .post(
            "/stats/special-days",
            "Mark IST days special for /stats/metrics/special-days (weekends always are), or unmark them (remove): {status, data: {days: [{date, label}]}}",
            mark_special_days,
        )
        .tweak(stats_tag);
    // each metric's answer is its own type ([`shapes`]), so each route names it
    macro_rules! metric {
        ($index:expr, $shape:ty) => {{
            let (path, metric, summary) = METRICS[$index];
            let handler =
                move |state: State<AppState>, staff: Staff<StatsRequest>| metric_answer::<$shape>(state, staff, metric);
            routes = routes.post(path, summary, handler).tweak(stats_tag);
        }};
    }
    metric!(0, shapes::Summary);
    metric!(1, shapes::OrdersMetric);
    metric!(2, shapes::FulfillmentMetric);
    metric!(3, shapes::OutletsMetric);
    metric!(4, shapes::HeatmapMetric);
    metric!(5, shapes::MealMetric);
    metric!(6, shapes::ItemsMetric);
    metric!(7, shapes::CampaignsMetric);
    metric!(8, shapes::GeoMetric);
    metric!(9, shapes::TopItemsMetric);
    metric!(10, shapes::SpecialDaysMetric);
    metric!(11, shapes::UnderperformingMetric);
    routes
}

fn stats_tag(op: &mut Value) {
    op["tags"] = json!(["stats"]);
}

/// The period a body names ([`crate::platform::edge::period_of`]).
pub(super) fn period(body: &StatsRequest) -> Result<(String, String), StaffError> {
    crate::platform::edge::period_of(&body.start, &body.end, &body.date)
}

async fn metric_answer<T: serde::de::DeserializeOwned + serde::Serialize>(
    State(state): State<AppState>,
    Staff { tenant, body, grant }: Staff<StatsRequest>,
    metric: Metric,
) -> Result<Json<StaffAnswer<Data<T>>>, StaffError> {
    let (start, end) = period(&body)?;
    let limit = body.limit.map_or(10, |l| l.clamp(1, 100) as usize);
    // an outlet-limited token asks for its outlet (the same answer as naming it)
    let business_id = body.business_id.or_else(|| grant.business.clone());
    let query = ReadMetric { metric, business_id, start, end, limit };
    let mut data =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "metrics"))?;
    // it sees its own outlet's place in the ranking, not the other outlets' figures
    if let (Some(own), Some(outlets)) = (&grant.business, data.get_mut("outlets").and_then(Value::as_array_mut)) {
        outlets.retain(|entry| entry["business_id"] == own.as_str());
    }
    // the metric's type: a field the arithmetic left out is a fault of this build, not of the request
    let data = serde_json::from_value(data).map_err(|e| StaffError::internal(format!("the {metric:?} answer: {e}")))?;
    Ok(staff_answer(Data { data }))
}

/// `/stats/special-days`.
async fn mark_special_days(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<SpecialDaysRequest>,
) -> Result<Json<StaffAnswer<Data<SpecialDays>>>, StaffError> {
    let query = MarkSpecialDays { dates: body.dates, label: body.label, remove: body.remove.unwrap_or(false) };
    let days =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "special days"))?;
    Ok(staff_answer(Data { data: days }))
}
