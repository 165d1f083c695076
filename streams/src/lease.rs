//! Partition ownership, leased through the JetStream KV bucket `engage_leases`.
//!
//! The bucket's `max_age` is the lease time: an entry that is not rewritten within it disappears.
//! Each node, every third of the lease:
//! 1. writes its heartbeat `node.<id>`;
//! 2. counts live nodes (heartbeats present) and computes its fair share,
//!    `ceil(partitions / live nodes)`;
//! 3. renews each partition it owns (`p.<n>`, compare-and-set on the revision it holds; a failed
//!    renewal means the partition is lost and is dropped at once);
//! 4. releases partitions above its share (so a node that joins gets some): it stops processing
//!    them at once but deletes their keys only a round later, and
//! 5. takes free partitions (`create` succeeds only when the key is absent) up to its share,
//!    starting at an offset derived from its id so nodes do not all race for partition 0.
//!
//! A node that dies stops renewing: its partitions become free within one lease and the others
//! take them. A node that cannot reach NATS drops its partitions when the lease it last renewed
//! runs out, so two nodes never process one partition for longer than the clock skew.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use async_nats::jetstream::kv::{Config, Store as Bucket};
use async_nats::jetstream::Context;
use futures::StreamExt;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::subject::partition_of;

/// The bucket name.
pub const LEASE_BUCKET: &str = "engage_leases";

/// The owned partitions, as published to the engine.
pub type Owned = BTreeSet<u32>;

/// Opens (or creates) the lease bucket with `lease` as its entries' lifetime.
pub async fn lease_bucket(jetstream: &Context, lease: Duration) -> Result<Bucket, String> {
    if let Ok(bucket) = jetstream.get_key_value(LEASE_BUCKET).await {
        return Ok(bucket);
    }
    jetstream
        .create_key_value(Config {
            bucket: LEASE_BUCKET.to_owned(),
            history: 1,
            max_age: lease,
            storage: async_nats::jetstream::stream::StorageType::File,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())
}

/// Current owners: partition -> node id.
pub async fn owners(bucket: &Bucket) -> Result<BTreeMap<u32, String>, String> {
    let mut out = BTreeMap::new();
    let mut keys = bucket.keys().await.map_err(|e| e.to_string())?;
    while let Some(key) = keys.next().await {
        let key = key.map_err(|e| e.to_string())?;
        if let Some(partition) = key.strip_prefix("p.").and_then(|p| p.parse::<u32>().ok()) {
            if let Ok(Some(value)) = bucket.get(&key).await {
                out.insert(partition, String::from_utf8_lossy(&value).into_owned());
            }
        }
    }
    Ok(out)
}

/// Live nodes (heartbeat present).
pub async fn live_nodes(bucket: &Bucket) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut keys = bucket.keys().await.map_err(|e| e.to_string())?;
    while let Some(key) = keys.next().await {
        if let Some(node) = key.map_err(|e| e.to_string())?.strip_prefix("node.") {
            out.push(node.to_owned());
        }
    }
    Ok(out)
}

/// Runs the lease loop for `node` until `stop` flips to true; then releases what it owns.
pub fn spawn_lease_keeper(
    bucket: Bucket,
    node: String,
    partitions: u32,
    lease: Duration,
    mut stop: watch::Receiver<bool>,
) -> (watch::Receiver<Owned>, JoinHandle<()>) {
    let (owned_tx, owned_rx) = watch::channel(Owned::new());
    let task = tokio::spawn(async move {
        let mut held: BTreeMap<u32, u64> = BTreeMap::new(); // partition -> revision
        let mut releasing: Vec<u32> = Vec::new(); // held, renewed, but no longer processed
        let mut valid_until = Instant::now();
        let tick = lease / 3;
        loop {
            match keep(&bucket, &node, partitions, &mut held, &mut releasing).await {
                Ok(()) => valid_until = Instant::now() + lease - tick,
                Err(error) => {
                    tracing::warn!(%error, node, "lease round failed");
                    if Instant::now() >= valid_until && !held.is_empty() {
                        tracing::error!(node, "leases expired without renewal: dropping every partition");
                        held.clear();
                        releasing.clear();
                    }
                }
            }
            let owned: Owned = held.keys().copied().filter(|p| !releasing.contains(p)).collect();
            if *owned_tx.borrow() != owned {
                tracing::info!(node, partitions = ?owned, "partition ownership changed");
                metrics::gauge!("engage_partitions_owned").set(owned.len() as f64);
                let _ = owned_tx.send(owned);
            }
            tokio::select! {
                _ = tokio::time::sleep(tick) => {}
                _ = stop.wait_for(|s| *s) => break,
            }
        }
        // Hand the partitions over at once instead of letting them expire.
        let _ = owned_tx.send(Owned::new());
        for partition in held.keys() {
            let _ = bucket.delete(format!("p.{partition}")).await;
        }
        let _ = bucket.delete(format!("node.{node}")).await;
        tracing::info!(node, "leases released");
    });
    (owned_rx, task)
}

async fn keep(
    bucket: &Bucket,
    node: &str,
    partitions: u32,
    held: &mut BTreeMap<u32, u64>,
    releasing: &mut Vec<u32>,
) -> Result<(), String> {
    bucket.put(format!("node.{node}"), node.as_bytes().to_vec().into()).await.map_err(|e| e.to_string())?;
    let alive = live_nodes(bucket).await?.len().max(1) as u32;
    let share = partitions.div_ceil(alive) as usize;

    // renew
    let mut lost = Vec::new();
    for (partition, revision) in held.iter_mut() {
        match bucket.update(format!("p.{partition}"), node.as_bytes().to_vec().into(), *revision).await {
            Ok(next) => *revision = next,
            Err(_) => lost.push(*partition),
        }
    }
    for partition in lost {
        tracing::warn!(node, partition, "partition lease lost");
        held.remove(&partition);
    }
    // release above the share (highest numbers first), in two rounds: first stop processing
    // (the engine sees the partition leave the owned set) while still renewing the lease, then
    // delete the key a round later, so the next owner never overlaps a batch still running here
    for partition in std::mem::take(releasing) {
        if held.remove(&partition).is_some() {
            let _ = bucket.delete(format!("p.{partition}")).await;
            tracing::info!(node, partition, "partition released to rebalance");
        }
    }
    let mut active = held.len();
    while active > share {
        let Some(&partition) = held.keys().rev().find(|p| !releasing.contains(p)) else { break };
        releasing.push(partition);
        active -= 1;
    }
    // take free partitions up to the share
    let offset = partition_of(node, partitions);
    for i in 0..partitions {
        if held.len() - releasing.len() >= share {
            break;
        }
        let partition = (offset + i) % partitions;
        if held.contains_key(&partition) {
            continue;
        }
        if let Ok(revision) = bucket.create(format!("p.{partition}"), node.as_bytes().to_vec().into()).await {
            held.insert(partition, revision);
        }
    }
    Ok(())
}
