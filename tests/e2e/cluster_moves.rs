//! Planned moves, as an operator makes them every week: a node stopped with SIGTERM while orders
//! stream in, a node added, and the ingress restarted under load. Nothing acknowledged is lost or
//! counted twice, no order waits out a lease (10 s) for a partition that changed hands, reads of
//! the moving brands keep answering, and no request is reset. Each run prints its figures
//! (`docs/benchmarks/29-issue-65-planned-moves-and-restarts-2356494.md`, "Planned moves").

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cluster_kit::{
    answered_or_refused, details, lag, restart_outcome, stream_orders, wait_acked, wait_each_counted_once, wait_owners,
};
use crate::procs::{free_port, Engage, NatsServer};

/// Reads `tenant`'s customer through `base` until `stop`: (latency, status) of each read.
async fn read_on(
    base: String,
    tenant: String,
    phone: String,
    stop: Arc<AtomicBool>,
    reads: Arc<Mutex<Vec<(Duration, u16)>>>,
) {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    while !stop.load(Ordering::SeqCst) {
        let started = Instant::now();
        let (status, _) = details(&client, &base, &tenant, &phone).await;
        reads.lock().unwrap().push((started.elapsed(), status));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_and_a_new_node_hand_orders_and_reads_over_without_waiting_a_lease() {
    let nats = NatsServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    // as operators run it: 16 partitions, the default 10 s lease
    let node = |id: &'static str| {
        vec![
            ("ENGAGE_NATS_URL", nats.url.clone()),
            ("ENGAGE_ROLE", "node".to_owned()),
            ("ENGAGE_NODE_ID", id.to_owned()),
            ("ENGAGE_PARTITIONS", "16".to_owned()),
        ]
    };
    let start = |name: &'static str, env: Vec<(&'static str, String)>| {
        let path = dir.path().join(name);
        async move {
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            Engage::start(&path, free_port(), &env).await
        }
    };
    let mut node_a = start("a", node("node-a")).await;
    let node_b = start("b", node("node-b")).await;
    let ingress = start(
        "i",
        vec![
            ("ENGAGE_NATS_URL", nats.url.clone()),
            ("ENGAGE_ROLE", "ingress".to_owned()),
            ("ENGAGE_PARTITIONS", "16".to_owned()),
        ],
    )
    .await;
    crate::cluster_kit::wait_shared(&nats.url, 16, "node-a", "node-b").await;
    let client = reqwest::Client::new();

    // one customer per brand of 40, read over and over while the brands move
    for b in 0..40 {
        let body = crate::cluster_kit::order(&format!("brand-{b}"), &format!("seed-{b}"), "9800000000");
        assert_eq!(
            client.post(format!("{}/injestion/platform", ingress.base)).json(&body).send().await.unwrap().status(),
            200
        );
    }
    let seeded: Vec<(String, String)> = (0..40).map(|b| (format!("brand-{b}"), "9800000000".to_owned())).collect();
    wait_each_counted_once(&client, &ingress.base, &seeded, Duration::from_secs(60)).await;
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(Mutex::new(Vec::new()));
    let readers: Vec<_> = (0..40)
        .step_by(5)
        .map(|b| {
            tokio::spawn(read_on(
                ingress.base.clone(),
                format!("brand-{b}"),
                "9800000000".to_owned(),
                stop.clone(),
                reads.clone(),
            ))
        })
        .collect();
    let acked = Arc::new(Mutex::new(Vec::new()));
    let producer = tokio::spawn(stream_orders(ingress.base.clone(), 40, 4, stop.clone(), acked.clone()));
    wait_acked(&acked, 150).await;

    // a graceful stop with orders in flight: node-b has them all soon after
    let stopped_at = Instant::now();
    node_a.terminate();
    assert!(node_a.wait_exit(Duration::from_secs(60)).await, "node-a exits cleanly:\n{}", node_a.stderr());
    let exited = stopped_at.elapsed();
    wait_owners(&nats.url, 16, |o| o.values().all(|n| n == "node-b"), Duration::from_secs(20)).await;
    let handed = stopped_at.elapsed();
    let count = acked.lock().unwrap().len();
    wait_acked(&acked, count + 150).await;

    // a node added: it takes its share from node-b and is ready once it processes some
    let added_at = Instant::now();
    let node_c = {
        let env = node("node-c");
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Engage::spawn(&dir.path().join("c"), free_port(), &env)
    };
    // its /readyz says it is joining until it processes a partition, and ready only then
    let mut said = Vec::new();
    loop {
        let answer = client.get(format!("{}/readyz", node_c.base)).send().await;
        if let Ok(answer) = answer {
            let status = answer.status().as_u16();
            said.push(answer.text().await.unwrap_or_default());
            if status == 200 {
                let owners = crate::cluster_kit::owners(&nats.url).await;
                assert!(owners.values().any(|n| n == "node-c"), "ready while holding no partition: {owners:?}");
                break;
            }
        }
        assert!(
            added_at.elapsed() < Duration::from_secs(30),
            "node-c never became ready: {said:?}\n{}",
            node_c.stderr()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(said.iter().any(|body| body.contains("joining")), "a joining node says so on /readyz: {said:?}");
    let ready = added_at.elapsed();
    wait_owners(&nats.url, 16, |o| o.values().filter(|n| *n == "node-c").count() == 8, Duration::from_secs(30)).await;
    let shared = added_at.elapsed();
    let count = acked.lock().unwrap().len();
    wait_acked(&acked, count + 150).await;

    stop.store(true, Ordering::SeqCst);
    producer.await.unwrap();
    for reader in readers {
        reader.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    wait_each_counted_once(&client, &ingress.base, &acked, Duration::from_secs(60)).await;

    // what the nodes that processed after the moves measured, bus publish to processing
    let (mut all, mut within) = (0.0, 0.0);
    for base in [&node_b.base, &node_c.base] {
        let (a, w) = lag(&client, base, "5").await;
        all += a;
        within += w;
    }
    let (_, within_1s) = {
        let (a, w) = lag(&client, &node_b.base, "1").await;
        let (c, x) = lag(&client, &node_c.base, "1").await;
        (a + c, w + x)
    };
    let reads = reads.lock().unwrap().clone();
    let slowest = reads.iter().map(|(took, _)| *took).max().unwrap_or_default();
    let failed: Vec<_> = reads.iter().filter(|(_, status)| *status != 200).collect();
    eprintln!(
        "planned moves: {} orders acked; node-a exited {exited:?} after SIGTERM, all partitions on node-b {handed:?} after it; \
         node-c ready {ready:?} and holding its 8 {shared:?} after its start; of {all} orders processed on b and c \
         {within} within 5 s and {within_1s} within 1 s of their publish; {} reads, slowest {slowest:?}, {} not 200",
        acked.len(),
        reads.len(),
        failed.len()
    );
    // a lease is 10 s: before, an order node-a had fetched waited it out on node-b
    assert_eq!(within, all, "an order waited more than 5 s for a partition that moved");
    assert!(failed.is_empty(), "reads of a moving brand failed: {failed:?}");
    assert!(slowest < Duration::from_secs(5), "a read of a moving brand took {slowest:?}");
    assert!(all > 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarting_under_load_answers_every_request_it_accepted_and_resets_none() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let env = [("ENGAGE_SHUTDOWN_DRAIN_SECS", "2")];
    let mut server = Engage::start(&data, port, &env).await;
    let base = server.base.clone();

    // producers on keep-alive connections, readers and a readiness probe, until stopped
    let stop = Arc::new(AtomicBool::new(false));
    let outcomes = Arc::new(Mutex::new(Vec::<(Instant, String)>::new()));
    let acked = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let (client, base, stop, outcomes, acked) =
                (client.clone(), base.clone(), stop.clone(), outcomes.clone(), acked.clone());
            tokio::spawn(async move {
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    let (tenant, phone) = (format!("brand-{}", i % 5), format!("97{w:02}{i:06}"));
                    let order = crate::cluster_kit::order(&tenant, &format!("r-{w}-{i}"), &phone);
                    let sent = client.post(format!("{base}/injestion/platform")).json(&order).send().await;
                    let read = client.get(format!("{base}/readyz")).send().await;
                    for (what, result) in [("order", sent), ("readyz", read)] {
                        let (outcome, status) = restart_outcome(what, result).await;
                        if what == "order" && status == 200 {
                            acked.lock().unwrap().push((tenant.clone(), phone.clone()));
                        }
                        outcomes.lock().unwrap().push((Instant::now(), outcome));
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        })
        .collect();
    wait_acked(&acked, 100).await;

    // three restarts: SIGTERM, wait for the exit, start again on the same port and data
    let mut downtimes = Vec::new();
    for _ in 0..3 {
        server.terminate();
        assert!(server.wait_exit(Duration::from_secs(60)).await, "clean exit:\n{}", server.stderr());
        let down = Instant::now();
        server = Engage::spawn(&data, port, &env);
        server.wait_ready(Duration::from_secs(60)).await;
        downtimes.push(down.elapsed());
        let count = acked.lock().unwrap().len();
        wait_acked(&acked, count + 50).await;
    }
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.await.unwrap();
    }
    let outcomes = outcomes.lock().unwrap().clone();
    let mut tally = std::collections::BTreeMap::<String, usize>::new();
    for (_, outcome) in &outcomes {
        *tally.entry(outcome.chars().take(60).collect()).or_default() += 1;
    }
    eprintln!("restarts under load: {tally:?}; start to ready after each exit: {downtimes:?}");
    let bad: Vec<_> = outcomes.iter().filter(|(_, o)| !answered_or_refused(o)).collect();
    for (at, outcome) in &bad {
        let around: Vec<&str> = outcomes
            .iter()
            .filter(|(when, _)| when.max(at).duration_since(*when.min(at)) < Duration::from_millis(300))
            .map(|(_, o)| o.as_str())
            .filter(|o| o.len() < 30)
            .collect();
        eprintln!("{outcome}\n  around it: {around:?}");
    }
    assert!(bad.is_empty(), "requests reset or answered otherwise: {bad:?}");
    assert!(tally.contains_key("503 shutting_down"), "the drain said shutting_down on /readyz: {tally:?}");
    let acked = acked.lock().unwrap().clone();
    let client = reqwest::Client::new();
    crate::cluster_kit::wait_each_counted_once(&client, &base, &acked, Duration::from_secs(60)).await;
}
