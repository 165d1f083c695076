//! Partition ownership, leased through the JetStream KV bucket `engage_leases`.
//!
//! The bucket's `max_age` is three quarters of the lease ([`key_lifetime`]): an entry that is not
//! rewritten within it disappears. Each node, every quarter of the lease:
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
//! take them at that moment: each node watches the bucket, knows when every foreign lease was last
//! written, and runs a round right after the earliest one's expiry (not at its next tick), so a
//! dead node's partitions move within the lease. A node that cannot reach NATS drops its
//! partitions before the keys it last renewed can expire, so two nodes never process one
//! partition for longer than the clock skew.

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

/// How long a lease key lives without renewal: three quarters of the lease, so that a dead node's
/// partitions are free, and taken, within the lease (ENGAGE_PARTITION_LEASE_SECS promises that).
pub fn key_lifetime(lease: Duration) -> Duration {
    lease * 3 / 4
}

/// Opens (or creates) the lease bucket with [`key_lifetime`] as its entries' lifetime; a bucket
/// made with another lifetime (another lease setting, an older version) or replica count is
/// updated to it.
pub async fn lease_bucket(jetstream: &Context, lease: Duration, replicas: usize) -> Result<Bucket, String> {
    let lifetime = key_lifetime(lease);
    if let Ok(bucket) = jetstream.get_key_value(LEASE_BUCKET).await {
        let stream_name = format!("KV_{LEASE_BUCKET}");
        engage_storage::replicas::reconcile(jetstream, &stream_name, replicas).await;
        if let Ok(mut stream) = jetstream.get_stream(&stream_name).await {
            if let Ok(info) = stream.info().await {
                if info.config.max_age != lifetime {
                    let mut config = info.config.clone();
                    config.max_age = lifetime;
                    if let Err(error) = jetstream.update_stream(config).await {
                        tracing::warn!(%error, "cannot set the lease bucket's key lifetime");
                    }
                }
            }
        }
        return Ok(bucket);
    }
    jetstream
        .create_key_value(Config {
            bucket: LEASE_BUCKET.to_owned(),
            history: 1,
            max_age: lifetime,
            storage: async_nats::jetstream::stream::StorageType::File,
            num_replicas: replicas,
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

/// How long a stopping node waits for its engine to stop processing before it deletes its
/// partition keys anyway (a batch still running then is idempotent for the next owner).
const STOP_WAIT: Duration = Duration::from_secs(5);

/// Runs the lease loop for `node` until `stop` flips to true; then releases what it owns.
///
/// `running` is what the engine processes now: a partition given up (to rebalance, or because
/// the node stops) has its key deleted as soon as the engine no longer runs it, so the next owner
/// takes it at once rather than a round (a quarter lease) later; every node runs a round as soon
/// as it sees a partition key deleted. Planned moves thus hand a partition over in about the time
/// the engine takes to finish the batch it is on (`docs/operations.md`, "Planned moves").
pub fn spawn_lease_keeper(
    bucket: Bucket,
    node: String,
    partitions: u32,
    lease: Duration,
    mut stop: watch::Receiver<bool>,
    mut running: watch::Receiver<Owned>,
) -> (watch::Receiver<Owned>, JoinHandle<()>) {
    let (owned_tx, owned_rx) = watch::channel(Owned::new());
    let task = tokio::spawn(async move {
        let mut held: BTreeMap<u32, u64> = BTreeMap::new(); // partition -> revision
        let mut releasing: Vec<u32> = Vec::new(); // held, renewed, but no longer processed
        let mut valid_until = Instant::now();
        let tick = lease / 4;
        let lifetime = key_lifetime(lease);
        let mut expiries = Expiries::new(&node, lifetime);
        let mut watch = None;
        'rounds: loop {
            // a watch lost in an outage is made again at the next round
            if watch.is_none() {
                watch = match bucket.watch_with_history(">").await {
                    Ok(watch) => Some(watch),
                    Err(error) => {
                        tracing::warn!(%error, node, "cannot watch the lease bucket now: trying again next round");
                        None
                    }
                };
            }
            let round_start = Instant::now();
            match keep(&bucket, &node, partitions, &mut held, &mut releasing).await {
                // the keys written in this round live at least until round_start + lifetime
                Ok(()) => valid_until = round_start + lifetime - tick / 2,
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
                tracing::info!(
                    node,
                    owned = owned.len(),
                    of = partitions,
                    "this node now processes {} of {partitions} partitions",
                    owned.len()
                );
                tracing::debug!(node, partitions = ?owned, "partition ownership changed");
                metrics::gauge!("engage_partitions_owned").set(owned.len() as f64);
                let _ = owned_tx.send(owned);
            }
            // wait for the next round: the tick, or right after a foreign lease expires
            let next_round = tokio::time::Instant::now() + tick;
            loop {
                let wake = expiries.next().map_or(next_round, |at| at.min(next_round));
                tokio::select! {
                    _ = tokio::time::sleep_until(wake) => {
                        if wake < next_round {
                            expiries.fired();
                        }
                        break;
                    }
                    _ = stop.wait_for(|s| *s) => break 'rounds,
                    entry = next_entry(&mut watch) => match entry {
                        Some(entry) => {
                            expiries.observe(&entry);
                            // a partition handed over: a round now takes it if this node is short
                            if freed(&entry, &held) {
                                break;
                            }
                            continue;
                        }
                        None => {
                            watch = None;
                            continue;
                        }
                    },
                    changed = running.changed() => {
                        if changed.is_err() {
                            // no engine any more: releasing waits for the rounds
                            running = watch::channel(Owned::new()).1;
                            continue;
                        }
                    }
                }
                // the engine's running set changed (the only branch that gets here)
                let now_running = running.borrow_and_update().clone();
                hand_over(&bucket, &node, &mut held, &mut releasing, &now_running).await;
            }
        }
        // Hand the partitions over at once instead of letting them expire: once the engine has
        // finished what it was processing (at most STOP_WAIT), so the next owner never overlaps.
        let _ = owned_tx.send(Owned::new());
        let stopped = running.wait_for(|running| running.is_empty());
        if tokio::time::timeout(STOP_WAIT, stopped).await.is_err() {
            tracing::warn!(
                node,
                "the engine did not stop processing within {STOP_WAIT:?}: releasing the leases anyway"
            );
        }
        for partition in held.keys() {
            let _ = bucket.delete(format!("p.{partition}")).await;
        }
        let _ = bucket.delete(format!("node.{node}")).await;
        tracing::info!(node, "leases released");
    });
    (owned_rx, task)
}

/// Whether `entry` removes another node's partition key (a planned hand-over).
fn freed(entry: &async_nats::jetstream::kv::Entry, held: &BTreeMap<u32, u64>) -> bool {
    use async_nats::jetstream::kv::Operation;
    let partition = entry.key.strip_prefix("p.").and_then(|p| p.parse::<u32>().ok());
    matches!(entry.operation, Operation::Delete | Operation::Purge)
        && partition.is_some_and(|partition| !held.contains_key(&partition))
}

/// Deletes the keys of the partitions being released that the engine no longer runs.
async fn hand_over(
    bucket: &Bucket,
    node: &str,
    held: &mut BTreeMap<u32, u64>,
    releasing: &mut Vec<u32>,
    running: &Owned,
) {
    let done: Vec<u32> = releasing.iter().copied().filter(|p| !running.contains(p)).collect();
    for partition in done {
        releasing.retain(|p| *p != partition);
        if held.remove(&partition).is_some() {
            let _ = bucket.delete(format!("p.{partition}")).await;
            tracing::debug!(node, partition, "partition handed over: the engine finished with it");
        }
    }
}

/// The next change in the bucket; pending forever without a watch.
async fn next_entry(watch: &mut Option<async_nats::jetstream::kv::Watch>) -> Option<async_nats::jetstream::kv::Entry> {
    match watch {
        Some(watch) => match watch.next().await {
            Some(Ok(entry)) => Some(entry),
            Some(Err(error)) => {
                tracing::warn!(%error, "lease bucket watch failed: it is made again at the next round");
                None
            }
            None => None,
        },
        None => std::future::pending().await,
    }
}

/// When each partition lease held by another node runs out, from the bucket's watch: the write
/// time of the key's last revision plus the key lifetime.
struct Expiries {
    node: String,
    /// How long a key lives unrenewed.
    lifetime: Duration,
    /// partition key -> (expiry, rounds already run for it)
    by_key: BTreeMap<String, (tokio::time::Instant, u32)>,
}

/// A round run at an expiry that found the key still there (the server expires a little late)
/// is repeated this much later, at most [`EXPIRY_RETRIES`] times.
const EXPIRY_RETRY: Duration = Duration::from_millis(300);
const EXPIRY_RETRIES: u32 = 5;

impl Expiries {
    fn new(node: &str, lifetime: Duration) -> Self {
        Self { node: node.to_owned(), lifetime, by_key: BTreeMap::new() }
    }

    /// Records a write (another node's lease: its expiry) or a removal.
    fn observe(&mut self, entry: &async_nats::jetstream::kv::Entry) {
        if !entry.key.starts_with("p.") {
            return;
        }
        let foreign =
            entry.operation == async_nats::jetstream::kv::Operation::Put && entry.value != self.node.as_bytes();
        if !foreign {
            self.by_key.remove(&entry.key);
            return;
        }
        // the server's write time, as an instant on this clock
        let written = std::time::SystemTime::from(entry.created);
        let age = std::time::SystemTime::now().duration_since(written).unwrap_or_default();
        let expires = tokio::time::Instant::now() + self.lifetime.saturating_sub(age) + Duration::from_millis(50);
        self.by_key.insert(entry.key.clone(), (expires, 0));
    }

    /// The earliest expiry.
    fn next(&self) -> Option<tokio::time::Instant> {
        self.by_key.values().map(|(at, _)| *at).min()
    }

    /// A round is about to run for the expiries that are due: each is looked at again shortly,
    /// in case the server had not removed the key yet (a taken key is removed by its write).
    fn fired(&mut self) {
        let now = tokio::time::Instant::now();
        self.by_key.retain(|_, (at, rounds)| {
            if *at > now {
                return true;
            }
            *rounds += 1;
            *at = now + EXPIRY_RETRY;
            *rounds <= EXPIRY_RETRIES
        });
    }
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
            tracing::debug!(node, partition, "partition released to rebalance");
        }
    }
    let mut active = held.len();
    if active > share && releasing.is_empty() {
        // a node joined (or this one started first and took everything): say what happens next
        tracing::info!(
            node,
            live_nodes = alive,
            share,
            handing_over = active - share,
            "rebalancing: {alive} nodes share {partitions} partitions; handing {} over over the next rounds",
            active - share
        );
    }
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
