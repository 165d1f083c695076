//! The embedded bus: a durable queue in the store, for one node.
//!
//! Table `bus_orders`, partition `p<n>`, clustering a sequence number (big-endian), value the
//! envelope as JSON. `publish` returns after the row is synced to disk, so an HTTP ack means the
//! order survives `kill -9`. `ack` deletes the row; `nak` hides it from the consumer until its
//! delay has passed. Unacked rows are read again after a restart.
//!
//! A consumer scans its partition **from the start** on every batch. Concurrent publishers take
//! sequence numbers in one order but may land their rows in another, so a cursor could pass over a
//! row that lands late; the engine settles every delivery of a batch before asking for the next,
//! so the rows at the start of the partition are exactly the unsettled ones.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::Notify;

use engage_storage::{Store, WriteOp};

use super::{AckHandle, Bus, BusError, Delivery, PartitionConsumer};
use crate::envelope::Envelope;
use crate::subject::partition_of;

const TABLE: &str = "bus_orders";

/// The embedded bus.
pub struct EmbeddedBus {
    store: Arc<dyn Store>,
    partitions: u32,
    wakeups: Arc<Vec<Arc<Notify>>>,
    /// Next sequence number; starts at the wall clock in nanoseconds so it keeps growing across
    /// restarts.
    seq: AtomicU64,
}

impl EmbeddedBus {
    /// A bus over `store` with `partitions` partitions.
    pub fn new(store: Arc<dyn Store>, partitions: u32) -> Self {
        let start = chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default().max(0) as u64;
        let wakeups = (0..partitions.max(1)).map(|_| Arc::new(Notify::new())).collect();
        Self { store, partitions: partitions.max(1), wakeups: Arc::new(wakeups), seq: AtomicU64::new(start) }
    }
}

fn partition_key(partition: u32) -> String {
    format!("p{partition}")
}

#[async_trait]
impl Bus for EmbeddedBus {
    async fn publish(&self, envelope: &Envelope) -> Result<(), BusError> {
        let partition = partition_of(&envelope.tenant, self.partitions);
        let value = serde_json::to_vec(envelope).map_err(|e| BusError::Codec(e.to_string()))?;
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        self.store.put(TABLE, &partition_key(partition), &seq.to_be_bytes(), value).await?;
        if let Some(wakeup) = self.wakeups.get(partition as usize) {
            wakeup.notify_one();
        }
        Ok(())
    }

    async fn publish_side(&self, subject: &str, payload: &Value, trace_id: &str) -> Result<(), BusError> {
        super::chat_event(subject, trace_id, &payload.to_string());
        Ok(())
    }

    async fn consumer(&self, partition: u32) -> Result<Box<dyn PartitionConsumer>, BusError> {
        let wakeup = self
            .wakeups
            .get(partition as usize)
            .cloned()
            .ok_or_else(|| BusError::Codec(format!("no partition {partition}")))?;
        Ok(Box::new(EmbeddedConsumer {
            store: self.store.clone(),
            partition_key: partition_key(partition),
            wakeup,
            delayed: Arc::new(Mutex::new(HashMap::new())),
        }))
    }

    fn partitions(&self) -> u32 {
        self.partitions
    }
}

struct EmbeddedConsumer {
    store: Arc<dyn Store>,
    partition_key: String,
    wakeup: Arc<Notify>,
    /// Nak'd rows and the time before which they are not delivered again.
    delayed: Arc<Mutex<HashMap<Vec<u8>, Instant>>>,
}

impl EmbeddedConsumer {
    async fn scan(&mut self, max: usize) -> Result<Vec<Delivery>, BusError> {
        let now = Instant::now();
        let hidden = {
            let mut delayed = self.delayed.lock().map_err(|_| BusError::Codec("delay table poisoned".into()))?;
            delayed.retain(|_, until| *until > now);
            delayed.clone()
        };
        let rows = self.store.scan(TABLE, &self.partition_key, None, max + hidden.len()).await?;
        let mut deliveries = Vec::with_capacity(rows.len().min(max));
        for row in rows.into_iter().filter(|row| !hidden.contains_key(&row.clustering)).take(max) {
            let ack = EmbeddedAck {
                store: self.store.clone(),
                partition_key: self.partition_key.clone(),
                key: row.clustering,
                delayed: self.delayed.clone(),
                wakeup: self.wakeup.clone(),
            };
            match serde_json::from_slice::<Envelope>(&row.value) {
                Ok(envelope) => deliveries.push(Delivery { envelope, handle: AckHandle::Embedded(ack) }),
                Err(error) => {
                    // A row that is not an envelope can never be processed: drop it, loudly.
                    tracing::error!(%error, "undecodable bus row dropped");
                    metrics::counter!("engage_bus_undecodable_total").increment(1);
                    ack.ack().await?;
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
}

impl EmbeddedAck {
    pub(super) async fn ack(self) -> Result<(), BusError> {
        self.store
            .batch(vec![WriteOp::Delete { table: TABLE, partition: self.partition_key, clustering: self.key }])
            .await
            .map_err(BusError::from)
    }

    /// Deletes every row of `acks` in one store batch; each entry is (caller's index, ack).
    pub(super) async fn ack_all(acks: Vec<(usize, EmbeddedAck)>) -> Vec<(usize, Result<(), BusError>)> {
        let Some((_, first)) = acks.first() else { return Vec::new() };
        let store = first.store.clone();
        let mut indices = Vec::with_capacity(acks.len());
        let mut ops = Vec::with_capacity(acks.len());
        for (index, ack) in acks {
            indices.push(index);
            ops.push(WriteOp::Delete { table: TABLE, partition: ack.partition_key, clustering: ack.key });
        }
        match store.batch(ops).await {
            Ok(()) => indices.into_iter().map(|index| (index, Ok(()))).collect(),
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
    async fn delivers_in_order_redelivers_naks_and_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let tenant = "brand-1";
        let partition = partition_of(tenant, 4);
        {
            let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
            let bus = EmbeddedBus::new(store, 4);
            for n in 0..3 {
                bus.publish(&envelope(tenant, n)).await.unwrap();
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
    async fn a_row_that_lands_late_is_still_delivered() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let bus = EmbeddedBus::new(store.clone(), 1);
        let mut consumer = bus.consumer(0).await.unwrap();
        // two publishers took sequence numbers 3 and 5; 5 lands first and is consumed
        let row = |n: u32| serde_json::to_vec(&envelope("t", n)).unwrap();
        store.put(TABLE, "p0", &5u64.to_be_bytes(), row(5)).await.unwrap();
        for delivery in consumer.next_batch(10, Duration::ZERO).await.unwrap() {
            delivery.ack().await.unwrap();
        }
        store.put(TABLE, "p0", &3u64.to_be_bytes(), row(3)).await.unwrap();
        let late = consumer.next_batch(10, Duration::ZERO).await.unwrap();
        assert_eq!(late.len(), 1, "the late row behind an acked one is delivered");
        assert_eq!(late[0].envelope.payload["orderId"], "3");
    }
}
