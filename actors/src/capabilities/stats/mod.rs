//! Dashboard metrics (`/stats`, spec "Metrics routes"): the figures come from rollups the tenant
//! actor keeps as an order reaction ([`rollup::KeepRollups`]), never from a scan of raw orders, so
//! an answer over a year reads about 365 rows. What each route answers is in
//! `docs/dashboard-metrics.md`; the arithmetic is in [`answers`].
//!
//! Metric queries ([`ReadMetric`]) are read beside the actor ([`read`]): they see
//! committed rows and never hold up the brand's writes. Marking special days goes through the
//! actor.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::StoreError;

use crate::keys;
use crate::query::{question, QueryError};
use crate::repo::{Repo, BILL_FUNNEL, CAMPAIGN_JOURNEYS, FEEDBACK_FUNNEL, STATS_DAYS, STATS_SPECIAL_DAYS};

pub mod answers;
pub mod contribution;
pub mod rollup;
pub mod shapes;

pub use rollup::{count_redeemed, Contribution, Figures, Fulfilment, KeepRollups, Tally, BRAND};

/// The twelve metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// `/dashboard/summary`.
    Summary,
    /// `/metrics/orders`.
    Orders,
    /// `/metrics/fulfillment`.
    Fulfillment,
    /// `/metrics/outlets`.
    Outlets,
    /// `/metrics/hour-heatmap`.
    HourHeatmap,
    /// `/metrics/meal-breakdown`.
    MealBreakdown,
    /// `/metrics/items`.
    Items,
    /// `/metrics/campaigns`.
    Campaigns,
    /// `/metrics/geo`.
    Geo,
    /// `/metrics/top-items`.
    TopItems,
    /// `/metrics/special-days`.
    SpecialDays,
    /// `/metrics/underperforming`.
    Underperforming,
}

/// A question for the stats capability.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum StatsQuery {
    /// See [`ReadMetric`].
    #[serde(rename = "metric")]
    ReadMetric(ReadMetric),
    /// See [`MarkSpecialDays`].
    MarkSpecialDays(MarkSpecialDays),
}

question! {
    /// One metric over the IST days `start..=end`, for one outlet or (`None`) the brand.
    pub struct ReadMetric {
        /// Which.
        pub metric: Metric,
        /// The outlet, or the whole brand.
        pub business_id: Option<String>,
        /// First IST day.
        pub start: String,
        /// Last IST day.
        pub end: String,
        /// Entries of a top list.
        pub limit: usize,
    } -> Value;
}

question! {
    /// Marks (or, with `remove`, unmarks) days as special: [`SpecialDays`].
    pub struct MarkSpecialDays {
        /// IST days.
        pub dates: Vec<String>,
        /// What the days are (`Special day` when absent).
        pub label: Option<String>,
        /// Unmark them instead.
        pub remove: bool,
    } -> SpecialDays;
}

/// A day the brand marked special.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpecialDay {
    /// IST day.
    pub date: String,
    /// What it is.
    pub label: String,
}

/// The brand's marked days.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpecialDays {
    /// Every marked day, in order.
    pub days: Vec<SpecialDay>,
}

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _)
    ReadMetric: question => read(tenant.repo().clone(), tenant.id.clone(), question).await;
        beside(tenant) => read(tenant.repo().clone(), tenant.id.clone(), question),
    MarkSpecialDays: MarkSpecialDays { dates, label, remove } => {
        let label = label.unwrap_or_else(|| "Special day".to_owned());
        let ops = dates
            .iter()
            .map(|date| {
                let key = keys::stats_special_day(&tenant.id, date);
                if remove {
                    key.delete()
                } else {
                    key.put(&SpecialDay { date: date.clone(), label: label.clone() })
                }
            })
            .collect();
        let marked = async {
            tenant.batch(ops).await?;
            Ok(SpecialDays { days: tenant.repo().all(STATS_SPECIAL_DAYS, &tenant.id).await? })
        };
        marked.await.map_err(|e: StoreError| QueryError::from(e))
    },
}

/// The day before `day` (`YYYY-MM-DD`).
fn day_before(day: &str) -> Option<String> {
    NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()?.pred_opt().map(|d| d.format("%Y-%m-%d").to_string())
}

/// Rows of `partition` whose clustering key starts with an IST day in `start..=end` (keys that
/// are a day, or `day|…`), decoded by `decode`, in order.
async fn rows_by_day<T, E: std::fmt::Display>(
    repo: &Repo,
    table: &'static str,
    partition: &str,
    start: &str,
    end: &str,
    decode: impl Fn(&[u8]) -> Result<T, E>,
) -> Result<Vec<(String, T)>, StoreError> {
    // `}` sorts after `|`: the first key after every key of the day before
    let mut after = day_before(start).map(|day| format!("{day}}}").into_bytes());
    let mut out = Vec::new();
    loop {
        let rows = repo.store().scan(table, partition, after.as_deref(), 1000).await?;
        let Some(last) = rows.last() else { break };
        after = Some(last.clustering.clone());
        for row in &rows {
            let key = String::from_utf8_lossy(&row.clustering).into_owned();
            if key.get(..10).is_some_and(|day| day > end) {
                return Ok(out);
            }
            let value =
                decode(&row.value).map_err(|e| StoreError::Backend(format!("{table} {partition}/{key}: {e}")))?;
            out.push((key, value));
        }
    }
    Ok(out)
}

/// JSON rows of `partition` whose clustering key starts with an IST day in `start..=end`.
pub async fn day_range<T: DeserializeOwned>(
    repo: &Repo,
    table: &'static str,
    partition: &str,
    start: &str,
    end: &str,
) -> Result<Vec<(String, T)>, StoreError> {
    rows_by_day(repo, table, partition, start, end, |bytes| serde_json::from_slice(bytes)).await
}

/// The rollup rows of one scope over `start..=end`, by day.
pub async fn figures(
    repo: &Repo,
    tenant: &str,
    scope: &str,
    start: &str,
    end: &str,
) -> Result<BTreeMap<String, Figures>, StoreError> {
    let rows =
        rows_by_day(repo, STATS_DAYS, &keys::stats_days_partition(tenant, scope), start, end, rollup::decode).await?;
    Ok(rows.into_iter().collect())
}

/// What a metric needs beyond the rollups.
#[derive(Default)]
pub struct Extras {
    /// Marked days.
    pub special: Vec<SpecialDay>,
    /// Bill funnel rows of the period.
    pub bills: Vec<Value>,
    /// Feedback funnel rows of the period.
    pub feedback: Vec<Value>,
    /// Marketing sends skipped for consent, rows of the period.
    pub consent_skips: Vec<Value>,
    /// Providers' receipts, rows of the period.
    pub receipts: Vec<Value>,
    /// Journey ROI rows of the period (with their journey's type).
    pub journeys: Vec<(String, crate::capabilities::journeys::RoiRow)>,
}

/// Answers a [`ReadMetric`] from the store.
pub async fn read(repo: Repo, tenant: String, question: ReadMetric) -> Result<Value, QueryError> {
    let ReadMetric { metric, business_id, start, end, limit } = question;
    let period = answers::Period::of(&start, &end).ok_or_else(|| QueryError::Invalid("/start: not a day".into()))?;
    // outlets and underperforming rank every outlet of the brand, the chosen one marked
    let ranks = matches!(metric, Metric::Outlets | Metric::Underperforming);
    let scope = if ranks { BRAND } else { business_id.as_deref().unwrap_or(BRAND) };
    let rows = figures(&repo, &tenant, scope, &period.previous_start, &end).await?;
    let mut extras = Extras::default();
    match metric {
        Metric::SpecialDays => extras.special = repo.all(STATS_SPECIAL_DAYS, &tenant).await?,
        Metric::Campaigns => {
            let outlet = |row: &Value| {
                business_id.is_none() || row.get("child_business_id").and_then(Value::as_str) == business_id.as_deref()
            };
            for (table, slot) in [
                (BILL_FUNNEL, &mut extras.bills),
                (FEEDBACK_FUNNEL, &mut extras.feedback),
                (crate::tables::CONSENT_SKIPS, &mut extras.consent_skips),
                (crate::tables::SEND_RECEIPTS, &mut extras.receipts),
            ] {
                let rows: Vec<(String, Value)> = day_range(&repo, table, &tenant, &start, &end).await?;
                *slot = rows.into_iter().map(|(_, row)| row).filter(|row| outlet(row)).collect();
            }
            let journeys: Vec<crate::capabilities::journeys::JourneyConfig> =
                repo.all(CAMPAIGN_JOURNEYS, &tenant).await?;
            for journey in
                journeys.iter().filter(|j| business_id.is_none() || Some(&j.child_business_id) == business_id.as_ref())
            {
                let partition = keys::campaign_roi_partition(&tenant, &journey.campaign_journey_id);
                let rows: Vec<(String, crate::capabilities::journeys::RoiRow)> =
                    day_range(&repo, crate::repo::CAMPAIGN_ROI, &partition, &start, &end).await?;
                extras.journeys.extend(rows.into_iter().map(|(_, row)| (journey.campaign_type.clone(), row)));
            }
        }
        _ => {}
    }
    let mut body = answers::answer(metric, &period, &rows, &extras, limit);
    if ranks {
        answers::name_outlets(&mut body, &crate::capabilities::business::outlet_names(&repo, &tenant).await?);
    }
    if let Some(chosen) = business_id.as_deref() {
        if ranks {
            answers::mark_chosen(&mut body, chosen);
        } else if metric == Metric::Summary {
            // an outlet's own rows keep no per-outlet tallies: it is active when it had orders
            let active = body["totals"]["orders"].as_i64().is_some_and(|n| n > 0);
            body["active_outlets"] = serde_json::json!(u8::from(active));
        }
    }
    Ok(body)
}

#[cfg(test)]
mod bounds {
    use chrono::Utc;
    use rust_decimal::Decimal;
    use serde_json::json;

    use super::rollup::{encode, Contribution, Figures, MAX_ITEMS, OTHER};

    /// The reported growth: 13 orders of 1,500 distinct items each made a day's row over NATS's
    /// 1 MiB. Past [`MAX_ITEMS`] names the rest count under `(other)`: the row stays small and
    /// every quantity is still counted, and taking an order back leaves what was there before.
    #[test]
    fn a_days_row_keeps_a_bounded_number_of_items_and_counts_every_one() {
        let mut row = Figures::default();
        let mut contributions = Vec::new();
        for order in 0..13 {
            let items: Vec<_> = (0..1500)
                .map(|i| json!({"name": format!("dish {order}-{i} {}", "x".repeat(150)), "qty": 2, "price": 1}))
                .collect();
            let payload = json!({"businessId": "o1", "orderId": order.to_string(), "amount": 3000, "items": items});
            let c = Contribution::of(&payload, "o1", Some("2026-11-21 10:00:00"), Utc::now(), Decimal::from(3000));
            row.add(&c, 1, true);
            contributions.push(c);
        }
        assert!(row.items.len() <= MAX_ITEMS, "{} names", row.items.len());
        assert_eq!(row.items.values().map(|t| t.n).sum::<i64>(), 13 * 1500 * 2);
        assert!(row.items[OTHER].n > 0);
        assert!(encode(&row).len() < 512 * 1024, "{} bytes", encode(&row).len());
        let before = row.clone();
        row.add(&contributions[12], -1, true);
        row.add(&contributions[12], 1, true);
        assert_eq!(row.items.values().map(|t| t.n).sum::<i64>(), before.items.values().map(|t| t.n).sum::<i64>());
    }
}
