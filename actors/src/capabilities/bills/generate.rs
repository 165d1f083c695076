//! Bill generation (behaviours 1–6): as an order reaction ([`GenerateBill`], so a `time` of 0 is
//! immediate) and as the 09:57 job's catch-up ([`page`]: the queue records with status 1 and
//! source 2 of one IST day, 10,000 at a time). Both run [`generate`], so a (outlet, order) gets
//! one bill either way: the bill's id is a digest of the brand, outlet and order, and a bill whose
//! send is committed in the wallet is never made again.
//!
//! A bill is written with its send: the bill row, its short-link code, the day's funnel, the
//! wallet transaction and channel-queue row ([`queue_send`]), then the wallet row, which commits
//! them. Skipped orders are remembered per IST day (table `bill_skips`, one row per outlet and
//! order with its reason) for the report; a later bill for the order deletes its row.

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use engage_storage::{StoreError, WriteOp};

use super::{applicable, configs, funnel, put_funnel, widget_kind, widgets_for, Bill, BillItem, BillOrder, BillWidget};
use super::{LinkConfig, GENERATION_BATCH, GENERATION_SLICE};
use crate::capabilities::wallet::{cancel_queued, committed, put_wallet, queue_send, wallet, SendRequest};
use crate::domain::customer::{Applied, Customer};
use crate::domain::delivery::DeliveryError;
use crate::domain::order::{decimal, OrderFacts};
use crate::domain::time::ist_day;
use crate::domain::wallet::{Channel, Purpose, TemplateType};
use crate::keys;
use crate::query::QueryError;
use crate::reaction::{OrderEvent, OrderReaction};
use crate::repo::{QueueRecord, CRM_QUEUE, STATUS_BILL_GENERATED, STATUS_PROCESSED};
use crate::signed_links::FormClaims;
use crate::tenant_core::Tenant;

/// The queue source whose orders get bills (spec: the job polls source 2).
pub const BILL_SOURCE: u8 = 2;

/// Why an order gets no bill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Skip {
    /// The mobile is not `[6-9]\d{9}`, or is sequential or one digit repeated.
    InvalidMobile,
    /// An aggregator's order (`platform` `aggregator`, or an `aggregator` field).
    Aggregator,
    /// The order's platform is not in the configuration's `bill_platform`.
    Platform,
    /// The outlet and order have a bill already.
    Exists,
    /// Neither the outlet nor the brand has a configuration.
    NoConfig,
    /// The configuration that applies is off (`status` 0).
    Disabled,
    /// The outlet's wallet cannot pay.
    Wallet,
    /// The link service did not answer with a link (retried by the next run).
    LinkService,
    /// The order was cancelled or refunded as a whole: no bill is sent for it.
    Refunded,
    /// The brand's own sender would refuse the bill's message (an SMS through a DLT gateway
    /// without a DLT id for `digital_bill`): nothing was paid.
    Sender,
}

impl Skip {
    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::InvalidMobile => "invalid_mobile",
            Skip::Aggregator => "aggregator",
            Skip::Platform => "platform",
            Skip::Exists => "exists",
            Skip::NoConfig => "no_config",
            Skip::Disabled => "disabled",
            Skip::Wallet => "wallet",
            Skip::LinkService => "link_service",
            Skip::Refunded => "refunded",
            Skip::Sender => "sender",
        }
    }
}

/// A skipped order (table `bill_skips`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Skipped {
    /// The outlet.
    pub child_business_id: String,
    /// The order.
    pub order_id: String,
    /// Why.
    pub reason: Skip,
    /// When it was last tried.
    pub at: DateTime<Utc>,
}

/// One page of the generation job.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Generated {
    /// Queue records read.
    pub records: u64,
    /// Bills generated.
    pub generated: u64,
    /// Orders skipped, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Where the next page starts, when there is one.
    pub next: Option<String>,
}

/// `[6-9]\d{9}`, not sequential (each digit one more, or one less, than the one before, 9 and 0
/// adjacent: `6789012345`, `9876543210`), not one digit repeated.
pub fn mobile_ok(phone: &str) -> bool {
    let digits: Vec<u8> = phone.bytes().map(|b| b.wrapping_sub(b'0')).collect();
    if digits.len() != 10 || digits.iter().any(|d| *d > 9) || digits[0] < 6 {
        return false;
    }
    let steps: Vec<u8> = digits.windows(2).map(|w| (w[1] + 10 - w[0]) % 10).collect();
    !(steps.iter().all(|s| *s == 0) || steps.iter().all(|s| *s == 1) || steps.iter().all(|s| *s == 9))
}

/// The order's platform: its `platform` field (lower case), `pos` when absent (bills are for POS
/// orders).
pub fn order_platform(payload: &Value) -> String {
    payload.get("platform").and_then(Value::as_str).map(|p| p.trim().to_lowercase()).unwrap_or_else(|| "pos".into())
}

fn aggregator(payload: &Value) -> bool {
    order_platform(payload) == "aggregator"
        || match payload.get("aggregator") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(_) => true,
        }
}

fn number(payload: &Value, name: &str) -> Option<Decimal> {
    payload.get(name).and_then(decimal)
}

fn items(payload: &Value) -> Vec<BillItem> {
    let Some(lines) = payload.get("items").and_then(Value::as_array) else { return Vec::new() };
    lines
        .iter()
        .map(|line| {
            let qty = number(line, "qty").or_else(|| number(line, "quantity")).unwrap_or(Decimal::ONE);
            let price = number(line, "price").unwrap_or_default();
            let name = line.get("name").and_then(Value::as_str).unwrap_or("item").to_owned();
            BillItem { name, qty: qty.normalize(), price: price.normalize(), total: (qty * price).normalize() }
        })
        .collect()
}

/// The message: the template with `x_cust_name`, `x_order_id`, `x_amount`, `x_short_url` put in;
/// the link is appended when the template does not place it.
pub fn message(template: Option<&str>, bill: &Bill) -> String {
    let template = template
        .filter(|t| !t.trim().is_empty())
        .unwrap_or("Hi x_cust_name, thank you for your order x_order_id of Rs. x_amount. Your bill: x_short_url");
    let mut text = template
        .replace("x_cust_name", &bill.name)
        .replace("x_order_id", &bill.order_id)
        .replace("x_amount", &bill.order.amount.normalize().to_string());
    if text.contains("x_short_url") {
        text = text.replace("x_short_url", &bill.short_url);
    } else {
        text = format!("{} {}", text.trim_end(), bill.short_url);
    }
    text
}

/// An order that may get a bill.
pub struct Candidate<'a> {
    /// Its facts.
    pub facts: &'a OrderFacts,
    /// Its payload.
    pub payload: &'a Value,
    /// Its IST acceptance day (where a skip is remembered).
    pub day: String,
}

/// What [`generate`] did.
#[derive(Debug)]
pub enum Outcome {
    /// A bill, with its writes added (the caller writes them, then the wallet row is in them).
    Generated(Box<Bill>),
    /// No bill; the skip row is in the writes.
    Skipped(Skip),
}

/// The short link: the link service's when `ENGAGE_LINK_SERVICE_URL` is set, else engage's own.
async fn short_link(tenant: &Tenant, bill: &Bill, own: String) -> Result<(String, Option<String>), DeliveryError> {
    const WHAT: &str = "link service";
    let Some(url) = &tenant.ctx.services.link_service_url else { return Ok((own, None)) };
    let body = json!({"parent_business_id": bill.parent_business_id, "business_id": bill.child_business_id,
                      "order_id": bill.order_id, "bill_id": bill.bill_id, "long_url": own, "bill": bill});
    let response = tenant.ctx.services.http.post(url).json(&body).send().await;
    let response = response.map_err(|e| DeliveryError::Unreachable { what: WHAT, error: e.to_string() })?;
    if !response.status().is_success() {
        return Err(DeliveryError::Refused { what: WHAT, status: response.status().to_string() });
    }
    let answer: Value =
        response.json().await.map_err(|e| DeliveryError::BadAnswer { what: WHAT, error: format!("not JSON: {e}") })?;
    let short = answer["shortened_url"]
        .as_str()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| DeliveryError::BadAnswer { what: WHAT, error: "no shortened_url in the answer".to_owned() })?;
    let id = match &answer["bill_id"] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    Ok((short.to_owned(), id))
}

fn skip(
    tenant: &Tenant,
    candidate: &Candidate<'_>,
    reason: Skip,
    now: DateTime<Utc>,
    ops: &mut Vec<WriteOp>,
) -> Outcome {
    metrics::counter!("engage_bills_skipped_total", "reason" => reason.as_str()).increment(1);
    let row = Skipped {
        child_business_id: candidate.facts.business_id.clone(),
        order_id: candidate.facts.order_id.clone(),
        reason,
        at: now,
    };
    ops.push(keys::bill_skip(&tenant.id, &candidate.day, &row.child_business_id, &row.order_id).put(&row));
    Outcome::Skipped(reason)
}

/// Decides and, when it may, makes the bill of `candidate`: its writes, wallet row last, go into
/// `ops`.
pub async fn generate(
    tenant: &mut Tenant,
    candidate: &Candidate<'_>,
    customer: Option<&Customer>,
    now: DateTime<Utc>,
    ops: &mut Vec<WriteOp>,
) -> Result<Outcome, StoreError> {
    let facts = candidate.facts;
    if facts.void {
        return Ok(skip(tenant, candidate, Skip::Refunded, now, ops));
    }
    let all = configs(tenant).await?;
    let Some(config) = applicable(&all, &tenant.id, &facts.business_id).cloned() else {
        return Ok(skip(tenant, candidate, Skip::NoConfig, now, ops));
    };
    if config.status != 1 {
        return Ok(skip(tenant, candidate, Skip::Disabled, now, ops));
    }
    if !mobile_ok(&facts.phone) {
        return Ok(skip(tenant, candidate, Skip::InvalidMobile, now, ops));
    }
    if aggregator(candidate.payload) {
        return Ok(skip(tenant, candidate, Skip::Aggregator, now, ops));
    }
    let platform = order_platform(candidate.payload);
    if !config.bill_platform.is_empty() && !config.bill_platform.contains(&platform) {
        return Ok(skip(tenant, candidate, Skip::Platform, now, ops));
    }
    let services = tenant.ctx.services.clone();
    let bill_id = keys::digest(&[services.links.salt(), &tenant.id, &facts.business_id, &facts.order_id]);
    let send_id = format!("bill-{bill_id}");
    if committed(tenant, &facts.business_id, &send_id).await?.is_some() {
        return Ok(skip(tenant, candidate, Skip::Exists, now, ops));
    }
    let bill = make_bill(tenant, candidate, customer, &config, bill_id, send_id, platform, now).await?;
    let (short_url, link_id) = match short_link(tenant, &bill, services.links.page_url(&bill.bill_id)).await {
        Ok(link) => link,
        Err(error) => {
            tracing::warn!(tenant = %tenant.id, order_id = %facts.order_id, %error, "bill link not made; retried by the next generation run");
            return Ok(skip(tenant, candidate, Skip::LinkService, now, ops));
        }
    };
    let mut bill = bill;
    bill.short_url = short_url;
    bill.link_service_bill_id = link_id;
    let channel = if config.mode == 2 { Channel::Chat } else { Channel::Sms };
    let send = SendRequest {
        business: facts.business_id.clone(),
        channel,
        template_type: if channel == Channel::Chat { config.chat_template_type } else { TemplateType::Utility },
        purpose: Purpose::DigitalBill,
        to: facts.phone.clone(),
        message: message(
            if channel == Channel::Chat { config.chat_template.as_deref() } else { config.sms_template.as_deref() },
            &bill,
        ),
        send_id: bill.send_id.clone(),
        delivery_date: ist_day(bill.scheduled_at).replace('-', ""),
        auto_id: None,
        template_id: None,
        button: None,
        sender_id: config.sender_id.clone(),
        not_before: (bill.scheduled_at > now).then_some(bill.scheduled_at),
    };
    let mut purse = wallet(tenant, &facts.business_id).await?;
    let mut sends = Vec::new();
    match queue_send(tenant, &mut purse, &send, now, &mut sends).await {
        Ok(_) => {}
        Err(QueryError::Insufficient(_)) => return Ok(skip(tenant, candidate, Skip::Wallet, now, ops)),
        Err(QueryError::Unsendable(_)) => return Ok(skip(tenant, candidate, Skip::Sender, now, ops)),
        Err(error) => return Err(StoreError::Backend(error.to_string())),
    }
    let mut row = funnel(tenant, &ist_day(now), &facts.business_id).await?;
    row.total_bill_sent += 1;
    match channel {
        Channel::Chat => row.total_chat_sent += 1,
        _ => row.total_sms_sent += 1,
    }
    ops.push(keys::digital_bill(&tenant.id, &bill.bill_id).put(&bill));
    ops.push(keys::bill_code(&bill.bill_id).put(&json!({"tenant": tenant.id})));
    if let Some(alias) = &bill.link_service_bill_id {
        ops.push(keys::bill_alias(&tenant.id, alias).put(&json!({"bill_id": bill.bill_id})));
    }
    ops.push(put_funnel(tenant, row, now));
    ops.push(keys::bill_skip(&tenant.id, &candidate.day, &facts.business_id, &facts.order_id).delete());
    ops.extend(sends);
    ops.push(put_wallet(tenant, &facts.business_id, &purse));
    metrics::counter!("engage_bills_generated_total", "channel" => channel.queue()).increment(1);
    Ok(Outcome::Generated(Box::new(bill)))
}

#[allow(clippy::too_many_arguments)]
async fn make_bill(
    tenant: &mut Tenant,
    candidate: &Candidate<'_>,
    customer: Option<&Customer>,
    config: &LinkConfig,
    bill_id: String,
    send_id: String,
    platform: String,
    now: DateTime<Utc>,
) -> Result<Bill, StoreError> {
    let (facts, payload) = (candidate.facts, candidate.payload);
    let items = items(payload);
    let line_total: Decimal = items.iter().map(|i| i.total).sum();
    let subtotal = number(payload, "subtotal").unwrap_or(if items.is_empty() { facts.amount } else { line_total });
    let points = match customer {
        Some(customer) => {
            crate::capabilities::orders::contribution(tenant, customer, &facts.business_id, &facts.order_id)
                .await?
                .map_or(0, |c| c.points)
        }
        None => 0,
    };
    let scheduled_at = now + Duration::minutes(config.time.max(0));
    let expires_at = (config.link_validity > 0).then(|| scheduled_at + Duration::days(config.link_validity));
    let form_expiry = expires_at.unwrap_or(scheduled_at + Duration::days(crate::signed_links::LINK_VALIDITY_DAYS));
    let form = FormClaims {
        scope: "feedback_form".to_owned(),
        tenant: tenant.id.clone(),
        business_id: facts.business_id.clone(),
        phone: facts.phone.clone(),
        order_id: facts.order_id.clone(),
        bill_id: bill_id.clone(),
        exp: form_expiry.timestamp(),
    };
    let feedback_url = tenant.ctx.services.links.form_url(&form).map_err(|e| StoreError::Backend(e.to_string()))?;
    let widgets = widgets_for(tenant, &facts.business_id)
        .await
        .map_err(|e| StoreError::Backend(e.to_string()))?
        .into_iter()
        .map(|w| BillWidget {
            widget_id: w.widget_id,
            kind: widget_kind(w.widget_id).map_or("unknown", |k| k.kind).to_owned(),
            title: w.title,
            value: w.value,
            static_banner_link: w.static_banner_link,
            clicks: 0,
            watch_time: 0,
        })
        .collect();
    let name = customer.and_then(|c| c.name.clone()).or_else(|| facts.name.clone()).unwrap_or_default();
    Ok(Bill {
        bill_id,
        name,
        number: facts.phone.clone(),
        order_id: facts.order_id.clone(),
        sent_at: now,
        scheduled_at,
        mode: config.mode,
        short_url: String::new(),
        clicked: 0,
        download_flag: 0,
        sent_count: 1,
        delivered: 0,
        read_count: 0,
        message_error: None,
        widgets,
        roi_calculated: 0,
        order_source: platform,
        parent_business_id: tenant.id.clone(),
        child_business_id: facts.business_id.clone(),
        order: BillOrder {
            subtotal: subtotal.normalize(),
            tax: number(payload, "tax").unwrap_or_default().normalize(),
            discount: number(payload, "discount").unwrap_or_default().normalize(),
            amount: facts.amount.normalize(),
            loyalty_points: points,
            order_time: facts.order_time.clone(),
        },
        items,
        feedback_url,
        feedback_opens: 0,
        link_service_bill_id: None,
        // an order that arrives with part of it returned: its bill shows what was given back
        refund: (facts.refunded > Decimal::ZERO)
            .then_some(super::rows::BillRefund { amount: facts.refunded, whole: facts.void }),
        brand_color: if config.brand_color.is_empty() { "#1f6feb".to_owned() } else { config.brand_color.clone() },
        footer_button: (config.enable_footer == 1 && !config.footer_button.is_empty())
            .then(|| config.footer_button.clone()),
        expires_at,
        send_id,
    })
}

/// The order reaction: a new or updated pos_a order of a brand with a bill configuration gets its
/// bill in the order's own batch, and its queue record status 3. An order the reaction skips is
/// tried again by the next generation run.
pub struct GenerateBill;

#[async_trait]
impl OrderReaction for GenerateBill {
    fn name(&self) -> &'static str {
        "digital_bill"
    }

    async fn react(
        &self,
        tenant: &mut Tenant,
        order: &OrderEvent<'_>,
        customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        if order.envelope.source_id != BILL_SOURCE || !matches!(order.applied, Applied::New | Applied::Updated) {
            return Ok(());
        }
        if configs(tenant).await?.is_empty() {
            return Ok(());
        }
        // a refund of a billed order: no new bill; a bill sent before shows what was given back
        // (an order that arrives with part of it returned is still a sale, and billed)
        if order.facts.void || (order.facts.has_refund() && order.applied == Applied::Updated) {
            return mark_refunded(tenant, order.facts, ops).await;
        }
        let candidate =
            Candidate { facts: order.facts, payload: &order.envelope.payload, day: ist_day(order.received) };
        if let Outcome::Generated(_) = generate(tenant, &candidate, Some(customer), Utc::now(), ops).await? {
            order.queue_status.store(STATUS_BILL_GENERATED, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }
}

/// The bill of a refunded order, when one was sent, records the refund: its page says so.
async fn mark_refunded(
    tenant: &mut Tenant,
    facts: &crate::domain::order::OrderFacts,
    ops: &mut Vec<WriteOp>,
) -> Result<(), StoreError> {
    let salt = tenant.ctx.services.links.salt().to_owned();
    let bill_id = keys::digest(&[&salt, &tenant.id, &facts.business_id, &facts.order_id]);
    let key = keys::digital_bill(&tenant.id, &bill_id);
    if let Some(mut bill) = tenant.repo().get::<Bill>(&key).await? {
        bill.refund = Some(super::rows::BillRefund { amount: facts.refunded, whole: facts.void });
        if facts.void {
            // a bill SMS or chat still waiting for its delay is not sent for a sale that did not
            // happen
            let day = ist_day(bill.scheduled_at).replace('-', "");
            cancel_queued(tenant, &bill.send_id, &day, "the order was cancelled or refunded as a whole", ops).await?;
        }
        ops.push(key.put(&bill));
    }
    Ok(())
}

/// One page of the generation job: up to [`GENERATION_BATCH`] queue records of IST day `day`
/// after `after`; each order record with status 1 and source 2 is generated (or skipped), and a
/// generated one (or one whose bill exists) moves to status 3. One batch per bill. A page stops
/// after [`GENERATION_SLICE`] and answers `next` at the last record it handled (`records` counts
/// the records handled), so the job's next question goes on from there.
pub async fn page(
    tenant: &mut Tenant,
    now: DateTime<Utc>,
    day: &str,
    after: Option<String>,
) -> Result<Generated, QueryError> {
    let partition = crate::keys::queue_partition(&tenant.id, day);
    let rows = tenant
        .repo()
        .store()
        .scan(CRM_QUEUE, &partition, after.as_ref().map(|a| a.as_bytes()), GENERATION_BATCH)
        .await?;
    let mut done = Generated { records: rows.len() as u64, ..Generated::default() };
    if rows.len() == GENERATION_BATCH {
        done.next = rows.last().map(|r| String::from_utf8_lossy(&r.clustering).into_owned());
    }
    if configs(tenant).await?.is_empty() {
        return Ok(done);
    }
    let started = std::time::Instant::now();
    for (handled, row) in rows.iter().enumerate() {
        if handled > 0 && started.elapsed() >= GENERATION_SLICE {
            done.records = handled as u64;
            done.next = Some(String::from_utf8_lossy(&rows[handled - 1].clustering).into_owned());
            break;
        }
        let Ok(mut record) = serde_json::from_slice::<QueueRecord>(&row.value) else { continue };
        if record.status != STATUS_PROCESSED || record.source != BILL_SOURCE || record.kind != "order" {
            continue;
        }
        let Ok(recorded) = OrderFacts::from_payload(&record.data) else { continue };
        if recorded.is_cart() {
            continue;
        }
        // the order as it is now, not as this record has it: a later copy, a cancellation or a
        // refund since then decides (a cancelled order is skipped as refunded)
        let order: Option<Value> =
            tenant.repo().get(&keys::order(&tenant.id, &recorded.business_id, &recorded.order_id)).await?;
        let payload = order.and_then(|mut row| row.get_mut("payload").map(Value::take)).unwrap_or(record.data.clone());
        let Ok(facts) = OrderFacts::from_payload(&payload) else { continue };
        if facts.is_cart() {
            continue;
        }
        let customer = tenant.customer(&facts.phone).await?;
        let candidate = Candidate { facts: &facts, payload: &payload, day: day.to_owned() };
        let mut ops = Vec::new();
        let outcome = generate(tenant, &candidate, customer.as_ref(), now, &mut ops).await?;
        match outcome {
            Outcome::Generated(_) | Outcome::Skipped(super::Skip::Exists) => {
                if matches!(outcome, Outcome::Generated(_)) {
                    done.generated += 1;
                } else {
                    *done.skipped.entry(super::Skip::Exists.as_str().to_owned()).or_default() += 1;
                }
                // after the wallet row: a record at status 3 always has its bill committed
                record.status = STATUS_BILL_GENERATED;
                ops.push(crate::repo::Repo::put_json(CRM_QUEUE, partition.clone(), &row.clustering, &record));
            }
            Outcome::Skipped(reason) => *done.skipped.entry(reason.as_str().to_owned()).or_default() += 1,
        }
        tenant.batch(ops).await?;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mobiles_are_checked_as_the_spec_says() {
        for good in ["9876501234", "6000000001", "7123456780", "8899001122"] {
            assert!(mobile_ok(good), "{good}");
        }
        for bad in ["9876543210", "6789012345", "7777777777", "5123456789", "98765", "98765432101", "98765x3210"] {
            assert!(!mobile_ok(bad), "{bad}");
        }
    }
}
