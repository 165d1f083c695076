//! The rewards catalogue and coupons: rewards bought with points issue coupons; a coupon is used
//! on an order (a POS use stays pending until its order arrives: the [`ConfirmPendingCoupon`]
//! order reaction makes it final, the revoke job puts it back otherwise) or revoked for its points.

mod query;
mod reaction;
mod rows;

pub use query::*;
pub use reaction::*;
pub use rows::*;

use chrono::{DateTime, Duration, Utc};

use super::fraud::is_blocked;
use super::ledger::{self, Draft, LotEffect};
use super::redemption;
use crate::domain::customer::Redemption;
use crate::domain::loyalty::RedeemError;
use crate::keys;
use crate::query::QueryError;
use crate::repo::{COUPONS, REWARDS};
use crate::tenant_core::Tenant;

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _) let now = Utc::now();
    UpsertReward: UpsertReward { reward } => {
        let reward = Reward {
            reward_id: reward.reward_id.unwrap_or_else(|| format!("RW-{}", &short_id()[..10])),
            name: reward.name,
            description: reward.description,
            points_cost: reward.points_cost,
            valid_days: reward.valid_days.unwrap_or(30),
            active: reward.active.unwrap_or(true),
        };
        tenant.batch(vec![keys::reward(&tenant.id, &reward.reward_id).put(&reward)]).await?;
        Ok(reward)
    },
    ListRewards: ListRewards { phone } => {
        let balance = match &phone {
            Some(phone) => Some(tenant.known_customer(phone).await?.loyalty_points),
            None => None,
        };
        let rewards = tenant
            .repo()
            .all::<Reward>(REWARDS, &tenant.id)
            .await?
            .into_iter()
            .filter(|r| r.active)
            .map(|reward| RewardView { affordable: balance.map(|b| reward.points_cost <= b), reward })
            .collect();
        Ok(Catalogue { rewards, loyalty_points: balance })
    },
    PurchaseReward: PurchaseReward { phone, reward_id, reference } => {
        purchase(tenant, &phone, &reward_id, reference, now).await
    },
    CustomerCoupons: CustomerCoupons { phone } => {
        let coupons = tenant
            .repo()
            .all::<Coupon>(COUPONS, &tenant.id)
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
        Ok(Coupons { coupons })
    },
    GetCoupon: GetCoupon { code } => coupon(tenant, &code).await?.ok_or(QueryError::NotFound),
    UseCoupon: UseCoupon { code, order_id, pending_minutes } => {
        use_coupon(tenant, &code, &order_id, pending_minutes, now).await
    },
    RevokePendingCoupon: RevokePendingCoupon { code, now: clock } => {
        let clock = crate::domain::time::parse_instant(&clock).unwrap_or(now);
        revert_pending(tenant, &code, clock).await
    },
    RevokeCoupon: RevokeCoupon { phone, code } => revoke(tenant, &phone, &code, now).await,
}

async fn purchase(
    tenant: &mut Tenant,
    phone: &str,
    reward_id: &str,
    reference: Option<String>,
    now: DateTime<Utc>,
) -> Result<Purchased, QueryError> {
    let mut customer = tenant.known_customer(phone).await?;
    let reference = reference.unwrap_or_else(short_id);
    // a retry with the same reference answers the coupon already issued
    let order_key = format!("reward:{reference}");
    if let Some(done) = redemption::committed(tenant, &customer, &order_key).await? {
        let code = done.txn_id.trim_start_matches("C-").to_owned();
        let coupon = coupon(tenant, &code).await?;
        return Ok(Purchased { coupon, loyalty_points: customer.loyalty_points, replayed: true });
    }
    let reward = tenant
        .repo()
        .get::<Reward>(&keys::reward(&tenant.id, reward_id))
        .await?
        .filter(|r| r.active)
        .ok_or_else(|| QueryError::Missing(format!("active reward {reward_id}")))?;
    if is_blocked(tenant, &customer).await? {
        return Err(QueryError::Blocked);
    }
    if reward.points_cost > customer.loyalty_points {
        return Err(QueryError::Redeem(RedeemError::Insufficient { balance: customer.loyalty_points }));
    }
    let code = short_id()[..8].to_uppercase();
    let ledger_seq = customer.ledger_seq;
    let mut ops = ledger::entry(
        &tenant.id,
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
    ops.push(put_coupon(tenant, &coupon));
    let redemption =
        Redemption { txn_id: format!("C-{code}"), points: reward.points_cost, pending_until: None, ledger_seq };
    ops.push(redemption::put(tenant, phone, &order_key, &redemption));
    let balance = customer.loyalty_points;
    tenant.commit_customer(ops, customer).await?;
    Ok(Purchased { coupon: Some(coupon), loyalty_points: balance, replayed: false })
}

async fn use_coupon(
    tenant: &mut Tenant,
    code: &str,
    order_id: &str,
    pending_minutes: Option<u64>,
    now: DateTime<Utc>,
) -> Result<Coupon, QueryError> {
    let mut coupon = coupon(tenant, code).await?.ok_or(QueryError::NotFound)?;
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
        ops.push(keys::pending_coupon_use(until, &tenant.id, code).put(&serde_json::json!(
            {"tenant": tenant.id, "kind": "coupon", "code": code, "order_id": order_id, "expires_at": until}
        )));
        ops.push(keys::pending_coupon(&tenant.id, order_id).put(&serde_json::json!({"code": code})));
    }
    ops.push(put_coupon(tenant, &coupon));
    tenant.batch(ops).await?;
    Ok(coupon)
}

async fn revert_pending(tenant: &mut Tenant, code: &str, clock: DateTime<Utc>) -> Result<CouponReverted, QueryError> {
    let not = |reason: &str| CouponReverted { reverted: false, reason: Some(reason.to_owned()), coupon: None };
    let Some(mut coupon) = coupon(tenant, code).await? else { return Ok(not("no such coupon")) };
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
        keys::pending_coupon_use(until, &tenant.id, code).delete(),
        keys::pending_coupon(&tenant.id, &order_id).delete(),
        put_coupon(tenant, &coupon),
    ];
    tenant.batch(ops).await?;
    metrics::counter!("engage_coupon_redemptions_reverted_total").increment(1);
    Ok(CouponReverted { reverted: true, reason: None, coupon: Some(coupon) })
}

async fn revoke(tenant: &mut Tenant, phone: &str, code: &str, now: DateTime<Utc>) -> Result<Purchased, QueryError> {
    let mut coupon = coupon(tenant, code).await?.ok_or(QueryError::NotFound)?;
    if coupon.customer_number != phone {
        return Err(QueryError::NotFound);
    }
    if coupon.status != CouponStatus::Issued {
        return Err(QueryError::Invalid(format!("coupon {code} is {} and cannot be revoked", coupon.status.text())));
    }
    let mut customer = tenant.known_customer(phone).await?;
    if coupon.points_cost == 0 {
        // a promo coupon (low-rating recovery) cost no points: nothing to give back
        coupon.status = CouponStatus::Revoked;
        coupon.revoked_at = Some(now);
        tenant.batch(vec![put_coupon(tenant, &coupon)]).await?;
        return Ok(Purchased { coupon: Some(coupon), loyalty_points: customer.loyalty_points, replayed: false });
    }
    let restore = ledger::lots_of(tenant, phone, coupon.ledger_seq).await?;
    let mut ops = ledger::entry(
        &tenant.id,
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
    ops.push(put_coupon(tenant, &coupon));
    let balance = customer.loyalty_points;
    tenant.commit_customer(ops, customer).await?;
    Ok(Purchased { coupon: Some(coupon), loyalty_points: balance, replayed: false })
}
