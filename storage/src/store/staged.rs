//! The staged map the committing stores share ([`Store::stage`](super::Store::stage)): the newest
//! staged write of each row, from before its batch goes to the store's committer until the
//! committer has written it, and how far the committer got.
//!
//! A store hands out batch sequences under the map's lock ([`Staging::lock`]) and sends each
//! batch to its committer while still holding it, so the committer sees batches in sequence order.
//! Reads of a row answer from the map while it holds the row ([`Staging::value`]); a scan of a
//! partition with staged rows first waits until the committer is done with them
//! ([`Staging::wait_for_rows_in`]).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use bytes::Bytes;

use super::StoreError;

/// Staged writes by row key, and the batch sequence.
/// `V`: a staged value's bytes.
pub(crate) struct Staged<K, V = Bytes> {
    /// The sequence of the last batch handed to the committer.
    pub last_seq: u64,
    /// The newest staged write of each row (`None`: a delete), with its batch's sequence.
    rows: BTreeMap<K, (u64, Option<V>)>,
}

impl<K: Ord, V> Staged<K, V> {
    /// Stages `value` (`None`: a delete) for `key`, written by batch `seq`.
    pub fn insert(&mut self, key: K, seq: u64, value: Option<V>) {
        self.rows.insert(key, (seq, value));
    }

    /// Drops every staged row (their batches failed).
    pub fn clear(&mut self) {
        self.rows.clear();
    }
}

/// The staged map and the committer's progress.
pub(crate) struct Staging<K, V = Bytes> {
    rows: Mutex<Staged<K, V>>,
    /// The sequence of the last batch the committer is done with (written or failed).
    settled: tokio::sync::watch::Sender<u64>,
}

impl<K, V> Default for Staging<K, V> {
    fn default() -> Self {
        Self {
            rows: Mutex::new(Staged { last_seq: 0, rows: BTreeMap::new() }),
            settled: tokio::sync::watch::Sender::new(0),
        }
    }
}

fn poisoned() -> StoreError {
    StoreError::Backend("staged map poisoned".into())
}

impl<K: Ord, V: AsRef<[u8]>> Staging<K, V> {
    /// The map, to stage a batch and hand out its sequence.
    pub fn lock(&self) -> Result<MutexGuard<'_, Staged<K, V>>, StoreError> {
        self.rows.lock().map_err(|_| poisoned())
    }

    /// The map even if a thread panicked holding it (to empty it).
    pub fn lock_anyway(&self) -> MutexGuard<'_, Staged<K, V>> {
        self.rows.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The staged value of `key`: `Some(None)` when a staged delete is its newest write.
    pub fn value(&self, key: &K) -> Result<Option<Option<Vec<u8>>>, StoreError> {
        let map = self.lock()?;
        Ok(map.rows.get(key).map(|(_, value)| value.as_ref().map(|v| v.as_ref().to_vec())))
    }

    /// Waits until the committer is done with every staged row from `start` on for which `within`
    /// holds (the rows of one partition: `start` is its first key).
    pub async fn wait_for_rows_in(&self, start: K, within: impl Fn(&K) -> bool) -> Result<(), StoreError> {
        let newest = {
            let map = self.lock()?;
            map.rows.range(start..).take_while(|(key, _)| within(key)).map(|(_, (seq, _))| *seq).max()
        };
        if let Some(seq) = newest {
            let mut settled = self.settled.subscribe();
            settled.wait_for(|done| *done >= seq).await.map_err(|e| StoreError::Backend(e.to_string()))?;
        }
        Ok(())
    }

    /// Drops the staged rows among `keys` that no batch after `through` staged again (they are
    /// written now).
    pub fn unstage(&self, keys: impl IntoIterator<Item = K>, through: u64) {
        let mut map = self.lock_anyway();
        for key in keys {
            if map.rows.get(&key).is_some_and(|(seq, _)| *seq <= through) {
                map.rows.remove(&key);
            }
        }
    }

    /// Whether no row is staged.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.lock_anyway().rows.is_empty()
    }

    /// Marks the batches up to `seq` as done with: scans waiting for them go on.
    pub fn settle(&self, seq: u64) {
        self.settled.send_if_modified(|settled| {
            let moved = seq > *settled;
            *settled = (*settled).max(seq);
            moved
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(staging: &Staging<String>, key: &str, value: &[u8]) -> u64 {
        let mut map = staging.lock().unwrap();
        let seq = map.last_seq + 1;
        map.insert(key.to_owned(), seq, Some(Bytes::copy_from_slice(value)));
        map.last_seq = seq;
        seq
    }

    /// A written batch leaves the map only for the rows no later batch staged again.
    #[test]
    fn unstaging_keeps_rows_a_later_batch_staged_again() {
        let staging = Staging::<String>::default();
        let first = stage(&staging, "a", b"1");
        stage(&staging, "b", b"1");
        stage(&staging, "a", b"2");
        staging.unstage(["a".to_owned(), "b".to_owned()], first + 1);
        assert_eq!(staging.value(&"a".to_owned()).unwrap(), Some(Some(b"2".to_vec())), "restaged later: kept");
        assert_eq!(staging.value(&"b".to_owned()).unwrap(), None, "written: gone");
    }

    /// A scan's wait covers the partition's rows only, and ends once the committer settles them.
    #[tokio::test]
    async fn a_partition_wait_ends_when_its_rows_are_settled() {
        let staging = std::sync::Arc::new(Staging::<String>::default());
        stage(&staging, "p1.a", b"1");
        let other = stage(&staging, "p2.a", b"1");
        let in_p1 = |key: &String| key.starts_with("p1.");
        let waiting = {
            let staging = staging.clone();
            tokio::spawn(async move { staging.wait_for_rows_in("p1.".to_owned(), in_p1).await })
        };
        staging.wait_for_rows_in("p3.".to_owned(), |key: &String| key.starts_with("p3.")).await.unwrap();
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "p1's row is not settled yet");
        staging.settle(other - 1);
        let waited = tokio::time::timeout(std::time::Duration::from_secs(5), waiting).await;
        waited.expect("the wait ends once p1's row is settled, whatever p2 holds").unwrap().unwrap();
        staging.settle(0);
        assert_eq!(*staging.settled.borrow(), other - 1, "settled never moves back");
    }
}
