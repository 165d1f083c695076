//! A brand's journey health over a span of IST days (the Monday health reports, spec "Journey
//! behaviour" 13): per journey, the customers sent, held out and skipped by reason (the send
//! history), the attributed ROI (the `auto_campaign_roi` rows of the span) and the wallet spend
//! (the debits whose `auto_id` is the journey, of the span). The `auto_campaign_sync` flags
//! (`business_configs`) are the daily job's; see [`sync_flags`].

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::journeys;
use super::roi::RoiRow;
use super::runs::JourneyRun;
use super::wallet_txns_of;
use crate::capabilities::business;
use crate::domain::time::ist_day;
use crate::keys;
use crate::query::QueryError;
use crate::repo::{BUSINESS_CONFIGS, BUSINESS_WALLETS, CAMPAIGN_ROI, JOURNEY_RUNS};
use crate::tenant_core::Tenant;

/// One journey's figures over the span.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JourneyHealth {
    /// The brand.
    pub parent_business_id: String,
    /// The journey.
    pub campaign_journey_id: String,
    /// Its type.
    pub campaign_type: String,
    /// Its outlet.
    pub child_business_id: String,
    /// Whether it is on now.
    pub enabled: bool,
    /// Customers sent to.
    pub sent: u32,
    /// Customers held out.
    pub holdout: u32,
    /// Customers skipped, by reason.
    pub skipped: BTreeMap<String, u32>,
    /// Messages delivered (ROI rows).
    pub delivered: u32,
    /// Attributed orders.
    pub orders: u32,
    /// Their revenue.
    pub revenue: Decimal,
    /// Wallet debits of its messages.
    pub spend: Decimal,
    /// Messages debited.
    pub messages: u32,
}

/// A brand's journey health.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Health {
    /// One row per journey the brand has.
    pub data: Vec<JourneyHealth>,
}

/// The figures of the IST days `from..=to` (`YYYY-MM-DD`).
pub async fn health(tenant: &mut Tenant, from: &str, to: &str) -> Result<Health, QueryError> {
    let within = |day: &str| day >= from && day <= to;
    let mut rows: BTreeMap<String, JourneyHealth> = BTreeMap::new();
    for journey in journeys(tenant).await? {
        rows.insert(
            journey.campaign_journey_id.clone(),
            JourneyHealth {
                parent_business_id: tenant.id.clone(),
                campaign_journey_id: journey.campaign_journey_id.clone(),
                campaign_type: journey.campaign_type.clone(),
                child_business_id: journey.child_business_id.clone(),
                enabled: journey.campaign_enabled == 1 && journey.config_enabled == 1,
                ..JourneyHealth::default()
            },
        );
    }
    let runs: Vec<JourneyRun> = tenant.repo().all(JOURNEY_RUNS, &tenant.id).await?;
    for run in runs.iter().filter(|r| within(&r.run_day)) {
        let Some(row) = rows.get_mut(&run.campaign_journey_id) else { continue };
        row.sent += run.sent_count;
        row.holdout += run.holdout_count;
        for (reason, n) in &run.skipped {
            *row.skipped.entry(reason.clone()).or_default() += n;
        }
    }
    for (id, row) in rows.iter_mut() {
        let partition = keys::campaign_roi_partition(&tenant.id, id);
        let roi: Vec<RoiRow> = tenant.repo().all(CAMPAIGN_ROI, &partition).await?;
        for r in roi.iter().filter(|r| r.mode != "holdout" && within(&r.date)) {
            row.delivered += r.delivered;
            row.orders += r.orders;
            row.revenue += r.revenue;
        }
    }
    let ids: BTreeSet<String> = rows.keys().cloned().collect();
    for txn in wallet_txns_of(tenant, None, |auto_id| ids.contains(auto_id)).await? {
        let (_, txn) = txn;
        if txn.transaction_type != "debit" || !within(&ist_day(txn.at)) {
            continue;
        }
        if let Some(row) = txn.auto_id.as_ref().and_then(|id| rows.get_mut(id)) {
            row.spend += txn.amount;
            row.messages += 1;
        }
    }
    let data = rows
        .into_values()
        .map(|mut row| {
            row.revenue = row.revenue.normalize();
            row.spend = row.spend.normalize();
            row
        })
        .collect();
    Ok(Health { data })
}

/// What the flag sync did for a brand.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FlagsSynced {
    /// Records written.
    pub records: usize,
    /// Of which `auto_campaign` 1.
    pub on: usize,
}

/// The daily `auto_campaign` flag sync (spec "Journey behaviour" 11) of one brand: its own record
/// and one per outlet it knows (outlets with a journey, a wallet or an earlier record).
pub async fn sync_flags(tenant: &mut Tenant, now: DateTime<Utc>) -> Result<FlagsSynced, QueryError> {
    let all = journeys(tenant).await?;
    let id = tenant.id.clone();
    let brand_wide = |child: &str| child == "0" || child == id;
    let on = |j: &&super::JourneyConfig| j.campaign_enabled == 1 && j.config_enabled == 1;
    let any_on = all.iter().any(|j| on(&j));
    let brand_wide_on = all.iter().filter(on).any(|j| brand_wide(&j.child_business_id));
    let mut outlets: BTreeSet<String> =
        all.iter().map(|j| j.child_business_id.clone()).filter(|c| !brand_wide(c)).collect();
    outlets.extend(tenant.repo().clusterings(BUSINESS_WALLETS, &id).await?);
    outlets.extend(tenant.repo().clusterings(BUSINESS_CONFIGS, &id).await?.into_iter().filter(|c| c != "0"));
    // each record keeps its other fields: only the flag and its time change
    let mut records = Vec::new();
    for (outlet, flag) in std::iter::once(("0".to_owned(), any_on)).chain(outlets.into_iter().map(|o| {
        let own = all.iter().filter(on).any(|j| j.child_business_id == o);
        (o, own || brand_wide_on)
    })) {
        let mut record = business::config(tenant, &outlet).await?;
        record.auto_campaign = u8::from(flag);
        record.synced_at = Some(now);
        records.push(record);
    }
    let synced = FlagsSynced { records: records.len(), on: records.iter().filter(|r| r.auto_campaign == 1).count() };
    tenant.batch(records.iter().map(|r| business::put(tenant, r)).collect()).await?;
    Ok(synced)
}
