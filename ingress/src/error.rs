//! `ApiError`, the error family of the log ingestion service: `{error, message, issues}`.
//!
//! Bad input keeps its status and a message that says what to fix; internal failures answer a
//! plain message and the cause goes to the log only.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

/// One schema-validation problem.
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct Issue {
    /// JSON pointer of the offending value in the request body, e.g. `/3/level` (for a missing
    /// property: where it should be).
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

/// The body of every error answer of the log service.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ApiErrorBody {
    /// Stable machine-readable code, e.g. `SCHEMA_VIOLATION`.
    pub error: &'static str,
    /// Human-readable hint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Schema-validation issues, present on `SCHEMA_VIOLATION`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issues: Option<Vec<Issue>>,
}

/// An error answer: status, body and the headers some codes need.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: ApiErrorBody,
    retry_after_secs: Option<u64>,
    bearer_challenge: bool,
}

impl ApiError {
    fn new(status: StatusCode, error: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            body: ApiErrorBody { error, message: Some(message.into()), issues: None },
            retry_after_secs: None,
            bearer_challenge: false,
        }
    }

    /// 400 `INVALID_JSON`: the body is not parseable JSON.
    pub fn invalid_json(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_JSON", message)
    }

    /// 400 `SCHEMA_VIOLATION` with one issue per problem.
    pub fn schema_violation(issues: Vec<Issue>) -> Self {
        let mut error = Self::new(
            StatusCode::BAD_REQUEST,
            "SCHEMA_VIOLATION",
            format!("the request fails the LogIngestRequest schema ({} issue(s))", issues.len()),
        );
        error.body.issues = Some(issues);
        error
    }

    /// 400 `BATCH_TOO_LARGE`: an array of more than 1000 events; nothing was written.
    pub fn batch_too_large(len: usize) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "BATCH_TOO_LARGE",
            format!("{len} events in one request; at most 1000 are accepted and none was written"),
        )
    }

    /// 413 `PAYLOAD_TOO_LARGE`.
    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE", format!("the body exceeds {limit} bytes"))
    }

    /// 400 `ALL_REJECTED`: the log service dropped every event.
    pub fn all_rejected(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "ALL_REJECTED", message)
    }

    /// 500 `WRITE_FAILED`: the write to the log service failed.
    pub fn write_failed() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "WRITE_FAILED",
            "the write to the log service failed; no event of this request was stored",
        )
    }

    /// 401 `UNAUTHORIZED` with `WWW-Authenticate: Bearer`.
    pub fn unauthorized(reason: &str) -> Self {
        let mut error =
            Self::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", format!("a valid bearer token is required: {reason}"));
        error.bearer_challenge = true;
        error
    }

    /// 429 `RATE_LIMITED` with `Retry-After`.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        let mut error = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "RATE_LIMITED",
            format!("too many requests; retry after {retry_after_secs} s"),
        );
        error.retry_after_secs = Some(retry_after_secs);
        error
    }

    /// 400 `INVALID_QUERY`: a bad query string on a read route.
    pub fn invalid_query(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_QUERY", message)
    }

    /// 400 `UNSUPPORTED_SINK`: reading back needs the embedded sink.
    pub fn unsupported_sink() -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "UNSUPPORTED_SINK",
            "events are read back from the embedded sink only; this server writes to CloudWatch Logs",
        )
    }

    /// 503 `SINK_UNAVAILABLE`: the log sink cannot be read now (the cause is logged).
    pub fn sink_unavailable() -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "SINK_UNAVAILABLE", "the log sink cannot be read now; try again")
    }

    /// 503 `WRITE_FAILED` with `Retry-After`: the sink write failed and sending again is safe
    /// (the OTLP input's answer: its exporters retry a 503, not a 500).
    pub fn sink_write_failed() -> Self {
        let mut error = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "WRITE_FAILED",
            "the write to the log service failed; no record of this export was stored; send it again",
        );
        error.retry_after_secs = Some(1);
        error
    }

    /// 507 `DISK_FULL`: the embedded log's disk is below its free-space threshold; nothing of the
    /// request was written.
    pub fn disk_full(low: &engage_storage::logs::disk::LowDisk) -> Self {
        let mut error = Self::new(
            StatusCode::INSUFFICIENT_STORAGE,
            "DISK_FULL",
            format!("{low}: nothing of this request was written; send it again once space is freed (the retention deletes old segments)"),
        );
        error.retry_after_secs = Some(30);
        error
    }

    /// 400 `INVALID_OTLP`: the body is not an OTLP protobuf message.
    pub fn invalid_otlp(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_OTLP", message)
    }

    /// 415 `UNSUPPORTED_MEDIA_TYPE`.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE", message)
    }

    /// 405 `METHOD_NOT_ALLOWED`.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", message)
    }

    /// 404 `NOT_FOUND`.
    pub fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, "NOT_FOUND", "no such route")
    }

    /// 500 `INTERNAL`: the cause is logged, not sent.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(%cause, "internal error");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", "internal error; see the server log for this trace id")
    }

    /// The error code.
    pub fn code(&self) -> &'static str {
        self.body.error
    }

    /// The same error as a 503 with `Retry-After` (the status OTLP exporters retry).
    pub fn as_unavailable(mut self) -> Self {
        self.status = StatusCode::SERVICE_UNAVAILABLE;
        self.retry_after_secs.get_or_insert(1);
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The human-readable hint.
    pub fn message(&self) -> &str {
        self.body.message.as_deref().unwrap_or_default()
    }

    /// The schema-validation issues (empty unless `SCHEMA_VIOLATION`).
    pub fn issues(&self) -> &[Issue] {
        self.body.issues.as_deref().unwrap_or_default()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body)).into_response();
        if self.bearer_challenge {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(secs) = self.retry_after_secs {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
