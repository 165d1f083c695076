//! `GET /v1/logs/usage`: the disk the embedded log takes, the oldest event it still serves, the
//! retention and the disk guard's figures (`engage logs usage` prints them).

use axum::extract::State;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use engage_config::LogSinkKind;

use crate::auth::LogCaller;
use crate::error::ApiError;
use crate::state::AppState;

/// What `GET /v1/logs/usage` answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct LogUsage {
    /// `embedded` or `cloudwatch`.
    pub sink: &'static str,
    /// Days events are kept unless a group's own setting says otherwise (0: forever).
    pub retention_days: u32,
    /// The per-group settings, as configured (`ENGAGE_LOG_RETENTION_BY_GROUP`).
    pub retention_by_group: Option<String>,
    /// Bytes of the embedded log's segment files (null on CloudWatch).
    pub disk_bytes: Option<u64>,
    /// Segment files (null on CloudWatch).
    pub segments: Option<u64>,
    /// The oldest event still read back, RFC 3339 (null when none, or on CloudWatch).
    pub oldest_event: Option<String>,
    /// Bytes free on the log directory's filesystem (null on CloudWatch).
    pub free_bytes: Option<u64>,
    /// Below this many free bytes the log routes answer 507 (0: no guard).
    pub min_free_bytes: Option<u64>,
}

/// The log sink's disk use and retention.
#[utoipa::path(
    get, path = "/v1/logs/usage", tag = "logs",
    responses(
        (status = 200, description = "Disk use, oldest event kept, retention", body = LogUsage),
        (status = 401, description = "UNAUTHORIZED (when JWT auth is configured)", body = crate::error::ApiErrorBody),
        (status = 429, description = "RATE_LIMITED, with Retry-After", body = crate::error::ApiErrorBody),
    ),
    security((), ("bearer" = []))
)]
pub async fn log_usage(State(state): State<AppState>, _caller: LogCaller) -> Result<Json<LogUsage>, ApiError> {
    let settings = &state.settings;
    let mut usage = LogUsage {
        sink: match settings.log_sink {
            LogSinkKind::Embedded => "embedded",
            LogSinkKind::Cloudwatch => "cloudwatch",
        },
        retention_days: settings.log_retention_days,
        retention_by_group: settings.log_retention_by_group.clone(),
        disk_bytes: None,
        segments: None,
        oldest_event: None,
        free_bytes: None,
        min_free_bytes: None,
    };
    if let (LogSinkKind::Embedded, Some(log)) = (settings.log_sink, state.logs.segments.clone()) {
        let retention = state.retention.clone();
        let now = chrono::Utc::now().timestamp_millis();
        let found = tokio::task::spawn_blocking(move || log.usage(&retention, now))
            .await
            .map_err(ApiError::internal)?
            .map_err(ApiError::internal)?;
        usage.disk_bytes = Some(found.bytes);
        usage.segments = Some(found.segments);
        usage.oldest_event = found
            .oldest_ms
            .and_then(chrono::DateTime::from_timestamp_millis)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
        usage.free_bytes = state.disk.as_ref().and_then(|guard| guard.free_bytes().ok());
        usage.min_free_bytes = Some(settings.log_min_free_bytes);
    }
    Ok(Json(usage))
}
