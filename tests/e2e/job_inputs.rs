//! What the jobs read (issue 41): each run reads the work that is due (day buckets, a brand's own
//! partition, work-left markers), and rows an older engage left in the shared partitions
//! (`open_carts/all`, `legacy_feedback_sms/all`, `pending_redemptions/due`, queue days without
//! markers) are still handled. The rows are written straight into the data dir's store while the
//! app is stopped, as an older version left them.

use std::sync::{Arc, Mutex};

use axum::Router;
use chrono::{Duration, Utc};
use engage_storage::{EmbeddedStore, Store, WriteOp};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, spawn_app_in, TestApp};
use crate::jobs::{admin, provider};

fn put(table: &'static str, partition: &str, clustering: &str, value: Value) -> WriteOp {
    WriteOp::Put {
        table,
        partition: partition.to_owned(),
        clustering: clustering.as_bytes().to_vec(),
        value: serde_json::to_vec(&value).unwrap(),
    }
}

async fn run(app: &TestApp, job: &str) -> Value {
    let answer = admin(app, "/admin/jobs/run", json!({"name": job, "now": Utc::now().to_rfc3339()})).await;
    assert!(answer.get("outcome").is_some(), "{job}: {answer}");
    answer["outcome"].clone()
}

/// The partition's clustering keys, read from the stopped app's store.
async fn keys_of(store: &EmbeddedStore, table: &'static str, partition: &str) -> Vec<String> {
    let rows = store.scan(table, partition, None, 1000).await.unwrap();
    rows.iter().map(|r| String::from_utf8_lossy(&r.clustering).into_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_an_older_engage_left_in_shared_partitions_are_still_handled() {
    // a gateway that records the legacy SMS calls
    let calls = Arc::new(Mutex::new(Vec::<String>::new()));
    let recorded = calls.clone();
    let gateway = Router::new().fallback(move |uri: axum::http::Uri| {
        let recorded = recorded.clone();
        async move {
            recorded.lock().unwrap().push(uri.to_string());
            "ok"
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gateway_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, gateway).await });
    let sms = provider(&[]).await;

    let app = spawn_app(&[]).await;
    let dir = app.stop().await;
    let now = Utc::now();
    let today = crate::helpers::ist_day_compact(now);
    {
        let store = EmbeddedStore::open(dir.path()).unwrap();
        store
            .batch(vec![
                // a cart from two days ago, in the old shared partition: too old to remind
                put(
                    "open_carts",
                    "all",
                    "brand-old|outlet-1/C-1",
                    json!({"tenant": "brand-old", "phone": "9000000001", "business_id": "outlet-1",
                           "order_id": "C-1", "amount": "250", "updated_at": (now - Duration::days(2)).to_rfc3339()}),
                ),
                // a legacy feedback SMS still to call
                put(
                    "legacy_feedback_sms",
                    "all",
                    "brand-old|sms-1",
                    json!({"id": "sms-1", "parent_business_id": "brand-old", "business_id": null,
                           "url": format!("{gateway_url}/feedback?o=1"), "processed": 0, "attempts": 0,
                           "last_error": null, "given_up": false, "inserted_at": now.to_rfc3339(),
                           "process_time": null, "sent_at": null}),
                ),
                // a pending POS redemption's index row, expired an hour ago, whose redemption is gone
                put(
                    "pending_redemptions",
                    "due",
                    "x",
                    json!({"tenant": "brand-old", "phone": "9000000001", "order_id": "P-1",
                           "expires_at": (now - Duration::hours(1)).to_rfc3339()}),
                ),
                // a queued SMS of today's queue with no work-left marker, its debit never committed
                put(
                    "channel_queue",
                    &format!("sms_queue_{today}"),
                    "brand-old|send-1",
                    json!({"send_id": "send-1", "parent_business_id": "brand-old", "business_id": "outlet-1",
                           "channel": "sms", "to": "9000000001", "message": "hello", "template_type": "UTILITY",
                           "purpose": "campaign", "cost": "0.2", "gst": "0.036", "total": "0.236",
                           "txn_id": "W-none", "wallet_seq": 7, "delivery_date": today,
                           "created_at": now.to_rfc3339(), "processed": false}),
                ),
            ])
            .await
            .unwrap();
    }
    let app = spawn_app_in(dir, &[("ENGAGE_SMS_PROVIDER_URL", sms.url.as_str())]).await;

    let carts = run(&app, "abandoned_cart").await;
    assert_eq!(carts["dropped"], 1, "the old cart is handled (dropped as stale): {carts}");
    let drained = run(&app, "legacy_feedback_drain").await;
    assert_eq!(drained["sent"], 1, "{drained}");
    assert_eq!(calls.lock().unwrap().as_slice(), ["/feedback?o=1"]);
    let again = run(&app, "legacy_feedback_drain").await;
    assert_eq!(again["sent"], 0, "a sent SMS is not called again: {again}");
    let revoked = run(&app, "pos_revoke").await;
    assert!(revoked.is_object(), "{revoked}");
    let sent = run(&app, "sms_drain").await;
    assert_eq!(sent["unpaid"], 1, "the old queued send is seen, and not delivered unpaid: {sent}");
    assert_eq!(sms.deliveries().0, 0);

    let dir = app.stop().await;
    let store = EmbeddedStore::open(dir.path()).unwrap();
    // the shared partitions are empty; the rows are in their brand's partitions
    assert!(keys_of(&store, "open_carts", "all").await.is_empty());
    assert!(keys_of(&store, "open_carts", "brand|brand-old").await.is_empty(), "the stale cart left the index");
    assert!(keys_of(&store, "legacy_feedback_sms", "all").await.is_empty());
    assert!(keys_of(&store, "legacy_feedback_sms", "pending|brand-old").await.is_empty());
    assert_eq!(keys_of(&store, "legacy_feedback_sms", "done|brand-old").await, ["brand-old|sms-1"]);
    assert!(keys_of(&store, "pending_redemptions", "due").await.is_empty(), "the answered old index row went");
    // the old queue day got its marker (the send is still open), and is marked as indexed
    assert_eq!(keys_of(&store, "channel_work", &format!("sms_queue_{today}")).await, ["brand-old|send-1"]);
    assert!(keys_of(&store, "job_cursors", "channel_work").await.contains(&format!("sms_queue_{today}")));
    // the revoke job keeps its cursor at yesterday at most
    let cursor = store.get("job_cursors", "pending_redemptions", b"oldest_day").await.unwrap().unwrap();
    let yesterday = (now - Duration::days(1)).format("%Y-%m-%d").to_string();
    assert!(String::from_utf8_lossy(&cursor).contains(&yesterday), "{}", String::from_utf8_lossy(&cursor));
}
