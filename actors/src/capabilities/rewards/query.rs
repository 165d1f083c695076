//! The rewards questions (`RewardsQuery`) and their reply types.

use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::*;

/// Rewards and coupon queries.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum RewardsQuery {
    /// Add or edit a reward of the brand's catalogue: the [`Reward`] stored.
    UpsertReward {
        /// The reward.
        reward: RewardDraft,
    },
    /// The active rewards, with `affordable` for `phone` when given: [`Catalogue`].
    ListRewards {
        /// Customer phone, optional.
        phone: Option<String>,
    },
    /// Buy a reward with points: a coupon is issued (once per `reference` when given): [`Purchased`].
    PurchaseReward {
        /// Customer phone.
        phone: String,
        /// The reward.
        reward_id: String,
        /// Caller's reference for retries.
        reference: Option<String>,
    },
    /// A customer's coupons: [`Coupons`].
    CustomerCoupons {
        /// Customer phone.
        phone: String,
    },
    /// A [`Coupon`].
    GetCoupon {
        /// Its code.
        code: String,
    },
    /// Use an issued coupon on an order: the [`Coupon`].
    UseCoupon {
        /// Its code.
        code: String,
        /// The order.
        order_id: String,
        /// POS use: the coupon stays `pending` until the order arrives, and the revoke job puts it
        /// back to `issued` after this many minutes otherwise. `None`: final at once.
        #[serde(default)]
        pending_minutes: Option<u64>,
    },
    /// Put a pending coupon back to `issued` when its order never arrived (the revoke job):
    /// [`CouponReverted`].
    RevokePendingCoupon {
        /// Its code.
        code: String,
        /// The job's clock (RFC 3339).
        now: String,
    },
    /// Revoke an issued (unused) coupon: its points come back: [`Purchased`].
    RevokeCoupon {
        /// Customer phone (must own the coupon).
        phone: String,
        /// Its code.
        code: String,
    },
}

/// A reward with whether the customer asked about can afford it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RewardView {
    /// The reward.
    #[serde(flatten)]
    pub reward: Reward,
    /// Whether the customer's balance covers it (only with a customer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affordable: Option<bool>,
}

/// The active rewards.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Catalogue {
    /// Rewards.
    pub rewards: Vec<RewardView>,
    /// The customer's balance, when one was named.
    pub loyalty_points: Option<i64>,
}

/// A coupon bought or revoked, and the balance.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Purchased {
    /// The coupon.
    pub coupon: Option<Coupon>,
    /// The balance after it.
    pub loyalty_points: i64,
    /// True when this was a retry (nothing changed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// A customer's coupons.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Coupons {
    /// Coupons, by code.
    pub coupons: Vec<Coupon>,
}

/// What the revoke job did to a pending coupon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CouponReverted {
    /// Whether it is `issued` again.
    pub reverted: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The coupon, when reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coupon: Option<Coupon>,
}
