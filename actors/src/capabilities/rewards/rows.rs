//! The rewards rows a brand keeps: the catalogue's rewards and the coupons issued.

use crate::keys;
use crate::tenant_core::Tenant;
use chrono::{DateTime, Utc};
use engage_storage::{StoreError, WriteOp};
use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::*;

/// A reward as staff submit it.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RewardDraft {
    /// Its id, to edit one; a new one gets `RW-…`.
    pub reward_id: Option<String>,
    /// Name.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// Points it costs.
    pub points_cost: i64,
    /// Days its coupons stay valid (30 when absent).
    pub valid_days: Option<i64>,
    /// Whether it can be bought (true when absent).
    pub active: Option<bool>,
}

/// A reward of the catalogue (table `rewards`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reward {
    /// Its id.
    pub reward_id: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// Points it costs.
    pub points_cost: i64,
    /// Days its coupons stay valid.
    pub valid_days: i64,
    /// Whether it can be bought.
    pub active: bool,
}

/// A coupon's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CouponStatus {
    /// Bought, not used.
    Issued,
    /// Used at a POS, waiting for its order.
    Pending,
    /// Used.
    Redeemed,
    /// Given back for its points.
    Revoked,
    /// Past its expiry (shown, never stored).
    Expired,
}

impl CouponStatus {
    pub(super) fn text(self) -> &'static str {
        match self {
            CouponStatus::Issued => "issued",
            CouponStatus::Pending => "pending",
            CouponStatus::Redeemed => "redeemed",
            CouponStatus::Revoked => "revoked",
            CouponStatus::Expired => "expired",
        }
    }
}

/// A coupon (table `coupons`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Coupon {
    /// Its code.
    pub coupon_code: String,
    /// The reward bought.
    pub reward_id: String,
    /// The reward's name.
    pub name: String,
    /// Its owner.
    pub customer_number: String,
    /// Points paid.
    pub points_cost: i64,
    /// State.
    pub status: CouponStatus,
    /// When bought.
    pub issued_at: DateTime<Utc>,
    /// When it stops being usable.
    pub expires_at: DateTime<Utc>,
    /// The ledger row of the purchase (its lots come back on a revoke).
    pub ledger_seq: u64,
    /// The order it was used on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
    /// When it was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redeemed_at: Option<DateTime<Utc>>,
    /// A pending POS use's deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_until: Option<DateTime<Utc>>,
    /// When it was revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<DateTime<Utc>>,
}

pub(super) async fn coupon(tenant: &Tenant, code: &str) -> Result<Option<Coupon>, StoreError> {
    tenant.repo().get(&keys::coupon(&tenant.id, code)).await
}

/// The write of a coupon row.
pub fn put_coupon(tenant: &Tenant, coupon: &Coupon) -> WriteOp {
    keys::coupon(&tenant.id, &coupon.coupon_code).put(coupon)
}

pub(super) fn short_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}
