//! The rewards questions (`RewardsQuery`) and their reply types.

use serde::{Deserialize, Serialize};

use crate::query::question;

#[allow(unused_imports)]
use super::*;

/// Rewards and coupon queries.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum RewardsQuery {
    /// See [`UpsertReward`].
    UpsertReward(UpsertReward),
    /// See [`ListRewards`].
    ListRewards(ListRewards),
    /// See [`PurchaseReward`].
    PurchaseReward(PurchaseReward),
    /// See [`CustomerCoupons`].
    CustomerCoupons(CustomerCoupons),
    /// See [`GetCoupon`].
    GetCoupon(GetCoupon),
    /// See [`UseCoupon`].
    UseCoupon(UseCoupon),
    /// See [`RevokePendingCoupon`].
    RevokePendingCoupon(RevokePendingCoupon),
    /// See [`RevokeCoupon`].
    RevokeCoupon(RevokeCoupon),
}

question! {
    /// Add or edit a reward of the brand's catalogue: the [`Reward`] stored.
    pub struct UpsertReward {
        /// The reward.
        pub reward: RewardDraft,
    } -> Reward;
}

question! {
    /// The active rewards, with `affordable` for `phone` when given: [`Catalogue`].
    pub struct ListRewards {
        /// Customer phone, optional.
        pub phone: Option<String>,
    } -> Catalogue;
}

question! {
    /// Buy a reward with points: a coupon is issued (once per `reference` when given): [`Purchased`].
    pub struct PurchaseReward {
        /// Customer phone.
        pub phone: String,
        /// The reward.
        pub reward_id: String,
        /// Caller's reference for retries.
        pub reference: Option<String>,
    } -> Purchased;
}

question! {
    /// A customer's coupons: [`Coupons`].
    pub struct CustomerCoupons {
        /// Customer phone.
        pub phone: String,
    } -> Coupons;
}

question! {
    /// A [`Coupon`].
    pub struct GetCoupon {
        /// Its code.
        pub code: String,
    } -> Coupon;
}

question! {
    /// Use an issued coupon on an order: the [`Coupon`].
    pub struct UseCoupon {
        /// Its code.
        pub code: String,
        /// The order.
        pub order_id: String,
        /// POS use: the coupon stays `pending` until the order arrives, and the revoke job puts it
        /// back to `issued` after this many minutes otherwise. `None`: final at once.
        #[serde(default)]
        pub pending_minutes: Option<u64>,
    } -> Coupon;
}

question! {
    /// Put a pending coupon back to `issued` when its order never arrived (the revoke job):
    /// [`CouponReverted`].
    pub struct RevokePendingCoupon {
        /// Its code.
        pub code: String,
        /// The job's clock (RFC 3339).
        pub now: String,
    } -> CouponReverted;
}

question! {
    /// Revoke an issued (unused) coupon: its points come back: [`Purchased`].
    pub struct RevokeCoupon {
        /// Customer phone (must own the coupon).
        pub phone: String,
        /// Its code.
        pub code: String,
    } -> Purchased;
}

/// A reward with whether the customer asked about can afford it.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RewardView {
    /// The reward.
    #[serde(flatten)]
    pub reward: Reward,
    /// Whether the customer's balance covers it (only with a customer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affordable: Option<bool>,
}

/// The active rewards.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Catalogue {
    /// Rewards.
    pub rewards: Vec<RewardView>,
    /// The customer's balance, when one was named.
    pub loyalty_points: Option<i64>,
}

/// A coupon bought or revoked, and the balance.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Coupons {
    /// Coupons, by code.
    pub coupons: Vec<Coupon>,
}

/// What the revoke job did to a pending coupon.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
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
