//! What the cluster tests share to drive and watch engage processes: a stream of orders from many
//! producers, waiting until each acknowledged order is counted exactly once, reading a customer,
//! the partitions' owners (the lease bucket), a `/metrics` value and the processing lag, and what
//! a request sent across a restart came to.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub(crate) fn order(tenant: &str, id: &str, phone: &str) -> Value {
    json!({"parentBusinessId": tenant, "businessId": "outlet-1", "orderId": id,
           "customer": {"phone": phone}, "amount": 1, "orderTime": "2026-11-21 10:00:00"})
}

pub(crate) async fn details(client: &reqwest::Client, base: &str, tenant: &str, phone: &str) -> (u16, Value) {
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
pub(crate) async fn stream_orders(
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
pub(crate) async fn wait_acked<T>(acked: &Mutex<Vec<T>>, at_least: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while acked.lock().unwrap().len() < at_least {
        assert!(Instant::now() < deadline, "writes were not acknowledged");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub(crate) async fn owners(nats_url: &str) -> BTreeMap<u32, String> {
    let client = async_nats::connect(nats_url).await.unwrap();
    let jetstream = async_nats::jetstream::new(client);
    match jetstream.get_key_value(engage_streams::lease::LEASE_BUCKET).await {
        Ok(bucket) => engage_streams::lease::owners(&bucket).await.unwrap_or_default(),
        Err(_) => BTreeMap::new(),
    }
}

/// Waits until `a` and `b` both own some of the `partitions`.
pub(crate) async fn wait_shared(nats_url: &str, partitions: u32, a: &str, b: &str) -> BTreeMap<u32, String> {
    let shared = |o: &BTreeMap<u32, String>| o.values().any(|n| n == a) && o.values().any(|n| n == b);
    wait_owners(nats_url, partitions, shared, Duration::from_secs(30)).await
}

pub(crate) async fn wait_owners(
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

/// The value of the first `/metrics` line of `base` that starts with `prefix` (0 when absent).
pub(crate) async fn metric(client: &reqwest::Client, base: &str, prefix: &str) -> f64 {
    metrics_of(client, base).await.map_or(0.0, |text| value_in(&text, prefix))
}

/// The `/metrics` text of `base` (`None` when it does not answer).
pub(crate) async fn metrics_of(client: &reqwest::Client, base: &str) -> Option<String> {
    let response = client.get(format!("{base}/metrics")).send().await.ok()?;
    response.text().await.ok()
}

/// The value of the first line of a `/metrics` text that starts with `prefix` (0 when absent).
pub(crate) fn value_in(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// `engage_processing_lag_seconds` of `base`: (orders processed, of which within `le` seconds).
pub(crate) async fn lag(client: &reqwest::Client, base: &str, le: &str) -> (f64, f64) {
    let all = metric(client, base, "engage_processing_lag_seconds_count").await;
    let within = metric(client, base, &format!("engage_processing_lag_seconds_bucket{{le=\"{le}\"}}")).await;
    (all, within)
}

/// What a request sent across a restart came to: `200`; `503 shutting_down` or `503 starting`
/// (a clear refusal: the reason in the body or a `Retry-After`); `refused` (nothing listened, so
/// nothing was sent); or anything else spelled out (a reset, another status). With the status.
pub(crate) async fn restart_outcome(what: &str, result: reqwest::Result<reqwest::Response>) -> (String, u16) {
    match result {
        Ok(response) => {
            let status = response.status().as_u16();
            let retry_after = response.headers().contains_key("retry-after");
            let body = response.text().await.unwrap_or_default();
            let outcome = match status {
                200 => "200".to_owned(),
                503 if body.contains("shutting_down") => "503 shutting_down".to_owned(),
                503 if retry_after || body.contains("starting") => "503 starting".to_owned(),
                _ => format!("{what} {status} {body}"),
            };
            (outcome, status)
        }
        Err(error) if error.is_connect() => ("refused".to_owned(), 0),
        Err(error) => (format!("{what} error: {error:?}"), 0),
    }
}

/// Whether a restart may give `outcome` ([`restart_outcome`]): answered, refused clearly, or
/// never sent; never a reset.
pub(crate) fn answered_or_refused(outcome: &str) -> bool {
    matches!(outcome, "200" | "503 shutting_down" | "503 starting" | "refused")
}
