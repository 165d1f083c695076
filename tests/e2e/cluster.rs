//! The `engage` binary as operators run it, failing: `kill -9` of the embedded server while
//! orders (and log events) stream in; a supervisor restarting a panicking tenant actor; idempotent
//! replay of a NATS subject; a NATS outage with writes in flight; two nodes and an ingress on NATS
//! with one node killed mid-stream. (The CLI through a running server: `cli.rs`.) Each NATS test starts its own
//! `nats-server -js` (binary from `ENGAGE_TEST_NATS_SERVER`, set by `scripts/test.sh`).

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;

use crate::cluster_kit::{details, order, stream_orders, wait_acked, wait_each_counted_once, wait_owners};
use crate::procs::{free_port, Engage, NatsServer};

use crate::procs::BIN;

/// An embedded server in a fresh data dir: (the dir, kept alive; the data dir; port; server).
async fn embedded_server() -> (tempfile::TempDir, std::path::PathBuf, u16, Engage) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let engage = Engage::start(&data, port, &[]).await;
    (dir, data, port, engage)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_the_embedded_server_loses_no_acknowledged_order() {
    let (_dir, data, port, mut engage) = embedded_server().await;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let producer = tokio::spawn(stream_orders(engage.base.clone(), 5, 6, stop.clone(), acked.clone()));
    wait_acked(&acked, 150).await;
    engage.kill9();
    let at_kill = acked.lock().unwrap().len();
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    producer.await.unwrap();
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= at_kill);

    let engage = Engage::start(&data, port, &[]).await;
    let client = reqwest::Client::new();
    wait_each_counted_once(&client, &engage.base, &acked, Duration::from_secs(60)).await;
}

/// Posts single log events (message `m-<producer>-<n>`) until `stop`; records each acknowledged one.
async fn stream_log_events(
    base: String,
    producer: usize,
    stop: Arc<std::sync::atomic::AtomicBool>,
    acked: Arc<Mutex<Vec<String>>>,
) {
    let client = reqwest::Client::new();
    for n in 0.. {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let message = format!("m-{producer}-{n}");
        match client.post(format!("{base}/v1/logs")).json(&crate::helpers::event(&message)).send().await {
            Ok(response) if response.status() == 200 => acked.lock().unwrap().push(message),
            Ok(_) | Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_the_embedded_server_loses_no_acknowledged_log_event() {
    let (_dir, data, port, mut engage) = embedded_server().await;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let producers: Vec<_> = (0..8)
        .map(|producer| tokio::spawn(stream_log_events(engage.base.clone(), producer, stop.clone(), acked.clone())))
        .collect();
    wait_acked(&acked, 2000).await;
    engage.kill9();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for producer in producers {
        producer.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();

    let engage = Engage::start(&data, port, &[]).await;
    let response =
        reqwest::get(format!("{}/v1/logs/events?log_group=/logs/org/edge/checkout&limit=10000", engage.base))
            .await
            .unwrap();
    let (status, body) = crate::helpers::read(response).await;
    assert_eq!(status, 200, "{body}");
    let stored: std::collections::HashSet<&str> =
        body["events"].as_array().unwrap().iter().filter_map(|e| e["event"]["message"].as_str()).collect();
    let lost: Vec<&String> = acked.iter().filter(|m| !stored.contains(m.as_str())).collect();
    assert!(lost.is_empty(), "{} of {} acknowledged events lost, e.g. {:?}", lost.len(), acked.len(), lost.first());
    // and the log takes writes again after recovering
    let client = reqwest::Client::new();
    let response =
        client.post(format!("{}/v1/logs", engage.base)).json(&crate::helpers::event("after")).send().await.unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_order_fails_alone_and_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let engage =
        Engage::start(&dir.path().join("data"), free_port(), &[("ENGAGE_FAULT_PANIC_ORDER_ID", "poison")]).await;
    let client = reqwest::Client::new();
    let mut orders = Vec::new();
    for (i, id) in ["a", "poison", "b", "c"].iter().enumerate() {
        let phone = format!("90000000{i:02}");
        let response = client
            .post(format!("{}/injestion/platform", engage.base))
            .json(&order("brand-p", id, &phone))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        orders.push(("brand-p".to_owned(), phone));
    }
    wait_each_counted_once(&client, &engage.base, &orders, Duration::from_secs(30)).await;
    let metrics = client.get(format!("{}/metrics", engage.base)).send().await.unwrap().text().await.unwrap();
    // the panic was caught in the actor: counted, and no restart (no backoff for the brand)
    assert!(metrics.contains("engage_actor_panics_total 1"), "{metrics}");
    assert!(metrics.contains("engage_actor_failures_total 1"), "{metrics}");
    assert!(!metrics.contains("engage_actor_restarts_total 1"), "{metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaying_a_subject_with_the_nats_client_changes_no_total() {
    let nats = NatsServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let engage = Engage::start(
        &dir.path().join("data"),
        free_port(),
        &[("ENGAGE_NATS_URL", &nats.url), ("ENGAGE_PARTITIONS", "8"), ("ENGAGE_PARTITION_LEASE_SECS", "3")],
    )
    .await;
    let client = reqwest::Client::new();
    let mut expected = BTreeMap::new();
    for i in 0..30 {
        let tenant = format!("brand-{}", i % 3);
        let phone = format!("98000000{:02}", i % 5);
        let body = json!({"parentBusinessId": tenant, "businessId": "o1", "orderId": format!("r{i}"),
                          "customer": {"phone": phone}, "amount": 2.5, "orderTime": "2026-11-21 10:00:00"});
        let response = client.post(format!("{}/injestion/platform", engage.base)).json(&body).send().await.unwrap();
        assert_eq!(response.status(), 200);
        *expected.entry((tenant, phone)).or_insert(0u64) += 1;
    }
    // the same order POSTed again is dropped by JetStream's de-duplication (Nats-Msg-Id)
    let again = json!({"parentBusinessId": "brand-0", "businessId": "o1", "orderId": "r0",
                       "customer": {"phone": "9800000000"}, "amount": 2.5, "orderTime": "2026-11-21 10:00:00"});
    assert_eq!(
        client.post(format!("{}/injestion/platform", engage.base)).json(&again).send().await.unwrap().status(),
        200
    );

    let check = |expected: BTreeMap<(String, String), u64>| {
        let client = client.clone();
        let base = engage.base.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(30);
            for ((tenant, phone), orders) in &expected {
                loop {
                    let (status, body) = details(&client, &base, tenant, phone).await;
                    if status == 200 && body["customer"]["total_orders"] == *orders {
                        assert_eq!(body["customer"]["lifetime_value"], json!(2.5 * *orders as f64));
                        break;
                    }
                    assert!(Instant::now() < deadline, "{tenant}/{phone}: expected {orders} orders, got {body}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    };
    check(expected.clone()).await;

    // an operator re-publishes every message of the subjects, as `nats pub` would (no Nats-Msg-Id)
    let nats_client = async_nats::connect(&nats.url).await.unwrap();
    let jetstream = async_nats::jetstream::new(nats_client.clone());
    let mut stream = jetstream.get_stream("ENGAGE_ORDERS").await.unwrap();
    let info = stream.info().await.unwrap().clone();
    assert_eq!(info.state.messages, 30, "the duplicate POST was de-duplicated");
    let mut republished = 0;
    for seq in info.state.first_sequence..=info.state.last_sequence {
        let message = stream.get_raw_message(seq).await.unwrap();
        jetstream.publish(message.subject.to_string(), message.payload.clone()).await.unwrap().await.unwrap();
        republished += 1;
    }
    assert_eq!(republished, 30);
    // wait until the replayed messages were consumed: every consumer's pending count is 0
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut pending = 0;
        let mut consumers = stream.consumers();
        while let Some(consumer) = consumers.next().await {
            let consumer = consumer.unwrap();
            pending += consumer.num_pending + consumer.num_ack_pending as u64;
        }
        if pending == 0 && stream.info().await.unwrap().state.messages == 60 {
            break;
        }
        assert!(Instant::now() < deadline, "the replay was not consumed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    check(expected).await;
    let metrics = client.get(format!("{}/metrics", engage.base)).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("engage_orders_applied_total{outcome=\"unchanged\"} 30"), "{metrics}");

    // `engage partitions` prints the owner of every partition
    let output = Command::new(BIN)
        .arg("partitions")
        .env("ENGAGE_NATS_URL", &nats.url)
        .env("ENGAGE_PARTITIONS", "8")
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let owned: Vec<&str> = stdout.lines().filter(|l| l.contains('\t')).collect();
    assert_eq!(owned.len(), 8, "{stdout}");
    assert!(owned.iter().all(|l| !l.contains("(unowned)")), "{stdout}");

    // `engage tokens create` against the running server prints the token alone; it works
    let output = Command::new(BIN)
        .args(["tokens", "create", "--kind", "ingestion", "--parent", "brand-0"])
        .env("ENGAGE_HTTP_ADDR", format!("127.0.0.1:{}", engage.port))
        .env("ENGAGE_DATA_DIR", dir.path().join("data"))
        .env("ENGAGE_NATS_URL", &nats.url)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let token = String::from_utf8(output.stdout).unwrap();
    assert_eq!(token.lines().count(), 1);
    let token = token.trim().to_owned();
    assert!(token.starts_with("eng_ingestion_"), "{token}");
    let pos_c = |token: String| {
        let client = client.clone();
        let base = engage.base.clone();
        async move {
            let response = client
                .post(format!("{base}/injestion/pos_c"))
                .header("token", token)
                .json(&order("brand-0", "c-1", "9811111111"))
                .send()
                .await
                .unwrap();
            crate::helpers::read(response).await
        }
    };
    assert_eq!(pos_c(token.clone()).await, (200, json!({"status": 1})));

    // fail closed: with NATS gone the token check itself fails: 500 {message: "authentication failed"}
    drop(nats);
    assert_eq!(pos_c(token).await, (500, json!({"message": "authentication failed"})));
}

/// NATS killed while a burst of orders is being applied (tenant actors have staged KV writes in
/// flight) and back 8 s later, past a write's timeout: the node needs no restart: it serves again,
/// and every order it accepted counts exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nats_outage_with_writes_in_flight_needs_no_restart_and_loses_nothing() {
    let mut nats = NatsServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let engage = Engage::start(
        &dir.path().join("data"),
        free_port(),
        &[("ENGAGE_NATS_URL", &nats.url), ("ENGAGE_PARTITIONS", "8")],
    )
    .await;
    let client = reqwest::Client::new();
    let post = |i: usize| {
        let (client, base) = (client.clone(), engage.base.clone());
        async move {
            let (tenant, phone) = (format!("brand-{}", i % 8), format!("97{i:08}"));
            let response = client
                .post(format!("{base}/injestion/platform"))
                .json(&order(&tenant, &format!("o{i}"), &phone))
                .send()
                .await;
            response.is_ok_and(|r| r.status() == 200).then_some((tenant, phone))
        }
    };
    let mut accepted: Vec<(String, String)> =
        futures::stream::iter(0..400).map(post).buffer_unordered(32).filter_map(|a| async { a }).collect().await;
    assert_eq!(accepted.len(), 400, "NATS is up: every order is accepted");
    nats.restart_after(Duration::from_secs(8)).await;
    // back without a restart of engage: orders are accepted again
    let deadline = Instant::now() + Duration::from_secs(60);
    for i in 400..450 {
        loop {
            if let Some(order) = post(i).await {
                accepted.push(order);
                break;
            }
            assert!(Instant::now() < deadline, "engage never accepted orders again after NATS came back");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    wait_each_counted_once(&client, &engage.base, &accepted, Duration::from_secs(90)).await;
    let ready = client.get(format!("{}/readyz", engage.base)).send().await.unwrap();
    assert_eq!(ready.status(), 200, "{}", ready.text().await.unwrap_or_default());
    let metrics = client.get(format!("{}/metrics", engage.base)).send().await.unwrap().text().await.unwrap();
    let dropped = metrics.lines().find(|l| l.starts_with("engage_store_dropped_staged_total")).unwrap_or("none");
    eprintln!("groups of staged writes dropped during the outage: {dropped}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_loses_its_partitions_within_the_lease_and_nothing_acked_is_lost() {
    let nats = NatsServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    // the defaults, as operators run it: 64 partitions, a 10 s lease
    let common = [("ENGAGE_NATS_URL", nats.url.as_str())];
    let with = |extra: &[(&'static str, &'static str)]| {
        common.iter().copied().chain(extra.iter().copied()).collect::<Vec<_>>()
    };
    let mut node_a = Engage::start(
        &dir.path().join("a"),
        free_port(),
        &with(&[("ENGAGE_ROLE", "node"), ("ENGAGE_NODE_ID", "node-a")]),
    )
    .await;
    let _node_b = Engage::start(
        &dir.path().join("b"),
        free_port(),
        &with(&[("ENGAGE_ROLE", "node"), ("ENGAGE_NODE_ID", "node-b")]),
    )
    .await;
    let ingress = Engage::start(&dir.path().join("i"), free_port(), &with(&[("ENGAGE_ROLE", "ingress")])).await;
    let before = wait_owners(
        &nats.url,
        64,
        |o| o.values().any(|n| n == "node-a") && o.values().any(|n| n == "node-b"),
        Duration::from_secs(30),
    )
    .await;
    let a_partitions = before.values().filter(|n| *n == "node-a").count();
    assert!((24..=40).contains(&a_partitions), "partitions are shared: {before:?}");

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let producer = tokio::spawn(stream_orders(ingress.base.clone(), 16, 4, stop.clone(), acked.clone()));
    wait_acked(&acked, 100).await;
    let _ = node_a.port;
    node_a.kill9();
    let killed_at = Instant::now();
    wait_acked(&acked, 250).await;
    // node-a's partitions move to node-b within the lease (10 s)
    wait_owners(&nats.url, 64, |o| o.values().all(|n| n == "node-b"), Duration::from_secs(20)).await;
    let moved_after = killed_at.elapsed();
    eprintln!("partitions of the killed node moved after {moved_after:?}");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    producer.await.unwrap();
    let acked = acked.lock().unwrap().clone();
    let client = reqwest::Client::new();
    wait_each_counted_once(&client, &ingress.base, &acked, Duration::from_secs(60)).await;
    // the lease (10 s) runs from node-a's last renewal, before the kill; the server expires a key
    // a little late, which node-b's takeover retries every 300 ms up to five times
    // (streams/src/lease.rs), and this test polls the owners every 200 ms: 12 s at the most
    assert!(moved_after < Duration::from_secs(12), "partitions moved after {moved_after:?}");
}
