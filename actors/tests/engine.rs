//! The engine on the embedded store and bus: orders flow from the bus to tenant actors, totals
//! are exact, replays change nothing, and a panicking tenant actor loses no message.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use engage_actors::capabilities::customers;
use engage_actors::capabilities::loyalty;
use engage_actors::capabilities::wallet::{self, SendRequest};
use engage_actors::{Engine, EngineConfig, TenantGateway};
use engage_storage::{EmbeddedStore, NatsKvStore, Store};
use engage_streams::bus::EmbeddedBus;
use engage_streams::{Bus, Envelope, EventKind};

fn order(tenant: &str, order_id: &str, phone: &str, amount: f64) -> Arc<Envelope> {
    Arc::new(Envelope::new(
        EventKind::Order,
        "platform",
        1,
        tenant,
        "trace",
        json!({"parentBusinessId": tenant, "businessId": "outlet-1", "orderId": order_id,
               "customer": {"name": "Asha", "phone": phone}, "amount": amount, "orderTime": "2026-11-21 10:00:00"}),
    ))
}

async fn start(dir: &std::path::Path, fault: Option<&str>) -> (Arc<dyn Bus>, Arc<Engine>, TenantGateway) {
    start_on(Arc::new(EmbeddedStore::open(dir).unwrap()), fault).await
}

/// The engine (4 partitions, all owned) on the embedded bus over `store`.
async fn start_on(store: Arc<dyn Store>, fault: Option<&str>) -> (Arc<dyn Bus>, Arc<Engine>, TenantGateway) {
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::new(store.clone(), 4));
    let (engine, gateway) = engine_on(store, bus.clone(), fault).await;
    (bus, engine, gateway)
}

/// The engine (4 partitions, all owned) on `store` and `bus`.
async fn engine_on(store: Arc<dyn Store>, bus: Arc<dyn Bus>, fault: Option<&str>) -> (Arc<Engine>, TenantGateway) {
    let engine = Engine::new(
        store,
        bus,
        None,
        EngineConfig {
            partitions: 4,
            passivate_after: Duration::from_secs(60),
            fault_panic_order_id: fault.map(str::to_owned),
            fault_poison_order_id: None,
            max_deliveries: 5,
            services: Default::default(),
            cached_customers_max: engage_actors::customer_cache::NODE_CACHED_CUSTOMERS_MAX,
        },
    );
    engine.set_owned(&(0..4).collect::<BTreeSet<u32>>()).await;
    let gateway = TenantGateway::new(Some(engine.clone()), None, 4);
    (engine, gateway)
}

async fn customer(gateway: &TenantGateway, tenant: &str, phone: &str) -> Option<Value> {
    gateway.ask_json(tenant, customers::Details { phone: phone.to_owned() }).await.ok()
}

/// Waits (with a deadline) until the customer has `orders` orders.
async fn wait_orders(gateway: &TenantGateway, tenant: &str, phone: &str, orders: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(view) = customer(gateway, tenant, phone).await {
            if view["total_orders"] == orders {
                return view;
            }
        }
        assert!(Instant::now() < deadline, "customer {phone} never reached {orders} orders");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orders_are_counted_once_and_updates_replace() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, engine, gateway) = start(dir.path(), None).await;
    for (id, amount) in [("1", 100.5), ("2", 50.0), ("3", 25.25)] {
        bus.publish(&order("brand-a", id, "9876543210", amount)).await.unwrap();
    }
    // the same order again, and a replay of a whole message
    bus.publish(&order("brand-a", "2", "9876543210", 50.0)).await.unwrap();
    let view = wait_orders(&gateway, "brand-a", "9876543210", 3).await;
    assert_eq!(view["lifetime_value"], json!(175.75));
    assert_eq!(view["average_order_value"], json!(58.58));
    assert_eq!(view["segment"], "repeat");
    // an update of order 1 replaces its amount
    bus.publish(&order("brand-a", "1", "9876543210", 80.5)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while customer(&gateway, "brand-a", "9876543210").await.unwrap()["lifetime_value"] != json!(155.75) {
        assert!(Instant::now() < deadline, "the update was never applied");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(customer(&gateway, "brand-a", "9876543210").await.unwrap()["total_orders"], 3);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_tenant_actor_is_restarted_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, engine, gateway) = start(dir.path(), Some("boom")).await;
    for id in ["a", "boom", "b", "c"] {
        bus.publish(&order("brand-b", id, "9000000001", 10.0)).await.unwrap();
    }
    let view = wait_orders(&gateway, "brand-b", "9000000001", 4).await;
    assert_eq!(view["lifetime_value"], json!(40.0));
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unprocessed_orders_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let bus = EmbeddedBus::new(store, 4);
        for id in ["1", "2"] {
            bus.publish(&order("brand-c", id, "9000000002", 5.0)).await.unwrap();
        }
        // no engine ran: the orders are only on the bus
    }
    let (_bus, engine, gateway) = start(dir.path(), None).await;
    let view = wait_orders(&gateway, "brand-c", "9000000002", 2).await;
    assert_eq!(view["lifetime_value"], json!(10.0));
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passivated_tenant_reloads_its_state_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::new(store.clone(), 2));
    let engine = Engine::new(
        store,
        bus.clone(),
        None,
        EngineConfig {
            partitions: 2,
            passivate_after: Duration::from_millis(200),
            fault_panic_order_id: None,
            fault_poison_order_id: None,
            max_deliveries: 5,
            services: Default::default(),
            cached_customers_max: engage_actors::customer_cache::NODE_CACHED_CUSTOMERS_MAX,
        },
    );
    engine.set_owned(&(0..2).collect::<BTreeSet<u32>>()).await;
    let gateway = TenantGateway::new(Some(engine.clone()), None, 2);
    bus.publish(&order("brand-d", "1", "9000000003", 12.5)).await.unwrap();
    wait_orders(&gateway, "brand-d", "9000000003", 1).await;
    // idle well past the passivation time: the actor is stopped and its cache gone
    tokio::time::sleep(Duration::from_millis(800)).await;
    bus.publish(&order("brand-d", "2", "9000000003", 7.5)).await.unwrap();
    let view = wait_orders(&gateway, "brand-d", "9000000003", 2).await;
    assert_eq!(view["lifetime_value"], json!(20.0), "the new actor started from the stored aggregate");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_sends_never_take_a_wallet_below_zero() {
    use engage_actors::domain::wallet::{Channel, Purpose, TemplateType};
    let dir = tempfile::tempdir().unwrap();
    let (_bus, engine, gateway) = start(dir.path(), None).await;
    let recharge = wallet::Recharge {
        business: "outlet-1".into(),
        amount: "1.00".into(),
        reference: Some("pay-1".into()),
        refund: false,
    };
    gateway.ask_json("brand-w", recharge.clone()).await.unwrap();
    // the same payment reference again changes nothing
    assert_eq!(gateway.ask_json("brand-w", recharge).await.unwrap()["replayed"], true);
    let sends = (0..50).map(|i| {
        let gateway = gateway.clone();
        async move {
            gateway
                .ask_json(
                    "brand-w",
                    SendRequest {
                        business: "outlet-1".into(),
                        channel: Channel::Sms,
                        template_type: TemplateType::Utility,
                        purpose: Purpose::DigitalBill,
                        to: format!("98765{i:05}"),
                        message: "your bill".into(),
                        send_id: format!("bill-{i}"),
                        delivery_date: "20261122".into(),
                        auto_id: None,
                        template_id: None,
                        button: None,
                        sender_id: None,
                        not_before: None,
                    },
                )
                .await
        }
    });
    let results = futures::future::join_all(sends).await;
    let ok = results.iter().filter(|r| r.is_ok()).count();
    let refused = results.iter().filter(|r| matches!(r, Err(engage_actors::QueryError::Insufficient(_)))).count();
    assert_eq!((ok, refused), (5, 45), "1.00 pays for five SMS at 0.1711");
    let balance = gateway.ask_json("brand-w", wallet::GetBalance { business: "outlet-1".into() }).await.unwrap();
    assert_eq!(balance["balance"], "0.1445");
    let txns = gateway
        .ask_json("brand-w", wallet::Txns { business: "outlet-1".into(), page: 1, page_size: 100 })
        .await
        .unwrap();
    let data = txns["data"].as_array().unwrap();
    assert_eq!(data.len(), 6, "one credit, five debits");
    assert_eq!(
        (data[1]["amount"].clone(), data[1]["cost"].clone(), data[1]["gst"].clone()),
        (json!("0.1711"), json!("0.145"), json!("0.0261"))
    );
    assert_eq!(data[5]["balance_after"], "0.1445");
    engine.shutdown().await;
}

/// A store that tears one batch like a crash in the middle of a non-atomic write would (NATS KV
/// writes a batch key by key): the batch that writes `customer` gets every write but its last
/// applied, then fails. Once.
struct TornStore {
    inner: EmbeddedStore,
    customer: String,
    armed: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl Store for TornStore {
    async fn get(
        &self,
        table: &'static str,
        partition: &str,
        clustering: &[u8],
    ) -> Result<Option<Vec<u8>>, engage_storage::StoreError> {
        self.inner.get(table, partition, clustering).await
    }

    async fn scan(
        &self,
        table: &'static str,
        partition: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<engage_storage::Row>, engage_storage::StoreError> {
        self.inner.scan(table, partition, after, limit).await
    }

    async fn batch(&self, mut ops: Vec<engage_storage::WriteOp>) -> Result<(), engage_storage::StoreError> {
        let last_is_customer = matches!(ops.last(), Some(engage_storage::WriteOp::Put { table: "customers", clustering, .. })
            if clustering == self.customer.as_bytes());
        let writes_ledger =
            ops.iter().any(|op| matches!(op, engage_storage::WriteOp::Put { table: "loyalty_ledger", .. }));
        if last_is_customer && writes_ledger && self.armed.swap(false, std::sync::atomic::Ordering::SeqCst) {
            ops.pop();
            self.inner.batch(ops).await?;
            return Err(engage_storage::StoreError::Backend("torn batch (test)".into()));
        }
        self.inner.batch(ops).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_referral_write_pays_the_referrer_once_on_redelivery() {
    let dir = tempfile::tempdir().unwrap();
    let (referrer, referee) = ("9100000001", "9100000002");
    let torn = Arc::new(TornStore {
        inner: EmbeddedStore::open(dir.path()).unwrap(),
        customer: referee.to_owned(),
        armed: std::sync::atomic::AtomicBool::new(false),
    });
    let (bus, engine, gateway) = start_on(torn.clone(), None).await;
    let tenant = "brand-torn";
    let rules: engage_actors::domain::loyalty::LoyaltyRules = serde_json::from_value(json!({"earn_percent": "10", "min_bill": "0", "point_value": "1",
        "points_expiry_days": 365, "max_redeem_percent": "100", "min_redeem_points": 1,
        "referral": {"enabled": true, "referrer_points": 100, "referee_points": 50, "min_order_amount": "0", "max_referrals": 0}}))
    .unwrap();
    gateway
        .ask_json(tenant, loyalty::SetRules { patch: engage_actors::domain::loyalty::RulesPatch::from(rules) })
        .await
        .unwrap();
    bus.publish(&order(tenant, "t1", referrer, 10.0)).await.unwrap();
    wait_orders(&gateway, tenant, referrer, 1).await;
    let create = Envelope::new(
        EventKind::Customer,
        "integration",
        0,
        tenant,
        "trace",
        json!({"parentBusinessId": tenant, "phone": referee, "referrer_number": referrer}),
    );
    let view = gateway.ask_json(tenant, customers::ApplyNow { envelope: create }).await.unwrap();
    assert_eq!(view["referred_by"], referrer);

    // the referee's first order: its first write is torn after the referrer's row landed
    torn.armed.store(true, std::sync::atomic::Ordering::SeqCst);
    bus.publish(&order(tenant, "t2", referee, 20.0)).await.unwrap();
    let view = wait_orders(&gateway, tenant, referee, 1).await;
    assert!(!torn.armed.load(std::sync::atomic::Ordering::SeqCst), "the batch was torn");
    assert_eq!(view["loyalty_points"], 2 + 50, "the referee earns once");
    let referrer_view = customer(&gateway, tenant, referrer).await.unwrap();
    assert_eq!(referrer_view["loyalty_points"], 1 + 100, "the referrer is paid once: {referrer_view}");
    let ledger = gateway
        .ask_json(tenant, loyalty::Ledger { phone: referrer.to_owned(), page: 1, page_size: 100 })
        .await
        .unwrap();
    let sum: i64 = ledger["data"].as_array().unwrap().iter().map(|e| e["points"].as_i64().unwrap()).sum();
    assert_eq!(sum, 101, "the referrer's ledger sums to the balance: {ledger}");
    engine.shutdown().await;
}

/// A reaction registered by the test: records each call, and writes one row per changed order
/// into the order's batch.
struct RecordOrders {
    calls: std::sync::Mutex<Vec<(String, engage_actors::domain::customer::Applied)>>,
}

#[async_trait::async_trait]
impl engage_actors::reaction::OrderReaction for RecordOrders {
    fn name(&self) -> &'static str {
        "test_record_orders"
    }

    async fn react(
        &self,
        tenant: &mut engage_actors::Tenant,
        order: &engage_actors::reaction::OrderEvent<'_>,
        customer: &mut engage_actors::domain::customer::Customer,
        ops: &mut Vec<engage_storage::WriteOp>,
    ) -> Result<(), engage_storage::StoreError> {
        self.calls.lock().unwrap().push((order.facts.order_id.clone(), order.applied));
        if order.changed() {
            ops.push(engage_storage::WriteOp::Put {
                table: "test_reactions",
                partition: tenant.id.clone(),
                clustering: order.facts.order_id.as_bytes().to_vec(),
                value: serde_json::to_vec(&json!({"orders_before": customer.total_orders() - 1})).unwrap(),
            });
        }
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_order_reaction_runs_in_the_order_batch_and_never_twice() {
    use engage_actors::domain::customer::Applied;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::new(store.clone(), 4));
    let recorder = Arc::new(RecordOrders { calls: std::sync::Mutex::new(Vec::new()) });
    let mut reactions = engage_actors::capabilities::order_reactions();
    reactions.push(recorder.clone());
    let config = EngineConfig {
        partitions: 4,
        passivate_after: Duration::from_secs(60),
        fault_panic_order_id: None,
        fault_poison_order_id: None,
        max_deliveries: 5,
        services: Default::default(),
        cached_customers_max: engage_actors::customer_cache::NODE_CACHED_CUSTOMERS_MAX,
    };
    let engine = Engine::with_reactions(store.clone(), bus.clone(), None, config, reactions);
    engine.set_owned(&(0..4).collect::<BTreeSet<u32>>()).await;
    let gateway = TenantGateway::new(Some(engine.clone()), None, 4);

    let first = order("brand-r", "r-1", "9876500001", 40.0);
    bus.publish(&first).await.unwrap();
    bus.publish(&order("brand-r", "r-2", "9876500001", 60.0)).await.unwrap();
    wait_orders(&gateway, "brand-r", "9876500001", 2).await;
    // a replay of the first envelope: the reaction sees it as such and writes nothing
    bus.publish(&first).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while recorder.calls.lock().unwrap().len() < 3 {
        assert!(Instant::now() < deadline, "the replay never reached the reaction");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let calls = recorder.calls.lock().unwrap().clone();
    assert_eq!(calls[0], ("r-1".to_owned(), Applied::New));
    assert_eq!(calls[1], ("r-2".to_owned(), Applied::New));
    assert_eq!(calls[2].0, "r-1");
    assert!(matches!(calls[2].1, Applied::Unchanged | Applied::Stale), "{calls:?}");
    let rows = store.scan("test_reactions", "brand-r", None, 10).await.unwrap();
    let written: Vec<Value> = rows.iter().map(|r| serde_json::from_slice(&r.value).unwrap()).collect();
    assert_eq!(written, vec![json!({"orders_before": 0}), json!({"orders_before": 1})]);
    // the default reactions still ran alongside (no rules configured: no points, but a ledger-free customer)
    assert_eq!(customer(&gateway, "brand-r", "9876500001").await.unwrap()["loyalty_points"], 0);
    engine.shutdown().await;
}

/// 300 redemptions of one customer in flight at once over 60 orders, through `gateway`: one
/// redemption per order, each seeing the one before; returns the balance after them.
async fn redeem_concurrently(bus: &Arc<dyn Bus>, gateway: &TenantGateway) -> i64 {
    use engage_actors::capabilities::redemption::RedeemRequest;
    let rules: engage_actors::domain::loyalty::LoyaltyRules =
        serde_json::from_value(json!({"earn_percent": "10", "min_bill": "0", "point_value": "1",
        "points_expiry_days": 365, "max_redeem_percent": "100", "min_redeem_points": 1}))
        .unwrap();
    gateway
        .ask_json("brand-r", loyalty::SetRules { patch: engage_actors::domain::loyalty::RulesPatch::from(rules) })
        .await
        .unwrap();
    bus.publish(&order("brand-r", "seed", "9000000001", 10_000.0)).await.unwrap();
    wait_orders(gateway, "brand-r", "9000000001", 1).await;
    let before = points(&customer(gateway, "brand-r", "9000000001").await.unwrap());
    assert_eq!(before, 1000);
    // the actor stages each commit and goes on, so each order's later calls must read the first
    // one's staged rows; on a networked store each call's rows are read before the actor takes
    // it, so most of those reads are made before the first call of their order is done
    let calls = (0..300).map(|i| {
        let gateway = gateway.clone();
        async move {
            let request = RedeemRequest {
                phone: "9000000001".into(),
                points: 3,
                order_id: format!("o-{}", i % 60),
                outlet_id: Some("outlet-1".into()),
                bill: None,
                pending_minutes: None,
                otp: None,
            };
            gateway.ask_json("brand-r", request).await
        }
    });
    let answers: Vec<Value> = futures::future::join_all(calls).await.into_iter().map(Result::unwrap).collect();
    let fresh: Vec<&Value> = answers.iter().filter(|a| a.get("replayed").is_none()).collect();
    assert_eq!(fresh.len(), 60, "one redemption per order");
    let mut balances: Vec<i64> = fresh.iter().map(|a| a["wallet_balance"].as_i64().unwrap()).collect();
    balances.sort_unstable();
    assert_eq!(balances, (0..60).map(|i| 820 + 3 * i).collect::<Vec<i64>>(), "each saw the one before");
    points(&customer(gateway, "brand-r", "9000000001").await.unwrap())
}

fn points(view: &Value) -> i64 {
    view["loyalty_points"].as_i64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_redemptions_of_one_customer_are_exact_once_per_order_and_durable_when_answered() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, engine, gateway) = start(dir.path(), None).await;
    assert_eq!(redeem_concurrently(&bus, &gateway).await, 1000 - 180);
    engine.shutdown().await;
    drop((bus, gateway, engine));
    // every answered redemption is on disk (the stopped actors let go of the store shortly)
    let deadline = Instant::now() + Duration::from_secs(10);
    let store = loop {
        match EmbeddedStore::open(dir.path()) {
            Ok(store) => break store,
            Err(error) => assert!(Instant::now() < deadline, "the store stayed open: {error}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (_bus, engine, gateway) = start_on(Arc::new(store), None).await;
    assert_eq!(points(&customer(&gateway, "brand-r", "9000000001").await.unwrap()), 1000 - 180);
    engine.shutdown().await;
}

/// On NATS KV (the test's nats-server, `ENGAGE_TEST_NATS_URL`, started by `scripts/test.sh`; a
/// missing server fails the test) the redemption rows are read ahead of the actor
/// (`engage_actors::read_ahead`): rows the actor wrote since must be read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_redemptions_on_nats_kv_are_exact_once_per_order_with_rows_read_ahead() {
    let url = std::env::var("ENGAGE_TEST_NATS_URL")
        .expect("ENGAGE_TEST_NATS_URL is not set: run scripts/test.sh, which starts nats-server -js");
    let jetstream = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
    let bucket = format!("engine_redeem_{}", std::process::id());
    let store: Arc<dyn Store> = Arc::new(NatsKvStore::open(&jetstream, &bucket, 1).await.unwrap());
    assert!(!store.local_reads(), "NATS KV reads are round trips: the engine reads ahead");
    let dir = tempfile::tempdir().unwrap();
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::new(Arc::new(EmbeddedStore::open(dir.path()).unwrap()), 4));
    let (engine, gateway) = engine_on(store.clone(), bus.clone(), None).await;
    assert_eq!(redeem_concurrently(&bus, &gateway).await, 1000 - 180);
    engine.shutdown().await;
    // answered means in the bucket: a new engine (nothing cached) reads the same balance
    let store: Arc<dyn Store> = Arc::new(NatsKvStore::open(&jetstream, &bucket, 1).await.unwrap());
    let (engine, gateway) = engine_on(store, bus, None).await;
    assert_eq!(points(&customer(&gateway, "brand-r", "9000000001").await.unwrap()), 1000 - 180);
    engine.shutdown().await;
    let _ = jetstream.delete_key_value(&bucket).await;
}

/// On NATS KV an order whose own row the bucket refuses (here a bucket of 4 KiB values and an
/// order of 5 KB) fails on every delivery. Its rollup rows go in the same atomic batch, so they
/// never land: the dashboard does not count the order once per retry (before atomic batches, 60 s
/// of retries made 110 phantom orders). It is parked after its last delivery; the brand's other
/// orders, written in the same groups as it, are counted once and never parked with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_the_store_refuses_is_never_counted_and_is_parked() {
    let url = std::env::var("ENGAGE_TEST_NATS_URL")
        .expect("ENGAGE_TEST_NATS_URL is not set: run scripts/test.sh, which starts nats-server -js");
    let jetstream = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
    let bucket = format!("engine_refused_{}", std::process::id());
    let _ = jetstream.delete_key_value(&bucket).await;
    let config = async_nats::jetstream::kv::Config {
        bucket: bucket.clone(),
        history: 1,
        max_value_size: 4096,
        ..Default::default()
    };
    jetstream.create_key_value(config).await.unwrap();
    let store: Arc<dyn Store> = Arc::new(NatsKvStore::open(&jetstream, &bucket, 1).await.unwrap());
    let dir = tempfile::tempdir().unwrap();
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::new(Arc::new(EmbeddedStore::open(dir.path()).unwrap()), 4));
    let (engine, gateway) = engine_on(store.clone(), bus.clone(), None).await;
    let mut large = order("brand-x", "big", "9000000011", 70.0);
    Arc::make_mut(&mut large).payload["notes"] = json!("n".repeat(5000));
    // the brand's other orders travel with it, before and after: none of them is blamed for it
    bus.publish(&order("brand-x", "before", "9000000012", 70.0)).await.unwrap();
    bus.publish(&large).await.unwrap();
    for n in 1..=3 {
        bus.publish(&order("brand-x", &format!("after-{n}"), "9000000012", 70.0)).await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while bus.dead_letters().await.unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the refused order was never parked");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    wait_orders(&gateway, "brand-x", "9000000012", 4).await;
    let parked = bus.dead_letters().await.unwrap();
    let seen: Vec<_> = parked
        .iter()
        .map(|l| (l.id(), l.envelope.payload.get("orderId").cloned(), l.attempts, l.error.as_str()))
        .collect();
    assert_eq!((parked.len(), parked[0].attempts, parked[0].id()), (1, 5, large.id.as_str()), "parked: {seen:?}");
    let day = "2026-11-21".to_owned();
    let query = engage_actors::capabilities::stats::ReadMetric {
        metric: engage_actors::capabilities::stats::Metric::Summary,
        business_id: None,
        start: day.clone(),
        end: day,
        limit: 10,
    };
    let summary = gateway.ask("brand-x", query).await.unwrap();
    assert_eq!(summary["totals"]["orders"], 4, "five failed deliveries counted nothing: {summary}");
    assert!(customer(&gateway, "brand-x", "9000000011").await.is_none(), "the refused order's customer landed");
    engine.shutdown().await;
    let _ = jetstream.delete_key_value(&bucket).await;
}
