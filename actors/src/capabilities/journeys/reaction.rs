//! The order reaction: the welcome journey of a customer's first order, paid by the outlet's wallet.

use crate::domain::customer::{Applied, Customer};
use crate::reaction::{OrderEvent, OrderReaction};
use crate::tenant_core::Tenant;
use async_trait::async_trait;
use engage_storage::{StoreError, WriteOp};

#[allow(unused_imports)]
use super::*;

/// A template with the customer's fields put in: `x_cust_name`, `x_cust_mobile` and
/// `x_cust_eid` (the customer's email; empty when unknown).
pub fn fill(template: &str, customer: &Customer) -> String {
    template
        .replace("x_cust_name", customer.name.as_deref().unwrap_or(""))
        .replace("x_cust_mobile", &customer.phone)
        .replace("x_cust_eid", customer.email.as_deref().unwrap_or(""))
}

/// The enabled journey of `campaign_type` that applies to `outlet`: the outlet's own, else the
/// brand-wide one (`child_business_id` `"0"` or the brand's id).
pub fn applicable<'a>(
    all: &'a [JourneyConfig],
    campaign_type: &str,
    outlet: &str,
    tenant: &str,
) -> Option<&'a JourneyConfig> {
    let enabled =
        |j: &&JourneyConfig| j.campaign_type == campaign_type && j.campaign_enabled == 1 && j.config_enabled == 1;
    all.iter()
        .filter(enabled)
        .find(|j| j.child_business_id == outlet)
        .or_else(|| all.iter().filter(enabled).find(|j| j.child_business_id == "0" || j.child_business_id == tenant))
}

/// The welcome journey as an order reaction: a customer's first order (a new order that makes
/// their order count 1) gets the outlet's (or the brand's) enabled welcome journey through
/// [`reach`] (occasion `first-order`): holdout, daily cap and frequency cap apply, then one
/// message per channel, paid by the order's outlet wallet (campaign prices, `auto_id` = the
/// journey), delivered today (IST). A replayed order pays nothing (the decision and the send ids
/// are per customer). A wallet that cannot pay skips the customer
/// (`engage_sends_skipped_total{reason="balance"}`); a push channel needs a registered push token.
pub struct SendWelcome;

#[async_trait]
impl OrderReaction for SendWelcome {
    fn name(&self) -> &'static str {
        "welcome"
    }

    async fn react(
        &self,
        tenant: &mut Tenant,
        order: &OrderEvent<'_>,
        customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        if order.applied != Applied::New || order.facts.void || customer.total_orders() != 1 {
            return Ok(());
        }
        let all = journeys(tenant).await?;
        let outlet = order.facts.business_id.clone();
        let Some(journey) = applicable(&all, "welcome", &outlet, &tenant.id).cloned() else {
            return Ok(());
        };
        reach_one(tenant, &journey, customer, &outlet, "first-order", order.received, ops).await?;
        Ok(())
    }
}
