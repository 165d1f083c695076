//! The customers a tenant actor keeps in memory ([`CustomerCache`]) and the node's bound on all
//! tenant actors' cached customers together ([`NodeCustomers`]) (issue 57). A customer not cached
//! is read from the store when next needed; nothing is lost with an eviction.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lru::LruCache;

use crate::domain::customer::Customer;

/// Most customers one tenant actor keeps in memory; the least recently used is dropped first (and
/// read from the store again when it is next needed).
pub const CUSTOMER_CACHE_CAPACITY: usize = 10_000;

/// Most customers all tenant actors of a node keep together by default
/// (`ENGAGE_CACHED_CUSTOMERS_MAX`): at ~1.7 KB of RSS each, ~85 MB.
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

/// One brand's recently used customers, at most [`CUSTOMER_CACHE_CAPACITY`] and within the
/// node's bound, each with the size of its stored row (what `engage_cached_customer_bytes`
/// counts for it). Starts empty and grows with use: no table is sized for the bound up front.
pub struct CustomerCache {
    entries: LruCache<String, (Customer, usize)>,
    bytes: usize,
    node: Arc<NodeCustomers>,
}

impl CustomerCache {
    /// An empty cache counted in `node`.
    pub fn new(node: Arc<NodeCustomers>) -> Self {
        Self { entries: LruCache::unbounded(), bytes: 0, node }
    }

    /// The cached customer, made the most recently used.
    pub fn get(&mut self, phone: &str) -> Option<&Customer> {
        self.entries.get(phone).map(|(customer, _)| customer)
    }

    /// The cached customer, if any (without making it the most recently used).
    pub fn peek(&self, phone: &str) -> Option<&Customer> {
        self.entries.peek(phone).map(|(customer, _)| customer)
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
        if let Some((_, bytes)) = self.entries.pop(phone) {
            self.bytes -= bytes;
            self.node.removed(1, bytes);
        }
    }

    /// Drops every cached customer.
    pub fn clear(&mut self) {
        self.node.removed(self.entries.len(), self.bytes);
        self.entries.clear();
        self.bytes = 0;
    }

    /// Caches `customer`, whose row is `bytes` long; a new one first drops the least recently
    /// used when this brand is at [`CUSTOMER_CACHE_CAPACITY`] or the node at its bound.
    pub fn put(&mut self, customer: Customer, bytes: usize) {
        let phone = customer.phone.clone();
        if !self.entries.contains(&phone) && (self.entries.len() >= CUSTOMER_CACHE_CAPACITY || self.node.full()) {
            if let Some((_, (_, evicted))) = self.entries.pop_lru() {
                self.bytes -= evicted;
                self.node.removed(1, evicted);
            }
        }
        match self.entries.put(phone, (customer, bytes)) {
            Some((_, replaced)) => {
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
    use chrono::Utc;

    fn customer(n: usize) -> Customer {
        Customer::new(&format!("9{n:09}"), Utc::now())
    }

    /// The node's bound holds across brands: a brand caching at the bound drops its own least
    /// recently used customer, never another brand's, and a stopped brand's customers leave the
    /// count.
    #[test]
    fn brands_share_the_nodes_bound_each_dropping_its_own() {
        let node = Arc::new(NodeCustomers::new(10));
        let (mut quiet, mut busy) = (CustomerCache::new(node.clone()), CustomerCache::new(node.clone()));
        for n in 0..4 {
            quiet.put(customer(n), 100);
        }
        for n in 100..200 {
            busy.put(customer(n), 100);
        }
        assert_eq!(node.cached(), 10, "the node keeps its bound");
        assert_eq!((quiet.len(), busy.len()), (4, 6), "the busy brand dropped only its own");
        assert!(busy.contains(&customer(199).phone) && !busy.contains(&customer(193).phone));
        // updating a cached customer at the bound drops nobody
        busy.put(customer(199), 150);
        assert_eq!((node.cached(), busy.len()), (10, 6));
        // an empty brand may still cache one
        let mut newcomer = CustomerCache::new(node.clone());
        newcomer.put(customer(500), 100);
        assert_eq!((node.cached(), newcomer.len()), (11, 1));
        drop(busy);
        assert_eq!(node.cached(), 5, "a stopped brand's customers leave the count");
        quiet.put(customer(600), 100);
        assert_eq!(quiet.len(), 5, "room again: nothing dropped");
    }
}
