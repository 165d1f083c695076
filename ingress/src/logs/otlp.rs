//! `POST /otlp/v1/logs`: the OTLP/HTTP logs input (issue 43; `docs/otlp.md`).
//!
//! An unmodified OpenTelemetry exporter works with only its endpoint set:
//! `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=http://HOST:PORT/otlp/v1/logs`, or
//! `OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:PORT/otlp` (the exporter appends `/v1/logs`). A
//! protobuf export sent to `POST /v1/logs` itself (`OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:PORT`)
//! is answered here too.
//!
//! Bodies: `application/x-protobuf` or `application/json` (OTLP/JSON), `Content-Encoding: gzip`
//! accepted. Records become LogEvents (`otlp_map.rs`) checked with the JSON route's rules and
//! written to the same sink. Answers, as the OTLP specification says: 200 with an
//! `ExportLogsServiceResponse` in the request's encoding, whose `partial_success` counts the
//! records refused (invalid, or dropped by the log service) and names the first problems; errors
//! carry a `google.rpc.Status` (JSON: `{code, message, error}`, `error` being engage's code): 400
//! undecodable, 401 the JWT rules of `/v1/logs`, 413, 415, 429 with `Retry-After`, and 503 with
//! `Retry-After` when the sink write failed (retryable, so the exporter sends the batch again).

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use prost::Message;
use serde_json::json;

use engage_storage::logs::EventFate;

use super::otlp_map::{map_request, Mapped};
use super::write::{count_fates, guard_disk, log_refusal, read_body};
use crate::auth::LogCaller;
use crate::error::ApiError;
use crate::state::AppState;

/// The two OTLP/HTTP encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// `application/x-protobuf`
    Protobuf,
    /// `application/json`
    Json,
}

impl Encoding {
    /// The encoding a `Content-Type` names.
    pub fn of(headers: &HeaderMap) -> Option<Self> {
        Self::of_content_type(headers.get(CONTENT_TYPE)?)
    }

    /// The encoding a `Content-Type` value names.
    pub fn of_content_type(value: &HeaderValue) -> Option<Self> {
        let media = value.to_str().ok()?.split(';').next().unwrap_or_default().trim();
        if media.eq_ignore_ascii_case("application/x-protobuf") || media.eq_ignore_ascii_case("application/protobuf") {
            Some(Self::Protobuf)
        } else if media.eq_ignore_ascii_case("application/json") {
            Some(Self::Json)
        } else {
            None
        }
    }

    fn content_type(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            Self::Protobuf => "application/x-protobuf",
            Self::Json => "application/json",
        })
    }
}

/// `google.rpc.Status`, the body of an OTLP error answer.
#[derive(Clone, PartialEq, Message)]
struct Status {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

/// `POST /otlp/v1/logs`.
pub async fn export_logs(
    State(state): State<AppState>,
    caller: Result<LogCaller, ApiError>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let Some(encoding) = Encoding::of(&headers) else {
        let error = ApiError::unsupported_media_type("an OTLP export is application/x-protobuf or application/json");
        return status_answer(error, Encoding::Json);
    };
    export(&state, caller, encoding, body).await
}

/// Reads, maps, writes and answers one export (also called by `POST /v1/logs` for protobuf).
pub async fn export(state: &AppState, caller: Result<LogCaller, ApiError>, encoding: Encoding, body: Body) -> Response {
    match export_inner(state, caller, encoding, body).await {
        Ok(response) => response,
        Err(error) => {
            metrics::counter!("engage_log_requests_failed_total", "error" => error.code()).increment(1);
            status_answer(error, encoding)
        }
    }
}

async fn export_inner(
    state: &AppState,
    caller: Result<LogCaller, ApiError>,
    encoding: Encoding,
    body: Body,
) -> Result<Response, ApiError> {
    let caller = caller?;
    let bytes = read_body(body, state.settings.max_body_bytes).await?;
    let request = decode(&bytes, encoding)?;
    let now = u64::try_from(chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default()).unwrap_or_default();
    let (org, max_event_bytes) = (&state.settings.log_org, state.settings.max_event_bytes);
    let Mapped { events, origins, invalid, mut problems, total } =
        map_request(&request, &state.schema, org, max_event_bytes, now);
    metrics::histogram!("engage_log_request_events").record(total as f64);
    metrics::counter!("engage_log_events_total", "outcome" => "invalid").increment(invalid as u64);
    if invalid > 0 {
        let reason = problems.first().map_or("", String::as_str);
        log_refusal(&caller.subject, &format!("{invalid} of {total} OTLP records"), reason);
    }
    let mut accepted = 0;
    if !events.is_empty() {
        // an exporter retries a 503, not a 507: the disk guard answers 503 here
        guard_disk(state).map_err(ApiError::as_unavailable)?;
        let written = events.len();
        let report = state.writer.write(events).await.map_err(|error| {
            tracing::error!(%error, "log writer unavailable");
            ApiError::sink_write_failed()
        })?;
        count_fates(&report);
        accepted = report.count(EventFate::Accepted);
        if accepted == 0 && report.count(EventFate::Failed) == written {
            return Err(ApiError::sink_write_failed());
        }
        for batch in &report.batches {
            for (index, fate) in batch.events.iter().filter(|(_, fate)| *fate != EventFate::Accepted) {
                if problems.len() < 10 {
                    let origin = origins.get(*index).map_or_else(|| "a record".to_owned(), ToString::to_string);
                    problems.push(format!("{origin}: {}", dropped_because(*fate)));
                }
            }
        }
    }
    let rejected = total - accepted;
    let message = match rejected {
        0 => String::new(),
        _ if rejected > problems.len() => format!("{} (and {} more)", problems.join("; "), rejected - problems.len()),
        _ => problems.join("; "),
    };
    Ok(success(encoding, rejected, message))
}

fn decode(bytes: &Bytes, encoding: Encoding) -> Result<ExportLogsServiceRequest, ApiError> {
    match encoding {
        Encoding::Protobuf => ExportLogsServiceRequest::decode(bytes.as_ref())
            .map_err(|e| ApiError::invalid_otlp(format!("the body is not an OTLP ExportLogsServiceRequest: {e}"))),
        Encoding::Json => super::otlp_json::decode(bytes)
            .map_err(|e| ApiError::invalid_json(format!("the body is not an OTLP/JSON ExportLogsServiceRequest: {e}"))),
    }
}

fn dropped_because(fate: EventFate) -> &'static str {
    match fate {
        EventFate::TooOld => "dropped by the log service: older than 14 days",
        EventFate::TooNew => "dropped by the log service: more than 2 hours ahead",
        EventFate::Expired => "dropped by the log service: older than the group's retention",
        EventFate::Failed => "not written: the log service write failed",
        EventFate::Accepted => "accepted",
    }
}

/// 200 with an `ExportLogsServiceResponse`; `partial_success` only when something was refused.
fn success(encoding: Encoding, rejected: usize, message: String) -> Response {
    use opentelemetry_proto::tonic::collector::logs::v1::{ExportLogsPartialSuccess, ExportLogsServiceResponse};
    let partial = (rejected > 0)
        .then_some(ExportLogsPartialSuccess { rejected_log_records: rejected as i64, error_message: message });
    let body = match encoding {
        Encoding::Protobuf => ExportLogsServiceResponse { partial_success: partial }.encode_to_vec(),
        Encoding::Json => match partial {
            Some(p) => json!({"partialSuccess": {"rejectedLogRecords": p.rejected_log_records, "errorMessage": p.error_message}}),
            None => json!({}),
        }
        .to_string()
        .into_bytes(),
    };
    (StatusCode::OK, [(CONTENT_TYPE, encoding.content_type())], body).into_response()
}

/// A bare 405 or 415 of the OTLP route (axum's, or the decompression layer's) as an OTLP error
/// answer in the request's encoding.
pub fn refusal(status: StatusCode, message: &str, encoding: Encoding) -> Response {
    let error = if status == StatusCode::METHOD_NOT_ALLOWED {
        ApiError::method_not_allowed(message)
    } else {
        ApiError::unsupported_media_type(message)
    };
    status_answer(error, encoding)
}

/// An error answer in the request's encoding, keeping the status and headers (`Retry-After`,
/// `WWW-Authenticate`) of the ApiError it stands for.
fn status_answer(error: ApiError, encoding: Encoding) -> Response {
    let code = grpc_code(error.status());
    let (engage_code, message) = (error.code(), error.message().to_owned());
    let mut response = error.into_response();
    let body = match encoding {
        Encoding::Protobuf => Status { code, message }.encode_to_vec(),
        Encoding::Json => json!({"code": code, "message": message, "error": engage_code}).to_string().into_bytes(),
    };
    if response.status() == StatusCode::SERVICE_UNAVAILABLE && !response.headers().contains_key(RETRY_AFTER) {
        response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(1));
    }
    response.headers_mut().insert(CONTENT_TYPE, encoding.content_type());
    response.headers_mut().remove(axum::http::header::CONTENT_LENGTH);
    *response.body_mut() = Body::from(body);
    response
}

/// The `google.rpc.Code` of an HTTP status, as the OTLP specification pairs them.
fn grpc_code(status: StatusCode) -> i32 {
    match status.as_u16() {
        400 | 413 | 415 => 3, // INVALID_ARGUMENT
        405 => 12,            // UNIMPLEMENTED
        401 => 16,            // UNAUTHENTICATED
        403 => 7,             // PERMISSION_DENIED
        404 => 5,             // NOT_FOUND
        429 => 8,             // RESOURCE_EXHAUSTED
        503 => 14,            // UNAVAILABLE
        _ => 13,              // INTERNAL
    }
}
