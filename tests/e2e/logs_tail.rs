//! `engage logs tail` (the binary) against a running server on either sink, and the
//! `GET /v1/logs/tail` read it uses: what is there, `--since`, `--filter`, `--format json`,
//! `--follow` showing a new event within a second of its POST, and a closed pipe.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{event, event_at, spawn_app, unique_org, TestApp};
use crate::procs::BIN;

/// `engage logs tail GROUP ARGS… --url BASE` with stdout piped.
fn tail(app: &TestApp, group: &str, args: &[&str]) -> Child {
    Command::new(BIN)
        .args(["logs", "tail", group, "--url", &app.base])
        .args(args)
        .env_remove("ENGAGE_LOGS_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs a tail that ends by itself; its stdout lines.
async fn tail_lines(app: &TestApp, group: &str, args: &[&str]) -> Vec<String> {
    let child = tail(app, group, args);
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect()
}

/// The lines a running tail prints, as they come.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().unwrap();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                return;
            }
        }
    });
    receiver
}

/// POSTs an event and waits (at most `within`) for a line of `lines` holding its message; the
/// time from the POST's answer to that line.
async fn posted_and_seen(app: &TestApp, lines: &mpsc::Receiver<String>, message: &str, within: Duration) -> Duration {
    let (status, body) = app.post_json("/v1/logs", &event(message)).await;
    assert_eq!(status, 200, "{body}");
    let posted = Instant::now();
    loop {
        let left = within.checked_sub(posted.elapsed()).unwrap_or_default();
        match tokio::task::block_in_place(|| lines.recv_timeout(left)) {
            Ok(line) if line.contains(message) => return posted.elapsed(),
            Ok(_) => continue,
            Err(_) => panic!("`engage logs tail --follow` did not show {message:?} within {within:?}"),
        }
    }
}

async fn follow_shows_new_events_within_a_second(app: &TestApp, group: &str, sink: &str) {
    let mut child = tail(app, group, &["--follow", "--format", "json"]);
    let lines = lines_of(&mut child);
    // the first request is made and waiting
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut seen = Vec::new();
    for n in 0..3 {
        seen.push(posted_and_seen(app, &lines, &format!("followed {n}"), Duration::from_secs(1)).await);
    }
    println!("FIGURES tail --follow {sink}: POST answered → line printed: {seen:?}");
    child.kill().unwrap();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tail_prints_filters_and_follows_the_embedded_sink() {
    let org = unique_org();
    let app = spawn_app(&[("ENGAGE_LOG_ORG", &org)]).await;
    let group = format!("/logs/{org}/edge/checkout");
    let mut failing = event("payment failed");
    failing["level"] = json!("ERROR");
    let old = event_at(chrono::Duration::minutes(-30), "half an hour ago");
    let (status, body) = app.post_json("/v1/logs", &json!([old, event("order placed"), failing])).await;
    assert_eq!(status, 200, "{body}");

    // the last 10 minutes by default, short format: TIME LEVEL STREAM MESSAGE
    let lines = tail_lines(&app, &group, &[]).await;
    assert_eq!(lines.len(), 2, "{lines:?}");
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    // one request's events are stored by timestamp (the failing one was made first)
    assert!(lines.iter().any(|l| l.ends_with(&format!(" INFO api/{today} order placed"))), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains(" ERROR ") && l.ends_with("payment failed")), "{lines:?}");
    assert_eq!(tail_lines(&app, &group, &["--since", "1h"]).await.len(), 3);
    let errors = tail_lines(&app, &group, &["--filter", "ERROR", "--format", "json"]).await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    let parsed: Value = serde_json::from_str(&errors[0]).unwrap();
    assert_eq!((parsed["message"].as_str(), parsed["level"].as_str()), (Some("payment failed"), Some("ERROR")));

    follow_shows_new_events_within_a_second(&app, &group, "embedded").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_pipe_ends_the_tail_quietly() {
    let org = unique_org();
    let app = spawn_app(&[("ENGAGE_LOG_ORG", &org)]).await;
    let group = format!("/logs/{org}/edge/checkout");
    // more than a pipe's buffer of output
    let events: Vec<Value> = (0..1000).map(|n| event(&format!("event {n} {}", "x".repeat(200)))).collect();
    let (status, body) = app.post_json("/v1/logs", &Value::Array(events)).await;
    assert_eq!(status, 200, "{body}");
    for args in [&[][..], &["--follow"][..]] {
        let mut child = tail(&app, &group, args);
        let stdout = child.stdout.take().unwrap();
        let first = BufReader::new(stdout).lines().next().unwrap().unwrap(); // `| head -1`
        assert!(first.contains("event 0"), "{first}");
        let status = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap();
        assert!(status.status.success(), "{args:?}: {status:?}");
        assert!(!String::from_utf8_lossy(&status.stderr).contains("panicked"), "{status:?}");
    }
}

#[tokio::test]
async fn the_tail_read_refuses_what_it_cannot_use() {
    let app = spawn_app(&[]).await;
    for query in [
        "",
        "?log_group=",
        "?log_group=/logs/org/edge/api&cursor=nonsense",
        "?log_group=/logs/org/edge/api&cursor=e1.2",
        "?log_group=/logs/org/edge/api&limit=0",
        "?log_group=/logs/org/edge/api&wait=6",
        "?log_group=/logs/org/edge/api&since=-1",
    ] {
        let (status, body) = app.get_json(&format!("/v1/logs/tail{query}")).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("INVALID_QUERY")), "{query}: {body}");
    }
    // a CloudWatch cursor on the embedded sink starts over from `since`
    let (status, body) = app.get_json("/v1/logs/tail?log_group=/logs/org/edge/api&cursor=c1.2").await;
    assert_eq!(status, 200, "{body}");
    // a made-up position in the log is read past, not trusted
    let (status, body) = app.get_json("/v1/logs/tail?log_group=/logs/org/edge/api&cursor=e1.3.7").await;
    assert_eq!(status, 200, "{body}");
    assert!(body["cursor"].as_str().is_some_and(|c| c.starts_with('e')), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tail_follows_the_cloudwatch_sink() {
    let org = unique_org();
    let app = crate::cloudwatch::cloudwatch_app(&org).await;
    let group = format!("/logs/{org}/edge/checkout");
    let (status, body) = app.post_json("/v1/logs", &json!([event("before the tail")])).await;
    assert_eq!(status, 200, "{body}");
    let lines = tail_lines(&app, &group, &[]).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].ends_with("before the tail"), "{lines:?}");
    follow_shows_new_events_within_a_second(&app, &group, "cloudwatch (moto)").await;
}
