//! [`Tenant`]: the state one tenant actor keeps for its brand, as the capabilities see it (the
//! cached customers and configurations, the store), and [`EngineContext`], what every tenant actor
//! shares. Both sit below the capabilities: `tenant.rs` → capabilities → this module.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use engage_storage::{Durable, StoreError, WriteOp};

use crate::customer_cache::{CustomerCache, NodeCustomers};
use crate::domain::customer::Customer;
use crate::domain::fraud::VelocityRules;
use crate::domain::loyalty::LoyaltyRules;
use crate::domain::wallet::Pricing;
use crate::keys;
use crate::query::QueryError;
use crate::read_ahead::{ReadAhead, WriteStamps};
use crate::repo::Repo;

/// What every tenant actor shares.
pub struct EngineContext {
    /// Typed store access.
    pub repo: Repo,
    /// Testing only: panic once on this order id (`ENGAGE_FAULT_PANIC_ORDER_ID`).
    pub fault_panic_order_id: Option<String>,
    /// Whether the fault fired already (once per process).
    pub fault_fired: AtomicBool,
    /// Testing only: panic on every delivery of this order id (`ENGAGE_FAULT_POISON_ORDER_ID`).
    pub fault_poison_order_id: Option<String>,
    /// Links and the link service, for digital bills.
    pub services: Services,
    /// Stamps of the rows the tenant actors write, for rows read ahead of them
    /// ([`crate::read_ahead`]).
    pub stamps: WriteStamps,
    /// Every tenant actor's cached customers counted together, and the node's bound on them.
    pub customers: Arc<NodeCustomers>,
}

/// What the capabilities that make links need.
#[derive(Clone, Debug)]
pub struct Services {
    /// Signs links (feedback forms, bill pages) under the public URL.
    pub links: crate::signed_links::Links,
    /// The link service (`ENGAGE_LINK_SERVICE_URL`); unset: engage serves bills at `/b/<id>`.
    pub link_service_url: Option<String>,
    /// The feedback form service (`ENGAGE_FEEDBACK_SERVICE_URL`): links are `<it>?token=<JWT>`;
    /// unset: engage serves the form at `/f/<JWT>`.
    pub feedback_service_url: Option<String>,
    /// The mail service (`ENGAGE_MAIL_SERVICE_URL`): low-rating alert e-mails go there.
    pub mail_service_url: Option<String>,
    /// HTTP client for it (5 s time-out).
    pub http: reqwest::Client,
}

impl Services {
    /// With `links`, and the link service at `link_service_url` when given.
    pub fn new(links: crate::signed_links::Links, link_service_url: Option<String>) -> Self {
        let http = reqwest::Client::builder().timeout(std::time::Duration::from_secs(5)).build().unwrap_or_default();
        Self { links, link_service_url, feedback_service_url: None, mail_service_url: None, http }
    }

    /// With the feedback form service at `url` (when given).
    pub fn with_feedback_service(mut self, url: Option<String>) -> Self {
        self.feedback_service_url = url;
        self
    }

    /// With the mail service at `url` (when given).
    pub fn with_mail_service(mut self, url: Option<String>) -> Self {
        self.mail_service_url = url;
        self
    }
}

impl Default for Services {
    /// Links signed with a secret made for this process, under `http://127.0.0.1:8080`.
    fn default() -> Self {
        let secret = format!("{}", uuid::Uuid::new_v4().simple());
        Self::new(crate::signed_links::Links::new(secret.as_bytes(), "http://127.0.0.1:8080"), None)
    }
}

/// Typed cache slots: at most one value per type, owned by the capability that defines the type
/// (so the brand names none of them).
#[derive(Default)]
pub struct Slots(HashMap<std::any::TypeId, Box<dyn std::any::Any + Send + Sync>>);

impl Slots {
    /// The cached `T`, if any.
    pub fn get<T: std::any::Any + Send + Sync>(&self) -> Option<&T> {
        self.0.get(&std::any::TypeId::of::<T>()).and_then(|value| value.downcast_ref())
    }

    /// The cached `T`, made empty (`T::default()`) first when there is none. (`None` cannot
    /// happen: the slot of `T` only ever holds a `T`; the type system cannot see that.)
    pub fn get_or_default<T: std::any::Any + Send + Sync + Default>(&mut self) -> Option<&mut T> {
        self.0.entry(std::any::TypeId::of::<T>()).or_insert_with(|| Box::new(T::default())).downcast_mut()
    }

    /// Caches `value`, replacing the `T` cached before.
    pub fn set<T: std::any::Any + Send + Sync>(&mut self, value: T) {
        self.0.insert(std::any::TypeId::of::<T>(), Box::new(value));
    }

    /// Forgets the cached `T`.
    pub fn forget<T: std::any::Any + Send + Sync>(&mut self) {
        self.0.remove(&std::any::TypeId::of::<T>());
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// One brand's state inside its tenant actor. Only the actor touches it, one message at a time.
pub struct Tenant {
    /// The tenant's id: the brand's `parent_business_id`.
    pub id: String,
    /// Shared context.
    pub ctx: Arc<EngineContext>,
    /// Recently used customers, within the brand's and the node's bounds.
    customers: CustomerCache,
    /// The brand's loyalty rules, once loaded.
    pub rules: Option<LoyaltyRules>,
    /// The brand's velocity limits, once loaded.
    pub velocity: Option<VelocityRules>,
    /// The brand's price table, once loaded.
    pub pricing: Option<Pricing>,
    /// What the capabilities cache for the brand, one slot per type they own (journey
    /// configurations and settings, bill configurations and widgets, feedback configurations,
    /// rollup rows): each capability keeps its slot current; all are emptied when a batch fails.
    pub cache: Slots,
    /// Customer commits staged by the message being handled: its answer waits for them (see
    /// [`Tenant::commit_customer`]).
    staged: Vec<Durable>,
    /// The wallets the message being handled debited or credited, as its batch writes them: every
    /// later read in the same message sees them (two paid reactions of one order take distinct
    /// transaction numbers and both debits count). Cleared before each message.
    wallets: std::sync::Mutex<HashMap<String, crate::domain::wallet::Wallet>>,
    /// Rows read ahead for the order being applied ([`Tenant::read_ahead`]) or for the query being
    /// answered ([`Tenant::accept_read_ahead`]), by key; `None`: no such row. Empty between
    /// messages.
    read_ahead: HashMap<keys::Key, Option<Vec<u8>>>,
    /// The store generation everything cached was read in ([`engage_storage::Store::generation`]);
    /// every write is made for it, so none built on staged rows the store dropped can land.
    generation: u64,
}

/// What rows were read ahead for ([`Tenant::accept_read_ahead`]): each counts in its own metric.
#[derive(Clone, Copy, Debug)]
pub enum ReadFor {
    /// A question asked of the actor (`engage_read_ahead_rows_total`).
    Query,
    /// A bus event, read with its batch (`engage_event_rows_read_ahead_total`).
    Event,
}

impl Tenant {
    /// A brand with nothing cached.
    pub fn new(id: String, ctx: Arc<EngineContext>) -> Self {
        let generation = ctx.repo.store().generation();
        Self {
            id,
            customers: CustomerCache::new(ctx.customers.clone()),
            ctx,
            rules: None,
            velocity: None,
            pricing: None,
            cache: Slots::default(),
            staged: Vec::new(),
            wallets: std::sync::Mutex::new(HashMap::new()),
            read_ahead: HashMap::new(),
            generation,
        }
    }

    /// Before each message: no wallet view of an earlier message's batch is kept.
    pub fn begin_message(&mut self) {
        if let Ok(wallets) = self.wallets.get_mut() {
            wallets.clear();
        }
    }

    /// The wallet of `business` as the message's batch writes it, when the message changed it.
    pub fn wallet_in_batch(&self, business: &str) -> Option<crate::domain::wallet::Wallet> {
        self.wallets.lock().ok()?.get(business).cloned()
    }

    /// Keeps `wallet` as the batch writes it, for the message's later reads.
    pub fn keep_wallet(&self, business: &str, wallet: &crate::domain::wallet::Wallet) {
        if let Ok(mut wallets) = self.wallets.lock() {
            wallets.insert(business.to_owned(), wallet.clone());
        }
    }

    /// Before each message: when the store dropped staged writes since the caches were filled
    /// ([`engage_storage::Store::generation`] moved), drops everything cached, since it may hold
    /// what was dropped, and goes on in the new generation.
    pub fn follow_store_generation(&mut self) {
        let now = self.ctx.repo.store().generation();
        if now != self.generation {
            tracing::warn!(tenant = %self.id, from = self.generation, to = now, "the store dropped staged writes: cached state forgotten");
            self.forget_all();
            self.generation = now;
        }
    }

    /// Drops everything cached: the next message reads the store again.
    pub fn forget_all(&mut self) {
        self.customers.clear();
        self.rules = None;
        self.velocity = None;
        self.pricing = None;
        self.cache.clear();
    }

    /// Stages `ops` ([`engage_storage::Store::stage`]): later reads see them, and the message's
    /// answer waits until they are durable.
    pub async fn stage(&mut self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        let slots = self.before_writing(&ops);
        let staged = self.ctx.repo.store().stage_at(self.generation, ops).await;
        self.ctx.stamps.written(&slots);
        self.staged.push(staged?);
        Ok(())
    }

    /// The commits staged by the message just handled; its answer goes out once they are durable.
    pub fn take_staged(&mut self) -> Vec<Durable> {
        std::mem::take(&mut self.staged)
    }

    /// Waits until the commits staged so far are durable: before anything leaves engage on the
    /// strength of them (an e-mail, a call to another service).
    pub async fn settle(&mut self) -> Result<(), StoreError> {
        for durable in self.take_staged() {
            durable.wait().await?;
        }
        Ok(())
    }

    /// Typed store access.
    pub fn repo(&self) -> &Repo {
        &self.ctx.repo
    }

    /// Writes `ops` as one atomic batch (refused if the store dropped staged writes since the
    /// message began: see [`Tenant::follow_store_generation`]).
    pub async fn batch(&mut self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        let slots = self.before_writing(&ops);
        let written = self.ctx.repo.store().batch_at(self.generation, ops).await;
        self.ctx.stamps.written(&slots);
        written
    }

    /// Before `ops` are handed to the store: rows read ahead that they write are read ahead no
    /// more; returns their stamp slots, to mark once the store has them ([`crate::read_ahead`]).
    fn before_writing(&mut self, ops: &[WriteOp]) -> Vec<usize> {
        if !self.read_ahead.is_empty() {
            self.read_ahead.retain(|key, _| {
                !ops.iter().any(|op| op.row() == (key.table, key.partition.as_str(), key.clustering.as_slice()))
            });
        }
        self.ctx.stamps.slots_of(ops)
    }

    /// A customer, from the cache, the rows read ahead, or the store.
    pub async fn customer(&mut self, phone: &str) -> Result<Option<Customer>, StoreError> {
        if let Some(row) = self.customers.get(phone) {
            // the key is made only to name an unreadable row: a cache hit allocates nothing more
            match crate::repo::decode(crate::tables::CUSTOMERS, || keys::customer(&self.id, phone).describe(), row) {
                Ok(customer) => return Ok(Some(customer)),
                // not expected (the cache holds rows this actor encoded): the stored row decides
                Err(error) => {
                    tracing::warn!(tenant = %self.id, %error, "cached customer unreadable: read from the store");
                    self.customers.remove(phone);
                }
            }
        }
        self.get(&keys::customer(&self.id, phone)).await
    }

    /// Whether the customer is cached (without making it the most recently used).
    pub fn has_cached_customer(&self, phone: &str) -> bool {
        self.customers.contains(phone)
    }

    /// Whether orders were folded out of the cached customer's row; `None` when not cached
    /// (without making it the most recently used).
    pub fn cached_customer_folded(&self, phone: &str) -> Option<bool> {
        self.customers.folded(phone)
    }

    /// Reads `keys` together (concurrently: one round trip on a networked store) and keeps them
    /// for [`Tenant::row`] and [`Tenant::get`] until [`Tenant::end_read_ahead`]. The order path
    /// calls it before the reactions run; the actor is the only writer of the rows it reads
    /// ahead besides uploads (the blocklist), which race with a read made later just the same.
    pub async fn read_ahead(&mut self, keys: Vec<keys::Key>) -> Result<(), StoreError> {
        let mut wanted: Vec<keys::Key> = Vec::with_capacity(keys.len());
        for key in keys {
            if !self.read_ahead.contains_key(&key) && !wanted.contains(&key) {
                wanted.push(key);
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let rows = self.ctx.repo.rows_at(&wanted).await?;
        self.read_ahead.extend(wanted.into_iter().zip(rows));
        Ok(())
    }

    /// Takes the rows read for the query about to be handled ([`crate::read_ahead`]): each one
    /// that no write has touched since it was read (its stamp unchanged, the store generation
    /// the brand's) serves [`Tenant::row`] until [`Tenant::end_read_ahead`]; the others are read
    /// again from the store when asked for. Returns how many were taken.
    pub fn accept_read_ahead(&mut self, ahead: ReadAhead, counted_in: ReadFor) -> usize {
        let metric = match counted_in {
            ReadFor::Query => "engage_read_ahead_rows_total",
            ReadFor::Event => "engage_event_rows_read_ahead_total",
        };
        if ahead.generation != self.generation {
            metrics::counter!(metric, "outcome" => "read_again").increment(ahead.rows.len() as u64);
            return 0;
        }
        let (offered, before) = (ahead.rows.len(), self.read_ahead.len());
        for (key, stamp, row) in ahead.rows {
            if self.ctx.stamps.stamp(&key) == stamp {
                self.read_ahead.entry(key).or_insert(row);
            }
        }
        let taken = self.read_ahead.len() - before;
        metrics::counter!(metric, "outcome" => "used").increment(taken as u64);
        metrics::counter!(metric, "outcome" => "read_again").increment((offered - taken) as u64);
        taken
    }

    /// Forgets the rows read ahead (after the order or query they were read for).
    pub fn end_read_ahead(&mut self) {
        self.read_ahead.clear();
    }

    /// The row at `key`: read ahead, or from the store.
    pub async fn row(&self, key: &keys::Key) -> Result<Option<Vec<u8>>, StoreError> {
        match self.read_ahead.get(key) {
            Some(row) => Ok(row.clone()),
            None => self.ctx.repo.row(key).await,
        }
    }

    /// The row at `key` as `T` ([`Tenant::row`], decoded as [`Repo::get`] does).
    pub async fn get<T: serde::de::DeserializeOwned>(&self, key: &keys::Key) -> Result<Option<T>, StoreError> {
        let Some(bytes) = self.row(key).await? else { return Ok(None) };
        crate::repo::decode(key.table, || key.describe(), &bytes).map(Some)
    }

    /// A customer that must exist ([`QueryError::NotFound`] otherwise).
    pub async fn known_customer(&mut self, phone: &str) -> Result<Customer, QueryError> {
        self.customer(phone).await?.ok_or(QueryError::NotFound)
    }

    /// A customer, or a new one first seen `now`.
    pub async fn customer_or_new(&mut self, phone: &str, now: DateTime<Utc>) -> Result<Customer, StoreError> {
        Ok(self.customer(phone).await?.unwrap_or_else(|| Customer::new(phone, now)))
    }

    /// Drops a cached customer (the next read reloads the stored row).
    pub fn forget_customer(&mut self, phone: &str) {
        self.customers.remove(phone);
    }

    /// The write of a customer row.
    pub fn put_customer(&self, customer: &Customer) -> WriteOp {
        keys::customer(&self.id, &customer.phone).put(customer)
    }

    /// Writes `ops` and then the customer row (last: on a store without multi-row atomicity it is
    /// the row that commits the others) and caches the customer; on a failure the cached copy is
    /// dropped so the next message reloads the stored one.
    ///
    /// The batch is staged ([`engage_storage::Store::stage`]): every later read sees it, and the
    /// actor goes on to its next message while it syncs; the tenant actor sends this message's
    /// answer only once it is durable (a failed sync fails the answer, and the embedded store
    /// with it). So one brand's messages share a sync instead of each waiting for its own.
    pub async fn commit_customer(&mut self, mut ops: Vec<WriteOp>, customer: Customer) -> Result<(), StoreError> {
        let row = self.put_customer(&customer);
        let cached: Box<[u8]> = match &row {
            WriteOp::Put { value, .. } => value.as_slice().into(),
            WriteOp::Delete { .. } => Box::default(),
        };
        ops.push(row);
        let slots = self.before_writing(&ops);
        let staged = self.ctx.repo.store().stage_at(self.generation, ops).await;
        self.ctx.stamps.written(&slots);
        match staged {
            Ok(durable) => self.staged.push(durable),
            Err(error) => {
                self.customers.remove(&customer.phone);
                self.cache.clear();
                return Err(error);
            }
        }
        self.customers.put(&customer.phone, cached, customer.has_folded());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::customer_cache::CUSTOMER_CACHE_CAPACITY;
    use engage_storage::{EmbeddedStore, Store};

    fn tenant(store: Arc<dyn Store>) -> Tenant {
        let ctx = Arc::new(EngineContext {
            repo: Repo::new(store),
            fault_panic_order_id: None,
            fault_fired: AtomicBool::new(false),
            fault_poison_order_id: None,
            services: Services::default(),
            stamps: WriteStamps::default(),
            customers: Arc::default(),
        });
        Tenant::new("brand-1".to_owned(), ctx)
    }

    /// The customer cache starts empty, grows with use and keeps at most its bound, the least
    /// recently used leaving first.
    #[tokio::test]
    async fn the_customer_cache_grows_with_use_up_to_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let mut tenant = tenant(store);
        assert_eq!(tenant.customers.allocated_for(), usize::MAX, "no table sized for the bound up front");
        let phone = |n: usize| format!("9{n:09}");
        for n in 0..CUSTOMER_CACHE_CAPACITY + 3 {
            tenant.commit_customer(Vec::new(), Customer::new(&phone(n), Utc::now())).await.unwrap();
            if n + 1 == CUSTOMER_CACHE_CAPACITY {
                // the first customer is used again just before the cache fills: it stays
                assert!(tenant.customer(&phone(0)).await.unwrap().is_some());
            }
        }
        assert_eq!(tenant.customers.len(), CUSTOMER_CACHE_CAPACITY);
        assert!(tenant.has_cached_customer(&phone(0)), "used recently: kept");
        assert!(!tenant.has_cached_customer(&phone(1)), "the least recently used left");
        assert!(tenant.has_cached_customer(&phone(CUSTOMER_CACHE_CAPACITY + 2)));
        tenant.settle().await.unwrap();
    }

    /// A cached customer is its stored row, decoded when used: what comes back is what was
    /// committed, and a cached row that does not decode is dropped and the stored one read.
    #[tokio::test]
    async fn a_cached_customer_is_its_row_and_an_unreadable_one_is_read_from_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let mut tenant = tenant(store);
        let mut customer = Customer::new("9000000001", Utc::now());
        customer.name = Some("Asha".to_owned());
        tenant.commit_customer(Vec::new(), customer.clone()).await.unwrap();
        tenant.settle().await.unwrap();
        assert_eq!(tenant.cached_customer_folded("9000000001"), Some(false));
        assert_eq!(tenant.customer("9000000001").await.unwrap(), Some(customer.clone()));
        tenant.customers.put("9000000001", b"{not json".to_vec().into_boxed_slice(), false);
        assert_eq!(tenant.customer("9000000001").await.unwrap(), Some(customer), "read from the store");
        assert!(!tenant.has_cached_customer("9000000001"), "the unreadable row left the cache");
    }

    #[tokio::test]
    async fn rows_read_ahead_serve_reads_until_the_read_ahead_ends() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let mut tenant = tenant(store.clone());
        let listed = keys::blocklist("brand-1", "9000000001");
        let absent = keys::blocklist("brand-1", "9000000002");
        store.batch(vec![listed.clone().put(&serde_json::json!({"phone": "9000000001"}))]).await.unwrap();
        tenant.read_ahead(vec![listed.clone(), absent.clone(), absent.clone()]).await.unwrap();
        assert!(tenant.row(&listed).await.unwrap().is_some());
        // a row written after the read ahead is not seen through it (the actor writes only
        // after its reads), and is seen once the read ahead ends
        store.batch(vec![absent.clone().put(&serde_json::json!({"phone": "9000000002"}))]).await.unwrap();
        assert!(tenant.row(&absent).await.unwrap().is_none(), "answered from the read ahead");
        tenant.end_read_ahead();
        assert!(tenant.row(&absent).await.unwrap().is_some(), "read from the store again");
    }

    #[tokio::test]
    async fn rows_read_before_the_actor_serve_it_unless_it_wrote_them_since() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let mut tenant = tenant(store.clone());
        let row = |n: i64| serde_json::json!({"txn_id": format!("R-{n}"), "points": n, "ledger_seq": 0});
        let key = |order: usize| keys::redemption("brand-1", "9000000001", &format!("o-{order}"));
        let slot = |key: &keys::Key| tenant.ctx.stamps.slots_of(&[key.clone().put(&row(0))]);
        // two rows in different stamp slots (rows sharing one are read again together)
        let kept = key(0);
        let written = (1..).map(key).find(|other| slot(other) != slot(&kept)).unwrap();
        let dropped = key(99);
        let ahead = |tenant: &Tenant, keys: Vec<keys::Key>| {
            let (repo, ctx) = (tenant.repo().clone(), tenant.ctx.clone());
            async move { ReadAhead::read(&repo, &ctx.stamps, keys).await.unwrap() }
        };
        let read = ahead(&tenant, vec![kept.clone(), written.clone()]).await;
        // written after the read: by an upload (no stamp: it raced with the query alike) and by
        // the brand (stamped: the actor must see its own write)
        store.batch(vec![kept.clone().put(&row(1))]).await.unwrap();
        tenant
            .commit_customer(vec![written.clone().put(&row(2))], Customer::new("9000000001", Utc::now()))
            .await
            .unwrap();
        assert_eq!(tenant.accept_read_ahead(read, ReadFor::Query), 1, "only the row nothing wrote through the brand");
        assert!(tenant.row(&kept).await.unwrap().is_none(), "the row read ahead serves the read");
        assert!(tenant.row(&written).await.unwrap().is_some(), "the brand's own write is read again");
        // a row read ahead that the message itself then writes is read ahead no more
        tenant.batch(vec![kept.clone().put(&row(3))]).await.unwrap();
        assert!(tenant.row(&kept).await.unwrap().is_some());
        tenant.end_read_ahead();
        // read in a store generation the brand has left: nothing is taken
        let mut read = ahead(&tenant, vec![dropped.clone()]).await;
        read.generation += 1;
        assert_eq!(tenant.accept_read_ahead(read, ReadFor::Query), 0);
        assert!(tenant.read_ahead.is_empty());
    }

    #[tokio::test]
    async fn applying_an_order_leaves_nothing_read_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let mut tenant = tenant(store);
        let order = serde_json::json!({
            "orderId": "o-1", "businessId": "outlet-1", "parentBusinessId": "brand-1",
            "customer": {"phone": "9000000001"}, "amount": 250, "status": 1,
        });
        let envelope =
            engage_streams::Envelope::new(engage_streams::EventKind::Order, "platform", 1, "brand-1", "t", order);
        let reactions = Arc::new(crate::capabilities::order_reactions());
        let phone = crate::capabilities::orders::apply(&mut tenant, &reactions, &envelope, 1).await.unwrap();
        assert_eq!(phone.as_deref(), Some("9000000001"));
        assert!(tenant.read_ahead.is_empty(), "rows read ahead must not outlive their order");
        assert!(tenant.has_cached_customer("9000000001"));
    }
}
