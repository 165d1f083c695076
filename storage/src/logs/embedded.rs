//! The embedded log sink: events stored durably in the data dir's segment log
//! ([`super::segments`]), under CloudWatch's time window (older than 14 days or more than 2 hours
//! ahead is rejected), so that 207 answers behave the same without AWS.
//!
//! Versions before issue 13 kept the events as rows of the embedded store (table `log_events`,
//! partition `<group>\x1f<stream>`, clustering [`time_key`]; table `log_streams` listing a group's
//! streams). Those rows are never written again but are still read back, merged oldest first with
//! the segment log, so that an upgrade loses nothing from `GET /v1/logs/events`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;

use engage_config::LogRetention;

use super::segments::{Blocks, SegmentLog};
use super::{now_ms, BackendError, Chunk, LogBackend, Rejected, MAX_AGE_MS, MAX_AHEAD_MS};
use crate::store::{time_key_timestamp, Store, StoreError};

const EVENTS: &str = "log_events";
const STREAMS: &str = "log_streams";

/// Writes chunks to the segment log.
pub struct EmbeddedLogBackend {
    /// None in a process without a data dir (an actor node, which serves no log route): every
    /// write fails.
    log: Option<Arc<SegmentLog>>,
    /// Tie-breaker for events with equal timestamps; starts at the wall clock in nanoseconds so
    /// that it keeps increasing across restarts.
    seq: AtomicU64,
    /// Each group's retention: an event already older than it is not stored (`Expired`), as
    /// CloudWatch answers it, rather than accepted and never read back.
    retention: Option<LogRetention>,
}

impl EmbeddedLogBackend {
    /// A backend over `log`.
    pub fn new(log: Option<Arc<SegmentLog>>) -> Self {
        let start = chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default().max(0) as u64;
        Self { log, seq: AtomicU64::new(start), retention: None }
    }

    /// Refuses events older than their group's retention (`EventFate::Expired`).
    #[must_use]
    pub fn with_retention(mut self, retention: LogRetention) -> Self {
        self.retention = Some(retention);
        self
    }
}

/// The checks CloudWatch applies, as indices over timestamp-sorted events: the 14-day and 2-hour
/// window, and the group's retention (`cutoff_ms`: events before it are expired).
pub fn window_rejections(timestamps: &[i64], now_ms: i64, cutoff_ms: Option<i64>) -> Rejected {
    let too_old = timestamps.iter().take_while(|ts| **ts < now_ms - MAX_AGE_MS).count();
    let too_new_start = timestamps.iter().position(|ts| *ts > now_ms + MAX_AHEAD_MS);
    let expired = cutoff_ms.map_or(0, |cutoff| timestamps.iter().take_while(|ts| **ts < cutoff).count());
    Rejected {
        too_old_end: (too_old > 0).then_some(too_old),
        too_new_start,
        expired_end: (expired > too_old).then_some(expired),
    }
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
        let Some(log) = &self.log else {
            let cause = "this process keeps no embedded log (it has no data dir)";
            return chunks.iter().map(|_| Err(BackendError::Fatal(cause.to_owned()))).collect();
        };
        let now = now_ms();
        let mut blocks = Blocks::default();
        let mut rejections = Vec::with_capacity(chunks.len());
        for chunk in chunks {
            let timestamps: Vec<i64> = chunk.events.iter().map(|(ts, _)| *ts).collect();
            let cutoff = self.retention.as_ref().and_then(|retention| retention.cutoff_ms(&chunk.group, now));
            let rejected = window_rejections(&timestamps, now, cutoff);
            let end = rejected.too_new_start.unwrap_or(timestamps.len());
            let start = rejected.too_old_end.max(rejected.expired_end).unwrap_or(0).min(end);
            if start < end {
                let first = self.seq.fetch_add((end - start) as u64, Ordering::Relaxed);
                let events = chunk.events[start..end].iter().enumerate();
                blocks.push(
                    &chunk.group,
                    &chunk.stream,
                    events.map(|(i, (ts, message))| (*ts, first + i as u64, message.as_bytes())),
                );
            }
            rejections.push(rejected);
        }
        if blocks.is_empty() {
            return rejections.into_iter().map(Ok).collect();
        }
        match log.append(blocks).await {
            Ok(()) => rejections.into_iter().map(Ok).collect(),
            Err(error) => chunks.iter().map(|_| Err(BackendError::Fatal(error.clone()))).collect(),
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

/// What `GET /v1/logs/events` reads: the segment log, and the rows older versions stored.
#[derive(Clone)]
pub struct EmbeddedLogs {
    /// The segment log (None without a data dir).
    pub segments: Option<Arc<SegmentLog>>,
    /// The store that held log events before the segment log.
    pub legacy: Arc<dyn Store>,
}

impl EmbeddedLogs {
    /// Reads up to `limit` events of a group (one stream, or every stream), oldest first.
    pub async fn read(&self, group: &str, stream: Option<&str>, limit: usize) -> Result<Vec<StoredEvent>, StoreError> {
        self.read_since(group, stream, i64::MIN, limit).await
    }

    /// Like [`EmbeddedLogs::read`], of the events at or after `min_ts` only (what the retention
    /// keeps).
    pub async fn read_since(
        &self,
        group: &str,
        stream: Option<&str>,
        min_ts: i64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let mut all = read_legacy(self.legacy.as_ref(), group, stream, limit).await?;
        all.retain(|event| event.timestamp >= min_ts);
        if let Some(segments) = &self.segments {
            let events = segments
                .read_since(group, stream, min_ts, limit)
                .await
                .map_err(|error| StoreError::Backend(format!("log segments: {error}")))?;
            all.extend(events.into_iter().map(|event| stored(event.stream, event.timestamp, &event.message)));
            // legacy rows first among equal timestamps: they were written before
            all.sort_by_key(|event| event.timestamp);
            all.truncate(limit);
        }
        Ok(all)
    }
}

fn stored(log_stream: String, timestamp: i64, message: &[u8]) -> StoredEvent {
    StoredEvent {
        log_stream,
        timestamp,
        event: serde_json::from_slice(message)
            .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(message).into_owned())),
    }
}

/// Reads the rows versions before the segment log stored, oldest first.
async fn read_legacy(
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
        .map(|(key, log_stream, value)| stored(log_stream, time_key_timestamp(&key).unwrap_or_default(), &value))
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

    /// A segment log and a store in a temporary data dir, as the server lays them out.
    fn logs(dir: &std::path::Path) -> EmbeddedLogs {
        EmbeddedLogs {
            segments: Some(Arc::new(SegmentLog::open(&dir.join("logs")).unwrap())),
            legacy: Arc::new(EmbeddedStore::open(dir).unwrap()),
        }
    }

    #[tokio::test]
    async fn window_rejects_and_reads_back_oldest_first() {
        // as the server runs it (each request calls the log), and through the coalescing lanes
        for config in [WriterConfig::embedded(), WriterConfig::default()] {
            let dir = tempfile::tempdir().unwrap();
            let logs = logs(dir.path());
            let (writer, _worker) = LogWriter::spawn(Arc::new(EmbeddedLogBackend::new(logs.segments.clone())), config);
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
                vec![
                    (0, EventFate::Accepted),
                    (1, EventFate::TooOld),
                    (2, EventFate::Accepted),
                    (3, EventFate::TooNew)
                ]
            );

            let events = logs.read("/logs/org/edge/api", None, 10).await.unwrap();
            assert_eq!(events.iter().map(|e| e.timestamp).collect::<Vec<_>>(), vec![now - 2000, now - 1000]);
            assert_eq!(events[0].event, serde_json::json!({"ts": now - 2000}));
            let only_a = logs.read("/logs/org/edge/api", Some("a"), 10).await.unwrap();
            assert_eq!(only_a.len(), 1);
            assert_eq!(only_a[0].log_stream, "a");
        }
    }

    #[tokio::test]
    async fn rows_an_older_version_stored_are_read_back_with_the_segment_log() {
        use crate::store::{time_key, WriteOp};
        let dir = tempfile::tempdir().unwrap();
        let logs = logs(dir.path());
        let group = "/logs/org/edge/api";
        let legacy_row = |ts: i64| WriteOp::Put {
            table: EVENTS,
            partition: events_partition(group, "a"),
            clustering: time_key(ts, ts as u64),
            value: format!("{{\"old\":{ts}}}").into_bytes(),
        };
        let listed = WriteOp::Put { table: STREAMS, partition: group.into(), clustering: b"a".to_vec(), value: vec![] };
        logs.legacy.batch(vec![listed, legacy_row(1_000), legacy_row(3_000)]).await.unwrap();
        let backend = EmbeddedLogBackend::new(logs.segments.clone());
        let now = now_ms();
        let chunk = Chunk {
            group: group.into(),
            stream: "b".into(),
            events: vec![(now - 5, "{\"new\":1}".into())],
            owners: vec![(0, 0)],
        };
        backend.put_chunks(&[chunk]).await.into_iter().for_each(|r| assert!(r.is_ok()));

        let events = logs.read(group, None, 10).await.unwrap();
        let seen: Vec<(&str, i64)> = events.iter().map(|e| (e.log_stream.as_str(), e.timestamp)).collect();
        assert_eq!(seen, vec![("a", 1_000), ("a", 3_000), ("b", now - 5)]);
        assert_eq!(logs.read(group, None, 2).await.unwrap().len(), 2);
        assert_eq!(logs.read(group, Some("b"), 10).await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn an_event_older_than_its_groups_retention_is_expired_not_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let logs = logs(dir.path());
        let retention = LogRetention::parse(30, Some("/logs/org/edge/api=1")).unwrap();
        let backend = EmbeddedLogBackend::new(logs.segments.clone()).with_retention(retention);
        let (writer, _worker) = LogWriter::spawn(Arc::new(backend), WriterConfig::embedded());
        let now = now_ms();
        let day = 86_400_000;
        let report = writer
            .write(vec![
                event("a", now - 3 * day),
                event("a", now - MAX_AGE_MS - day),
                event("a", now - 1000),
                SinkEvent { group: "/logs/org/edge/other".into(), ..event("a", now - 3 * day) },
            ])
            .await
            .unwrap();
        let mut fates: Vec<(usize, EventFate)> = report.batches.iter().flat_map(|b| b.events.clone()).collect();
        fates.sort();
        assert_eq!(
            fates,
            vec![(0, EventFate::Expired), (1, EventFate::TooOld), (2, EventFate::Accepted), (3, EventFate::Accepted)],
            "3 days old is expired under 1 day and kept under 30"
        );
        let stored = logs.read("/logs/org/edge/api", None, 10).await.unwrap();
        assert_eq!(stored.iter().map(|e| e.timestamp).collect::<Vec<_>>(), vec![now - 1000]);
    }

    #[tokio::test]
    async fn without_a_data_dir_every_write_fails() {
        let backend = EmbeddedLogBackend::new(None);
        let chunk = Chunk {
            group: "g".into(),
            stream: "s".into(),
            events: vec![(now_ms(), "{}".into())],
            owners: vec![(0, 0)],
        };
        assert!(matches!(backend.put_chunks(&[chunk]).await.as_slice(), [Err(BackendError::Fatal(_))]));
    }
}
