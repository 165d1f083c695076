//! The JetStream bus: stream `ENGAGE_ORDERS` (subjects `engage.orders.>`, file storage, retention
//! by age so operators can replay subjects), one durable pull consumer per partition
//! (`engage-p<n>`, filter `engage.orders.<n>.*`, explicit acks). Chat events go to stream
//! `ENGAGE_CHAT` (`engage.chat.>`), where operators read them with `nats stream view`; two durable
//! consumers (`engage-chat-messages`, `engage-chat-receipts`), shared by every engine node, take
//! them in batches of [`CHAT_BATCH`] and do what the embedded mode does ([`super::chat_event`]).
//!
//! Each message is the envelope as JSON, with headers `Nats-Msg-Id` (the envelope id: JetStream
//! drops a re-publish within the duplicate window), `Engage-Trace-Id` and `Engage-Source`.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::consumer::{pull, AckPolicy, DeliverPolicy};
use async_nats::jetstream::stream::{Config, RetentionPolicy, StorageType};
use async_nats::jetstream::{AckKind, Context};
use async_nats::HeaderMap;
use async_trait::async_trait;
use engage_config::NatsReplicas;
use engage_storage::replicas::reconcile;
use futures::StreamExt;
use serde_json::Value;

use super::{AckHandle, Bus, BusError, Delivery, PartitionConsumer};
use crate::dead_letter::{dead_subject, DeadLetter, DEAD_LETTER_PREFIX, DEAD_LETTER_STREAM};
use crate::envelope::Envelope;
use crate::subject::{order_subject, partition_consumer, partition_filter, partition_of, ORDERS_PREFIX, ORDERS_STREAM};

/// Stream of chat events.
pub const CHAT_STREAM: &str = "ENGAGE_CHAT";

/// Chat events a consumer takes at a time (the spec's batch size).
pub const CHAT_BATCH: usize = 20;

fn nats(error: impl std::fmt::Display) -> BusError {
    BusError::Nats(error.to_string())
}

/// The JetStream bus.
pub struct JetStreamBus {
    jetstream: Context,
    partitions: u32,
    ack_wait: Duration,
}

impl JetStreamBus {
    /// Creates (or reuses) the streams, each with its replica count from `replicas` (an existing
    /// stream with another count is changed to it). `retention` is the age after which messages
    /// leave the stream; `ack_wait` how long a delivered, unacked message waits before redelivery.
    pub async fn connect(
        jetstream: Context,
        partitions: u32,
        retention: Duration,
        ack_wait: Duration,
        replicas: &NatsReplicas,
    ) -> Result<Self, BusError> {
        for (name, subjects) in
            [(ORDERS_STREAM, format!("{ORDERS_PREFIX}.>")), (CHAT_STREAM, "engage.chat.>".to_owned())]
        {
            jetstream
                .get_or_create_stream(Config {
                    name: name.to_owned(),
                    subjects: vec![subjects],
                    retention: RetentionPolicy::Limits,
                    max_age: retention,
                    storage: StorageType::File,
                    duplicate_window: Duration::from_secs(120),
                    num_replicas: replicas.of(name),
                    ..Default::default()
                })
                .await
                .map_err(nats)?;
            reconcile(&jetstream, name, replicas.of(name)).await;
        }
        // parked events stay until an operator replays or drops them
        jetstream
            .get_or_create_stream(Config {
                name: DEAD_LETTER_STREAM.to_owned(),
                subjects: vec![format!("{DEAD_LETTER_PREFIX}.>")],
                retention: RetentionPolicy::Limits,
                storage: StorageType::File,
                duplicate_window: Duration::from_secs(120),
                num_replicas: replicas.of(DEAD_LETTER_STREAM),
                ..Default::default()
            })
            .await
            .map_err(nats)?;
        reconcile(&jetstream, DEAD_LETTER_STREAM, replicas.of(DEAD_LETTER_STREAM)).await;
        Ok(Self { jetstream, partitions: partitions.max(1), ack_wait })
    }

    /// This bus with `partitions` partitions: the count [`super::partition_count::settle`] settled on.
    pub fn with_partitions(self, partitions: u32) -> Self {
        Self { partitions: partitions.max(1), ..self }
    }
}

impl JetStreamBus {
    /// Starts the chat consumers (one task per topic) until `stop` turns true. A delivery is acked
    /// once logged; a payload that is not JSON is logged as such and acked too (the spec's
    /// consumers have no retry and no dead-letter queue).
    pub async fn spawn_chat_consumers(
        &self,
        stop: tokio::sync::watch::Receiver<bool>,
    ) -> Result<Vec<tokio::task::JoinHandle<()>>, BusError> {
        let stream = self.jetstream.get_stream(CHAT_STREAM).await.map_err(nats)?;
        let mut tasks = Vec::new();
        for subject in [crate::subject::CHAT_MESSAGES, crate::subject::CHAT_RECEIPTS] {
            let name = format!("engage-chat-{}", subject.rsplit('.').next().unwrap_or("events"));
            let consumer: async_nats::jetstream::consumer::Consumer<pull::Config> = stream
                .get_or_create_consumer(
                    &name,
                    pull::Config {
                        durable_name: Some(name.clone()),
                        filter_subject: subject.to_owned(),
                        ack_policy: AckPolicy::Explicit,
                        ack_wait: self.ack_wait,
                        deliver_policy: DeliverPolicy::All,
                        ..Default::default()
                    },
                )
                .await
                .map_err(nats)?;
            let mut stop = stop.clone();
            tasks.push(tokio::spawn(async move {
                loop {
                    let batch = consumer.fetch().max_messages(CHAT_BATCH).expires(Duration::from_secs(2)).messages();
                    let mut messages = tokio::select! {
                        _ = stop.changed() => return,
                        batch = batch => match batch {
                            Ok(messages) => messages,
                            Err(error) => {
                                tracing::warn!(subject, %error, "chat consumer fetch failed; retrying");
                                tokio::time::sleep(Duration::from_secs(1)).await;
                                continue;
                            }
                        },
                    };
                    let mut taken = 0u64;
                    while let Some(message) = messages.next().await {
                        let Ok(message) = message else { continue };
                        taken += 1;
                        let trace_id = message
                            .headers
                            .as_ref()
                            .and_then(|h| h.get("Engage-Trace-Id"))
                            .map(|v| v.as_str().to_owned());
                        let payload = String::from_utf8_lossy(&message.payload);
                        if serde_json::from_slice::<Value>(&message.payload).is_err() {
                            tracing::warn!(subject, payload = %payload, "chat event is not JSON; dropped");
                        } else {
                            super::chat_event(subject, trace_id.as_deref().unwrap_or(""), &payload);
                        }
                        if let Err(error) = message.ack().await {
                            tracing::warn!(subject, %error, "chat event ack failed; it will come again");
                        }
                    }
                    if taken > 0 {
                        metrics::histogram!("engage_chat_batch_size", "subject" => subject).record(taken as f64);
                    }
                    if *stop.borrow() {
                        return;
                    }
                }
            }));
        }
        Ok(tasks)
    }
}

#[async_trait]
impl Bus for JetStreamBus {
    async fn publish(&self, envelope: &Arc<Envelope>) -> Result<u64, BusError> {
        self.publish_as(envelope, &envelope.id).await
    }

    async fn publish_side(&self, subject: &str, payload: &Value, trace_id: &str) -> Result<(), BusError> {
        let mut headers = HeaderMap::new();
        headers.insert("Engage-Trace-Id", trace_id);
        let body = serde_json::to_vec(payload).map_err(|e| BusError::Codec(e.to_string()))?;
        let ack = self.jetstream.publish_with_headers(subject.to_owned(), headers, body.into()).await.map_err(nats)?;
        ack.await.map_err(nats)?;
        Ok(())
    }

    async fn consumer(&self, partition: u32) -> Result<Box<dyn PartitionConsumer>, BusError> {
        let stream = self.jetstream.get_stream(ORDERS_STREAM).await.map_err(nats)?;
        let name = partition_consumer(partition);
        let consumer = stream
            .get_or_create_consumer(
                &name,
                pull::Config {
                    durable_name: Some(name.clone()),
                    filter_subject: partition_filter(partition),
                    ack_policy: AckPolicy::Explicit,
                    ack_wait: self.ack_wait,
                    deliver_policy: DeliverPolicy::All,
                    max_ack_pending: 20_000,
                    ..Default::default()
                },
            )
            .await
            .map_err(nats)?;
        Ok(Box::new(JetStreamConsumer {
            consumer,
            jetstream: self.jetstream.clone(),
            partition,
            partitions: self.partitions,
        }))
    }

    fn partitions(&self) -> u32 {
        self.partitions
    }

    async fn park(&self, letter: &DeadLetter) -> Result<(), BusError> {
        park_on(&self.jetstream, letter.clone()).await
    }

    async fn dead_letters(&self) -> Result<Vec<DeadLetter>, BusError> {
        Ok(self.parked().await?.into_iter().map(|(_, letter)| letter).collect())
    }

    async fn erase_customer(&self, tenant: &str, phone: &str) -> Result<u64, BusError> {
        let stream = self.jetstream.get_stream(DEAD_LETTER_STREAM).await.map_err(nats)?;
        let mut erased = 0;
        for (seq, letter) in self.parked().await? {
            if letter.names(tenant, phone) && stream.delete_message(seq).await.map_err(nats)? {
                erased += 1;
            }
        }
        Ok(erased + super::retained::erase_processed(&self.jetstream, self.partitions, tenant, phone).await?)
    }

    async fn drop_dead_letter(&self, id: &str) -> Result<bool, BusError> {
        delete_parked(&self.jetstream, |_, letter| letter.id() == id).await
    }

    async fn republish(&self, envelope: &Arc<Envelope>) -> Result<(), BusError> {
        // a replay gets its own Nats-Msg-Id: the first publish may still be in the duplicate window
        let replay_id =
            format!("{}@replay-{}", envelope.id, chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default());
        self.publish_as(envelope, &replay_id).await.map(|_| ())
    }
}

/// Room left in a message for the dead letter's headers.
const HEADER_ROOM: usize = 4096;

/// Parks `letter` on the dead-letter stream, cut to fit the server's payload limit
/// ([`DeadLetter::fit`]), replacing an earlier parking of the same event.
async fn park_on(jetstream: &Context, letter: DeadLetter) -> Result<(), BusError> {
    let limit = jetstream.client().server_info().max_payload.saturating_sub(HEADER_ROOM).max(HEADER_ROOM);
    let (letter, payload) = letter.fit(limit);
    let mut headers = HeaderMap::new();
    // unique per parking: parking the same event again (after a replay failed) is a new message
    let id: String = letter.id().chars().take(200).collect();
    headers.insert("Nats-Msg-Id", format!("{id}@{}", letter.last_failure).as_str());
    let trace: String = letter.envelope.trace_id.chars().take(200).collect();
    headers.insert("Engage-Trace-Id", trace.as_str());
    let tenant: String = letter.envelope.tenant.chars().take(200).collect();
    headers.insert("Engage-Tenant", tenant.as_str());
    headers.insert("Engage-Attempts", letter.attempts.to_string().as_str());
    let error: String = letter.error.chars().filter(|c| !c.is_control()).take(500).collect();
    headers.insert("Engage-Error", error.as_str());
    let subject = dead_subject(letter.partition, &letter.envelope.tenant);
    let ack = jetstream.publish_with_headers(subject, headers, payload.into()).await.map_err(nats)?;
    let parked = ack.await.map_err(nats)?.sequence;
    // an earlier parking of the same event is replaced
    delete_parked(jetstream, |seq, earlier| earlier.id() == letter.id() && seq != parked).await?;
    Ok(())
}

impl JetStreamBus {
    /// Publishes `envelope` on its partition's subject with `msg_id` as `Nats-Msg-Id`; its
    /// stream sequence.
    async fn publish_as(&self, envelope: &Envelope, msg_id: &str) -> Result<u64, BusError> {
        let partition = partition_of(&envelope.tenant, self.partitions);
        let payload = serde_json::to_vec(envelope).map_err(|e| BusError::Codec(e.to_string()))?;
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Msg-Id", msg_id);
        headers.insert("Engage-Trace-Id", envelope.trace_id.as_str());
        headers.insert("Engage-Source", envelope.source.as_str());
        let ack = self
            .jetstream
            .publish_with_headers(order_subject(partition, &envelope.tenant), headers, payload.into())
            .await
            .map_err(nats)?;
        Ok(ack.await.map_err(nats)?.sequence)
    }

    async fn parked(&self) -> Result<Vec<(u64, DeadLetter)>, BusError> {
        parked(&self.jetstream).await
    }
}

/// Deletes the parked events `matching` picks (by stream sequence and content); whether any was.
async fn delete_parked(jetstream: &Context, matching: impl Fn(u64, &DeadLetter) -> bool) -> Result<bool, BusError> {
    let stream = jetstream.get_stream(DEAD_LETTER_STREAM).await.map_err(nats)?;
    let mut deleted = false;
    for (seq, _) in parked(jetstream).await?.into_iter().filter(|(seq, letter)| matching(*seq, letter)) {
        deleted |= stream.delete_message(seq).await.map_err(nats)?;
    }
    Ok(deleted)
}

/// The parked events with their stream sequences, oldest first (at most `MAX_LISTED`).
async fn parked(jetstream: &Context) -> Result<Vec<(u64, DeadLetter)>, BusError> {
    let mut stream = jetstream.get_stream(DEAD_LETTER_STREAM).await.map_err(nats)?;
    let state = stream.info().await.map_err(nats)?.state.clone();
    let mut out = Vec::new();
    if state.messages == 0 {
        return Ok(out);
    }
    for seq in state.first_sequence..=state.last_sequence {
        if out.len() >= super::MAX_LISTED {
            break;
        }
        // a dropped event leaves a gap
        let Ok(message) = stream.get_raw_message(seq).await else { continue };
        match serde_json::from_slice::<DeadLetter>(&message.payload) {
            Ok(letter) => out.push((seq, letter)),
            Err(error) => tracing::warn!(seq, %error, "a dead-letter message is not a parked event; skipped"),
        }
    }
    Ok(out)
}

struct JetStreamConsumer {
    consumer: async_nats::jetstream::consumer::Consumer<pull::Config>,
    jetstream: Context,
    partition: u32,
    partitions: u32,
}

/// Why an envelope delivered on `subject` must not be applied here: its tenant's subject is
/// another (published by hand on another partition's or another tenant's subject, it would reach
/// a second actor of the same brand).
fn misrouted(subject: &str, envelope: &Envelope, partitions: u32) -> Option<String> {
    let expected = order_subject(partition_of(&envelope.tenant, partitions), &envelope.tenant);
    (subject != expected).then(|| {
        format!("delivered on subject {subject}, but tenant {:?} belongs on {expected}: not applied", envelope.tenant)
    })
}

#[async_trait]
impl PartitionConsumer for JetStreamConsumer {
    fn pulls_ahead(&self) -> bool {
        true
    }

    async fn next_batch(&mut self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BusError> {
        let mut messages = self
            .consumer
            .fetch()
            .max_messages(max)
            .expires(wait.max(Duration::from_millis(100)))
            .messages()
            .await
            .map_err(nats)?;
        let mut deliveries = Vec::new();
        while let Some(message) = messages.next().await {
            let message = message.map_err(nats)?;
            let info = message.info().ok().map(|info| (info.delivered, info.stream_sequence));
            let attempt = info.map_or(1, |(delivered, _)| delivered.clamp(1, i64::from(u32::MAX)) as u32);
            let position = info.map_or(0, |(_, sequence)| sequence);
            match serde_json::from_slice::<Envelope>(&message.payload) {
                Ok(envelope) => {
                    let refused = misrouted(message.subject.as_str(), &envelope, self.partitions);
                    deliveries.push(Delivery {
                        envelope: Arc::new(envelope),
                        attempt,
                        position,
                        encoded_len: Some(message.payload.len()),
                        refused,
                        handle: AckHandle::Nats(Box::new(message)),
                    })
                }
                Err(error) => {
                    // not an envelope: parked as it is (listed, never replayed), then terminated
                    tracing::error!(%error, subject = %message.subject, position, "undecodable message parked");
                    metrics::counter!("engage_bus_undecodable_total").increment(1);
                    let tenant = message.subject.as_str().rsplit('.').next().unwrap_or_default().to_owned();
                    let at = chrono::Utc::now().to_rfc3339();
                    let letter = DeadLetter::undecodable(
                        self.partition,
                        position,
                        &tenant,
                        &message.payload,
                        &error.to_string(),
                        &at,
                    );
                    match park_on(&self.jetstream, letter).await {
                        Ok(()) => {
                            metrics::gauge!("engage_dead_letters").increment(1.0);
                            let _ = message.ack_with(AckKind::Term).await;
                        }
                        Err(error) => {
                            tracing::warn!(%error, position, "cannot park an undecodable message; it comes again");
                            let _ = message.ack_with(AckKind::Nak(Some(Duration::from_secs(10)))).await;
                        }
                    }
                }
            }
        }
        Ok(deliveries)
    }
}
