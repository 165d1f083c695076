//! A three-server NATS cluster on loopback, as operators run one (`ENGAGE_NATS_URL` lists all
//! three, `ENGAGE_NATS_REPLICAS=3`): an ingress and two actor nodes under a stream of orders while
//! one server is killed with SIGKILL, twice (the orders stream's leader, then, once it is back,
//! the store bucket's leader). Each phase prints its figures (POST outage, processing stall) for
//! `docs/benchmarks/`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::procs::{free_port, settled, Engage, NatsCluster};

/// One POST: when it was sent, how long it took, its status (0: no answer), and the order.
#[derive(Clone, Debug)]
struct Post {
    sent: Instant,
    took: Duration,
    status: u16,
    tenant: String,
    phone: String,
}

/// Posts orders from `workers` producers until `stop`, recording every POST.
async fn produce(base: String, workers: usize, stop: Arc<AtomicBool>, posts: Arc<Mutex<Vec<Post>>>) {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let tasks = (0..workers).map(|w| {
        let (client, base, stop, posts) = (client.clone(), base.clone(), stop.clone(), posts.clone());
        async move {
            let mut i = 0u32;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let tenant = format!("brand-{}", (w as u32 * 5 + i) % 12);
                let phone = format!("93{w:02}{i:06}");
                let body = json!({"parentBusinessId": tenant, "businessId": "outlet-1",
                    "orderId": format!("f-{w}-{i}"), "customer": {"phone": phone}, "amount": 1,
                    "orderTime": "2026-11-21 10:00:00"});
                let sent = Instant::now();
                let status = match client.post(format!("{base}/injestion/platform")).json(&body).send().await {
                    Ok(response) => response.status().as_u16(),
                    Err(_) => 0,
                };
                posts.lock().unwrap().push(Post { sent, took: sent.elapsed(), status, tenant, phone });
                if status != 200 {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                } else {
                    tokio::time::sleep(Duration::from_millis(15)).await;
                }
            }
        }
    });
    futures::future::join_all(tasks).await;
}

/// `/readyz` of `bases`, every 250 ms until `stop`: (when, base index, status).
async fn sample_readiness(bases: Vec<String>, stop: Arc<AtomicBool>, samples: Arc<Mutex<Vec<(Instant, usize, u16)>>>) {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(3)).build().unwrap();
    while !stop.load(Ordering::SeqCst) {
        for (i, base) in bases.iter().enumerate() {
            let status = client.get(format!("{base}/readyz")).send().await.map_or(0, |r| r.status().as_u16());
            samples.lock().unwrap().push((Instant::now(), i, status));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Whether `(tenant, phone)` has its order counted, read through `base`.
async fn counted(client: &reqwest::Client, base: &str, tenant: &str, phone: &str) -> bool {
    let response = client
        .post(format!("{base}/crm_api/get/customer/details"))
        .json(&json!({"parent_business_id": tenant, "customer_number": phone}))
        .send()
        .await;
    match response {
        Ok(response) if response.status() == 200 => {
            let body: serde_json::Value = response.json().await.unwrap_or_default();
            body["customer"]["total_orders"].as_u64().is_some()
        }
        _ => false,
    }
}

/// Kills `server` under load and checks the promises; returns (POST outage, processing stall).
async fn kill_under_load(
    cluster: &mut NatsCluster,
    server: usize,
    ingress: &str,
    posts: &Mutex<Vec<Post>>,
    readiness: &Mutex<Vec<(Instant, usize, u16)>>,
) -> (Duration, Duration) {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    cluster.kill(server);
    let killed = Instant::now();
    // processing resumes: an order acknowledged after the kill is counted, within 30 s
    let stall = loop {
        let after: Vec<Post> = posts
            .lock()
            .unwrap()
            .iter()
            .filter(|p| p.sent > killed && p.status == 200)
            .rev()
            .take(3)
            .cloned()
            .collect();
        let mut resumed = false;
        for post in &after {
            if counted(&client, ingress, &post.tenant, &post.phone).await {
                resumed = true;
            }
        }
        if resumed {
            break killed.elapsed();
        }
        assert!(killed.elapsed() < Duration::from_secs(30), "processing did not resume within 30 s of the kill");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // then every process says it is ready while the server stays down
    let deadline = killed + Duration::from_secs(30);
    loop {
        let since = Instant::now();
        tokio::time::sleep(Duration::from_millis(800)).await;
        let samples = readiness.lock().unwrap().clone();
        let recent: Vec<_> = samples.iter().filter(|(at, _, _)| *at > since).collect();
        if recent.len() >= 3 && recent.iter().all(|(_, _, status)| *status == 200) {
            break;
        }
        assert!(Instant::now() < deadline, "/readyz is not 200 again 30 s after the kill: {recent:?}");
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let posts: Vec<Post> = posts.lock().unwrap().iter().filter(|p| p.sent + p.took > killed).cloned().collect();
    // every POST answered 200 or a clear 503, within a bound
    for post in &posts {
        assert!(post.status == 200 || post.status == 503, "a POST during the outage answered {}", post.status);
        assert!(post.took < Duration::from_secs(12), "a POST took {:?}", post.took);
    }
    // the outage: the longest time without an acknowledged POST
    let mut acks: Vec<Instant> = posts.iter().filter(|p| p.status == 200).map(|p| p.sent + p.took).collect();
    acks.sort();
    let mut outage = acks.first().map_or(Duration::ZERO, |first| first.saturating_duration_since(killed));
    for pair in acks.windows(2) {
        outage = outage.max(pair[1] - pair[0]);
    }
    // /readyz told the truth: while no POST was acknowledged for 3 s or more, the ingress said so
    let refused: Vec<&Post> = posts.iter().filter(|p| p.status == 503).collect();
    if outage >= Duration::from_secs(3) && !refused.is_empty() {
        let first = refused.first().map(|p| p.sent).unwrap_or(killed);
        let last = refused.last().map(|p| p.sent + p.took).unwrap_or(killed);
        let said = readiness
            .lock()
            .unwrap()
            .iter()
            .any(|(at, i, status)| *i == 0 && *status == 503 && *at >= first && *at <= last);
        assert!(said, "POSTs were refused for {outage:?} while the ingress's /readyz answered 200");
    }
    (outage, stall)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_one_of_three_nats_servers_under_load_loses_no_acknowledged_order() {
    let (mut cluster, urls, js) = NatsCluster::formed().await;
    let dir = tempfile::tempdir().unwrap();
    let common = [
        ("ENGAGE_NATS_URL", urls.as_str()),
        ("ENGAGE_NATS_REPLICAS", "3"),
        ("ENGAGE_PARTITIONS", "8"),
        ("ENGAGE_PARTITION_LEASE_SECS", "6"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        common.iter().copied().chain(extra.iter().copied()).collect::<Vec<_>>()
    };
    let node_a = Engage::start(
        &dir.path().join("a"),
        free_port(),
        &with(&[("ENGAGE_ROLE", "node"), ("ENGAGE_NODE_ID", "node-a")]),
    )
    .await;
    let node_b = Engage::start(
        &dir.path().join("b"),
        free_port(),
        &with(&[("ENGAGE_ROLE", "node"), ("ENGAGE_NODE_ID", "node-b")]),
    )
    .await;
    let ingress = Engage::start(&dir.path().join("i"), free_port(), &with(&[("ENGAGE_ROLE", "ingress")])).await;

    // every stream and bucket engage made has three replicas
    for name in ["ENGAGE_ORDERS", "ENGAGE_CHAT", "ENGAGE_DEAD_LETTERS", "KV_engage_store", "KV_engage_leases"] {
        let mut stream = js.get_stream(name).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let info = stream.info().await.unwrap();
        assert_eq!(info.config.num_replicas, 3, "{name}");
        assert_eq!(info.cluster.as_ref().map(|c| c.replicas.len()), Some(2), "{name}: {:?}", info.cluster);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let posts = Arc::new(Mutex::new(Vec::new()));
    let readiness = Arc::new(Mutex::new(Vec::new()));
    let producer = tokio::spawn(produce(ingress.base.clone(), 4, stop.clone(), posts.clone()));
    let sampler = tokio::spawn(sample_readiness(
        vec![ingress.base.clone(), node_a.base.clone(), node_b.base.clone()],
        stop.clone(),
        readiness.clone(),
    ));
    tokio::time::sleep(Duration::from_secs(3)).await;

    // 1. the orders stream's leader
    let leader = settled(&js, "ENGAGE_ORDERS", Duration::from_secs(20)).await.leader.unwrap();
    let server = NatsCluster::index_of(&leader);
    let (outage, stall) = kill_under_load(&mut cluster, server, &ingress.base, &posts, &readiness).await;
    eprintln!("FIGURES orders-stream leader {leader} killed: POST outage {outage:?}, processing stall {stall:?}");
    cluster.start_server(server).await;
    for name in ["ENGAGE_ORDERS", "KV_engage_store", "KV_engage_leases"] {
        settled(&js, name, Duration::from_secs(60)).await;
    }

    // 2. the store bucket's leader
    let leader = settled(&js, "KV_engage_store", Duration::from_secs(20)).await.leader.unwrap();
    let server = NatsCluster::index_of(&leader);
    let (outage, stall) = kill_under_load(&mut cluster, server, &ingress.base, &posts, &readiness).await;
    eprintln!("FIGURES store-bucket leader {leader} killed: POST outage {outage:?}, processing stall {stall:?}");

    stop.store(true, Ordering::SeqCst);
    producer.await.unwrap();
    sampler.await.unwrap();
    let posts = posts.lock().unwrap().clone();
    let acked: Vec<(String, String)> =
        posts.iter().filter(|p| p.status == 200).map(|p| (p.tenant.clone(), p.phone.clone())).collect();
    eprintln!("FIGURES {} orders posted, {} acknowledged", posts.len(), acked.len());
    assert!(acked.len() > 200, "the load was too light to mean anything: {} acknowledged", acked.len());
    // nothing acknowledged is lost or doubled, read back while the second server is still down
    let client = reqwest::Client::new();
    crate::cluster_kit::wait_each_counted_once(&client, &ingress.base, &acked, Duration::from_secs(120)).await;
}

/// The server list works when its first server is down, and a setting that changes the replica
/// count changes the streams and buckets made before, with a log line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engage_starts_with_a_server_of_its_list_down_and_reconciles_replica_counts() {
    let (mut cluster, urls, js) = NatsCluster::formed().await;
    let dir = tempfile::tempdir().unwrap();
    let names = ["ENGAGE_ORDERS", "ENGAGE_CHAT", "ENGAGE_DEAD_LETTERS", "KV_engage_store", "KV_engage_leases"];
    // the first server of the list is down: engage starts on the others, one replica each
    // (operators meet it as a server down for a while: the cluster has a leader again first).
    // Each probe has its own name: a stream the servers placed on the killed server before they
    // saw it go is never answered, and asking again for the same name asks that server again.
    cluster.kill(0);
    let killed = Instant::now();
    for attempt in 0.. {
        let made = js
            .create_stream(async_nats::jetstream::stream::Config {
                name: format!("PROBE{attempt}"),
                subjects: vec![format!("probe{attempt}")],
                ..Default::default()
            })
            .await;
        if made.is_ok() {
            js.delete_stream(format!("PROBE{attempt}")).await.unwrap();
            break;
        }
        assert!(killed.elapsed() < Duration::from_secs(60), "the cluster never took a new stream: {made:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!("FIGURES a stream could be made {:?} after the kill", killed.elapsed());
    let port = free_port();
    let env = [("ENGAGE_NATS_URL", urls.as_str()), ("ENGAGE_PARTITIONS", "4")];
    let mut first = Engage::start(&dir.path().join("one"), port, &env).await;
    for name in names {
        let mut stream = js.get_stream(name).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(stream.info().await.unwrap().config.num_replicas, 1, "{name}");
    }
    first.kill9();
    // all three up, the setting raised: every one is changed to three, and the log says so
    cluster.start_server(0).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let env = [
        ("ENGAGE_NATS_URL", urls.as_str()),
        ("ENGAGE_PARTITIONS", "4"),
        ("ENGAGE_NATS_REPLICAS", "3"),
        ("ENGAGE_NATS_REPLICAS_BY_NAME", "ENGAGE_CHAT=1"),
    ];
    let second = Engage::start(&dir.path().join("two"), free_port(), &env).await;
    for name in names {
        let mut stream = js.get_stream(name).await.unwrap();
        let wanted = if name == "ENGAGE_CHAT" { 1 } else { 3 };
        assert_eq!(stream.info().await.unwrap().config.num_replicas, wanted, "{name}");
    }
    let log = second.stderr();
    assert_eq!(log.matches("stream replica count changed to the setting").count(), 4, "{log}");
    assert!(log.contains("KV_engage_store") && log.contains("from=1") && log.contains("to=3"), "{log}");
}
