//! The embedded backend: one fjall database in the data directory, one fjall keyspace per table.
//!
//! A row's fjall key is the partition key, length-prefixed (u16, big-endian) so that one
//! partition's rows are one contiguous prefix, followed by the clustering key.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};

use super::{Row, Store, StoreError, WriteOp};

/// A [`Store`] in a local directory. Cheap to clone; all clones share the database.
#[derive(Clone)]
pub struct EmbeddedStore {
    inner: Arc<Inner>,
}

struct Inner {
    db: Database,
    /// Opened keyspaces by table name; std `Mutex` because it is never held across an await.
    tables: Mutex<HashMap<&'static str, Keyspace>>,
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
        Ok(Self { inner: Arc::new(Inner { db, tables: Mutex::new(HashMap::new()) }) })
    }

    fn table(&self, name: &'static str) -> Result<Keyspace, StoreError> {
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(StoreError::InvalidTable(name.to_owned()));
        }
        let mut tables = self.inner.tables.lock().map_err(|_| backend("table map poisoned"))?;
        if let Some(keyspace) = tables.get(name) {
            return Ok(keyspace.clone());
        }
        let keyspace = self.inner.db.keyspace(name, KeyspaceCreateOptions::default).map_err(backend)?;
        tables.insert(name, keyspace.clone());
        Ok(keyspace)
    }

    /// Flushes the journal to disk (called on shutdown).
    pub fn persist(&self) -> Result<(), StoreError> {
        self.inner.db.persist(PersistMode::SyncAll).map_err(backend)
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

    fn batch_blocking(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        let mut batch = self.inner.db.batch().durability(Some(PersistMode::SyncData));
        for op in ops {
            match op {
                WriteOp::Put { table, partition, clustering, value } => {
                    let keyspace = self.table(table)?;
                    batch.insert(&keyspace, row_key(&partition, &clustering), value);
                }
                WriteOp::Delete { table, partition, clustering } => {
                    let keyspace = self.table(table)?;
                    batch.remove(&keyspace, row_key(&partition, &clustering));
                }
            }
        }
        batch.commit().map_err(backend)
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
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.batch_blocking(ops)).await.map_err(backend)?
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
