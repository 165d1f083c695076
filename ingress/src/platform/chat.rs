//! `/chat/send` (internal JWT) and `/chat/receipts` (open: chat-provider webhooks) publish the
//! body to `engage.chat.messages` / `engage.chat.receipts`. As the spec's consumers, engage only
//! logs them (embedded) or keeps them on stream `ENGAGE_CHAT` (NATS); the chat jobs of a later
//! issue do the sending. In NATS mode the engine nodes' chat consumers take them.
//!
//! Chat login (spec "Legacy routes"):
//!
//! | Route | Auth | Body | Answer |
//! |---|---|---|---|
//! | `/crm_api/rider/chat/login` | none | RiderLoginRequest | `{status: 1, token, expires_at, chat: {parent_business_id, business_id, order_id, customer_name}}`: a chat token for that one order, 12 hours; 404 `xE_404` for an order the outlet does not have |
//! | `/crm_api/check/chat/login` | internal JWT | ChatCheckRequest | `{status: 1, valid: true, role: "rider" \| "partner", parent_business_id, business_id, order_id, subject, expires_at}`, or `{status: 1, valid: false, reason: "expired" \| "invalid"}` |

use axum::extract::{ConnectInfo, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Json};
use chrono::{Duration, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use engage_actors::capabilities::customers;
use engage_actors::signed_links::{ChatClaims, LinkRefusal};

use engage_streams::subject::{CHAT_MESSAGES, CHAT_RECEIPTS};

use crate::platform::edge::auth::{check, Auth};
use crate::platform::edge::body::PlatformBody;
use crate::platform::edge::errors::IntegrationError;
use crate::platform::edge::requests::RiderLoginRequest;
use crate::platform::edge::routes::{operation, Routes};
use crate::platform::edge::{answer, open_rate_limit, Answer, Open};
use crate::state::AppState;
use crate::trace::TraceId;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    let ack = crate::platform::edge::contract::answer_schema::<crate::platform::edge::Ack>();
    let send =
        operation("Publish a chat message to engage.chat.messages", Auth::InternalJwt, Some("ChatEvent"), ack.clone());
    // the chat provider's webhook: open, and not closable (receipts are the provider's, for every brand)
    let mut receipts = operation(
        "Publish a chat-provider receipt to engage.chat.receipts",
        Auth::None,
        Some("ChatEvent"),
        ack.clone(),
    );
    receipts["security"] = json!([]);
    if let Some(op) = receipts.as_object_mut() {
        op.remove("x-engage-open");
    }
    if let Some(responses) = receipts["responses"].as_object_mut() {
        for code in ["401", "403", "429"] {
            responses.remove(code);
        }
    }
    let check = operation(
        "Is a chat token (a rider's or a chat partner's) valid: {status: 1, valid: true, role, parent_business_id, business_id, order_id, subject, expires_at} or {status: 1, valid: false, reason}",
        Auth::InternalJwt,
        Some("ChatCheckRequest"),
        crate::platform::edge::contract::answer_schema::<Answer<Verdict>>(),
    );
    Routes::new()
        .route(
            "/chat/send",
            post(|state, trace, headers, body| publish(state, trace, headers, body, CHAT_MESSAGES, Auth::InternalJwt)),
            json!({"post": send}),
        )
        .route(
            "/chat/receipts",
            post(|state, trace, headers, body| publish(state, trace, headers, body, CHAT_RECEIPTS, Auth::None)),
            json!({"post": receipts}),
        )
        .post(
            "/crm_api/rider/chat/login",
            "A delivery rider's chat login for one order of the outlet: {status: 1, token (12 hours), expires_at, chat: {parent_business_id, business_id, order_id, customer_name}}",
            rider_login,
        )
        .answer("404", "xE_404 the outlet has no such order")
        .route("/crm_api/check/chat/login", post(check_login), json!({"post": check}))
}

/// How long a rider's chat token is valid.
pub const RIDER_TOKEN_HOURS: i64 = 12;

/// `/crm_api/rider/chat/login`.
async fn rider_login(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    Open { tenant, body }: Open<RiderLoginRequest>,
) -> Result<Json<Answer<RiderLogin>>, IntegrationError> {
    open_rate_limit(&state, "rider_login", peer)?;
    let query = customers::GetOrder { business_id: body.business_id.clone(), order_id: body.order_id.clone() };
    let order: Option<Value> = state.platform.gateway.ask(&tenant, query).await?;
    let Some(order) = order else { return Err(IntegrationError::not_found("order")) };
    let expires_at = Utc::now() + Duration::hours(RIDER_TOKEN_HOURS);
    let claims = ChatClaims {
        scope: "rider_chat".to_owned(),
        tenant: tenant.clone(),
        business_id: Some(body.business_id.clone()),
        subject: body.rider_phone,
        order_id: Some(body.order_id.clone()),
        exp: expires_at.timestamp(),
    };
    let token = state.platform.links.sign(&claims).map_err(IntegrationError::internal)?;
    let customer_name = order.pointer("/payload/customer/name").and_then(Value::as_str).map(str::to_owned);
    let chat =
        RiderChat { parent_business_id: tenant, business_id: body.business_id, order_id: body.order_id, customer_name };
    Ok(answer(RiderLogin { token, expires_at, chat }))
}

/// `/crm_api/check/chat/login`.
/// The body of a request that passed `auth`, checked against `schema`; or the refusal.
async fn checked(
    state: &AppState,
    auth: Auth,
    headers: &HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    schema: &str,
) -> Result<Value, Response> {
    check(state, auth, headers).await?;
    let PlatformBody(mut body) = body.map_err(IntoResponse::into_response)?;
    state.platform.schemas.coerce(schema, &mut body);
    let issues = state.platform.schemas.issues(schema, &body);
    if issues.is_empty() {
        Ok(body)
    } else {
        Err(IntegrationError::invalid(issues).into_response())
    }
}

/// Whether a chat token is valid, and what it is for.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct Verdict {
    /// Whether the token is valid.
    valid: bool,
    /// `rider` or `partner` (valid tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    /// The brand (valid tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_business_id: Option<String>,
    /// The outlet, when the token names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    business_id: Option<String>,
    /// The order (riders' tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    order_id: Option<String>,
    /// The rider's phone or the partner's name (valid tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
    /// When it expires (valid tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_at: Option<chrono::DateTime<Utc>>,
    /// `expired` or `invalid` (refused tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
}

/// A rider's chat login.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RiderLogin {
    /// The rider's chat token.
    token: String,
    /// When it expires (12 hours).
    expires_at: chrono::DateTime<Utc>,
    /// The chat it opens.
    chat: RiderChat,
}

/// The chat a rider's token opens.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RiderChat {
    /// The brand.
    parent_business_id: String,
    /// The outlet.
    business_id: String,
    /// The order.
    order_id: String,
    /// The customer's name on the order, when it has one.
    customer_name: Option<String>,
}

async fn check_login(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let body = match checked(&state, Auth::InternalJwt, &headers, body, "ChatCheckRequest").await {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let token = body.get("token").and_then(Value::as_str).unwrap_or_default();
    let refused = |reason| Verdict { valid: false, reason: Some(reason), ..Default::default() };
    let verdict = match state.platform.links.verify_as::<ChatClaims>(token) {
        Ok(claims) if claims.scope == "rider_chat" || claims.scope == "chat_partner" => Verdict {
            valid: true,
            role: Some(if claims.scope == "rider_chat" { "rider" } else { "partner" }),
            parent_business_id: Some(claims.tenant),
            business_id: claims.business_id,
            order_id: claims.order_id,
            subject: Some(claims.subject),
            expires_at: chrono::DateTime::from_timestamp(claims.exp, 0),
            reason: None,
        },
        Err(LinkRefusal::Expired) => refused("expired"),
        _ => refused("invalid"),
    };
    answer(verdict).into_response()
}

async fn publish(
    State(state): State<AppState>,
    Extension(trace): Extension<TraceId>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    subject: &'static str,
    auth: Auth,
) -> Response {
    let body = match checked(&state, auth, &headers, body, "ChatEvent").await {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    match state.platform.bus.publish_side(subject, &body, &trace.0).await {
        Ok(()) => Json(json!({"status": 1})).into_response(),
        Err(error) => IntegrationError::unavailable(error).into_response(),
    }
}
