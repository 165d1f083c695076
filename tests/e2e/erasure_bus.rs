//! Erasure by `engage customers erase`, as an operator runs it for a request that came by mail,
//! on both buses: the customer's parked event goes, and on JetStream the orders stream's retained
//! messages and the KV bucket's delete markers that spell their number go too; a scan of every
//! message of those streams (or, embedded, of every table) finds neither their number nor their
//! name, while the other customer is still there.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::dead_letters::admin_cli;
use crate::procs::{free_port, Engage, NatsServer};

const BRAND: &str = "brand-erase-bus";
const ERASED: (&str, &str) = ("9100000041", "Farah Siddiqui");
const KEPT: (&str, &str) = ("9100000042", "Kept Person");

fn order(id: &str, (phone, name): (&str, &str)) -> Value {
    json!({"parentBusinessId": BRAND, "businessId": "o1", "orderId": id, "customer": {"name": name, "phone": phone},
           "amount": 70, "orderTime": "2026-11-21 10:00:00"})
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Every message (subject and payload) of the streams of the NATS server at `url`.
async fn every_nats_message(url: &str) -> Vec<(String, String, Vec<u8>)> {
    let jetstream = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
    let mut out = Vec::new();
    for name in ["ENGAGE_ORDERS", "ENGAGE_DEAD_LETTERS", "KV_engage_store"] {
        let mut stream = jetstream.get_stream(name).await.unwrap();
        let state = stream.info().await.unwrap().state.clone();
        for seq in state.first_sequence..=state.last_sequence {
            if let Ok(message) = stream.get_raw_message(seq).await {
                out.push((name.to_owned(), message.subject.to_string(), message.payload.to_vec()));
            }
        }
    }
    out
}

fn holds(bytes: &[u8], needle: &str) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

async fn erasure_reaches_the_bus(nats: Option<&NatsServer>) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let mut env = vec![("ENGAGE_FAULT_POISON_ORDER_ID", "poison"), ("ENGAGE_MAX_DELIVERIES", "2")];
    if let Some(nats) = nats {
        env.push(("ENGAGE_NATS_URL", nats.url.as_str()));
    }
    let mut engage = Engage::start(&data, port, &env).await;
    let client = reqwest::Client::new();
    for body in [order("a-1", ERASED), order("poison", ERASED), order("k-1", KEPT)] {
        let status =
            client.post(format!("{}/injestion/platform", engage.base)).json(&body).send().await.unwrap().status();
        assert_eq!(status, 200);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, listed, _) = admin_cli(&data, port, &["dead-letters", "list"]);
        let (_, export, _) = admin_cli(&data, port, &["customers", "export", "--parent", BRAND, "--phone", KEPT.0]);
        if listed.lines().count() == 1 && export.contains(KEPT.1) {
            break;
        }
        assert!(Instant::now() < deadline, "not processed and parked: {listed}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (code, export, stderr) =
        admin_cli(&data, port, &["customers", "export", "--parent", BRAND, "--phone", ERASED.0]);
    assert_eq!(code, 0, "{export} {stderr}");
    let export: Value = serde_json::from_str(&export).unwrap();
    assert_eq!(export["profile"]["name"], ERASED.1, "{export}");

    let erase = ["customers", "erase", "--parent", BRAND, "--phone", &format!("+91{}", ERASED.0), "--by", "ticket-7"];
    let (code, said, stderr) = admin_cli(&data, port, &erase);
    assert_eq!(code, 0, "{said} {stderr} {}", engage.stderr());
    let removed: u64 =
        said.split(", ").find_map(|part| part.strip_suffix(" bus messages removed\n")?.parse().ok()).unwrap();
    // embedded: the parked event (the processed order left the bus when it was acked); JetStream:
    // the parked event and the processed order's retained message
    assert!(removed >= if nats.is_some() { 2 } else { 1 }, "{said}");
    assert!(admin_cli(&data, port, &["dead-letters", "list"]).1.is_empty(), "the parked event is gone");
    let (_, again, stderr) = admin_cli(&data, port, &erase);
    assert!(
        again.contains("0 rows deleted") && again.contains("0 bus messages removed"),
        "{again} {stderr} {}",
        engage.stderr()
    );
    let (_, export, _) = admin_cli(&data, port, &["customers", "export", "--parent", BRAND, "--phone", ERASED.0]);
    assert!(!export.contains(ERASED.1) && serde_json::from_str::<Value>(&export).unwrap()["profile"].is_null());
    let (code, _, stderr) = admin_cli(&data, port, &["customers", "erase", "--parent", BRAND, "--phone", "12ab"]);
    assert!(code != 0 && stderr.contains("7 to 15 digits"), "{stderr}");

    match nats {
        Some(nats) => {
            let messages = every_nats_message(&nats.url).await;
            for (stream, subject, payload) in &messages {
                for needle in [ERASED.0, ERASED.1, &hex(ERASED.0)] {
                    assert!(
                        !holds(subject.as_bytes(), needle) && !holds(payload, needle),
                        "{stream} {subject} names {needle}"
                    );
                }
            }
            let kept =
                messages.iter().any(|(_, subject, payload)| holds(payload, KEPT.0) || subject.contains(&hex(KEPT.0)));
            assert!(kept, "the scan reads the streams: the kept customer is there");
            engage.kill9();
        }
        None => {
            engage.kill9();
            let store = engage_storage::EmbeddedStore::open(&data).expect("the store reopens");
            let rows = store.every_row().unwrap();
            for (table, key, value) in &rows {
                for needle in [ERASED.0, ERASED.1] {
                    assert!(!holds(key, needle) && !holds(value, needle), "{table} names {needle}");
                }
            }
            assert!(rows.iter().any(|(_, key, value)| holds(key, KEPT.0) || holds(value, KEPT.0)));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn erasure_by_the_cli_reaches_the_embedded_bus() {
    erasure_reaches_the_bus(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn erasure_by_the_cli_reaches_jetstream_and_the_kv_history() {
    let nats = NatsServer::start().await;
    erasure_reaches_the_bus(Some(&nats)).await;
}
