//! The `engage` binary as operators run it: `kill -9` of the embedded server while orders (and
//! log events) stream in; a supervisor restarting a panicking tenant actor; idempotent replay of a NATS subject; two
//! nodes and an ingress on NATS with one node killed mid-stream. Each NATS test starts its own
//! `nats-server -js` (binary from `ENGAGE_TEST_NATS_SERVER`, set by `scripts/test.sh`).

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};

use crate::procs::{free_port, Engage, NatsServer};

use crate::procs::BIN;

fn order(tenant: &str, id: &str, phone: &str) -> Value {
    json!({"parentBusinessId": tenant, "businessId": "outlet-1", "orderId": id,
           "customer": {"phone": phone}, "amount": 1, "orderTime": "2026-11-21 10:00:00"})
}

async fn details(client: &reqwest::Client, base: &str, tenant: &str, phone: &str) -> (u16, Value) {
    match client
        .post(format!("{base}/crm_api/get/customer/details"))
        .json(&json!({"parent_business_id": tenant, "customer_number": phone}))
        .send()
        .await
    {
        Ok(response) => crate::helpers::read(response).await,
        Err(_) => (0, Value::Null),
    }
}

/// Waits until every (tenant, phone) has exactly one order of amount 1; returns the stragglers.
pub(crate) async fn wait_each_counted_once(
    client: &reqwest::Client,
    base: &str,
    orders: &[(String, String)],
    within: Duration,
) {
    let deadline = Instant::now() + within;
    let mut pending: Vec<&(String, String)> = orders.iter().collect();
    while !pending.is_empty() {
        let mut still = Vec::new();
        for key in pending {
            let (status, body) = details(client, base, &key.0, &key.1).await;
            if status == 200 {
                assert_eq!(body["customer"]["total_orders"], 1, "{key:?} counted more than once: {body}");
                assert_eq!(body["customer"]["lifetime_value"], json!(1.0), "{key:?}: {body}");
            } else {
                still.push(key);
            }
        }
        pending = still;
        if !pending.is_empty() {
            assert!(
                Instant::now() < deadline,
                "{} acknowledged orders never processed, e.g. {:?}",
                pending.len(),
                pending[0]
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Posts orders from `workers` concurrent producers until `stop`; returns (acked, sent).
async fn stream_orders(
    base: String,
    tenants: usize,
    workers: usize,
    stop: Arc<std::sync::atomic::AtomicBool>,
    acked: Arc<Mutex<Vec<(String, String)>>>,
) -> usize {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tasks = (0..workers).map(|w| {
        let (client, base, stop, acked, sent) =
            (client.clone(), base.clone(), stop.clone(), acked.clone(), sent.clone());
        async move {
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) && i < 2000 {
                i += 1;
                let tenant = format!("brand-{}", (w * 7 + i) % tenants);
                let phone = format!("9{w:02}{i:07}");
                sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let ok = client
                    .post(format!("{base}/injestion/platform"))
                    .json(&order(&tenant, &format!("o-{w}-{i}"), &phone))
                    .send()
                    .await
                    .is_ok_and(|r| r.status() == 200);
                if ok {
                    acked.lock().unwrap().push((tenant, phone));
                } else {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    });
    futures::future::join_all(tasks).await;
    sent.load(std::sync::atomic::Ordering::SeqCst)
}

/// Waits until producers recorded `at_least` acknowledged writes (orders, log events).
async fn wait_acked<T>(acked: &Mutex<Vec<T>>, at_least: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while acked.lock().unwrap().len() < at_least {
        assert!(Instant::now() < deadline, "writes were not acknowledged");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

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

/// Runs the `engage` CLI against the running `engage` (data dir `data`); its stdout.
fn cli(engage: &Engage, data: &std::path::Path, args: &[&str]) -> String {
    let output = Command::new(BIN)
        .args(args)
        .env("ENGAGE_HTTP_ADDR", format!("127.0.0.1:{}", engage.port))
        .env("ENGAGE_DATA_DIR", data)
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engage_reports_health_writes_the_five_workbooks_through_the_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let engage = Engage::start(&data, free_port(), &[]).await;
    let run = |args: &[&str]| cli(&engage, &data, args);
    let jobs = run(&["jobs", "list"]);
    assert!(jobs.contains("auto_campaign_sync\t0 47 12 * * *"), "{jobs}");
    assert!(jobs.contains("health_reports\t0 0 12 * * Mon"), "{jobs}");
    let printed = run(&["reports", "health", "--now", "2026-11-23T06:30:00Z"]);
    let files: Vec<&str> = printed.lines().collect();
    assert_eq!(files.len(), 5, "{printed}");
    let folder = data.join("reports").join("health-2026-11-16_2026-11-22");
    for file in files {
        let path = std::path::Path::new(file);
        assert_eq!(path.parent(), Some(folder.as_path()), "{file}");
        // an XLSX file is a zip archive
        assert_eq!(&std::fs::read(path).unwrap()[..2], b"PK", "{file}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engage_wallet_recharges_and_reads_through_the_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let engage = Engage::start(&data, free_port(), &[]).await;
    let run = |args: &[&str]| cli(&engage, &data, args).trim().to_owned();
    assert_eq!(
        run(&[
            "wallet",
            "recharge",
            "--parent",
            "brand-1",
            "--business",
            "o1",
            "--amount",
            "99.50",
            "--reference",
            "neft-7"
        ]),
        "99.5"
    );
    assert_eq!(
        run(&[
            "wallet",
            "recharge",
            "--parent",
            "brand-1",
            "--business",
            "o1",
            "--amount",
            "99.50",
            "--reference",
            "neft-7"
        ]),
        "99.5"
    );
    assert_eq!(run(&["wallet", "recharge", "--parent", "brand-1", "--business", "o1", "--amount", "0.5"]), "100");
    assert_eq!(run(&["wallet", "balance", "--parent", "brand-1", "--business", "o1"]), "100");
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

async fn owners(nats_url: &str) -> BTreeMap<u32, String> {
    let client = async_nats::connect(nats_url).await.unwrap();
    let jetstream = async_nats::jetstream::new(client);
    match jetstream.get_key_value(engage_streams::lease::LEASE_BUCKET).await {
        Ok(bucket) => engage_streams::lease::owners(&bucket).await.unwrap_or_default(),
        Err(_) => BTreeMap::new(),
    }
}

async fn wait_owners(
    nats_url: &str,
    partitions: u32,
    predicate: impl Fn(&BTreeMap<u32, String>) -> bool,
    within: Duration,
) -> BTreeMap<u32, String> {
    let deadline = Instant::now() + within;
    loop {
        let owners = owners(nats_url).await;
        if owners.len() == partitions as usize && predicate(&owners) {
            return owners;
        }
        assert!(Instant::now() < deadline, "partition owners never settled: {owners:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_redemptions_never_overspend_on_nats() {
    let nats = NatsServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let engage = Engage::start(&data, free_port(), &[("ENGAGE_NATS_URL", &nats.url), ("ENGAGE_PARTITIONS", "4")]).await;
    let token = |kind: &str| {
        let output = Command::new(BIN)
            .args(["tokens", "create", "--kind", kind, "--parent", "brand-n"])
            .env("ENGAGE_HTTP_ADDR", format!("127.0.0.1:{}", engage.port))
            .env("ENGAGE_DATA_DIR", &data)
            .env("ENGAGE_NATS_URL", &nats.url)
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    let (staff, integration) = (token("staff"), token("integration"));
    let client = reqwest::Client::new();
    let rules = json!({"parent_business_id": "brand-n", "earn_percent": 10, "min_bill": 0, "min_redeem_points": 1});
    assert_eq!(
        client
            .post(format!("{}/crm_api/add_edit_rules", engage.base))
            .header("token", &staff)
            .json(&rules)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let phone = "9876580000";
    assert_eq!(
        client
            .post(format!("{}/injestion/platform", engage.base))
            .json(&order("brand-n", "n1", phone))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // the order above is worth 1: top up with a large one
    let big = json!({"parentBusinessId": "brand-n", "businessId": "outlet-1", "orderId": "n2", "customer": {"phone": phone}, "amount": 10000, "orderTime": "2026-11-21 10:00:00"});
    assert_eq!(
        client.post(format!("{}/injestion/platform", engage.base)).json(&big).send().await.unwrap().status(),
        200
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = details(&client, &engage.base, "brand-n", phone).await;
        if status == 200 && body["customer"]["loyalty_points"] == 1000 {
            break;
        }
        assert!(Instant::now() < deadline, "points never arrived: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let attempts = (0..200).map(|i| {
        let (client, base, integration) = (client.clone(), engage.base.clone(), integration.clone());
        async move {
            let body = json!({"customer_number": phone, "points": 23, "order_id": format!("pos-{i}")});
            let response = client
                .post(format!("{base}/integration/v1/redeem_points"))
                .header("authorization", integration)
                .json(&body)
                .send()
                .await
                .unwrap();
            crate::helpers::read(response).await
        }
    });
    let answers = futures::future::join_all(attempts).await;
    let succeeded = answers.iter().filter(|(status, _)| *status == 200).count() as i64;
    let refused =
        answers.iter().filter(|(status, body)| *status == 409 && body["error_code"] == "xE_105").count() as i64;
    assert_eq!((succeeded, refused), (1000 / 23, 200 - 1000 / 23));
    // each call's two rows (its order's redemption, the phone's blocklist entry) were read
    // before it reached the actor; those the actor wrote since were read again
    let used = metric(&client, &engage.base, "engage_read_ahead_rows_total{outcome=\"used\"}").await;
    let again = metric(&client, &engage.base, "engage_read_ahead_rows_total{outcome=\"read_again\"}").await;
    assert_eq!(used + again, 400.0, "used {used}, read again {again}");
    assert!(used > 0.0, "no row read ahead was used");
    let response = client
        .post(format!("{}/integration/v1/get_wallet_ledger", engage.base))
        .header("authorization", &integration)
        .json(&json!({"customer_number": phone, "page_size": 100}))
        .send()
        .await
        .unwrap();
    let (_, ledger) = crate::helpers::read(response).await;
    let sum: i64 = ledger["data"].as_array().unwrap().iter().map(|e| e["points"].as_i64().unwrap()).sum();
    assert_eq!(
        (sum, ledger["loyalty_points"].as_i64().unwrap()),
        (1000 - 23 * succeeded, 1000 - 23 * succeeded),
        "the ledger sums to the balance"
    );

    // the day's figures agree with the ledger (rows in NATS KV): one earn (the order worth 1
    // earns nothing) and the redemptions
    let response = client
        .post(format!("{}/crm_api/day/wise/data", engage.base))
        .header("token", &staff)
        .json(&json!({"parent_business_id": "brand-n"}))
        .send()
        .await
        .unwrap();
    let (status, days) = crate::helpers::read(response).await;
    assert_eq!(status, 200, "{days}");
    let totals = &days["totals"];
    assert_eq!(
        (totals["points_earned"].as_i64(), totals["points_redeemed"].as_i64(), totals["transactions"].as_i64()),
        (Some(1000), Some(23 * succeeded), Some(1 + succeeded)),
        "{days}"
    );

    // the expiry job, run by an operator as of 367 days from now (365-day expiry), walks the
    // index in NATS KV and expires what is left
    let later = (chrono::Utc::now() + chrono::Duration::days(367)).to_rfc3339();
    let output = Command::new(BIN)
        .args(["jobs", "run", "points_expiry", "--now", &later])
        .env("ENGAGE_HTTP_ADDR", format!("127.0.0.1:{}", engage.port))
        .env("ENGAGE_DATA_DIR", &data)
        .env("ENGAGE_NATS_URL", &nats.url)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let outcome: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(outcome["points"].as_i64(), Some(1000 - 23 * succeeded), "{outcome}");
    let (_, body) = details(&client, &engage.base, "brand-n", phone).await;
    assert_eq!(body["customer"]["loyalty_points"], 0, "{body}");
}

/// POSTs `body` to `path` on `base` with the headers; (status, answer), or (0, null) when the
/// node is gone.
async fn call(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Value) {
    let mut request = client.post(format!("{base}{path}")).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    match request.send().await {
        Ok(response) => crate::helpers::read(response).await,
        Err(_) => (0, Value::Null),
    }
}

/// Orders applied as new, as `/metrics` of `base` counts them.
async fn applied(client: &reqwest::Client, base: &str) -> u64 {
    metric(client, base, "engage_orders_applied_total{outcome=\"new\"}").await as u64
}

/// The admin key of a [`Pair`]'s nodes.
const PAIR_ADMIN_KEY: &str = "cluster-admin-key";

/// Two engage nodes (A and B) on one nats-server, 16 partitions shared between them with a 3 s
/// lease, sending SMS to a local provider.
struct Pair {
    nats: NatsServer,
    sms: crate::jobs::Provider,
    dir: tempfile::TempDir,
    node_a: Engage,
    node_b: Engage,
    client: reqwest::Client,
}

impl Pair {
    async fn start() -> Self {
        Self::start_with(crate::jobs::provider(&[]).await).await
    }

    /// Like [`Pair::start`], sending SMS to `sms`.
    async fn start_with(sms: crate::jobs::Provider) -> Self {
        let nats = NatsServer::start().await;
        let dir = tempfile::tempdir().unwrap();
        let common = [
            ("ENGAGE_NATS_URL", nats.url.as_str()),
            ("ENGAGE_PARTITIONS", "16"),
            ("ENGAGE_PARTITION_LEASE_SECS", "3"),
            ("ENGAGE_ADMIN_KEY", PAIR_ADMIN_KEY),
            ("ENGAGE_SMS_PROVIDER_URL", sms.url.as_str()),
        ];
        let with = |id: &'static str| common.iter().copied().chain([("ENGAGE_NODE_ID", id)]).collect::<Vec<_>>();
        let node_a = Engage::start(&dir.path().join("a"), free_port(), &with("node-a")).await;
        let node_b = Engage::start(&dir.path().join("b"), free_port(), &with("node-b")).await;
        wait_owners(
            &nats.url,
            16,
            |o| o.values().any(|n| n == "node-a") && o.values().any(|n| n == "node-b"),
            Duration::from_secs(30),
        )
        .await;
        let client = reqwest::Client::builder().timeout(Duration::from_secs(300)).build().unwrap();
        Self { nats, sms, dir, node_a, node_b, client }
    }
}

/// POSTs `orders` to `path` of the second node (8 at a time), then waits until the two nodes
/// together have applied them all.
async fn post_and_process(client: &reqwest::Client, nodes: [&Engage; 2], path: &str, orders: Vec<Value>) {
    let count = orders.len() as u64;
    let posts = futures::stream::iter(orders.into_iter().map(|body| {
        let (client, base) = (client.clone(), nodes[1].base.clone());
        async move {
            let (status, answer) = call(&client, &base, path, &[], &body).await;
            assert_eq!(status, 200, "{answer}");
        }
    }))
    .buffer_unordered(8)
    .collect::<Vec<()>>();
    posts.await;
    let deadline = Instant::now() + Duration::from_secs(240);
    while applied(client, &nodes[0].base).await + applied(client, &nodes[1].base).await < count {
        assert!(Instant::now() < deadline, "the orders were not all processed");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A staff token of `brand`, made through `base`'s admin route with the [`Pair`]'s admin key.
async fn staff_token(client: &reqwest::Client, base: &str, brand: &str) -> String {
    let admin = [("x-admin-key", PAIR_ADMIN_KEY)];
    let (status, token) = call(client, base, "/admin/tokens", &admin, &json!({"kind": "staff", "parent": brand})).await;
    assert_eq!(status, 201, "{token}");
    token["token"].as_str().unwrap().to_owned()
}

/// Waits until the wallet of `tenant`'s `outlet` has been debited, read from the NATS KV store
/// itself (the tenant actor is busy with the job), while `job` still runs.
async fn wait_first_debit(nats_url: &str, tenant: &str, outlet: &str, job: &tokio::task::JoinHandle<(u16, Value)>) {
    let jetstream = async_nats::jetstream::new(async_nats::connect(nats_url).await.unwrap());
    let store = engage_storage::NatsKvStore::open(&jetstream, "engage_store", 1).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let row = engage_storage::Store::get(&store, "business_wallets", tenant, outlet.as_bytes()).await;
        let wallet: Value = row.ok().flatten().and_then(|v| serde_json::from_slice(&v).ok()).unwrap_or_default();
        if wallet["balance"].as_str().is_some_and(|b| b != "1000") {
            return;
        }
        assert!(!job.is_finished(), "the job ended before anything was paid for");
        assert!(Instant::now() < deadline, "nothing was ever paid for");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_mid_journey_run_leaves_no_brand_unsent_and_none_sent_twice_on_retry() {
    const BRANDS: usize = 3;
    const CUSTOMERS: usize = 1_600;
    let Pair { nats, sms, dir: _dir, mut node_a, node_b, client } = Pair::start().await;
    let key = PAIR_ADMIN_KEY;
    let admin = [("x-admin-key", key)];
    let brands: Vec<String> = (0..BRANDS).map(|b| format!("brand-k{b}")).collect();

    // every brand: CUSTOMERS customers who last ordered on 1 January (long lapsed), through node B
    let orders = (0..BRANDS * CUSTOMERS).map(|n| {
        let (b, c) = (n % BRANDS, n / BRANDS);
        json!({"parentBusinessId": format!("brand-k{b}"), "businessId": "outlet-1", "orderId": format!("k-{b}-{c}"),
               "customer": {"phone": format!("97{b}{c:07}")}, "amount": 100, "orderTime": "2026-01-01 10:00:00"})
    });
    post_and_process(&client, [&node_a, &node_b], "/injestion/platform", orders.collect()).await;

    // an enabled lost-customers journey and a wallet of 1,000 per brand
    let mut staff = Vec::new();
    for brand in &brands {
        let token = staff_token(&client, &node_b.base, brand).await;
        let auth = [("token", token.as_str())];
        let saved = call(&client, &node_b.base, "/crm_api/save/campaign/journey", &auth,
            &json!({"parent_business_id": brand, "child_business_id": "0", "campaign_type_id": "6650c0a1e4b0c2f1a9000005",
                    "campaign_data": {"channels": ["sms"], "sms_template": "We miss you", "days": 30}})).await;
        assert_eq!(saved.0, 200, "{}", saved.1);
        let id = saved.1["campaign_journey_id"].clone();
        let enabled = call(
            &client,
            &node_b.base,
            "/crm_api/enable/automated/campaign/",
            &auth,
            &json!({"parent_business_id": brand, "campaign_journey_id": id, "campaign_enabled": 1}),
        )
        .await;
        assert_eq!(enabled.0, 200, "{}", enabled.1);
        let recharged = call(
            &client,
            &node_b.base,
            "/crm_api/wallet/recharge",
            &auth,
            &json!({"parent_business_id": brand, "business_id": "outlet-1", "amount": 1000, "reference": "k"}),
        )
        .await;
        assert_eq!(recharged.0, 200, "{}", recharged.1);
        staff.push(token);
    }
    let balance = |n: usize| {
        let (client, base, brand, token) = (client.clone(), node_b.base.clone(), brands[n].clone(), staff[n].clone());
        async move {
            let (_, wallet) = call(
                &client,
                &base,
                "/crm_api/wallet/balance",
                &[("token", token.as_str())],
                &json!({"parent_business_id": brand, "business_id": "outlet-1"}),
            )
            .await;
            wallet["balance"].as_str().unwrap_or("1000").parse::<f64>().unwrap_or(1000.0)
        }
    };

    // the run starts on node A; A is killed once a first page is paid for, mid-brand
    let now = (chrono::Utc::now() + chrono::Duration::minutes(5)).to_rfc3339();
    let job = json!({"name": "journeys", "now": now});
    let first = tokio::spawn({
        let (client, base, job) = (client.clone(), node_a.base.clone(), job.clone());
        async move { call(&client, &base, "/admin/jobs/run", &[("x-admin-key", key)], &job).await }
    });
    // the run takes the brands in order: brand-k0's first page of 1,000 is paid for first, and
    // A dies while it works on the second
    wait_first_debit(&nats.url, "brand-k0", "outlet-1", &first).await;
    node_a.kill9();
    let (status, answer) = first.await.unwrap();
    assert_eq!(status, 0, "node A finished the run before it was killed, so nothing was tested: {answer}");
    let mut before_retry = Vec::new();
    for n in 0..BRANDS {
        before_retry.push(((1000.0 - balance(n).await) / 0.1711).round() as usize);
    }
    let partial: usize = before_retry.iter().sum();
    assert!(partial > 0 && partial < BRANDS * CUSTOMERS, "sends paid before the kill: {before_retry:?}");

    // node B takes A's partitions; the run is retried there and finishes every brand
    wait_owners(&nats.url, 16, |o| o.values().all(|n| n == "node-b"), Duration::from_secs(20)).await;
    let (status, retried) = call(&client, &node_b.base, "/admin/jobs/run", &admin, &job).await;
    assert_eq!(status, 200, "{retried}");
    assert_eq!(retried["outcome"]["brands"], BRANDS, "{retried}");
    // (a customer whose debit committed just before the kill but whose decision did not is
    // counted again here, and paid nothing: the balances below are exact)
    let resent = retried["outcome"]["sent"].as_u64().unwrap() as usize;
    eprintln!("paid before the kill, per brand: {before_retry:?}; sent by the retry: {resent}");
    assert!(resent >= BRANDS * CUSTOMERS - partial, "the retry left customers unsent: {retried}");
    for (n, brand) in brands.iter().enumerate() {
        // every customer paid for exactly once: 1,600 campaign SMS at 0.1711
        let spent = ((1000.0 - balance(n).await) * 10_000.0).round() as i64;
        assert_eq!(spent, CUSTOMERS as i64 * 1711, "{brand}");
    }
    // the next day's drain delivers one message to every customer of every brand
    let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1) + chrono::Duration::minutes(5)).to_rfc3339();
    let (status, drained) =
        call(&client, &node_b.base, "/admin/jobs/run", &admin, &json!({"name": "sms_drain", "now": tomorrow})).await;
    assert_eq!(status, 200, "{drained}");
    let (received, phones) = sms.deliveries();
    assert_eq!(
        (received, phones, drained["outcome"]["unpaid"].clone()),
        (BRANDS * CUSTOMERS, BRANDS * CUSTOMERS, json!(0)),
        "{drained}"
    );
}

/// An operator's drain on each node at once (or one of them and the schedule's): each message goes
/// out once, as the run key in the lease bucket lets one drain run at a time across the nodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drains_on_two_nodes_at_once_send_each_message_once() {
    const RECIPIENTS: usize = 40;
    let sms = crate::jobs::slow_provider(&[], Duration::from_millis(200)).await;
    let Pair { nats: _nats, sms, dir: _dir, node_a, node_b, client } = Pair::start_with(sms).await;
    let brand = "brand-dr";
    let token = staff_token(&client, &node_b.base, brand).await;
    let recipients: Vec<String> = (0..RECIPIENTS).map(|n| format!("98765{n:05}")).collect();
    for (path, body) in [
        (
            "/crm_api/configure_fraud_alert_settings",
            json!({"alert_recipients": recipients, "channel_type": "sms", "template": "Check {contact}"}),
        ),
        ("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 1000})),
        ("/crm_api/send_fraud_alert", json!({"business_id": "outlet-1", "contact": "9000000000"})),
    ] {
        let mut body = body;
        body["parent_business_id"] = json!(brand);
        let (status, answer) = call(&client, &node_b.base, path, &[("token", token.as_str())], &body).await;
        assert_eq!(status, 200, "{path}: {answer}");
    }
    let (admin, job) = ([("x-admin-key", PAIR_ADMIN_KEY)], json!({"name": "sms_drain"}));
    let ((status_a, on_a), (status_b, on_b)) = tokio::join!(
        call(&client, &node_a.base, "/admin/jobs/run", &admin, &job),
        call(&client, &node_b.base, "/admin/jobs/run", &admin, &job),
    );
    assert_eq!((status_a, status_b), (200, 200), "{on_a} {on_b}");
    let sent = on_a["outcome"]["sent"].as_u64().unwrap() + on_b["outcome"]["sent"].as_u64().unwrap();
    let (received, phones) = sms.deliveries();
    assert_eq!((received, phones, sent as usize), (RECIPIENTS, RECIPIENTS, RECIPIENTS), "{on_a} {on_b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_mid_bill_generation_leaves_no_order_unbilled_and_none_billed_twice() {
    const BRANDS: usize = 3;
    const ORDERS: usize = 600;
    let Pair { nats, sms, dir, mut node_a, node_b, client } = Pair::start().await;
    let key = PAIR_ADMIN_KEY;
    let admin = [("x-admin-key", key)];
    let brands: Vec<String> = (0..BRANDS).map(|b| format!("brand-bk{b}")).collect();

    // every brand: ORDERS pos_a orders, processed before any brand has bills on
    let orders = (0..BRANDS * ORDERS).map(|n| {
        let (b, o) = (n % BRANDS, n / BRANDS);
        json!({"parentBusinessId": format!("brand-bk{b}"), "businessId": "outlet-1", "orderId": format!("bk-{b}-{o}"),
               "customer": {"phone": format!("98{b}{o:07}")}, "amount": 100})
    });
    post_and_process(&client, [&node_a, &node_b], "/injestion/pos_a", orders.collect()).await;

    // bills on (brand-level, SMS, immediate) and a wallet of 1,000 per brand
    let mut staff = Vec::new();
    for brand in &brands {
        let token = staff_token(&client, &node_b.base, brand).await;
        let auth = [("token", token.as_str())];
        for (path, body) in [
            ("/crm_api/links/addBusinessConfig", json!({"mode": 1, "time": 0, "status": 1})),
            ("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 1000, "reference": "bk"})),
        ] {
            let mut body = body;
            body["parent_business_id"] = json!(brand);
            let (status, answer) = call(&client, &node_b.base, path, &auth, &body).await;
            assert_eq!(status, 200, "{path}: {answer}");
        }
        staff.push(token);
    }
    let ask = |n: usize, path: &'static str, body: Value| {
        let (client, base, brand, token) = (client.clone(), node_b.base.clone(), brands[n].clone(), staff[n].clone());
        async move {
            let mut body = body;
            body["parent_business_id"] = json!(brand);
            call(&client, &base, path, &[("token", token.as_str())], &body).await.1
        }
    };

    // generation starts on node A; A is killed once brand-bk0's first bill is paid for
    let job = json!({"name": "bill_generation"});
    let first = tokio::spawn({
        let (client, base, job) = (client.clone(), node_a.base.clone(), job.clone());
        async move { call(&client, &base, "/admin/jobs/run", &[("x-admin-key", key)], &job).await }
    });
    wait_first_debit(&nats.url, "brand-bk0", "outlet-1", &first).await;
    node_a.kill9();
    let (status, answer) = first.await.unwrap();
    assert_eq!(status, 0, "node A finished the job before it was killed, so nothing was tested: {answer}");

    // node B takes A's partitions; the job is run again there and bills every order left
    wait_owners(&nats.url, 16, |o| o.values().all(|n| n == "node-b"), Duration::from_secs(20)).await;
    let (status, retried) = call(&client, &node_b.base, "/admin/jobs/run", &admin, &job).await;
    let log = std::fs::read_to_string(dir.path().join("b").with_extension(format!("{}.log", node_b.port)));
    let errors: Vec<String> = log
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("ERROR") || l.contains("WARN"))
        .map(str::to_owned)
        .collect();
    assert_eq!(status, 200, "{retried}; node B's errors: {errors:#?}");
    let left = retried["outcome"]["generated"].as_u64().unwrap() as usize;
    assert!(left > 0 && left < BRANDS * ORDERS, "the retry billed {left}: {retried}");
    for (n, brand) in brands.iter().enumerate() {
        let bills = ask(n, "/crm_api/get_digital_bill_customers", json!({})).await;
        assert_eq!(bills["total"], ORDERS, "{brand}: {bills}");
        // every order paid for exactly once: ORDERS SMS bills at 0.1711
        let wallet = ask(n, "/crm_api/wallet/balance", json!({"business_id": "outlet-1"})).await;
        let spent = ((1000.0 - wallet["balance"].as_str().unwrap().parse::<f64>().unwrap()) * 10_000.0).round();
        assert_eq!(spent as i64, ORDERS as i64 * 1711, "{brand}: {wallet}");
    }
    // a third run finds nothing to bill; the drain sends one bill to every customer
    let (_, again) = call(&client, &node_b.base, "/admin/jobs/run", &admin, &job).await;
    assert_eq!(again["outcome"]["generated"], 0, "{again}");
    let (_, drained) = call(&client, &node_b.base, "/admin/jobs/run", &admin, &json!({"name": "sms_drain"})).await;
    let (received, phones) = sms.deliveries();
    assert_eq!((received, phones), (BRANDS * ORDERS, BRANDS * ORDERS), "{drained}");
}

/// The value of the first `/metrics` line of `base` that starts with `prefix` (0 when absent).
async fn metric(client: &reqwest::Client, base: &str, prefix: &str) -> f64 {
    let Ok(response) = client.get(format!("{base}/metrics")).send().await else { return 0.0 };
    let text = response.text().await.unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn chat_receipts_on_nats_are_consumed_in_batches_of_twenty() {
    let nats = NatsServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let engage = Engage::start(
        &dir.path().join("data"),
        free_port(),
        &[("ENGAGE_NATS_URL", &nats.url), ("ENGAGE_PARTITIONS", "4"), ("ENGAGE_PARTITION_LEASE_SECS", "3")],
    )
    .await;
    let client = reqwest::Client::new();
    // published while nothing is consuming them yet would be the same: the consumer is durable
    for i in 0..45 {
        let body = json!({"message_id": format!("m{i}"), "status": "read"});
        let (status, answer) = call(&client, &engage.base, "/chat/receipts", &[], &body).await;
        assert_eq!((status, answer["status"].clone()), (200, json!(1)), "{answer}");
    }
    let subject = "{subject=\"engage.chat.receipts\"}";
    let deadline = Instant::now() + Duration::from_secs(20);
    while metric(&client, &engage.base, &format!("engage_chat_events_total{subject}")).await < 45.0 {
        assert!(Instant::now() < deadline, "the receipts were not all consumed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // every event once, in batches of at most 20 (so at least 3 batches)
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(metric(&client, &engage.base, &format!("engage_chat_events_total{subject}")).await, 45.0);
    assert_eq!(metric(&client, &engage.base, &format!("engage_chat_batch_size_sum{subject}")).await, 45.0);
    assert!(metric(&client, &engage.base, &format!("engage_chat_batch_size_count{subject}")).await >= 3.0);
    let text = client.get(format!("{}/metrics", engage.base)).send().await.unwrap().text().await.unwrap();
    let largest = text
        .lines()
        .find(|l| l.starts_with("engage_chat_batch_size{") && l.contains("receipts") && l.contains("quantile=\"1\""))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no largest batch in {text}"));
    assert!(largest <= 20.0 && largest > 0.0, "largest batch {largest}");
}

#[tokio::test]
async fn stats_rollups_on_nats_kv_answer_the_same_through_either_node() {
    // the servers stay bound: a field left to `..` would be dropped (and stopped) at once
    let Pair { nats: _nats, sms: _sms, dir: _dir, node_a, node_b, client } = Pair::start().await;
    let brands = ["brand-st0", "brand-st1", "brand-st2"];
    // 3 brands x 90 orders over 2 outlets and 5 days; then 15 of them updated to a new amount
    let order = |b: usize, o: usize, amount: u64| {
        json!({"parentBusinessId": brands[b], "businessId": format!("o{}", o % 2), "orderId": format!("st-{b}-{o}"),
               "customer": {"phone": format!("97{b}{:07}", o % 40)}, "amount": amount,
               "items": [{"name": "thali", "qty": 1, "price": amount}],
               "orderTime": format!("2026-10-0{} 1{}:00:00", 1 + o % 5, o % 10)})
    };
    let orders = (0..270).map(|n| order(n % 3, n / 3, 100 + (n / 3) as u64)).collect();
    post_and_process(&client, [&node_a, &node_b], "/injestion/platform", orders).await;
    for n in 0..15 {
        let (status, answer) = call(&client, &node_a.base, "/injestion/platform", &[], &order(n % 3, n, 1000)).await;
        assert_eq!(status, 200, "{answer}");
    }
    for (b, brand) in brands.iter().enumerate() {
        // amounts 100..189; the 5 updated orders of this brand (o = b, b+3, …) now 1000 each
        let updated: Vec<u64> = (0..15).filter(|n| n % 3 == b).map(|n| n as u64).collect();
        let revenue: u64 = (0..90u64).map(|o| if updated.contains(&o) { 1000 } else { 100 + o }).sum();
        let token = staff_token(&client, &node_b.base, brand).await;
        let body = json!({"parent_business_id": brand, "start": "2026-10-01", "end": "2026-10-05"});
        let mut answers = Vec::new();
        for node in [&node_a, &node_b] {
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let (status, summary) =
                    call(&client, &node.base, "/stats/dashboard/summary", &[("token", token.as_str())], &body).await;
                assert_eq!(status, 200, "{summary}");
                let totals = &summary["data"]["totals"];
                if totals["orders"] == 90 && totals["revenue"].as_f64() == Some(revenue as f64) {
                    answers.push(summary["data"].clone());
                    break;
                }
                assert!(Instant::now() < deadline, "{brand} via {}: {summary} (want revenue {revenue})", node.base);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        assert_eq!(answers[0], answers[1], "both nodes answer the same");
        let (_, outlets) =
            call(&client, &node_a.base, "/stats/metrics/outlets", &[("token", token.as_str())], &body).await;
        let counted: Vec<i64> =
            outlets["data"]["outlets"].as_array().unwrap().iter().map(|o| o["orders"].as_i64().unwrap()).collect();
        assert_eq!(counted, vec![45, 45], "{outlets}");
    }
}
