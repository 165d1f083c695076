//! The points ledger, shared by every capability that moves loyalty points: [`entry`] changes a
//! customer's balance and expiry lots and returns the rows that record it.

use chrono::{DateTime, Utc};
use serde_json::json;

use engage_storage::{StoreError, WriteOp};

use crate::domain::customer::Customer;
use crate::domain::loyalty::{LedgerEntry, Lot};
use crate::domain::time::ist_day;
use crate::keys;
use crate::tenant_core::Tenant;

/// What a ledger row says, before it gets its balance and key.
pub struct Draft {
    /// Deterministic transaction id (a retry writes the same row).
    pub txn_id: String,
    /// `earn`, `adjust`, `bonus`, `referral`, `redeem`, `revoke`, `expire`, `reward_purchase`, `reward_revoke`.
    pub kind: &'static str,
    /// Points added (positive) or taken (negative).
    pub points: i64,
    /// The order it belongs to.
    pub order_id: Option<String>,
    /// The outlet.
    pub outlet_id: Option<String>,
    /// When.
    pub at: DateTime<Utc>,
    /// What it does to the expiry lots.
    pub lots: LotEffect,
}

/// What a ledger entry does to the customer's expiry lots.
pub enum LotEffect {
    /// Earned points, expiring at this instant.
    Grant(DateTime<Utc>),
    /// Points taken: from the lots that expire first.
    Consume,
    /// Points given back: into the lots they were taken from.
    Restore(Vec<Lot>),
    /// Points expired: these lots, already removed.
    Expired(Vec<Lot>),
}

/// Adds points to the customer's balance (taking or giving back their expiry lots) and returns
/// the writes that record it: the ledger row, keyed by the customer's next ledger sequence number
/// (kept in the customer row); its row in the day's rollup (`loyalty_daily`); and, for points that
/// expire, the expiry job's index row.
pub fn entry(tenant: &str, customer: &mut Customer, draft: Draft) -> Vec<WriteOp> {
    let mut ops = Vec::with_capacity(3);
    customer.loyalty_points += draft.points;
    let seq = customer.ledger_seq;
    customer.ledger_seq += 1;
    let mut expires_at = None;
    let lots = match draft.lots {
        LotEffect::Grant(at) => {
            let lot = Lot { expires_at: at, points: draft.points };
            expires_at = Some(at);
            vec![lot]
        }
        LotEffect::Consume => customer.point_lots.debit(-draft.points),
        LotEffect::Restore(lots) | LotEffect::Expired(lots) => lots,
    };
    if draft.points > 0 {
        for lot in &lots {
            customer.point_lots.credit(lot);
            ops.push(
                keys::points_expiry(lot.expires_at, tenant, &customer.phone)
                    .put(&json!({"tenant": tenant, "phone": customer.phone, "expires_at": lot.expires_at})),
            );
        }
    }
    let day = ist_day(draft.at);
    ops.push(
        keys::loyalty_daily(tenant, &day, &customer.phone, seq)
            .put(&json!({"phone": customer.phone, "kind": draft.kind, "points": draft.points})),
    );
    let row = LedgerEntry {
        txn_id: draft.txn_id,
        kind: draft.kind.to_owned(),
        points: draft.points,
        balance_after: customer.loyalty_points,
        order_id: draft.order_id,
        outlet_id: draft.outlet_id,
        at: draft.at,
        expires_at,
        status: 1,
        lots,
    };
    ops.push(keys::ledger(tenant, &customer.phone, seq).put(&row));
    ops
}

/// A customer's ledger row `seq`.
pub async fn row(tenant: &Tenant, phone: &str, seq: u64) -> Result<Option<LedgerEntry>, StoreError> {
    tenant.repo().get(&keys::ledger(&tenant.id, phone, seq)).await
}

/// The lots a ledger row took points from (to give them back).
pub async fn lots_of(tenant: &Tenant, phone: &str, seq: u64) -> Result<Vec<Lot>, StoreError> {
    Ok(row(tenant, phone, seq).await?.map(|row| row.lots).unwrap_or_default())
}
