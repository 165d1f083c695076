//! What the JetStream orders stream retains of a customer: the stream keeps messages by age
//! (`ENGAGE_NATS_RETENTION`) so operators can replay subjects, so an erased customer's processed
//! orders would stay readable there until they age out. [`erase_processed`] deletes them.

use async_nats::jetstream::consumer::push::OrderedConfig;
use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::Context;
use futures::StreamExt;

use super::BusError;
use crate::subject::{order_subject, partition_consumer, partition_of, ORDERS_STREAM};

fn nats(error: impl std::fmt::Display) -> BusError {
    BusError::Nats(error.to_string())
}

/// Deletes the messages of `tenant`'s orders subject that hold `phone` and that its partition's
/// consumer already settled (up to its ack floor); how many. A message past the floor is still
/// in flight: it is applied after the erasure, like an order placed after it.
pub(super) async fn erase_processed(
    jetstream: &Context,
    partitions: u32,
    tenant: &str,
    phone: &str,
) -> Result<u64, BusError> {
    let partition = partition_of(tenant, partitions);
    let stream = jetstream.get_stream(ORDERS_STREAM).await.map_err(nats)?;
    let floor = match stream.consumer_info(partition_consumer(partition)).await {
        Ok(info) => info.ack_floor.stream_sequence,
        Err(_) => 0,
    };
    if floor == 0 {
        return Ok(0);
    }
    let consumer = stream
        .create_consumer(OrderedConfig {
            deliver_subject: jetstream.client().new_inbox(),
            filter_subject: order_subject(partition, tenant),
            deliver_policy: DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .map_err(nats)?;
    let name = consumer.cached_info().name.clone();
    let mut naming = Vec::new();
    if consumer.cached_info().num_pending > 0 {
        let mut messages = consumer.messages().await.map_err(nats)?;
        while let Some(message) = messages.next().await {
            let message = message.map_err(nats)?;
            let info = message.info().map_err(nats)?;
            let (seq, pending) = (info.stream_sequence, info.pending);
            if seq > floor {
                break;
            }
            if message.payload.windows(phone.len()).any(|w| w == phone.as_bytes()) {
                naming.push(seq);
            }
            if pending == 0 {
                break;
            }
        }
    }
    if let Err(error) = stream.delete_consumer(&name).await {
        tracing::debug!(%error, "the erasure's consumer was not removed; it expires on its own");
    }
    let mut erased = 0;
    for seq in naming {
        if stream.delete_message(seq).await.map_err(nats)? {
            erased += 1;
        }
    }
    Ok(erased)
}
