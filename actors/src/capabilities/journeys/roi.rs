//! ROI attribution (spec "Journey behaviour" 12, record `auto_campaign_roi`): for every journey
//! send decided in the last [`ROI_LOOKBACK_DAYS`] days, the customer's orders whose `orderTime`
//! lies in the [`ATTRIBUTION_DAYS`]-day window after the decision are its orders and revenue.
//! Held-out customers are measured the same way, so a journey's lift is its sent customers'
//! conversion minus its holdout's.
//!
//! Everything is recomputed from the customers' current orders and written over the previous
//! figures, so an order update (a new amount) or a replay (the same version again) leaves the
//! figures exact.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use engage_storage::WriteOp;

use super::runs::{JourneySend, Outcome};
use super::{journeys, JourneyChannel};
use crate::capabilities::wallet::QueuedSend;
use crate::domain::time::parse_ist;
use crate::keys;
use crate::query::QueryError;
use crate::repo::JOURNEY_SENDS;
use crate::tenant_core::Tenant;

/// Days after a send in which the customer's orders are attributed to it.
pub const ATTRIBUTION_DAYS: i64 = 7;
/// Sends older than this are no longer re-attributed (their figures are final).
pub const ROI_LOOKBACK_DAYS: i64 = 30;

/// One `auto_campaign_roi` row (partition tenant, clustering `journey|date|mode`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoiRow {
    /// The journey.
    pub campaign_journey: String,
    /// `sms`, `chat`, `push`, or `holdout` (the held-out customers: the baseline).
    pub mode: String,
    /// The IST day of the sends.
    pub date: String,
    /// Customers sent to on this mode (held out, for `holdout`).
    pub customers: u32,
    /// Messages the provider accepted.
    pub delivered: u32,
    /// Customers with at least one attributed order.
    pub converted: u32,
    /// Attributed orders.
    pub orders: u32,
    /// Their revenue.
    pub revenue: Decimal,
}

/// What an attribution pass did.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Attributed {
    /// Journeys looked at.
    pub journeys: usize,
    /// Sends and holdouts measured.
    pub measured: usize,
    /// ROI rows written.
    pub rows: usize,
}

/// The orders and revenue of `phone` with `orderTime` in `[at, at + 7 days)`.
async fn conversions(tenant: &mut Tenant, phone: &str, at: DateTime<Utc>) -> Result<(u32, Decimal), QueryError> {
    let Some(customer) = tenant.customer(phone).await? else { return Ok((0, Decimal::ZERO)) };
    let end = at + Duration::days(ATTRIBUTION_DAYS);
    let mut orders = 0;
    let mut revenue = Decimal::ZERO;
    // a cancelled or refunded order is no conversion; a partial return counts what is left
    for contribution in customer.orders.values().filter(|c| !c.void) {
        let Some(time) = contribution.order_time.as_deref().and_then(parse_ist) else { continue };
        if time >= at && time < end {
            orders += 1;
            revenue += contribution.amount;
        }
    }
    Ok((orders, revenue.normalize()))
}

/// Re-attributes the sends of the brand's journeys of `campaign_types` as of `now` and rewrites
/// their `auto_campaign_roi` rows.
pub async fn attribute(
    tenant: &mut Tenant,
    now: DateTime<Utc>,
    campaign_types: &[String],
) -> Result<Attributed, QueryError> {
    let all = journeys(tenant).await?;
    let since = now - Duration::days(ROI_LOOKBACK_DAYS);
    let mut done = Attributed::default();
    for journey in all.iter().filter(|j| campaign_types.contains(&j.campaign_type)) {
        done.journeys += 1;
        let partition = keys::journey_sends_partition(&tenant.id, &journey.campaign_journey_id);
        let mut decisions: Vec<JourneySend> = Vec::new();
        tenant
            .repo()
            .visit(JOURNEY_SENDS, &partition, |d: JourneySend| {
                if d.at >= since && d.outcome != Outcome::Skipped {
                    decisions.push(d);
                }
            })
            .await?;
        let mut rows: BTreeMap<(String, String), RoiRow> = BTreeMap::new();
        let mut ops: Vec<WriteOp> = Vec::new();
        for mut decision in decisions {
            done.measured += 1;
            let (orders, revenue) = conversions(tenant, &decision.phone, decision.at).await?;
            if (orders, revenue) != (decision.orders, decision.revenue) {
                decision.orders = orders;
                decision.revenue = revenue;
                ops.push(decision.key(&tenant.id).put(&decision));
            }
            let mut modes: Vec<(&str, bool)> = Vec::new();
            if decision.outcome == Outcome::Holdout {
                modes.push(("holdout", false));
            }
            for sent in &decision.sends {
                let key =
                    keys::queued_send(sent.channel.channel().queue(), &sent.delivery_date, &tenant.id, &sent.send_id);
                let row: Option<QueuedSend> = tenant.repo().get(&key).await?;
                let delivered =
                    row.is_some_and(|r| matches!(r.delivery_status.as_deref(), Some("sent" | "delivered" | "read")));
                modes.push((sent.channel.as_str(), delivered));
            }
            for (mode, delivered) in modes {
                let row = rows.entry((decision.run_day.clone(), mode.to_owned())).or_insert_with(|| RoiRow {
                    campaign_journey: journey.campaign_journey_id.clone(),
                    mode: mode.to_owned(),
                    date: decision.run_day.clone(),
                    ..RoiRow::default()
                });
                row.customers += 1;
                row.delivered += u32::from(delivered);
                row.converted += u32::from(orders > 0);
                row.orders += orders;
                row.revenue += revenue;
            }
        }
        done.rows += rows.len();
        for row in rows.values() {
            ops.push(keys::campaign_roi(&tenant.id, &row.campaign_journey, &row.date, &row.mode).put(row));
        }
        for chunk in ops.chunks(500) {
            tenant.batch(chunk.to_vec()).await?;
        }
    }
    Ok(done)
}

/// A journey's ROI over all its stored rows: per mode, and sent vs holdout conversion.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoiSummary {
    /// Rows summed per mode.
    pub modes: BTreeMap<String, RoiRow>,
    /// Conversion of sent customers (converted / customers over the channels' rows of the first
    /// channel, so a customer sent on two channels counts once), as a fraction.
    pub sent_conversion: f64,
    /// Conversion of held-out customers.
    pub holdout_conversion: f64,
    /// `sent_conversion - holdout_conversion`: the journey's real lift.
    pub lift: f64,
}

/// The ROI summary of `journey_id`.
pub async fn summary(
    tenant: &Tenant,
    journey_id: &str,
    first_channel: Option<JourneyChannel>,
) -> Result<RoiSummary, QueryError> {
    let rows: Vec<RoiRow> =
        tenant.repo().all(crate::repo::CAMPAIGN_ROI, &keys::campaign_roi_partition(&tenant.id, journey_id)).await?;
    let mut summary = RoiSummary::default();
    for row in rows {
        let total = summary.modes.entry(row.mode.clone()).or_insert_with(|| RoiRow {
            campaign_journey: row.campaign_journey.clone(),
            mode: row.mode.clone(),
            date: String::new(),
            ..RoiRow::default()
        });
        total.customers += row.customers;
        total.delivered += row.delivered;
        total.converted += row.converted;
        total.orders += row.orders;
        total.revenue += row.revenue;
    }
    let rate = |row: Option<&RoiRow>| {
        row.filter(|r| r.customers > 0).map_or(0.0, |r| f64::from(r.converted) / f64::from(r.customers))
    };
    summary.sent_conversion = rate(first_channel.and_then(|c| summary.modes.get(c.as_str())));
    summary.holdout_conversion = rate(summary.modes.get("holdout"));
    summary.lift = summary.sent_conversion - summary.holdout_conversion;
    Ok(summary)
}
