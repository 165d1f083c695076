//! `/admin/dead-letters`: the parked events ([`engage_streams::dead_letter`]), for `engage
//! dead-letters list|show|replay|drop`. Loopback callers with the admin key only, like every
//! `/admin` route ([`crate::platform::admin`]).
//!
//! - `GET /admin/dead-letters` → `{dead_letters: [{id, tenant, kind, source, trace_id,
//!   received_at, error, attempts, first_failure, last_failure, partition, position, replayable}]}`,
//!   oldest first (`position`: where the bus accepted it; `replayable` false for an event cut to
//!   fit or never an envelope);
//! - `GET /admin/dead-letters/{id}` → the parked event whole, its envelope included; 404 unknown;
//! - `POST /admin/dead-letters/{id}/replay` → publishes the envelope again (its id unchanged, so
//!   what it does counts once, at the rank it was first accepted at) and forgets it:
//!   `{replayed: true, id, tenant}`; 404 unknown; 409 for an event that is not whole;
//! - `DELETE /admin/dead-letters/{id}` → forgets it: `{dropped: true, id}`; 404 unknown.

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Json;
use serde_json::json;

use crate::platform::admin::answers;
use crate::platform::admin::{admin_op, Admin};
use crate::platform::edge::errors::StaffError;
use crate::platform::edge::routes::Routes;
use crate::state::AppState;

/// Routes of this module, each declared once with its operations ([`Routes`]).
pub fn routes() -> Routes {
    let id = json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]);
    let failed = ("503", "{message: \"temporarily unavailable; retry\"}: the bus failed");
    let missing = ("404", "{message}: no parked event with that id");
    let partial = ("409", "{message}: the parked event is not whole (cut to fit a dead letter, or never an envelope): it cannot be replayed; the message says where the original is");
    let listed = admin_op::<answers::DeadLetters>("The parked events, oldest first", "200",
        "{dead_letters: [{id, tenant, kind, source, trace_id, received_at, error, attempts, first_failure, last_failure, partition, position, replayable}]}",
        None, &[failed]);
    let mut shown = admin_op::<answers::Letter>(
        "A parked event whole, its envelope included",
        "200",
        "{envelope, error, attempts, first_failure, last_failure, partition}",
        None,
        &[missing, failed],
    );
    shown["parameters"] = id.clone();
    let mut dropped =
        admin_op::<answers::Dropped>("Forget a parked event", "200", "{dropped: true, id}", None, &[missing, failed]);
    dropped["parameters"] = id.clone();
    let mut replayed = admin_op::<answers::Replayed>(
        "Publish a parked event again (its id unchanged: it counts once) and forget it",
        "200",
        "{replayed: true, id, tenant}",
        None,
        &[missing, partial, failed],
    );
    replayed["parameters"] = id;
    Routes::new()
        .route("/admin/dead-letters", get(list), json!({"get": listed}))
        .route("/admin/dead-letters/{id}", get(show).delete(drop_letter), json!({"get": shown, "delete": dropped}))
        .route("/admin/dead-letters/{id}/replay", post(replay), json!({"post": replayed}))
}

fn unknown(id: &str) -> Response {
    StaffError::not_found(&format!("parked event {id}")).into_response()
}

async fn list(State(state): State<AppState>, _admin: Admin) -> Response {
    match state.platform.bus.dead_letters().await {
        Ok(letters) => {
            metrics::gauge!("engage_dead_letters").set(letters.len() as f64);
            let dead_letters = letters.iter().map(answers::LetterSummary::of).collect();
            Json(answers::DeadLetters { dead_letters }).into_response()
        }
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

async fn show(State(state): State<AppState>, _admin: Admin, Path(id): Path<String>) -> Response {
    match state.platform.bus.dead_letters().await {
        Ok(letters) => match letters.into_iter().find(|l| l.id() == id) {
            Some(letter) => Json(answers::Letter::of(letter)).into_response(),
            None => unknown(&id),
        },
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

async fn replay(State(state): State<AppState>, _admin: Admin, Path(id): Path<String>) -> Response {
    match state.platform.bus.replay(&id).await {
        Ok(Some(letter)) => {
            metrics::gauge!("engage_dead_letters").decrement(1.0);
            let envelope = &letter.envelope;
            tracing::info!(event_id = %envelope.id, trace_id = %envelope.trace_id, tenant = %envelope.tenant, "parked event replayed");
            Json(answers::Replayed { replayed: true, id, tenant: envelope.tenant.clone() }).into_response()
        }
        Ok(None) => unknown(&id),
        Err(engage_streams::BusError::Unreplayable(why)) => StaffError::conflict(why).into_response(),
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

async fn drop_letter(State(state): State<AppState>, _admin: Admin, Path(id): Path<String>) -> Response {
    match state.platform.bus.drop_dead_letter(&id).await {
        Ok(true) => {
            metrics::gauge!("engage_dead_letters").decrement(1.0);
            tracing::info!(event_id = %id, "parked event dropped");
            Json(answers::Dropped { dropped: true, id }).into_response()
        }
        Ok(false) => unknown(&id),
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}
