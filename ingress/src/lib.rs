//! HTTP ingress of engage: axum routers, one module per spec area, auth, validation and the error
//! families.
//!
//! # Layout
//! - [`logs`]: the log ingestion service (`/v1/logs`, `/v1/logs/ingest`, `/v1/logs/events`).
//! - [`platform`]: the engagement platform's routes (ingestion, customers, chat, admin tokens).
//! - [`pages`]: what the HTML pages share (shell, colours, ₹ and IST, favicon, HTML error pages).
//! - [`ops`]: `/healthz`, `/readyz`, `/metrics`, `/openapi.json`; [`openapi`] builds the document.
//! - [`auth`]: the [`auth::LogCaller`] extractor (RS256 JWT via JWKS, then the rate limit).
//! - [`rate_limit`]: per-caller limits (`governor`).
//! - [`error`]: `ApiError`, the log service's error family.
//! - [`trace`]: `x-trace-id`, request spans and request metrics.
//! - [`validation`]: JSON Schema compilation and issue lists shared by every route family.
//! - [`telemetry`]: the Prometheus recorder.
//! - [`readiness`]: what `/readyz` reports (phase and unusable dependencies).
//! - [`state`]: [`AppState`], what every route shares.

pub mod auth;
pub mod error;
pub mod logs;
pub mod openapi;
pub mod ops;
pub mod pages;
pub mod platform;
pub mod rate_limit;
pub mod readiness;
pub mod state;
pub mod telemetry;
pub mod trace;
pub mod validation;

pub use state::{AppInner, AppState, LogReads, Served};

/// Builds what the process serves from the code; fails only on a broken built-in schema or
/// document.
pub fn served() -> Result<Served, String> {
    Ok(Served {
        openapi: openapi::document()?,
        schema: logs::schema::LogSchema::compile()?,
        metrics: telemetry::prometheus(),
    })
}

use axum::Router;

/// What a process serves: everything, or (actor nodes) operations routes only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Serve {
    /// Log service, platform and operations routes.
    All,
    /// `/healthz`, `/readyz`, `/metrics`, `/openapi.json` only.
    OpsOnly,
}

/// The routes, with the trace-id middleware and an `ApiError` 404 fallback. Every route but the
/// log service's answers compressed (gzip or br) when the caller accepts it and the body is over
/// 32 bytes, and a browser asking for a page gets HTML errors ([`pages::html_errors`]); the log
/// routes (`/v1/logs…`) stay without either: their answers are small and their producers send
/// many (the two layers cost the 1-event log path a fifth of its throughput, docs/benchmarks/).
pub fn router(state: AppState, serve: Serve) -> Router {
    let pages = match serve {
        Serve::All => platform::router(),
        Serve::OpsOnly => platform::admin::node_router(),
    }
    .merge(ops::router())
    .fallback(|| async { error::ApiError::not_found() })
    .layer(axum::middleware::from_fn(platform::family_refusals))
    .layer(axum::middleware::from_fn(pages::html_errors))
    .layer(tower_http::compression::CompressionLayer::new().gzip(true).br(true));
    let routes = match serve {
        Serve::All => logs::router().merge(pages),
        Serve::OpsOnly => pages,
    };
    // the log routes' 405 and 415 in their family too (the pages' have it inside the HTML layer)
    routes
        .layer(axum::middleware::from_fn(platform::family_refusals))
        .layer(axum::middleware::from_fn(trace::trace_requests))
        .with_state(state)
}
