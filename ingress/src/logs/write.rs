//! What both log inputs (`ingest.rs`, the JSON route; `otlp.rs`) do alike around a write:
//! read the body within its limit, ask the disk guard, count each event's fate.

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
