//! Erasure of a customer's personal data in one brand ([`Erase`]): in the brand's actor's turn,
//! so no order or question of the customer runs half-way through it.
//!
//! - deleted: the customer row, the loyalty ledger and the expiry job's rows of their points, the
//!   redemptions, check-ins, the one-time password, the subscriptions and the opt-out link, the
//!   journey decisions about them; the actor forgets the cached customer;
//! - kept for the brand's totals and anonymised ([`super::sweep`]): order rows, the day-wise
//!   loyalty rows, coupons, bills, feedback requests, ratings, NPS answers, recoveries, queued
//!   messages of the retention window and the brand's wallet transactions and references: the
//!   number becomes a random stand-in, the name and personal fields `"erased"`;
//! - a queued message not yet sent is cancelled and what the brand paid for it is credited back
//!   (reference `erasure-<digest>`, once);
//! - an audit row (`erasures`, partition the brand): when, by whom, how many rows; no personal data.
//!
//! The dashboard's rollups hold no personal data and are left as they are, so `/stats` totals do
//! not move. Erasing twice changes nothing the second time (nothing names the number any more).
//! What the bus keeps (parked events, the orders stream) is erased by the caller
//! (`engage_streams::Bus::erase_customer`), outside the actor.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::WriteOp;

use super::sweep::Sweep;
use crate::domain::customer::Customer;
use crate::domain::loyalty::LedgerEntry;
use crate::domain::time::ist_day;
use crate::keys;
use crate::query::{question, QueryError};
use crate::tables::{
    BILL_SKIPS, BUSINESS_WALLETS, CAMPAIGN_JOURNEYS, CHANNEL_QUEUE, CHANNEL_WORK, CHECKINS, COUPONS, CRM_QUEUE,
    CUSTOMER_ORDERS, DIGITAL_BILLS, ERASURES, FEEDBACK_RECOVERIES, FEEDBACK_REQUESTS, JOURNEY_SENDS, LOYALTY_LEDGER,
    NPS_RESPONSES, RATINGS, REDEMPTIONS, WALLET_REFS, WALLET_TXNS,
};
use crate::tenant_core::Tenant;

question! {
    /// Erases `phone`'s personal data in the brand: [`Erased`].
    pub struct Erase {
        /// Customer phone.
        pub phone: String,
        /// Who asked (a staff token's id, or `cli`): kept in the audit row.
        pub by: String,
        /// When.
        pub now: DateTime<Utc>,
    } -> Erased;
}

/// What an erasure did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Erased {
    /// Rows deleted.
    pub deleted: u64,
    /// Rows kept for the brand's totals, anonymised.
    pub anonymised: u64,
    /// Queued messages not yet sent, cancelled (and what was paid for them credited back).
    pub cancelled: u64,
    /// Messages the bus kept that named them (parked events, the orders stream's retained
    /// messages), removed: filled in by the caller after the actor's part.
    #[serde(default)]
    pub bus_messages: u64,
}

/// The deletes of every row of `partition`.
async fn delete_all(
    tenant: &Tenant,
    table: &'static str,
    partition: &str,
    ops: &mut Vec<WriteOp>,
) -> Result<u64, QueryError> {
    let rows = tenant.repo().store().scan(table, partition, None, 100_000).await?;
    let n = rows.len() as u64;
    ops.extend(rows.into_iter().map(|row| WriteOp::Delete {
        table,
        partition: partition.to_owned(),
        clustering: row.clustering,
    }));
    Ok(n)
}

/// The writes that erase the customer's points: their ledger rows and the expiry job's index
/// rows of their lots are deleted; their rows of the day-wise loyalty report are kept under a
/// random stand-in for the number (so the report's customers and points stay right, and nothing
/// leads back to them). Rows deleted and rows anonymised.
async fn loyalty_traces(
    tenant: &Tenant,
    phone: &str,
    stand_in: &str,
    ops: &mut Vec<WriteOp>,
) -> Result<(u64, u64), QueryError> {
    let id = &tenant.id;
    let rows = tenant.repo().store().scan(LOYALTY_LEDGER, &keys::ledger_partition(id, phone), None, 100_000).await?;
    let (mut deleted, mut anonymised) = (0, 0);
    let mut expiries = std::collections::BTreeSet::new();
    for row in rows {
        let Ok(seq) = <[u8; 8]>::try_from(row.clustering.as_slice()).map(u64::from_be_bytes) else { continue };
        if let Ok(entry) = serde_json::from_slice::<LedgerEntry>(&row.value) {
            expiries.extend(entry.expires_at);
            expiries.extend(entry.lots.iter().map(|lot| lot.expires_at));
            let day = ist_day(entry.at);
            let daily = keys::loyalty_daily(id, &day, phone, seq);
            if let Some(mut kept) = tenant.repo().get::<Value>(&daily).await? {
                kept["phone"] = Value::String(stand_in.to_owned());
                ops.push(daily.delete());
                ops.push(keys::loyalty_daily(id, &day, stand_in, seq).put(&kept));
                anonymised += 1;
            }
        }
        ops.push(keys::ledger(id, phone, seq).delete());
        deleted += 1;
    }
    for at in expiries {
        let key = keys::points_expiry(at, id, phone);
        if tenant.repo().get::<Value>(&key).await?.is_some() {
            ops.push(key.delete());
            deleted += 1;
        }
    }
    Ok((deleted, anonymised))
}

/// Erases `phone` in the brand.
pub async fn erase(tenant: &mut Tenant, phone: &str, by: &str, now: DateTime<Utc>) -> Result<Erased, QueryError> {
    let id = tenant.id.clone();
    let customer: Option<Customer> = tenant.repo().get(&keys::customer(&id, phone)).await?;
    let name = customer.as_ref().and_then(|c| c.name.clone());
    let mut sweep = Sweep::new(phone, name.as_deref());
    let mut ops = Vec::new();
    let mut done = Erased::default();
    if customer.is_some() {
        ops.push(keys::customer(&id, phone).delete());
        done.deleted += 1;
    }
    for key in super::order_keys(tenant.repo(), &id, phone, customer.as_ref()).await? {
        let (outlet, order_id) = key.split_once('/').unwrap_or(("", &key));
        let order = keys::order(&id, outlet, order_id);
        if let Some(mut row) = tenant.repo().get::<Value>(&order).await? {
            sweep.scrub(&mut row);
            ops.push(order.put(&row));
            done.anonymised += 1;
        }
    }
    done.deleted += delete_all(tenant, CUSTOMER_ORDERS, &keys::customer_orders_partition(&id, phone), &mut ops).await?;
    let mine = keys::ledger_partition(&id, phone);
    let (deleted, anonymised) = loyalty_traces(tenant, phone, &sweep.stand_in, &mut ops).await?;
    done.deleted += deleted;
    done.anonymised += anonymised;
    done.deleted += delete_all(tenant, REDEMPTIONS, &mine, &mut ops).await?;
    done.deleted += delete_all(tenant, CHECKINS, &keys::checkins_partition(&id, phone), &mut ops).await?;
    for key in [
        keys::otp(&id, phone),
        keys::consent(&id, phone),
        keys::consent_link(&super::super::consent::link_code(tenant.ctx.services.links.salt(), &id, phone)),
    ] {
        if tenant.repo().get::<Value>(&key).await?.is_some() {
            ops.push(key.delete());
            done.deleted += 1;
        }
    }
    for journey in tenant.repo().clusterings(CAMPAIGN_JOURNEYS, &id).await? {
        let partition = keys::journey_sends_partition(&id, &journey);
        let prefix = format!("{phone}|");
        let rows = tenant.repo().store().scan(JOURNEY_SENDS, &partition, None, 100_000).await?;
        for row in rows.into_iter().filter(|r| r.clustering.starts_with(prefix.as_bytes())) {
            ops.push(WriteOp::Delete {
                table: JOURNEY_SENDS,
                partition: partition.clone(),
                clustering: row.clustering,
            });
            done.deleted += 1;
        }
    }
    // the brand's rows that name them, kept for its totals
    let all = |_: &[u8], _: &Value| true;
    for table in [COUPONS, DIGITAL_BILLS, FEEDBACK_REQUESTS, RATINGS, NPS_RESPONSES, FEEDBACK_RECOVERIES] {
        sweep.partition(tenant, table, &id, all).await?;
    }
    let own_prefix = format!("{id}|");
    for partition in super::queue_partitions(now) {
        let ours = |_: &[u8], row: &Value| row.get("parent_business_id").and_then(Value::as_str) == Some(id.as_str());
        sweep.partition(tenant, CHANNEL_QUEUE, &partition, ours).await?;
        let our_marker = |clustering: &[u8], _: &Value| clustering.starts_with(own_prefix.as_bytes());
        sweep.partition(tenant, CHANNEL_WORK, &partition, our_marker).await?;
    }
    for (table, partition) in super::day_partitions(now, CRM_QUEUE, |day| keys::queue_partition(&id, day))
        .into_iter()
        .chain(super::day_partitions(now, BILL_SKIPS, |day| keys::bill_skips_partition(&id, day)))
    {
        sweep.partition(tenant, table, &partition, all).await?;
    }
    for business in tenant.repo().clusterings(BUSINESS_WALLETS, &id).await? {
        let partition = keys::wallet_txns_partition(&id, &business);
        sweep.partition(tenant, WALLET_TXNS, &partition, all).await?;
        sweep.partition(tenant, WALLET_REFS, &partition, all).await?;
    }
    done.anonymised += sweep.anonymised;
    done.cancelled = sweep.cancelled.len() as u64;
    ops.append(&mut sweep.ops);
    if done == Erased::default() {
        return Ok(done);
    }
    // what was paid for the cancelled messages comes back first (each credit once, by its
    // reference): erasing again after a failure below credits nothing twice
    for cancelled in std::mem::take(&mut sweep.cancelled) {
        let amount = cancelled.total.to_string();
        crate::capabilities::wallet::recharge(
            tenant,
            &cancelled.business,
            &amount,
            Some(cancelled.reference),
            true,
            now,
        )
        .await?;
    }
    let audit = serde_json::json!({"tenant": id, "at": now, "by": by, "deleted": done.deleted,
        "anonymised": done.anonymised, "cancelled": done.cancelled});
    let clustering =
        format!("{}|{}", now.timestamp_micros(), keys::digest(&["erasure", &id, phone, &now.to_rfc3339()]));
    ops.push(WriteOp::Put {
        table: ERASURES,
        partition: id.clone(),
        clustering: clustering.into_bytes(),
        value: serde_json::to_vec(&audit).map_err(|e| QueryError::Failed(e.to_string()))?,
    });
    let deleted: Vec<_> = ops
        .iter()
        .filter_map(|op| match op {
            WriteOp::Delete { table, partition, clustering } => Some((*table, partition.clone(), clustering.clone())),
            WriteOp::Put { .. } => None,
        })
        .collect();
    for chunk in ops.chunks(500) {
        tenant.batch(chunk.to_vec()).await?;
    }
    // what the store keeps of a deleted row (a NATS KV delete marker spells its key) goes too
    tenant.repo().store().forget(&deleted).await?;
    tenant.forget_customer(phone);
    metrics::counter!("engage_customers_erased_total").increment(1);
    Ok(done)
}
