//! Rows a query reads, read before the query reaches its tenant actor ([`ReadAhead`]), so the
//! store's round trip overlaps the actor's other work instead of holding up its mailbox, and
//! [`WriteStamps`], which tells the actor whether a row read that way may have changed since.
//!
//! The actor is the only writer of the rows read this way besides uploads (the blocklist), and an
//! upload answered before a query arrived is seen by its read ahead as by a read in the actor
//! (one still in flight races with either read alike). Every write the actor makes goes through
//! [`crate::tenant_core::Tenant`], which stamps each written row's slot *after* the write is staged (so a
//! read that starts after the stamp sees the staged row). A read ahead notes its rows' stamps
//! before it reads; the actor uses a row only if its stamp is unchanged when the query is handled,
//! and reads the store itself otherwise. Stamps are kept by slot (a hash of the key), a fixed
//! table: two rows sharing a slot only cost a read in the actor, never a stale answer.

use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};

use engage_storage::{StoreError, WriteOp};

use crate::keys::Key;
use crate::repo::Repo;

/// Slots in the stamp table (a power of two): 16,384, 128 KiB per node.
const SLOTS: usize = 1 << 14;

/// A counter per slot of keys, moved on every write the tenant actors make to a key of the slot.
pub struct WriteStamps {
    slots: Box<[AtomicU64]>,
    hasher: RandomState,
}

impl Default for WriteStamps {
    fn default() -> Self {
        Self { slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(), hasher: RandomState::new() }
    }
}

impl WriteStamps {
    fn slot(&self, table: &str, partition: &str, clustering: &[u8]) -> usize {
        self.hasher.hash_one((table, partition, clustering)) as usize & (SLOTS - 1)
    }

    /// The slots of the rows `ops` write (taken before the ops are handed to the store).
    pub fn slots_of(&self, ops: &[WriteOp]) -> Vec<usize> {
        ops.iter()
            .map(|op| {
                let (table, partition, clustering) = op.row();
                self.slot(table, partition, clustering)
            })
            .collect()
    }

    /// Marks the slots as written: call once the writes are staged (or failed).
    pub fn written(&self, slots: &[usize]) {
        for &slot in slots {
            self.slots[slot].fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The stamp of `key`'s slot now.
    pub fn stamp(&self, key: &Key) -> u64 {
        self.slots[self.slot(key.table, &key.partition, &key.clustering)].load(Ordering::SeqCst)
    }
}

/// Rows read for a query before its actor handles it: each with its stamp at the read.
pub struct ReadAhead {
    /// The store generation the rows were read in ([`engage_storage::Store::generation`]).
    pub(crate) generation: u64,
    /// Each key, its stamp before the read, and the row (`None`: no such row).
    pub(crate) rows: Vec<(Key, u64, Option<Vec<u8>>)>,
}

impl ReadAhead {
    /// Reads `keys` together (one round trip on a networked store), each stamp taken first.
    pub async fn read(repo: &Repo, stamps: &WriteStamps, keys: Vec<Key>) -> Result<Self, StoreError> {
        let generation = repo.store().generation();
        let noted: Vec<u64> = keys.iter().map(|key| stamps.stamp(key)).collect();
        let rows = repo.rows_at(&keys).await?;
        let rows = keys.into_iter().zip(noted).zip(rows).map(|((key, stamp), row)| (key, stamp, row)).collect();
        Ok(Self { generation, rows })
    }
}

impl ReadAhead {
    /// The rows each of `wanted` names (rows read for a whole batch, handed to each event's
    /// actor): `None` for an empty list.
    pub fn split(self, wanted: &[Vec<Key>]) -> Vec<Option<ReadAhead>> {
        let generation = self.generation;
        let read: std::collections::HashMap<Key, (u64, Option<Vec<u8>>)> =
            self.rows.into_iter().map(|(key, stamp, row)| (key, (stamp, row))).collect();
        wanted
            .iter()
            .map(|keys| {
                let rows: Vec<_> = keys
                    .iter()
                    .filter_map(|key| read.get(key).map(|(stamp, row)| (key.clone(), *stamp, row.clone())))
                    .collect();
                (!rows.is_empty()).then_some(ReadAhead { generation, rows })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(key: &Key) -> WriteOp {
        key.clone().put(&serde_json::json!({}))
    }

    #[test]
    fn a_write_moves_the_stamp_of_its_key_only_once_marked() {
        let stamps = WriteStamps::default();
        let (a, b) = (crate::keys::blocklist("t", "1"), crate::keys::blocklist("t", "2"));
        let (before_a, before_b) = (stamps.stamp(&a), stamps.stamp(&b));
        let slots = stamps.slots_of(&[put(&a)]);
        assert_eq!(stamps.stamp(&a), before_a, "taking the slots marks nothing");
        stamps.written(&slots);
        assert_ne!(stamps.stamp(&a), before_a);
        if stamps.slots_of(&[put(&b)]) != slots {
            assert_eq!(stamps.stamp(&b), before_b, "another slot's stamp moved");
        }
    }
}
