//! `TenantActor`: one per brand (`parent_business_id`); every write for the brand goes through it,
//! one message at a time, so no balance or total can be updated concurrently.
//!
//! Messages ([`TenantMsg`]): `Apply` an envelope from the bus (answers after its effects are
//! stored: the engine acks only then), or a synchronous [`TenantQuery`]. The actor caches the
//! customers it touched; a restarted actor starts empty and reloads rows from the store.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use engage_storage::{StoreError, WriteOp};
use engage_streams::{Envelope, EventKind};

use crate::domain::customer::{Applied, Customer};
use crate::domain::order::OrderFacts;
use crate::domain::time::{ist_day, ist_timestamp};
use crate::repo::{QueueRecord, Repo, BUSINESSES, CHECKINS, CRM_QUEUE, ORDERS, STATUS_PROCESSED, STATUS_UNPROCESSABLE};

/// What every tenant actor shares.
pub struct EngineContext {
    /// Typed store access.
    pub repo: Repo,
    /// Testing only: panic once on this order id (`ENGAGE_FAULT_PANIC_ORDER_ID`).
    pub fault_panic_order_id: Option<String>,
    /// Whether the fault fired already (once per process).
    pub fault_fired: AtomicBool,
}

/// A synchronous question or command for a tenant.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum TenantQuery {
    /// `get/customer/details`.
    CustomerDetails {
        /// Customer phone.
        phone: String,
    },
    /// `update/customer/details`.
    UpdateCustomer {
        /// Customer phone.
        phone: String,
        /// New name.
        name: Option<String>,
        /// New email.
        email: Option<String>,
        /// New gender.
        gender: Option<String>,
        /// New date of birth.
        dob: Option<String>,
    },
    /// Process an envelope now and answer with the customer (instant orders). Idempotent with
    /// the bus delivery of the same envelope.
    ApplyNow {
        /// The envelope, already published.
        envelope: Envelope,
    },
}

/// Why a query failed.
#[derive(Clone, Debug, Serialize, Deserialize, thiserror::Error, PartialEq, Eq)]
pub enum QueryError {
    /// No such customer.
    #[error("not found")]
    NotFound,
    /// The tenant cannot answer now (restarting, not owned here, time-out).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The request cannot be processed.
    #[error("invalid: {0}")]
    Invalid(String),
    /// The store failed.
    #[error("failed: {0}")]
    Failed(String),
}

/// Answer to a query.
pub type QueryReply = Result<Value, QueryError>;

/// Messages of [`TenantActor`].
pub enum TenantMsg {
    /// Apply a bus delivery; `Ok` once its effects are stored.
    Apply {
        /// The envelope.
        envelope: Envelope,
        /// Where the outcome goes.
        reply: RpcReplyPort<Result<(), String>>,
    },
    /// Answer a query.
    Query {
        /// The query.
        query: TenantQuery,
        /// Where the answer goes.
        reply: RpcReplyPort<QueryReply>,
    },
}

impl TenantMsg {
    /// Answers the message with an error without processing it.
    pub fn refuse(self, reason: &str) {
        match self {
            TenantMsg::Apply { reply, .. } => {
                let _ = reply.send(Err(reason.to_owned()));
            }
            TenantMsg::Query { reply, .. } => {
                let _ = reply.send(Err(QueryError::Unavailable(reason.to_owned())));
            }
        }
    }
}

/// The actor (stateless handler; state is [`TenantState`]).
pub struct TenantActor;

/// Start-up arguments.
pub struct TenantArgs {
    /// The brand.
    pub tenant: String,
    /// Shared context.
    pub ctx: Arc<EngineContext>,
}

/// State of one tenant actor.
pub struct TenantState {
    tenant: String,
    ctx: Arc<EngineContext>,
    customers: HashMap<String, Customer>,
}

impl Actor for TenantActor {
    type Msg = TenantMsg;
    type State = TenantState;
    type Arguments = TenantArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: TenantArgs,
    ) -> Result<TenantState, ActorProcessingErr> {
        metrics::gauge!("engage_tenant_actors").increment(1.0);
        Ok(TenantState { tenant: args.tenant, ctx: args.ctx, customers: HashMap::new() })
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        _state: &mut TenantState,
    ) -> Result<(), ActorProcessingErr> {
        metrics::gauge!("engage_tenant_actors").decrement(1.0);
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: TenantMsg,
        state: &mut TenantState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            TenantMsg::Apply { envelope, reply } => {
                let outcome = state.apply(&envelope).await.map(|_| ()).map_err(|e| e.to_string());
                if let Err(error) = &outcome {
                    tracing::error!(tenant = %state.tenant, id = %envelope.id, trace_id = %envelope.trace_id, %error, "apply failed");
                }
                let _ = reply.send(outcome);
            }
            TenantMsg::Query { query, reply } => {
                let answer = state.query(query).await;
                let _ = reply.send(answer);
            }
        }
        Ok(())
    }
}

fn number(value: Decimal) -> Value {
    value.to_f64().and_then(serde_json::Number::from_f64).map(Value::Number).unwrap_or(Value::Null)
}

/// The customer as `get/customer/details` shows it.
pub fn customer_view(customer: &Customer, now: DateTime<Utc>) -> Value {
    json!({
        "customer_number": customer.phone,
        "name": customer.name.clone().unwrap_or_default(),
        "total_orders": customer.total_orders(),
        "last_order": customer.last_order().map(|t| t.get(..10).unwrap_or(t).to_owned()),
        "loyalty_points": customer.loyalty_points,
        "segment": customer.segment(now),
        "lifetime_value": number(customer.lifetime_value),
        "average_order_value": number(customer.average_order_value()),
    })
}

impl TenantState {
    async fn customer(&mut self, phone: &str) -> Result<Option<Customer>, StoreError> {
        if let Some(customer) = self.customers.get(phone) {
            return Ok(Some(customer.clone()));
        }
        self.ctx.repo.customer(&self.tenant, phone).await
    }

    async fn customer_or_new(&mut self, phone: &str, now: DateTime<Utc>) -> Result<Customer, StoreError> {
        Ok(self.customer(phone).await?.unwrap_or_else(|| Customer::new(phone, now)))
    }

    async fn merge_business(&self, business_id: &str, patch: Value) -> Result<WriteOp, StoreError> {
        let mut row =
            self.ctx.repo.json(BUSINESSES, &self.tenant, business_id.as_bytes()).await?.unwrap_or_else(|| json!({}));
        if let (Some(row), Value::Object(patch)) = (row.as_object_mut(), patch) {
            row.extend(patch);
        }
        Ok(Repo::put_json(BUSINESSES, self.tenant.clone(), business_id.as_bytes(), &row))
    }

    /// Applies one envelope; returns the customer it touched (if any).
    async fn apply(&mut self, envelope: &Envelope) -> Result<Option<Customer>, StoreError> {
        let now = Utc::now();
        let received =
            DateTime::parse_from_rfc3339(&envelope.received_at).map(|t| t.with_timezone(&Utc)).unwrap_or(now);
        metrics::histogram!("engage_processing_lag_seconds")
            .record((now - received).num_milliseconds().max(0) as f64 / 1000.0);
        let version = format!("{}|{}", envelope.received_at, envelope.id);
        let text = |name: &str| envelope.payload.get(name).and_then(Value::as_str).map(str::to_owned);
        let mut ops = Vec::new();
        let mut touched: Option<Customer> = None;
        let mut error = None;

        match envelope.kind {
            EventKind::Order => match OrderFacts::from_payload(&envelope.payload) {
                Ok(facts) => {
                    if self.ctx.fault_panic_order_id.as_deref() == Some(facts.order_id.as_str())
                        && !self.ctx.fault_fired.swap(true, Ordering::SeqCst)
                    {
                        panic!("injected fault: ENGAGE_FAULT_PANIC_ORDER_ID={}", facts.order_id);
                    }
                    let mut customer = self.customer_or_new(&facts.phone, now).await?;
                    let applied = customer.apply_order(&facts, &version);
                    if matches!(applied, Applied::New | Applied::Updated) {
                        ops.push(Repo::put_json(
                            ORDERS,
                            format!("{}|{}", self.tenant, facts.business_id),
                            facts.order_id.as_bytes(),
                            &json!({"payload": envelope.payload, "version": version, "amount": facts.amount, "source": envelope.source_id}),
                        ));
                    }
                    metrics::counter!("engage_orders_applied_total", "outcome" => format!("{applied:?}").to_lowercase()).increment(1);
                    if envelope.api_source.as_deref() == Some("lambda") {
                        ops.push(
                            self.merge_business(&facts.business_id, json!({"last_order_hit": envelope.received_at}))
                                .await?,
                        );
                    }
                    touched = Some(customer);
                }
                Err(not_an_order) => error = Some(not_an_order.to_string()),
            },
            EventKind::Customer => match text("phone") {
                Some(phone) => {
                    let mut customer = self.customer_or_new(&phone, now).await?;
                    for (field, slot) in [
                        ("name", &mut customer.name),
                        ("email", &mut customer.email),
                        ("gender", &mut customer.gender),
                        ("dob", &mut customer.dob),
                    ] {
                        if let Some(value) = text(field) {
                            *slot = Some(value);
                        }
                    }
                    touched = Some(customer);
                }
                None => error = Some("phone missing".to_owned()),
            },
            EventKind::PushToken => match (text("phone"), text("fcm_token")) {
                (Some(phone), Some(token)) => {
                    let mut customer = self.customer_or_new(&phone, now).await?;
                    if !customer.push_tokens.contains(&token) {
                        customer.push_tokens.push(token);
                    }
                    touched = Some(customer);
                }
                _ => error = Some("phone or fcm_token missing".to_owned()),
            },
            EventKind::Checkin => match text("phone") {
                Some(phone) => {
                    ops.push(Repo::put_json(
                        CHECKINS,
                        format!("{}|{phone}", self.tenant),
                        envelope.id.as_bytes(),
                        &envelope.payload,
                    ));
                    let mut customer = self.customer_or_new(&phone, now).await?;
                    customer.last_checkin = Some(envelope.received_at.clone());
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
                    ops.push(self.merge_business(&business_id, patch).await?);
                }
                None => error = Some("businessId missing".to_owned()),
            },
        }

        let record = QueueRecord {
            data: envelope.payload.clone(),
            source: envelope.source_id,
            inserted_at: ist_timestamp(received),
            status: if error.is_some() { STATUS_UNPROCESSABLE } else { STATUS_PROCESSED },
            api_source: envelope.api_source.clone(),
            id: envelope.id.clone(),
            kind: serde_json::to_value(envelope.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            error: error.clone(),
        };
        if let Some(error) = &error {
            tracing::warn!(tenant = %self.tenant, id = %envelope.id, trace_id = %envelope.trace_id, error, "unprocessable event kept with status 2");
        }
        ops.push(Repo::put_json(
            CRM_QUEUE,
            format!("{}|{}", self.tenant, ist_day(received)),
            format!("{}|{}", envelope.received_at, envelope.id).as_bytes(),
            &record,
        ));
        // The customer row last: it holds the totals, and on a store without multi-row atomicity
        // a crash before it leaves the event to be applied again on redelivery.
        if let Some(customer) = &touched {
            ops.push(Repo::put_customer(&self.tenant, customer));
        }
        if let Err(error) = self.ctx.repo.store().batch(ops).await {
            if let Some(customer) = &touched {
                self.customers.remove(&customer.phone);
            }
            return Err(error);
        }
        if let Some(customer) = &touched {
            self.customers.insert(customer.phone.clone(), customer.clone());
        }
        Ok(touched)
    }

    async fn query(&mut self, query: TenantQuery) -> QueryReply {
        let failed = |e: StoreError| QueryError::Failed(e.to_string());
        let now = Utc::now();
        match query {
            TenantQuery::CustomerDetails { phone } => {
                let customer = self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                Ok(customer_view(&customer, now))
            }
            TenantQuery::UpdateCustomer { phone, name, email, gender, dob } => {
                let mut customer = self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                for (value, slot) in [
                    (name, &mut customer.name),
                    (email, &mut customer.email),
                    (gender, &mut customer.gender),
                    (dob, &mut customer.dob),
                ] {
                    if value.is_some() {
                        *slot = value;
                    }
                }
                self.ctx.repo.store().batch(vec![Repo::put_customer(&self.tenant, &customer)]).await.map_err(failed)?;
                let view = customer_view(&customer, now);
                self.customers.insert(phone, customer);
                Ok(view)
            }
            TenantQuery::ApplyNow { envelope } => match self.apply(&envelope).await.map_err(failed)? {
                Some(customer) => Ok(customer_view(&customer, now)),
                None => Err(QueryError::Invalid("the event touched no customer".to_owned())),
            },
        }
    }
}
