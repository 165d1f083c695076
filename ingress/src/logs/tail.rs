//! `GET /v1/logs/tail?log_group=…[&since=…][&filter=…][&cursor=…][&wait=…]`: a log group as it
//! grows, from whichever sink is configured (`engage_storage::logs::tail`). What
//! `engage logs tail` reads; each answer's `cursor` goes into the next request.

use std::time::Duration;

use axum::extract::{Query, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use engage_storage::logs::tail::{TailError, TailRequest};

use crate::auth::LogCaller;
use crate::error::ApiError;
use crate::state::AppState;

/// Largest `limit`.
pub const MAX_LIMIT: usize = 10_000;
/// Longest `wait`, in seconds.
pub const MAX_WAIT_SECS: u64 = 5;
/// How far back a read without `since` starts: 10 minutes, as `aws logs tail`.
pub const DEFAULT_SINCE_MS: i64 = 10 * 60 * 1000;

/// Query of `GET /v1/logs/tail`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TailParams {
    /// Log group, e.g. `/logs/org/edge/api` (required: 400 without it).
    #[param(required = true, min_length = 1)]
    pub log_group: Option<String>,
    /// One stream of the group; all streams when absent.
    pub log_stream: Option<String>,
    /// Only events whose own timestamp is at or after this, in milliseconds since the epoch
    /// (default: 10 minutes ago).
    #[param(value_type = Option<i64>, minimum = 0)]
    pub since: Option<String>,
    /// Only events whose stored JSON text contains this text (case-sensitive).
    pub filter: Option<String>,
    /// The `cursor` of the previous answer: go on from there (one of the other sink's starts
    /// over from `since`).
    #[param(pattern = r"^(e[0-9]{1,18}\.[0-9]{1,18}\.[0-9]{1,9}|c[0-9]{1,18}\.[0-9,]{0,2000})$")]
    pub cursor: Option<String>,
    /// Most events returned, 1–10000 (default 1000).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 10000)]
    pub limit: Option<String>,
    /// Seconds to wait for an event when there is none yet, 0–5 (default 0).
    #[param(value_type = Option<u32>, minimum = 0, maximum = 5)]
    pub wait: Option<String>,
}

/// One event of a tail read.
#[derive(Debug, Serialize, ToSchema)]
pub struct TailedEvent {
    /// Its stream.
    pub log_stream: String,
    /// Its own timestamp, ms since the epoch.
    pub timestamp: i64,
    /// The LogEvent as stored.
    #[schema(value_type = Object)]
    pub event: serde_json::Value,
}

/// Events read and where to go on from.
#[derive(Debug, Serialize, ToSchema)]
pub struct TailPage {
    /// Embedded sink: in the order they were stored; CloudWatch: oldest first.
    pub events: Vec<TailedEvent>,
    /// Pass as `cursor` to read what came after.
    pub cursor: String,
    /// False when the sink has no such group (or no such stream in it): nothing was ever written
    /// to it (or all of it expired). `engage logs tail` says so on stderr.
    pub group_found: bool,
}

/// Read a log group as it grows (either sink).
#[utoipa::path(
    get, path = "/v1/logs/tail", tag = "logs", params(TailParams),
    responses(
        (status = 200, description = "Events after the cursor (or since `since`), and the next cursor", body = TailPage),
        (status = 400, description = "INVALID_QUERY (a missing group, a bad number or a cursor this server did not give)", body = crate::error::ApiErrorBody),
        (status = 401, description = "UNAUTHORIZED (when JWT auth is configured)", body = crate::error::ApiErrorBody),
        (status = 429, description = "RATE_LIMITED, with Retry-After", body = crate::error::ApiErrorBody),
        (status = 503, description = "SINK_UNAVAILABLE: the log sink cannot be read now", body = crate::error::ApiErrorBody),
    ),
    security((), ("bearer" = []))
)]
pub async fn tail_logs(
    State(state): State<AppState>,
    _caller: LogCaller,
    query: Result<Query<TailParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<TailPage>, ApiError> {
    let Query(params) = query.map_err(|e| ApiError::invalid_query(e.body_text()))?;
    let group =
        params.log_group.filter(|g| !g.is_empty()).ok_or_else(|| ApiError::invalid_query("log_group is required"))?;
    let now = chrono::Utc::now().timestamp_millis();
    let since = number(params.since.as_deref(), "since", 0, i64::MAX)?.unwrap_or(now - DEFAULT_SINCE_MS);
    // what the retention dropped is not read, on a sink that keeps it a while longer
    let since = since.max(state.retention.cutoff_ms(&group, now).unwrap_or(i64::MIN));
    let limit = number(params.limit.as_deref(), "limit", 1, MAX_LIMIT as i64)?.unwrap_or(1000) as usize;
    let wait = number(params.wait.as_deref(), "wait", 0, MAX_WAIT_SECS as i64)?.unwrap_or(0) as u64;
    let request = TailRequest {
        group,
        stream: params.log_stream.filter(|s| !s.is_empty()),
        since_ms: since,
        filter: params.filter.filter(|f| !f.is_empty()),
        cursor: params.cursor.filter(|c| !c.is_empty()),
        limit,
        wait: Duration::from_secs(wait),
    };
    let answer = state.tail.read(request).await.map_err(|error| match error {
        TailError::BadCursor(_) => ApiError::invalid_query(error.to_string()),
        TailError::Unavailable(cause) => {
            tracing::warn!(%cause, "tail read failed");
            ApiError::sink_unavailable()
        }
    })?;
    let events = answer
        .events
        .into_iter()
        .map(|event| TailedEvent {
            log_stream: event.log_stream,
            timestamp: event.timestamp,
            event: serde_json::from_str(&event.message).unwrap_or(serde_json::Value::String(event.message)),
        })
        .collect();
    Ok(Json(TailPage { events, cursor: answer.cursor, group_found: answer.found }))
}

/// An optional integer query parameter within `min..=max`.
fn number(text: Option<&str>, name: &str, min: i64, max: i64) -> Result<Option<i64>, ApiError> {
    match text {
        None | Some("") => Ok(None),
        Some(text) => match text.trim().parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(ApiError::invalid_query(format!("{name} must be an integer from {min} to {max}"))),
        },
    }
}
