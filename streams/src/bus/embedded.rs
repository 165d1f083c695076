//! The embedded bus: a durable queue in the store, for one node.
//!
//! Table `bus_orders`, partition `p<n>`, clustering a sequence number (big-endian), value the
//! envelope as JSON. `publish` returns after the row is synced to disk, so an HTTP ack means the
//! order survives `kill -9`. `ack` deletes the row; `nak` hides it from the consumer until its
//! delay has passed. Unacked rows are read again after a restart.
//!
//! The sequence numbers of each partition's unsettled rows are also kept in memory, in order:
//! consumers take them from there and read each row by its key, and never scan the store, whose
//! range scans walk every deleted (acked) row's tombstone until compaction (issue 13: that walk was
//! 40% of the embedded orders profile). A partition's numbers are loaded from the store when its
//! first consumer opens, so unacked rows come again after a restart.
//!
//! An envelope published by this process is also kept beside its number (shared, not copied), up
//! to [`IN_MEMORY`] over all partitions, so the consumer hands it over without reading the row
//! back and decoding it (issue 13: that read and decode, with a copy for the actor, were 5% of the
//! embedded orders profile). Past that many unsettled orders, and for rows stored before a restart, the row
//! is read from the store as before. The engine settles every
//! delivery of a batch before asking for the next, so the first numbers of a partition's set are exactly the unsettled ones; a publisher whose row
//! lands late (after a higher sequence number) is still delivered, from its place in the set. Only
//! the numbers are in memory (about 40 bytes an order), so a backlog costs little memory.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::Notify;

use engage_storage::{Store, WriteOp};

use super::{AckHandle, Bus, BusError, Delivery, PartitionConsumer};
use crate::dead_letter::DeadLetter;
use crate::envelope::Envelope;
use crate::subject::partition_of;

const TABLE: &str = "bus_orders";
/// The bus's own bookkeeping: partition [`SEQ_PARTITION`] holds the sequence ceiling.
pub(super) const META_TABLE: &str = "bus_meta";
const SEQ_PARTITION: &str = "seq";
const SEQ_CEILING: &[u8] = b"ceiling";
/// Sequence numbers reserved per write of the ceiling.
const SEQ_BLOCK: u64 = 1 << 20;
/// Parked events ([`crate::dead_letter`]): partition [`DEAD_PARTITION`], clustering the envelope id.
const DEAD_TABLE: &str = "dead_letters";
const DEAD_PARTITION: &str = "all";

/// Most envelopes the bus keeps in memory for its consumers, over all partitions (about 1 KiB
/// each, so ~8 MiB); the rest are read back from the store. Under a steady load only the orders
/// not yet applied are kept (a few hundred); the bound matters when a backlog builds.
pub const IN_MEMORY: usize = 8192;

/// An envelope kept in memory, with its size as stored (JSON bytes).
type Kept = (Arc<Envelope>, usize);

/// One partition's unsettled rows, by sequence number, with the envelope when this process
/// published it and kept it.
#[derive(Default)]
struct Pending {
    rows: BTreeMap<u64, Option<Kept>>,
    /// How many times each row was handed out since this process started.
    attempts: HashMap<u64, u32>,
    /// How many envelopes all partitions hold (shared by them).
    kept: Arc<AtomicUsize>,
    /// Whether the rows stored before this process started have been read in.
    loaded: bool,
}

impl Pending {
    /// Forgets a settled row.
    fn settle(&mut self, seq: u64) {
        self.attempts.remove(&seq);
        if let Some(Some(_)) = self.rows.remove(&seq) {
            self.kept.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

type Partitions = Arc<Vec<Arc<Mutex<Pending>>>>;

/// The embedded bus.
pub struct EmbeddedBus {
    store: Arc<dyn Store>,
    partitions: u32,
    wakeups: Arc<Vec<Arc<Notify>>>,
    pending: Partitions,
    /// Next sequence number: the rank of an accepted event ([`Delivery::position`]). It starts
    /// at the wall clock in nanoseconds or past the ceiling the last process reserved, whichever
    /// is higher, so it keeps growing across restarts even when the clock goes back.
    seq: AtomicU64,
    /// The lowest number this process may hand out (the stored ceiling, once read).
    floor: AtomicU64,
    /// Numbers below this are reserved on disk; reaching it writes a new ceiling first.
    ceiling: AtomicU64,
    /// Held while the ceiling is read or moved; true once the stored ceiling was read.
    reserving: tokio::sync::Mutex<bool>,
}

impl EmbeddedBus {
    /// A bus over `store` with `partitions` partitions.
    pub fn new(store: Arc<dyn Store>, partitions: u32) -> Self {
        let start = chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default().max(0) as u64;
        let wakeups = (0..partitions.max(1)).map(|_| Arc::new(Notify::new())).collect();
        let kept = Arc::new(AtomicUsize::new(0));
        let pending = (0..partitions.max(1))
            .map(|_| Arc::new(Mutex::new(Pending { kept: kept.clone(), ..Pending::default() })))
            .collect();
        Self {
            store,
            partitions: partitions.max(1),
            wakeups: Arc::new(wakeups),
            pending: Arc::new(pending),
            seq: AtomicU64::new(start),
            floor: AtomicU64::new(u64::MAX),
            ceiling: AtomicU64::new(0),
            reserving: tokio::sync::Mutex::new(false),
        }
    }

    /// The next sequence number. Every [`SEQ_BLOCK`] numbers the new ceiling is written (synced)
    /// before any number under it is handed out, so no number is handed out twice, or lower than
    /// one handed out before, whatever the clock does between two processes.
    async fn next_seq(&self) -> Result<u64, BusError> {
        loop {
            let seq = self.seq.fetch_add(1, Ordering::SeqCst);
            // the ceiling before the floor: whoever sees a new ceiling sees its floor
            let ceiling = self.ceiling.load(Ordering::SeqCst);
            if seq >= self.floor.load(Ordering::SeqCst) && seq < ceiling {
                return Ok(seq);
            }
            let mut read = self.reserving.lock().await;
            if !*read {
                let stored = self.store.get(META_TABLE, SEQ_PARTITION, SEQ_CEILING).await?;
                let stored = stored.as_deref().and_then(seq_of).unwrap_or(0);
                self.seq.fetch_max(stored, Ordering::SeqCst);
                self.floor.store(stored.min(self.seq.load(Ordering::SeqCst)), Ordering::SeqCst);
                *read = true;
            }
            let next = self.seq.load(Ordering::SeqCst);
            if next >= self.ceiling.load(Ordering::SeqCst) {
                let ceiling = next.saturating_add(SEQ_BLOCK);
                self.store.put(META_TABLE, SEQ_PARTITION, SEQ_CEILING, ceiling.to_be_bytes().to_vec()).await?;
                self.ceiling.store(ceiling, Ordering::SeqCst);
            }
        }
    }

    fn pending(&self, partition: u32) -> Result<Arc<Mutex<Pending>>, BusError> {
        of_partition(&self.pending, partition)
    }
}

/// Partition `partition`'s entry of a per-partition list.
fn of_partition<T>(list: &[Arc<T>], partition: u32) -> Result<Arc<T>, BusError> {
    list.get(partition as usize).cloned().ok_or_else(|| BusError::Codec(format!("no partition {partition}")))
}

fn poisoned() -> BusError {
    BusError::Codec("bus partition map poisoned".into())
}

/// The sequence number of a stored row's clustering key.
fn seq_of(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.try_into().ok()?))
}

/// Reads a partition's stored sequence numbers into its set (once per process; rows published
/// meanwhile are in both, and inserting them again changes nothing).
async fn load(store: &dyn Store, partition_key: &str, pending: &Mutex<Pending>) -> Result<(), BusError> {
    if pending.lock().map_err(|_| poisoned())?.loaded {
        return Ok(());
    }
    let mut after: Option<Vec<u8>> = None;
    let mut stored = Vec::new();
    loop {
        let page = store.scan(TABLE, partition_key, after.as_deref(), 1000).await?;
        let Some(last) = page.last() else { break };
        after = Some(last.clustering.clone());
        stored.extend(page.iter().filter_map(|row| seq_of(&row.clustering)));
    }
    let mut pending = pending.lock().map_err(|_| poisoned())?;
    for seq in stored {
        pending.rows.entry(seq).or_insert(None);
    }
    pending.loaded = true;
    Ok(())
}

/// Largest dead letter the embedded bus keeps whole (bigger ones are cut, [`DeadLetter::fit`]).
const LETTER_LIMIT: usize = 16 << 20;

/// Writes a parked event to the dead-letter table.
async fn park_in(store: &dyn Store, letter: DeadLetter) -> Result<(), BusError> {
    let (letter, value) = letter.fit(LETTER_LIMIT);
    store.put(DEAD_TABLE, DEAD_PARTITION, letter.id().as_bytes(), value).await?;
    Ok(())
}

fn partition_key(partition: u32) -> String {
    format!("p{partition}")
}

/// The first of `partitions` partitions whose bus in `store` holds an order not yet settled (a
/// count may change only when none does: `engage partitions set`).
pub async fn unsettled_partition(store: &dyn Store, partitions: u32) -> Result<Option<u32>, BusError> {
    for partition in 0..partitions {
        if !store.scan(TABLE, &partition_key(partition), None, 1).await?.is_empty() {
            return Ok(Some(partition));
        }
    }
    Ok(None)
}

#[async_trait]
impl Bus for EmbeddedBus {
    async fn publish(&self, envelope: &Arc<Envelope>) -> Result<u64, BusError> {
        let partition = partition_of(&envelope.tenant, self.partitions);
        let value = serde_json::to_vec(envelope.as_ref()).map_err(|e| BusError::Codec(e.to_string()))?;
        let seq = self.next_seq().await?;
        let value_len = value.len();
        self.store.put(TABLE, &partition_key(partition), &seq.to_be_bytes(), value).await?;
        {
            let pending = self.pending(partition)?;
            let mut pending = pending.lock().map_err(|_| poisoned())?;
            let keep = pending
                .kept
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < IN_MEMORY).then_some(n + 1))
                .is_ok();
            pending.rows.insert(seq, keep.then(|| (envelope.clone(), value_len)));
        }
        if let Some(wakeup) = self.wakeups.get(partition as usize) {
            wakeup.notify_one();
        }
        Ok(seq)
    }

    async fn publish_side(&self, subject: &str, payload: &Value, trace_id: &str) -> Result<(), BusError> {
        super::chat_event(subject, trace_id, &payload.to_string());
        Ok(())
    }

    async fn consumer(&self, partition: u32) -> Result<Box<dyn PartitionConsumer>, BusError> {
        let wakeup = of_partition(&self.wakeups, partition)?;
        let pending = self.pending(partition)?;
        load(self.store.as_ref(), &partition_key(partition), &pending).await?;
        Ok(Box::new(EmbeddedConsumer {
            store: self.store.clone(),
            partition_key: partition_key(partition),
            wakeup,
            delayed: Arc::new(Mutex::new(HashMap::new())),
            pending,
        }))
    }

    fn partitions(&self) -> u32 {
        self.partitions
    }

    async fn park(&self, letter: &DeadLetter) -> Result<(), BusError> {
        park_in(self.store.as_ref(), letter.clone()).await
    }

    async fn dead_letters(&self) -> Result<Vec<DeadLetter>, BusError> {
        let mut letters = Vec::new();
        let mut after: Option<Vec<u8>> = None;
        while letters.len() < super::MAX_LISTED {
            let page = self.store.scan(DEAD_TABLE, DEAD_PARTITION, after.as_deref(), 500).await?;
            let Some(last) = page.last() else { break };
            after = Some(last.clustering.clone());
            letters.extend(page.iter().filter_map(|row| serde_json::from_slice::<DeadLetter>(&row.value).ok()));
        }
        letters.truncate(super::MAX_LISTED);
        letters.sort_by(|a, b| a.last_failure.cmp(&b.last_failure));
        Ok(letters)
    }

    async fn drop_dead_letter(&self, id: &str) -> Result<bool, BusError> {
        if self.store.get(DEAD_TABLE, DEAD_PARTITION, id.as_bytes()).await?.is_none() {
            return Ok(false);
        }
        let delete = WriteOp::Delete {
            table: DEAD_TABLE,
            partition: DEAD_PARTITION.to_owned(),
            clustering: id.as_bytes().to_vec(),
        };
        self.store.batch(vec![delete]).await?;
        Ok(true)
    }
}

struct EmbeddedConsumer {
    store: Arc<dyn Store>,
    partition_key: String,
    wakeup: Arc<Notify>,
    /// Nak'd rows and the time before which they are not delivered again.
    delayed: Arc<Mutex<HashMap<Vec<u8>, Instant>>>,
    pending: Arc<Mutex<Pending>>,
}

impl EmbeddedConsumer {
    async fn scan(&mut self, max: usize) -> Result<Vec<Delivery>, BusError> {
        let now = Instant::now();
        let hidden = {
            let mut delayed = self.delayed.lock().map_err(|_| BusError::Codec("delay table poisoned".into()))?;
            delayed.retain(|_, until| *until > now);
            delayed.clone()
        };
        let seqs: Vec<(u64, Option<Kept>, u32)> = {
            let mut pending = self.pending.lock().map_err(|_| poisoned())?;
            let Pending { rows, attempts, .. } = &mut *pending;
            rows.iter()
                .filter(|(seq, _)| !hidden.contains_key(seq.to_be_bytes().as_slice()))
                .take(max)
                .map(|(seq, envelope)| {
                    let attempt = attempts.entry(*seq).or_insert(0);
                    *attempt = attempt.saturating_add(1);
                    (*seq, envelope.clone(), *attempt)
                })
                .collect()
        };
        let mut deliveries = Vec::with_capacity(seqs.len());
        for (seq, kept, attempt) in seqs {
            let ack = || EmbeddedAck {
                store: self.store.clone(),
                partition_key: self.partition_key.clone(),
                key: seq.to_be_bytes().to_vec(),
                delayed: self.delayed.clone(),
                wakeup: self.wakeup.clone(),
                pending: self.pending.clone(),
            };
            if let Some((envelope, encoded_len)) = kept {
                deliveries.push(Delivery {
                    envelope,
                    attempt,
                    position: seq,
                    encoded_len: Some(encoded_len),
                    refused: None,
                    handle: AckHandle::Embedded(ack()),
                });
                continue;
            }
            let Some(value) = self.store.get(TABLE, &self.partition_key, &seq.to_be_bytes()).await? else {
                // settled meanwhile (its delete landed): nothing to deliver
                if let Ok(mut pending) = self.pending.lock() {
                    pending.settle(seq);
                }
                continue;
            };
            match serde_json::from_slice::<Envelope>(&value) {
                Ok(envelope) => deliveries.push(Delivery {
                    envelope: Arc::new(envelope),
                    attempt,
                    position: seq,
                    encoded_len: Some(value.len()),
                    refused: None,
                    handle: AckHandle::Embedded(ack()),
                }),
                Err(error) => {
                    // A row that is not an envelope can never be processed: it is parked as it
                    // is (listed by `engage dead-letters`, never replayed) and leaves the queue.
                    tracing::error!(%error, seq, "undecodable bus row parked");
                    metrics::counter!("engage_bus_undecodable_total").increment(1);
                    let partition = self.partition_key.trim_start_matches('p').parse().unwrap_or(0);
                    let at = chrono::Utc::now().to_rfc3339();
                    let letter = DeadLetter::undecodable(partition, seq, "", &value, &error.to_string(), &at);
                    park_in(self.store.as_ref(), letter).await?;
                    metrics::gauge!("engage_dead_letters").increment(1.0);
                    ack().ack().await?;
                }
            }
        }
        Ok(deliveries)
    }
}

#[async_trait]
impl PartitionConsumer for EmbeddedConsumer {
    async fn next_batch(&mut self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BusError> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let batch = self.scan(max).await?;
            if !batch.is_empty() || tokio::time::Instant::now() >= deadline {
                return Ok(batch);
            }
            // A wake-up may be stale (a permit left by an earlier publish): scan again after it.
            let _ = tokio::time::timeout_at(deadline, self.wakeup.notified()).await;
        }
    }
}

/// Settles one embedded delivery.
pub(super) struct EmbeddedAck {
    store: Arc<dyn Store>,
    partition_key: String,
    key: Vec<u8>,
    delayed: Arc<Mutex<HashMap<Vec<u8>, Instant>>>,
    wakeup: Arc<Notify>,
    pending: Arc<Mutex<Pending>>,
}

impl EmbeddedAck {
    pub(super) async fn ack(self) -> Result<(), BusError> {
        Self::ack_all(vec![(0, self)])
            .await
            .pop()
            .map_or_else(|| Err(BusError::Codec("not settled".into())), |(_, result)| result)
    }

    /// Deletes every row of `acks` in one store batch; each entry is (caller's index, ack).
    pub(super) async fn ack_all(acks: Vec<(usize, EmbeddedAck)>) -> Vec<(usize, Result<(), BusError>)> {
        let Some((_, first)) = acks.first() else { return Vec::new() };
        let store = first.store.clone();
        let mut indices = Vec::with_capacity(acks.len());
        let mut ops = Vec::with_capacity(acks.len());
        let mut settled = Vec::with_capacity(acks.len());
        for (index, ack) in acks {
            indices.push(index);
            if let Some(seq) = seq_of(&ack.key) {
                settled.push((ack.pending.clone(), seq));
            }
            ops.push(WriteOp::Delete { table: TABLE, partition: ack.partition_key, clustering: ack.key });
        }
        match store.batch(ops).await {
            Ok(()) => {
                for (pending, seq) in settled {
                    if let Ok(mut pending) = pending.lock() {
                        pending.settle(seq);
                    }
                }
                indices.into_iter().map(|index| (index, Ok(()))).collect()
            }
            Err(error) => {
                let message = error.to_string();
                indices
                    .into_iter()
                    .map(|index| (index, Err(BusError::Store(engage_storage::StoreError::Backend(message.clone())))))
                    .collect()
            }
        }
    }

    pub(super) fn nak(self, delay: Duration) {
        if let Ok(mut delayed) = self.delayed.lock() {
            delayed.insert(self.key, Instant::now() + delay);
        }
        let wakeup = self.wakeup;
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            wakeup.notify_one();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::EventKind;
    use engage_storage::EmbeddedStore;
    use serde_json::json;

    fn envelope(tenant: &str, n: u32) -> Envelope {
        Envelope::new(EventKind::Order, "platform", 1, tenant, "t", json!({"orderId": n.to_string()}))
    }

    #[tokio::test]
    async fn an_order_not_yet_settled_is_found_under_its_partition_until_acked() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let bus = EmbeddedBus::new(store.clone(), 4);
        assert_eq!(unsettled_partition(&*store, 4).await.unwrap(), None);
        bus.publish(&Arc::new(envelope("brand-1", 0))).await.unwrap();
        let partition = partition_of("brand-1", 4);
        assert_eq!(unsettled_partition(&*store, 4).await.unwrap(), Some(partition));
        let mut consumer = bus.consumer(partition).await.unwrap();
        for delivery in consumer.next_batch(10, Duration::from_millis(10)).await.unwrap() {
            delivery.ack().await.unwrap();
        }
        assert_eq!(unsettled_partition(&*store, 4).await.unwrap(), None);
    }

    #[tokio::test]
    async fn delivers_in_order_redelivers_naks_and_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let tenant = "brand-1";
        let partition = partition_of(tenant, 4);
        {
            let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
            let bus = EmbeddedBus::new(store, 4);
            for n in 0..3 {
                bus.publish(&Arc::new(envelope(tenant, n))).await.unwrap();
            }
            let mut consumer = bus.consumer(partition).await.unwrap();
            let batch = consumer.next_batch(10, Duration::from_millis(10)).await.unwrap();
            let ids: Vec<String> =
                batch.iter().map(|d| d.envelope.payload["orderId"].as_str().unwrap().to_owned()).collect();
            assert_eq!(ids, vec!["0", "1", "2"]);
            let mut batch = batch.into_iter();
            batch.next().unwrap().ack().await.unwrap();
            batch.next().unwrap().nak(Duration::from_millis(50)).await;
            // the third is neither acked nor nak'd: a crash now leaves it for the restart
            drop(batch);
            let ids_of = |batch: &[Delivery]| -> Vec<String> {
                batch.iter().map(|d| d.envelope.payload["orderId"].as_str().unwrap().to_owned()).collect()
            };
            let now = consumer.next_batch(10, Duration::ZERO).await.unwrap();
            assert_eq!(ids_of(&now), vec!["2"], "the nak'd row is hidden during its delay");
            drop(now);
            tokio::time::sleep(Duration::from_millis(60)).await;
            let again = consumer.next_batch(10, Duration::from_secs(2)).await.unwrap();
            assert_eq!(ids_of(&again), vec!["1", "2"], "the nak'd row comes again after its delay");
        }
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let bus = EmbeddedBus::new(store, 4);
        let mut consumer = bus.consumer(partition).await.unwrap();
        let batch = consumer.next_batch(10, Duration::from_millis(10)).await.unwrap();
        assert_eq!(batch.len(), 2, "unacked rows survive a restart");
    }

    #[tokio::test]
    async fn published_envelopes_are_handed_over_from_memory_up_to_a_bound() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let partitions = 4;
        let bus = EmbeddedBus::new(store.clone(), partitions);
        let total = IN_MEMORY as u32 + 10;
        // seven tenants, spread over the partitions
        let tenant = |n: u32| format!("t{}", n % 7);
        let published = futures::future::join_all((0..total).map(|n| {
            let bus = &bus;
            async move { bus.publish(&Arc::new(envelope(&tenant(n), n))).await }
        }))
        .await;
        assert!(published.iter().all(Result::is_ok));
        let held = |bus: &EmbeddedBus| -> usize {
            (0..partitions).map(|p| bus.pending(p).unwrap().lock().unwrap().rows.values().flatten().count()).sum()
        };
        assert_eq!(held(&bus), IN_MEMORY, "at most IN_MEMORY kept, over all partitions");
        // a kept row's stored copy is overwritten: its delivery must come from memory
        let partition = partition_of(&tenant(0), partitions);
        let kept =
            bus.pending(partition).unwrap().lock().unwrap().rows.iter().find_map(|(seq, e)| e.as_ref().map(|_| *seq));
        store
            .put(TABLE, &partition_key(partition), &kept.unwrap().to_be_bytes(), b"not an envelope".to_vec())
            .await
            .unwrap();
        let mut ids = Vec::new();
        for p in 0..partitions {
            let mut consumer = bus.consumer(p).await.unwrap();
            loop {
                let batch = consumer.next_batch(1000, Duration::ZERO).await.unwrap();
                if batch.is_empty() {
                    break;
                }
                ids.extend(
                    batch.iter().map(|d| d.envelope.payload["orderId"].as_str().unwrap().parse::<u32>().unwrap()),
                );
                for result in Delivery::ack_all(batch).await {
                    result.unwrap();
                }
            }
        }
        ids.sort_unstable();
        assert_eq!(ids, (0..total).collect::<Vec<u32>>(), "every order once: those kept and those read back");
        assert_eq!(held(&bus), 0, "settled rows leave memory");
        assert_eq!(bus.pending(0).unwrap().lock().unwrap().kept.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn positions_grow_across_restarts_even_when_the_clock_went_back() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        // a ceiling reserved by an earlier process whose clock ran far ahead of this one's
        let ahead = u64::MAX / 2;
        store.put(META_TABLE, SEQ_PARTITION, SEQ_CEILING, ahead.to_be_bytes().to_vec()).await.unwrap();
        let bus = EmbeddedBus::new(store.clone(), 1);
        let first = bus.publish(&Arc::new(envelope("t", 1))).await.unwrap();
        let second = bus.publish(&Arc::new(envelope("t", 2))).await.unwrap();
        assert!(first >= ahead && second > first, "{first} {second}");
        // the next process starts past what this one reserved
        let reserved = seq_of(&store.get(META_TABLE, SEQ_PARTITION, SEQ_CEILING).await.unwrap().unwrap()).unwrap();
        assert!(reserved > second);
        let again = EmbeddedBus::new(store.clone(), 1);
        let third = again.publish(&Arc::new(envelope("t", 3))).await.unwrap();
        assert!(third >= reserved, "{third} after {reserved}");
        // and deliveries carry their position
        let mut consumer = again.consumer(0).await.unwrap();
        let batch = consumer.next_batch(10, Duration::ZERO).await.unwrap();
        let positions: Vec<u64> = batch.iter().map(|d| d.position).collect();
        assert_eq!(positions, vec![first, second, third]);
    }

    #[tokio::test]
    async fn stored_rows_come_in_sequence_order_and_acks_leave_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        // rows left by an earlier process, stored out of order (5 landed before 3)
        let row = |n: u32| serde_json::to_vec(&envelope("t", n)).unwrap();
        store.put(TABLE, "p0", &5u64.to_be_bytes(), row(5)).await.unwrap();
        store.put(TABLE, "p0", &3u64.to_be_bytes(), row(3)).await.unwrap();
        let bus = EmbeddedBus::new(store.clone(), 1);
        let mut consumer = bus.consumer(0).await.unwrap();
        bus.publish(&Arc::new(envelope("t", 7))).await.unwrap();
        let batch = consumer.next_batch(10, Duration::ZERO).await.unwrap();
        let ids: Vec<String> =
            batch.iter().map(|d| d.envelope.payload["orderId"].as_str().unwrap().to_owned()).collect();
        assert_eq!(ids, vec!["3", "5", "7"]);
        for result in Delivery::ack_all(batch).await {
            result.unwrap();
        }
        assert!(consumer.next_batch(10, Duration::ZERO).await.unwrap().is_empty());
        assert!(store.scan(TABLE, "p0", None, 10).await.unwrap().is_empty(), "acked rows are deleted");
    }
}
