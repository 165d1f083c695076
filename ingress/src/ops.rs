//! Operations routes: `GET /healthz`, `GET /readyz`, `GET /metrics`, `GET /openapi.json`.

use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::AppState;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .route("/openapi.json", get(openapi_json))
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, description = "{\"status\":\"ok\"}")))]
pub async fn healthz() -> Json<serde_json::Value> {
    Json(json!({"status": "ok"}))
}

/// Readiness: 200 while serving, 503 once shutdown has begun.
#[utoipa::path(get, path = "/readyz", tag = "operations", responses(
    (status = 200, description = "ready"), (status = 503, description = "shutting down")))]
pub async fn readyz(State(state): State<AppState>) -> Response {
    if state.ready.load(Ordering::Relaxed) {
        Json(json!({"status": "ready", "sink": state.writer.backend_name()})).into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"status": "shutting_down"}))).into_response()
    }
}

/// Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", tag = "operations", responses((status = 200, description = "Prometheus text format")))]
pub async fn metrics_text(State(state): State<AppState>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render()).into_response()
}

/// This document.
#[utoipa::path(get, path = "/openapi.json", tag = "operations", responses((status = 200, description = "OpenAPI 3.1.0")))]
pub async fn openapi_json(State(state): State<AppState>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], state.openapi.clone()).into_response()
}
