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

use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use async_trait::async_trait;
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};

use super::{Row, Store, StoreError, WriteOp};

/// A [`Store`] in a local directory. Cheap to clone; all clones share the database.
#[derive(Clone)]
pub struct EmbeddedStore {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    /// Batches for the committer; `None` once dropped (which stops it).
    committer: Option<mpsc::Sender<Commit>>,
    thread: Option<JoinHandle<()>>,
}

/// What the store and its committer thread share.
struct Shared {
    db: Database,
    /// Opened keyspaces by table name; std `Mutex` because it is never held across an await.
    tables: Mutex<HashMap<&'static str, Keyspace>>,
}

/// One caller's batch, and where its outcome goes.
struct Commit {
    ops: Vec<WriteOp>,
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

fn row_key(partition: &str, clustering: &[u8]) -> Vec<u8> {
    let mut key = partition_prefix(partition);
    key.extend_from_slice(clustering);
    key
}

fn partition_prefix(partition: &str) -> Vec<u8> {
    let bytes = partition.as_bytes();
    let len = u16::try_from(bytes.len()).unwrap_or(u16::MAX);
    let mut key = Vec::with_capacity(2 + bytes.len() + 16);
    key.extend_from_slice(&len.to_be_bytes());
    key.extend_from_slice(&bytes[..usize::from(len)]);
    key
}

impl EmbeddedStore {
    /// Opens (or creates) the store in `dir`.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(backend)?;
        let db = Database::builder(dir.join("store")).open().map_err(backend)?;
        let shared = Arc::new(Shared { db, tables: Mutex::new(HashMap::new()) });
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
        let keyspace = self.db.keyspace(name, KeyspaceCreateOptions::default).map_err(backend)?;
        tables.insert(name, keyspace.clone());
        Ok(keyspace)
    }

    /// The committer: takes the first waiting batch, merges every batch already waiting behind it
    /// (up to [`MAX_GROUP_WRITES`] writes), commits them with one sync, answers each caller. Ends
    /// when the store is dropped.
    fn commit_loop(&self, receiver: &mpsc::Receiver<Commit>) {
        while let Ok(first) = receiver.recv() {
            let mut group = vec![first];
            let mut writes = group[0].ops.len();
            while writes < MAX_GROUP_WRITES {
                match receiver.try_recv() {
                    Ok(next) => {
                        writes += next.ops.len();
                        group.push(next);
                    }
                    Err(_) => break,
                }
            }
            metrics::histogram!("engage_store_group_commit_batches").record(group.len() as f64);
            // A panic inside the backend fails this group (its callers see the committer's
            // answer dropped) but never stops the committer.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.commit_group(group))).is_err() {
                metrics::counter!("engage_store_commit_panics_total").increment(1);
                tracing::error!("embedded store commit panicked; its batches failed");
            }
        }
    }

    /// Writes `ops` as one fjall batch, synced.
    fn write_group(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        if ops.is_empty() {
            return Ok(());
        }
        let mut batch = self.db.batch().durability(Some(PersistMode::SyncData));
        for op in ops {
            match op {
                WriteOp::Put { table, partition, clustering, value } => {
                    batch.insert(&self.table(table)?, row_key(&partition, &clustering), value);
                }
                WriteOp::Delete { table, partition, clustering } => {
                    batch.remove(&self.table(table)?, row_key(&partition, &clustering));
                }
            }
        }
        batch.commit().map_err(backend)
    }

    fn commit_group(&self, group: Vec<Commit>) {
        // A batch naming an invalid table fails alone; the others are merged, the last write of a
        // row winning.
        let mut merged = Vec::new();
        let mut waiting = Vec::with_capacity(group.len());
        for commit in group {
            match commit.ops.iter().find_map(|op| self.table(op.row().0).err()) {
                Some(error) => {
                    let _ = commit.done.send(Err(error));
                }
                None => {
                    merged.extend(commit.ops);
                    waiting.push(commit.done);
                }
            }
        }
        if waiting.is_empty() {
            return;
        }
        let outcome = self.write_group(super::last_writes(merged)).map_err(|e| e.to_string());
        for done in waiting {
            let _ = done.send(outcome.clone().map_err(StoreError::Backend));
        }
    }
}

#[async_trait]
impl Store for EmbeddedStore {
    async fn get(
        &self,
        table: &'static str,
        partition: &str,
        clustering: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let keyspace = self.table(table)?;
        let value = keyspace.get(row_key(partition, clustering)).map_err(backend)?;
        Ok(value.map(|v| v.to_vec()))
    }

    async fn scan(
        &self,
        table: &'static str,
        partition: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        let this = self.clone();
        let partition = partition.to_owned();
        let after = after.map(<[u8]>::to_vec);
        tokio::task::spawn_blocking(move || this.scan_blocking(table, &partition, after.as_deref(), limit))
            .await
            .map_err(backend)?
    }

    async fn batch(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        if ops.is_empty() {
            return Ok(());
        }
        let (done, outcome) = tokio::sync::oneshot::channel();
        let sender = self.inner.committer.as_ref().ok_or_else(|| backend("store closed"))?;
        sender.send(Commit { ops, done }).map_err(|_| backend("store committer stopped"))?;
        outcome.await.map_err(|_| backend("store committer stopped"))?
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
