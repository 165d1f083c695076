//! Retention of the embedded log (issue 44): whole segments are deleted once every event in
//! them is older than its group's retention (`engage_config::LogRetention`), by a background task
//! ([`spawn_expiry`]). A segment that still holds one younger event stays, and the active segment
//! always stays. The segment's runs leave the index before its file is deleted, so a read started
//! after that never looks for it, and a read that took the index before skips the missing file.
//! Reads skip the expired events of segments that stay (`SegmentLog::read_since`, the tail's
//! `since`), so what the retention drops is gone from every read at once.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use engage_config::LogRetention;

use super::format::{segment_number, segment_path};
use super::{read_oldest, SegmentLog, WantedRuns};

/// What one pass deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expired {
    /// Segment files deleted.
    pub segments: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// The disk the log takes, and the oldest event it still serves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Bytes of the segment files.
    pub bytes: u64,
    /// Segment files.
    pub segments: u64,
    /// The oldest event still read back (ms since the epoch), None when the log is empty.
    pub oldest_ms: Option<i64>,
}

impl SegmentLog {
    /// Deletes the segments whose every event is older than its group's retention at `now_ms`
    /// (never the active one).
    pub fn expire(&self, retention: &LogRetention, now_ms: i64) -> io::Result<Expired> {
        let active = self.end().segment;
        let doomed: Vec<u64> = {
            let mut index = self.index.write().map_err(|_| io::Error::other("the log index lock is poisoned"))?;
            let mut keeps: HashMap<u64, bool> = HashMap::new();
            for (group, streams) in &index.groups {
                let cutoff = retention.cutoff_ms(group, now_ms);
                for run in streams.values().flatten() {
                    *keeps.entry(run.segment).or_insert(false) |= cutoff.is_none_or(|c| run.span.max_ts >= c);
                }
            }
            let doomed: Vec<u64> =
                keeps.into_iter().filter(|(segment, keeps)| !keeps && *segment < active).map(|(s, _)| s).collect();
            if !doomed.is_empty() {
                for streams in index.groups.values_mut() {
                    for runs in streams.values_mut() {
                        runs.retain(|run| !doomed.contains(&run.segment));
                    }
                    streams.retain(|_, runs| !runs.is_empty());
                }
                index.groups.retain(|_, streams| !streams.is_empty());
            }
            doomed
        };
        let mut expired = Expired::default();
        for segment in doomed {
            let path = segment_path(&self.dir, segment);
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or_default();
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    tracing::info!(segment, bytes, "expired log segment deleted");
                    expired.segments += 1;
                    expired.bytes += bytes;
                }
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(error) => return Err(error),
            }
        }
        if expired.segments > 0 {
            std::fs::File::open(&self.dir)?.sync_all()?;
        }
        Ok(expired)
    }

    /// The segment files' bytes and the oldest event still read back at `now_ms`.
    pub fn usage(&self, retention: &LogRetention, now_ms: i64) -> io::Result<Usage> {
        let mut usage = Usage::default();
        for entry in std::fs::read_dir(&self.dir)? {
            let entry = entry?;
            if segment_number(&entry.file_name().to_string_lossy()).is_some() {
                usage.segments += 1;
                usage.bytes += entry.metadata().map(|m| m.len()).unwrap_or_default();
            }
        }
        // a run wholly kept gives its oldest event from the index; a run that straddles its
        // group's cutoff holds both expired and kept events, and its oldest kept one is read
        // (only when it could be older than every event the index already gave)
        let mut straddling: Vec<(String, i64, WantedRuns)> = Vec::new();
        {
            let index = self.index.read().map_err(|_| io::Error::other("the log index lock is poisoned"))?;
            for (group, streams) in &index.groups {
                let cutoff = retention.cutoff_ms(group, now_ms).unwrap_or(i64::MIN);
                let (mut runs, mut names) = (Vec::new(), Vec::new());
                for (name, refs) in streams {
                    for run in refs.iter().filter(|run| run.span.max_ts >= cutoff) {
                        if run.span.min_ts >= cutoff {
                            usage.oldest_ms = Some(usage.oldest_ms.map_or(run.span.min_ts, |o| o.min(run.span.min_ts)));
                        } else {
                            if names.last() != Some(name) {
                                names.push(name.clone());
                            }
                            runs.push((names.len() - 1, *run));
                        }
                    }
                }
                if !runs.is_empty() {
                    straddling.push((group.clone(), cutoff, (runs, names)));
                }
            }
        }
        for (group, cutoff, (runs, names)) in straddling {
            if usage.oldest_ms.is_some_and(|oldest| oldest <= cutoff) {
                continue;
            }
            if let Some(event) = read_oldest(&self.dir, &group, runs, &names, cutoff, 1)?.first() {
                usage.oldest_ms = Some(usage.oldest_ms.map_or(event.timestamp, |o| o.min(event.timestamp)));
            }
        }
        Ok(usage)
    }
}

/// Runs the expiry every `every` (the first pass at once) and keeps the disk gauges:
/// `engage_log_disk_bytes`, `engage_log_segments`, `engage_log_oldest_event_seconds`; deletions
/// count in `engage_log_segments_deleted_total` and `engage_log_segment_bytes_deleted_total`.
pub fn spawn_expiry(log: Arc<SegmentLog>, retention: LogRetention, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            ticker.tick().await;
            let (log, retention) = (log.clone(), retention.clone());
            let pass = tokio::task::spawn_blocking(move || {
                let now = chrono::Utc::now().timestamp_millis();
                let expired =
                    if retention.keeps_everything() { Ok(Expired::default()) } else { log.expire(&retention, now) };
                (expired, log.usage(&retention, now))
            })
            .await;
            let Ok((expired, usage)) = pass else { continue };
            match expired {
                Ok(expired) => {
                    metrics::counter!("engage_log_segments_deleted_total").increment(expired.segments);
                    metrics::counter!("engage_log_segment_bytes_deleted_total").increment(expired.bytes);
                }
                Err(error) => tracing::warn!(%error, "log segment expiry failed; retried at the next pass"),
            }
            if let Ok(usage) = usage {
                metrics::gauge!("engage_log_disk_bytes").set(usage.bytes as f64);
                metrics::gauge!("engage_log_segments").set(usage.segments as f64);
                let oldest = usage.oldest_ms.map_or(0.0, |ms| ms as f64 / 1000.0);
                metrics::gauge!("engage_log_oldest_event_seconds").set(oldest);
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::Blocks;
    use super::*;

    const DAY: i64 = 86_400_000;
    const NOW: i64 = 100 * DAY;

    fn block(group: &str, events: &[(i64, &str)]) -> Blocks {
        let events: Vec<(i64, u64, &str)> = events.iter().enumerate().map(|(i, (ts, m))| (*ts, i as u64, *m)).collect();
        Blocks::of(group, "s", &events)
    }

    fn files(dir: &std::path::Path) -> Vec<u64> {
        let mut numbers: Vec<u64> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| segment_number(&e.unwrap().file_name().to_string_lossy()))
            .collect();
        numbers.sort_unstable();
        numbers
    }

    #[tokio::test]
    async fn whole_old_segments_go_young_and_active_ones_stay_and_reads_skip_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        // each append fills a segment of 64 KiB: one segment per append
        let log = SegmentLog::open_with(dir.path(), 64 * 1024).unwrap();
        let big = "x".repeat(70 * 1024);
        log.append(block("/logs/o/a", &[(NOW - 5 * DAY, &big)])).await.unwrap(); // 1: old
        log.append(block("/logs/o/a", &[(NOW - 5 * DAY, "old"), (NOW - DAY / 2, &big)])).await.unwrap(); // 2: mixed
        log.append(block("/logs/o/keep", &[(NOW - 5 * DAY, &big)])).await.unwrap(); // 3: kept 7 days
        log.append(block("/logs/o/a", &[(NOW - 5 * DAY, &big)])).await.unwrap(); // 4: old but active
        assert_eq!(files(dir.path()), vec![1, 2, 3, 4]);
        let retention = LogRetention::parse(1, Some("/logs/o/keep=7")).unwrap();
        let before = log.usage(&retention, NOW).unwrap();
        assert_eq!(before.segments, 4);

        let expired = log.expire(&retention, NOW).unwrap();
        assert_eq!(expired.segments, 1);
        assert!(expired.bytes > 64 * 1024);
        assert_eq!(files(dir.path()), vec![2, 3, 4], "the old segment went; mixed, kept and active stay");
        // a second pass deletes nothing more
        assert_eq!(log.expire(&retention, NOW).unwrap(), Expired::default());

        // reads skip the expired events of the segments that stay
        let cutoff = retention.cutoff_ms("/logs/o/a", NOW).unwrap();
        let kept = log.read_since("/logs/o/a", None, cutoff, 10).await.unwrap();
        assert_eq!(kept.iter().map(|e| e.timestamp).collect::<Vec<_>>(), vec![NOW - DAY / 2]);
        let usage = log.usage(&retention, NOW).unwrap();
        assert_eq!(usage.segments, 3);
        assert!(usage.bytes < before.bytes);
        assert_eq!(usage.oldest_ms, Some(NOW - 5 * DAY), "the 7-day group's event is the oldest kept");
        // without that group, the oldest kept is an event of the mixed segment, not the cutoff
        let one_day = LogRetention::parse(1, None).unwrap();
        assert_eq!(log.usage(&one_day, NOW).unwrap().oldest_ms, Some(NOW - DAY / 2));
        assert_eq!(log.usage(&one_day, NOW + 1000).unwrap().oldest_ms, Some(NOW - DAY / 2), "it does not move");

        // forever keeps everything
        assert_eq!(log.expire(&LogRetention::parse(0, None).unwrap(), NOW).unwrap(), Expired::default());
        // reopening reads what is left
        drop(log);
        let log = SegmentLog::open_with(dir.path(), 64 * 1024).unwrap();
        assert_eq!(log.read("/logs/o/keep", None, 10).await.unwrap().len(), 1);
    }
}
