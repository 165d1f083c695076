//! The Store: tables keyed like ScyllaDB tables, `(partition key, clustering key) -> value`.
//!
//! The API is kept small on purpose (get, scan within a partition, atomic batch); table knowledge
//! lives in typed repositories above it. A batch returns only after it is durable; a staged batch
//! ([`Store::stage`]) returns once later reads see it and hands back a [`Durable`] that resolves
//! once it is durable, so a writer can go on to its next batch while this one syncs.

#[cfg(test)]
pub mod conformance;
mod embedded;
mod nats_atomic;
mod nats_kv;
mod scylla;
mod staged;

pub use embedded::{set_idle_hook, EmbeddedStore};
pub use nats_kv::NatsKvStore;
pub use scylla::{ScyllaOptions, ScyllaStore};

use async_trait::async_trait;

/// A failure of the storage backend itself (I/O, corruption, connection).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The backend failed; the message is for logs, not for clients.
    #[error("store backend failed: {0}")]
    Backend(String),
    /// A table name the backend cannot hold.
    #[error("invalid table name {0:?}: use ASCII letters, digits and '_'")]
    InvalidTable(String),
    /// A stored row does not decode as its table's type.
    #[error("corrupt row in {table} at {key}")]
    Corrupt {
        /// The table.
        table: &'static str,
        /// The row's key, `partition / clustering` (clustering bytes shown lossily).
        key: String,
        /// Why it does not decode.
        #[source]
        source: serde_json::Error,
    },
    /// A write built on reads of an earlier store generation ([`Store::generation`]): the store
    /// dropped staged writes since, so what the caller read may be gone.
    #[error("store generation moved from {read} to {now}: staged writes were dropped; read again")]
    Stale {
        /// The generation the caller's reads were made in.
        read: u64,
        /// The store's generation now.
        now: u64,
    },
    /// Not written because a batch committed with it or ahead of it failed (it may build on that
    /// batch's rows): this batch did nothing wrong, and the same writes made again can land.
    #[error("not written: {0}")]
    Behind(String),
}

impl StoreError {
    /// Whether the failure belongs to another batch (one written with it, or one whose dropped
    /// rows it read): retrying the same work is expected to succeed once that batch is gone.
    pub fn is_behind_another(&self) -> bool {
        matches!(self, Self::Behind(_) | Self::Stale { .. })
    }
}

/// One row of a partition, as returned by [`Store::scan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The clustering key; rows of a partition are ordered by it, bytewise.
    pub clustering: Vec<u8>,
    /// The stored value.
    pub value: Vec<u8>,
}

/// One write of an atomic batch.
#[derive(Clone, Debug)]
pub enum WriteOp {
    /// Insert or replace a row.
    Put {
        /// Table name.
        table: &'static str,
        /// Partition key.
        partition: String,
        /// Clustering key.
        clustering: Vec<u8>,
        /// Value.
        value: Vec<u8>,
    },
    /// Delete a row (no error when absent).
    Delete {
        /// Table name.
        table: &'static str,
        /// Partition key.
        partition: String,
        /// Clustering key.
        clustering: Vec<u8>,
    },
}

impl WriteOp {
    /// The row this writes: its table, partition key and clustering key.
    pub fn row(&self) -> (&'static str, &str, &[u8]) {
        match self {
            WriteOp::Put { table, partition, clustering, .. } | WriteOp::Delete { table, partition, clustering } => {
                (table, partition, clustering)
            }
        }
    }
}

/// A write that names one row (so that [`last_writes`] can keep the last write of each).
pub(crate) trait RowWrite {
    /// The row's identity.
    type Row<'a>: std::hash::Hash + Eq
    where
        Self: 'a;
    /// The row this writes.
    fn row_id(&self) -> Self::Row<'_>;
}

impl RowWrite for WriteOp {
    type Row<'a> = (&'static str, &'a str, &'a [u8]);
    fn row_id(&self) -> Self::Row<'_> {
        self.row()
    }
}

/// The writes of a batch that decide its outcome: the last write of each row, in the order of
/// those writes. Backends that cannot order two writes of one row inside a batch (a ScyllaDB
/// batch gives them one timestamp; pipelined NATS KV puts race; fjall gives a batch's writes
/// one sequence number) send only these, so on every backend a later write of a row in a batch
/// wins.
pub(crate) fn last_writes<W: RowWrite>(ops: Vec<W>) -> Vec<W> {
    let mut last = std::collections::HashMap::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        last.insert(op.row_id(), i);
    }
    if last.len() == ops.len() {
        // no row written twice: all of them
        drop(last);
        return ops;
    }
    let keep: Vec<bool> = ops.iter().enumerate().map(|(i, op)| last.get(&op.row_id()) == Some(&i)).collect();
    drop(last);
    ops.into_iter().zip(keep).filter_map(|(op, keep)| keep.then_some(op)).collect()
}

/// Changes to a table ([`Store::watch_table`]): one item per change, and whether the watch can
/// be trusted now (its connection is up: while it is down, changes made by others go unseen until
/// the watch catches up or ends).
pub struct TableChanges {
    /// One item per change; ends when the watch can no longer tell.
    pub changes: futures::stream::BoxStream<'static, ()>,
    /// Whether the watch's connection is up at this moment.
    pub connected: Box<dyn Fn() -> bool + Send + Sync>,
}

/// A key-value store over `(table, partition, clustering)`.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Reads one row.
    async fn get(&self, table: &'static str, partition: &str, clustering: &[u8])
        -> Result<Option<Vec<u8>>, StoreError>;

    /// Reads many rows at once, each as [`Store::get`] would: answers in the order of `rows`. A
    /// networked store reads them in one round trip where it can (NATS KV: one batched direct
    /// get per 256 rows); the default reads them concurrently.
    async fn get_many(&self, rows: &[(&'static str, &str, &[u8])]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        futures::future::try_join_all(
            rows.iter().map(|&(table, partition, clustering)| self.get(table, partition, clustering)),
        )
        .await
    }

    /// Reads up to `limit` rows of one partition in clustering order, starting after `after`
    /// (exclusive) or from the start.
    async fn scan(
        &self,
        table: &'static str,
        partition: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError>;

    /// Applies all writes atomically and durably: after `Ok`, a crash loses none of them.
    async fn batch(&self, ops: Vec<WriteOp>) -> Result<(), StoreError>;

    /// Applies all writes atomically like [`Store::batch`], in two steps: when this returns `Ok`,
    /// every later read (by anyone) sees the writes and every later batch is applied after them;
    /// the returned [`Durable`] resolves once they are durable. Whoever answers a client for these
    /// writes waits for the [`Durable`] first. Backends without a cheaper way write the batch
    /// durably here and return [`Durable::done`].
    async fn stage(&self, ops: Vec<WriteOp>) -> Result<Durable, StoreError> {
        self.batch(ops).await?;
        Ok(Durable::done())
    }

    /// How many times the store dropped staged writes it could not make durable and went on (NATS
    /// KV: a group of staged batches that did not reach the bucket, and every batch queued behind
    /// it). Whoever keeps state built on reads (a tenant actor's caches) drops it when this moves,
    /// and writes with [`Store::stage_at`] or [`Store::batch_at`], so that nothing built on a
    /// dropped write lands. Stores that never drop staged writes (the embedded store fails for good
    /// instead; ScyllaDB stages nothing) stay at 0.
    fn generation(&self) -> u64 {
        0
    }

    /// [`Store::stage`], refused with [`StoreError::Stale`] unless the store is still at
    /// `generation`.
    async fn stage_at(&self, generation: u64, ops: Vec<WriteOp>) -> Result<Durable, StoreError> {
        self.check_generation(generation)?;
        self.stage(ops).await
    }

    /// [`Store::batch`], refused with [`StoreError::Stale`] unless the store is still at
    /// `generation`.
    async fn batch_at(&self, generation: u64, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        self.check_generation(generation)?;
        self.batch(ops).await
    }

    /// `Err(Stale)` unless the store is at `generation`.
    fn check_generation(&self, generation: u64) -> Result<(), StoreError> {
        match self.generation() {
            now if now == generation => Ok(()),
            now => Err(StoreError::Stale { read: generation, now }),
        }
    }

    /// Removes what the backend still keeps of deleted rows `(table, partition, clustering)`
    /// beyond the delete itself: on NATS KV a delete leaves a marker whose key spells the row's
    /// partition and clustering (a customer's number, for some tables), and the marker is purged.
    /// For an erasure, after the deletes landed and before anything writes those rows again.
    /// Backends that keep nothing readable of a deleted row do nothing.
    async fn forget(&self, rows: &[(&'static str, String, Vec<u8>)]) -> Result<(), StoreError> {
        let _ = rows;
        Ok(())
    }

    /// Makes the bytes of rows no read can reach any more (deleted or overwritten, as an erasure
    /// leaves them) leave the backend's files: the end of an erasure. The embedded store seals
    /// its journal, flushes every table and deletes the flushed journals before it answers, then
    /// compacts every table at once on its purge thread (`engage_store_purges_total`,
    /// `engage_store_purge_pending`). Backends whose files are their servers' (NATS, ScyllaDB)
    /// do nothing here: `docs/consent.md` says what they keep and for how long.
    async fn purge_unreachable(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// A stream that yields whenever a row of `table` changes (a put or a delete, made by this
    /// process or any other), from the moment it is answered, and ends when it can no longer
    /// tell (its watch broke): what a cache of the table's rows needs to stay exact. `Ok(None)`
    /// when the backend has no such watch (the embedded store, whose reads are local anyway;
    /// ScyllaDB): such a table is then not cached. `Err` when it cannot be set up now.
    async fn watch_table(&self, table: &'static str) -> Result<Option<TableChanges>, StoreError> {
        let _ = table;
        Ok(None)
    }

    /// Whether a read is answered inside this process, without a network round trip (the
    /// embedded store). Tenant actors then read their rows in their own turn: reading them ahead
    /// of the actor (`engage_actors::read_ahead`) costs more there than the wait it saves.
    fn local_reads(&self) -> bool {
        false
    }

    /// `Err` once the store can no longer be trusted with reads or writes (the embedded store after
    /// a failed sync to disk: what it holds in memory may not be on disk, so it refuses everything
    /// until engage is restarted and recovers from the disk).
    fn healthy(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Writes one row durably.
    async fn put(
        &self,
        table: &'static str,
        partition: &str,
        clustering: &[u8],
        value: Vec<u8>,
    ) -> Result<(), StoreError> {
        self.batch(vec![WriteOp::Put {
            table,
            partition: partition.to_owned(),
            clustering: clustering.to_vec(),
            value,
        }])
        .await
    }
}

/// The durability of a staged batch ([`Store::stage`]).
#[derive(Debug)]
#[must_use = "a staged batch is durable only once its Durable resolves"]
pub struct Durable(Option<tokio::sync::oneshot::Receiver<Result<(), StoreError>>>);

impl Durable {
    /// Already durable.
    pub fn done() -> Self {
        Self(None)
    }

    /// Resolves when the committer answers on `receiver`.
    pub(crate) fn pending(receiver: tokio::sync::oneshot::Receiver<Result<(), StoreError>>) -> Self {
        Self(Some(receiver))
    }

    /// Waits until the batch is durable; `Err` if it never will be.
    pub async fn wait(self) -> Result<(), StoreError> {
        match self.0 {
            None => Ok(()),
            Some(receiver) => receiver.await.map_err(|_| StoreError::Backend("store committer stopped".into()))?,
        }
    }
}

/// Clustering key for time-ordered rows: a big-endian timestamp that sorts negative values first,
/// then a sequence number that keeps rows with equal timestamps apart.
pub fn time_key(timestamp_ms: i64, seq: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(16);
    key.extend_from_slice(&((timestamp_ms as u64) ^ (1 << 63)).to_be_bytes());
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

/// The timestamp of a [`time_key`].
pub fn time_key_timestamp(key: &[u8]) -> Option<i64> {
    let bytes: [u8; 8] = key.get(..8)?.try_into().ok()?;
    Some((u64::from_be_bytes(bytes) ^ (1 << 63)) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_keys_sort_by_time_then_sequence() {
        let keys = [time_key(-5, 0), time_key(0, 0), time_key(0, 1), time_key(1_700_000_000_000, 0)];
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(time_key_timestamp(&time_key(-5, 9)), Some(-5));
    }
}
