//! The Bus: publish envelopes durably; consume one partition at a time with explicit acks.
//!
//! A delivery is acked only after its effects are stored (the engine does that); a nak'd or
//! never-acked delivery comes again, so consumers must be idempotent (tenant actors are).

mod embedded;
mod jetstream;
pub mod partition_count;
mod retained;

pub use embedded::{unsettled_partition, EmbeddedBus};
pub use jetstream::JetStreamBus;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::dead_letter::DeadLetter;
use crate::envelope::Envelope;

/// What the spec's chat consumers do with a chat event: log it (with its trace id) and count it;
/// nothing is persisted. The embedded bus does it on publish, the JetStream consumers
/// ([`JetStreamBus::spawn_chat_consumers`]) on delivery.
pub fn chat_event(subject: &str, trace_id: &str, payload: &str) {
    tracing::info!(subject, trace_id, payload, "chat event");
    metrics::counter!("engage_chat_events_total", "subject" => subject.to_owned()).increment(1);
}

/// A bus failure.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    /// The store under the embedded bus failed.
    #[error("bus store: {0}")]
    Store(#[from] engage_storage::StoreError),
    /// NATS / JetStream failed.
    #[error("nats: {0}")]
    Nats(String),
    /// A message could not be encoded or decoded.
    #[error("codec: {0}")]
    Codec(String),
    /// The parked event is not whole (cut to fit, or never an envelope): it cannot be replayed.
    #[error("{0}")]
    Unreplayable(String),
}

/// Publishes and hands out partition consumers.
#[async_trait]
pub trait Bus: Send + Sync + 'static {
    /// Durably enqueues `envelope` on its tenant's partition. `Ok` means it will be delivered, and
    /// carries the position at which the bus accepted it ([`Delivery::position`]): the rank of
    /// this copy among the copies of one order. (Shared: the embedded bus hands the same
    /// envelope to its consumer.)
    async fn publish(&self, envelope: &Arc<Envelope>) -> Result<u64, BusError>;

    /// Publishes a JSON payload on a side subject (`engage.chat.messages|receipts`).
    async fn publish_side(&self, subject: &str, payload: &Value, trace_id: &str) -> Result<(), BusError>;

    /// A consumer of one partition's envelopes.
    async fn consumer(&self, partition: u32) -> Result<Box<dyn PartitionConsumer>, BusError>;

    /// Parks an event whose last delivery failed: it is kept, with why and when, until
    /// [`Bus::replay`] or [`Bus::drop_dead_letter`]. (The caller then settles the delivery with
    /// [`Delivery::term`].) Parking it again replaces it.
    async fn park(&self, letter: &DeadLetter) -> Result<(), BusError>;

    /// The parked events, oldest first (at most [`MAX_LISTED`]).
    async fn dead_letters(&self) -> Result<Vec<DeadLetter>, BusError>;

    /// Forgets the parked event `id`; `false` when there is none.
    async fn drop_dead_letter(&self, id: &str) -> Result<bool, BusError>;

    /// Publishes the parked event `id`'s envelope again, as it was (its id, so its effects count
    /// once), then forgets it; `None` when there is none.
    async fn replay(&self, id: &str) -> Result<Option<DeadLetter>, BusError> {
        let Some(letter) = self.dead_letters().await?.into_iter().find(|l| l.id() == id) else { return Ok(None) };
        if let Some(why) = &letter.unreplayable {
            return Err(BusError::Unreplayable(format!("parked event {id} cannot be replayed: {why}")));
        }
        // the replay keeps the rank the event was first accepted at: a newer copy of its order
        // that was applied meanwhile still wins
        let mut envelope = letter.envelope.clone();
        envelope.position = envelope.position.or(letter.position);
        self.republish(&Arc::new(envelope)).await?;
        self.drop_dead_letter(id).await?;
        metrics::counter!("engage_events_replayed_total").increment(1);
        Ok(Some(letter))
    }

    /// Publishes an envelope that was published before (a replay): as [`Bus::publish`], past the
    /// bus's duplicate detection.
    async fn republish(&self, envelope: &Arc<Envelope>) -> Result<(), BusError> {
        self.publish(envelope).await.map(|_| ())
    }

    /// The partition count envelopes are spread over.
    fn partitions(&self) -> u32;

    /// Removes what the bus keeps of `tenant`'s events that names `phone` (an erasure of that
    /// customer): parked events, and on JetStream the orders stream's retained messages that were
    /// already processed (one still in flight is applied after the erasure, as an order placed
    /// after it would be). How many messages were removed.
    async fn erase_customer(&self, tenant: &str, phone: &str) -> Result<u64, BusError> {
        let mut erased = 0;
        for letter in self.dead_letters().await? {
            if letter.names(tenant, phone) && self.drop_dead_letter(letter.id()).await? {
                erased += 1;
            }
        }
        Ok(erased)
    }
}

/// Pulls one partition's deliveries, oldest first.
#[async_trait]
pub trait PartitionConsumer: Send {
    /// Up to `max` deliveries; waits at most `wait` for the first one (empty on time-out).
    /// Call it again only after every delivery of the previous batch was acked or nak'd, unless
    /// [`PartitionConsumer::pulls_ahead`].
    async fn next_batch(&mut self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BusError>;

    /// Whether the next batch may be pulled while the previous one is still being processed:
    /// the bus hands a delivery out once until it is settled or its ack wait passes (JetStream).
    /// The embedded bus hands out every unsettled row again, so it says no.
    fn pulls_ahead(&self) -> bool {
        false
    }
}

/// Most parked events [`Bus::dead_letters`] lists.
pub const MAX_LISTED: usize = 10_000;

/// One delivered envelope and how to settle it.
pub struct Delivery {
    /// The envelope (shared: the tenant actor gets it without a copy).
    pub envelope: Arc<Envelope>,
    /// Which delivery of it this is, from 1 (JetStream counts them; the embedded bus counts them
    /// in memory, from 1 again after a restart).
    pub attempt: u32,
    /// Where the bus accepted it: the JetStream stream sequence, or the embedded bus's log
    /// sequence. It only grows, across restarts and failover, so it ranks the copies of an order
    /// by acceptance ([`Delivery::rank`]).
    pub position: u64,
    /// The envelope's size as the bus holds it (JSON bytes), when known: an envelope within the
    /// event bound as a whole needs no other size check.
    pub encoded_len: Option<usize>,
    /// Why this delivery must not be applied, when the bus knows already (its subject names
    /// another partition than its tenant's): the engine parks it at once with this reason.
    pub refused: Option<String>,
    handle: AckHandle,
}

enum AckHandle {
    Embedded(embedded::EmbeddedAck),
    Nats(Box<async_nats::jetstream::Message>),
}

impl Delivery {
    /// The rank its effects are applied at: the position the envelope carries when it was
    /// accepted before (a dead-letter replay, an instant order), else this delivery's.
    pub fn rank(&self) -> u64 {
        self.envelope.position.unwrap_or(self.position)
    }

    /// Settles the delivery: it will not come again.
    pub async fn ack(self) -> Result<(), BusError> {
        match self.handle {
            AckHandle::Embedded(ack) => ack.ack().await,
            AckHandle::Nats(message) => message.double_ack().await.map_err(|e| BusError::Nats(e.to_string())),
        }
    }

    /// Settles many deliveries at once, answering for each in order. Embedded deliveries are
    /// deleted in one store batch (one sync for the lot instead of one each). JetStream acks are
    /// sent together, each as a plain ack, and confirmed by one flush of the connection (the
    /// server has read every one of them) instead of a reply per ack: the replies were a message
    /// out of nats-server per order and a request each in the client. An ack the server never
    /// read fails the flush and counts as failed; its order comes again after the ack wait and
    /// is known by its bus position (applied once).
    pub async fn ack_all(deliveries: Vec<Delivery>) -> Vec<Result<(), BusError>> {
        let mut embedded = Vec::new();
        let mut results: Vec<Option<Result<(), BusError>>> = Vec::with_capacity(deliveries.len());
        let mut nats = Vec::new();
        for (index, delivery) in deliveries.into_iter().enumerate() {
            results.push(None);
            match delivery.handle {
                AckHandle::Embedded(ack) => embedded.push((index, ack)),
                AckHandle::Nats(message) => nats.push((index, message)),
            }
        }
        for (index, result) in embedded::EmbeddedAck::ack_all(embedded).await {
            results[index] = Some(result);
        }
        if let Some((_, first)) = nats.first() {
            let client = first.context.client();
            let mut sent = Vec::with_capacity(nats.len());
            for (index, message) in &nats {
                sent.push((*index, message.ack().await.map_err(|e| BusError::Nats(e.to_string()))));
            }
            let flushed = client.flush().await.map_err(|e| format!("acks not confirmed: {e}"));
            for (index, result) in sent {
                results[index] = Some(result.and_then(|()| flushed.clone().map_err(BusError::Nats)));
            }
        }
        results.into_iter().map(|r| r.unwrap_or_else(|| Err(BusError::Codec("not settled".into())))).collect()
    }

    /// Settles a delivery that will never be processed (it was parked): it does not come again.
    pub async fn term(self) -> Result<(), BusError> {
        match self.handle {
            AckHandle::Embedded(ack) => ack.ack().await,
            AckHandle::Nats(message) => {
                message.ack_with(async_nats::jetstream::AckKind::Term).await.map_err(|e| BusError::Nats(e.to_string()))
            }
        }
    }

    /// Asks for the delivery again after `delay`.
    pub async fn nak(self, delay: Duration) {
        match self.handle {
            AckHandle::Embedded(ack) => ack.nak(delay),
            AckHandle::Nats(message) => {
                if let Err(error) = message.ack_with(async_nats::jetstream::AckKind::Nak(Some(delay))).await {
                    tracing::warn!(%error, "nak failed; the message comes back after the ack wait");
                }
            }
        }
    }
}
