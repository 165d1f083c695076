//! The customers a tenant actor keeps in memory ([`CustomerCache`]) and the node's bound on all
//! tenant actors' cached customers together ([`NodeCustomers`]) (issue 57). A customer not cached
//! is read from the store when next needed; nothing is lost with an eviction.
//!
//! A customer is cached as its stored row (one allocation of the row's bytes), decoded when used:
//! a decoded [`crate::domain::customer::Customer`] is dozens of small allocations (~1.7 KB of
//! RSS for a row of ~340 bytes), and a cache that replaces one customer per order scattered them
//! among every other allocation of the runtime's threads, so the pages they sat on were not
//! returned while the cache churned (docs/benchmarks/, issue 57).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lru::LruCache;

/// Most customers one tenant actor keeps in memory; the least recently used is dropped first (and
/// read from the store again when it is next needed).
pub const CUSTOMER_CACHE_CAPACITY: usize = 10_000;

/// Most customers all tenant actors of a node keep together by default
/// (`ENGAGE_CACHED_CUSTOMERS_MAX`): a cached customer holds its row's bytes (~0.4–2 KB with
/// the orders it keeps) and its phone number, so ~50–100 MB at the bound.
pub const NODE_CACHED_CUSTOMERS_MAX: usize = 50_000;

/// The customers cached by every tenant actor of this node, counted together, and the most the
/// node keeps. A brand that caches a customer while the node is at its bound drops its own least
/// recently used one first (an actor only touches its own cache), so the busy brands share the
/// bound and the cache stops growing with the number of customers a load makes. A brand with
/// nothing cached may still cache one, so the count can pass the bound by at most the number of
/// live actors.
#[derive(Debug)]
pub struct NodeCustomers {
    max: usize,
    cached: AtomicUsize,
}

impl NodeCustomers {
    /// A node that keeps at most `max` customers cached (at least 1).
    pub fn new(max: usize) -> Self {
        Self { max: max.max(1), cached: AtomicUsize::new(0) }
    }

    /// The customers cached now, every actor's together.
    pub fn cached(&self) -> usize {
        self.cached.load(Ordering::Relaxed)
    }

    fn full(&self) -> bool {
        self.cached() >= self.max
    }

    fn added(&self, count: usize, bytes: usize) {
        self.cached.fetch_add(count, Ordering::Relaxed);
        metrics::gauge!("engage_cached_customers").increment(count as f64);
        metrics::gauge!("engage_cached_customer_bytes").increment(bytes as f64);
    }

    fn removed(&self, count: usize, bytes: usize) {
        self.cached.fetch_sub(count, Ordering::Relaxed);
        metrics::gauge!("engage_cached_customers").decrement(count as f64);
        metrics::gauge!("engage_cached_customer_bytes").decrement(bytes as f64);
    }
}

impl Default for NodeCustomers {
    fn default() -> Self {
        Self::new(NODE_CACHED_CUSTOMERS_MAX)
    }
}

/// One cached customer: the stored row's bytes, and whether orders were folded out of it
/// ([`crate::domain::customer::Customer::has_folded`], asked before the row is decoded).
struct Cached {
    row: Box<[u8]>,
    folded: bool,
}

/// One brand's recently used customers, at most [`CUSTOMER_CACHE_CAPACITY`] and within the
/// node's bound, each as its stored row (whose size `engage_cached_customer_bytes` counts).
/// Starts empty and grows with use: no table is sized for the bound up front.
pub struct CustomerCache {
    entries: LruCache<Box<str>, Cached>,
    bytes: usize,
    node: Arc<NodeCustomers>,
}

impl CustomerCache {
    /// An empty cache counted in `node`.
    pub fn new(node: Arc<NodeCustomers>) -> Self {
        Self { entries: LruCache::unbounded(), bytes: 0, node }
    }

    /// The cached customer's row, made the most recently used.
    pub fn get(&mut self, phone: &str) -> Option<&[u8]> {
        self.entries.get(phone).map(|cached| &*cached.row)
    }

    /// Whether orders were folded out of the cached customer's row; `None` when not cached
    /// (without making it the most recently used).
    pub fn folded(&self, phone: &str) -> Option<bool> {
        self.entries.peek(phone).map(|cached| cached.folded)
    }

    /// Whether the customer is cached (without making it the most recently used).
    pub fn contains(&self, phone: &str) -> bool {
        self.entries.contains(phone)
    }

    /// How many customers this brand has cached.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Drops a cached customer (the next read reloads the stored row).
    pub fn remove(&mut self, phone: &str) {
        if let Some(cached) = self.entries.pop(phone) {
            self.left(&cached);
        }
    }

    /// Counts `cached`, just taken out of the cache, out of this brand's and the node's figures.
    fn left(&mut self, cached: &Cached) {
        self.bytes -= cached.row.len();
        self.node.removed(1, cached.row.len());
    }

    /// Drops every cached customer.
    pub fn clear(&mut self) {
        self.node.removed(self.entries.len(), self.bytes);
        self.entries.clear();
        self.bytes = 0;
    }

    /// Caches the customer of `phone` as its stored `row`; a new one first drops the least
    /// recently used when this brand is at [`CUSTOMER_CACHE_CAPACITY`] or the node at its bound.
    pub fn put(&mut self, phone: &str, row: Box<[u8]>, folded: bool) {
        let bytes = row.len();
        if !self.entries.contains(phone) && (self.entries.len() >= CUSTOMER_CACHE_CAPACITY || self.node.full()) {
            if let Some((_, evicted)) = self.entries.pop_lru() {
                self.left(&evicted);
            }
        }
        match self.entries.put(phone.into(), Cached { row, folded }) {
            Some(replaced) => {
                let replaced = replaced.row.len();
                self.bytes = self.bytes - replaced + bytes;
                metrics::gauge!("engage_cached_customer_bytes").increment(bytes as f64 - replaced as f64);
            }
            None => {
                self.bytes += bytes;
                self.node.added(1, bytes);
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn allocated_for(&self) -> usize {
        self.entries.cap().get()
    }
}

impl Drop for CustomerCache {
    /// A stopped (or crashed) actor's cached customers leave the node's count and
    /// `engage_cached_customers` (and their bytes `engage_cached_customer_bytes`) with it.
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phone(n: usize) -> String {
        format!("9{n:09}")
    }

    fn row(len: usize) -> Box<[u8]> {
        vec![b'x'; len].into_boxed_slice()
    }

    /// The node's bound holds across brands: a brand caching at the bound drops its own least
    /// recently used customer, never another brand's, and a stopped brand's customers leave the
    /// count.
    #[test]
    fn brands_share_the_nodes_bound_each_dropping_its_own() {
        let node = Arc::new(NodeCustomers::new(10));
        let (mut quiet, mut busy) = (CustomerCache::new(node.clone()), CustomerCache::new(node.clone()));
        for n in 0..4 {
            quiet.put(&phone(n), row(100), false);
        }
        for n in 100..200 {
            busy.put(&phone(n), row(100), false);
        }
        assert_eq!(node.cached(), 10, "the node keeps its bound");
        assert_eq!((quiet.len(), busy.len()), (4, 6), "the busy brand dropped only its own");
        assert!(busy.contains(&phone(199)) && !busy.contains(&phone(193)));
        // updating a cached customer at the bound drops nobody
        busy.put(&phone(199), row(150), false);
        assert_eq!((node.cached(), busy.len()), (10, 6));
        // an empty brand may still cache one
        let mut newcomer = CustomerCache::new(node.clone());
        newcomer.put(&phone(500), row(100), false);
        assert_eq!((node.cached(), newcomer.len()), (11, 1));
        drop(busy);
        assert_eq!(node.cached(), 5, "a stopped brand's customers leave the count");
        quiet.put(&phone(600), row(100), false);
        assert_eq!(quiet.len(), 5, "room again: nothing dropped");
    }
}
