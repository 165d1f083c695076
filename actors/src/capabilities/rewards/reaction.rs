//! The order reaction: a coupon used at the POS stays pending until its order arrives, then is confirmed.

use crate::domain::customer::Customer;
use crate::domain::order::OrderFacts;
use crate::keys;
use crate::reaction::{OrderEvent, OrderReaction};
use crate::tenant_core::Tenant;
use async_trait::async_trait;
use engage_storage::{StoreError, WriteOp};
use serde::Deserialize;

#[allow(unused_imports)]
use super::*;

/// Order reaction: a POS coupon use waiting for this order is final now.
pub struct ConfirmPendingCoupon;

#[derive(Deserialize)]
pub(super) struct PendingCoupon {
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
        tenant: &mut Tenant,
        order: &OrderEvent<'_>,
        _customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        let order_id = &order.facts.order_id;
        let Some(pending) = tenant.get::<PendingCoupon>(&keys::pending_coupon(&tenant.id, order_id)).await? else {
            return Ok(());
        };
        if let Some(mut coupon) = coupon(tenant, &pending.code).await? {
            if coupon.status == CouponStatus::Pending {
                if let Some(until) = coupon.pending_until.take() {
                    ops.push(keys::pending_coupon_use(until, &tenant.id, &pending.code).delete());
                }
                coupon.status = CouponStatus::Redeemed;
                ops.push(put_coupon(tenant, &coupon));
            }
        }
        ops.push(keys::pending_coupon(&tenant.id, order_id).delete());
        Ok(())
    }
}
