//! Copies of one order ranked by the bus position, never the clock (issue 56): copies stamped
//! with the very same `received_at` (a void sent in the millisecond of its sale, a POS flushing a
//! backlog) end at the last copy published, on the embedded bus (after a restart too) and on
//! JetStream. With the clock and a content hash deciding, this test failed every run.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use engage_actors::capabilities::customers;
use engage_actors::{Engine, EngineConfig, TenantGateway};
use engage_storage::{EmbeddedStore, Store};
use engage_streams::bus::EmbeddedBus;
use engage_streams::{Bus, Envelope, EventKind};

const SAME_MS: &str = "2026-11-21T10:00:00.000Z";

/// A copy of order `id` of `amount`, cancelled when `void`, accepted at [`SAME_MS`].
fn copy(tenant: &str, id: &str, phone: &str, amount: u32, void: bool) -> Arc<Envelope> {
    let mut payload = json!({"parentBusinessId": tenant, "businessId": "o1", "orderId": id,
        "customer": {"phone": phone}, "amount": amount, "orderTime": "2026-11-21 10:00:00"});
    if void {
        payload["status"] = json!(2);
    }
    let mut envelope = Envelope::new(EventKind::Order, "platform", 1, tenant, "trace", payload);
    envelope.received_at = SAME_MS.to_owned();
    Arc::new(envelope)
}

async fn engine(store: Arc<dyn Store>) -> (Arc<dyn Bus>, Arc<Engine>, TenantGateway) {
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::new(store.clone(), 2));
    let (engine, gateway) = engine_on(store, bus.clone()).await;
    (bus, engine, gateway)
}

async fn engine_on(store: Arc<dyn Store>, bus: Arc<dyn Bus>) -> (Arc<Engine>, TenantGateway) {
    let config = EngineConfig {
        partitions: 2,
        passivate_after: Duration::from_secs(60),
        fault_panic_order_id: None,
        fault_poison_order_id: None,
        max_deliveries: 5,
        services: Default::default(),
        cached_customers_max: engage_actors::customer_cache::NODE_CACHED_CUSTOMERS_MAX,
    };
    let engine = Engine::new(store, bus, None, config);
    engine.set_owned(&(0..2).collect::<BTreeSet<u32>>()).await;
    let gateway = TenantGateway::new(Some(engine.clone()), None, 2);
    (engine, gateway)
}

/// Waits until `phone`'s lifetime value is `ltv` (the sentinel's paise make it unique), then
/// answers the customer.
async fn settled(gateway: &TenantGateway, tenant: &str, phone: &str, ltv: f64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let view = gateway.ask_json(tenant, customers::Details { phone: phone.to_owned() }).await.ok();
        if let Some(view) = view.filter(|v| v["lifetime_value"].as_f64() == Some(ltv)) {
            return view;
        }
        assert!(Instant::now() < deadline, "{phone} never reached {ltv}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// 100 sales each voided in the same millisecond, and 100 orders whose amount changes three
/// times in it, then a sentinel: 100 orders of 20 and the sentinel count.
async fn same_millisecond_copies(bus: &Arc<dyn Bus>, gateway: &TenantGateway, tenant: &str, phone: &str) {
    for n in 0..100 {
        bus.publish(&copy(tenant, &format!("V-{n}"), phone, 80, false)).await.unwrap();
        bus.publish(&copy(tenant, &format!("V-{n}"), phone, 80, true)).await.unwrap();
        for amount in [30, 10, 20] {
            bus.publish(&copy(tenant, &format!("U-{n}"), phone, amount, false)).await.unwrap();
        }
    }
    let mut sentinel = (*copy(tenant, "S-1", phone, 0, false)).clone();
    sentinel.payload["amount"] = json!(0.01);
    bus.publish(&Arc::new(sentinel)).await.unwrap();
    let view = settled(gateway, tenant, phone, 2000.01).await;
    assert_eq!(view["total_orders"], json!(101), "the 100 updated orders and the sentinel: {view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_in_one_millisecond_end_at_the_last_one_published() {
    let dir = tempfile::tempdir().unwrap();
    let (tenant, phone) = ("brand-rank", "9812100001");
    {
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let (bus, engine, gateway) = engine(store).await;
        same_millisecond_copies(&bus, &gateway, tenant, phone).await;
        engine.shutdown().await;
    }
    // after a restart the bus's positions keep growing: a void now still beats the copy before
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
    let (bus, engine, gateway) = engine(store).await;
    bus.publish(&copy(tenant, "U-0", phone, 20, true)).await.unwrap();
    let view = settled(&gateway, tenant, phone, 1980.01).await;
    assert_eq!(view["total_orders"], json!(100), "{view}");
    engine.shutdown().await;
}

/// The same on JetStream (the test's nats-server, `ENGAGE_TEST_NATS_URL`, started by
/// `scripts/test.sh`): the stream sequence ranks the copies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_in_one_millisecond_end_at_the_last_one_published_on_jetstream() {
    let url = std::env::var("ENGAGE_TEST_NATS_URL")
        .expect("ENGAGE_TEST_NATS_URL is not set: run scripts/test.sh, which starts nats-server -js");
    let jetstream = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
    let replicas = engage_config::NatsReplicas::default();
    let jetstream_bus = engage_streams::bus::JetStreamBus::connect(
        jetstream,
        2,
        Duration::from_secs(3600),
        Duration::from_secs(30),
        &replicas,
    )
    .await
    .unwrap();
    let bus: Arc<dyn Bus> = Arc::new(jetstream_bus);
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
    let (engine, gateway) = engine_on(store, bus.clone()).await;
    // a brand of its own each run: the server's stream outlives the test
    let tenant = format!("brand-rank-{}", uuid::Uuid::new_v4().simple());
    same_millisecond_copies(&bus, &gateway, &tenant, "9812100002").await;
    engine.shutdown().await;
}
