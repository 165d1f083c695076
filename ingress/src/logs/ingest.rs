//! `POST /v1/logs` and `POST /v1/logs/ingest`: parse, validate the whole request, write, answer.
//!
//! Answers (spec rules): 200 `{accepted}` when the log service took every event; 207
//! `{accepted, rejected, detail[]}` when it dropped some, one detail item per batch with drops;
//! 400 `ALL_REJECTED` when it dropped all; 500 `WRITE_FAILED` when the write failed for every
//! event. When a write fails for some batches of a request but others were stored, the answer is
//! 207 and the failed batch's detail `info` is `{"error": "WRITE_FAILED", ...}`: what was stored
//! is reported as stored, so a producer that retries only the rejected events duplicates nothing.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use utoipa::ToSchema;

use engage_storage::logs::{BatchReport, EventFate, SinkEvent, WriteReport};

use super::naming::{log_group, log_stream};
use super::otlp::{self, Encoding};
use super::schema::{LogIngestRequest, LogSchema};
use super::typed;
use super::write::{count_fates, guard_disk, log_refusal, read_body};
use crate::auth::LogCaller;
use crate::error::{ApiError, Issue};
use crate::state::AppState;

pub use super::schema::MAX_EVENTS_PER_REQUEST;

/// 200: every event was accepted.
#[derive(Debug, Serialize, ToSchema)]
pub struct LogIngestOk {
    /// Number of events stored.
    #[schema(minimum = 0)]
    pub accepted: usize,
}

/// 207: some events were dropped by the log service.
#[derive(Debug, Serialize, ToSchema)]
pub struct LogIngestPartial {
    /// Number of events stored.
    #[schema(minimum = 0)]
    pub accepted: usize,
    /// Number of events not stored.
    #[schema(minimum = 0)]
    pub rejected: usize,
    /// One item per batch with rejected events.
    pub detail: Vec<DetailItem>,
}

/// What the log service said about one batch.
#[derive(Debug, Serialize, ToSchema)]
pub struct DetailItem {
    /// Log group of the batch.
    pub log_group: String,
    /// Log stream of the batch.
    pub log_stream: String,
    /// Events of this request in the batch.
    #[schema(minimum = 0)]
    pub attempted: usize,
    /// Events of this request the log service dropped.
    #[schema(minimum = 0)]
    pub rejected: usize,
    /// Which of this request's events were dropped and why: `tooOldEventIndices`,
    /// `tooNewEventIndices`, `expiredEventIndices` (0-based positions in the request's array; a
    /// single-object request is index 0), or `{"error": "WRITE_FAILED", "message"}` when the batch
    /// could not be written.
    #[schema(value_type = Option<Object>)]
    pub info: Option<Value>,
}

/// Declares one of the two identical ingest routes with its OpenAPI description.
macro_rules! ingest_route {
    ($name:ident, $path:literal, $summary:literal) => {
        #[doc = $summary]
        #[utoipa::path(
            post, path = $path, tag = "logs",
            request_body(content = LogIngestRequest, content_type = "application/json",
                description = "One LogEvent or an array of 1-1000. `Content-Encoding: gzip` is accepted."),
            responses(
                (status = 200, description = "Every event accepted", body = LogIngestOk),
                (status = 207, description = "Some events dropped by the log service", body = LogIngestPartial),
                (status = 400, description = "INVALID_JSON, SCHEMA_VIOLATION, BATCH_TOO_LARGE or ALL_REJECTED", body = crate::error::ApiErrorBody),
                (status = 401, description = "UNAUTHORIZED (when JWT auth is configured)", body = crate::error::ApiErrorBody),
                (status = 413, description = "PAYLOAD_TOO_LARGE", body = crate::error::ApiErrorBody),
                (status = 429, description = "RATE_LIMITED, with Retry-After", body = crate::error::ApiErrorBody),
                (status = 500, description = "WRITE_FAILED", body = crate::error::ApiErrorBody),
                (status = 507, description = "DISK_FULL: the embedded log's disk is below ENGAGE_LOG_MIN_FREE_BYTES; nothing was written (Retry-After)", body = crate::error::ApiErrorBody),
            ),
            security((), ("bearer" = []))
        )]
        pub async fn $name(
            state: State<AppState>,
            caller: Result<LogCaller, ApiError>,
            headers: HeaderMap,
            body: Body,
        ) -> Result<Response, ApiError> {
            // an OTLP exporter pointed at the server's root posts protobuf here (`otlp.rs`)
            if Encoding::of(&headers) == Some(Encoding::Protobuf) {
                return Ok(otlp::export(&state, caller, Encoding::Protobuf, body).await);
            }
            ingest(state, caller?, body).await
        }
    };
}

ingest_route!(ingest_logs, "/v1/logs", "Ingest one LogEvent or an array of 1–1000.");
ingest_route!(ingest_logs_alias, "/v1/logs/ingest", "Identical to `POST /v1/logs`.");

async fn ingest(State(state): State<AppState>, caller: LogCaller, body: Body) -> Result<Response, ApiError> {
    let result = ingest_inner(&state, body).await;
    if let Err(error) = &result {
        metrics::counter!("engage_log_requests_failed_total", "error" => error.code()).increment(1);
        let reason = match error.issues().first() {
            Some(issue) => format!("{} {}: {} {}", error.code(), error.message(), issue.pointer, issue.message),
            None => format!("{} {}", error.code(), error.message()),
        };
        log_refusal(&caller.subject, "a JSON log request", &reason);
    }
    result
}

async fn ingest_inner(state: &AppState, body: Body) -> Result<Response, ApiError> {
    let bytes = read_body(body, state.settings.max_body_bytes).await?;
    let (org, max_event_bytes) = (&state.settings.log_org, state.settings.max_event_bytes);
    let events = match typed::sink_events(&bytes, &state.schema, org, max_event_bytes) {
        Some(events) => events,
        None => general_sink_events(&bytes, &state.schema, org, max_event_bytes)?,
    };
    let total = events.len();
    metrics::histogram!("engage_log_request_events").record(total as f64);
    guard_disk(state)?;
    let report = state.writer.write(events).await.map_err(|error| {
        tracing::error!(%error, "log writer unavailable");
        ApiError::write_failed()
    })?;
    answer(total, &report)
}

/// The general way from body to sink events: parse into a `Value`, validate it with the JSON
/// Schema (every problem named), check what the schema cannot. Requests the typed path
/// (`typed.rs`) is not sure of come here; its answer is the contract.
pub(super) fn general_sink_events(
    bytes: &[u8],
    schema: &LogSchema,
    org: &str,
    max_event_bytes: usize,
) -> Result<Vec<SinkEvent>, ApiError> {
    let request: Value =
        serde_json::from_slice(bytes).map_err(|e| ApiError::invalid_json(format!("the body is not JSON: {e}")))?;
    if let Value::Array(events) = &request {
        if events.len() > MAX_EVENTS_PER_REQUEST {
            return Err(ApiError::batch_too_large(events.len()));
        }
    }
    let issues = schema.issues(&request);
    if !issues.is_empty() {
        return Err(ApiError::schema_violation(issues));
    }
    let raw = raw_events(bytes, &request)?;
    to_sink_events(request, &raw, org, max_event_bytes)
}

/// Each event's own text in the body, in order: what is stored as its message, so that an event
/// is not serialised again from its parsed form (issue 13: that was a tenth of the 1000-event
/// profile). The body already parsed as `request`, so this second, allocation-free pass cannot
/// fail on valid input.
fn raw_events<'a>(bytes: &'a [u8], request: &Value) -> Result<Vec<&'a RawValue>, ApiError> {
    let parsed = if request.is_array() {
        serde_json::from_slice::<Vec<&RawValue>>(bytes)
    } else {
        serde_json::from_slice::<&RawValue>(bytes).map(|one| vec![one])
    };
    parsed.map_err(|e| ApiError::invalid_json(format!("the body is not JSON: {e}")))
}

/// Turns validated events into sink events: group, stream, timestamp and the message. Checks what
/// the schema cannot: timestamps within range and the per-event size limit.
///
/// The message is the event's JSON as the producer sent it (`raw`, one per event), byte for byte,
/// when it is on one line; an event sent across several lines (pretty-printed) is stored
/// compacted onto one, as CloudWatch shows one line per message.
fn to_sink_events(
    request: Value,
    raw: &[&RawValue],
    org: &str,
    max_event_bytes: usize,
) -> Result<Vec<SinkEvent>, ApiError> {
    let (events, pointer_prefix): (Vec<Value>, bool) = match request {
        Value::Array(events) => (events, true),
        single => (vec![single], false),
    };
    let mut issues = Vec::new();
    let mut out = Vec::with_capacity(events.len());
    for (index, event) in events.into_iter().enumerate() {
        let at = |field: &str| if pointer_prefix { format!("/{index}{field}") } else { field.to_owned() };
        let text = |name: &str| event.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
        let timestamp = text("timestamp");
        let Some(timestamp_ms) = chrono::DateTime::parse_from_rfc3339(&timestamp).ok().map(|t| t.timestamp_millis())
        else {
            issues.push(Issue {
                pointer: at("/timestamp"),
                message: format!("{timestamp:?} is not an RFC 3339 date-time"),
            });
            continue;
        };
        let message = match raw.get(index).map(|raw| raw.get()) {
            Some(text) if !text.contains(['\n', '\r']) => text.to_owned(),
            _ => event.to_string(),
        };
        if message.len() > max_event_bytes {
            issues.push(Issue {
                pointer: at(""),
                message: format!(
                    "the event is {} bytes as JSON; at most {max_event_bytes} are accepted",
                    message.len()
                ),
            });
            continue;
        }
        out.push(SinkEvent {
            group: log_group(org, &text("product"), &text("service")),
            stream: log_stream(&text("component"), timestamp_ms),
            timestamp_ms,
            message,
        });
    }
    if issues.is_empty() {
        Ok(out)
    } else {
        Err(ApiError::schema_violation(issues))
    }
}

/// Maps the write report to the spec's answer.
fn answer(total: usize, report: &WriteReport) -> Result<Response, ApiError> {
    let accepted = report.count(EventFate::Accepted);
    let failed = report.count(EventFate::Failed);
    let rejected = total - accepted;
    for batch in &report.batches {
        if let Some(cause) = &batch.error {
            // the request span carries the trace id
            tracing::warn!(group = %batch.group, stream = %batch.stream, events = batch.events.len(), %cause, "log write failed");
        }
    }
    count_fates(report);
    if failed > 0 && accepted == 0 {
        return Err(ApiError::write_failed());
    }
    if rejected == 0 {
        return Ok((StatusCode::OK, Json(LogIngestOk { accepted })).into_response());
    }
    if accepted == 0 {
        let (too_old, expired) = (report.count(EventFate::TooOld), report.count(EventFate::Expired));
        let too_new = report.count(EventFate::TooNew);
        return Err(ApiError::all_rejected(format!(
            "the log service dropped all {total} events ({too_old} too old: older than 14 days; {expired} expired: older than their group's retention; {too_new} too new: more than 2 hours ahead)"
        )));
    }
    let detail = report.batches.iter().filter_map(detail_item).collect();
    Ok((StatusCode::MULTI_STATUS, Json(LogIngestPartial { accepted, rejected, detail })).into_response())
}

fn detail_item(batch: &BatchReport) -> Option<DetailItem> {
    let rejected = batch.events.iter().filter(|(_, fate)| *fate != EventFate::Accepted).count();
    if rejected == 0 {
        return None;
    }
    let info = if batch.error.is_some() {
        json!({"error": "WRITE_FAILED", "message": "this batch could not be written to the log service"})
    } else {
        let indices = |wanted: EventFate| -> Vec<usize> {
            let mut list: Vec<usize> = batch.events.iter().filter(|(_, f)| *f == wanted).map(|(i, _)| *i).collect();
            list.sort_unstable();
            list
        };
        let mut info = serde_json::Map::new();
        for (key, fate) in [
            ("tooOldEventIndices", EventFate::TooOld),
            ("tooNewEventIndices", EventFate::TooNew),
            ("expiredEventIndices", EventFate::Expired),
        ] {
            let list = indices(fate);
            if !list.is_empty() {
                info.insert(key.to_owned(), json!(list));
            }
        }
        Value::Object(info)
    };
    Some(DetailItem {
        log_group: batch.group.clone(),
        log_stream: batch.stream.clone(),
        attempted: batch.events.len(),
        rejected,
        info: Some(info),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE_LINE: &str = r#"{"timestamp": "2026-11-21T10:00:00Z", "level":"INFO","product":"edge","service":"api","component":"web","message":"caf\u00e9 \"quoted\""}"#;

    fn sink_events(body: &str) -> Vec<SinkEvent> {
        let request: Value = serde_json::from_str(body).unwrap();
        let raw = raw_events(body.as_bytes(), &request).unwrap();
        to_sink_events(request, &raw, "org", 256 * 1024).unwrap()
    }

    #[test]
    fn the_message_is_the_event_as_sent() {
        let events = sink_events(ONE_LINE);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].message, ONE_LINE, "spacing and escapes are kept byte for byte");
        let array = format!("[ {ONE_LINE} ,\n{ONE_LINE}]");
        let events = sink_events(&array);
        assert_eq!(events.iter().map(|e| e.message.as_str()).collect::<Vec<_>>(), vec![ONE_LINE, ONE_LINE]);
    }

    #[test]
    fn a_pretty_printed_event_is_stored_on_one_line() {
        let value: Value = serde_json::from_str(ONE_LINE).unwrap();
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let events = sink_events(&pretty);
        assert_eq!(events[0].message, value.to_string());
        assert!(!events[0].message.contains('\n'));
    }
}
