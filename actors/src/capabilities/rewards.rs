//! The rewards catalogue and coupons: rewards bought with points issue coupons; a coupon is used
//! on an order (a POS use stays pending until its order arrives: the [`ConfirmPendingCoupon`]
//! order reaction makes it final, the revoke job puts it back otherwise) or revoked for its points.

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use engage_storage::{StoreError, WriteOp};

use super::fraud::is_blocked;
use super::ledger::{self, Draft, LotEffect};
use super::redemption;
use crate::brand::Brand;
use crate::domain::customer::{Customer, Redemption};
use crate::domain::loyalty::RedeemError;
use crate::domain::order::OrderFacts;
use crate::keys;
use crate::query::{reply, QueryError, QueryReply};
use crate::reaction::{OrderEvent, OrderReaction};
use crate::repo::{COUPONS, REWARDS};

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

/// A reward as staff submit it.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    fn text(self) -> &'static str {
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

async fn coupon(brand: &Brand, code: &str) -> Result<Option<Coupon>, StoreError> {
    brand.repo().get(&keys::coupon(&brand.tenant, code)).await
}

/// The write of a coupon row.
pub fn put_coupon(brand: &Brand, coupon: &Coupon) -> WriteOp {
    keys::coupon(&brand.tenant, &coupon.coupon_code).put(coupon)
}

fn short_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Answers a rewards query.
pub async fn handle(brand: &mut Brand, query: RewardsQuery) -> QueryReply {
    let now = Utc::now();
    match query {
        RewardsQuery::UpsertReward { reward } => {
            let reward = Reward {
                reward_id: reward.reward_id.unwrap_or_else(|| format!("RW-{}", &short_id()[..10])),
                name: reward.name,
                description: reward.description,
                points_cost: reward.points_cost,
                valid_days: reward.valid_days.unwrap_or(30),
                active: reward.active.unwrap_or(true),
            };
            brand.batch(vec![keys::reward(&brand.tenant, &reward.reward_id).put(&reward)]).await?;
            reply(Ok(reward))
        }
        RewardsQuery::ListRewards { phone } => {
            let balance = match &phone {
                Some(phone) => Some(brand.known_customer(phone).await?.loyalty_points),
                None => None,
            };
            let rewards = brand
                .repo()
                .all::<Reward>(REWARDS, &brand.tenant)
                .await?
                .into_iter()
                .filter(|r| r.active)
                .map(|reward| RewardView { affordable: balance.map(|b| reward.points_cost <= b), reward })
                .collect();
            reply(Ok(Catalogue { rewards, loyalty_points: balance }))
        }
        RewardsQuery::PurchaseReward { phone, reward_id, reference } => {
            reply(purchase(brand, &phone, &reward_id, reference, now).await)
        }
        RewardsQuery::CustomerCoupons { phone } => {
            let coupons = brand
                .repo()
                .all::<Coupon>(COUPONS, &brand.tenant)
                .await?
                .into_iter()
                .filter(|c| c.customer_number == phone)
                .map(|mut c| {
                    if c.expires_at <= now && c.status == CouponStatus::Issued {
                        c.status = CouponStatus::Expired;
                    }
                    c
                })
                .collect();
            reply(Ok(Coupons { coupons }))
        }
        RewardsQuery::GetCoupon { code } => reply(coupon(brand, &code).await?.ok_or(QueryError::NotFound)),
        RewardsQuery::UseCoupon { code, order_id, pending_minutes } => {
            reply(use_coupon(brand, &code, &order_id, pending_minutes, now).await)
        }
        RewardsQuery::RevokePendingCoupon { code, now: clock } => {
            let clock = crate::domain::time::parse_instant(&clock).unwrap_or(now);
            reply(revert_pending(brand, &code, clock).await)
        }
        RewardsQuery::RevokeCoupon { phone, code } => reply(revoke(brand, &phone, &code, now).await),
    }
}

async fn purchase(
    brand: &mut Brand,
    phone: &str,
    reward_id: &str,
    reference: Option<String>,
    now: DateTime<Utc>,
) -> Result<Purchased, QueryError> {
    let mut customer = brand.known_customer(phone).await?;
    let reference = reference.unwrap_or_else(short_id);
    // a retry with the same reference answers the coupon already issued
    let order_key = format!("reward:{reference}");
    if let Some(done) = redemption::committed(brand, &customer, &order_key).await? {
        let code = done.txn_id.trim_start_matches("C-").to_owned();
        let coupon = coupon(brand, &code).await?;
        return Ok(Purchased { coupon, loyalty_points: customer.loyalty_points, replayed: true });
    }
    let reward = brand
        .repo()
        .get::<Reward>(&keys::reward(&brand.tenant, reward_id))
        .await?
        .filter(|r| r.active)
        .ok_or_else(|| QueryError::Missing(format!("active reward {reward_id}")))?;
    if is_blocked(brand, &customer).await? {
        return Err(QueryError::Blocked);
    }
    if reward.points_cost > customer.loyalty_points {
        return Err(QueryError::Redeem(RedeemError::Insufficient { balance: customer.loyalty_points }));
    }
    let code = short_id()[..8].to_uppercase();
    let ledger_seq = customer.ledger_seq;
    let mut ops = ledger::entry(
        &brand.tenant,
        &mut customer,
        Draft {
            txn_id: format!("C-{code}"),
            kind: "reward_purchase",
            points: -reward.points_cost,
            order_id: None,
            outlet_id: None,
            at: now,
            lots: LotEffect::Consume,
        },
    );
    let coupon = Coupon {
        coupon_code: code.clone(),
        reward_id: reward_id.to_owned(),
        name: reward.name,
        customer_number: phone.to_owned(),
        points_cost: reward.points_cost,
        status: CouponStatus::Issued,
        issued_at: now,
        expires_at: now + Duration::days(reward.valid_days),
        ledger_seq,
        order_id: None,
        redeemed_at: None,
        pending_until: None,
        revoked_at: None,
    };
    ops.push(put_coupon(brand, &coupon));
    let redemption =
        Redemption { txn_id: format!("C-{code}"), points: reward.points_cost, pending_until: None, ledger_seq };
    ops.push(redemption::put(brand, phone, &order_key, &redemption));
    let balance = customer.loyalty_points;
    brand.commit_customer(ops, customer).await?;
    Ok(Purchased { coupon: Some(coupon), loyalty_points: balance, replayed: false })
}

async fn use_coupon(
    brand: &mut Brand,
    code: &str,
    order_id: &str,
    pending_minutes: Option<u64>,
    now: DateTime<Utc>,
) -> Result<Coupon, QueryError> {
    let mut coupon = coupon(brand, code).await?.ok_or(QueryError::NotFound)?;
    let used = matches!(coupon.status, CouponStatus::Redeemed | CouponStatus::Pending);
    if used && coupon.order_id.as_deref() == Some(order_id) {
        return Ok(coupon); // a retry
    }
    let expired = coupon.expires_at <= now;
    if coupon.status != CouponStatus::Issued || expired {
        let state = if expired { "expired" } else { coupon.status.text() };
        return Err(QueryError::Invalid(format!("coupon {code} is {state} and cannot be used")));
    }
    coupon.status = CouponStatus::Redeemed;
    coupon.order_id = Some(order_id.to_owned());
    coupon.redeemed_at = Some(now);
    let mut ops = Vec::new();
    if let Some(minutes) = pending_minutes {
        let until = now + Duration::minutes(minutes as i64);
        coupon.status = CouponStatus::Pending;
        coupon.pending_until = Some(until);
        ops.push(keys::pending_coupon_use(until, &brand.tenant, code).put(&serde_json::json!(
            {"tenant": brand.tenant, "kind": "coupon", "code": code, "order_id": order_id, "expires_at": until}
        )));
        ops.push(keys::pending_coupon(&brand.tenant, order_id).put(&serde_json::json!({"code": code})));
    }
    ops.push(put_coupon(brand, &coupon));
    brand.batch(ops).await?;
    Ok(coupon)
}

async fn revert_pending(brand: &mut Brand, code: &str, clock: DateTime<Utc>) -> Result<CouponReverted, QueryError> {
    let not = |reason: &str| CouponReverted { reverted: false, reason: Some(reason.to_owned()), coupon: None };
    let Some(mut coupon) = coupon(brand, code).await? else { return Ok(not("no such coupon")) };
    let Some(until) = coupon.pending_until.filter(|until| *until <= clock) else {
        return Ok(not("not pending or not due"));
    };
    if coupon.status != CouponStatus::Pending {
        return Ok(not("not pending or not due"));
    }
    let order_id = coupon.order_id.take().unwrap_or_default();
    coupon.status = CouponStatus::Issued;
    coupon.redeemed_at = None;
    coupon.pending_until = None;
    let ops = vec![
        keys::pending_coupon_use(until, &brand.tenant, code).delete(),
        keys::pending_coupon(&brand.tenant, &order_id).delete(),
        put_coupon(brand, &coupon),
    ];
    brand.batch(ops).await?;
    metrics::counter!("engage_coupon_redemptions_reverted_total").increment(1);
    Ok(CouponReverted { reverted: true, reason: None, coupon: Some(coupon) })
}

async fn revoke(brand: &mut Brand, phone: &str, code: &str, now: DateTime<Utc>) -> Result<Purchased, QueryError> {
    let mut coupon = coupon(brand, code).await?.ok_or(QueryError::NotFound)?;
    if coupon.customer_number != phone {
        return Err(QueryError::NotFound);
    }
    if coupon.status != CouponStatus::Issued {
        return Err(QueryError::Invalid(format!("coupon {code} is {} and cannot be revoked", coupon.status.text())));
    }
    let mut customer = brand.known_customer(phone).await?;
    if coupon.points_cost == 0 {
        // a promo coupon (low-rating recovery) cost no points: nothing to give back
        coupon.status = CouponStatus::Revoked;
        coupon.revoked_at = Some(now);
        brand.batch(vec![put_coupon(brand, &coupon)]).await?;
        return Ok(Purchased { coupon: Some(coupon), loyalty_points: customer.loyalty_points, replayed: false });
    }
    let restore = ledger::lots_of(brand, phone, coupon.ledger_seq).await?;
    let mut ops = ledger::entry(
        &brand.tenant,
        &mut customer,
        Draft {
            txn_id: format!("CV-{code}"),
            kind: "reward_revoke",
            points: coupon.points_cost,
            order_id: None,
            outlet_id: None,
            at: now,
            lots: LotEffect::Restore(restore),
        },
    );
    coupon.status = CouponStatus::Revoked;
    coupon.revoked_at = Some(now);
    ops.push(put_coupon(brand, &coupon));
    let balance = customer.loyalty_points;
    brand.commit_customer(ops, customer).await?;
    Ok(Purchased { coupon: Some(coupon), loyalty_points: balance, replayed: false })
}

/// Order reaction: a POS coupon use waiting for this order is final now.
pub struct ConfirmPendingCoupon;

#[derive(Deserialize)]
struct PendingCoupon {
    code: String,
}

#[async_trait]
impl OrderReaction for ConfirmPendingCoupon {
    fn name(&self) -> &'static str {
        "pending_coupon_confirm"
    }

    fn reads(&self, tenant: &str, facts: &OrderFacts) -> Vec<keys::Key> {
        vec![keys::pending_coupon(tenant, &facts.order_id)]
    }

    async fn react(
        &self,
        brand: &mut Brand,
        order: &OrderEvent<'_>,
        _customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        let order_id = &order.facts.order_id;
        let Some(pending) = brand.get::<PendingCoupon>(&keys::pending_coupon(&brand.tenant, order_id)).await? else {
            return Ok(());
        };
        if let Some(mut coupon) = coupon(brand, &pending.code).await? {
            if coupon.status == CouponStatus::Pending {
                if let Some(until) = coupon.pending_until.take() {
                    ops.push(keys::pending_coupon_use(until, &brand.tenant, &pending.code).delete());
                }
                coupon.status = CouponStatus::Redeemed;
                ops.push(put_coupon(brand, &coupon));
            }
        }
        ops.push(keys::pending_coupon(&brand.tenant, order_id).delete());
        Ok(())
    }
}
