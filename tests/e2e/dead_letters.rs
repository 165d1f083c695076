//! A permanent poison among a brand's orders, as an operator meets it, on both buses: the brand's
//! other orders are processed within seconds and its routes answer throughout; the poison is
//! retried, then parked after `ENGAGE_MAX_DELIVERIES` deliveries (in `/metrics`, the log and
//! `engage dead-letters list`); after the cause is fixed (a restart without the fault) a replay
//! applies it once, and a drop forgets the other.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::procs::{cli, free_port, Engage, NatsServer};

const BRAND: &str = "brand-dl";

fn order(id: &str, phone: &str) -> Value {
    json!({"parentBusinessId": BRAND, "businessId": "o1", "orderId": id, "customer": {"name": "Asha", "phone": phone},
           "items": [{"name": "tea", "qty": 1, "price": 70}], "amount": 70, "orderTime": "2026-11-21 10:00:00"})
}

async fn details(client: &reqwest::Client, base: &str, phone: &str) -> (u16, Value) {
    let response = client
        .post(format!("{base}/crm_api/get/customer/details"))
        .json(&json!({"parent_business_id": BRAND, "customer_number": phone}))
        .send()
        .await
        .unwrap();
    crate::helpers::read(response).await
}

/// Runs `engage ARGS` against the server on `port` with data dir `data`: exit code, stdout, stderr.
pub(crate) fn admin_cli(data: &Path, port: u16, args: &[&str]) -> (i32, String, String) {
    let addr = format!("127.0.0.1:{port}");
    let data_dir = data.to_string_lossy().into_owned();
    let env = [("ENGAGE_HTTP_ADDR", addr.as_str()), ("ENGAGE_DATA_DIR", data_dir.as_str())];
    let out = cli(data.parent().unwrap(), &env, args);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn dead_letters(data: &Path, port: u16, args: &[&str]) -> (i32, String, String) {
    let mut full = vec!["dead-letters"];
    full.extend_from_slice(args);
    admin_cli(data, port, &full)
}

async fn metric(client: &reqwest::Client, base: &str, name: &str) -> f64 {
    let page = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
    page.lines()
        .filter(|l| l.starts_with(name) && !l.starts_with('#'))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

async fn poison_is_parked_then_replayed_once(nats: Option<&NatsServer>) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let mut env = vec![("ENGAGE_FAULT_POISON_ORDER_ID", "poison"), ("ENGAGE_MAX_DELIVERIES", "3")];
    if let Some(nats) = nats {
        env.push(("ENGAGE_NATS_URL", nats.url.as_str()));
    }
    let mut engage = Engage::start(&data, port, &env).await;
    let client = reqwest::Client::new();
    let post = |body: Value| {
        let client = client.clone();
        let base = engage.base.clone();
        async move { client.post(format!("{base}/injestion/platform")).json(&body).send().await.unwrap().status() }
    };
    // two poisons (one to replay, one to drop) among ordinary orders of the same brand
    let started = Instant::now();
    assert_eq!(post(order("a", "9100000001")).await, 200);
    assert_eq!(post(order("poison", "9100000009")).await, 200);
    assert_eq!(post(order("poison", "9100000008")).await, 200);
    for i in 2..8 {
        assert_eq!(post(order(&format!("o{i}"), &format!("91000000{i:02}"))).await, 200);
    }
    // the other orders are processed within seconds, and the brand's routes answer throughout
    let mut answered = Vec::new();
    let mut pending: Vec<String> = (1..8).map(|i| format!("91000000{i:02}")).collect();
    while !pending.is_empty() {
        let mut left = Vec::new();
        for phone in pending {
            let (status, body) = details(&client, &engage.base, &phone).await;
            answered.push(status);
            if !(status == 200 && body["customer"]["total_orders"] == 1) {
                left.push(phone);
            }
        }
        pending = left;
        assert!(started.elapsed() < Duration::from_secs(10), "not processed in 10 s: {pending:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(answered.iter().all(|s| *s == 200 || *s == 404), "the brand's route failed meanwhile: {answered:?}");

    // both poisons are parked after three deliveries each, and nothing of them was applied
    let deadline = Instant::now() + Duration::from_secs(30);
    let listed = loop {
        let (code, stdout, stderr) = dead_letters(&data, port, &["list"]);
        assert_eq!(code, 0, "{stderr}");
        if stdout.lines().count() == 2 {
            break stdout;
        }
        assert!(Instant::now() < deadline, "not parked: {stdout}");
        let (status, _) = details(&client, &engage.base, "9100000001").await;
        assert_eq!(status, 200, "the brand's route answers while the poison is retried");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(listed.contains(BRAND) && listed.contains("attempts=3") && listed.contains("injected poison"), "{listed}");
    assert_eq!(metric(&client, &engage.base, "engage_events_parked_total").await, 2.0);
    let log = engage.stderr();
    assert!(log.contains("event parked in the dead-letter place") && log.contains("trace_id"), "{log}");
    for phone in ["9100000009", "9100000008"] {
        assert_eq!(details(&client, &engage.base, phone).await.0, 404, "a parked order was applied");
    }
    let ids: Vec<String> = listed.lines().map(|l| l.split('\t').next().unwrap().to_owned()).collect();
    let (code, shown, _) = dead_letters(&data, port, &["show", &ids[0]]);
    assert_eq!(code, 0);
    let shown: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!((shown["attempts"].clone(), shown["envelope"]["tenant"].clone()), (json!(3), json!(BRAND)), "{shown}");
    let replayed_phone = shown["envelope"]["payload"]["customer"]["phone"].as_str().unwrap().to_owned();
    let dropped_phone = if replayed_phone == "9100000009" { "9100000008" } else { "9100000009" };

    // the cause fixed (the fault is gone after a restart), one is replayed and one dropped
    engage.kill9();
    env.retain(|(name, _)| *name != "ENGAGE_FAULT_POISON_ORDER_ID");
    let engage = Engage::start(&data, port, &env).await;
    assert_eq!(dead_letters(&data, port, &["list"]).1.lines().count(), 2, "parked events survive a restart");
    let (code, out, stderr) = dead_letters(&data, port, &["replay", &ids[0]]);
    assert_eq!((code, out.trim()), (0, format!("replayed {}", ids[0]).as_str()), "{stderr}");
    let (code, _, stderr) = dead_letters(&data, port, &["drop", &ids[1]]);
    assert_eq!(code, 0, "{stderr}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = details(&client, &engage.base, &replayed_phone).await;
        if status == 200 {
            assert_eq!(body["customer"]["total_orders"], 1, "{body}");
            break;
        }
        assert!(Instant::now() < deadline, "the replayed order was not applied");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // counted once: a second replay finds nothing, and the totals stay
    let (code, _, stderr) = dead_letters(&data, port, &["replay", &ids[0]]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("404") || stderr.contains("not found"), "{stderr}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(details(&client, &engage.base, &replayed_phone).await.1["customer"]["total_orders"], 1);
    assert_eq!(details(&client, &engage.base, dropped_phone).await.0, 404, "the dropped order was applied");
    let (code, listed, said) = dead_letters(&data, port, &["list"]);
    assert_eq!((code, listed.as_str()), (0, ""), "stdout stays one line per parked event");
    assert!(said.contains("no parked events"), "an empty list says so: {said:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_is_parked_and_replayed_once_on_the_embedded_bus() {
    poison_is_parked_then_replayed_once(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_is_parked_and_replayed_once_on_jetstream() {
    let nats = NatsServer::start().await;
    poison_is_parked_then_replayed_once(Some(&nats)).await;
}
