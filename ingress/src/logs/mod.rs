//! The structured-log ingestion service (`spec/log-ingestion.md`).
//!
//! - `POST /v1/logs`, `POST /v1/logs/ingest`: [`ingest`]
//! - `GET /v1/logs/events`: [`events`] (reads the embedded sink back)
//! - `POST /otlp/v1/logs`: [`otlp`] (OTLP/HTTP logs, protobuf and JSON; records mapped by
//!   `otlp_map`; OTLP/JSON as protobuf's own printer writes it read by `otlp_json`)
//! - `GET /v1/logs/usage`: [`usage`] (disk use, oldest event, retention; `engage logs usage`)
//! - `GET /v1/logs/tail`: [`tail`] (a group as it grows, either sink; `engage logs tail`)
//! - the request schema: [`schema`]; group/stream naming: [`naming`]; the typed reading of
//!   requests the schema surely accepts: `typed`

pub mod events;
pub mod ingest;
pub mod naming;
pub mod otlp;
mod otlp_json;
mod otlp_map;
pub mod otlp_openapi;
pub mod schema;
pub mod tail;
mod typed;
pub mod usage;
mod write;

use axum::routing::{get, post};
use axum::Router;
use tower_http::decompression::RequestDecompressionLayer;

use crate::state::AppState;

/// Routes of the log service.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/logs", post(ingest::ingest_logs))
        .route("/v1/logs/ingest", post(ingest::ingest_logs_alias))
        .route("/v1/logs/events", get(events::read_events))
        .route("/v1/logs/tail", get(tail::tail_logs))
        .route("/otlp/v1/logs", post(otlp::export_logs))
        // an exporter's endpoint written with a trailing slash (`…/otlp/v1/logs/`) works too
        .route("/otlp/v1/logs/", post(otlp::export_logs))
        .route("/v1/logs/usage", get(usage::log_usage))
        .layer(RequestDecompressionLayer::new().gzip(true).pass_through_unaccepted(false))
}
