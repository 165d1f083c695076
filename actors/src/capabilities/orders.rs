//! Orders and the other bus events: [`apply`] writes the queue record, upserts the customer and the
//! order, runs the order reactions, and commits it all in one batch (customer row last). Before
//! the reactions run, the customer's row and every row they name ([`crate::reaction::OrderReaction::reads`])
//! are read together ([`Tenant::read_ahead`]): one round trip on NATS KV instead of one per row.

use chrono::Utc;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use engage_storage::{StoreError, WriteOp};
use engage_streams::{Envelope, EventKind};

use super::referral::refer;
use crate::capabilities::journeys::{OpenCart, CART_SOURCES};
use crate::domain::customer::{Contribution, Customer};
use crate::domain::order::{copy_version, OrderFacts, RefundRequest};
use crate::domain::time::{ist_day, ist_timestamp, parse_instant};
use crate::keys;
use crate::query::question;
use crate::reaction::{OrderEvent, Reactions};
use crate::repo::{QueueRecord, STATUS_PROCESSED, STATUS_UNPROCESSABLE};
use crate::tenant_core::Tenant;

async fn merge_business(tenant: &Tenant, business_id: &str, patch: Value) -> Result<WriteOp, StoreError> {
    let key = keys::business(&tenant.id, business_id);
    let mut row: Value = tenant.repo().get(&key).await?.unwrap_or_else(|| json!({}));
    if let (Some(row), Value::Object(patch)) = (row.as_object_mut(), patch) {
        row.extend(patch);
    }
    Ok(key.put(&row))
}

/// The field of an order's row that keeps what the customer's totals counted for it (a
/// [`Contribution`]), so a refund of an order the customer's row no longer keeps takes back
/// exactly that.
pub(crate) const COUNTED: &str = "counted";

/// What the order's own row says the customer `phone` counted for the order, when the row is
/// that customer's (rows written before [`COUNTED`] existed: read from the payload it holds).
async fn counted(
    tenant: &Tenant,
    business_id: &str,
    order_id: &str,
    phone: &str,
) -> Result<Option<Contribution>, StoreError> {
    let row: Option<Value> = tenant.get(&keys::order(&tenant.id, business_id, order_id)).await?;
    let Some(row) = row else { return Ok(None) };
    let payload = row.get("payload").cloned().unwrap_or_default();
    let Ok(stored) = OrderFacts::from_payload(&payload) else { return Ok(None) };
    if stored.phone != phone {
        return Ok(None);
    }
    if let Some(counted) = row.get(COUNTED).and_then(|c| serde_json::from_value::<Contribution>(c.clone()).ok()) {
        return Ok(Some(counted));
    }
    Ok(Some(Contribution {
        amount: stored.net(),
        version: row.get("version").and_then(Value::as_str).unwrap_or_default().to_owned(),
        order_time: stored.order_time.clone(),
        points: 0,
        void: stored.void,
        refunded: stored.refunded,
    }))
}

/// What `customer`'s totals count for the order `business_id`/`order_id`: the row's kept
/// contribution, or for an order older than the kept ones ([`crate::domain::customer::MAX_KEPT_ORDERS`]) what the
/// order's own row says it counted. `None`: not an order of this customer.
pub async fn contribution(
    tenant: &Tenant,
    customer: &Customer,
    business_id: &str,
    order_id: &str,
) -> Result<Option<Contribution>, StoreError> {
    if let Some(kept) = customer.orders.get(&format!("{business_id}/{order_id}")) {
        return Ok(Some(kept.clone()));
    }
    match customer.has_folded() {
        true => counted(tenant, business_id, order_id, &customer.phone).await,
        false => Ok(None),
    }
}

/// What applying `facts` reads besides the customer's rows: every reaction's rows and the
/// order's refunds sent on their own.
fn order_reads(tenant: &str, reactions: &Reactions, facts: &OrderFacts) -> Vec<keys::Key> {
    let mut reads: Vec<keys::Key> = reactions.iter().flat_map(|r| r.reads(tenant, facts)).collect();
    reads.push(keys::order_refunds(tenant, &facts.business_id, &facts.order_id));
    reads
}

/// The rows applying `envelope` may read, for the engine to read ahead of the actor, with the
/// other deliveries of its batch ([`crate::read_ahead`]): for an order, [`order_reads`], the
/// customer's row and the order's own row (the actor takes what it needs; a row it has cached
/// or written since is not used). Nothing for other events.
pub fn reads_ahead(tenant: &str, reactions: &Reactions, envelope: &Envelope) -> Vec<keys::Key> {
    if envelope.kind != EventKind::Order {
        return Vec::new();
    }
    match OrderFacts::from_payload(&envelope.payload) {
        Ok(facts) if !facts.is_cart() => {
            let mut reads = order_reads(tenant, reactions, &facts);
            reads.push(keys::customer(tenant, &facts.phone));
            reads.push(keys::order(tenant, &facts.business_id, &facts.order_id));
            reads
        }
        _ => Vec::new(),
    }
}

/// Applies an order: the customer's totals, then every order reaction, then the order row.
#[allow(clippy::too_many_arguments)]
async fn apply_order(
    tenant: &mut Tenant,
    reactions: &Reactions,
    envelope: &Envelope,
    facts: &OrderFacts,
    version: &str,
    refund: bool,
    ops: &mut Vec<WriteOp>,
    status: &mut u8,
) -> Result<Customer, StoreError> {
    #[cfg(feature = "fault-injection")]
    let ctx = tenant.ctx.clone();
    #[cfg(feature = "fault-injection")]
    if ctx.fault_panic_order_id.as_deref() == Some(facts.order_id.as_str())
        && !ctx.fault_fired.swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        panic!("injected fault: ENGAGE_FAULT_PANIC_ORDER_ID={}", facts.order_id);
    }
    #[cfg(feature = "fault-injection")]
    if ctx.fault_poison_order_id.as_deref() == Some(facts.order_id.as_str()) {
        panic!("injected poison: ENGAGE_FAULT_POISON_ORDER_ID={}", facts.order_id);
    }
    let now = Utc::now();
    let received = parse_instant(&envelope.received_at).unwrap_or(now);
    // the customer's row (unless cached), the order's refunds sent on their own, and every row a
    // reaction will read, in one go
    let refunds_key = keys::order_refunds(&tenant.id, &facts.business_id, &facts.order_id);
    let mut reads = order_reads(&tenant.id, reactions, facts);
    if !tenant.has_cached_customer(&facts.phone) {
        reads.push(keys::customer(&tenant.id, &facts.phone));
    }
    // a regular's order the row may not keep: its own row, in the same round trip
    if tenant.cached_customer_folded(&facts.phone).unwrap_or(true) {
        reads.push(keys::order(&tenant.id, &facts.business_id, &facts.order_id));
    }
    tenant.read_ahead(reads).await?;
    let recorded: Option<serde_json::Map<String, Value>> = tenant.get(&refunds_key).await?;
    // the copy with every refund recorded for it: what the order now is (kept in its row, where
    // the bill job and a later refund read it)
    let merged = recorded.filter(|r| !r.is_empty()).and_then(|recorded| {
        let mut payload = envelope.payload.clone();
        let fields = payload.as_object_mut()?;
        // the refunds the payload names already (a refund being applied now) and the recorded ones
        let mut refunds = fields.get("refunds").and_then(Value::as_object).cloned().unwrap_or_default();
        for (id, amount) in recorded {
            refunds.entry(id).or_insert(amount);
        }
        fields.insert("refunds".to_owned(), Value::Object(refunds));
        let facts = OrderFacts::from_payload(&payload).ok()?;
        Some((facts, payload))
    });
    let facts = merged.as_ref().map_or(facts, |(facts, _)| facts);
    let mut customer = tenant.customer_or_new(&facts.phone, now).await?;
    // an order older than the ones the row keeps: what its own row says it counted
    let stored = match customer.orders.contains_key(&facts.key()) {
        true => None,
        false => contribution(tenant, &customer, &facts.business_id, &facts.order_id).await?,
    };
    let before = customer.orders.get(&facts.key()).cloned().or_else(|| stored.clone());
    // a refund re-applies the copy that counts: the customer's row may know it by a newer
    // version than the order's row (a newer copy of the same content changes only the former)
    let kept = before.as_ref().map(|c| c.version.as_str()).filter(|kept| refund && *kept > version);
    let version = kept.unwrap_or(version).to_owned();
    let version = version.as_str();
    // a row written before `customer_orders`: its kept orders are listed before any is folded
    if !customer.orders_indexed {
        ops.extend(
            customer.orders.keys().map(|key| keys::customer_order(&tenant.id, &facts.phone, key).put(&json!({}))),
        );
        customer.orders_indexed = true;
    }
    let applied = customer.apply_copy(facts, version, stored);
    let event = OrderEvent {
        facts,
        envelope,
        received,
        applied,
        before,
        queue_status: STATUS_PROCESSED.into(),
        order_row: Default::default(),
    };
    for reaction in reactions.iter() {
        reaction.react(tenant, &event, &mut customer, ops).await?;
    }
    if event.changed() {
        let mut row = event.order_row.lock().map(|mut fields| std::mem::take(&mut *fields)).unwrap_or_default();
        let payload = merged.as_ref().map_or_else(|| envelope.payload.clone(), |(_, payload)| payload.clone());
        row.insert("payload".to_owned(), payload);
        row.insert("version".to_owned(), json!(version));
        if let Some(counted) = customer.orders.get(&facts.key()) {
            row.insert(COUNTED.to_owned(), json!(counted));
        }
        row.insert("amount".to_owned(), json!(facts.amount));
        row.insert("source".to_owned(), json!(envelope.source_id));
        ops.push(keys::order(&tenant.id, &facts.business_id, &facts.order_id).put(&row));
        if applied == crate::domain::customer::Applied::New {
            ops.push(keys::customer_order(&tenant.id, &facts.phone, &facts.key()).put(&json!({})));
        }
    }
    // its reactions have run and its row recorded what it counted: an order older than every
    // kept one is folded only now
    customer.fold_kept();
    metrics::counter!("engage_orders_applied_total", "outcome" => applied.label()).increment(1);
    *status = event.queue_status.load(std::sync::atomic::Ordering::Relaxed);
    if envelope.api_source.as_deref() == Some("lambda") {
        ops.push(merge_business(tenant, &facts.business_id, json!({"last_order_hit": envelope.received_at})).await?);
    }
    Ok(customer)
}

/// Records a refund sent on its own, by its id (the same id again changes nothing), and applies
/// the order again with it when the order is known (its stored payload, as a newer version); an
/// order not seen yet takes it when it arrives.
async fn apply_refund(
    tenant: &mut Tenant,
    reactions: &Reactions,
    envelope: &Envelope,
    request: &RefundRequest,
    version: &str,
    ops: &mut Vec<WriteOp>,
    status: &mut u8,
) -> Result<Option<Customer>, StoreError> {
    let key = keys::order_refunds(&tenant.id, &request.business_id, &request.order_id);
    let mut refunds: serde_json::Map<String, Value> = tenant.get(&key).await?.unwrap_or_default();
    if refunds.contains_key(&request.refund_id) {
        return Ok(None);
    }
    refunds.insert(request.refund_id.clone(), request.amount.clone());
    ops.push(key.put(&refunds));
    let row: Option<Value> = tenant.get(&keys::order(&tenant.id, &request.business_id, &request.order_id)).await?;
    let row_source = row.as_ref().and_then(|r| r["source"].as_u64()).and_then(|s| u8::try_from(s).ok());
    let copy = row.as_ref().and_then(|r| r["version"].as_str()).map(str::to_owned);
    let Some(mut order_payload) = row.and_then(|mut row| row.get_mut("payload").map(Value::take)) else {
        return Ok(None);
    };
    if let Some(payload) = order_payload.as_object_mut() {
        payload.insert("refunds".to_owned(), Value::Object(refunds));
    }
    let Ok(facts) = OrderFacts::from_payload(&order_payload) else { return Ok(None) };
    // the order keeps its own source (a bill, the stats' source figures)
    let source_id = row_source.unwrap_or(envelope.source_id);
    let order = Envelope { kind: EventKind::Order, payload: order_payload, source_id, ..envelope.clone() };
    // The order's copy keeps its rank: a refund adds to whichever copy counts, it does not make
    // the stored copy newer than a later one (refunds only add, so their order does not matter).
    let version = copy.unwrap_or_else(|| version.to_owned());
    apply_order(tenant, reactions, &order, &facts, &version, true, ops, status).await.map(Some)
}

/// A cart (`status` 0): the customer is known (a new one is created) but nothing is counted; a
/// cart that may be abandoned (total over 1, placed in an app or on the website) is indexed for
/// the `abandoned_cart` job, keyed by brand and order, so a later copy of the cart replaces its
/// time. A cart whose order was paid already is ignored.
async fn open_cart(
    tenant: &mut Tenant,
    facts: &OrderFacts,
    received: chrono::DateTime<Utc>,
    ops: &mut Vec<WriteOp>,
) -> Result<Customer, StoreError> {
    let mut customer = tenant.customer_or_new(&facts.phone, received).await?;
    if let Some(name) = &facts.name {
        customer.name = Some(name.clone());
    }
    let abandonable = facts.amount > rust_decimal::Decimal::ONE
        && facts.os.as_deref().is_some_and(|os| CART_SOURCES.contains(&os))
        && customer.orders.get(&facts.key()).is_none_or(|c| c.void);
    if abandonable {
        let cart = OpenCart {
            tenant: tenant.id.clone(),
            phone: facts.phone.clone(),
            business_id: facts.business_id.clone(),
            order_id: facts.order_id.clone(),
            amount: facts.amount,
            updated_at: received,
        };
        ops.push(cart.key().put(&cart));
        ops.push(keys::cart_tenant(&tenant.id).put(&serde_json::json!({})));
    }
    metrics::counter!("engage_orders_applied_total", "outcome" => "cart").increment(1);
    Ok(customer)
}

/// Applies one envelope; returns the phone of the customer it touched (if any), whose row is
/// then in the brand's cache. An event that cannot be processed is kept as a queue record with
/// status 2 (not retried).
///
/// `position` is where the bus accepted it ([`engage_streams::Delivery::rank`]): copies of one
/// order are ranked by it ([`copy_version`]), so the last copy the ingress accepted wins.
pub async fn apply(
    tenant: &mut Tenant,
    reactions: &Reactions,
    envelope: &Envelope,
    position: u64,
) -> Result<Option<String>, StoreError> {
    let now = Utc::now();
    let received = parse_instant(&envelope.received_at).unwrap_or(now);
    metrics::histogram!("engage_processing_lag_seconds")
        .record((now - received).num_milliseconds().max(0) as f64 / 1000.0);
    let version = copy_version(position, &envelope.received_at);
    let text = |name: &str| envelope.payload.get(name).and_then(Value::as_str).map(str::to_owned);
    // a customer's number in the form the brand's rows key it by, whatever form it came in
    let phone_of = |name: &str| text(name).map(|given| crate::domain::phone::canonical(&given));
    let mut ops = Vec::new();
    let mut touched: Option<Customer> = None;
    let mut error = None;
    let mut status = STATUS_PROCESSED;

    match envelope.kind {
        EventKind::Order => match OrderFacts::from_payload(&envelope.payload) {
            Ok(facts) if facts.is_cart() => touched = Some(open_cart(tenant, &facts, received, &mut ops).await?),
            Ok(facts) => {
                let applied =
                    apply_order(tenant, reactions, envelope, &facts, &version, false, &mut ops, &mut status).await;
                // the rows read ahead serve this order only, applied or not
                tenant.end_read_ahead();
                touched = Some(applied?);
            }
            Err(not_an_order) => error = Some(not_an_order.to_string()),
        },
        EventKind::Refund => match RefundRequest::from_payload(&envelope.payload) {
            Ok(request) => {
                let applied =
                    apply_refund(tenant, reactions, envelope, &request, &version, &mut ops, &mut status).await;
                tenant.end_read_ahead();
                touched = applied?;
            }
            Err(not_a_refund) => error = Some(not_a_refund.to_string()),
        },
        EventKind::Customer => match phone_of("phone") {
            Some(phone) => {
                let mut customer = tenant.customer_or_new(&phone, now).await?;
                for (field, slot) in [
                    ("name", &mut customer.name),
                    ("email", &mut customer.email),
                    ("gender", &mut customer.gender),
                    ("dob", &mut customer.dob),
                    ("anniversary", &mut customer.anniversary),
                ] {
                    if let Some(value) = text(field) {
                        *slot = Some(value);
                    }
                }
                if let Some(referrer) = phone_of("referrer_number") {
                    refer(tenant, &mut customer, &referrer).await?;
                }
                // the outlet that first created them is theirs until they order
                if customer.created_at_outlet.is_none() {
                    customer.created_at_outlet = text("businessId").filter(|b| !b.is_empty());
                }
                touched = Some(customer);
            }
            None => error = Some("phone missing".to_owned()),
        },
        EventKind::PushToken => match (phone_of("phone"), text("fcm_token")) {
            (Some(phone), Some(token)) => {
                let mut customer = tenant.customer_or_new(&phone, now).await?;
                if !customer.push_tokens.contains(&token) {
                    customer.push_tokens.push(token);
                }
                touched = Some(customer);
            }
            _ => error = Some("phone or fcm_token missing".to_owned()),
        },
        EventKind::Checkin => match phone_of("phone") {
            Some(phone) => {
                ops.push(keys::checkin(&tenant.id, &phone, &envelope.id).put(&envelope.payload));
                let mut customer = tenant.customer_or_new(&phone, now).await?;
                customer.last_checkin = parse_instant(&envelope.received_at).or(Some(now));
                touched = Some(customer);
            }
            None => error = Some("phone missing".to_owned()),
        },
        EventKind::BusinessStatus | EventKind::MerchantData | EventKind::CrmToken => match text("businessId") {
            Some(business_id) => {
                let patch = match envelope.kind {
                    EventKind::BusinessStatus => {
                        json!({"status": envelope.payload.get("status"), "status_updated_at": envelope.received_at})
                    }
                    EventKind::MerchantData => {
                        json!({"merchant": envelope.payload, "merchant_updated_at": envelope.received_at})
                    }
                    _ => {
                        json!({"crm_token": envelope.payload.get("token"), "crm_token_updated_at": envelope.received_at})
                    }
                };
                ops.push(merge_business(tenant, &business_id, patch).await?);
            }
            None => error = Some("businessId missing".to_owned()),
        },
    }

    let record = QueueRecord {
        data: &envelope.payload,
        source: envelope.source_id,
        inserted_at: ist_timestamp(received),
        status: if error.is_some() { STATUS_UNPROCESSABLE } else { status },
        api_source: envelope.api_source.clone(),
        id: envelope.id.clone(),
        kind: serde_json::to_value(envelope.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(),
        error: error.clone(),
    };
    if let Some(error) = &error {
        tracing::warn!(tenant = %tenant.id, id = %envelope.id, trace_id = %envelope.trace_id, error, "unprocessable event kept with status 2");
    }
    ops.push(keys::queue_record(&tenant.id, &ist_day(received), &envelope.received_at, &envelope.id).put(&record));
    // The customer row last: it holds the totals, and on a store without multi-row atomicity a
    // crash before it leaves the event to be applied again on redelivery.
    // (moved, not copied: the bus path never looks at it again; issue 13)
    match touched {
        Some(customer) => {
            let phone = customer.phone.clone();
            tenant.commit_customer(ops, customer).await?;
            Ok(Some(phone))
        }
        None => {
            tenant.batch(ops).await?;
            Ok(None)
        }
    }
}

question! {
    /// The order row of `order_id` at `business_id` as kept (the merged copy that counts, under
    /// `payload`), when the brand has it.
    pub struct GetOrder {
        /// The outlet.
        pub business_id: String,
        /// The order.
        pub order_id: String,
    } -> Option<serde_json::Value>;
}

/// The row of an order, when kept.
pub async fn order_row(
    tenant: &Tenant,
    question: GetOrder,
) -> Result<Option<serde_json::Value>, crate::query::QueryError> {
    Ok(tenant.repo().get(&keys::order(&tenant.id, &question.business_id, &question.order_id)).await?)
}

question! {
    /// Refunds sent on their own (`/integration/v1/order/refund`) whose order has not arrived,
    /// by outlet and order id, a page at a time: [`WaitingPage`].
    pub struct WaitingRefunds {
        /// Only this outlet's.
        #[serde(default)]
        pub business: Option<String>,
        /// Go on after this cursor (`next` of the page before).
        #[serde(default)]
        pub after: Option<String>,
        /// At most this many refunds' orders.
        pub limit: usize,
    } -> WaitingPage;
}

/// One order that refunds wait for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WaitingRefund {
    /// The outlet.
    pub business_id: String,
    /// The order they refund.
    pub order_id: String,
    /// Each refund by its id: an amount (a decimal string), or `"whole"`.
    pub refunds: std::collections::BTreeMap<String, String>,
}

/// A page of [`WaitingRefund`]s.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WaitingPage {
    /// The orders refunds wait for, by outlet and order id.
    pub data: Vec<WaitingRefund>,
    /// The cursor of the next page (`after`), when there may be more.
    pub next: Option<String>,
}

/// Rows of `order_refunds` one [`waiting_refunds`] page reads at most.
const WAITING_SCAN: usize = 2000;

/// The refunds recorded for orders that have not arrived (no order row), in key order, after
/// `after` (a hex cursor), at most `limit` orders. A page stops after reading [`WAITING_SCAN`]
/// rows and answers `next`, so a brand with many refunds is read a page at a time.
pub async fn waiting_refunds(
    tenant: &mut Tenant,
    question: WaitingRefunds,
) -> Result<WaitingPage, crate::query::QueryError> {
    let mut page = WaitingPage::default();
    let mut after = match &question.after {
        Some(cursor) => Some(hex::decode(cursor).map_err(|_| {
            crate::query::QueryError::Invalid(format!("after {cursor:?} is not a cursor of this list"))
        })?),
        None => None,
    };
    let limit = question.limit.clamp(1, 500);
    let mut read = 0;
    loop {
        let rows = tenant.repo().store().scan(crate::tables::ORDER_REFUNDS, &tenant.id, after.as_deref(), 500).await?;
        let Some(last) = rows.last() else { return Ok(page) };
        after = Some(last.clustering.clone());
        let full = rows.len() == 500;
        for row in rows {
            read += 1;
            let parts = keys::split(&String::from_utf8_lossy(&row.clustering));
            let Ok([business_id, order_id]) = <[String; 2]>::try_from(parts) else { continue };
            if question.business.as_ref().is_some_and(|b| *b != business_id) {
                continue;
            }
            let recorded: serde_json::Map<String, Value> = serde_json::from_slice(&row.value).unwrap_or_default();
            if recorded.is_empty()
                || tenant.repo().get::<Value>(&keys::order(&tenant.id, &business_id, &order_id)).await?.is_some()
            {
                continue;
            }
            let refunds = recorded
                .into_iter()
                .map(|(id, amount)| (id, amount.as_str().map_or_else(|| amount.to_string(), str::to_owned)))
                .collect();
            page.data.push(WaitingRefund { business_id, order_id, refunds });
            if page.data.len() >= limit || read >= WAITING_SCAN {
                page.next = Some(hex::encode(&row.clustering));
                return Ok(page);
            }
        }
        if !full {
            return Ok(page);
        }
    }
}
