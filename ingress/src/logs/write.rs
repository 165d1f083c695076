//! What both log inputs (`ingest.rs`, the JSON route; `otlp.rs`) do alike around a write:
//! read the body within its limit, ask the disk guard, count each event's fate, log a refusal.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use axum::body::{Body, Bytes};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use engage_storage::logs::WriteReport;

use crate::error::ApiError;
use crate::state::AppState;

/// Reads the (already decompressed) body, refusing more than `limit` bytes.
pub(super) async fn read_body(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => Err(ApiError::payload_too_large(limit)),
        Err(error) => Err(ApiError::invalid_json(format!("the body could not be read: {error}"))),
    }
}

/// Refuses a write while the embedded log's disk is below its free-space threshold (507).
pub(super) fn guard_disk(state: &AppState) -> Result<(), ApiError> {
    match &state.disk {
        Some(guard) => guard.check().map_err(|low| ApiError::disk_full(&low)),
        None => Ok(()),
    }
}

/// Counts each event's fate in `engage_log_events_total`.
pub(super) fn count_fates(report: &WriteReport) {
    for batch in &report.batches {
        for (_, fate) in &batch.events {
            metrics::counter!("engage_log_events_total", "outcome" => fate.reason()).increment(1);
        }
    }
}

/// Longest reason written in one refusal line.
const MAX_LOGGED_REASON: usize = 500;

/// Logs why records were refused, with the first reason: at most one line a second for the whole
/// process (a producer sending the same bad record in a loop does not flood the log); the lines
/// left out are counted in the next one's `suppressed`.
/// `refused` says what was refused ("2 of 5 OTLP records", "a /v1/logs request").
pub(super) fn log_refusal(subject: &str, refused: &str, reason: &str) {
    static LAST_SECOND: AtomicI64 = AtomicI64::new(i64::MIN);
    static SUPPRESSED: AtomicU64 = AtomicU64::new(0);
    let second = chrono::Utc::now().timestamp();
    let last = LAST_SECOND.load(Ordering::Relaxed);
    if last >= second || LAST_SECOND.compare_exchange(last, second, Ordering::Relaxed, Ordering::Relaxed).is_err() {
        SUPPRESSED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let suppressed = SUPPRESSED.swap(0, Ordering::Relaxed);
    let reason: String = match reason.char_indices().nth(MAX_LOGGED_REASON) {
        Some((cut, _)) => format!("{}…", &reason[..cut]),
        None => reason.to_owned(),
    };
    tracing::info!(subject, refused, %reason, suppressed, "log records refused");
}
