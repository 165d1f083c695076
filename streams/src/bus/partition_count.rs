//! The partition count a NATS cluster was made with, kept in the orders stream's metadata
//! (`engage_partitions`), so that no process splits the brands between two partitionings; and
//! the count a single node's data dir was made with, kept by the embedded bus ([`settle_in_store`]).
//!
//! A brand's partition is its hash modulo the count ([`crate::subject::partition_of`]): a process
//! with another count publishes a brand's orders on another subject than its owner consumes, and
//! they are parked as misrouted. So the first process that finds no count recorded (on a new
//! cluster, or one made before the count was kept) records its own, and every later process
//! settles on it ([`settle`]): one given another count (`ENGAGE_PARTITIONS`) refuses to start,
//! naming both; one that was not given any takes the cluster's. Two first processes that start
//! in the same moment with different counts may both record theirs (the last write stays): start
//! a new cluster's first process alone, or give every process the same count.
//!
//! The stream's configuration is read and written as JSON through the JetStream API (`STREAM.INFO`,
//! `STREAM.UPDATE`): the client's typed configuration has no metadata without its `server_2_10`
//! feature, and the JSON round trip keeps every field the server has, known to the client or not.

use async_nats::jetstream::response::Response;
use async_nats::jetstream::Context;
use serde_json::{json, Value};

use engage_storage::Store;

use super::embedded::META_TABLE;
use super::BusError;
use crate::subject::ORDERS_STREAM;

/// The embedded bus's row holding the count: [`META_TABLE`], this partition and clustering key.
const COUNT_PARTITION: &str = "partitions";
const COUNT_KEY: &[u8] = b"count";

/// The orders stream's metadata key holding the count.
pub const METADATA_KEY: &str = "engage_partitions";

/// What a process's count is to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// This count, the cluster's.
    Use(u32),
    /// The process was given `given`, the cluster was made with `cluster`.
    Differs {
        /// The count the cluster keeps.
        cluster: u32,
        /// The count this process was given.
        given: u32,
    },
}

impl Settled {
    /// The refusal a process with another count than `place`'s (`this NATS cluster`, `this data
    /// dir`) starts with.
    pub fn refusal(cluster: u32, given: u32, place: &str) -> String {
        format!(
            "ENGAGE_PARTITIONS is {given} but {place} was made with {cluster} partitions: the count never changes once orders flow (a brand's orders would wait on a partition nobody reads); set ENGAGE_PARTITIONS={cluster} or leave it unset"
        )
    }
}

/// What a process given `configured` (`given`: set rather than left at its default) uses where
/// `kept` is the count recorded (none: it records its own).
pub fn decide(kept: Option<u32>, configured: u32, given: bool) -> Settled {
    match kept {
        Some(cluster) if given && cluster != configured => Settled::Differs { cluster, given: configured },
        Some(cluster) => Settled::Use(cluster),
        None => Settled::Use(configured),
    }
}

/// Settles a single node's count against the one its store keeps (the embedded bus's rows are
/// under their partition: a node with another count would never read some of them).
pub async fn settle_in_store(store: &dyn Store, configured: u32, given: bool) -> Result<Settled, BusError> {
    let kept = kept_in_store(store).await?;
    if kept.is_none() {
        put_in_store(store, configured).await?;
    }
    Ok(decide(kept, configured, given))
}

/// Settles this process's partition count against the cluster's (the orders stream must exist:
/// [`super::JetStreamBus::connect`] makes it). `given`: whether `configured` was set rather than
/// left at its default.
pub async fn settle(jetstream: &Context, configured: u32, given: bool) -> Result<Settled, BusError> {
    let config = stream_config(jetstream).await?;
    let kept = count_in(&config)?;
    if kept.is_none() {
        // a new cluster, or one made before the count was kept (it has been running with this
        // process's count, or a process with another one would have parked orders already)
        write_count(jetstream, config, configured).await?;
        tracing::info!(partitions = configured, "recorded the cluster's partition count in the orders stream");
    }
    Ok(decide(kept, configured, given))
}

/// The count the cluster keeps, if any (`engage partitions` reads it without settling).
pub async fn kept(jetstream: &Context) -> Result<Option<u32>, BusError> {
    count_in(&stream_config(jetstream).await?)
}

/// Makes `count` the cluster's (`engage partitions set`, once the cluster is stopped and
/// drained: [`undelivered`]); the count it kept before, if any.
pub async fn record(jetstream: &Context, count: u32) -> Result<Option<u32>, BusError> {
    let config = stream_config(jetstream).await?;
    let before = count_in(&config)?;
    write_count(jetstream, config, count).await?;
    Ok(before)
}

/// The partition consumers with orders not yet processed, and how many each has (delivered and
/// not acked, or not delivered yet).
pub async fn undelivered(jetstream: &Context) -> Result<Vec<(String, u64)>, BusError> {
    use futures::StreamExt;
    let stream = jetstream.get_stream(ORDERS_STREAM).await.map_err(|e| nats(&e))?;
    let mut consumers = stream.consumers();
    let mut left = Vec::new();
    while let Some(consumer) = consumers.next().await {
        let consumer = consumer.map_err(|e| nats(&e))?;
        let waiting = consumer.num_pending + consumer.num_ack_pending as u64;
        if consumer.name.starts_with(crate::subject::PARTITION_CONSUMER_PREFIX) && waiting > 0 {
            left.push((consumer.name.clone(), waiting));
        }
    }
    Ok(left)
}

/// The count a single node's store keeps, if any.
pub async fn kept_in_store(store: &dyn Store) -> Result<Option<u32>, BusError> {
    match store.get(META_TABLE, COUNT_PARTITION, COUNT_KEY).await? {
        Some(bytes) => std::str::from_utf8(&bytes)
            .ok()
            .and_then(parse_count)
            .map(Some)
            .ok_or_else(|| BusError::Codec("the stored partition count is not a count".into())),
        None => Ok(None),
    }
}

/// Makes `count` a single node's (its bus must hold no unsettled order); the one before, if any.
pub async fn record_in_store(store: &dyn Store, count: u32) -> Result<Option<u32>, BusError> {
    let before = kept_in_store(store).await?;
    put_in_store(store, count).await?;
    Ok(before)
}

async fn put_in_store(store: &dyn Store, count: u32) -> Result<(), BusError> {
    Ok(store.put(META_TABLE, COUNT_PARTITION, COUNT_KEY, count.to_string().into_bytes()).await?)
}

/// A kept count as written: a whole number above zero.
fn parse_count(text: &str) -> Option<u32> {
    text.parse::<u32>().ok().filter(|count| *count > 0)
}

/// Writes `count` into the orders stream's `config` (as the server gave it) and updates the stream.
async fn write_count(jetstream: &Context, mut config: Value, count: u32) -> Result<(), BusError> {
    let Some(fields) = config.as_object_mut() else {
        return Err(nats(&"the stream's configuration is not an object"));
    };
    let metadata = fields.entry("metadata").or_insert_with(|| json!({}));
    match metadata.as_object_mut() {
        Some(metadata) => metadata.insert(METADATA_KEY.to_owned(), Value::String(count.to_string())),
        None => return Err(nats(&"the stream's metadata is not an object")),
    };
    let subject = format!("STREAM.UPDATE.{ORDERS_STREAM}");
    answer(jetstream.request(subject, &config).await.map_err(|e| nats(&e))?)?;
    Ok(())
}

/// The orders stream's configuration, as the server has it.
async fn stream_config(jetstream: &Context) -> Result<Value, BusError> {
    let subject = format!("STREAM.INFO.{ORDERS_STREAM}");
    let mut info = answer(jetstream.request(subject, &json!({})).await.map_err(|e| nats(&e))?)?;
    match info.get_mut("config").map(Value::take) {
        Some(config @ Value::Object(_)) => Ok(config),
        _ => Err(nats(&"the stream's info has no configuration")),
    }
}

fn answer(response: Response<Value>) -> Result<Value, BusError> {
    match response {
        Response::Ok(value) => Ok(value),
        Response::Err { error } => Err(nats(&error)),
    }
}

fn count_in(config: &Value) -> Result<Option<u32>, BusError> {
    let Some(kept) = config.get("metadata").and_then(|metadata| metadata.get(METADATA_KEY)) else {
        return Ok(None);
    };
    kept.as_str()
        .and_then(parse_count)
        .map(Some)
        .ok_or_else(|| nats(&format!("{METADATA_KEY} is {kept}, not a partition count")))
}

fn nats(error: &dyn std::fmt::Display) -> BusError {
    BusError::Nats(format!("the orders stream's partition count: {error}"))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use engage_storage::{EmbeddedStore, Store};

    use super::*;

    #[test]
    fn a_given_count_must_match_the_kept_one_and_an_unset_one_takes_it() {
        assert_eq!(decide(None, 16, true), Settled::Use(16));
        assert_eq!(decide(Some(64), 16, true), Settled::Differs { cluster: 64, given: 16 });
        assert_eq!(decide(Some(16), 64, false), Settled::Use(16));
        assert_eq!(decide(Some(16), 16, true), Settled::Use(16));
    }

    #[tokio::test]
    async fn a_data_dir_keeps_the_count_it_was_made_with_across_reopens() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
            assert_eq!(settle_in_store(&*store, 8, true).await.unwrap(), Settled::Use(8));
        }
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        assert_eq!(settle_in_store(&*store, 64, false).await.unwrap(), Settled::Use(8));
        assert_eq!(settle_in_store(&*store, 16, true).await.unwrap(), Settled::Differs { cluster: 8, given: 16 });
        assert_eq!(settle_in_store(&*store, 8, true).await.unwrap(), Settled::Use(8));
    }
}
