//! The log service at its edges (issue 54), as operators and exporters meet them: OTLP/JSON
//! printed by protobuf's own printer, a refused `Content-Encoding`, a trailing slash, refusals
//! that name every allowed value (in the answer and the server's log), an event older than its
//! group's retention, reads on a full disk, `/readyz` on a disk already low at start, and
//! `engage logs tail` of a group that does not exist. `ENGAGE_LOGS_TOKEN` is in `jwt.rs`.

use std::io::Write;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::{event_at, spawn_app, spawn_app_in, unique_org};
use crate::log_retention::{metric, Tmpfs};
use crate::procs::{cli_async, free_port, Engage};

/// The five products a LogEvent may name (the schema's enum).
const PRODUCTS: [&str; 5] = ["edge", "flash", "product_p", "platform", "white-label"];

/// An OTLP/JSON export printed by protobuf's own `MessageToJson` (the Python protobuf runtime the
/// OpenTelemetry SDK ships with): empty list and map values as `{}`, the severity by name, ids in
/// base64.
fn message_to_json(now_nanos: i64) -> Value {
    let script = r#"
import sys
from google.protobuf.json_format import MessageToJson
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValueList
from opentelemetry.proto.logs.v1.logs_pb2 import SeverityNumber
request = ExportLogsServiceRequest()
resource_logs = request.resource_logs.add()
for key, value in [("service.name", "pay"), ("product", "flash"), ("service.version", "2"), ("deployment.environment", "dev")]:
    resource_logs.resource.attributes.add(key=key, value=AnyValue(string_value=value))
scope_logs = resource_logs.scope_logs.add()
scope_logs.scope.name = "pay.api"
record = scope_logs.log_records.add()
record.time_unix_nano = int(sys.argv[1])
record.severity_number = SeverityNumber.SEVERITY_NUMBER_WARN
record.body.string_value = "printed by MessageToJson"
record.trace_id = bytes.fromhex("5b8efff798038103d269b633813fc60c")
record.span_id = bytes.fromhex("eee19b7ec3c1b174")
record.attributes.add(key="tags", value=AnyValue(array_value=ArrayValue()))
record.attributes.add(key="extra", value=AnyValue(kvlist_value=KeyValueList()))
print(MessageToJson(request))
"#;
    let output = Command::new("python3")
        .args(["-c", script, &now_nanos.to_string()])
        .output()
        .expect("python3 runs (scripts/test.sh installs the OpenTelemetry SDK and its protobuf runtime)");
    assert!(output.status.success(), "MessageToJson: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test]
async fn otlp_json_from_protobufs_printer_is_stored_and_bad_encodings_get_otlp_errors() {
    let org = unique_org();
    let app = spawn_app(&[("ENGAGE_LOG_ORG", &org)]).await;
    let now = chrono::Utc::now().timestamp_nanos_opt().unwrap();
    let body = message_to_json(now);
    let printed = body.to_string();
    assert!(printed.contains(r#""arrayValue":{}"#) && printed.contains("SEVERITY_NUMBER_WARN"), "{printed}");
    let post = |path: &str, content_type: &str, encoding: Option<&str>, body: Vec<u8>| {
        let mut request = app.client.post(format!("{}{path}", app.base)).header("content-type", content_type);
        if let Some(encoding) = encoding {
            request = request.header("content-encoding", encoding);
        }
        request.body(body).send()
    };
    let response = post("/otlp/v1/logs", "application/json", None, printed.clone().into_bytes()).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "{}", "every record stored, nothing refused");
    let stored = app.stored(&format!("/logs/{org}/flash/pay")).await;
    assert_eq!(stored.len(), 1, "{stored:#?}");
    assert_eq!(stored[0]["event"]["trace_id"], "5b8efff798038103d269b633813fc60c");
    assert_eq!(stored[0]["event"]["level"], "WARN");

    // an exporter endpoint written with a trailing slash
    let response = post("/otlp/v1/logs/", "application/json", None, printed.clone().into_bytes()).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(app.stored(&format!("/logs/{org}/flash/pay")).await.len(), 2);

    // deflate is not taken: an OTLP error body in the request's encoding, naming the encoding
    let deflated = {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(printed.as_bytes()).unwrap();
        encoder.finish().unwrap()
    };
    let response = post("/otlp/v1/logs", "application/json", Some("deflate"), deflated.clone()).await.unwrap();
    assert_eq!(response.status(), 415);
    assert_eq!(response.headers()["content-type"], "application/json");
    let answer: Value = response.json().await.unwrap();
    assert_eq!((answer["code"].clone(), answer["error"].clone()), (json!(3), json!("UNSUPPORTED_MEDIA_TYPE")));
    let message = answer["message"].as_str().unwrap();
    assert!(message.contains("deflate") && message.contains("gzip"), "{message}");
    let response = post("/otlp/v1/logs", "application/x-protobuf", Some("deflate"), deflated).await.unwrap();
    assert_eq!(response.status(), 415);
    assert_eq!(response.headers()["content-type"], "application/x-protobuf");
    // the JSON route says the same in its own family
    let response = post("/v1/logs", "application/json", Some("br"), b"{}".to_vec()).await.unwrap();
    assert_eq!(response.status(), 415);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["error"], "UNSUPPORTED_MEDIA_TYPE");
    assert!(answer["message"].as_str().unwrap().contains("Content-Encoding br"), "{answer}");
}

#[tokio::test]
async fn refusals_name_every_allowed_value_in_the_answer_and_the_servers_log() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let org = unique_org();
    let engage = Engage::start(&dir.path().join("data"), port, &[("ENGAGE_LOG_ORG", &org)]).await;
    let client = reqwest::Client::new();
    let mut bad = event_at(chrono::Duration::zero(), "wrong product");
    bad["product"] = json!("nope");
    let answer: Value =
        client.post(format!("{}/v1/logs", engage.base)).json(&bad).send().await.unwrap().json().await.unwrap();
    assert_eq!(answer["error"], "SCHEMA_VIOLATION", "{answer}");
    let issue = answer["issues"][0]["message"].as_str().unwrap();
    for product in PRODUCTS {
        assert!(issue.contains(&format!("\"{product}\"")), "{product} missing from {issue}");
    }
    // the same in an OTLP partial success
    let kv = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    let export = json!({"resourceLogs": [{"resource": {"attributes": [kv("service.name", "pay"), kv("product", "nope"),
        kv("service.version", "2"), kv("deployment.environment", "dev")]},
        "scopeLogs": [{"logRecords": [{"body": {"stringValue": "refused"}}]}]}]});
    let answer: Value =
        client.post(format!("{}/otlp/v1/logs", engage.base)).json(&export).send().await.unwrap().json().await.unwrap();
    let message = answer["partialSuccess"]["errorMessage"].as_str().unwrap();
    assert!(PRODUCTS.iter().all(|p| message.contains(&format!("\"{p}\""))), "{message}");
    // the server's log says why, once a second however many come
    for _ in 0..5 {
        client.post(format!("{}/v1/logs", engage.base)).json(&bad).send().await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    client.post(format!("{}/v1/logs", engage.base)).json(&bad).send().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = engage.stderr();
    let lines: Vec<&str> = log.lines().filter(|line| line.contains("log records refused")).collect();
    assert!(lines.iter().any(|line| line.contains("white-label") && line.contains("/product")), "{log}");
    assert!((2..=4).contains(&lines.len()), "one line a second, not one per refusal: {lines:#?}");
    assert!(lines.iter().any(|line| line.contains("suppressed=") && !line.contains("suppressed=0")), "{lines:#?}");
}

#[tokio::test]
async fn an_event_older_than_its_groups_retention_is_expired_on_the_embedded_sink_too() {
    let org = unique_org();
    let by_group = format!("/logs/{org}/edge/checkout=1");
    let app = spawn_app(&[("ENGAGE_LOG_ORG", &org), ("ENGAGE_LOG_RETENTION_BY_GROUP", &by_group)]).await;
    let body = json!([event_at(chrono::Duration::days(-3), "expired"), event_at(chrono::Duration::zero(), "kept")]);
    let (status, answer) = app.post_json("/v1/logs", &body).await;
    assert_eq!(status, 207, "{answer}");
    assert_eq!((answer["accepted"].clone(), answer["rejected"].clone()), (json!(1), json!(1)));
    assert_eq!(answer["detail"][0]["info"]["expiredEventIndices"], json!([0]), "{answer}");
    let stored = app.stored(&format!("/logs/{org}/edge/checkout")).await;
    assert_eq!(stored.iter().map(|e| e["event"]["message"].clone()).collect::<Vec<_>>(), vec![json!("kept")]);
    // a whole request of expired events: 400, saying so
    let (status, answer) = app.post_json("/v1/logs", &event_at(chrono::Duration::days(-2), "old")).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("1 expired"), "{answer}");
    // 3 days old is kept by a group with the default 30 days
    let mut other = event_at(chrono::Duration::days(-3), "other group");
    other["service"] = json!("other");
    assert_eq!(app.post_json("/v1/logs", &other).await.0, 200);
}

/// Fills the filesystem of `dir` to its last byte; the filler file's path.
fn fill(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    while file.write_all(&chunk).is_ok() {}
    let small = [0u8; 512];
    while file.write_all(&small).is_ok() {}
    let _ = file.sync_all();
    path
}

#[tokio::test]
async fn reads_answer_on_a_full_disk_and_readyz_says_low_from_the_first_answer() {
    let org = unique_org();
    let dir = tempfile::tempdir().unwrap();
    let _tmpfs = Tmpfs::mount(dir.path(), "96m");
    let app = spawn_app_in(
        tempfile::TempDir::new_in(dir.path()).unwrap(),
        &[("ENGAGE_LOG_ORG", &org), ("ENGAGE_LOG_MIN_FREE_BYTES", "1048576")],
    )
    .await;
    let group = format!("/logs/{org}/edge/checkout");
    let batch: Vec<Value> = (0..50).map(|i| event_at(chrono::Duration::zero(), &format!("before full {i}"))).collect();
    assert_eq!(app.post_json("/v1/logs", &json!(batch)).await.0, 200);
    let filler = fill(dir.path());
    let (status, read) = app.get_json(&format!("/v1/logs/events?log_group={group}&limit=100")).await;
    assert_eq!(status, 200, "a read on a full disk: {read}");
    assert_eq!(read["events"].as_array().unwrap().len(), 50);
    let (status, tail) = app.get_json(&format!("/v1/logs/tail?log_group={group}&since=0")).await;
    assert_eq!((status, tail["events"].as_array().map(Vec::len)), (200, Some(50)), "{tail}");
    let (status, usage) = app.get_json("/v1/logs/usage").await;
    assert_eq!(status, 200, "{usage}");
    assert_eq!(metric(&app, "engage_log_segment_failures_total").await, 0.0);
    std::fs::remove_file(filler).unwrap();

    // a node started on a disk already below the guard's threshold is not ready from its first answer
    let low = tempfile::tempdir().unwrap();
    let _small = Tmpfs::mount(&low.path().join("logs"), "2m");
    let app = spawn_app_in(low, &[("ENGAGE_LOG_MIN_FREE_BYTES", "4194304")]).await;
    let (status, ready) = app.get_json("/readyz").await;
    assert_eq!(status, 503, "{ready}");
    assert!(ready["problems"]["log_disk"].as_str().is_some_and(|p| p.contains("507")), "{ready}");
}

#[tokio::test]
async fn tailing_a_group_that_does_not_exist_says_so() {
    let org = unique_org();
    let app = spawn_app(&[("ENGAGE_LOG_ORG", &org)]).await;
    let cwd = tempfile::tempdir().unwrap();
    let missing = format!("/logs/{org}/edge/nothing-here");
    let output = cli_async(cwd.path(), &[], &["logs", "tail", &missing, "--url", &app.base]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no log group") && stderr.contains(&missing), "{stderr}");
    // a group that exists but has nothing in the window: quiet, status 0
    let old = event_at(chrono::Duration::hours(-1), "an hour ago");
    assert_eq!(app.post_json("/v1/logs", &old).await.0, 200);
    let existing = format!("/logs/{org}/edge/checkout");
    let output = cli_async(cwd.path(), &[], &["logs", "tail", &existing, "--url", &app.base, "--since", "5m"]).await;
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    assert!(output.stdout.is_empty(), "no event in the window");
    assert!(said.contains(&format!("no events in {existing} since")), "an empty tail says so: {said}");
    // a stream that does not exist in it
    let output = cli_async(cwd.path(), &[], &["logs", "tail", &existing, "--url", &app.base, "--stream", "nope"]).await;
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no log stream \"nope\""));
    // the answer says it too
    let (status, page) = app.get_json(&format!("/v1/logs/tail?log_group={missing}")).await;
    assert_eq!((status, page["group_found"].clone()), (200, json!(false)), "{page}");
    let (_, page) = app.get_json(&format!("/v1/logs/tail?log_group={existing}")).await;
    assert_eq!(page["group_found"], json!(true), "{page}");
}
