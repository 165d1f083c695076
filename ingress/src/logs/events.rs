//! `GET /v1/logs/events?log_group=…[&log_stream=…][&limit=…]`: reads the embedded sink back,
//! oldest first. Without `log_stream`, every stream of the group. `limit` 1–10,000, default 100.

use axum::extract::{Query, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use engage_config::LogSinkKind;
use engage_storage::logs::embedded::StoredEvent;

use crate::auth::LogCaller;
use crate::error::ApiError;
use crate::state::AppState;

/// Largest `limit`.
pub const MAX_LIMIT: usize = 10_000;

/// Query of `GET /v1/logs/events`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Log group, e.g. `/logs/org/edge/api` (required: 400 without it).
    #[param(required = true, min_length = 1)]
    pub log_group: Option<String>,
    /// One stream of the group; all streams when absent.
    pub log_stream: Option<String>,
    /// Most events returned, 1–10000 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 10000)]
    pub limit: Option<String>,
}

/// Events read back.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventsPage {
    /// Events, oldest first.
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<StoredEvent>,
}

/// Read stored events back (embedded sink).
#[utoipa::path(
    get, path = "/v1/logs/events", tag = "logs", params(EventsQuery),
    responses(
        (status = 200, description = "Events, oldest first: {log_stream, timestamp, event}", body = EventsPage),
        (status = 400, description = "INVALID_QUERY or UNSUPPORTED_SINK", body = crate::error::ApiErrorBody),
        (status = 401, description = "UNAUTHORIZED", body = crate::error::ApiErrorBody),
    ),
    security((), ("bearer" = []))
)]
pub async fn read_events(
    State(state): State<AppState>,
    _caller: LogCaller,
    query: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<EventsPage>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::invalid_query(e.body_text()))?;
    if state.settings.log_sink != LogSinkKind::Embedded {
        return Err(ApiError::unsupported_sink());
    }
    let group =
        query.log_group.filter(|g| !g.is_empty()).ok_or_else(|| ApiError::invalid_query("log_group is required"))?;
    let limit = match query.limit.as_deref() {
        None => 100,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
            _ => return Err(ApiError::invalid_query(format!("limit must be an integer from 1 to {MAX_LIMIT}"))),
        },
    };
    let kept = state.retention.cutoff_ms(&group, chrono::Utc::now().timestamp_millis()).unwrap_or(i64::MIN);
    let events =
        state.logs.read_since(&group, query.log_stream.as_deref(), kept, limit).await.map_err(ApiError::internal)?;
    Ok(Json(EventsPage { events }))
}
