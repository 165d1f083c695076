//! Events published straight onto the orders stream with a NATS client, as an operator replaying
//! subjects or a hand-written message would (issue 56): the edge's bounds do not apply there, so
//! the engine checks them again. A 3,000-digit phone, an envelope of the server's maximum payload
//! less 64 bytes, garbage bytes and an event on another partition's subject are each parked at
//! once with its reason (listed by `/admin/dead-letters`), while another brand's orders go on and
//! `/readyz` stays ready.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::spawn_app;
use engage_streams::subject::{order_subject, partition_of};

const BRAND: &str = "stream-brand";

fn envelope(id: &str, payload: Value) -> Value {
    json!({"id": id, "source": "platform", "source_id": 1, "kind": "order", "tenant": BRAND,
           "received_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
           "trace_id": format!("trace-{id}"), "payload": payload})
}

fn order(id: &str, phone: &str) -> Value {
    json!({"parentBusinessId": BRAND, "businessId": "o1", "orderId": id, "customer": {"phone": phone}, "amount": 10})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_published_past_the_edge_are_bounded_parked_and_listed() {
    let nats = crate::procs::NatsServer::start().await;
    let app = spawn_app(&[("ENGAGE_NATS_URL", &nats.url), ("ENGAGE_MAX_DELIVERIES", "3")]).await;
    let client = async_nats::connect(&nats.url).await.unwrap();
    let jetstream = async_nats::jetstream::new(client.clone());
    let partitions = 64;
    let subject = order_subject(partition_of(BRAND, partitions), BRAND);
    let publish = |subject: String, bytes: Vec<u8>| {
        let jetstream = jetstream.clone();
        async move { jetstream.publish(subject, bytes.into()).await.unwrap().await.unwrap() }
    };
    // 1. a phone of 3,000 digits
    let long = envelope("long-phone", order("L-1", &"9".repeat(3000)));
    publish(subject.clone(), serde_json::to_vec(&long).unwrap()).await;
    // 2. an envelope of the maximum payload less 64 bytes
    let max = client.server_info().max_payload;
    let mut big = envelope("big-one", order("B-1", "9811600001"));
    let base = serde_json::to_vec(&big).unwrap().len();
    big["payload"]["note"] = json!("x".repeat(max - 64 - base - ",\"note\":\"\"".len()));
    let bytes = serde_json::to_vec(&big).unwrap();
    assert_eq!(bytes.len(), max - 64);
    publish(subject.clone(), bytes).await;
    // 3. garbage
    publish(subject.clone(), b"\x00\xffnot json at all{".to_vec()).await;
    // 4. a good event on another partition's subject (a second actor of the brand would take it)
    let other = (partition_of(BRAND, partitions) + 1) % partitions;
    let elsewhere = envelope("elsewhere", order("E-1", "9811600002"));
    publish(format!("engage.orders.{other}.{BRAND}"), serde_json::to_vec(&elsewhere).unwrap()).await;

    // meanwhile another brand's orders are processed, and the node stays ready
    for n in 0..5 {
        let phone = format!("98116100{n:02}");
        let body = json!({"parentBusinessId": "calm-brand", "businessId": "o1", "orderId": format!("C-{n}"),
                          "customer": {"phone": phone}, "amount": 10});
        assert_eq!(app.post_json("/injestion/platform", &body).await.0, 200);
        crate::platform::wait_customer(&app, "calm-brand", &phone, |c| c["total_orders"] == 1).await;
        let ready = app.client.get(format!("{}/readyz", app.base)).send().await.unwrap();
        assert_eq!(ready.status(), 200, "ready throughout");
    }

    // all four are parked, each with its reason, at their first delivery
    let key = std::fs::read_to_string(app.dir.path().join("admin.key")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let letters = loop {
        let listed = app.admin_get("/admin/dead-letters").await;
        let letters = listed["dead_letters"].as_array().cloned().unwrap_or_default();
        if letters.len() >= 4 {
            break letters;
        }
        assert!(Instant::now() < deadline, "not all parked: {listed}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let error_of = |id: &str| {
        letters
            .iter()
            .find(|l| l["id"].as_str().is_some_and(|i| i.starts_with(id)))
            .cloned()
            .unwrap_or_else(|| panic!("{id} not parked: {letters:?}"))
    };
    let long = error_of("long-phone");
    assert!(long["error"].as_str().unwrap().contains("customer.phone"), "{long}");
    assert_eq!(long["attempts"], json!(1), "parked at once: {long}");
    let big = error_of("big-one");
    assert!(big["error"].as_str().unwrap().contains("payload"), "{big}");
    assert_eq!(big["replayable"], json!(false), "cut to fit: {big}");
    let garbage = error_of("undecodable-");
    assert!(garbage["error"].as_str().unwrap().contains("not an envelope"), "{garbage}");
    let elsewhere = error_of("elsewhere");
    assert!(elsewhere["error"].as_str().unwrap().contains("belongs on"), "{elsewhere}");
    // nothing of them reached the brand
    let (status, _) = app
        .post_json(
            "/crm_api/get/customer/details",
            &json!({"parent_business_id": BRAND, "customer_number": "9811600002"}),
        )
        .await;
    assert_eq!(status, 404, "the misrouted order was not applied");
    // a cut event is not replayed: 409 with where the original is
    let replay = app
        .client
        .post(format!("{}/admin/dead-letters/big-one/replay", app.base))
        .header("x-admin-key", key.trim())
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 409);
    assert!(replay.text().await.unwrap().contains("position"));
}
