//! HTTP ingress of engage: axum routers, one module per spec area, auth, validation and the error
//! families.
//!
//! # Layout
//! - [`logs`]: the log ingestion service (`/v1/logs`, `/v1/logs/ingest`, `/v1/logs/events`).
//! - [`platform`]: the engagement platform's routes (ingestion, customers, chat, admin tokens).
//! - [`ops`]: `/healthz`, `/readyz`, `/metrics`, `/openapi.json`; [`openapi`] builds the document.
//! - [`auth`]: the [`auth::LogCaller`] extractor (RS256 JWT via JWKS, then the rate limit).
//! - [`rate_limit`]: per-caller limits (`governor`).
//! - [`error`]: `ApiError`, the log service's error family.
//! - [`trace`]: `x-trace-id`, request spans and request metrics.
//! - [`validation`]: JSON Schema compilation and issue lists shared by every route family.
//! - [`telemetry`]: the Prometheus recorder.
//! - [`readiness`]: what `/readyz` reports (phase and unusable dependencies).

pub mod auth;
pub mod error;
pub mod logs;
pub mod openapi;
pub mod ops;
pub mod platform;
pub mod rate_limit;
pub mod readiness;
pub mod telemetry;
pub mod trace;
pub mod validation;

use std::sync::Arc;

use axum::Router;
use metrics_exporter_prometheus::PrometheusHandle;

use engage_config::Settings;
use engage_storage::logs::embedded::EmbeddedLogs;
use engage_storage::logs::LogWriter;

use crate::auth::jwks::JwksVerifier;
use crate::logs::schema::LogSchema;
use crate::rate_limit::CallerLimiter;

/// Shared state of every route. Cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<AppInner>);

impl std::ops::Deref for AppState {
    type Target = AppInner;
    fn deref(&self) -> &AppInner {
        &self.0
    }
}

/// What [`AppState`] holds.
pub struct AppInner {
    /// The settings the process started with.
    pub settings: Settings,
    /// The log sink's coalescing writer.
    pub writer: LogWriter,
    /// What `GET /v1/logs/events` reads back (embedded sink).
    pub logs: EmbeddedLogs,
    /// JWT verification, when `ENGAGE_JWKS_URL` is set.
    pub jwt: Option<Arc<JwksVerifier>>,
    /// Rate limit, when configured.
    pub limiter: Option<Arc<CallerLimiter>>,
    /// The compiled request schema.
    pub schema: LogSchema,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
    /// The OpenAPI document, rendered once.
    pub openapi: String,
    /// The phase and the unusable dependencies `/readyz` reports.
    pub readiness: Arc<readiness::Readiness>,
    /// The engagement platform's shared parts.
    pub platform: platform::PlatformState,
}

impl AppState {
    /// Builds the state; fails only on a broken built-in schema or document.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        settings: Settings,
        writer: LogWriter,
        logs: EmbeddedLogs,
        jwt: Option<Arc<JwksVerifier>>,
        limiter: Option<Arc<CallerLimiter>>,
        platform: platform::PlatformState,
        readiness: Arc<readiness::Readiness>,
    ) -> Result<Self, String> {
        Ok(Self(Arc::new(AppInner {
            settings,
            writer,
            logs,
            jwt,
            limiter,
            schema: LogSchema::compile()?,
            metrics: telemetry::prometheus(),
            openapi: openapi::document()?,
            readiness,
            platform,
        })))
    }
}

/// What a process serves: everything, or (actor nodes) operations routes only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Serve {
    /// Log service, platform and operations routes.
    All,
    /// `/healthz`, `/readyz`, `/metrics`, `/openapi.json` only.
    OpsOnly,
}

/// The routes, with the trace-id middleware and an `ApiError` 404 fallback.
pub fn router(state: AppState, serve: Serve) -> Router {
    let routes = match serve {
        Serve::All => Router::new().merge(logs::router()).merge(platform::router()),
        Serve::OpsOnly => platform::admin::node_router(),
    };
    routes
        .merge(ops::router())
        .fallback(|| async { error::ApiError::not_found() })
        .layer(axum::middleware::from_fn(platform::family_refusals))
        .layer(axum::middleware::from_fn(trace::trace_requests))
        .with_state(state)
}
