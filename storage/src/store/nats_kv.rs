//! The NATS JetStream KV backend: a cluster needs nothing but NATS, and every node sees the same
//! rows, so a partition that moves to another node finds its state there.
//!
//! One bucket holds every table. A row's key is `<table>.p<hex(partition)>.k<hex(clustering)>`:
//! hex keeps keys within the KV alphabet and preserves byte order. A scan reads the last value of
//! every key under `<table>.p<hex>.` through an ordered consumer (as `kv.keys()` does), skips
//! deletes, and sorts by clustering key: cost grows with the partition, so repositories keep
//! partitions small (day buckets, per-tenant keys).
//!
//! **Batches are not atomic here**: JetStream KV has no multi-key transaction (the server in use
//! predates atomic batch publish). A batch's writes except its last are sent together (pipelined
//! on the connection: one round trip instead of one each), and the last one only after all of them
//! succeeded; when a key appears twice only its last write is sent. A crash in the middle leaves
//! any subset of the earlier writes applied but never the last without all of them. Repositories
//! therefore keep every invariant inside one row (see `engage-actors`'s customer aggregate), which
//! every backend writes atomically, and make that row the batch's last write: it commits the rest.

use async_nats::jetstream::consumer::push::OrderedConfig;
use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::kv::{Config, Store as Bucket};
use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;

use super::{Row, Store, StoreError, WriteOp};

/// A [`Store`] in a JetStream KV bucket.
#[derive(Clone)]
pub struct NatsKvStore {
    bucket: Bucket,
    client: async_nats::Client,
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

fn check_table(table: &str) -> Result<(), StoreError> {
    if table.is_empty() || !table.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(StoreError::InvalidTable(table.to_owned()));
    }
    Ok(())
}

fn partition_prefix(table: &str, partition: &str) -> String {
    format!("{table}.p{}.", hex(partition.as_bytes()))
}

fn row_key(table: &str, partition: &str, clustering: &[u8]) -> String {
    format!("{}k{}", partition_prefix(table, partition), hex(clustering))
}

impl NatsKvStore {
    /// Puts `value` under `key`, or deletes `key`.
    async fn write(&self, key: String, value: Option<Bytes>) -> Result<(), StoreError> {
        match value {
            Some(value) => self.bucket.put(key, value).await.map(|_| ()).map_err(backend),
            None => self.bucket.delete(key).await.map_err(backend),
        }
    }

    /// Opens (or creates) the bucket `name` (file storage, one value per key).
    pub async fn open(jetstream: &async_nats::jetstream::Context, name: &str) -> Result<Self, StoreError> {
        let bucket = match jetstream.get_key_value(name).await {
            Ok(bucket) => bucket,
            Err(_) => jetstream
                .create_key_value(Config {
                    bucket: name.to_owned(),
                    history: 1,
                    storage: async_nats::jetstream::stream::StorageType::File,
                    ..Default::default()
                })
                .await
                .map_err(backend)?,
        };
        Ok(Self { bucket, client: jetstream.client() })
    }
}

#[async_trait]
impl Store for NatsKvStore {
    async fn get(
        &self,
        table: &'static str,
        partition: &str,
        clustering: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        check_table(table)?;
        let value = self.bucket.get(row_key(table, partition, clustering)).await.map_err(backend)?;
        Ok(value.map(|v| v.to_vec()))
    }

    async fn scan(
        &self,
        table: &'static str,
        partition: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        check_table(table)?;
        let key_prefix = partition_prefix(table, partition);
        let subject_prefix = format!("{}{key_prefix}", self.bucket.prefix);
        let consumer = self
            .bucket
            .stream
            .create_consumer(OrderedConfig {
                deliver_subject: self.client.new_inbox(),
                filter_subject: format!("{subject_prefix}>"),
                deliver_policy: DeliverPolicy::LastPerSubject,
                ..Default::default()
            })
            .await
            .map_err(backend)?;
        let mut rows = Vec::new();
        if consumer.cached_info().num_pending > 0 {
            let mut messages = consumer.messages().await.map_err(backend)?;
            while let Some(message) = messages.next().await {
                let message = message.map_err(backend)?;
                let pending = message.info().map_err(backend)?.pending;
                let deleted = message
                    .headers
                    .as_ref()
                    .and_then(|h| h.get("KV-Operation"))
                    .is_some_and(|op| op.as_str() == "DEL" || op.as_str() == "PURGE");
                if !deleted {
                    let key = message.subject.as_str().strip_prefix(&subject_prefix).unwrap_or_default();
                    if let Some(clustering) = key.strip_prefix('k').and_then(unhex) {
                        rows.push(Row { clustering, value: message.payload.to_vec() });
                    }
                }
                if pending == 0 {
                    break;
                }
            }
        }
        rows.sort_by(|a, b| a.clustering.cmp(&b.clustering));
        if let Some(after) = after {
            rows.retain(|row| row.clustering.as_slice() > after);
        }
        rows.truncate(limit);
        Ok(rows)
    }

    async fn batch(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        let mut writes: Vec<(String, Option<Bytes>)> = Vec::with_capacity(ops.len());
        for op in super::last_writes(ops) {
            let (key, value) = match op {
                WriteOp::Put { table, partition, clustering, value } => {
                    check_table(table)?;
                    (row_key(table, &partition, &clustering), Some(Bytes::from(value)))
                }
                WriteOp::Delete { table, partition, clustering } => {
                    check_table(table)?;
                    (row_key(table, &partition, &clustering), None)
                }
            };
            writes.push((key, value));
        }
        let Some(last) = writes.pop() else { return Ok(()) };
        let earlier = writes.into_iter().map(|(key, value)| self.write(key, value));
        for outcome in futures::future::join_all(earlier).await {
            outcome?;
        }
        self.write(last.0, last.1).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_stay_in_the_kv_alphabet_and_order() {
        let key = row_key("customers", "brand.1 *", b"\x00\xff");
        assert!(key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_'), "{key}");
        assert_eq!(unhex(&hex(b"\x00\xffab")), Some(b"\x00\xffab".to_vec()));
        assert!(hex(b"a") < hex(b"b") && hex(b"\x01") < hex(b"\x10"));
    }

    /// The conformance suite against a real nats-server (`ENGAGE_TEST_NATS_URL`, started by
    /// `scripts/test.sh`); a missing server fails the test.
    #[tokio::test]
    async fn nats_kv_store_passes_conformance() {
        let url = std::env::var("ENGAGE_TEST_NATS_URL")
            .expect("ENGAGE_TEST_NATS_URL is not set: run scripts/test.sh, which starts nats-server -js");
        let client = async_nats::connect(url).await.expect("nats connects");
        let jetstream = async_nats::jetstream::new(client);
        let bucket = format!("conformance_{}", std::process::id());
        let store = NatsKvStore::open(&jetstream, &bucket).await.expect("bucket");
        crate::store::conformance::run_all(&store).await;
        let _ = jetstream.delete_key_value(&bucket).await;
    }
}
