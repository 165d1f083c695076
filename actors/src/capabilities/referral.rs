//! Refer-and-earn: a new customer names a referrer ([`refer`], on customer events); on the
//! referee's first qualifying order the [`RewardReferral`] order reaction pays both once.

use async_trait::async_trait;

use engage_storage::{StoreError, WriteOp};

use super::fraud::is_blocked;
use super::ledger::{self, Draft, LotEffect};
use super::loyalty::rules;
use crate::domain::customer::{Applied, Customer};
use crate::domain::time::end_of_ist_day_after;
use crate::keys::digest;
use crate::reaction::{OrderEvent, OrderReaction};
use crate::tenant_core::Tenant;

/// Records `referrer` as the customer's referrer when the referral is acceptable: the customer is
/// new to the brand (no order yet) and has no referrer, and the referrer is another existing
/// customer of the brand. Otherwise it is ignored (logged and counted).
pub async fn refer(tenant: &mut Tenant, customer: &mut Customer, referrer: &str) -> Result<(), StoreError> {
    let refused = if customer.referred_by.is_some() {
        Some("already referred")
    } else if customer.total_orders() > 0 {
        Some("not a new customer")
    } else if referrer == customer.phone {
        Some("self-referral")
    } else if tenant.customer(referrer).await?.is_none() {
        Some("unknown referrer")
    } else {
        None
    };
    match refused {
        Some(reason) => {
            metrics::counter!("engage_referrals_refused_total", "reason" => reason).increment(1);
            tracing::info!(tenant = %tenant.id, reason, "referral ignored");
        }
        None => {
            metrics::counter!("engage_referrals_total").increment(1);
            customer.referred_by = Some(referrer.to_owned());
        }
    }
    Ok(())
}

/// Order reaction: on a referred customer's first order of at least the programme's minimum, the
/// referee's and the referrer's points. The referrer's row is written before the referee's (which
/// commits the reward): a retry after a partial write finds the referee in the referrer's
/// `referrals_rewarded` and does not pay the referrer twice.
pub struct RewardReferral;

#[async_trait]
impl OrderReaction for RewardReferral {
    fn name(&self) -> &'static str {
        "referral_reward"
    }

    async fn react(
        &self,
        tenant: &mut Tenant,
        order: &OrderEvent<'_>,
        customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        if order.voids() && customer.referral_order.as_deref() == Some(order.facts.key().as_str()) {
            return take_back(tenant, order, customer, ops).await;
        }
        if order.applied != Applied::New || order.facts.void {
            return Ok(());
        }
        let rules = rules(tenant).await?;
        let program = &rules.referral;
        let Some(referrer_phone) = customer.referred_by.clone() else { return Ok(()) };
        if !program.enabled || customer.referral_rewarded || order.facts.net() < program.min_order_amount {
            return Ok(());
        }
        customer.referral_rewarded = true;
        customer.referral_order = Some(order.facts.key());
        let expires = end_of_ist_day_after(order.received, rules.points_expiry_days);
        let (id, referee) = (tenant.id.clone(), customer.phone.clone());
        let draft = |phone: &str, points| Draft {
            txn_id: format!("RF-{}", digest(&[&id, phone, &referee])),
            kind: "referral",
            points,
            order_id: Some(order.facts.order_id.clone()),
            outlet_id: Some(order.facts.business_id.clone()),
            at: order.received,
            lots: LotEffect::Grant(expires),
        };
        if let Some(mut referrer) = tenant.customer(&referrer_phone).await? {
            let capped = program.max_referrals > 0
                && referrer.referrals_rewarded.len() >= usize::try_from(program.max_referrals).unwrap_or(usize::MAX);
            if !referrer.referrals_rewarded.contains(&customer.phone)
                && !capped
                && !is_blocked(tenant, &referrer).await?
            {
                referrer.referrals_rewarded.insert(customer.phone.clone());
                if program.referrer_points > 0 {
                    ops.extend(ledger::entry(&id, &mut referrer, draft(&referrer_phone, program.referrer_points)));
                }
                ops.push(tenant.put_customer(&referrer));
                // reloaded from the store next time: the batch may still fail
                tenant.forget_customer(&referrer_phone);
            }
        }
        if program.referee_points > 0 && !is_blocked(tenant, customer).await? {
            ops.extend(ledger::entry(&id, customer, draft(&referee, program.referee_points)));
        }
        Ok(())
    }
}

/// The order that earned the referral was refunded as a whole: the referee's and the referrer's
/// referral points go back (each as far as their balance goes), and the referral may be earned
/// again by a later order.
async fn take_back(
    tenant: &mut Tenant,
    order: &OrderEvent<'_>,
    customer: &mut Customer,
    ops: &mut Vec<WriteOp>,
) -> Result<(), StoreError> {
    let program = rules(tenant).await?.referral;
    let (id, referee) = (tenant.id.clone(), customer.phone.clone());
    let draft = |phone: &str, points: i64| Draft {
        txn_id: format!("RFC-{}", digest(&[&id, phone, &referee, &order.envelope.id])),
        kind: "clawback",
        points: -points,
        order_id: Some(order.facts.order_id.clone()),
        outlet_id: Some(order.facts.business_id.clone()),
        at: order.received,
        lots: LotEffect::Consume,
    };
    if let Some(referrer_phone) = customer.referred_by.clone() {
        if let Some(mut referrer) = tenant.customer(&referrer_phone).await? {
            if referrer.referrals_rewarded.remove(&referee) {
                let points = program.referrer_points.min(referrer.loyalty_points);
                if points > 0 {
                    ops.extend(ledger::entry(&id, &mut referrer, draft(&referrer_phone, points)));
                }
                ops.push(tenant.put_customer(&referrer));
                tenant.forget_customer(&referrer_phone);
            }
        }
    }
    let points = program.referee_points.min(customer.loyalty_points);
    if points > 0 {
        ops.extend(ledger::entry(&id, customer, draft(&referee, points)));
    }
    customer.referral_rewarded = false;
    customer.referral_order = None;
    Ok(())
}
