//! Retention of the embedded log (issue 44): whole old segments are deleted, young and mixed ones
//! stay, reads answer only what is kept, `/metrics` counts it, `engage logs usage` prints it; and
//! the disk guard on a real small filesystem (a tmpfs the test mounts) refuses writes before the
//! disk is full while keeping everything acknowledged. The CloudWatch retention is in
//! `cloudwatch.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{event_at, spawn_app_in, unique_org, TestApp};
use crate::procs::BIN;

/// `n` events of about 300 bytes, `days` back, for `service`.
fn events(service: &str, days: i64, n: usize, tag: &str) -> Value {
    let offset = chrono::Duration::days(-days) + chrono::Duration::minutes(1);
    Value::Array(
        (0..n)
            .map(|i| {
                let mut event = event_at(offset, &format!("{tag} {i} {}", "x".repeat(200)));
                event["service"] = json!(service);
                event
            })
            .collect(),
    )
}

async fn post(app: &TestApp, body: &Value) -> (u16, Value) {
    app.post_json("/v1/logs", body).await
}

/// The value of `name` on `/metrics` (summed over labels).
pub async fn metric(app: &TestApp, name: &str) -> f64 {
    let text = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|line| line.starts_with(name) && line[name.len()..].starts_with([' ', '{']))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The numbers of the segment files in `logs`, in order.
fn segment_numbers(logs: &Path) -> Vec<u64> {
    let mut numbers: Vec<u64> = std::fs::read_dir(logs)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_string_lossy().strip_suffix(".seg")?.parse().ok())
        .collect();
    numbers.sort_unstable();
    numbers
}

/// The newest segment's number.
fn newest(logs: &Path) -> u64 {
    *segment_numbers(logs).last().unwrap()
}

fn messages(stored: &[Value]) -> Vec<String> {
    stored
        .iter()
        .map(|e| e["event"]["message"].as_str().unwrap().split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect()
}

#[tokio::test]
async fn old_segments_expire_young_ones_stay_and_reads_show_only_what_is_kept() {
    let org = unique_org();
    let keep = format!("/logs/{org}/edge/keep=7");
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    // written while the retention is 30 days (an event older than its group's retention is
    // refused at the door), then the operator shortens it to 1 day and restarts
    let app = spawn_app_in(
        dir,
        &[("ENGAGE_LOG_ORG", &org), ("ENGAGE_LOG_RETENTION_DAYS", "30"), ("ENGAGE_LOG_SEGMENT_BYTES", "65536")],
    )
    .await;
    // each request of 300 events fills a 64 KiB segment: three of old events only, one of the
    // 7-day group, one mixed, two young. The expiry may run between two requests: each
    // request's segment is noted (the newest file after it) and checked by name.
    let mut segments = Vec::new();
    for n in 0..3 {
        assert_eq!(post(&app, &events("checkout", 3, 300, &format!("old{n}"))).await.0, 200);
        segments.push(("old", newest(&logs)));
    }
    assert_eq!(post(&app, &events("keep", 3, 300, "kept")).await.0, 200);
    segments.push(("kept 7 days", newest(&logs)));
    // two small requests share the next segment: one old, one young
    assert_eq!(post(&app, &events("checkout", 3, 20, "mixed-old")).await.0, 200);
    assert_eq!(post(&app, &events("checkout", 0, 20, "mixed-young")).await.0, 200);
    segments.push(("mixed", newest(&logs)));
    for n in 0..2 {
        assert_eq!(post(&app, &events("checkout", 0, 300, &format!("young{n}"))).await.0, 200);
        segments.push(("young", newest(&logs)));
    }
    let numbers: Vec<u64> = segments.iter().map(|(_, n)| *n).collect();
    assert_eq!(numbers, (numbers[0]..numbers[0] + 7).collect::<Vec<_>>(), "one segment per request: {segments:?}");
    let app = spawn_app_in(
        app.stop().await,
        &[
            ("ENGAGE_LOG_ORG", &org),
            ("ENGAGE_LOG_RETENTION_DAYS", "1"),
            ("ENGAGE_LOG_RETENTION_BY_GROUP", &keep),
            ("ENGAGE_LOG_SEGMENT_BYTES", "65536"),
            ("ENGAGE_LOG_EXPIRY_INTERVAL_SECS", "1"),
        ],
    )
    .await;

    let deadline = Instant::now() + Duration::from_secs(15);
    while metric(&app, "engage_log_segments_deleted_total").await < 3.0 {
        assert!(Instant::now() < deadline, "no expiry within 15 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await; // one more pass: nothing more goes
    let left = segment_numbers(&logs);
    assert_eq!(metric(&app, "engage_log_segments_deleted_total").await, 3.0, "only the three old segments: {left:?}");
    for (what, number) in &segments {
        assert_eq!(left.contains(number), *what != "old", "{what} segment {number}: left {left:?}");
    }
    assert!(metric(&app, "engage_log_disk_bytes").await > 0.0);
    assert_eq!(metric(&app, "engage_log_segments").await, left.len() as f64);

    // reads: the 1-day group shows its young events only, the mixed segment's old half hidden
    let checkout = app.stored(&format!("/logs/{org}/edge/checkout")).await;
    let seen = messages(&checkout);
    assert_eq!(seen.len(), 620, "20 mixed-young + 600 young");
    assert!(seen.iter().all(|m| m.starts_with("young") || m.starts_with("mixed-young")), "{:?}", &seen[..3]);
    let tail = app.get_json(&format!("/v1/logs/tail?log_group=/logs/{org}/edge/checkout&since=0&limit=10000")).await.1;
    assert_eq!(tail["events"].as_array().unwrap().len(), 620);
    // the 7-day group keeps its 3-day-old events
    assert_eq!(app.stored(&format!("/logs/{org}/edge/keep")).await.len(), 300);

    // engage logs usage
    let base = app.base.clone();
    let output =
        tokio::task::spawn_blocking(move || Command::new(BIN).args(["logs", "usage", "--url", &base]).output())
            .await
            .unwrap()
            .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    let three_days_ago = (chrono::Utc::now() - chrono::Duration::days(3)).format("%Y-%m-%d").to_string();
    assert!(text.contains("sink: embedded") && text.contains("retention: 1 days"), "{text}");
    assert!(text.contains(&format!("in {} segments", left.len())), "{text}");
    assert!(text.contains(&format!("oldest event kept: {three_days_ago}")), "{text}");
}

/// A tmpfs of `size` mounted on `at`, unmounted when dropped.
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    pub fn mount(at: &Path, size: &str) -> Self {
        std::fs::create_dir_all(at).unwrap();
        let status =
            Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(at).status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "the disk-guard test mounts a small tmpfs (a real full disk): run the tests as root, as scripts/test.sh does"
        );
        Self(at.to_owned())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[tokio::test]
async fn the_disk_guard_refuses_before_a_small_disk_is_full_and_loses_nothing() {
    let org = unique_org();
    let dir = tempfile::tempdir().unwrap();
    let _tmpfs = Tmpfs::mount(&dir.path().join("logs"), "4m");
    let app = spawn_app_in(
        dir,
        &[("ENGAGE_LOG_ORG", &org), ("ENGAGE_LOG_SEGMENT_BYTES", "262144"), ("ENGAGE_LOG_MIN_FREE_BYTES", "1048576")],
    )
    .await;
    let mut accepted = 0;
    let mut refusal = None;
    for n in 0..40 {
        let (status, body) = post(&app, &events("checkout", 0, 200, &format!("batch{n}"))).await;
        match status {
            200 => accepted += body["accepted"].as_u64().unwrap(),
            _ => {
                refusal = Some((status, body));
                break;
            }
        }
    }
    let (status, body) = refusal.expect("the guard refused before 40 requests of 60 KiB filled 4 MiB");
    assert_eq!((status, body["error"].as_str()), (507, Some("DISK_FULL")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("ENGAGE_LOG_MIN_FREE_BYTES"), "{body}");
    assert!(accepted >= 2000, "{accepted} accepted before the guard");

    // /readyz says why, within its one-second watch
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, ready) = app.get_json("/readyz").await;
        if status == 503 && ready["problems"]["log_disk"].as_str().is_some_and(|p| p.contains("507")) {
            break;
        }
        assert!(Instant::now() < deadline, "/readyz did not report the low disk: {ready}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // the OTLP input answers 503 (what its exporters retry)
    let response = app
        .client
        .post(format!("{}/otlp/v1/logs", app.base))
        .header("content-type", "application/json")
        .body(otlp_record().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert!(response.headers().contains_key("retry-after"));
    // every acknowledged event is there, and the log still writes nothing half
    let stored = app.stored(&format!("/logs/{org}/edge/checkout")).await;
    assert_eq!(stored.len() as u64, accepted);
    assert_eq!(metric(&app, "engage_log_segment_failures_total").await, 0.0, "no write hit the full disk");
    // the two refused writes, not /readyz's checks of the disk
    assert_eq!(metric(&app, "engage_log_disk_refusals_total").await, 2.0);
}

/// An OTLP/JSON export of one valid record.
fn otlp_record() -> Value {
    let kv = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    json!({"resourceLogs": [{
        "resource": {"attributes": [kv("service.name", "checkout"), kv("product", "edge"), kv("version", "1"), kv("environment", "prod")]},
        "scopeLogs": [{"scope": {"name": "api"}, "logRecords": [{"body": {"stringValue": "refused"}}]}]
    }]})
}
