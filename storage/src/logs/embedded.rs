//! The embedded log sink: events stored durably in the embedded store, under CloudWatch's time
//! window (older than 14 days or more than 2 hours ahead is rejected), so that 207 answers behave
//! the same without AWS.
//!
//! Tables: `log_events`, partition `<group>\x1f<stream>`, clustering [`time_key`] (timestamp then a
//! sequence number), value the message; `log_streams`, partition the group, clustering the stream
//! name, so that a group's streams can be listed. Streams are named per UTC day by the ingress, so
//! each `log_events` partition holds one day of one component.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;

use super::{now_ms, BackendError, Chunk, LogBackend, Rejected, MAX_AGE_MS, MAX_AHEAD_MS};
use crate::store::{time_key, time_key_timestamp, Store, StoreError, WriteOp};

const EVENTS: &str = "log_events";
const STREAMS: &str = "log_streams";

/// Writes chunks to a [`Store`].
pub struct EmbeddedLogBackend {
    store: Arc<dyn Store>,
    /// Tie-breaker for events with equal timestamps; starts at the wall clock in nanoseconds so
    /// that it keeps increasing across restarts.
    seq: AtomicU64,
}

impl EmbeddedLogBackend {
    /// A backend over `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        let start = chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default().max(0) as u64;
        Self { store, seq: AtomicU64::new(start) }
    }
}

/// The window check CloudWatch applies, as indices over timestamp-sorted events.
pub fn window_rejections(timestamps: &[i64], now_ms: i64) -> Rejected {
    let too_old = timestamps.iter().take_while(|ts| **ts < now_ms - MAX_AGE_MS).count();
    let too_new_start = timestamps.iter().position(|ts| *ts > now_ms + MAX_AHEAD_MS);
    Rejected { too_old_end: (too_old > 0).then_some(too_old), too_new_start, expired_end: None }
}

fn events_partition(group: &str, stream: &str) -> String {
    format!("{group}\u{1f}{stream}")
}

#[async_trait]
impl LogBackend for EmbeddedLogBackend {
    fn name(&self) -> &'static str {
        "embedded"
    }

    async fn put_chunks(&self, chunks: &[Chunk]) -> Vec<Result<Rejected, BackendError>> {
        let now = now_ms();
        let mut ops = Vec::new();
        let mut rejections = Vec::with_capacity(chunks.len());
        for chunk in chunks {
            let timestamps: Vec<i64> = chunk.events.iter().map(|(ts, _)| *ts).collect();
            let rejected = window_rejections(&timestamps, now);
            let end = rejected.too_new_start.unwrap_or(timestamps.len());
            let start = rejected.too_old_end.unwrap_or(0);
            if start < end {
                ops.push(WriteOp::Put {
                    table: STREAMS,
                    partition: chunk.group.clone(),
                    clustering: chunk.stream.as_bytes().to_vec(),
                    value: Vec::new(),
                });
            }
            let partition = events_partition(&chunk.group, &chunk.stream);
            for (ts, message) in &chunk.events[start.min(end)..end] {
                let seq = self.seq.fetch_add(1, Ordering::Relaxed);
                ops.push(WriteOp::Put {
                    table: EVENTS,
                    partition: partition.clone(),
                    clustering: time_key(*ts, seq),
                    value: message.as_bytes().to_vec(),
                });
            }
            rejections.push(rejected);
        }
        match self.store.batch(ops).await {
            Ok(()) => rejections.into_iter().map(Ok).collect(),
            Err(error) => chunks.iter().map(|_| Err(BackendError::Fatal(error.to_string()))).collect(),
        }
    }
}

/// One stored event, as read back.
#[derive(Clone, Debug, Serialize)]
pub struct StoredEvent {
    /// The stream it was written to.
    pub log_stream: String,
    /// Its timestamp in milliseconds since the epoch.
    pub timestamp: i64,
    /// The LogEvent as written (parsed back into JSON).
    pub event: serde_json::Value,
}

/// Reads up to `limit` events of a group (one stream, or every stream), oldest first.
pub async fn read_events(
    store: &dyn Store,
    group: &str,
    stream: Option<&str>,
    limit: usize,
) -> Result<Vec<StoredEvent>, StoreError> {
    let streams: Vec<String> = match stream {
        Some(stream) => vec![stream.to_owned()],
        None => {
            let mut names = Vec::new();
            let mut after: Option<Vec<u8>> = None;
            loop {
                let page = store.scan(STREAMS, group, after.as_deref(), 1000).await?;
                let Some(last) = page.last() else { break };
                after = Some(last.clustering.clone());
                names.extend(page.into_iter().map(|row| String::from_utf8_lossy(&row.clustering).into_owned()));
            }
            names
        }
    };
    let mut all = Vec::new();
    for name in streams {
        for row in store.scan(EVENTS, &events_partition(group, &name), None, limit).await? {
            all.push((row.clustering, name.clone(), row.value));
        }
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all.truncate(limit);
    Ok(all
        .into_iter()
        .map(|(key, log_stream, value)| StoredEvent {
            log_stream,
            timestamp: time_key_timestamp(&key).unwrap_or_default(),
            event: serde_json::from_slice(&value)
                .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(&value).into_owned())),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::{EventFate, LogWriter, SinkEvent, WriterConfig};
    use crate::store::EmbeddedStore;

    fn event(stream: &str, ts: i64) -> SinkEvent {
        SinkEvent {
            group: "/logs/org/edge/api".into(),
            stream: stream.into(),
            timestamp_ms: ts,
            message: format!("{{\"ts\":{ts}}}"),
        }
    }

    #[tokio::test]
    async fn window_rejects_and_reads_back_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let (writer, _worker) =
            LogWriter::spawn(Arc::new(EmbeddedLogBackend::new(store.clone())), WriterConfig::default());
        let now = now_ms();
        let report = writer
            .write(vec![
                event("a", now - 1000),
                event("a", now - MAX_AGE_MS - 60_000),
                event("b", now - 2000),
                event("a", now + MAX_AHEAD_MS + 60_000),
            ])
            .await
            .unwrap();
        assert_eq!(report.count(EventFate::Accepted), 2);
        assert_eq!(report.count(EventFate::TooOld), 1);
        assert_eq!(report.count(EventFate::TooNew), 1);
        let mut fates: Vec<(usize, EventFate)> = report.batches.iter().flat_map(|b| b.events.clone()).collect();
        fates.sort();
        assert_eq!(
            fates,
            vec![(0, EventFate::Accepted), (1, EventFate::TooOld), (2, EventFate::Accepted), (3, EventFate::TooNew)]
        );

        let events = read_events(store.as_ref(), "/logs/org/edge/api", None, 10).await.unwrap();
        assert_eq!(events.iter().map(|e| e.timestamp).collect::<Vec<_>>(), vec![now - 2000, now - 1000]);
        let only_a = read_events(store.as_ref(), "/logs/org/edge/api", Some("a"), 10).await.unwrap();
        assert_eq!(only_a.len(), 1);
        assert_eq!(only_a[0].log_stream, "a");
    }
}
