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
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode, Slice};

use super::staged::Staging;
use super::{Durable, Row, RowWrite, Store, StoreError, WriteOp};

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
    /// Each keyspace's memtable size when not fjall's default (64 MiB): tests rotate memtables
    /// with a small one.
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
        self.committer.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
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

impl EmbeddedStore {
    /// Opens (or creates) the store in `dir`.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        Self::open_with(dir, None)
    }

    fn open_with(dir: &Path, memtable_bytes: Option<u64>) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(backend)?;
        let db = Database::builder(dir.join("store")).open().map_err(backend)?;
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
        Ok(Self { inner: Arc::new(Inner { shared, committer: Some(sender), thread: Some(thread) }) })
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

    fn scan_blocking(
        &self,
        table: &'static str,
        partition: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        let keyspace = self.table(table)?;
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
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(StoreError::InvalidTable(name.to_owned()));
        }
        let mut tables = self.tables.lock().map_err(|_| backend("table map poisoned"))?;
        if let Some(keyspace) = tables.get(name) {
            return Ok(keyspace.clone());
        }
        let options = || match self.memtable_bytes {
            Some(bytes) => KeyspaceCreateOptions::default().max_memtable_size(bytes),
            None => KeyspaceCreateOptions::default(),
        };
        let keyspace = self.db.keyspace(name, options).map_err(backend)?;
        tables.insert(name, keyspace.clone());
        Ok(keyspace)
    }

    /// The committer: takes the first waiting batch, merges every batch already waiting behind it
    /// (up to [`MAX_GROUP_WRITES`] writes), commits them with one sync, answers each caller. Ends
    /// when the store is dropped.
    fn commit_loop(&self, receiver: &mpsc::Receiver<Commit>) {
        while let Ok(first) = receiver.recv() {
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

    async fn get(
        &self,
        table: &'static str,
        partition: &str,
        clustering: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.healthy()?;
        let keyspace = self.table(table)?;
        let key = (table, row_key(partition, clustering));
        if let Some(value) = self.inner.shared.staging.value(&key)? {
            return Ok(value);
        }
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
        let this = self.clone();
        let partition = partition.to_owned();
        let after = after.map(<[u8]>::to_vec);
        tokio::task::spawn_blocking(move || this.scan_blocking(table, &partition, after.as_deref(), limit))
            .await
            .map_err(backend)?
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn embedded_store_passes_conformance() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        crate::store::conformance::run_all(&store).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn group_commit_keeps_each_batch_atomic_ordered_and_isolated() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let put = |key: &[u8], value: &[u8]| WriteOp::Put {
            table: "g",
            partition: "p".into(),
            clustering: key.to_vec(),
            value: value.to_vec(),
        };
        for round in 0..50u8 {
            // polled in order, so sent in order: the later batch's write of "k" wins; the batch
            // naming a bad table fails alone
            let bad = WriteOp::Put { table: "bad table", partition: "p".into(), clustering: vec![1], value: vec![1] };
            let (first, second, third) = futures::join!(
                store.batch(vec![put(b"k", &[round, 1]), put(&[b'a', round], b"x")]),
                store.batch(vec![bad, put(&[b'b', round], b"y")]),
                store.batch(vec![put(b"k", &[round, 3])]),
            );
            assert!(first.is_ok() && third.is_ok());
            assert!(matches!(second, Err(StoreError::InvalidTable(_))));
            assert_eq!(store.get("g", "p", b"k").await.unwrap(), Some(vec![round, 3]));
            assert_eq!(store.get("g", "p", &[b'a', round]).await.unwrap(), Some(b"x".to_vec()));
            assert_eq!(store.get("g", "p", &[b'b', round]).await.unwrap(), None, "the failed batch wrote nothing");
        }
        // 200 concurrent writers: every batch lands
        let writes = (0..200u32).map(|i| {
            let store = store.clone();
            async move { store.batch(vec![put(&i.to_be_bytes(), b"v"), put(b"final", &i.to_be_bytes())]).await }
        });
        assert!(futures::future::join_all(writes).await.iter().all(Result::is_ok));
        let rows = store.scan("g", "p", None, 1000).await.unwrap();
        assert_eq!(rows.iter().filter(|r| r.clustering.len() == 4).count(), 200);
        drop(store);
        // durable: every write is there after reopening
        let store = EmbeddedStore::open(dir.path()).unwrap();
        assert_eq!(
            store.scan("g", "p", None, 1000).await.unwrap().iter().filter(|r| r.clustering.len() == 4).count(),
            200
        );
    }

    fn put(key: &[u8], value: &[u8]) -> WriteOp {
        WriteOp::Put { table: "s", partition: "p".into(), clustering: key.to_vec(), value: value.to_vec() }
    }

    /// The sizes of the table files fjall has flushed so far, over every keyspace
    fn table_sizes(dir: &Path) -> Vec<u64> {
        let keyspaces = std::fs::read_dir(dir.join("store/keyspaces")).unwrap();
        keyspaces
            .filter_map(|keyspace| std::fs::read_dir(keyspace.unwrap().path().join("tables")).ok())
            .flatten()
            .map(|table| table.unwrap().metadata().unwrap().len())
            .collect()
    }

    /// The journal's zeros are written ahead of its end (third_party/fjall's patch), so a commit's
    /// sync finds its blocks allocated: the active journal keeps its preallocated length and has
    /// more blocks on disk than its rows need, and what was written reads back after a reopen.
    #[cfg(unix)]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_journal_is_zeroed_ahead_of_its_end() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        for key in 0..20u32 {
            store.batch(vec![put(&key.to_be_bytes(), &[7; 100])]).await.unwrap();
        }
        let journals: Vec<_> = std::fs::read_dir(dir.path().join("store"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "jnl"))
            .collect();
        let allocated: Vec<(u64, u64)> = journals
            .iter()
            .map(|path| std::fs::metadata(path).unwrap())
            .map(|meta| (meta.len(), meta.blocks() * 512))
            .collect();
        assert!(
            allocated.iter().any(|&(len, on_disk)| len == 64 << 20 && on_disk >= 512 << 10),
            "no journal with zeros written ahead (length, bytes on disk): {allocated:?}"
        );
        drop(store);
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let rows = store.scan("s", "p", None, 100).await.unwrap();
        assert_eq!(rows.len(), 20);
        assert!(rows.iter().all(|row| row.value == [7; 100]));
        store.batch(vec![put(b"after", b"reopen")]).await.unwrap();
        drop(store);
        let store = EmbeddedStore::open(dir.path()).unwrap();
        assert_eq!(store.get("s", "p", b"after").await.unwrap(), Some(b"reopen".to_vec()));
        assert_eq!(store.scan("s", "p", None, 100).await.unwrap().len(), 21);
    }

    /// Memtables rotated, flushed and retired many times over, into tables large enough to be
    /// written out a megabyte at a time (the two paths third_party/lsm-tree's patch changes):
    /// every row reads back, before and after a reopen.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rows_survive_memtable_rotations_and_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open_with(dir.path(), Some(2 << 20)).unwrap();
        // ~1 KiB that does not compress: the key, then bytes from a generator seeded by key and round
        let value = |key: u32, round: u8| {
            let mut state = u64::from(key) << 8 | u64::from(round) | 1 << 63;
            let noise = (0..255).flat_map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state as u32).to_le_bytes()
            });
            key.to_be_bytes().into_iter().chain(noise).collect::<Vec<u8>>()
        };
        // four rounds over 2,000 keys: ~8 MiB through 2 MiB memtables
        for round in 0..4u8 {
            for chunk in (0..2000u32).collect::<Vec<_>>().chunks(50) {
                let ops = chunk.iter().map(|&key| put(&key.to_be_bytes(), &value(key, round))).collect();
                store.batch(ops).await.unwrap();
            }
        }
        // flushes run on fjall's workers: wait for them to show on disk
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while table_sizes(dir.path()).len() < 3 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let sizes = table_sizes(dir.path());
        assert!(sizes.len() >= 3, "memtables were not rotated and flushed: {sizes:?}");
        assert!(sizes.iter().any(|&size| size > 1 << 20), "no table over 1 MiB: {sizes:?}");
        let check = |store: EmbeddedStore| async move {
            for key in (0..2000u32).step_by(97) {
                assert_eq!(store.get("s", "p", &key.to_be_bytes()).await.unwrap(), Some(value(key, 3)));
            }
            let rows = store.scan("s", "p", None, 5000).await.unwrap();
            assert_eq!(rows.len(), 2000);
            assert!(
                rows.iter()
                    .all(|row| row.value == value(u32::from_be_bytes(row.clustering[..4].try_into().unwrap()), 3)),
                "a row kept an earlier round's value"
            );
        };
        check(store.clone()).await;
        drop(store);
        check(EmbeddedStore::open(dir.path()).unwrap()).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[allow(clippy::await_holding_lock)] // holding the committer back across awaits is the point
    async fn staged_writes_are_read_at_once_scanned_once_written_and_durable_when_told() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        store.batch(vec![put(b"gone", b"0"), put(b"k", b"0")]).await.unwrap();
        // the committer cannot write while the test holds it
        let hold = store.inner.shared.hold.lock().unwrap();
        let first = store
            .stage(vec![
                put(b"k", b"1"),
                WriteOp::Delete { table: "s", partition: "p".into(), clustering: b"gone".to_vec() },
            ])
            .await
            .unwrap();
        let second = store.stage(vec![put(b"k", b"2"), put(b"new", b"n")]).await.unwrap();
        assert_eq!(store.get("s", "p", b"k").await.unwrap(), Some(b"2".to_vec()), "the newest staged write");
        assert_eq!(store.get("s", "p", b"gone").await.unwrap(), None, "a staged delete");
        assert_eq!(store.get("s", "p", b"new").await.unwrap(), Some(b"n".to_vec()));
        assert_eq!(store.get("s", "other", b"k").await.unwrap(), None);
        // a scan of the partition waits for the staged rows; another partition's does not
        assert!(store.scan("s", "other", None, 10).await.unwrap().is_empty());
        let scan = tokio::spawn({
            let store = store.clone();
            async move { store.scan("s", "p", None, 10).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!scan.is_finished(), "the scan ran before the staged rows were written");
        drop(hold);
        let rows = scan.await.unwrap().unwrap();
        let rows: Vec<_> = rows.iter().map(|r| (r.clustering.as_slice(), r.value.as_slice())).collect();
        assert_eq!(rows, vec![(&b"k"[..], &b"2"[..]), (&b"new"[..], &b"n"[..])]);
        first.wait().await.unwrap();
        second.wait().await.unwrap();
        assert!(store.inner.shared.staging.is_empty(), "written rows leave the staged map");
        drop(store);
        let store = EmbeddedStore::open(dir.path()).unwrap();
        assert_eq!(store.get("s", "p", b"k").await.unwrap(), Some(b"2".to_vec()));
        assert_eq!(store.get("s", "p", b"gone").await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_failed_commit_of_staged_writes_fails_the_store_for_good() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        // a plain batch that fails fails alone
        store.inner.shared.fail_next.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(store.batch(vec![put(b"a", b"1")]).await.is_err());
        store.healthy().unwrap();
        store.batch(vec![put(b"a", b"2")]).await.unwrap();
        // a staged one that fails was read by others: everything is refused from then on
        store.inner.shared.fail_next.store(true, std::sync::atomic::Ordering::SeqCst);
        let durable = store.stage(vec![put(b"a", b"3")]).await.unwrap();
        assert!(durable.wait().await.is_err());
        let refused = store.get("s", "p", b"a").await.unwrap_err().to_string();
        assert!(refused.contains("refuses reads and writes until engage restarts"), "{refused}");
        assert!(store.healthy().is_err());
        assert!(store.scan("s", "p", None, 10).await.is_err());
        assert!(store.batch(vec![put(b"b", b"1")]).await.is_err());
        assert!(store.stage(vec![put(b"b", b"1")]).await.is_err());
        drop(store);
        let store = EmbeddedStore::open(dir.path()).unwrap();
        assert_eq!(store.get("s", "p", b"a").await.unwrap(), Some(b"2".to_vec()), "what the disk holds");
    }

    #[tokio::test]
    async fn embedded_store_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = EmbeddedStore::open(dir.path()).unwrap();
            store.put("t", "p", b"k", b"v".to_vec()).await.unwrap();
        }
        let store = EmbeddedStore::open(dir.path()).unwrap();
        assert_eq!(store.get("t", "p", b"k").await.unwrap(), Some(b"v".to_vec()));
    }
}
