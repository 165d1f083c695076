//! Log sinks: where accepted log events are written.
//!
//! Requests hand their events to a [`LogWriter`]. The writer coalesces concurrent requests,
//! groups their events by (log group, log stream), sorts each group by timestamp, splits it into
//! [`Chunk`]s within the PutLogEvents limits ([`batching`]) and passes the chunks to a
//! [`LogBackend`]. What the backend says about each chunk ([`Rejected`] indices, or a failure) is
//! mapped back to every waiting request's own events, so each producer gets an exact answer.

pub mod batching;
pub mod cloudwatch;
pub mod disk;
pub mod embedded;
pub mod segments;
pub mod tail;
mod writer;

pub use batching::Chunk;
pub use writer::{LogWriter, WriterConfig};

use async_trait::async_trait;
use serde::Serialize;

/// Milliseconds in 14 days: CloudWatch rejects events older than this.
pub const MAX_AGE_MS: i64 = 14 * 24 * 3600 * 1000;
/// Milliseconds in 2 hours: CloudWatch rejects events further ahead than this.
pub const MAX_AHEAD_MS: i64 = 2 * 3600 * 1000;

/// One event as handed to a sink.
#[derive(Clone, Debug)]
pub struct SinkEvent {
    /// Log group, e.g. `/logs/org/edge/api`.
    pub group: String,
    /// Log stream within the group.
    pub stream: String,
    /// The event's own timestamp, in milliseconds since the epoch.
    pub timestamp_ms: i64,
    /// The message written: the LogEvent as JSON.
    pub message: String,
}

/// What happened to one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventFate {
    /// Stored by the log service.
    Accepted,
    /// Dropped by the log service: older than it accepts.
    TooOld,
    /// Dropped by the log service: further in the future than it accepts.
    TooNew,
    /// Dropped by the log service: older than the group's retention.
    Expired,
    /// Not written: the write call failed (after retries).
    Failed,
}

impl EventFate {
    /// The `reason` label used in metrics.
    pub fn reason(self) -> &'static str {
        match self {
            EventFate::Accepted => "accepted",
            EventFate::TooOld => "too_old",
            EventFate::TooNew => "too_new",
            EventFate::Expired => "expired",
            EventFate::Failed => "write_failed",
        }
    }
}

/// The `rejectedLogEventsInfo` of one PutLogEvents call, as the service returned it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Rejected {
    /// Index of the first event that is too new (inclusive).
    #[serde(rename = "tooNewLogEventStartIndex", skip_serializing_if = "Option::is_none")]
    pub too_new_start: Option<usize>,
    /// Index bounding the events that are too old (see [`Rejected::fates`]).
    #[serde(rename = "tooOldLogEventEndIndex", skip_serializing_if = "Option::is_none")]
    pub too_old_end: Option<usize>,
    /// Index bounding the events older than the retention period.
    #[serde(rename = "expiredLogEventEndIndex", skip_serializing_if = "Option::is_none")]
    pub expired_end: Option<usize>,
}

impl Rejected {
    /// Maps the indices back to one fate per event of the chunk (events sorted by timestamp).
    ///
    /// AWS documents `tooOldLogEventEndIndex` as exclusive, while some implementations (moto)
    /// return the index of the last too-old event. Events below the index are too old either way;
    /// the event *at* the index is judged by its own timestamp against the 14-day window, which is
    /// what the service applied. The same holds for `expiredLogEventEndIndex`, where the event at
    /// the index counts as expired when its timestamp equals or precedes the last one below it.
    pub fn fates(&self, timestamps: &[i64], now_ms: i64) -> Vec<EventFate> {
        let mut fates = vec![EventFate::Accepted; timestamps.len()];
        let apply_end = |fates: &mut Vec<EventFate>, end: usize, fate: EventFate, at_end: bool| {
            for fate_slot in fates.iter_mut().take(end.min(timestamps.len())) {
                *fate_slot = fate;
            }
            if at_end && end < timestamps.len() {
                fates[end] = fate;
            }
        };
        if let Some(end) = self.expired_end {
            let at_end = end < timestamps.len() && (end == 0 || timestamps[end] <= timestamps[end - 1]);
            apply_end(&mut fates, end, EventFate::Expired, at_end);
        }
        if let Some(end) = self.too_old_end {
            let at_end = end < timestamps.len() && timestamps[end] < now_ms - MAX_AGE_MS;
            apply_end(&mut fates, end, EventFate::TooOld, at_end);
        }
        if let Some(start) = self.too_new_start {
            for fate in fates.iter_mut().skip(start) {
                *fate = EventFate::TooNew;
            }
        }
        fates
    }
}

/// Why a backend call failed.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// Throttling, a 5xx or a connection problem: worth retrying.
    #[error("retryable: {0}")]
    Retryable(String),
    /// Anything else; retrying will not help.
    #[error("{0}")]
    Fatal(String),
}

/// Where chunks are finally written.
#[async_trait]
pub trait LogBackend: Send + Sync + 'static {
    /// Short name for logs and metrics (`embedded`, `cloudwatch`).
    fn name(&self) -> &'static str;

    /// Writes every chunk; returns one result per chunk, in order. Each chunk's events are sorted
    /// by timestamp and lie within the PutLogEvents limits. A backend retries what is worth
    /// retrying itself; an `Err` is final for that chunk.
    async fn put_chunks(&self, chunks: &[Chunk]) -> Vec<Result<Rejected, BackendError>>;
}

/// What happened to the events of one request within one chunk.
#[derive(Clone, Debug)]
pub struct BatchReport {
    /// Log group of the chunk.
    pub group: String,
    /// Log stream of the chunk.
    pub stream: String,
    /// The request's events in this chunk: (index in the request, fate).
    pub events: Vec<(usize, EventFate)>,
    /// The failure message when the chunk could not be written.
    pub error: Option<String>,
}

/// The outcome of one request's write: one report per chunk it had events in.
#[derive(Clone, Debug, Default)]
pub struct WriteReport {
    /// Per-chunk reports.
    pub batches: Vec<BatchReport>,
}

impl WriteReport {
    /// Number of events with the given fate.
    pub fn count(&self, fate: EventFate) -> usize {
        self.batches.iter().flat_map(|b| &b.events).filter(|(_, f)| *f == fate).count()
    }
}

/// Current time in milliseconds since the epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    #[test]
    fn too_old_index_is_read_either_way() {
        let old = NOW - MAX_AGE_MS - 1000;
        let ts = [old, old, NOW, NOW];
        // exclusive reading (AWS documentation)
        let exclusive = Rejected { too_old_end: Some(2), ..Default::default() };
        // inclusive reading (moto)
        let inclusive = Rejected { too_old_end: Some(1), ..Default::default() };
        let expected = vec![EventFate::TooOld, EventFate::TooOld, EventFate::Accepted, EventFate::Accepted];
        assert_eq!(exclusive.fates(&ts, NOW), expected);
        assert_eq!(inclusive.fates(&ts, NOW), expected);
    }

    #[test]
    fn too_new_start_is_inclusive() {
        let ts = [NOW, NOW + MAX_AHEAD_MS + 5, NOW + MAX_AHEAD_MS + 6];
        let r = Rejected { too_new_start: Some(1), ..Default::default() };
        assert_eq!(r.fates(&ts, NOW), vec![EventFate::Accepted, EventFate::TooNew, EventFate::TooNew]);
    }
}
