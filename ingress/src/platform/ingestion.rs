//! Order ingestion and the other enqueue routes (spec "Ingestion and POS routes").
//!
//! Every route here is one row of [`ENQUEUE_ROUTES`]: path, auth, event kind, body schema and
//! source. The handler holds the body to the caller ([`authorized`]), validates it against the
//! schema, takes the tenant (the token's brand for any token; `parentBusinessId` on an open
//! route), wraps the body in an
//! [`Envelope`] and publishes it on the bus; the answer `{"status": 1}` comes after the bus has it
//! durably. `/injestion/instant/order` also processes it before answering ([`instant_order`]).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Json};
use serde_json::{json, Value};

use engage_actors::capabilities::customers;
use engage_streams::envelope::source_id;
use engage_streams::{Envelope, EventKind};

use crate::platform::edge::access::{self};
use crate::platform::edge::auth::{check, Auth, Caller};
use crate::platform::edge::body::PlatformBody;
use crate::platform::edge::contract::Scope;
use crate::platform::edge::errors::IntegrationError;
use crate::platform::edge::routes::Routes;
use crate::state::AppState;
use crate::trace::TraceId;

/// Largest event (its body as JSON) an enqueue route accepts: its order row, which holds it, and
/// its bus message stay well inside every backend's value limit (NATS: 1 MiB). The engine checks
/// the same bound again for events that bypassed the edge.
pub use engage_actors::domain::bounds::MAX_EVENT_BYTES;

/// One enqueue route.
#[derive(Clone, Copy, Debug)]
pub struct EnqueueRoute {
    /// Path, as in the spec.
    pub path: &'static str,
    /// Auth family.
    pub auth: Auth,
    /// What it carries.
    pub kind: EventKind,
    /// Body schema name (see `schemas.rs`).
    pub schema: &'static str,
    /// Source name (sets the queue record's source id).
    pub source: &'static str,
    /// `lambda` on the serverless tier.
    pub api_source: Option<&'static str>,
    /// One line for `/openapi.json`.
    pub summary: &'static str,
}

const fn route(
    path: &'static str,
    auth: Auth,
    kind: EventKind,
    schema: &'static str,
    source: &'static str,
    summary: &'static str,
) -> EnqueueRoute {
    EnqueueRoute { path, auth, kind, schema, source, api_source: None, summary }
}

const fn lambda(path: &'static str, auth: Auth, source: &'static str) -> EnqueueRoute {
    EnqueueRoute {
        path,
        auth,
        kind: EventKind::Order,
        schema: "Order",
        source,
        api_source: Some("lambda"),
        summary: "Serverless ingestion tier: enqueue an order with apiSource 'lambda' and update the outlet's last-order-hit marker",
    }
}

use Auth::{Ingestion, Integration, None as Open};
use EventKind::{BusinessStatus, Checkin, CrmToken, Customer, MerchantData, Order, PushToken, Refund};

/// Every enqueue route. The serverless tier's `{pos}` routes are listed per `pos`, with the auth
/// of the direct route of that POS (the spec's "also mounted" `/crm_api/injestion/platform` and
/// `/crm_api/injestion/pos_a` are these same routes).
pub const ENQUEUE_ROUTES: &[EnqueueRoute] = &[
    route("/injestion/platform", Open, Order, "Order", "platform", "Enqueue an order from the first-party platform"),
    route("/injestion/pos_a", Open, Order, "Order", "pos_a", "Enqueue an order from POS A"),
    route(
        "/injestion/pos_d",
        Integration,
        Order,
        "Order",
        "pos_d",
        "Enqueue an order from POS D (integration token sets the brand)",
    ),
    route("/injestion/pos_e", Open, Order, "Order", "pos_e", "Enqueue an order from POS E"),
    route("/injestion/pos_c", Ingestion, Order, "Order", "pos_c", "Enqueue an order from POS C (ingestion token)"),
    route("/injestion/salon/order", Open, Order, "Order", "salon", "Enqueue a salon order (source id 1)"),
    route(
        "/api/ingestion/orderPush",
        Integration,
        Order,
        "Order",
        "orderPush",
        "Common order ingestion (integration token sets the brand)",
    ),
    route(
        "/injestion/createCustomer",
        Open,
        Customer,
        "CreateCustomer",
        "createCustomer",
        "Create or update a customer",
    ),
    route("/injestion/fcms", Open, PushToken, "PushToken", "fcms", "Register a push token for a customer"),
    route("/injestion/checkin", Open, Checkin, "Checkin", "checkin", "Add a check-in"),
    route(
        "/update/business/status",
        Open,
        BusinessStatus,
        "BusinessStatus",
        "businessStatus",
        "Update an outlet's status",
    ),
    route(
        "/insert/merchant/data",
        Open,
        MerchantData,
        "MerchantData",
        "merchantData",
        "Insert merchant data of an outlet",
    ),
    route(
        "/sync/crm/token",
        Ingestion,
        CrmToken,
        "CrmToken",
        "crmToken",
        "Sync an outlet's CRM token (ingestion token)",
    ),
    route(
        "/integration/v1/order/refund",
        Integration,
        Refund,
        "Refund",
        "refund",
        "Refund an order, in whole or in part, by refund id (integration token sets the brand)",
    ),
    lambda("/crm_api/injestion/platform", Open, "platform"),
    lambda("/crm_api/injestion/pos_a", Open, "pos_a"),
    lambda("/crm_api/injestion/pos_c", Ingestion, "pos_c"),
    lambda("/crm_api/injestion/orderPush", Integration, "orderPush"),
    lambda("/crm_api/injestion/pos_d", Integration, "pos_d"),
    lambda("/crm_api/injestion/pos_e", Open, "pos_e"),
    lambda("/crm_api/api/injestion/platform", Open, "platform"),
    lambda("/crm_api/api/injestion/pos_a", Open, "pos_a"),
    lambda("/crm_api/api/injestion/pos_c", Ingestion, "pos_c"),
    lambda("/crm_api/api/injestion/orderPush", Integration, "orderPush"),
    lambda("/crm_api/api/injestion/pos_d", Integration, "pos_d"),
    lambda("/crm_api/api/injestion/pos_e", Open, "pos_e"),
];

/// `/injestion/instant/order`.
pub const INSTANT_ORDER: EnqueueRoute = route(
    "/injestion/instant/order",
    Open,
    Order,
    "Order",
    "instant",
    "Process an order at once; answers with the customer's totals",
);

/// The routes of this module, each declared once: a row of [`ENQUEUE_ROUTES`] is its route.
pub fn routes() -> Routes {
    let ack = crate::platform::edge::contract::answer_schema::<crate::platform::edge::Ack>();
    let mut routes = Routes::new();
    for spec in ENQUEUE_ROUTES {
        let spec = *spec;
        routes = routes.route(
            spec.path,
            post(
                move |state: State<AppState>,
                      trace: Extension<TraceId>,
                      headers: HeaderMap,
                      body: Result<PlatformBody, IntegrationError>| {
                    enqueue_route(spec, state, trace, headers, body)
                },
            ),
            json!({"post": enqueue_operation(&spec, ack.clone())}),
        );
    }
    let customer = json!({"$ref": "#/components/schemas/CustomerDetails"});
    let answer = json!({"type": "object", "required": ["status"],
        "properties": {"status": {"const": 1}, "processed": {"type": "boolean"}, "customer": customer}});
    routes.route(INSTANT_ORDER.path, post(instant_order), json!({"post": enqueue_operation(&INSTANT_ORDER, answer)}))
}

/// Checks the route's auth, then holds the body to the caller: a token's request naming another
/// brand (or, for an outlet-limited token, another outlet) is refused with 403 `xE_103` before the
/// body is validated; an open route the operator or the brand closed needs an integration token
/// ([`access::open_gate`]). The caller and the body, or the refusal to send.
async fn authorized(
    state: &AppState,
    spec: &EnqueueRoute,
    headers: &HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Result<(Caller, Value), Response> {
    let caller = check(state, spec.auth, headers).await?;
    let PlatformBody(mut body) = body.map_err(IntoResponse::into_response)?;
    let caller = match caller {
        Caller::Token(grant) => {
            access::bind_outlet(&grant, Some("businessId"), &mut body);
            access::admit_raw(&grant, Scope::Customer, &body)
                .map_err(|denied| IntegrationError::from(denied).into_response())?;
            Caller::Token(grant)
        }
        Caller::Anonymous => {
            match access::open_gate(state, headers, &mut body, Scope::Customer, Some("businessId")).await {
                Ok(Some(grant)) => Caller::Token(grant),
                Ok(None) => Caller::Anonymous,
                Err(refusal) => return Err(refusal.into_response()),
            }
        }
        caller => caller,
    };
    Ok((caller, body))
}

async fn enqueue_route(
    spec: EnqueueRoute,
    State(state): State<AppState>,
    Extension(trace): Extension<TraceId>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (caller, body) = match authorized(&state, &spec, &headers, body).await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    match enqueue(&state, &spec, &caller, body, &trace.0).await {
        Ok(_) => Json(json!({"status": 1})).into_response(),
        Err(error) => error.into_response(),
    }
}

/// Validates, builds the envelope and publishes it; the envelope and the bus position it got.
pub async fn enqueue(
    state: &AppState,
    spec: &EnqueueRoute,
    caller: &Caller,
    mut body: Value,
    trace_id: &str,
) -> Result<(std::sync::Arc<Envelope>, u64), IntegrationError> {
    state.platform.schemas.coerce(spec.schema, &mut body);
    // a status word in any case and spacing is the word
    if let Some(Value::String(word)) = body.get_mut("status") {
        *word = word.trim().to_ascii_lowercase();
    }
    let mut issues = state.platform.schemas.issues(spec.schema, &body);
    if let Some(Value::String(word)) = body.get("status") {
        if issues.iter().any(|issue| issue.pointer == "/status") {
            issues.retain(|issue| issue.pointer != "/status");
            let words = engage_actors::domain::order::status_words().join(", ");
            issues.push(crate::error::Issue {
                pointer: "/status".to_owned(),
                message: format!("{word:?} is not a status engage knows; send one of {words}, or 0 to 3 as a number"),
            });
        }
    }
    if let Some(time) = body.get("orderTime").and_then(Value::as_str) {
        if issues.is_empty() && engage_actors::domain::time::parse_ist(time).is_none() {
            issues.push(crate::error::Issue {
                pointer: "/orderTime".to_owned(),
                message: format!("{time:?} is not a real date and time (YYYY-MM-DD HH:mm:ss, IST)"),
            });
        }
    }
    if !issues.is_empty() {
        metrics::counter!("engage_ingest_rejected_total", "source" => spec.source).increment(1);
        return Err(IntegrationError::invalid(issues));
    }
    // what is accepted must fit the rows processing writes (an order row holds its payload; a
    // NATS KV value and a NATS message hold at most 1 MiB)
    let size = serde_json::to_vec(&body).map(|b| b.len()).unwrap_or(usize::MAX);
    if size > MAX_EVENT_BYTES {
        metrics::counter!("engage_ingest_rejected_total", "source" => spec.source).increment(1);
        return Err(IntegrationError::too_large("the event, as JSON,", MAX_EVENT_BYTES));
    }
    let tenant = match (caller.bound_tenant(), body.get("parentBusinessId").and_then(Value::as_str)) {
        (Some(parent), Some(given)) if given != parent => return Err(IntegrationError::tenant_mismatch()),
        (Some(parent), _) => parent.to_owned(),
        (None, Some(given)) => given.to_owned(),
        (None, None) => {
            return Err(IntegrationError::invalid_message(
                "/parentBusinessId",
                "\"parentBusinessId\" is a required property",
            ))
        }
    };
    if let Some(object) = body.as_object_mut() {
        object.insert("parentBusinessId".to_owned(), Value::String(tenant.clone()));
    }
    let mut envelope = Envelope::new(spec.kind, spec.source, source_id(spec.source), &tenant, trace_id, body);
    envelope.api_source = spec.api_source.map(str::to_owned);
    let envelope = std::sync::Arc::new(envelope);
    let position = state.platform.bus.publish(&envelope).await.map_err(IntegrationError::unavailable)?;
    metrics::counter!("engage_ingested_total", "source" => spec.source).increment(1);
    tracing::debug!(tenant, id = %envelope.id, source = spec.source, "enqueued");
    Ok((envelope, position))
}

/// `POST /injestion/instant/order`: enqueue, then process at once through the tenant's actor
/// (idempotent with the later bus delivery) and answer
/// `{"status": 1, "customer": {customer_number, name, total_orders, …}}`.
pub async fn instant_order(
    State(state): State<AppState>,
    Extension(trace): Extension<TraceId>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (caller, body) = match authorized(&state, &INSTANT_ORDER, &headers, body).await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let (envelope, position) = match enqueue(&state, &INSTANT_ORDER, &caller, body, &trace.0).await {
        Ok(enqueued) => enqueued,
        Err(error) => return error.into_response(),
    };
    let tenant = envelope.tenant.clone();
    // applied before its delivery, at the rank the bus gave it (the bus's copy is not touched:
    // its deliveries carry their position themselves)
    let mut envelope = std::sync::Arc::unwrap_or_clone(envelope);
    envelope.position = Some(position);
    match state.platform.gateway.ask(&tenant, customers::ApplyNow { envelope }).await {
        Ok(customer) => Json(json!({"status": 1, "processed": true, "customer": customer})).into_response(),
        // Enqueued durably: it will be processed; say so instead of failing the producer.
        Err(error) => {
            tracing::warn!(%error, tenant, "instant processing unavailable; the order stays queued");
            Json(json!({"status": 1, "processed": false})).into_response()
        }
    }
}

/// The operation of an enqueue route: its body refusals are the integration family's (the bus's
/// answer); an ingestion token's auth refusal is the staff family's 403; a token's body naming
/// another brand or outlet is 403 `xE_103`. Every enqueue body is customer-level.
fn enqueue_operation(route: &EnqueueRoute, ok: Value) -> Value {
    let mut op = crate::platform::edge::routes::operation(route.summary, route.auth, Some(route.schema), ok);
    op["x-engage-scope"] = json!(Scope::Customer.as_str());
    if route.auth == Auth::None {
        // no token gives the brand: the body names it
        crate::platform::edge::routes::require(&mut op, json!({"required": ["parentBusinessId"]}));
    }
    if let Some(responses) = op["responses"].as_object_mut() {
        responses.remove("429");
    }
    op["responses"]["413"] = json!({"description": format!("xE_413 the body exceeds 1048576 bytes, or the event as JSON exceeds {} bytes", MAX_EVENT_BYTES),
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/IntegrationErrorBody"}}}});
    if route.auth == Auth::Ingestion {
        let integration = json!({"$ref": "#/components/schemas/IntegrationErrorBody"});
        let staff = json!({"$ref": "#/components/schemas/StaffErrorBody"});
        let responses = &mut op["responses"];
        responses["400"] = json!({"description": "xE_102 invalid request (body not JSON, schema violation)", "content": {"application/json": {"schema": integration}}});
        responses["413"] = json!({"description": format!("xE_413 the body exceeds 1048576 bytes, or the event as JSON exceeds {} bytes", MAX_EVENT_BYTES), "content": {"application/json": {"schema": integration}}});
        responses["503"] = json!({"description": "xE_503 the queue is unavailable; retry", "content": {"application/json": {"schema": integration}}});
        responses["403"] = json!({"description": "{message: \"invalid credentials\"} (staff family) for a missing, wrong or revoked ingestion token; xE_103 (integration family) for a body naming another brand or (outlet-limited tokens) another outlet",
            "content": {"application/json": {"schema": {"oneOf": [staff, integration]}}}});
    }
    op
}
