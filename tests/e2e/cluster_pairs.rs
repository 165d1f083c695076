//! Two engine nodes and an ingress on NATS (a [`Pair`]), as operators run them: a node killed
//! mid journey run or mid bill generation, drains on both nodes at once, chat receipts and stats
//! rollups answered through either node, two hundred concurrent redemptions on two nodes. Each test
//! starts its own `nats-server -js`.

use std::process::Command;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};

use crate::cluster_kit::*;

use crate::procs::{free_port, Engage, NatsServer, BIN};

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
        crate::cluster_kit::wait_shared(&nats.url, 16, "node-a", "node-b").await;
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
    let why = || node_b.stderr().lines().filter(|l| l.contains("failed for a brand")).collect::<Vec<_>>().join("\n");
    assert_eq!(status, 200, "{retried}\nnode B says:\n{}", why());
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
    // the order that gave the points was read ahead with its batch (one batched direct get)
    let event_rows = metric(&client, &engage.base, "engage_event_rows_read_ahead_total{outcome=\"used\"}").await;
    assert!(event_rows >= 4.0, "the order's rows were not read with its batch: {event_rows}");
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
