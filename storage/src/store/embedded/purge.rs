//! The end of an erasure on the embedded store ([`super::Store::purge_unreachable`]): the bytes
//! of rows deleted or overwritten leave every file under the data directory.
//!
//! fjall keeps a write in two places until it is rewritten: the journal (one 64 MB file at a time,
//! rotated only when full, which on a quiet node may take days) and the table files (rewritten
//! when compaction merges them). So a purge:
//!
//! 1. seals the journal (new writes go to a new file), flushes every table's memtable into table
//!    files, and deletes the sealed journals, all before it answers ([`seal_and_flush`]);
//! 2. then, on the store's purge thread, compacts every table fully ([`Purger`]), which rewrites
//!    its files without the unreachable versions; the old files are deleted once no read holds
//!    them. Requests made while one runs are served by one more run after it.
//!
//! `engage_store_purges_total{step}` counts each step done; `engage_store_purge_pending` is 1
//! from a request until its compaction is done. A request leaves the file `purge-pending` in the
//! data directory until its compaction is done, so a node stopped before then compacts when it
//! opens the store again.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use fjall::KeyspaceCreateOptions;

use super::{backend, Shared};
use crate::store::StoreError;

/// Step 1 (see the module): seal the journal, flush every table, delete the sealed journals
/// (fjall patch `Database::purge_journals`, `third_party/README.md`).
pub(super) fn seal_and_flush(shared: &Shared) -> Result<(), StoreError> {
    shared.db.purge_journals().map_err(backend)?;
    metrics::counter!("engage_store_purges_total", "step" => "journal").increment(1);
    Ok(())
}

/// Step 2: compact every table fully, then free the versions no reader needs.
fn compact_all(shared: &Shared) -> Result<(), StoreError> {
    for name in shared.db.list_keyspace_names() {
        let keyspace = shared.db.keyspace(&name, KeyspaceCreateOptions::default).map_err(backend)?;
        keyspace.major_compact().map_err(backend)?;
    }
    shared.db.collect_versions();
    metrics::counter!("engage_store_purges_total", "step" => "compaction").increment(1);
    Ok(())
}

/// The purge thread: compacts every table once per request (requests waiting together are one).
/// Stops when the store is dropped, after the run under way.
pub(super) struct Purger {
    requests: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    /// `purge-pending` in the data directory (see the module).
    marker: PathBuf,
    /// Requests made so far (a run that began after the last one removes the marker).
    requested: Arc<AtomicU64>,
}

impl Purger {
    /// Starts the thread; runs a compaction at once when one was pending at the last stop.
    pub(super) fn start(shared: Arc<Shared>, marker: PathBuf) -> Result<Self, StoreError> {
        let (requests, waiting) = mpsc::channel::<()>();
        let requested = Arc::new(AtomicU64::new(0));
        let (done, seen) = (marker.clone(), requested.clone());
        let thread = std::thread::Builder::new()
            .name("engage-store-purge".into())
            .spawn(move || {
                while waiting.recv().is_ok() {
                    while waiting.try_recv().is_ok() {}
                    let served = seen.load(Ordering::SeqCst);
                    match compact_all(&shared) {
                        Ok(()) => {
                            // a request made during the run is served by the next one: its marker stays
                            if seen.load(Ordering::SeqCst) == served {
                                if let Err(error) = std::fs::remove_file(&done) {
                                    if error.kind() != std::io::ErrorKind::NotFound {
                                        tracing::warn!(%error, "the store's purge-pending marker could not be removed");
                                    }
                                }
                            }
                            tracing::info!("store compacted after an erasure");
                        }
                        Err(error) => tracing::error!(%error, "store compaction after an erasure failed; the next erasure or start runs it again"),
                    }
                    metrics::gauge!("engage_store_purge_pending").set(0.0);
                }
            })
            .map_err(backend)?;
        let purger = Self { requests: Some(requests), thread: Some(thread), marker, requested };
        if purger.marker.exists() {
            purger.request();
        }
        Ok(purger)
    }

    /// Asks for a compaction of every table (after [`seal_and_flush`]).
    pub(super) fn request(&self) {
        metrics::gauge!("engage_store_purge_pending").set(1.0);
        self.requested.fetch_add(1, Ordering::SeqCst);
        if let Err(error) = std::fs::write(&self.marker, b"a compaction after an erasure is pending\n") {
            tracing::warn!(%error, "the store's purge-pending marker could not be written");
        }
        if let Some(requests) = &self.requests {
            let _ = requests.send(());
        }
    }

    /// Stops the thread after the run under way (the store is closing).
    pub(super) fn stop(&mut self) {
        self.requests.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
