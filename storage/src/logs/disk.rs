//! The embedded log's disk guard (issue 44): below `ENGAGE_LOG_MIN_FREE_BYTES` free on the log
//! directory's filesystem, the log routes refuse writes up front (507 `DISK_FULL`) and `/readyz`
//! says why, instead of writes failing one by one once the disk is full, which would also stop
//! the segment log until a restart. What was acknowledged stays on disk; writes resume as soon as
//! space is back (retention deleting segments, an operator freeing space).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one free-space reading is reused: a statvfs per request would be cheap, but a burst
/// of requests needs only one.
const FRESH: Duration = Duration::from_millis(100);

/// Free space below the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the log disk has {free} bytes free, below the {min_free} bytes ENGAGE_LOG_MIN_FREE_BYTES keeps free")]
pub struct LowDisk {
    /// Bytes free for unprivileged writes.
    pub free: u64,
    /// The threshold.
    pub min_free: u64,
}

/// Watches the free space of one directory's filesystem.
pub struct DiskGuard {
    dir: PathBuf,
    min_free: u64,
    last: Mutex<Option<(Instant, u64)>>,
}

impl DiskGuard {
    /// A guard keeping `min_free` bytes free under `dir` (0: never refuses).
    pub fn new(dir: &Path, min_free: u64) -> Self {
        Self { dir: dir.to_owned(), min_free, last: Mutex::new(None) }
    }

    /// Bytes free for unprivileged writes on the filesystem now (at most [`FRESH`] old).
    pub fn free_bytes(&self) -> std::io::Result<u64> {
        if let Ok(last) = self.last.lock() {
            if let Some((at, free)) = *last {
                if at.elapsed() < FRESH {
                    return Ok(free);
                }
            }
        }
        let stat = rustix::fs::statvfs(&self.dir)?;
        let free = stat.f_bavail.saturating_mul(stat.f_frsize);
        if let Ok(mut last) = self.last.lock() {
            *last = Some((Instant::now(), free));
        }
        Ok(free)
    }

    /// Err when the free space is below the threshold: a write refused, counted in
    /// `engage_log_disk_refusals_total`. A failed reading lets writes through (they report their
    /// own failure).
    pub fn check(&self) -> Result<(), LowDisk> {
        let low = self.low();
        if low.is_err() {
            metrics::counter!("engage_log_disk_refusals_total").increment(1);
        }
        low
    }

    /// What `/readyz` says while the disk is low (not a refusal: not counted).
    pub fn problem(&self) -> Option<String> {
        self.low().err().map(|low| format!("{low}; the log routes answer 507 DISK_FULL"))
    }

    /// The free space against the threshold.
    fn low(&self) -> Result<(), LowDisk> {
        if self.min_free == 0 {
            return Ok(());
        }
        match self.free_bytes() {
            Ok(free) if free < self.min_free => Err(LowDisk { free, min_free: self.min_free }),
            Ok(_) => Ok(()),
            Err(error) => {
                tracing::warn!(%error, dir = %self.dir.display(), "cannot read the log disk's free space");
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_above_the_free_space_refuses_and_zero_never_does() {
        let dir = tempfile::tempdir().unwrap();
        let free = DiskGuard::new(dir.path(), 0).free_bytes().unwrap();
        assert!(free > 0);
        assert_eq!(DiskGuard::new(dir.path(), 0).check(), Ok(()));
        assert_eq!(DiskGuard::new(dir.path(), 1).check(), Ok(()));
        let low = DiskGuard::new(dir.path(), u64::MAX).check().unwrap_err();
        assert_eq!(low.min_free, u64::MAX);
        assert!(DiskGuard::new(dir.path(), u64::MAX).problem().unwrap().contains("507 DISK_FULL"));
    }
}
