//! The embedded backend: one fjall database in the data directory, one fjall keyspace per table.
//!
//! A row's fjall key is the partition key, length-prefixed (u16, big-endian) so that one
//! partition's rows are one contiguous prefix, followed by the clustering key.
//!
//! Group commit: every [`Store::batch`] goes to one committer thread, which merges the batches
//! waiting at that moment into one fjall batch and syncs it to disk once. Each caller's batch stays
//! atomic (the merged batch is), is durable when its call returns, and is applied after the
//! batches sent before it (a later write of the same key wins). Under concurrency the store pays
//! one sync per group instead of one per batch; alone, a batch is committed at once.
//!
//! Staged batches ([`Store::stage`]): the caller does not wait for the group commit. The batch's
//! writes go into the *staged* map (the newest staged write of each row) before the batch is
//! sent, and leave it once the committer has written them to fjall, so every read between sees
//! them: [`Store::get`] answers from the map, [`Store::scan`] of a partition with staged rows waits
//! until they are in fjall. The caller answers its client only after the batch's [`Durable`]
//! resolves, so nothing acknowledged is ever lost; what a crash can lose is only what nobody was
//! told is done. The price: for the length of one sync, other readers may see a write that is not
//! yet on disk. If the sync fails, those reads saw something that may never be on disk; so a failed
//! group with staged batches in it fails the store for good ([`Store::healthy`]): every later read
//! and write is refused until engage restarts and recovers from what the disk holds.

use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use async_trait::async_trait;
use fjall::{AbstractTree, Database, Keyspace, KeyspaceCreateOptions, PersistMode, Slice};

use super::staged::Staging;
use super::{Durable, Row, RowWrite, Store, StoreError, WriteOp};

/// A row as [`EmbeddedStore::every_row`] lists it: table, fjall key, value.
pub type StoredRow = (String, Vec<u8>, Vec<u8>);

/// A [`Store`] in a local directory. Cheap to clone; all clones share the database.
#[derive(Clone)]
pub struct EmbeddedStore {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    /// Batches for the committer, sent under the staged map's lock (so in sequence order); `None`
    /// once dropped (which stops it).
    committer: Option<mpsc::Sender<Commit>>,
    thread: Option<JoinHandle<()>>,
    /// Compacts after an erasure ([`purge`]).
    purger: purge::Purger,
}

/// What the store and its committer thread share.
struct Shared {
    db: Database,
    /// Opened keyspaces by table name; std `Mutex` because it is never held across an await.
    tables: Mutex<HashMap<&'static str, Keyspace>>,
    /// Staged writes not yet in fjall, by row.
    staging: Staging<RowId, Slice>,
    /// Why the store failed for good (a group with staged batches failed to commit).
    failed: OnceLock<String>,
    /// Each keyspace's memtable size when not [`MEMTABLE_BYTES`]: tests rotate memtables with a
    /// small one.
    memtable_bytes: Option<u64>,
    /// Tests: held to keep the committer from writing; set to make the next group fail.
    #[cfg(test)]
    hold: Mutex<()>,
    #[cfg(test)]
    fail_next: std::sync::atomic::AtomicBool,
}

/// A row as the staged map keys it: (table, fjall key).
type RowId = (&'static str, Slice);

/// One write as fjall takes it: its keyspace resolved, its key and value encoded. The caller's
/// thread prepares it ([`EmbeddedStore::prepare`]), so that the committer, which every write of
/// the node waits for, only merges and commits (issue 13: building keys and copying values was a
/// quarter of the committer's time, and the committer bounds the embedded orders rate).
struct Write {
    table: &'static str,
    keyspace: Keyspace,
    key: Slice,
    /// `None`: a delete.
    value: Option<Slice>,
}

impl RowWrite for Write {
    type Row<'a> = (&'static str, &'a [u8]);
    fn row_id(&self) -> Self::Row<'_> {
        (self.table, &self.key)
    }
}

/// One caller's batch, and where its outcome goes.
struct Commit {
    writes: Vec<Write>,
    /// Its place in the order of batches.
    seq: u64,
    /// The rows it put in the staged map (none for a plain batch).
    staged: Vec<RowId>,
    done: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
}

/// Most writes merged into one group commit.
const MAX_GROUP_WRITES: usize = 20_000;

impl Drop for Inner {
    /// Stops the committer (it finishes the batches already sent) and waits for it, so the
    /// database is closed when the last clone of the store is gone.
    fn drop(&mut self) {
        self.purger.stop();
        self.committer.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// A table's name is a non-empty run of ASCII letters, digits and `_`.
fn check_table_name(name: &str) -> Result<(), StoreError> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(StoreError::InvalidTable(name.to_owned()));
    }
    Ok(())
}

fn row_key(partition: &str, clustering: &[u8]) -> Slice {
    let mut key = prefix_with_room(partition, clustering.len());
    key.extend_from_slice(clustering);
    Slice::from(key)
}

fn partition_prefix(partition: &str) -> Vec<u8> {
    prefix_with_room(partition, 0)
}

/// A partition's key prefix, in a buffer with room for `more` bytes after it: its length as two
/// bytes, then its bytes. A partition of 65,535 bytes or more (none is that long in practice) has
/// `FFFF` and then its length as eight bytes, so no two partitions share a prefix and no
/// partition is cut short.
fn prefix_with_room(partition: &str, more: usize) -> Vec<u8> {
    let bytes = partition.as_bytes();
    let mut key = Vec::with_capacity(10 + bytes.len() + more);
    match u16::try_from(bytes.len()) {
        Ok(len) if len < u16::MAX => key.extend_from_slice(&len.to_be_bytes()),
        _ => {
            key.extend_from_slice(&u16::MAX.to_be_bytes());
            key.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
        }
    }
    key.extend_from_slice(bytes);
    key
}

/// Each table's memtable size by default (`ENGAGE_STORE_MEMTABLE_MIB`). fjall's default, 64 MiB, let the memtables of the tables an order
/// writes reach 280 MB under a sustained load (`engage_store_memtable_bytes`, issue 57); a
/// memtable of 16 MiB is flushed four times as often, in smaller table files.
pub const MEMTABLE_BYTES: u64 = 16 << 20;

/// How long the store goes without a write before it flushes its memtables
/// ([`Shared::flush_when_idle`]).
const IDLE_FLUSH_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

/// How soon after an idle flush the store looks again, to free the flushed memtables
/// ([`Shared::flush_when_idle`]).
const AFTER_IDLE_FLUSH: std::time::Duration = std::time::Duration::from_secs(1);

/// How often, while written, the store frees the tree versions (and flushed memtables) no reader
/// needs ([`fjall::Database::collect_versions`]).
const COLLECT_VERSIONS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Rows a scan reads on the caller's thread before it goes on on the blocking pool
/// ([`EmbeddedStore::scan`]).
const INLINE_SCAN_ROWS: usize = 64;

/// Memtables holding less than this, all tables together, stay in memory when the store is idle.
const IDLE_FLUSH_MIN_BYTES: u64 = 4 << 20;

/// Called on the store's commit thread each time it has gone [`IDLE_FLUSH_AFTER`] without a write
/// ([`set_idle_hook`]).
static IDLE_HOOK: OnceLock<fn()> = OnceLock::new();

/// Sets what the commit thread runs when idle: the binary returns the thread's free allocator
/// pages to the OS (`src/reclaim.rs`). The memtables' entries are allocated on that thread, so
/// the memory a flush frees is that thread's to give back. Set once; later calls change nothing.
pub fn set_idle_hook(hook: fn()) {
    let _ = IDLE_HOOK.set(hook);
}

/// The store's block cache by default (fjall's own default): blocks of table files read lately,
/// shared by every table (`ENGAGE_STORE_CACHE_MIB`).
pub const STORE_CACHE_BYTES: u64 = 32 << 20;

impl EmbeddedStore {
    /// Opens (or creates) the store in `dir`, with a block cache of [`STORE_CACHE_BYTES`].
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        Self::open_with(dir, None, STORE_CACHE_BYTES)
    }

    /// Opens (or creates) the store in `dir` with a block cache of `cache_bytes` and each table's
    /// memtable at `memtable_bytes`.
    pub fn open_sized(dir: &Path, cache_bytes: u64, memtable_bytes: u64) -> Result<Self, StoreError> {
        Self::open_with(dir, Some(memtable_bytes), cache_bytes)
    }

    fn open_with(dir: &Path, memtable_bytes: Option<u64>, cache_bytes: u64) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(backend)?;
        let db = Database::builder(dir.join("store")).cache_size(cache_bytes).open().map_err(backend)?;
        let shared = Arc::new(Shared {
            db,
            tables: Mutex::new(HashMap::new()),
            staging: Staging::default(),
            failed: OnceLock::new(),
            memtable_bytes,
            #[cfg(test)]
            hold: Mutex::new(()),
            #[cfg(test)]
            fail_next: std::sync::atomic::AtomicBool::new(false),
        });
        let (sender, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("engage-store-commit".into())
            .spawn({
                let shared = shared.clone();
                move || shared.commit_loop(&receiver)
            })
            .map_err(backend)?;
        let purger = purge::Purger::start(shared.clone(), dir.join("purge-pending"))?;
        Ok(Self { inner: Arc::new(Inner { shared, committer: Some(sender), thread: Some(thread), purger }) })
    }

    fn table(&self, name: &'static str) -> Result<Keyspace, StoreError> {
        self.inner.shared.table(name)
    }

    /// Resolves and encodes `ops` for fjall (an invalid table fails the whole batch here, before
    /// anything of it is staged or sent).
    fn prepare(&self, ops: Vec<WriteOp>) -> Result<Vec<Write>, StoreError> {
        let mut last: Option<(&'static str, Keyspace)> = None;
        let mut writes = Vec::with_capacity(ops.len());
        for op in ops {
            let (table, partition, clustering, value) = match op {
                WriteOp::Put { table, partition, clustering, value } => (table, partition, clustering, Some(value)),
                WriteOp::Delete { table, partition, clustering } => (table, partition, clustering, None),
            };
            let keyspace = match &last {
                Some((name, keyspace)) if *name == table => keyspace.clone(),
                _ => {
                    let keyspace = self.table(table)?;
                    last = Some((table, keyspace.clone()));
                    keyspace
                }
            };
            writes.push(Write {
                table,
                keyspace,
                key: row_key(&partition, &clustering),
                value: value.map(Slice::from),
            });
        }
        Ok(writes)
    }

    /// Sends `ops` to the committer, first putting them in the staged map when `staged`; the
    /// answer comes on the returned receiver.
    fn send(
        &self,
        ops: Vec<WriteOp>,
        staged: bool,
    ) -> Result<tokio::sync::oneshot::Receiver<Result<(), StoreError>>, StoreError> {
        let writes = self.prepare(ops)?;
        let (done, outcome) = tokio::sync::oneshot::channel();
        let sender = self.inner.committer.as_ref().ok_or_else(|| backend("store closed"))?;
        let mut map = self.inner.shared.staging.lock()?;
        let seq = map.last_seq + 1;
        let mut rows = Vec::new();
        if staged {
            rows.reserve(writes.len());
            for write in &writes {
                let row = (write.table, write.key.clone());
                map.insert(row.clone(), seq, write.value.clone());
                rows.push(row);
            }
        }
        sender.send(Commit { writes, seq, staged: rows, done }).map_err(|_| backend("store committer stopped"))?;
        map.last_seq = seq;
        Ok(outcome)
    }

    /// Flushes the journal to disk (called on shutdown).
    pub fn persist(&self) -> Result<(), StoreError> {
        self.inner.shared.db.persist(PersistMode::SyncAll).map_err(backend)
    }

    /// Every row of every table as `(table, fjall key, value)`: an audit of what the store holds
    /// (the erasure tests look through it for a customer's number). The key is the partition,
    /// length-prefixed, then the clustering. Reads a whole store: not for serving requests.
    pub fn every_row(&self) -> Result<Vec<StoredRow>, StoreError> {
        let db = &self.inner.shared.db;
        let mut rows = Vec::new();
        for name in db.list_keyspace_names() {
            let name: &str = &name;
            let keyspace = db.keyspace(name, KeyspaceCreateOptions::default).map_err(backend)?;
            for guard in keyspace.iter() {
                let (key, value) = guard.into_inner().map_err(backend)?;
                rows.push((name.to_owned(), key.to_vec(), value.to_vec()));
            }
        }
        Ok(rows)
    }

    fn scan_blocking(
        &self,
        table: &'static str,
        partition: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        // a read never creates a table: a table that does not exist has no rows, and creating it
        // writes to a disk that may be full (a full disk is when an operator reads logs most)
        let Some(keyspace) = self.inner.shared.existing_table(table)? else { return Ok(Vec::new()) };
        let prefix = partition_prefix(partition);
        let mut rows = Vec::new();
        let iter = match after {
            Some(after) => {
                // Start at the first key after `after`; the loop stops at the partition's end.
                let mut start = prefix.clone();
                start.extend_from_slice(after);
                keyspace.range(start..)
            }
            None => keyspace.prefix(&prefix),
        };
        for guard in iter {
            let (key, value) = guard.into_inner().map_err(backend)?;
            if !key.starts_with(&prefix) {
                break;
            }
            let clustering = key[prefix.len()..].to_vec();
            if after.is_some_and(|after| clustering.as_slice() <= after) {
                continue;
            }
            rows.push(Row { clustering, value: value.to_vec() });
            if rows.len() >= limit {
                break;
            }
        }
        Ok(rows)
    }
}

impl Shared {
    fn table(&self, name: &'static str) -> Result<Keyspace, StoreError> {
        check_table_name(name)?;
        let mut tables = self.tables.lock().map_err(|_| backend("table map poisoned"))?;
        if let Some(keyspace) = tables.get(name) {
            return Ok(keyspace.clone());
        }
        let options =
            || KeyspaceCreateOptions::default().max_memtable_size(self.memtable_bytes.unwrap_or(MEMTABLE_BYTES));
        let keyspace = self.db.keyspace(name, options).map_err(backend)?;
        tables.insert(name, keyspace.clone());
        Ok(keyspace)
    }

    /// The table when it exists, without creating it (what reads use).
    fn existing_table(&self, name: &'static str) -> Result<Option<Keyspace>, StoreError> {
        check_table_name(name)?;
        if let Some(keyspace) = self.tables.lock().map_err(|_| backend("table map poisoned"))?.get(name) {
            return Ok(Some(keyspace.clone()));
        }
        if !self.db.keyspace_exists(name) {
            return Ok(None);
        }
        self.table(name).map(Some)
    }

    /// The committer: takes the first waiting batch, merges every batch already waiting behind it
    /// (up to [`MAX_GROUP_WRITES`] writes), commits them with one sync, answers each caller. Ends
    /// when the store is dropped.
    fn commit_loop(&self, receiver: &mpsc::Receiver<Commit>) {
        let mut wait = IDLE_FLUSH_AFTER;
        let mut collected = std::time::Instant::now();
        loop {
            let first = match receiver.recv_timeout(wait) {
                Ok(first) => first,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    wait = if self.flush_when_idle() { AFTER_IDLE_FLUSH } else { IDLE_FLUSH_AFTER };
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            };
            let mut group = vec![first];
            let mut writes = group[0].writes.len();
            while writes < MAX_GROUP_WRITES {
                match receiver.try_recv() {
                    Ok(next) => {
                        writes += next.writes.len();
                        group.push(next);
                    }
                    Err(_) => break,
                }
            }
            metrics::histogram!("engage_store_group_commit_batches").record(group.len() as f64);
            let last_seq = group.iter().map(|commit| commit.seq).max().unwrap_or(0);
            let staged = group.iter().any(|commit| !commit.staged.is_empty());
            // A panic inside the backend fails this group (its callers see the committer's
            // answer dropped) but never stops the committer.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.commit_group(group, last_seq))).is_err() {
                metrics::counter!("engage_store_commit_panics_total").increment(1);
                tracing::error!("embedded store commit panicked; its batches failed");
                if staged {
                    self.fail("a commit panicked");
                }
            }
            self.staging.settle(last_seq);
            wait = IDLE_FLUSH_AFTER;
            if collected.elapsed() >= COLLECT_VERSIONS_EVERY {
                self.db.collect_versions();
                metrics::gauge!("engage_store_memtable_bytes").set(self.memtables_held() as f64);
                collected = std::time::Instant::now();
            }
        }
    }

    /// After [`IDLE_FLUSH_AFTER`] without a write: flushes every table's memtable once they hold
    /// [`IDLE_FLUSH_MIN_BYTES`] or more, so the memory a burst of writes took goes back (their rows
    /// are durable in the journal already; this only moves them to table files). First it frees
    /// the memtables flushed since the last time ([`fjall::Database::collect_versions`]: fjall
    /// keeps a flushed memtable in an old tree version until its next flush or compaction,
    /// which an idle store never makes); returns whether it flushed, so the caller looks again
    /// soon to free these too.
    fn flush_when_idle(&self) -> bool {
        self.db.collect_versions();
        if let Some(hook) = IDLE_HOOK.get() {
            hook();
        }
        let held = self.memtables_held();
        metrics::gauge!("engage_store_memtable_bytes").set(held as f64);
        if held < IDLE_FLUSH_MIN_BYTES {
            return false;
        }
        let tables: Vec<Keyspace> = match self.tables.lock() {
            Ok(tables) => tables.values().cloned().collect(),
            Err(_) => return false,
        };
        let rotated = tables.iter().filter(|keyspace| keyspace.rotate_memtable().unwrap_or(false)).count();
        tracing::debug!(held, rotated, "idle: memtables flushed");
        rotated > 0
    }

    /// The bytes of the memtables every table's versions still hold (`engage_store_memtable_bytes`):
    /// those written to and those flushed but not yet freed.
    fn memtables_held(&self) -> u64 {
        match self.tables.lock() {
            Ok(tables) => tables.values().map(|keyspace| keyspace.tree.version_memtable_size_sum()).sum(),
            Err(_) => self.db.write_buffer_size(),
        }
    }

    /// Fails the store for good.
    fn fail(&self, reason: &str) {
        if self.failed.set(reason.to_owned()).is_ok() {
            metrics::counter!("engage_store_failures_total").increment(1);
            tracing::error!(%reason, "the embedded store failed to commit staged writes: it refuses reads and writes until engage restarts");
        }
    }

    /// Writes `writes` as one fjall batch, synced.
    fn write_group(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        #[cfg(test)]
        {
            drop(self.hold.lock());
            if self.fail_next.swap(false, std::sync::atomic::Ordering::SeqCst) {
                return Err(backend("injected sync failure"));
            }
        }
        if writes.is_empty() {
            return Ok(());
        }
        let mut batch = fjall::OwnedWriteBatch::with_capacity(self.db.clone(), writes.len())
            .durability(Some(PersistMode::SyncData));
        for Write { keyspace, key, value, .. } in writes {
            match value {
                Some(value) => batch.insert(&keyspace, key, value),
                None => batch.remove(&keyspace, key),
            }
        }
        batch.commit().map_err(backend)
    }

    /// Writes `group` (whose newest batch is `last_seq`) and answers its callers.
    fn commit_group(&self, group: Vec<Commit>, last_seq: u64) {
        // The batches are merged, the last write of a row winning (a batch naming an invalid
        // table failed alone when it was prepared).
        let mut merged = Vec::with_capacity(group.iter().map(|commit| commit.writes.len()).sum());
        let mut waiting = Vec::with_capacity(group.len());
        let mut staged = Vec::new();
        for commit in group {
            staged.extend(commit.staged);
            merged.extend(commit.writes);
            waiting.push(commit.done);
        }
        let outcome = self.write_group(super::last_writes(merged)).map_err(|e| e.to_string());
        match &outcome {
            Ok(()) => self.staging.unstage(staged, last_seq),
            Err(error) if !staged.is_empty() => self.fail(error),
            Err(_) => {}
        }
        for done in waiting {
            let _ = done.send(outcome.clone().map_err(StoreError::Backend));
        }
    }
}

#[async_trait]
impl Store for EmbeddedStore {
    fn local_reads(&self) -> bool {
        true
    }

    async fn purge_unreachable(&self) -> Result<(), StoreError> {
        let shared = self.inner.shared.clone();
        tokio::task::spawn_blocking(move || purge::seal_and_flush(&shared)).await.map_err(backend)??;
        self.inner.purger.request();
        Ok(())
    }

    async fn get(
        &self,
        table: &'static str,
        partition: &str,
        clustering: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.healthy()?;
        let key = (table, row_key(partition, clustering));
        if let Some(value) = self.inner.shared.staging.value(&key)? {
            return Ok(value);
        }
        let Some(keyspace) = self.inner.shared.existing_table(table)? else { return Ok(None) };
        let value = keyspace.get(&key.1).map_err(backend)?;
        Ok(value.map(|v| v.to_vec()))
    }

    async fn scan(
        &self,
        table: &'static str,
        partition: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        self.healthy()?;
        // a partition with staged rows is scanned once they are in fjall
        let prefix = partition_prefix(partition);
        let within = |(t, key): &RowId| *t == table && key.starts_with(&prefix);
        self.inner.shared.staging.wait_for_rows_in((table, Slice::from(prefix.as_slice())), within).await?;
        self.healthy()?;
        // the first rows are read here, as a point read is: most partitions a brand's actor
        // scans (its configurations) hold a few rows, and handing each of those scans to the
        // blocking pool started and stopped its threads by the dozen when many brands' actors
        // started (issue 57); only a scan past them goes on on the pool
        let mut rows = self.scan_blocking(table, partition, after, limit.min(INLINE_SCAN_ROWS))?;
        if rows.len() < INLINE_SCAN_ROWS || limit <= INLINE_SCAN_ROWS {
            return Ok(rows);
        }
        let this = self.clone();
        let partition = partition.to_owned();
        let after = rows.last().map(|row| row.clustering.clone());
        let rest = limit - rows.len();
        let more = tokio::task::spawn_blocking(move || this.scan_blocking(table, &partition, after.as_deref(), rest))
            .await
            .map_err(backend)??;
        rows.extend(more);
        Ok(rows)
    }

    async fn batch(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        self.healthy()?;
        if ops.is_empty() {
            return Ok(());
        }
        Durable::pending(self.send(ops, false)?).wait().await
    }

    async fn stage(&self, ops: Vec<WriteOp>) -> Result<Durable, StoreError> {
        self.healthy()?;
        if ops.is_empty() {
            return Ok(Durable::done());
        }
        Ok(Durable::pending(self.send(ops, true)?))
    }

    fn healthy(&self) -> Result<(), StoreError> {
        match self.inner.shared.failed.get() {
            None => Ok(()),
            Some(reason) => Err(backend(format!(
                "the embedded store failed to write to disk ({reason}) and refuses reads and writes until engage restarts"
            ))),
        }
    }
}

mod purge;
#[cfg(test)]
mod tests;
