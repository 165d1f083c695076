//! What operators do to a whole cluster (three nats-servers, three replicas), under a stream of
//! orders: a rolling restart of every node and then of the ingress (SIGTERM, wait for the exit, start it again with the same
//! id, port and data dir), and a scale-out from two nodes to four. Nothing acknowledged is lost or
//! counted twice, no request is reset, no order waits out a lease (10 s) for a partition that
//! changed hands, and reads of the brands keep answering (through the ingress while it runs).
//! Each run prints its figures.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::cluster_kit::{
    answered_or_refused, metrics_of, order, restart_outcome, value_in, wait_acked, wait_each_counted_once, wait_owners,
    wait_shared,
};
use crate::procs::{free_port, Engage, NatsCluster};

const PARTITIONS: u32 = 16;
const BRANDS: usize = 40;
/// The customer every brand has before the load starts, read throughout.
const SEEDED: &str = "9800000000";

/// One request of the load: when it was sent, how long it took, what it came to.
#[derive(Clone, Debug)]
struct Request {
    sent: Instant,
    took: Duration,
    outcome: String,
}

/// Orders posted by four producers and reads of eight brands' seeded customer, all through the
/// ingress on keep-alive connections, until stopped.
struct Load {
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<(String, String)>>>,
    posts: Arc<Mutex<Vec<Request>>>,
    reads: Arc<Mutex<Vec<Request>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    fn start(base: &str) -> Self {
        let (stop, acked) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(Vec::new())));
        let (posts, reads) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
        let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
        let mut tasks = Vec::new();
        for w in 0..4usize {
            let (client, base, stop, acked, posts) =
                (client.clone(), base.to_owned(), stop.clone(), acked.clone(), posts.clone());
            tasks.push(tokio::spawn(async move {
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    let (tenant, phone) = (format!("brand-{}", (w * 7 + i) % BRANDS), format!("9{w:02}{i:07}"));
                    let sent = Instant::now();
                    let result = client
                        .post(format!("{base}/injestion/platform"))
                        .json(&order(&tenant, &format!("o-{w}-{i}"), &phone))
                        .send()
                        .await;
                    let (outcome, status) = restart_outcome("order", result).await;
                    if status == 200 {
                        acked.lock().unwrap().push((tenant, phone));
                    }
                    posts.lock().unwrap().push(Request { sent, took: sent.elapsed(), outcome });
                    tokio::time::sleep(Duration::from_millis(30)).await;
                }
            }));
        }
        for b in (0..BRANDS).step_by(5) {
            let (client, base, stop, reads) = (client.clone(), base.to_owned(), stop.clone(), reads.clone());
            tasks.push(tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let sent = Instant::now();
                    let result = client
                        .post(format!("{base}/crm_api/get/customer/details"))
                        .json(&json!({"parent_business_id": format!("brand-{b}"), "customer_number": SEEDED}))
                        .send()
                        .await;
                    let (outcome, _) = restart_outcome("read", result).await;
                    reads.lock().unwrap().push(Request { sent, took: sent.elapsed(), outcome });
                    // 8 readers from one address stay under the open routes' 200/s per address
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }));
        }
        Self { stop, acked, posts, reads, tasks }
    }

    fn acked(&self) -> usize {
        self.acked.lock().unwrap().len()
    }

    /// Waits for `more` acknowledged orders than now.
    async fn wait_more(&self, more: usize) {
        wait_acked(&self.acked, self.acked() + more).await;
    }

    /// Stops the load: (acknowledged orders, posts, reads).
    async fn finish(self) -> (Vec<(String, String)>, Vec<Request>, Vec<Request>) {
        self.stop.store(true, Ordering::SeqCst);
        for task in self.tasks {
            task.await.unwrap();
        }
        let take = |requests: &Mutex<Vec<Request>>| requests.lock().unwrap().clone();
        (self.acked.lock().unwrap().clone(), take(&self.posts), take(&self.reads))
    }
}

/// Orders a node processed, from its `/metrics`: all, and within 1, 2.5 and 5 s of their publish.
#[derive(Clone, Copy, Debug, Default)]
struct Lags([f64; 4]);

impl Lags {
    /// From one read of `base`'s `/metrics` (`None` when it does not answer).
    async fn of(client: &reqwest::Client, base: &str) -> Option<Self> {
        let text = metrics_of(client, base).await?;
        let bucket = |le: &str| value_in(&text, &format!("engage_processing_lag_seconds_bucket{{le=\"{le}\"}}"));
        Some(Self([value_in(&text, "engage_processing_lag_seconds_count"), bucket("1"), bucket("2.5"), bucket("5")]))
    }

    fn add(&mut self, other: Self) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine += theirs;
        }
    }
}

/// A cluster as the operators run one: three nats-servers, every stream and bucket with
/// three replicas, 16 partitions, the default 10 s lease; nodes and an ingress started on it.
struct Cluster {
    _nats: NatsCluster,
    /// Every server: the processes' `ENGAGE_NATS_URL`.
    urls: String,
    /// One server, to read the lease bucket from.
    url: String,
    dir: tempfile::TempDir,
}

impl Cluster {
    async fn start() -> Self {
        let (nats, urls, _) = NatsCluster::formed().await;
        let url = urls.split(',').next().unwrap_or_default().to_owned();
        Self { _nats: nats, urls, url, dir: tempfile::tempdir().unwrap() }
    }

    fn env(&self, role: &str, id: &str) -> Vec<(&'static str, String)> {
        let mut env = vec![
            ("ENGAGE_NATS_URL", self.urls.clone()),
            ("ENGAGE_NATS_REPLICAS", "3".to_owned()),
            ("ENGAGE_ROLE", role.to_owned()),
            ("ENGAGE_PARTITIONS", PARTITIONS.to_string()),
        ];
        if role == "node" {
            env.push(("ENGAGE_NODE_ID", id.to_owned()));
        }
        env
    }

    fn data(&self, id: &str) -> PathBuf {
        self.dir.path().join(id)
    }

    /// Starts `id` (role `node`, or `ingress` for the id `ingress`) on `port`, without waiting.
    fn spawn(&self, id: &str, port: u16) -> Engage {
        let role = if id == "ingress" { "ingress" } else { "node" };
        let env = self.env(role, id);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Engage::spawn(&self.data(id), port, &env)
    }

    /// Starts `id` and waits until it is ready.
    async fn start_ready(&self, id: &str) -> Engage {
        let engage = self.spawn(id, free_port());
        engage.wait_ready(Duration::from_secs(60)).await;
        engage
    }

    /// Gives each brand its seeded customer and waits until every one is counted.
    async fn seed(&self, ingress: &str) {
        let client = reqwest::Client::new();
        for b in 0..BRANDS {
            let body = order(&format!("brand-{b}"), &format!("seed-{b}"), SEEDED);
            let answer = client.post(format!("{ingress}/injestion/platform")).json(&body).send().await.unwrap();
            assert_eq!(answer.status(), 200);
        }
        let seeded: Vec<(String, String)> = (0..BRANDS).map(|b| (format!("brand-{b}"), SEEDED.to_owned())).collect();
        wait_each_counted_once(&client, ingress, &seeded, Duration::from_secs(60)).await;
    }

    /// Waits until the nodes named hold `each` partitions apiece.
    async fn wait_each_holds(&self, nodes: &[&str], each: usize, within: Duration) {
        let balanced = |owners: &std::collections::BTreeMap<u32, String>| {
            nodes.iter().all(|node| owners.values().filter(|owner| owner == node).count() == each)
        };
        wait_owners(&self.url, PARTITIONS, balanced, within).await;
    }
}

/// SIGTERMs `engage` and reads its lag figures until it has exited (a stopping node still serves
/// `/metrics` while it drains); the last figures read, and how long the exit took.
async fn stop_counting(engage: &mut Engage, client: &reqwest::Client) -> (Lags, Duration) {
    let stopped_at = Instant::now();
    let mut last = Lags::of(client, &engage.base).await.unwrap_or_default();
    engage.terminate();
    loop {
        if let Some(status) = engage.child.try_wait().unwrap() {
            assert!(status.success(), "{} did not exit cleanly:\n{}", engage.base, engage.stderr());
            return (last, stopped_at.elapsed());
        }
        assert!(stopped_at.elapsed() < Duration::from_secs(60), "{} did not exit:\n{}", engage.base, engage.stderr());
        if let Some(now) = Lags::of(client, &engage.base).await {
            last = now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Checks what the load met: every request answered (a clear refusal or nothing sent only within
/// `ingress_down`, while the ingress restarted), reads within 5 s, every acknowledged order
/// counted once, and every order processed within 5 s of its publish. Prints the figures.
async fn check(
    what: &str,
    ingress: &str,
    (acked, posts, reads): (Vec<(String, String)>, Vec<Request>, Vec<Request>),
    ingress_down: Option<(Instant, Instant)>,
    lags: Lags,
) {
    let during_restart = |request: &Request| {
        ingress_down.is_some_and(|(from, to)| request.sent + request.took >= from && request.sent <= to)
    };
    let mut tally = std::collections::BTreeMap::<String, usize>::new();
    for request in posts.iter().chain(&reads) {
        *tally.entry(request.outcome.chars().take(60).collect()).or_default() += 1;
    }
    let bad: Vec<&Request> = posts
        .iter()
        .chain(&reads)
        .filter(|r| r.outcome != "200" && !(during_restart(r) && answered_or_refused(&r.outcome)))
        .collect();
    let slowest = reads.iter().filter(|r| !during_restart(r)).map(|r| r.took).max().unwrap_or_default();
    let [all, within_1, within_2_5, within_5] = lags.0;
    eprintln!(
        "{what}: {} orders acked of {} posts, {} reads (slowest outside an ingress restart {slowest:?}); \
         outcomes {tally:?}; of {all} orders processed, {within_1} within 1 s, {within_2_5} within 2.5 s, \
         {within_5} within 5 s of their publish",
        acked.len(),
        posts.len(),
        reads.len()
    );
    assert!(bad.is_empty(), "{what}: requests reset, refused or failed: {:?}", &bad[..bad.len().min(10)]);
    assert!(slowest < Duration::from_secs(5), "{what}: a read took {slowest:?}");
    let client = reqwest::Client::new();
    wait_each_counted_once(&client, ingress, &acked, Duration::from_secs(60)).await;
    // a lease is 10 s: an order fetched by a node that let its partition go waited it out before
    assert!(all > 0.0, "{what}: no processing measured");
    assert_eq!(within_5, all, "{what}: an order waited more than 5 s for a partition that moved");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_of_every_node_and_then_the_ingress_loses_resets_and_stalls_nothing() {
    let cluster = Cluster::start().await;
    let mut nodes = [cluster.start_ready("node-a").await, cluster.start_ready("node-b").await];
    let mut ingress = cluster.start_ready("ingress").await;
    wait_shared(&cluster.url, PARTITIONS, "node-a", "node-b").await;
    cluster.seed(&ingress.base).await;
    let client = reqwest::Client::new();
    let load = Load::start(&ingress.base);
    load.wait_more(150).await;

    let mut lags = Lags::default();
    let mut steps = Vec::new();
    for (index, id) in ["node-a", "node-b"].into_iter().enumerate() {
        let (counted, exited) = stop_counting(&mut nodes[index], &client).await;
        lags.add(counted);
        let other = if id == "node-a" { "node-b" } else { "node-a" };
        let restarted_at = Instant::now();
        nodes[index] = cluster.spawn(id, nodes[index].port);
        nodes[index].wait_ready(Duration::from_secs(60)).await;
        let ready = restarted_at.elapsed();
        cluster.wait_each_holds(&[id, other], (PARTITIONS / 2) as usize, Duration::from_secs(30)).await;
        steps.push(format!(
            "{id}: exited {exited:?} after SIGTERM, ready {ready:?} and holding its 8 {:?} after its start",
            restarted_at.elapsed()
        ));
        load.wait_more(100).await;
    }

    // then the ingress, on the same port, as a load balancer's target stays put
    let down_from = Instant::now();
    ingress.terminate();
    assert!(ingress.wait_exit(Duration::from_secs(60)).await, "the ingress exits cleanly:\n{}", ingress.stderr());
    ingress = cluster.spawn("ingress", ingress.port);
    ingress.wait_ready(Duration::from_secs(60)).await;
    let down_to = Instant::now();
    steps.push(format!("ingress: SIGTERM to ready again {:?}", down_to - down_from));
    load.wait_more(100).await;

    let outcome = load.finish().await;
    for node in &nodes {
        lags.add(Lags::of(&client, &node.base).await.unwrap_or_default());
    }
    eprintln!("rolling restart: {}", steps.join("; "));
    check("rolling restart", &ingress.base, outcome, Some((down_from, down_to)), lags).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scale_out_from_two_nodes_to_four_hands_partitions_over_without_a_stall() {
    let cluster = Cluster::start().await;
    let nodes = [cluster.start_ready("node-a").await, cluster.start_ready("node-b").await];
    let ingress = cluster.start_ready("ingress").await;
    wait_shared(&cluster.url, PARTITIONS, "node-a", "node-b").await;
    cluster.seed(&ingress.base).await;
    let client = reqwest::Client::new();
    let load = Load::start(&ingress.base);
    load.wait_more(150).await;

    // two nodes added at once, as an operator scales a deployment from 2 to 4
    let added_at = Instant::now();
    let added = [cluster.spawn("node-c", free_port()), cluster.spawn("node-d", free_port())];
    for node in &added {
        node.wait_ready(Duration::from_secs(60)).await;
    }
    let ready = added_at.elapsed();
    cluster.wait_each_holds(&["node-a", "node-b", "node-c", "node-d"], 4, Duration::from_secs(30)).await;
    let balanced = added_at.elapsed();
    load.wait_more(150).await;

    let outcome = load.finish().await;
    let mut lags = Lags::default();
    for node in nodes.iter().chain(&added) {
        lags.add(Lags::of(&client, &node.base).await.unwrap_or_default());
    }
    eprintln!("scale-out: both new nodes ready {ready:?}, four nodes holding 4 partitions each {balanced:?} after they started");
    check("scale-out", &ingress.base, outcome, None, lags).await;
}
