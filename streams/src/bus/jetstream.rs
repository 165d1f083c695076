//! The JetStream bus: stream `ENGAGE_ORDERS` (subjects `engage.orders.>`, file storage, retention
//! by age so operators can replay subjects), one durable pull consumer per partition
//! (`engage-p<n>`, filter `engage.orders.<n>.*`, explicit acks). Chat events go to stream
//! `ENGAGE_CHAT` (`engage.chat.>`), where operators read them with `nats stream view`.
//!
//! Each message is the envelope as JSON, with headers `Nats-Msg-Id` (the envelope id: JetStream
//! drops a re-publish within the duplicate window), `Engage-Trace-Id` and `Engage-Source`.

use std::time::Duration;

use async_nats::jetstream::consumer::{pull, AckPolicy, DeliverPolicy};
use async_nats::jetstream::stream::{Config, RetentionPolicy, StorageType};
use async_nats::jetstream::{AckKind, Context};
use async_nats::HeaderMap;
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::Value;

use super::{AckHandle, Bus, BusError, Delivery, PartitionConsumer};
use crate::envelope::Envelope;
use crate::subject::{order_subject, partition_filter, partition_of, ORDERS_PREFIX, ORDERS_STREAM};

/// Stream of chat events.
pub const CHAT_STREAM: &str = "ENGAGE_CHAT";

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
    /// Creates (or reuses) the streams. `retention` is the age after which messages leave the
    /// stream; `ack_wait` how long a delivered, unacked message waits before redelivery.
    pub async fn connect(
        jetstream: Context,
        partitions: u32,
        retention: Duration,
        ack_wait: Duration,
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
                    ..Default::default()
                })
                .await
                .map_err(nats)?;
        }
        Ok(Self { jetstream, partitions: partitions.max(1), ack_wait })
    }
}

#[async_trait]
impl Bus for JetStreamBus {
    async fn publish(&self, envelope: &Envelope) -> Result<(), BusError> {
        let partition = partition_of(&envelope.tenant, self.partitions);
        let payload = serde_json::to_vec(envelope).map_err(|e| BusError::Codec(e.to_string()))?;
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Msg-Id", envelope.id.as_str());
        headers.insert("Engage-Trace-Id", envelope.trace_id.as_str());
        headers.insert("Engage-Source", envelope.source.as_str());
        let ack = self
            .jetstream
            .publish_with_headers(order_subject(partition, &envelope.tenant), headers, payload.into())
            .await
            .map_err(nats)?;
        ack.await.map_err(nats)?;
        Ok(())
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
        let name = format!("engage-p{partition}");
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
        Ok(Box::new(JetStreamConsumer { consumer }))
    }

    fn partitions(&self) -> u32 {
        self.partitions
    }
}

struct JetStreamConsumer {
    consumer: async_nats::jetstream::consumer::Consumer<pull::Config>,
}

#[async_trait]
impl PartitionConsumer for JetStreamConsumer {
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
            match serde_json::from_slice::<Envelope>(&message.payload) {
                Ok(envelope) => deliveries.push(Delivery { envelope, handle: AckHandle::Nats(Box::new(message)) }),
                Err(error) => {
                    tracing::error!(%error, subject = %message.subject, "undecodable message terminated");
                    metrics::counter!("engage_bus_undecodable_total").increment(1);
                    let _ = message.ack_with(AckKind::Term).await;
                }
            }
        }
        Ok(deliveries)
    }
}
