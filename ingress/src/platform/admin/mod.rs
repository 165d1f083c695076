//! `/admin/tokens`: token administration for `engage tokens create|list|revoke`. Reachable only
//! from a loopback address and with `x-admin-key` equal to the node's admin key
//! (`ENGAGE_ADMIN_KEY`, or the key kept in `<data_dir>/admin.key`). Refusals are staff-family
//! 403 `{message: "invalid credentials"}`.
//!
//! - `POST /admin/tokens` `{kind: staff|integration|ingestion, parent, business?}` →
//!   201 `{token, id, kind, parent, business, created_at}` (the token is shown only here);
//! - `GET /admin/tokens` → `{tokens: [{id, kind, parent, business, created_at, revoked_at}]}`;
//! - `DELETE /admin/tokens/{id}` → `{revoked: true}` or 404;
//! - `GET /admin/key` (loopback, no key) → where the key is: `{key_file: "<absolute path>"}`, or
//!   `{key_setting: "ENGAGE_ADMIN_KEY"}` when a setting gives it. The CLI reads the file, so only a
//!   local user who may read the server's data dir gets the key.
//!
//! An actor node (role `node`) serves none of these: `/admin/*` answers 404 with a message saying
//! to run the command against the ingress ([`node_router`]).

pub mod answers;
pub mod customers;
pub mod dead_letters;

use std::net::SocketAddr;

use axum::extract::rejection::ExtensionRejection;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use engage_actors::capabilities::wallet::GetBalance;

use crate::platform::edge::errors::StaffError;
use crate::platform::edge::routes::Routes;
use crate::platform::edge::tokens::TokenKind;
use crate::state::AppState;

/// Routes of this module, each declared once with its operations ([`Routes`]).
pub fn routes() -> Routes {
    let id = json!({"type": "string", "minLength": 1, "maxLength": 128});
    let token_body = json!({"type": "object", "required": ["kind", "parent"], "properties": {
        "kind": {"enum": ["staff", "integration", "ingestion", "app"]}, "parent": id, "business": id}});
    let wallet_body = |required: &[&str]| {
        json!({"type": "object", "required": required, "properties": {
        "parent": id, "business": id, "amount": {"type": "number", "minimum": 0.0001, "maximum": 10000000},
        "reference": id}})
    };
    let job_body = json!({"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"}, "now": {"type": "string", "format": "date-time"}}});
    let store_failed = ("500", "{message: \"authentication failed\"}: the token store failed");
    let mut revoke_op = admin_op::<answers::Revoked>(
        "Revoke a token",
        "200",
        "{revoked: true}",
        None,
        &[("404", "{message}: no such token"), store_failed],
    );
    revoke_op["parameters"] = json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]);
    let wallet_errors: &[(&str, &str)] = &[
        ("400", "{message}: the body is not {parent, business, amount?, reference?}, or the wallet refused it"),
        ("503", "{message: \"temporarily unavailable; retry\"}: the brand's owner is unavailable"),
    ];

    let mut key = admin_op::<answers::KeyLocation>(
        "Where the server's admin key is (loopback only, no key needed)",
        "200",
        "{key_file: \"<absolute path>\"} or {key_setting: \"ENGAGE_ADMIN_KEY\"}",
        None,
        &[],
    );
    key["security"] = json!([]);
    key["responses"]["403"]["description"] = json!("{message: \"invalid credentials\"}: not from loopback");
    let no_jobs = ("503", "{message}: this process runs no jobs (role ingress)");
    Routes::new()
        .route(
            "/admin/tokens",
            get(list).post(create),
            json!({
                "get": admin_op::<answers::Tokens>("List tokens (never their secrets)", "200", "{tokens: [{id, kind, parent, business, created_at, revoked_at}]}", None, &[store_failed]),
                "post": admin_op::<answers::Created>("Create a token: {kind: staff|integration|ingestion|app, parent, business?}", "201", "{token, id, kind, parent, business, created_at}",
                    Some(token_body),
                    &[("400", "{message}: the body is not {kind, parent, business?}"), store_failed]),
            }),
        )
        .route("/admin/tokens/{id}", delete(revoke), json!({"delete": revoke_op}))
        .route(
            "/admin/wallet/recharge",
            post(|s, a, b| wallet(s, a, b, true)),
            json!({"post": admin_op::<engage_actors::capabilities::wallet::Recharged>("Credit an outlet's wallet: {parent, business, amount, reference?}", "200", "{balance}", Some(wallet_body(&["parent", "business", "amount"])), wallet_errors)}),
        )
        .route(
            "/admin/wallet/balance",
            post(|s, a, b| wallet(s, a, b, false)),
            json!({"post": admin_op::<engage_actors::capabilities::wallet::Balance>("An outlet's wallet balance: {parent, business}", "200", "{balance}", Some(wallet_body(&["parent", "business"])), wallet_errors)}),
        )
        .route(
            "/admin/jobs",
            get(list_jobs),
            json!({"get": admin_op::<answers::Jobs>("The scheduled jobs, their crons (IST) and next runs", "200", "{jobs: [{job, cron, next}]}", None, &[no_jobs])}),
        )
        .route(
            "/admin/jobs/run",
            post(run_job),
            json!({"post": admin_op::<answers::JobRun>("Run a job now: {name, now?}", "200", "{job, outcome}", Some(job_body), &[
                ("400", "{message}: unknown job, or now is not RFC 3339"),
                ("500", "{message: \"job failed: …\"}"),
                no_jobs,
            ])}),
        )
        .route("/admin/key", get(key_location), json!({"get": key}))
}

/// `/admin/*` on an actor node: 404 saying it is a node.
pub fn node_router() -> Router<AppState> {
    Router::new().route(
        "/admin/{*rest}",
        axum::routing::any(|| async {
            (
                StatusCode::NOT_FOUND,
                Json(json!({"error": "NODE_ROLE", "message": "this is an actor node (role node), which serves no admin routes; use the ingress: run the command with ENGAGE_HTTP_ADDR set to the ingress's address"})),
            )
        }),
    )
}

async fn key_location(
    State(state): State<AppState>,
    peer: Result<ConnectInfo<SocketAddr>, ExtensionRejection>,
) -> Response {
    if !peer.as_ref().is_ok_and(|p| p.0.ip().is_loopback()) {
        return StaffError::invalid_credentials().into_response();
    }
    if state.settings.admin_key.is_some() {
        return Json(answers::KeyLocation { key_file: None, key_setting: Some("ENGAGE_ADMIN_KEY") }).into_response();
    }
    let file = state.settings.admin_key_file();
    let file = std::fs::canonicalize(&file).unwrap_or(file);
    Json(answers::KeyLocation { key_file: Some(file.display().to_string()), key_setting: None }).into_response()
}

async fn list_jobs(State(state): State<AppState>, _admin: Admin) -> Response {
    match &state.platform.jobs {
        Some(jobs) => Json(answers::Jobs { jobs: jobs.list() }).into_response(),
        None => StaffError::unavailable("this process runs no jobs (role ingress)").into_response(),
    }
}

/// `engage jobs run NAME [--now T]`: `{name, now?}` → the job's outcome.
async fn run_job(
    State(state): State<AppState>,
    _admin: Admin,
    body: Result<Json<serde_json::Value>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Some(jobs) = &state.platform.jobs else {
        return StaffError::unavailable("this process runs no jobs (role ingress)").into_response();
    };
    let body = body.map(|Json(b)| b).unwrap_or_default();
    let Some(job) = body["name"].as_str().and_then(engage_actors::jobs::JobName::parse) else {
        return (StatusCode::BAD_REQUEST, Json(json!({"message": "unknown job; see engage jobs list"})))
            .into_response();
    };
    let now = match body["now"].as_str() {
        None => chrono::Utc::now(),
        Some(text) => match chrono::DateTime::parse_from_rfc3339(text) {
            Ok(t) => t.with_timezone(&chrono::Utc),
            Err(_) => {
                return (StatusCode::BAD_REQUEST, Json(json!({"message": "now must be RFC 3339"}))).into_response()
            }
        },
    };
    match jobs.run(job, now).await {
        Ok(outcome) => Json(answers::JobRun { job: job.as_str(), outcome }).into_response(),
        Err(error) => (StatusCode::INTERNAL_SERVER_ERROR, Json(json!({"message": format!("job failed: {error}")})))
            .into_response(),
    }
}

/// The body of `engage wallet recharge|balance`.
#[derive(Deserialize)]
struct AdminWallet {
    parent: String,
    business: String,
    amount: Option<serde_json::Number>,
    reference: Option<String>,
}

/// `engage wallet recharge|balance`: `{parent, business, amount?, reference?}`.
async fn wallet(
    State(state): State<AppState>,
    _admin: Admin,
    body: Result<Json<AdminWallet>, axum::extract::rejection::JsonRejection>,
    recharge: bool,
) -> Response {
    let refuse = || {
        (StatusCode::BAD_REQUEST, Json(json!({"message": "parent, business and (for a recharge) amount are required"})))
            .into_response()
    };
    let Ok(Json(body)) = body else { return refuse() };
    if body.parent.is_empty() {
        return refuse();
    }
    let gateway = &state.platform.gateway;
    let answer = match (recharge, &body.amount) {
        (true, Some(amount)) => gateway
            .ask(&body.parent, crate::platform::wallet::recharge_query(body.business, amount, body.reference))
            .await
            .map(|recharged| Json(recharged).into_response()),
        (true, None) => return refuse(),
        (false, _) => gateway
            .ask(&body.parent, GetBalance { business: body.business })
            .await
            .map(|balance| Json(balance).into_response()),
    };
    match answer {
        Ok(answer) => answer,
        Err(engage_actors::QueryError::Invalid(message)) => {
            (StatusCode::BAD_REQUEST, Json(json!({"message": message}))).into_response()
        }
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

pub(crate) fn allowed(state: &AppState, peer: Option<&ConnectInfo<SocketAddr>>, headers: &HeaderMap) -> bool {
    let loopback = peer.is_some_and(|p| p.0.ip().is_loopback());
    let presented = headers.get("x-admin-key").and_then(|v| v.to_str().ok()).unwrap_or_default();
    let expected = state.platform.admin_key.as_bytes();
    let same = crate::platform::edge::auth::same_secret(presented.as_bytes(), expected);
    loopback && same && !expected.is_empty()
}

/// A caller of the `/admin` routes: from a loopback address, with `x-admin-key` equal to the node's
/// admin key ([`allowed`]). Anyone else is refused with the staff family's 403
/// `{message: "invalid credentials"}` before the route reads anything else.
pub struct Admin;

impl axum::extract::FromRequestParts<AppState> for Admin {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &AppState) -> Result<Self, Response> {
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>();
        if allowed(state, peer, &parts.headers) {
            Ok(Admin)
        } else {
            Err(StaffError::invalid_credentials().into_response())
        }
    }
}

#[derive(Deserialize)]
struct CreateToken {
    kind: TokenKind,
    parent: String,
    business: Option<String>,
}

async fn create(
    State(state): State<AppState>,
    _admin: Admin,
    body: Result<Json<CreateToken>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Ok(Json(request)) = body else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"message": "body must be {kind: staff|integration|ingestion, parent, business?}"})),
        )
            .into_response();
    };
    if request.parent.is_empty() || request.parent.len() > 128 {
        return (StatusCode::BAD_REQUEST, Json(json!({"message": "parent must be 1-128 characters"}))).into_response();
    }
    match state.platform.tokens.create(request.kind, &request.parent, request.business.as_deref()).await {
        Ok((token, grant)) => {
            tracing::info!(id = %grant.id, kind = grant.kind.as_str(), parent = %grant.parent, "token created");
            (StatusCode::CREATED, Json(answers::Created { grant, token })).into_response()
        }
        Err(error) => StaffError::authentication_failed(error).into_response(),
    }
}

async fn list(State(state): State<AppState>, _admin: Admin) -> Response {
    match state.platform.tokens.list().await {
        Ok(tokens) => Json(answers::Tokens { tokens }).into_response(),
        Err(error) => StaffError::authentication_failed(error).into_response(),
    }
}

async fn revoke(State(state): State<AppState>, _admin: Admin, Path(id): Path<String>) -> Response {
    match state.platform.tokens.revoke(&id).await {
        Ok(true) => {
            tracing::info!(id, "token revoked");
            Json(answers::Revoked { revoked: true }).into_response()
        }
        Ok(false) => StaffError::not_found("token").into_response(),
        Err(error) => StaffError::authentication_failed(error).into_response(),
    }
}

/// The admin routes in `/openapi.json`: loopback only, `x-admin-key` (the `adminKey` scheme) on all
/// but `GET /admin/key`; every refusal is the staff family's `{message}`.
/// An admin route's `/openapi.json` operation: the admin key, its answer, 403 for a caller that
/// is not on loopback or has not the key, and `extra` refusals (staff family).
pub(crate) fn admin_op<T: schemars::JsonSchema>(
    summary: &str,
    ok_status: &str,
    ok_text: &str,
    body: Option<serde_json::Value>,
    extra: &[(&str, &str)],
) -> serde_json::Value {
    let ok = crate::platform::edge::contract::answer_schema::<T>();
    let refusal = |description: &str| json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}});
    let mut responses = serde_json::Map::new();
    responses
        .insert(ok_status.to_owned(), json!({"description": ok_text, "content": {"application/json": {"schema": ok}}}));
    responses.insert(
        "403".to_owned(),
        refusal("{message: \"invalid credentials\"}: not from loopback, or not the admin key"),
    );
    for (status, text) in extra {
        responses.insert((*status).to_owned(), refusal(text));
    }
    let mut op = json!({"summary": summary, "tags": ["admin"], "responses": responses, "security": [{"adminKey": []}]});
    if let Some(schema) = body {
        op["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": schema}}});
    }
    op
}
