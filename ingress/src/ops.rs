//! Operations routes: `GET /healthz`, `GET /readyz`, `GET /metrics`, `GET /openapi.json`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::readiness::Readiness;
use crate::state::AppState;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .route("/openapi.json", get(openapi_json))
}

/// `GET /healthz`'s answer.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// Always `ok`: the process answers.
    #[schema(pattern = "^ok$")]
    pub status: String,
}

/// `GET /readyz`'s answer (200 or 503).
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ReadinessBody {
    /// `ready` (200); `starting`, `not_ready` or `shutting_down` (503).
    #[schema(pattern = "^(ready|starting|not_ready|shutting_down|unknown)$")]
    pub status: String,
    /// The process's role (`all`, `ingress`, `engine`), once it serves.
    pub role: Option<String>,
    /// The log sink (`embedded`, `cloudwatch`), once it serves.
    pub sink: Option<String>,
    /// Each unusable dependency (`nats`, `scylla`, `cloudwatch`, `jwks`, `log_disk`, …) and why.
    pub problems: Option<std::collections::BTreeMap<String, String>>,
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, description = "the process answers", body = Health)))]
pub async fn healthz() -> Json<serde_json::Value> {
    Json(json!({"status": "ok"}))
}

/// Readiness: 200 while serving with every dependency usable; 503 while starting (connecting to
/// NATS or ScyllaDB), while a dependency is unusable (the CloudWatch sink, the JWKS) and once
/// shutdown has begun, with the reasons under `problems`.
#[utoipa::path(get, path = "/readyz", tag = "operations", responses(
    (status = 200, description = "ready: status ready, role, sink", body = ReadinessBody),
    (status = 503, description = "not ready: status starting, not_ready or shutting_down, problems {dependency: reason}", body = ReadinessBody)))]
pub async fn readyz(State(state): State<AppState>) -> Response {
    let (ready, mut body) = state.readiness.report();
    body["role"] = json!(state.settings.role);
    body["sink"] = json!(state.writer.backend_name());
    readiness_answer(ready, body)
}

fn readiness_answer(ready: bool, body: serde_json::Value) -> Response {
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(body)).into_response()
}

/// What a process serves while it connects to its dependencies: `/healthz`, `/readyz` (503,
/// `starting`, with what it waits for) and `/metrics`; every other path answers 503 `STARTING`.
pub fn starting_router(readiness: Arc<Readiness>) -> Router {
    let ready = readiness.clone();
    Router::new()
        .route("/healthz", get(healthz))
        .route(
            "/readyz",
            get(move || {
                let (ready, body) = ready.report();
                async move { readiness_answer(ready, body) }
            }),
        )
        .route("/metrics", get(|| async { metrics_page(&crate::telemetry::prometheus()) }))
        .fallback(|| async {
            (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "1")],
                Json(json!({"error": "STARTING", "message": "engage is starting: it is connecting to its dependencies (see /readyz)"})),
            )
        })
        // the interim server stops when the real one takes over: no connection is kept idle
        // across that moment, where a request sent on it would be reset
        .layer(axum::middleware::map_response(|mut response: axum::response::Response| async move {
            response.headers_mut().insert(header::CONNECTION, axum::http::HeaderValue::from_static("close"));
            response
        }))
}

/// Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", tag = "operations", responses((status = 200, description = "Prometheus text format")))]
pub async fn metrics_text(State(state): State<AppState>) -> Response {
    metrics_page(&state.metrics)
}

fn metrics_page(handle: &metrics_exporter_prometheus::PrometheusHandle) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], handle.render()).into_response()
}

/// This document.
#[utoipa::path(get, path = "/openapi.json", tag = "operations", responses((status = 200, description = "OpenAPI 3.1.0")))]
pub async fn openapi_json(State(state): State<AppState>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], state.openapi.clone()).into_response()
}
