//! A group of batches written together by the committer, and what happens when the bucket
//! refuses one: the group is written again a batch at a time, so one bad batch (a value over the
//! bucket's size limit) fails alone instead of taking the batches it happened to travel with.

use std::collections::{HashMap, HashSet};

use async_nats::jetstream::kv::Store as Bucket;
use bytes::Bytes;

use super::{backend, Commit, KvWrite};
use crate::store::nats_atomic::{AtomicPublisher, MAX_ATOMIC};
use crate::store::StoreError;

/// Where a caller's outcome goes.
pub(super) type Answer = tokio::sync::oneshot::Sender<Result<(), StoreError>>;

/// Puts `value` under `key`, or deletes `key`.
async fn write(bucket: &Bucket, key: String, value: Option<Bytes>) -> Result<(), StoreError> {
    match value {
        Some(value) => bucket.put(key, value).await.map(|_| ()).map_err(backend),
        None => bucket.delete(key).await.map_err(backend),
    }
}

/// Sends `writes` together (pipelined on the connection) and waits for every answer.
async fn write_all(bucket: &Bucket, writes: HashMap<String, Option<Bytes>>) -> Result<(), StoreError> {
    let sent = writes.into_iter().map(|(key, value)| write(bucket, key, value));
    futures::future::join_all(sent).await.into_iter().collect()
}

/// The writes of one group or one batch in their two phases: every earlier write, then every
/// last write (each key once, the later batch's value winning).
#[derive(Default)]
pub(super) struct Phases {
    earlier: HashMap<String, Option<Bytes>>,
    last: HashMap<String, Option<Bytes>>,
}

impl Phases {
    fn add(&mut self, mut writes: Vec<KvWrite>) {
        if let Some((key, value)) = writes.pop() {
            self.last.insert(key, value);
        }
        self.earlier.extend(writes);
    }
}

/// Writes `phases`: as one atomic batch when the bucket takes them and they fit one, otherwise the
/// earlier writes first and the last writes only after all of them.
pub(super) async fn write_phases(
    bucket: &Bucket,
    atomic: Option<&AtomicPublisher>,
    phases: Phases,
) -> Result<(), StoreError> {
    let Phases { mut earlier, last } = phases;
    match atomic {
        Some(atomic) if earlier.len() + last.len() <= MAX_ATOMIC => {
            // a key in both phases never joins a group (Group::takes)
            earlier.extend(last);
            atomic.publish(earlier.into_iter().collect()).await
        }
        _ => {
            write_all(bucket, earlier).await?;
            write_all(bucket, last).await
        }
    }
}

/// Writes a failed group's batches again one at a time, in order: a batch that lands is answered
/// `Ok`, the first one that fails gets its own error, and every batch after it
/// [`StoreError::Behind`] without being sent (it may read that batch's rows). Whether every batch
/// landed (the group's failure was passing).
pub(super) async fn isolate(
    bucket: &Bucket,
    atomic: Option<&AtomicPublisher>,
    batches: Vec<Vec<KvWrite>>,
    waiting: Vec<Answer>,
    group_error: &StoreError,
) -> bool {
    tracing::warn!(
        batches = waiting.len(), error = %group_error,
        "NATS KV store: a group of batches failed; writing them one at a time to find the one the bucket refuses"
    );
    metrics::counter!("engage_store_group_isolations_total").increment(1);
    let mut failed = false;
    for (writes, done) in batches.into_iter().zip(waiting) {
        if failed {
            let _ = done.send(Err(StoreError::Behind("a batch written with it failed".into())));
            continue;
        }
        let mut phases = Phases::default();
        phases.add(writes);
        let outcome = write_phases(bucket, atomic, phases).await;
        failed = outcome.is_err();
        let _ = done.send(outcome);
    }
    !failed
}

/// The batches of one group: their writes in two phases, each batch's own writes (to write them
/// again one at a time if the group fails), and who waits.
#[derive(Default)]
pub(super) struct Group {
    phases: Phases,
    batches: Vec<Vec<KvWrite>>,
    waiting: Vec<Answer>,
    pub(super) staged: bool,
    pub(super) last_seq: u64,
    /// Most writes the group may hold (one atomic batch's, when batches are atomic).
    limit: usize,
}

impl Group {
    pub(super) fn with_limit(limit: usize) -> Self {
        Self { limit, ..Self::default() }
    }

    /// Whether `commit` can join: without a key in both phases, and within the group's limit.
    pub(super) fn takes(&self, commit: &Commit) -> bool {
        let Some(((last_key, _), earlier)) = commit.writes.split_last() else { return true };
        let Phases { earlier: group_earlier, last: group_last } = &self.phases;
        group_earlier.len() + group_last.len() + commit.writes.len() <= self.limit
            && !group_earlier.contains_key(last_key)
            && earlier.iter().all(|(key, _)| !group_last.contains_key(key))
    }

    pub(super) fn add(&mut self, commit: Commit) {
        self.batches.push(commit.writes.clone());
        self.phases.add(commit.writes);
        self.waiting.push(commit.done);
        self.staged |= commit.staged;
        self.last_seq = self.last_seq.max(commit.seq);
    }

    pub(super) fn len(&self) -> usize {
        self.waiting.len()
    }

    pub(super) fn keys(&self) -> HashSet<String> {
        self.phases.earlier.keys().chain(self.phases.last.keys()).cloned().collect()
    }

    pub(super) fn into_parts(self) -> (Phases, Vec<Answer>, Vec<Vec<KvWrite>>) {
        (self.phases, self.waiting, self.batches)
    }
}
