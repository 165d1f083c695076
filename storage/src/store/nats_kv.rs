//! The NATS JetStream KV backend: a cluster needs nothing but NATS, and every node sees the same
//! rows, so a partition that moves to another node finds its state there.
//!
//! One bucket holds every table. A row's key is `<table>.p<hex(partition)>.k<hex(clustering)>`:
//! hex keeps keys within the KV alphabet and preserves byte order. A scan reads the last value of
//! every key under `<table>.p<hex>.` through an ordered consumer (as `kv.keys()` does), skips
//! deletes, and sorts by clustering key: cost grows with the partition, so repositories keep
//! partitions small (day buckets, per-tenant keys).
//!
//! **Batches are atomic on nats-server 2.12 and later**: the store turns on atomic batch publish
//! (ADR-50, `allow_atomic`) on the bucket's stream at open, and a group of batches of at most
//! 1,000 writes is published as one atomic batch ([`super::nats_atomic`]): all of its rows land or
//! none does, so a retried order never counts twice in a rollup whose order row failed. On an
//! older server (or a group that cannot fit one batch: a single batch of over 1,000 writes) a
//! batch's writes except its last are sent together (pipelined on the connection: one round trip
//! instead of one each), and the last one only after all of them succeeded; when a key appears
//! twice only its last write is sent. A crash in the middle then leaves any subset of the earlier
//! writes applied but never the last without all of them. Repositories therefore also keep every
//! invariant inside one row (see `engage-actors`'s customer aggregate), which every backend writes
//! atomically, and make that row the batch's last write: it commits the rest.
//!
//! **Group commit and staged batches.** Every batch goes to one committer task, which takes the
//! batches waiting at that moment as a group: first the earlier writes of every batch in the group
//! together, then, once all of them succeeded, the last writes together. So a group costs two
//! round trips however many batches it holds, and each batch keeps the rule above (its last write
//! only after all its others). A key written by two batches of a group is sent once, with the later
//! batch's value; a batch whose earlier writes touch a group's last-write keys (or the reverse)
//! starts the next group, so the two phases never hold the same key. [`Store::stage`] puts a
//! batch's writes in the *staged* map before it goes to the committer and takes them out once they
//! are in the bucket: [`Store::get`] answers from the map, [`Store::scan`] of a partition with
//! staged rows waits until they are written. A tenant actor thus goes on to its next message while
//! the last one's writes travel, and answers each message once its batch is durable.
//!
//! **A failed group with staged batches in it** (NATS unreachable past a write's timeout, a
//! rejected value) is dropped, and the store goes on: under the staged map's lock the committer
//! empties the map, moves the store's generation ([`Store::generation`]) and notes the last batch
//! sequence handed out; every batch up to it (queued behind the failed group, so possibly built on
//! its rows) fails without being written. A write made with [`Store::stage_at`] or
//! [`Store::batch_at`] for an older generation is refused, so a tenant actor that read a dropped
//! row (from the map or its caches) cannot write anything built on it: it drops its caches and
//! reads the bucket again. Readers outside the actors may have seen a dropped row; nothing they
//! were answered for a write is lost, since every write's answer waits for its group. A group of
//! several batches that fails is first written again one batch at a time ([`group`]): the batches
//! before the one the bucket refuses land, it fails with its own error, and the batches after it
//! fail as [`StoreError::Behind`], which callers retry without blaming themselves.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_nats::jetstream::consumer::push::OrderedConfig;
use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::kv::{Config, Store as Bucket};
use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;

use super::nats_atomic::{AtomicPublisher, MAX_ATOMIC};
use super::staged::Staging;
use super::{Durable, Row, Store, StoreError, WriteOp};

mod group;
mod multi_get;

use group::Group;
use multi_get::{Found, MultiGet};

/// A [`Store`] in a JetStream KV bucket.
#[derive(Clone)]
pub struct NatsKvStore {
    bucket: Bucket,
    client: async_nats::Client,
    shared: Arc<Shared>,
    /// Batches for the committer, sent under the staged map's lock (so in sequence order).
    committer: tokio::sync::mpsc::UnboundedSender<Commit>,
    /// Batched reads ([`Store::get_many`]).
    multi_get: Arc<MultiGet>,
}

/// What the store and its committer share.
#[derive(Default)]
struct Shared {
    /// Staged writes not yet in the bucket, by bucket key.
    staging: Staging<String>,
    /// How many times staged batches were dropped ([`Store::generation`]); moved under the
    /// staged map's lock.
    generation: AtomicU64,
}

/// A write as the bucket takes it: key, and value (`None`: a delete).
pub(super) type KvWrite = (String, Option<Bytes>);

/// One caller's batch (its writes keyed, each row's last write only, the commit row last) and
/// where its outcome goes.
pub(super) struct Commit {
    writes: Vec<KvWrite>,
    seq: u64,
    staged: bool,
    done: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
}

/// Most batches merged into one group.
const MAX_GROUP_BATCHES: usize = 512;

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    hex::decode(text).ok()
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

impl Shared {
    /// The committer: takes the first waiting batch and every batch already waiting behind it that
    /// fits the group ([`Group::takes`]), writes the group, answers each caller. Ends when the
    /// store is dropped.
    async fn commit_loop(
        self: Arc<Self>,
        bucket: Bucket,
        atomic: Option<AtomicPublisher>,
        mut receiver: tokio::sync::mpsc::UnboundedReceiver<Commit>,
    ) {
        let limit = if atomic.is_some() { MAX_ATOMIC } else { usize::MAX };
        let mut next = None;
        // batches up to this sequence were queued when staged batches were dropped: they fail
        let mut dropped_through = 0;
        loop {
            let first = match next.take() {
                Some(commit) => commit,
                None => match receiver.recv().await {
                    Some(commit) => commit,
                    None => return,
                },
            };
            if first.seq <= dropped_through {
                let _ = first
                    .done
                    .send(Err(StoreError::Behind("an earlier staged batch failed to reach the bucket".into())));
                continue;
            }
            let mut group = Group::with_limit(limit);
            group.add(first);
            while group.len() < MAX_GROUP_BATCHES {
                match receiver.try_recv() {
                    Ok(commit) if group.takes(&commit) => group.add(commit),
                    Ok(commit) => {
                        next = Some(commit);
                        break;
                    }
                    Err(_) => break,
                }
            }
            metrics::histogram!("engage_store_group_commit_batches").record(group.len() as f64);
            let (staged, last_seq) = (group.staged, group.last_seq);
            // A panic inside the client fails this group (its callers see the committer's answer
            // dropped) but never stops the committer.
            let commit = std::panic::AssertUnwindSafe(self.commit_group(&bucket, atomic.as_ref(), group));
            let started = std::time::Instant::now();
            let committed = futures::FutureExt::catch_unwind(commit).await;
            metrics::histogram!("engage_store_group_commit_seconds").record(started.elapsed().as_secs_f64());
            let written = match committed {
                Ok(written) => written,
                Err(_) => {
                    metrics::counter!("engage_store_commit_panics_total").increment(1);
                    tracing::error!("NATS KV store commit panicked; its batches failed");
                    false
                }
            };
            if !written && staged {
                dropped_through = self.drop_staged();
            }
            self.staging.settle(last_seq.max(dropped_through));
        }
    }

    /// Writes `group` and answers its callers; whether all of it was written. A group of several
    /// batches that fails is written again one batch at a time ([`group::isolate`]), so the batch
    /// the bucket refuses fails alone: those before it land, those after it are answered
    /// [`StoreError::Behind`] (they may be built on its rows).
    async fn commit_group(&self, bucket: &Bucket, atomic: Option<&AtomicPublisher>, group: Group) -> bool {
        let keys = group.keys();
        let last_seq = group.last_seq;
        let (phases, waiting, batches) = group.into_parts();
        match group::write_phases(bucket, atomic, phases).await {
            Ok(()) => {
                self.staging.unstage(keys, last_seq);
                for done in waiting {
                    let _ = done.send(Ok(()));
                }
                true
            }
            Err(error) if waiting.len() == 1 => {
                if let Some(done) = waiting.into_iter().next() {
                    let _ = done.send(Err(error));
                }
                false
            }
            Err(error) => {
                let written = group::isolate(bucket, atomic, batches, waiting, &error).await;
                if written {
                    self.staging.unstage(keys, last_seq);
                }
                written
            }
        }
    }

    /// Drops every staged row and moves the generation; the last batch sequence handed out, up to
    /// which queued batches fail.
    fn drop_staged(&self) -> u64 {
        let mut staged = self.staging.lock_anyway();
        staged.clear();
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        metrics::counter!("engage_store_dropped_staged_total").increment(1);
        tracing::error!(
            generation,
            dropped_through = staged.last_seq,
            "NATS KV store: a group of staged batches failed; every batch queued behind it fails, and tenant actors read the bucket again"
        );
        staged.last_seq
    }
}

impl NatsKvStore {
    /// Opens (or creates) the bucket `name` (file storage, one value per key, `replicas` copies:
    /// an existing bucket with another count is changed to it) and starts its committer.
    pub async fn open(
        jetstream: &async_nats::jetstream::Context,
        name: &str,
        replicas: usize,
    ) -> Result<Self, StoreError> {
        let bucket = match jetstream.get_key_value(name).await {
            Ok(bucket) => {
                crate::replicas::reconcile(jetstream, &format!("KV_{name}"), replicas).await;
                bucket
            }
            Err(_) => jetstream
                .create_key_value(Config {
                    bucket: name.to_owned(),
                    history: 1,
                    storage: async_nats::jetstream::stream::StorageType::File,
                    num_replicas: replicas,
                    ..Default::default()
                })
                .await
                .map_err(backend)?,
        };
        let shared = Arc::new(Shared::default());
        let (committer, receiver) = tokio::sync::mpsc::unbounded_channel();
        let atomic = AtomicPublisher::enable(jetstream, &bucket).await?;
        tracing::debug!(atomic = atomic.is_some(), bucket = name, "NATS KV store opened");
        tokio::spawn(shared.clone().commit_loop(bucket.clone(), atomic, receiver));
        let multi_get = Arc::new(MultiGet::start(jetstream.client(), &bucket.stream_name).await?);
        Ok(Self { bucket, client: jetstream.client(), shared, committer, multi_get })
    }

    /// Sends `ops` to the committer, first putting them in the staged map when `staged`; the
    /// answer comes on the returned [`Durable`]. Refused when `generation` is given and the store
    /// is no longer at it.
    fn send(&self, ops: Vec<WriteOp>, staged: bool, generation: Option<u64>) -> Result<Durable, StoreError> {
        let mut writes: Vec<KvWrite> = Vec::with_capacity(ops.len());
        for op in super::last_writes(ops) {
            let (table, partition, clustering) = op.row();
            check_table(table)?;
            let key = row_key(table, partition, clustering);
            writes.push(match op {
                WriteOp::Put { value, .. } => (key, Some(Bytes::from(value))),
                WriteOp::Delete { .. } => (key, None),
            });
        }
        if writes.is_empty() {
            return Ok(Durable::done());
        }
        let (done, outcome) = tokio::sync::oneshot::channel();
        let mut map = self.shared.staging.lock()?;
        // checked under the lock the committer moves it under: either this batch is queued
        // before a drop (and fails with it) or it sees the new generation
        if let Some(generation) = generation {
            self.check_generation(generation)?;
        }
        let seq = map.last_seq + 1;
        if staged {
            for (key, value) in &writes {
                map.insert(key.clone(), seq, value.clone());
            }
        }
        self.committer.send(Commit { writes, seq, staged, done }).map_err(|_| backend("store committer stopped"))?;
        map.last_seq = seq;
        Ok(Durable::pending(outcome))
    }
}

#[async_trait]
impl Store for NatsKvStore {
    /// A KV watch (an ordered consumer, new changes only) of the table's keys; it ends at the
    /// first error it reports.
    async fn watch_table(&self, table: &'static str) -> Result<Option<super::TableChanges>, StoreError> {
        check_table(table)?;
        let watch = self.bucket.watch(format!("{table}.>")).await.map_err(backend)?;
        let changes = watch.take_while(|entry| futures::future::ready(entry.is_ok())).map(|_| ()).boxed();
        let client = self.client.clone();
        let connected = Box::new(move || client.connection_state() == async_nats::connection::State::Connected);
        Ok(Some(super::TableChanges { changes, connected }))
    }

    async fn get(
        &self,
        table: &'static str,
        partition: &str,
        clustering: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        check_table(table)?;
        let key = row_key(table, partition, clustering);
        if let Some(value) = self.shared.staging.value(&key)? {
            return Ok(value);
        }
        let value = self.bucket.get(key).await.map_err(backend)?;
        Ok(value.map(|v| v.to_vec()))
    }

    async fn get_many(&self, rows: &[(&'static str, &str, &[u8])]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        /// Where a row's answer comes from.
        enum Source {
            /// The staged map (as a single read answers).
            Staged(Option<Vec<u8>>),
            /// The bucket, at this subject.
            Bucket(String),
        }
        let mut wanted: Vec<Source> = Vec::with_capacity(rows.len());
        for &(table, partition, clustering) in rows {
            check_table(table)?;
            let key = row_key(table, partition, clustering);
            wanted.push(match self.shared.staging.value(&key)? {
                Some(staged) => Source::Staged(staged),
                None => Source::Bucket(format!("{}{key}", self.bucket.prefix)),
            });
        }
        let mut subjects: Vec<String> = wanted
            .iter()
            .filter_map(|source| match source {
                Source::Bucket(subject) => Some(subject.clone()),
                Source::Staged(_) => None,
            })
            .collect();
        subjects.sort_unstable();
        subjects.dedup();
        let mut read: HashMap<String, Option<Vec<u8>>> = HashMap::with_capacity(subjects.len());
        if !subjects.is_empty() && !self.multi_get.unsupported() {
            let chunks = futures::future::try_join_all(
                subjects.chunks(multi_get::MOST_SUBJECTS).map(|chunk| self.multi_get.read(chunk)),
            )
            .await?;
            for chunk in chunks {
                match chunk {
                    Found::Rows(rows) => read.extend(rows),
                    Found::Unsupported => break,
                }
            }
        }
        if self.multi_get.unsupported() {
            return futures::future::try_join_all(
                rows.iter().map(|&(table, partition, clustering)| self.get(table, partition, clustering)),
            )
            .await;
        }
        Ok(wanted
            .into_iter()
            .map(|source| match source {
                Source::Staged(staged) => staged,
                Source::Bucket(subject) => read.get(&subject).cloned().flatten(),
            })
            .collect())
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
        // a partition with staged rows is scanned once they are in the bucket
        self.shared.staging.wait_for_rows_in(key_prefix.clone(), |key| key.starts_with(&key_prefix)).await?;
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
        // the consumer is removed once read: left to expire, a burst of scans (an erasure reads a
        // few hundred partitions) reaches the server's consumer limit
        let name = consumer.cached_info().name.clone();
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
        if let Err(error) = self.bucket.stream.delete_consumer(&name).await {
            tracing::debug!(%error, "a scan's consumer was not removed; it expires on its own");
        }
        rows.sort_by(|a, b| a.clustering.cmp(&b.clustering));
        if let Some(after) = after {
            rows.retain(|row| row.clustering.as_slice() > after);
        }
        rows.truncate(limit);
        Ok(rows)
    }

    async fn batch(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        self.send(ops, false, None)?.wait().await
    }

    async fn forget(&self, rows: &[(&'static str, String, Vec<u8>)]) -> Result<(), StoreError> {
        for (table, partition, clustering) in rows {
            check_table(table)?;
            let subject = format!("{}{}", self.bucket.prefix, row_key(table, partition, clustering));
            self.bucket.stream.purge().filter(subject).await.map_err(backend)?;
        }
        Ok(())
    }

    async fn stage(&self, ops: Vec<WriteOp>) -> Result<Durable, StoreError> {
        self.send(ops, true, None)
    }

    fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::SeqCst)
    }

    async fn stage_at(&self, generation: u64, ops: Vec<WriteOp>) -> Result<Durable, StoreError> {
        self.send(ops, true, Some(generation))
    }

    async fn batch_at(&self, generation: u64, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        self.send(ops, false, Some(generation))?.wait().await
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

    /// A JetStream context on the test's nats-server (`ENGAGE_TEST_NATS_URL`, started by
    /// `scripts/test.sh`); a missing server fails the test.
    async fn jetstream() -> async_nats::jetstream::Context {
        let url = std::env::var("ENGAGE_TEST_NATS_URL")
            .expect("ENGAGE_TEST_NATS_URL is not set: run scripts/test.sh, which starts nats-server -js");
        let client = async_nats::connect(url).await.expect("nats connects");
        async_nats::jetstream::new(client)
    }

    #[tokio::test]
    async fn nats_kv_store_passes_conformance() {
        let jetstream = jetstream().await;
        let bucket = format!("conformance_{}", std::process::id());
        let store = NatsKvStore::open(&jetstream, &bucket, 1).await.expect("bucket");
        crate::store::conformance::run_all(&store).await;
        assert!(!store.multi_get.unsupported(), "the test's nats-server (2.11+) reads many rows in one request");
        let _ = jetstream.delete_key_value(&bucket).await;
    }

    fn put(key: &str, value: &[u8]) -> WriteOp {
        WriteOp::Put { table: "g", partition: "p".into(), clustering: key.as_bytes().to_vec(), value: value.to_vec() }
    }

    /// Many batches staged at once share groups; each batch's rows land, the later write of a row
    /// wins, also when one batch's commit row is another's earlier write.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn staged_batches_group_and_stay_ordered() {
        let jetstream = jetstream().await;
        let bucket = format!("group_{}", std::process::id());
        let store = NatsKvStore::open(&jetstream, &bucket, 1).await.expect("bucket");
        let mut durables = Vec::new();
        for round in 0..200u8 {
            let ledger = format!("ledger{round}");
            let batch = match round % 3 {
                // the usual shape: rows, then the commit row
                0 | 1 => vec![put(&ledger, b"x"), put("rollup", &[round]), put("customer", &[round])],
                // the commit row as an earlier write, a rollup as the last one: a new group
                _ => vec![put("customer", &[round]), put(&ledger, b"x"), put("rollup", &[round])],
            };
            durables.push(store.stage(batch).await.unwrap());
            assert_eq!(store.get("g", "p", b"customer").await.unwrap(), Some(vec![round]));
        }
        for durable in durables {
            durable.wait().await.unwrap();
        }
        // read past the staged map: the bucket itself holds the last values
        let key = row_key("g", "p", b"customer");
        assert!(store.shared.staging.value(&key).unwrap().is_none(), "written rows leave the staged map");
        assert_eq!(store.bucket.get(key).await.unwrap().map(|v| v.to_vec()), Some(vec![199]));
        assert_eq!(store.bucket.get(row_key("g", "p", b"rollup")).await.unwrap().map(|v| v.to_vec()), Some(vec![199]));
        assert_eq!(store.scan("g", "p", None, 1000).await.unwrap().len(), 202);
        let _ = jetstream.delete_key_value(&bucket).await;
    }

    /// A new bucket `<name>_<pid>` whose values hold at most 256 bytes (the limit counts an atomic
    /// batch's headers too, about 100 bytes), and the store over it.
    async fn small_bucket(jetstream: &async_nats::jetstream::Context, name: &str) -> (String, NatsKvStore) {
        let bucket = format!("{name}_{}", std::process::id());
        let _ = jetstream.delete_key_value(&bucket).await;
        jetstream
            .create_key_value(Config { bucket: bucket.clone(), history: 1, max_value_size: 256, ..Default::default() })
            .await
            .expect("bucket");
        let store = NatsKvStore::open(jetstream, &bucket, 1).await.expect("bucket");
        (bucket, store)
    }

    /// A staged batch that cannot be written (here: a value over the bucket's limit) fails its
    /// caller and every batch queued behind it, drops the staged rows and moves the generation:
    /// a write for the old generation is refused, one for the new generation lands.
    #[tokio::test]
    async fn a_failed_staged_batch_drops_what_is_queued_behind_it_and_the_store_goes_on() {
        let jetstream = jetstream().await;
        let (bucket, store) = small_bucket(&jetstream, "drop").await;
        store.batch(vec![put("y", b"0")]).await.unwrap();
        let before = store.generation();
        // the committer runs only once this task waits: both batches are queued first, and the
        // second (its earlier write is the first's commit row) goes in the next group
        let first = store.stage_at(before, vec![put("x", &[b'x'; 1000]), put("y", b"1")]).await.unwrap();
        let second = store.stage_at(before, vec![put("y", b"2"), put("z", b"2")]).await.unwrap();
        assert_eq!(store.get("g", "p", b"z").await.unwrap(), Some(b"2".to_vec()), "staged: read at once");
        assert!(first.wait().await.is_err(), "the value is over the bucket's limit");
        let second = second.wait().await;
        assert!(
            matches!(second, Err(StoreError::Behind(_))),
            "queued behind a failed staged batch: dropped, {second:?}"
        );
        assert_eq!(store.generation(), before + 1);
        assert!(store.healthy().is_ok(), "the store goes on");
        assert_eq!(store.get("g", "p", b"y").await.unwrap(), Some(b"0".to_vec()), "the bucket's row again");
        assert_eq!(store.get("g", "p", b"z").await.unwrap(), None, "the dropped batch never landed");
        assert_eq!(store.scan("g", "p", None, 10).await.unwrap().len(), 1);
        let stale = store.stage_at(before, vec![put("w", b"1")]).await;
        assert!(matches!(stale, Err(StoreError::Stale { .. })), "built on dropped rows: refused");
        assert!(matches!(store.batch_at(before, vec![put("w", b"1")]).await, Err(StoreError::Stale { .. })));
        store.stage_at(before + 1, vec![put("w", b"1")]).await.unwrap().wait().await.unwrap();
        assert_eq!(store.bucket.get(row_key("g", "p", b"w")).await.unwrap().map(|v| v.to_vec()), Some(b"1".to_vec()));
        let _ = jetstream.delete_key_value(&bucket).await;
    }

    /// A group whose middle batch the bucket refuses is written again a batch at a time: the batch
    /// before it lands, it fails with its own error, the one after it is answered `Behind` (not
    /// its fault, to be retried) and never lands.
    #[tokio::test]
    async fn one_refused_batch_fails_alone_and_not_the_batches_of_its_group() {
        let jetstream = jetstream().await;
        let (bucket, store) = small_bucket(&jetstream, "isolate").await;
        let before = store.generation();
        // the committer runs only once this task waits: the three batches make one group
        let first = store.stage_at(before, vec![put("a", b"1"), put("ca", b"1")]).await.unwrap();
        let refused = store.stage_at(before, vec![put("big", &[b'x'; 1000]), put("cb", b"1")]).await.unwrap();
        let third = store.stage_at(before, vec![put("c", b"1"), put("cc", b"1")]).await.unwrap();
        first.wait().await.unwrap();
        let refused = refused.wait().await;
        assert!(matches!(refused, Err(StoreError::Backend(_))), "its own failure: {refused:?}");
        let third = third.wait().await;
        assert!(matches!(third, Err(StoreError::Behind(_))), "another batch's failure: {third:?}");
        assert!(third.is_err_and(|e| e.is_behind_another()));
        let landed: Vec<_> = store.scan("g", "p", None, 10).await.unwrap().into_iter().map(|r| r.clustering).collect();
        assert_eq!(landed, vec![b"a".to_vec(), b"ca".to_vec()]);
        assert_eq!(store.generation(), before + 1, "staged rows were dropped: actors read again");
        let _ = jetstream.delete_key_value(&bucket).await;
    }

    /// A deleted row leaves a delete marker whose subject spells its key; `forget` purges it, and
    /// leaves every other key's messages alone.
    #[tokio::test]
    async fn forgetting_a_deleted_row_purges_its_marker() {
        let jetstream = jetstream().await;
        let bucket = format!("forget_{}", std::process::id());
        let _ = jetstream.delete_key_value(&bucket).await;
        let store = NatsKvStore::open(&jetstream, &bucket, 1).await.expect("bucket");
        store.batch(vec![put("9811400001", b"personal"), put("kept", b"1")]).await.unwrap();
        let gone = WriteOp::Delete { table: "g", partition: "p".into(), clustering: b"9811400001".to_vec() };
        store.batch(vec![gone]).await.unwrap();
        let mut stream = jetstream.get_stream(format!("KV_{bucket}")).await.unwrap();
        assert_eq!(stream.info().await.unwrap().state.messages, 2, "the value and the delete marker");
        store.forget(&[("g", "p".into(), b"9811400001".to_vec())]).await.unwrap();
        assert_eq!(stream.info().await.unwrap().state.messages, 1, "only the kept row");
        assert_eq!(store.scan("g", "p", None, 10).await.unwrap().len(), 1);
        let _ = jetstream.delete_key_value(&bucket).await;
    }

    /// A batch one of whose rows cannot be written lands none of its rows (atomic batch publish):
    /// the rollup written before a failing order row is not there to be counted again on a retry.
    #[tokio::test]
    async fn a_batch_with_a_row_the_bucket_refuses_writes_none_of_its_rows() {
        let jetstream = jetstream().await;
        let (bucket, store) = small_bucket(&jetstream, "atomic").await;
        for _ in 0..3 {
            let batch = vec![put("rollup", b"1"), put("order", &[b'o'; 1000]), put("customer", b"1")];
            assert!(store.batch(batch).await.is_err(), "the order row is over the bucket's limit");
        }
        for key in ["rollup", "order", "customer"] {
            assert!(store.bucket.get(row_key("g", "p", key.as_bytes())).await.unwrap().is_none(), "{key} landed");
        }
        store.batch(vec![put("rollup", b"1"), put("customer", b"1")]).await.unwrap();
        assert_eq!(store.scan("g", "p", None, 10).await.unwrap().len(), 2);
        let _ = jetstream.delete_key_value(&bucket).await;
    }

    /// A plain batch that fails fails only itself.
    #[tokio::test]
    async fn a_failed_plain_batch_leaves_the_store_healthy() {
        let jetstream = jetstream().await;
        let bucket = format!("plain_{}", std::process::id());
        let store = NatsKvStore::open(&jetstream, &bucket, 1).await.expect("bucket");
        jetstream.delete_key_value(&bucket).await.unwrap();
        assert!(store.batch(vec![put("a", b"1")]).await.is_err());
        assert!(store.healthy().is_ok());
    }
}
