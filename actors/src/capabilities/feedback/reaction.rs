//! The order reaction: a feedback link sent after an order, by the outlet's (or brand's) configuration, paid by its wallet.

use crate::capabilities::bills::generate::mobile_ok;
use crate::capabilities::wallet::{cancel_queued, put_wallet, queue_send, wallet, SendRequest};
use crate::domain::customer::{Applied, Customer};
use crate::domain::time::ist_day;
use crate::domain::wallet::{Channel, Purpose, TemplateType};
use crate::keys;
use crate::query::QueryError;
use crate::reaction::{OrderEvent, OrderReaction};
use crate::repo::FEEDBACK_CONFIGS;
use crate::signed_links::FormClaims;
use crate::tenant_core::Tenant;
use async_trait::async_trait;
use chrono::{Duration, Utc};
use engage_storage::{StoreError, WriteOp};
use std::collections::BTreeMap;

#[allow(unused_imports)]
use super::*;

/// The brand's configurations by outlet (cached in [`Tenant::feedback_configs`]).
pub(super) async fn configs(tenant: &mut Tenant) -> Result<BTreeMap<String, FeedbackConfig>, StoreError> {
    if let Some(configs) = tenant.cache.get::<BTreeMap<String, FeedbackConfig>>() {
        return Ok(configs.clone());
    }
    let rows: Vec<FeedbackConfig> = tenant.repo().all(FEEDBACK_CONFIGS, &tenant.id).await?;
    let configs: BTreeMap<String, FeedbackConfig> =
        rows.into_iter().map(|c| (c.child_business_id.clone(), c)).collect();
    tenant.cache.set::<BTreeMap<String, FeedbackConfig>>(configs.clone());
    Ok(configs)
}

/// The configuration that applies to `outlet`: its own when its `feedback_flow` is 1, else the
/// brand's (`"0"`) when its `feedback_flow` is 1.
pub fn applicable<'a>(configs: &'a BTreeMap<String, FeedbackConfig>, outlet: &str) -> Option<&'a FeedbackConfig> {
    let on = |c: &&FeedbackConfig| c.feedback_flow == 1;
    configs.get(outlet).filter(on).or_else(|| configs.get("0").filter(on))
}

pub(super) async fn funnel(tenant: &Tenant, day: &str, outlet: &str) -> Result<FeedbackFunnel, StoreError> {
    let stored: Option<FeedbackFunnel> = tenant.repo().get(&keys::feedback_funnel(&tenant.id, day, outlet)).await?;
    Ok(stored.unwrap_or_else(|| FeedbackFunnel {
        date: day.to_owned(),
        child_business_id: outlet.to_owned(),
        ..FeedbackFunnel::default()
    }))
}

pub(super) fn put_funnel(tenant: &Tenant, row: &FeedbackFunnel) -> WriteOp {
    keys::feedback_funnel(&tenant.id, &row.date, &row.child_business_id).put(row)
}

/// The message: the template with `x_cust_name`, `x_cust_mobile`, `x_order_id` and
/// `x_feedback_url` put in; the link is appended when the template does not place it.
pub fn message(template: Option<&str>, name: &str, phone: &str, order_id: &str, url: &str) -> String {
    let template = template
        .filter(|t| !t.trim().is_empty())
        .unwrap_or("Hi x_cust_name, how was your order x_order_id? Tell us: x_feedback_url");
    let text = template.replace("x_cust_name", name).replace("x_cust_mobile", phone).replace("x_order_id", order_id);
    if text.contains("x_feedback_url") {
        text.replace("x_feedback_url", url)
    } else {
        format!("{} {url}", text.trim_end())
    }
}

/// The order reaction: a new order whose outlet (or brand) has feedback on and whose customer's
/// number is `[6-9]\d{9}` gets the feedback-form link by SMS and/or chat, `feedback_time` minutes
/// later, paid by the outlet's wallet at the feedback prices; one request per (outlet, order).
/// A wallet that cannot pay a channel skips that channel.
/// The feedback send id of an order's request on `channel`.
fn send_id(business_id: &str, order_id: &str, channel: Channel) -> String {
    format!("feedback-{}", keys::digest(&[business_id, order_id, channel.queue()]))
}

/// An order cancelled or refunded as a whole: its "rate us" sends still waiting for their delay
/// are not sent.
async fn cancel_request(
    tenant: &mut Tenant,
    facts: &crate::domain::order::OrderFacts,
    ops: &mut Vec<WriteOp>,
) -> Result<(), StoreError> {
    let key = keys::feedback_request(&tenant.id, &facts.business_id, &facts.order_id);
    let Some(request) = tenant.repo().get::<FeedbackRequest>(&key).await? else { return Ok(()) };
    let day = ist_day(request.scheduled_at).replace('-', "");
    for channel in &request.channels {
        let id = send_id(&facts.business_id, &facts.order_id, *channel);
        cancel_queued(tenant, &id, &day, "the order was cancelled or refunded as a whole", ops).await?;
    }
    Ok(())
}

pub struct SendFeedback;

#[async_trait]
impl OrderReaction for SendFeedback {
    fn name(&self) -> &'static str {
        "feedback"
    }

    async fn react(
        &self,
        tenant: &mut Tenant,
        order: &OrderEvent<'_>,
        customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        // no feedback request for an order that did not happen
        if order.voids() {
            return cancel_request(tenant, order.facts, ops).await;
        }
        if order.applied != Applied::New || order.facts.void || !mobile_ok(&order.facts.phone) {
            return Ok(());
        }
        let all = configs(tenant).await?;
        let Some(config) = applicable(&all, &order.facts.business_id).cloned() else { return Ok(()) };
        let channels = config.channels();
        if channels.is_empty() {
            return Ok(());
        }
        let facts = order.facts;
        let key = keys::feedback_request(&tenant.id, &facts.business_id, &facts.order_id);
        if tenant.repo().get::<FeedbackRequest>(&key).await?.is_some() {
            return Ok(());
        }
        let now = Utc::now();
        let scheduled_at = now + Duration::minutes(config.feedback_time.max(0));
        let claims = FormClaims {
            scope: "feedback_form".to_owned(),
            tenant: tenant.id.clone(),
            business_id: facts.business_id.clone(),
            phone: facts.phone.clone(),
            order_id: facts.order_id.clone(),
            bill_id: String::new(),
            exp: (scheduled_at + Duration::days(FORM_VALIDITY_DAYS)).timestamp(),
        };
        let links = tenant.ctx.services.links.clone();
        let url = match &tenant.ctx.services.feedback_service_url {
            Some(service) => links.sign(&claims).map(|token| format!("{service}?token={token}")),
            None => links.form_url(&claims),
        }
        .map_err(|e| StoreError::Backend(e.to_string()))?;
        let name = customer.name.clone().or_else(|| facts.name.clone()).unwrap_or_default();
        let mut purse = wallet(tenant, &facts.business_id).await?;
        let mut sent = Vec::new();
        for channel in channels {
            let template = if channel == Channel::Chat { &config.chat_template } else { &config.sms_template };
            let send = SendRequest {
                business: facts.business_id.clone(),
                channel,
                template_type: if channel == Channel::Chat { config.chat_template_type } else { TemplateType::Utility },
                purpose: Purpose::Feedback,
                to: facts.phone.clone(),
                message: message(template.as_deref(), &name, &facts.phone, &facts.order_id, &url),
                send_id: send_id(&facts.business_id, &facts.order_id, channel),
                delivery_date: ist_day(scheduled_at).replace('-', ""),
                auto_id: None,
                template_id: None,
                button: None,
                sender_id: config.sender_id.clone(),
                not_before: (scheduled_at > now).then_some(scheduled_at),
            };
            match queue_send(tenant, &mut purse, &send, now, ops).await {
                Ok(_) => sent.push(channel),
                Err(QueryError::Insufficient(_)) => {
                    metrics::counter!("engage_feedback_skipped_total", "reason" => "wallet").increment(1);
                }
                Err(QueryError::NoConsent(_)) => {
                    metrics::counter!("engage_feedback_skipped_total", "reason" => "consent").increment(1);
                }
                Err(QueryError::Unsendable(why)) => {
                    tracing::info!(tenant = %tenant.id, order_id = facts.order_id, why, "feedback request not sent: the brand's sender refuses it");
                    metrics::counter!("engage_feedback_skipped_total", "reason" => "sender").increment(1);
                }
                Err(error) => return Err(StoreError::Backend(error.to_string())),
            }
        }
        if sent.is_empty() {
            return Ok(());
        }
        let request = FeedbackRequest {
            parent_business_id: tenant.id.clone(),
            child_business_id: facts.business_id.clone(),
            order_id: facts.order_id.clone(),
            mobile_number: facts.phone.clone(),
            name,
            channels: sent,
            url,
            sent_at: now,
            scheduled_at,
            clicks: 0,
            is_submitted: false,
            rating: None,
        };
        let mut row = funnel(tenant, &ist_day(now), &facts.business_id).await?;
        row.total_feedback_sent += 1;
        ops.push(key.put(&request));
        ops.push(put_funnel(tenant, &row));
        ops.push(put_wallet(tenant, &facts.business_id, &purse));
        metrics::counter!("engage_feedback_sent_total").increment(1);
        Ok(())
    }
}
