//! The OTLP/HTTP logs input (`POST /otlp/v1/logs`, and protobuf on `POST /v1/logs`), driven by
//! the official OpenTelemetry Python SDK (`tests/e2e/otlp/emit.py`: an unmodified
//! `OTLPLogExporter` configured by the environment only), and by hand for OTLP/JSON and errors.
//! The CloudWatch case is in `cloudwatch.rs`, the JWT case in `jwt.rs`.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::helpers::{spawn_app, unique_org, TestApp};

/// Runs `emit.py` with `env` (and no other `OTEL_*` setting), feeding it `spec`; its JSON answer:
/// `{results: [...], responses: [{status, rejected, message}], trace_ids: [...]}`.
pub async fn emit(env: &[(&str, &str)], spec: &Value) -> Value {
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let spec = spec.to_string();
    tokio::task::spawn_blocking(move || {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/otlp/emit.py");
        let mut command = Command::new("python3");
        command.arg(script).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        for (name, _) in std::env::vars().filter(|(k, _)| k.starts_with("OTEL_")) {
            command.env_remove(name);
        }
        command.envs(env);
        let mut child = command.spawn().expect("python3 runs (scripts/test.sh installs the OpenTelemetry SDK)");
        child.stdin.take().unwrap().write_all(spec.as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "emit.py failed: {stderr}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        serde_json::from_str(stdout.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("emit.py printed no JSON ({e}): {stdout}\n{stderr}"))
    })
    .await
    .unwrap()
}

/// The LogEvents stored in `group`.
async fn stored(app: &TestApp, group: &str) -> Vec<Value> {
    app.stored(group).await.iter().map(|e| e["event"].clone()).collect()
}

fn by_message<'a>(events: &'a [Value], message: &str) -> &'a Value {
    events.iter().find(|e| e["message"] == message).unwrap_or_else(|| panic!("no event {message:?} in {events:#?}"))
}

/// The spec most tests emit: a resource naming service, product, version and environment.
fn checkout_spec(records: Value) -> Value {
    json!({
        "resource": {"service.name": "checkout", "product": "edge", "service.version": "1.4.2",
                     "deployment.environment": "prod", "tenant.business_id": "b1"},
        "logger": "checkout.api",
        "records": records,
    })
}

#[tokio::test]
async fn the_otel_python_sdk_exports_to_the_embedded_store_with_mapped_fields() {
    let org = unique_org();
    let app = spawn_app(&[("ENGAGE_LOG_ORG", &org)]).await;
    let endpoint = format!("{}/otlp/v1/logs", app.base);
    let spec = checkout_spec(json!([
        {"level": "info", "message": "order placed", "attributes": {"order": 7, "note": "x"}, "traced": true},
        {"level": "warning", "message": "slow query", "attributes": {"component": "db", "source": "worker"}},
        {"level": "debug", "message": "cache miss"},
        {"level": "critical", "message": "db down", "attributes": {"error.code": "E_DB", "error.category": "database"}},
        {"level": "error", "message": "bad product", "attributes": {"product": "nope"}},
    ]));
    let answer = emit(&[("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", &endpoint)], &spec).await;
    assert_eq!(answer["results"], json!(vec!["SUCCESS"; 5]), "{answer}");
    let responses = answer["responses"].as_array().unwrap();
    assert_eq!(responses.len(), 5, "{answer}");
    for (i, response) in responses.iter().enumerate() {
        assert_eq!(response["status"], 200, "{answer}");
        let expected = if i == 4 { 1 } else { 0 };
        assert_eq!(response["rejected"], expected, "record {i}: {answer}");
    }
    let refusal = responses[4]["message"].as_str().unwrap();
    assert!(refusal.contains("logRecords[0]") && refusal.contains("/product"), "{refusal}");

    let events = stored(&app, &format!("/logs/{org}/edge/checkout")).await;
    assert_eq!(events.len(), 4, "the invalid record is not stored: {events:#?}");
    let placed = by_message(&events, "order placed");
    assert_eq!(placed["level"], "INFO");
    assert_eq!(placed["service"], "checkout");
    assert_eq!(placed["product"], "edge");
    assert_eq!(placed["component"], "checkout.api", "the logger (scope) name when no component attribute");
    assert_eq!(placed["version"], "1.4.2");
    assert_eq!(placed["environment"], "prod");
    assert_eq!(placed["source"], "server");
    assert_eq!(placed["tenant"], json!({"business_id": "b1"}));
    assert_eq!(placed["trace_id"], answer["trace_ids"][0], "the span's trace id");
    assert_eq!(placed["context"]["order"], 7);
    assert_eq!(placed["context"]["note"], "x");
    assert!(placed["context"]["span_id"].as_str().is_some_and(|s| s.len() == 16), "{placed}");
    assert_eq!(placed["context"]["resource"]["telemetry.sdk.language"], "python");
    assert!(placed["timestamp"].as_str().unwrap().ends_with('Z'));

    let slow = by_message(&events, "slow query");
    assert_eq!((&slow["level"], &slow["component"], &slow["source"]), (&json!("WARN"), &json!("db"), &json!("worker")));
    assert!(slow["context"].get("component").is_none(), "mapped attributes are not repeated in context");
    let untraced = slow["trace_id"].as_str().unwrap();
    assert_eq!(uuid::Uuid::parse_str(untraced).map(|u| u.get_version_num()), Ok(4), "a fresh UUID: {untraced}");
    assert_eq!(by_message(&events, "cache miss")["level"], "DEBUG");
    let down = by_message(&events, "db down");
    assert_eq!(down["level"], "ERROR", "CRITICAL (FATAL) is ERROR");
    assert_eq!(down["error"], json!({"code": "E_DB", "category": "database"}));
    // the stream is the component's, per day
    let (status, page) = app.get_json(&format!("/v1/logs/events?log_group=/logs/{org}/edge/checkout&limit=10")).await;
    assert_eq!(status, 200);
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let streams: Vec<&str> =
        page["events"].as_array().unwrap().iter().filter_map(|e| e["log_stream"].as_str()).collect();
    assert!(streams.contains(&format!("db/{today}").as_str()), "{streams:?}");
}

#[tokio::test]
async fn an_exporter_pointed_at_the_server_root_or_the_otlp_base_works_and_gzip_too() {
    let org = unique_org();
    let app = spawn_app(&[("ENGAGE_LOG_ORG", &org)]).await;
    let otlp_base = format!("{}/otlp", app.base);
    for (n, env) in [
        // the exporter appends /v1/logs: the JSON route answers a protobuf export as OTLP
        vec![("OTEL_EXPORTER_OTLP_ENDPOINT", app.base.as_str())],
        vec![("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_base.as_str()), ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")],
    ]
    .into_iter()
    .enumerate()
    {
        let message = format!("routed {n}");
        let answer = emit(&env, &checkout_spec(json!([{"message": message}]))).await;
        assert_eq!(answer["results"], json!(["SUCCESS"]), "{env:?}: {answer}");
        assert_eq!(answer["responses"][0]["rejected"], 0, "{answer}");
        let events = stored(&app, &format!("/logs/{org}/edge/checkout")).await;
        assert_eq!(by_message(&events, &message)["level"], "INFO");
    }
}

#[tokio::test]
async fn otlp_json_answers_partial_success_and_errors_as_the_otlp_spec_says() {
    let org = unique_org();
    let app = spawn_app(&[("ENGAGE_LOG_ORG", &org)]).await;
    let now = chrono::Utc::now().timestamp_nanos_opt().unwrap();
    let old = now - 20 * 24 * 3600 * 1_000_000_000;
    let record = |nanos: i64, message: &str, attrs: Value| {
        json!({"timeUnixNano": nanos.to_string(), "severityNumber": 9, "body": {"stringValue": message},
               "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "attributes": attrs})
    };
    let kv = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    let body = json!({"resourceLogs": [{
        "resource": {"attributes": [kv("service.name", "pay"), kv("product", "flash"), kv("version", "2"), kv("environment", "dev")]},
        "scopeLogs": [{"scope": {"name": "pay.api"}, "logRecords": [
            record(now, "kept", json!([{"key": "attempt", "value": {"intValue": "3"}}])),
            record(now, "no product here", json!([kv("product", "")])),
            record(old, "too old", json!([])),
        ]}]
    }]});
    let response = app
        .client
        .post(format!("{}/otlp/v1/logs", app.base))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["partialSuccess"]["rejectedLogRecords"], 2, "{answer}");
    let message = answer["partialSuccess"]["errorMessage"].as_str().unwrap();
    assert!(message.contains("logRecords[1]") && message.contains("/product"), "{message}");
    assert!(message.contains("older than 14 days"), "{message}");
    let events = stored(&app, &format!("/logs/{org}/flash/pay")).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["trace_id"], "5b8efff798038103d269b633813fc60c");
    assert_eq!(events[0]["context"]["attempt"], 3);
    assert_eq!(events[0]["component"], "pay.api");

    // everything accepted: an empty response object
    let one = json!({"resourceLogs": [{"resource": body["resourceLogs"][0]["resource"].clone(),
        "scopeLogs": [{"scope": {"name": "pay.api"}, "logRecords": [record(now, "again", json!([]))]}]}]});
    let (status, answer) = post_as(&app, "application/json", one.to_string().into_bytes()).await;
    assert_eq!((status, answer.as_str()), (200, "{}"));

    // errors: a google.rpc.Status in the request's encoding
    let (status, answer) = post_as(&app, "application/json", b"{not json".to_vec()).await;
    assert_eq!(status, 400);
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!((answer["code"].clone(), answer["error"].clone()), (json!(3), json!("INVALID_JSON")), "{answer}");
    let (status, _) = post_as(&app, "application/x-protobuf", vec![0xff, 0xff, 0xff, 0x01]).await;
    assert_eq!(status, 400);
    let (status, answer) = post_as(&app, "text/plain", b"hello".to_vec()).await;
    assert_eq!(status, 415, "{answer}");
    assert!(answer.contains("UNSUPPORTED_MEDIA_TYPE"), "{answer}");
}

/// POSTs `body` to `/otlp/v1/logs` as `content_type`: status and body text (protobuf answers
/// checked for their content type).
async fn post_as(app: &TestApp, content_type: &str, body: Vec<u8>) -> (u16, String) {
    let response = app
        .client
        .post(format!("{}/otlp/v1/logs", app.base))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let answered = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned());
    if content_type == "application/x-protobuf" {
        assert_eq!(answered.as_deref(), Some("application/x-protobuf"));
    }
    (status, String::from_utf8_lossy(&response.bytes().await.unwrap()).into_owned())
}
