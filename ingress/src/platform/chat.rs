//! `/chat/send` (internal JWT) and `/chat/receipts` (open: chat-provider webhooks) publish the
//! body to `engage.chat.messages` / `engage.chat.receipts`. As the spec's consumers, engage only
//! logs them (embedded) or keeps them on stream `ENGAGE_CHAT` (NATS); the chat jobs of a later
//! issue do the sending.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Json, Router};
use serde_json::json;

use engage_streams::subject::{CHAT_MESSAGES, CHAT_RECEIPTS};

use super::auth::{check, Auth};
use super::body::PlatformBody;
use super::errors::IntegrationError;
use crate::trace::TraceId;
use crate::AppState;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/chat/send",
            post(|state, trace, headers, body| publish(state, trace, headers, body, CHAT_MESSAGES, Auth::InternalJwt)),
        )
        .route(
            "/chat/receipts",
            post(|state, trace, headers, body| publish(state, trace, headers, body, CHAT_RECEIPTS, Auth::None)),
        )
}

async fn publish(
    State(state): State<AppState>,
    Extension(trace): Extension<TraceId>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    subject: &'static str,
    auth: Auth,
) -> Response {
    if let Err(refusal) = check(&state, auth, &headers).await {
        return refusal;
    }
    let body = match body {
        Ok(PlatformBody(body)) => body,
        Err(error) => return error.into_response(),
    };
    let issues = state.platform.schemas.issues("ChatEvent", &body);
    if !issues.is_empty() {
        return IntegrationError::invalid(issues).into_response();
    }
    match state.platform.bus.publish_side(subject, &body, &trace.0).await {
        Ok(()) => Json(json!({"status": 1})).into_response(),
        Err(error) => IntegrationError::unavailable(error).into_response(),
    }
}
