//! The log routes against the embedded sink: every row of the spec's error table, the limits,
//! 207 under CloudWatch's time window, gzip, persistence across restarts and the rate limit.

use std::io::Write;

use chrono::Duration;
use serde_json::{json, Value};

use crate::helpers::{event, event_at, spawn_app, spawn_app_in};

const GROUP: &str = "/logs/org/edge/checkout";
const REQUIRED: [&str; 10] = [
    "timestamp",
    "level",
    "product",
    "service",
    "component",
    "version",
    "environment",
    "trace_id",
    "source",
    "message",
];

fn pointers(body: &Value) -> Vec<String> {
    body["issues"]
        .as_array()
        .map(|a| a.iter().map(|i| i["pointer"].as_str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn one_event_is_accepted_stored_and_traced() {
    let app = spawn_app(&[]).await;
    let response = app
        .client
        .post(format!("{}/v1/logs", app.base))
        .header("x-trace-id", "trace-from-producer-1")
        .json(&event("hello"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-trace-id"], "trace-from-producer-1");
    let (status, body) = crate::helpers::read(response).await;
    assert_eq!((status, body), (200, json!({"accepted": 1})));
    let stored = app.stored(GROUP).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["event"]["message"], "hello");
    assert!(stored[0]["log_stream"].as_str().unwrap().starts_with("api/"), "{}", stored[0]);

    // a generated trace id when the producer sends none
    let response = app.client.post(format!("{}/v1/logs/ingest", app.base)).json(&event("again")).send().await.unwrap();
    let generated = response.headers()["x-trace-id"].to_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&generated).is_ok(), "{generated}");
    assert_eq!(app.stored(GROUP).await.len(), 2);
}

#[tokio::test]
async fn a_thousand_events_pass_and_a_thousand_and_one_write_nothing() {
    let app = spawn_app(&[]).await;
    let batch: Vec<Value> = (0..1000).map(|i| event(&format!("m{i}"))).collect();
    let (status, body) = app.post_json("/v1/logs", &json!(batch)).await;
    assert_eq!((status, body), (200, json!({"accepted": 1000})));
    assert_eq!(app.stored(GROUP).await.len(), 1000);

    let app = spawn_app(&[]).await;
    let batch: Vec<Value> = (0..1001).map(|i| event(&format!("m{i}"))).collect();
    let (status, body) = app.post_json("/v1/logs", &json!(batch)).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "BATCH_TOO_LARGE");
    assert!(app.stored(GROUP).await.is_empty());
}

#[tokio::test]
async fn invalid_json_is_refused() {
    let app = spawn_app(&[]).await;
    for body in ["{not json", "", "[{\"level\":", "\u{0}"] {
        let (status, answer) = app.post_raw("/v1/logs", body.to_owned()).await;
        assert_eq!(status, 400, "{body:?}");
        assert_eq!(answer["error"], "INVALID_JSON", "{body:?}");
        assert!(answer["message"].is_string());
    }
}

#[tokio::test]
async fn each_missing_required_field_is_reported_with_its_pointer() {
    let app = spawn_app(&[]).await;
    for field in REQUIRED {
        let mut bad = event("x");
        bad.as_object_mut().unwrap().remove(field);
        let (status, body) = app.post_json("/v1/logs", &json!([event("ok"), bad.clone()])).await;
        assert_eq!(status, 400, "{field}");
        assert_eq!(body["error"], "SCHEMA_VIOLATION", "{field}");
        assert_eq!(pointers(&body), vec![format!("/1/{field}")], "{field}: {body}");
        // a single object has pointers without the index
        let (_, body) = app.post_json("/v1/logs/ingest", &bad).await;
        assert_eq!(pointers(&body), vec![format!("/{field}")], "{field}: {body}");
    }
    assert!(app.stored(GROUP).await.is_empty(), "nothing of a refused request is written");
}

#[tokio::test]
async fn each_enum_pattern_format_and_length_rule_is_enforced() {
    let app = spawn_app(&[]).await;
    let cases: Vec<(&str, Value, &str)> = vec![
        ("level", json!("TRACE"), "/0/level"),
        ("level", json!("info"), "/0/level"),
        ("product", json!("other"), "/0/product"),
        ("source", json!("browser"), "/0/source"),
        ("timestamp", json!("2026-13-01T00:00:00Z"), "/0/timestamp"),
        ("timestamp", json!("yesterday"), "/0/timestamp"),
        ("timestamp", json!(1700000000), "/0/timestamp"),
        ("trace_id", json!("short"), "/0/trace_id"),
        ("service", json!(""), "/0/service"),
        ("component", json!(""), "/0/component"),
        ("version", json!(""), "/0/version"),
        ("environment", json!(""), "/0/environment"),
        ("message", json!(""), "/0/message"),
        ("user_id", json!(5), "/0/user_id"),
        ("error", json!({"code": "lower_case", "category": "db"}), "/0/error/code"),
        ("error", json!({"code": "E1"}), "/0/error/category"),
        ("error", json!({"code": "E1", "category": ""}), "/0/error/category"),
        ("tenant", json!({"parent_id": "p"}), "/0/tenant/business_id"),
        ("tenant", json!({"business_id": ""}), "/0/tenant/business_id"),
        ("tenant", json!("b1"), "/0/tenant"),
        ("context", json!([1, 2]), "/0/context"),
    ];
    for (field, value, pointer) in cases {
        let mut bad = event("x");
        bad[field] = value.clone();
        let (status, body) = app.post_json("/v1/logs", &json!([bad])).await;
        assert_eq!(status, 400, "{field}={value}");
        assert_eq!(body["error"], "SCHEMA_VIOLATION", "{field}={value}");
        assert!(pointers(&body).contains(&pointer.to_owned()), "{field}={value}: {body}");
    }
    // what the spec allows passes: null tenant, null context values, a non-UUID trace id of 8+
    let mut ok = event("fine");
    ok["tenant"] = Value::Null;
    ok["trace_id"] = json!("abcdefgh");
    ok["error"] = json!({"code": "DB_TIMEOUT", "category": "db", "stack": "at x", "upstream": "pg"});
    ok["user_id"] = json!("u-1");
    let (status, body) = app.post_json("/v1/logs", &ok).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn empty_array_and_non_object_are_schema_violations() {
    let app = spawn_app(&[]).await;
    for body in [json!([]), json!(42), json!("x"), json!([1])] {
        let (status, answer) = app.post_json("/v1/logs", &body).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(answer["error"], "SCHEMA_VIOLATION", "{body}");
        assert!(!answer["issues"].as_array().unwrap().is_empty());
    }
}

#[tokio::test]
async fn dropped_events_give_207_with_exact_detail() {
    let app = spawn_app(&[]).await;
    let batch = json!([
        event("kept-1"),
        event_at(-Duration::days(15), "too-old"),
        event_at(Duration::hours(3), "too-new"),
        event("kept-2"),
    ]);
    let (status, body) = app.post_json("/v1/logs", &batch).await;
    assert_eq!(status, 207, "{body}");
    assert_eq!(body["accepted"], 2);
    assert_eq!(body["rejected"], 2);
    let detail = body["detail"].as_array().unwrap();
    let old = detail.iter().find(|d| d["info"]["tooOldEventIndices"].is_array()).expect("a too-old batch");
    assert_eq!(old["info"]["tooOldEventIndices"], json!([1]));
    assert_eq!(old["log_group"], GROUP);
    assert_eq!(old["rejected"], 1);
    let new = detail.iter().find(|d| d["info"]["tooNewEventIndices"].is_array()).expect("a too-new batch");
    assert_eq!(new["info"]["tooNewEventIndices"], json!([2]));
    let total_rejected: u64 = detail.iter().map(|d| d["rejected"].as_u64().unwrap()).sum();
    assert_eq!(total_rejected, 2);
    let messages: Vec<String> =
        app.stored(GROUP).await.iter().map(|e| e["event"]["message"].as_str().unwrap().to_owned()).collect();
    assert_eq!(messages.len(), 2);
    assert!(messages.contains(&"kept-1".to_owned()) && messages.contains(&"kept-2".to_owned()));
}

#[tokio::test]
async fn every_event_dropped_is_all_rejected() {
    let app = spawn_app(&[]).await;
    let batch = json!([event_at(-Duration::days(15), "a"), event_at(Duration::hours(3), "b")]);
    let (status, body) = app.post_json("/v1/logs", &batch).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "ALL_REJECTED");
    assert!(app.stored(GROUP).await.is_empty());
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let app = spawn_app(&[("ENGAGE_MAX_BODY_BYTES", "4096")]).await;
    let big = event(&"x".repeat(5000));
    let (status, body) = app.post_json("/v1/logs", &big).await;
    assert_eq!(status, 413);
    assert_eq!(body["error"], "PAYLOAD_TOO_LARGE");
    let (status, _) = app.post_json("/v1/logs", &event("small")).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn an_event_over_the_event_limit_is_a_schema_violation() {
    let app = spawn_app(&[("ENGAGE_MAX_EVENT_BYTES", "1024")]).await;
    let (status, body) = app.post_json("/v1/logs", &json!([event("ok"), event(&"x".repeat(2000))])).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "SCHEMA_VIOLATION");
    assert_eq!(pointers(&body), vec!["/1".to_owned()]);
    assert!(app.stored(GROUP).await.is_empty());
}

#[tokio::test]
async fn gzip_bodies_are_accepted_and_limited_after_decompression() {
    let app = spawn_app(&[("ENGAGE_MAX_BODY_BYTES", "65536")]).await;
    let gzip = |value: &Value| {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(value.to_string().as_bytes()).unwrap();
        encoder.finish().unwrap()
    };
    let batch: Vec<Value> = (0..20).map(|i| event(&format!("gz{i}"))).collect();
    let response = app
        .client
        .post(format!("{}/v1/logs", app.base))
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(gzip(&json!(batch)))
        .send()
        .await
        .unwrap();
    assert_eq!(crate::helpers::read(response).await, (200, json!({"accepted": 20})));

    // 100 KiB of message compresses to little but is over the limit once decompressed
    let bomb = event(&"a".repeat(100 * 1024));
    let response = app
        .client
        .post(format!("{}/v1/logs", app.base))
        .header("content-encoding", "gzip")
        .body(gzip(&bomb))
        .send()
        .await
        .unwrap();
    let (status, body) = crate::helpers::read(response).await;
    assert_eq!((status, body["error"].clone()), (413, json!("PAYLOAD_TOO_LARGE")));

    let response = app
        .client
        .post(format!("{}/v1/logs", app.base))
        .header("content-encoding", "gzip")
        .body(b"not gzip at all".to_vec())
        .send()
        .await
        .unwrap();
    let (status, body) = crate::helpers::read(response).await;
    assert_eq!((status, body["error"].clone()), (400, json!("INVALID_JSON")));
}

#[tokio::test]
async fn accepted_events_survive_a_restart() {
    let app = spawn_app(&[]).await;
    let (status, _) = app.post_json("/v1/logs", &json!([event("before-1"), event("before-2")])).await;
    assert_eq!(status, 200);
    let dir = app.stop().await;
    let app = spawn_app_in(dir, &[]).await;
    let stored = app.stored(GROUP).await;
    assert_eq!(stored.len(), 2);
}

#[tokio::test]
async fn reading_back_filters_by_stream_and_checks_the_query() {
    let app = spawn_app(&[]).await;
    let mut other = event("other-component");
    other["component"] = json!("worker");
    let (status, _) =
        app.post_json("/v1/logs", &json!([event_at(-Duration::minutes(2), "api-1"), other, event("api-2")])).await;
    assert_eq!(status, 200);
    let all = app.stored(GROUP).await;
    assert_eq!(all.len(), 3);
    assert_eq!(all[0]["event"]["message"], "api-1", "oldest first");
    let stream = all[0]["log_stream"].as_str().unwrap().to_owned();
    let (_, one) = app.get_json(&format!("/v1/logs/events?log_group={GROUP}&log_stream={stream}&limit=1")).await;
    assert_eq!(one["events"].as_array().unwrap().len(), 1);
    for query in [
        "",
        "?log_group=",
        &format!("?log_group={GROUP}&limit=0"),
        &format!("?log_group={GROUP}&limit=10001"),
        &format!("?log_group={GROUP}&limit=x"),
    ] {
        let (status, body) = app.get_json(&format!("/v1/logs/events{query}")).await;
        assert_eq!((status, body["error"].clone()), (400, json!("INVALID_QUERY")), "{query}");
    }
}

#[tokio::test]
async fn the_rate_limit_answers_429_with_retry_after() {
    let app = spawn_app(&[("ENGAGE_RATE_LIMIT_PER_SECOND", "1"), ("ENGAGE_RATE_LIMIT_BURST", "2")]).await;
    let mut statuses = Vec::new();
    let mut retry_after = None;
    for _ in 0..3 {
        let response = app.client.post(format!("{}/v1/logs", app.base)).json(&event("r")).send().await.unwrap();
        if response.status() == 429 {
            retry_after = response.headers().get("retry-after").map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
        }
        let (status, body) = crate::helpers::read(response).await;
        if status == 429 {
            assert_eq!(body["error"], "RATE_LIMITED");
        }
        statuses.push(status);
    }
    assert_eq!(statuses, vec![200, 200, 429]);
    assert!(retry_after.is_some_and(|s| s >= 1), "{retry_after:?}");
}

#[tokio::test]
async fn unknown_routes_answer_an_api_error() {
    let app = spawn_app(&[]).await;
    let (status, body) = app.get_json("/v2/nothing").await;
    assert_eq!((status, body["error"].clone()), (404, json!("NOT_FOUND")));
}
