//! Verified token grants kept in memory while the store says when a token changes.
//!
//! On NATS every token check was a round trip to the bucket (a direct get per authenticated
//! request: a redemption's first of three). A grant read from the store is kept here only while a
//! watch of the `auth_tokens` table ([`Store::watch_table`]) runs; any change to that table (a
//! token revoked or created, an app session erased), made by this process or any other (the CLI,
//! another ingress), empties the cache, so a revoked token is refused as soon as its change reaches
//! the watch (milliseconds), not after some lifetime. While the watch is down, or its connection
//! is, nothing is kept or answered from memory and every check reads the store, as before (a
//! process cut off from NATS fails its checks closed). A backend without a watch (the embedded
//! store, whose reads are local; ScyllaDB) is never cached. Entries live at most [`MAX_AGE`] as a
//! safety net, and the cache holds at most [`MOST`] grants.
//!
//! A read that started before a change and ends after the watch reported it could put back the
//! grant the change removed: every change moves an epoch, and a grant is kept only when the epoch
//! did not move while it was read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;

use engage_storage::{Store, TableChanges};

/// Longest a grant is kept, even with the watch running.
pub const MAX_AGE: Duration = Duration::from_secs(60);
/// Most grants kept; past it the cache starts again empty.
pub const MOST: usize = 100_000;

/// Grants (`G`) by key (the token's kind and hash), kept while the watch runs.
pub struct GrantCache<G> {
    /// While a watch runs: whether its connection is up now (`None`: no watch runs).
    connected: Mutex<Option<Box<dyn Fn() -> bool + Send + Sync>>>,
    /// Moved by every change the watch reports, and when the watch starts or stops.
    epoch: AtomicU64,
    grants: Mutex<HashMap<String, (G, Instant)>>,
}

impl<G> Default for GrantCache<G> {
    fn default() -> Self {
        Self { connected: Mutex::new(None), epoch: AtomicU64::new(0), grants: Mutex::new(HashMap::new()) }
    }
}

impl<G: Clone + Send + 'static> GrantCache<G> {
    /// A cache over `store`'s `table`, with its watch running on the current Tokio runtime until
    /// the process ends; without a runtime (or for a backend without a watch) nothing is cached.
    pub fn watching(store: Arc<dyn Store>, table: &'static str) -> Arc<Self> {
        let cache = Arc::new(Self::default());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(Arc::clone(&cache).watch(store, table));
        }
        cache
    }

    /// Follows the table's changes; returns when the backend has no watch.
    async fn watch(self: Arc<Self>, store: Arc<dyn Store>, table: &'static str) {
        // a watch that cannot be made is said once, not every second of an outage
        let mut said_failing = false;
        loop {
            match store.watch_table(table).await {
                Ok(None) => return,
                Ok(Some(TableChanges { mut changes, connected })) => {
                    said_failing = false;
                    self.forget_all();
                    self.set_connected(Some(connected));
                    while changes.next().await.is_some() {
                        self.forget_all();
                    }
                    self.set_connected(None);
                    self.forget_all();
                    tracing::warn!(table, "the token watch ended; tokens are read from the store until it is back");
                }
                Err(error) if !said_failing => {
                    said_failing = true;
                    tracing::warn!(table, %error, "cannot watch the tokens; they are read from the store until it can");
                }
                Err(_) => {}
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// Drops every kept grant (and moves the epoch): what the watch does on each change, and
    /// what a change made through this process does at once, before its watch reports it.
    pub fn forget_all(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut grants) = self.grants.lock() {
            grants.clear();
        }
    }

    /// The epoch to hand to [`GrantCache::keep`] after reading the store.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    fn set_connected(&self, connected: Option<Box<dyn Fn() -> bool + Send + Sync>>) {
        if let Ok(mut slot) = self.connected.lock() {
            *slot = connected;
        }
    }

    /// Whether kept grants may be answered now: a watch runs and its connection is up.
    fn trusted(&self) -> bool {
        self.connected.lock().ok().is_some_and(|connected| connected.as_ref().is_some_and(|up| up()))
    }

    /// The grant kept under `key`, if any.
    pub fn get(&self, key: &str) -> Option<G> {
        if !self.trusted() {
            return None;
        }
        let grants = self.grants.lock().ok()?;
        let (grant, at) = grants.get(key)?;
        (at.elapsed() < MAX_AGE).then(|| grant.clone())
    }

    /// Keeps `grant`, read from the store since [`GrantCache::epoch`] answered `epoch`, unless the
    /// table changed since or the watch is down.
    pub fn keep(&self, key: String, grant: &G, epoch: u64) {
        if !self.trusted() {
            return;
        }
        let Ok(mut grants) = self.grants.lock() else { return };
        // checked under the lock that every change takes: a change now waits for this insert
        // and then removes it
        if self.epoch.load(Ordering::SeqCst) != epoch {
            return;
        }
        if grants.len() >= MOST {
            grants.clear();
        }
        grants.insert(key, (grant.clone(), Instant::now()));
    }
}
