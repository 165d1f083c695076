//! The CloudWatch Logs sink against moto_server (`ENGAGE_TEST_MOTO_URL`): 200, 207 and
//! ALL_REJECTED with the events read back from moto's log group, exact per-request answers when
//! concurrent requests are coalesced, and WRITE_FAILED when the endpoint is down.

use aws_sdk_cloudwatchlogs::Client;
use chrono::Duration;
use serde_json::{json, Value};

use crate::helpers::{event, event_at, required_env, spawn_app, unique_org, TestApp};

fn aws_env() {
    // moto accepts any credentials; nextest runs each test in its own process, so this is safe.
    for (name, value) in
        [("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"), ("AWS_REGION", "us-east-1")]
    {
        if std::env::var(name).is_err() {
            std::env::set_var(name, value);
        }
    }
}

pub async fn cloudwatch_app(org: &str) -> TestApp {
    aws_env();
    let moto = required_env("ENGAGE_TEST_MOTO_URL");
    spawn_app(&[("ENGAGE_LOG_SINK", "cloudwatch"), ("ENGAGE_CLOUDWATCH_ENDPOINT", &moto), ("ENGAGE_LOG_ORG", org)])
        .await
}

async fn moto_client() -> Client {
    aws_env();
    let moto = required_env("ENGAGE_TEST_MOTO_URL");
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest()).endpoint_url(moto).load().await;
    Client::new(&config)
}

/// Every message stored in every stream of `group`, read from moto.
async fn messages_in(group: &str) -> Vec<String> {
    let client = moto_client().await;
    let streams = client.describe_log_streams().log_group_name(group).send().await.expect("group exists in moto");
    let mut messages = Vec::new();
    for stream in streams.log_streams() {
        let name = stream.log_stream_name().unwrap_or_default();
        let events = client
            .get_log_events()
            .log_group_name(group)
            .log_stream_name(name)
            .start_from_head(true)
            .limit(10_000)
            .send()
            .await
            .expect("events");
        for e in events.events() {
            let message: Value =
                serde_json::from_str(e.message().unwrap_or_default()).expect("message is the LogEvent as JSON");
            messages.push(message["message"].as_str().unwrap_or_default().to_owned());
        }
    }
    messages.sort();
    messages
}

#[tokio::test]
async fn accepted_events_land_in_the_named_group_and_stream() {
    let org = unique_org();
    let app = cloudwatch_app(&org).await;
    let (status, body) = app.post_json("/v1/logs", &json!([event("one"), event("two")])).await;
    assert_eq!((status, body), (200, json!({"accepted": 2})));
    let group = format!("/logs/{org}/edge/checkout");
    assert_eq!(messages_in(&group).await, vec!["one", "two"]);
    let client = moto_client().await;
    let streams = client.describe_log_streams().log_group_name(&group).send().await.unwrap();
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let names: Vec<&str> = streams.log_streams().iter().filter_map(|s| s.log_stream_name()).collect();
    assert_eq!(names, vec![format!("api/{today}").as_str()]);
    // the message is the LogEvent itself, timestamp the event's own
    let events = client
        .get_log_events()
        .log_group_name(&group)
        .log_stream_name(names[0])
        .start_from_head(true)
        .send()
        .await
        .unwrap();
    let first = &events.events()[0];
    let logged: Value = serde_json::from_str(first.message().unwrap()).unwrap();
    let ts = chrono::DateTime::parse_from_rfc3339(logged["timestamp"].as_str().unwrap()).unwrap().timestamp_millis();
    assert_eq!(first.timestamp(), Some(ts));
    assert_eq!(logged["service"], "checkout");
}

#[tokio::test]
async fn mixed_old_and_new_events_give_207_and_land_exactly_once() {
    let org = unique_org();
    let app = cloudwatch_app(&org).await;
    let batch = json!([
        event_at(-Duration::days(15), "old"),
        event("good-1"),
        event_at(Duration::hours(3), "future"),
        event_at(-Duration::minutes(5), "good-2"),
    ]);
    let (status, body) = app.post_json("/v1/logs", &batch).await;
    assert_eq!(status, 207, "{body}");
    assert_eq!(body["accepted"], 2);
    assert_eq!(body["rejected"], 2);
    let detail = body["detail"].as_array().unwrap();
    let mut old = Vec::new();
    let mut new = Vec::new();
    for item in detail {
        assert!(item["log_group"].as_str().unwrap().ends_with("/edge/checkout"));
        if let Some(list) = item["info"]["tooOldEventIndices"].as_array() {
            old.extend(list.iter().map(|v| v.as_u64().unwrap()));
        }
        if let Some(list) = item["info"]["tooNewEventIndices"].as_array() {
            new.extend(list.iter().map(|v| v.as_u64().unwrap()));
        }
    }
    assert_eq!((old, new), (vec![0], vec![2]), "{body}");
    assert_eq!(messages_in(&format!("/logs/{org}/edge/checkout")).await, vec!["good-1", "good-2"]);
}

#[tokio::test]
async fn every_event_dropped_by_cloudwatch_is_all_rejected() {
    let org = unique_org();
    let app = cloudwatch_app(&org).await;
    let (status, body) = app
        .post_json("/v1/logs", &json!([event_at(-Duration::days(15), "a"), event_at(-Duration::days(16), "b")]))
        .await;
    assert_eq!((status, body["error"].clone()), (400, json!("ALL_REJECTED")), "{body}");
    assert!(messages_in(&format!("/logs/{org}/edge/checkout")).await.is_empty());
}

#[tokio::test]
async fn concurrent_requests_each_get_their_own_exact_answer() {
    let org = unique_org();
    let app = cloudwatch_app(&org).await;
    let requests = (0..24).map(|i| {
        let app = &app;
        async move {
            // each request: a good event, and (for odd i) an old one at index 1
            let mut batch = vec![event(&format!("r{i:02}-good"))];
            if i % 2 == 1 {
                batch.push(event_at(-Duration::days(15), &format!("r{i:02}-old")));
            }
            (i, app.post_json("/v1/logs", &json!(batch)).await)
        }
    });
    for (i, (status, body)) in futures::future::join_all(requests).await {
        if i % 2 == 1 {
            assert_eq!(status, 207, "request {i}: {body}");
            assert_eq!((body["accepted"].clone(), body["rejected"].clone()), (json!(1), json!(1)));
            let detail = body["detail"].as_array().unwrap();
            assert_eq!(detail.len(), 1);
            assert_eq!(detail[0]["attempted"], 1, "only this request's events count: {body}");
            assert_eq!(detail[0]["info"]["tooOldEventIndices"], json!([1]));
        } else {
            assert_eq!((status, body), (200, json!({"accepted": 1})), "request {i}");
        }
    }
    let landed = messages_in(&format!("/logs/{org}/edge/checkout")).await;
    let expected: Vec<String> = (0..24).map(|i| format!("r{i:02}-good")).collect();
    assert_eq!(landed, expected);
}

/// `engage_log_batch_events{sink="cloudwatch"}`: (sum of events, number of calls).
async fn batch_events(app: &TestApp) -> (f64, f64) {
    let text = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    let value = |name: &str| -> f64 {
        text.lines()
            .find(|line| line.starts_with(&format!("{name}{{sink=\"cloudwatch\"}}")))
            .and_then(|line| line.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    (value("engage_log_batch_events_sum"), value("engage_log_batch_events_count"))
}

#[tokio::test]
async fn concurrent_single_event_producers_share_put_log_events_calls() {
    // 32 producers each send 6 single-event requests, one after the other, to one stream, through
    // a proxy that makes each PutLogEvents take 40 ms. One call is in flight per stream, and the
    // next waits briefly for the last call's producers, so nearly every call carries all 32
    // producers' events.
    aws_env();
    let org = unique_org();
    let (proxy, probe) =
        flaky_proxy(required_env("ENGAGE_TEST_MOTO_URL"), Vec::new(), std::time::Duration::from_millis(40)).await;
    let app = spawn_app(&[
        ("ENGAGE_LOG_SINK", "cloudwatch"),
        ("ENGAGE_CLOUDWATCH_ENDPOINT", &proxy),
        ("ENGAGE_LOG_ORG", &org),
    ])
    .await;
    let producers = (0..32).map(|p| {
        let app = &app;
        async move {
            for n in 0..6 {
                let (status, body) = app.post_json("/v1/logs", &event(&format!("p{p:02}-{n}"))).await;
                assert_eq!((status, body), (200, json!({"accepted": 1})), "producer {p} request {n}");
            }
        }
    });
    futures::future::join_all(producers).await;
    let (events, calls) = batch_events(&app).await;
    assert_eq!(events, 192.0, "every event went to CloudWatch once");
    assert_eq!(probe.max_in_flight.load(std::sync::atomic::Ordering::SeqCst), 1, "one call in flight per stream");
    // 6 rounds of 32 need at least 7 calls (the first call has only the first event); a loaded
    // test machine can make a producer miss the 5 ms wait now and then. 4 calls in flight and no
    // wait gave 8 per call here.
    assert!(events / calls >= 16.0, "{events} events in {calls} PutLogEvents calls");
    assert_eq!(messages_in(&format!("/logs/{org}/edge/checkout")).await.len(), 192);
}

#[tokio::test]
async fn an_unreachable_endpoint_is_write_failed() {
    aws_env();
    // a port nothing listens on
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let app = spawn_app(&[
        ("ENGAGE_LOG_SINK", "cloudwatch"),
        ("ENGAGE_CLOUDWATCH_ENDPOINT", &endpoint),
        ("ENGAGE_CLOUDWATCH_DEADLINE_MS", "600"),
    ])
    .await;
    let (status, body) = app.post_json("/v1/logs", &json!([event("lost?")])).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(body["error"], "WRITE_FAILED");
    let (status, body) = app.get_json("/v1/logs/events?log_group=/logs/org/edge/checkout").await;
    assert_eq!((status, body["error"].clone()), (400, json!("UNSUPPORTED_SINK")));
}

/// What [`flaky_proxy`] saw: PutLogEvents calls, and the most that were in flight at once.
struct Probe {
    puts: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    max_in_flight: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// A fault injector in front of moto: the first `failures` PutLogEvents calls get the given
/// answers (503, then throttling), everything else is forwarded to moto unchanged, each
/// PutLogEvents after `delay` (a slower CloudWatch than moto on loopback).
async fn flaky_proxy(moto: String, failures: Vec<(u16, &'static str)>, delay: std::time::Duration) -> (String, Probe) {
    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::{HeaderMap, Method, Uri};
    use axum::response::IntoResponse;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    type ProxyState = (
        String,
        Arc<AtomicUsize>,
        Arc<Vec<(u16, &'static str)>>,
        reqwest::Client,
        (Arc<AtomicUsize>, Arc<AtomicUsize>, std::time::Duration),
    );
    async fn handle(
        State((moto, puts, failures, client, (in_flight, max_in_flight, delay))): State<ProxyState>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> axum::response::Response {
        let target = headers.get("x-amz-target").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        let is_put = target.ends_with("PutLogEvents");
        if is_put {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            max_in_flight.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(delay).await;
        }
        let response = forward(&moto, &puts, &failures, &client, is_put, method, uri, headers, body).await;
        if is_put {
            in_flight.fetch_sub(1, Ordering::SeqCst);
        }
        response
    }

    #[allow(clippy::too_many_arguments)]
    async fn forward(
        moto: &str,
        puts: &AtomicUsize,
        failures: &[(u16, &'static str)],
        client: &reqwest::Client,
        is_put: bool,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> axum::response::Response {
        if is_put {
            let n = puts.fetch_add(1, Ordering::SeqCst);
            if let Some((status, kind)) = failures.get(n) {
                let body = json!({"__type": kind, "message": "injected by the test"}).to_string();
                return (
                    axum::http::StatusCode::from_u16(*status).unwrap(),
                    [("content-type", "application/x-amz-json-1.1"), ("x-amzn-errortype", *kind)],
                    body,
                )
                    .into_response();
            }
        }
        let mut request = client.request(method, format!("{moto}{uri}")).body(body);
        for (name, value) in &headers {
            if name != "host" && name != "content-length" {
                request = request.header(name, value);
            }
        }
        let response = request.send().await.unwrap();
        let status = axum::http::StatusCode::from_u16(response.status().as_u16()).unwrap();
        let content_type =
            response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
        let bytes = response.bytes().await.unwrap();
        (status, [("content-type", content_type)], bytes).into_response()
    }

    let puts = Arc::new(AtomicUsize::new(0));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    let timing = (Arc::new(AtomicUsize::new(0)), max_in_flight.clone(), delay);
    let state: ProxyState = (moto, puts.clone(), Arc::new(failures), reqwest::Client::new(), timing);
    let app = axum::Router::new().fallback(handle).with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, Probe { puts, max_in_flight })
}

#[tokio::test]
async fn throttling_and_5xx_are_retried_and_the_events_land_once() {
    aws_env();
    let org = unique_org();
    let moto = required_env("ENGAGE_TEST_MOTO_URL");
    let (proxy, Probe { puts, .. }) = flaky_proxy(
        moto,
        vec![(503, "ServiceUnavailableException"), (400, "ThrottlingException")],
        std::time::Duration::ZERO,
    )
    .await;
    let app = spawn_app(&[
        ("ENGAGE_LOG_SINK", "cloudwatch"),
        ("ENGAGE_CLOUDWATCH_ENDPOINT", &proxy),
        ("ENGAGE_LOG_ORG", &org),
    ])
    .await;
    let (status, body) = app.post_json("/v1/logs", &json!([event("after-retries")])).await;
    assert_eq!((status, body), (200, json!({"accepted": 1})));
    assert_eq!(puts.load(std::sync::atomic::Ordering::SeqCst), 3, "two failures, then the write");
    assert_eq!(messages_in(&format!("/logs/{org}/edge/checkout")).await, vec!["after-retries"]);
    let metrics = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("engage_log_sink_retries_total{sink=\"cloudwatch\"} 2"), "{metrics}");
}

#[tokio::test]
async fn an_endpoint_that_keeps_throttling_is_write_failed_at_the_deadline() {
    aws_env();
    let moto = required_env("ENGAGE_TEST_MOTO_URL");
    let (proxy, Probe { puts, .. }) =
        flaky_proxy(moto, vec![(400, "ThrottlingException"); 100], std::time::Duration::ZERO).await;
    let app = spawn_app(&[
        ("ENGAGE_LOG_SINK", "cloudwatch"),
        ("ENGAGE_CLOUDWATCH_ENDPOINT", &proxy),
        ("ENGAGE_LOG_ORG", &unique_org()),
        ("ENGAGE_CLOUDWATCH_DEADLINE_MS", "800"),
    ])
    .await;
    let started = std::time::Instant::now();
    let (status, body) = app.post_json("/v1/logs", &json!([event("never")])).await;
    assert_eq!((status, body["error"].clone()), (500, json!("WRITE_FAILED")));
    assert!(puts.load(std::sync::atomic::Ordering::SeqCst) >= 3, "it retried");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "gave up near the deadline");
}

/// Every stored LogEvent of `group`, read from moto.
async fn events_in(group: &str) -> Vec<Value> {
    let client = moto_client().await;
    let events = client.filter_log_events().log_group_name(group).send().await.expect("group exists in moto");
    events.events().iter().map(|e| serde_json::from_str(e.message().unwrap_or_default()).unwrap()).collect()
}

#[tokio::test]
async fn the_otel_python_sdk_exports_to_cloudwatch_with_mapped_fields() {
    let org = unique_org();
    let app = cloudwatch_app(&org).await;
    let endpoint = format!("{}/otlp/v1/logs", app.base);
    let spec = json!({
        "resource": {"service.name": "checkout", "product": "edge", "service.version": "1.4.2",
                     "deployment.environment": "prod"},
        "logger": "checkout.api",
        "records": [
            {"level": "warning", "message": "slow", "attributes": {"order": 9}, "traced": true},
            {"level": "info", "message": "no environment", "attributes": {"environment": ""}},
            {"level": "error", "message": "failed", "attributes": {"component": "payments"}},
        ],
    });
    let answer = crate::otlp::emit(&[("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", &endpoint)], &spec).await;
    let rejected: Vec<&Value> = answer["responses"].as_array().unwrap().iter().map(|r| &r["rejected"]).collect();
    assert_eq!(rejected, vec![&json!(0), &json!(1), &json!(0)], "{answer}");
    assert!(answer["responses"][1]["message"].as_str().unwrap().contains("/environment"), "{answer}");
    let events = events_in(&format!("/logs/{org}/edge/checkout")).await;
    assert_eq!(events.len(), 2, "{events:#?}");
    let slow = events.iter().find(|e| e["message"] == "slow").unwrap();
    assert_eq!((&slow["level"], &slow["component"]), (&json!("WARN"), &json!("checkout.api")));
    assert_eq!((&slow["version"], &slow["environment"]), (&json!("1.4.2"), &json!("prod")));
    assert_eq!(slow["trace_id"], answer["trace_ids"][0]);
    assert_eq!(slow["context"]["order"], 9);
    let failed = events.iter().find(|e| e["message"] == "failed").unwrap();
    assert_eq!((&failed["level"], &failed["component"]), (&json!("ERROR"), &json!("payments")));
}

/// The retention of `group` in moto (None: never expire).
async fn retention_of(group: &str) -> Option<i32> {
    let client = moto_client().await;
    let groups = client.describe_log_groups().log_group_name_prefix(group).send().await.unwrap();
    groups.log_groups().iter().find(|g| g.log_group_name() == Some(group)).and_then(|g| g.retention_in_days())
}

#[tokio::test]
async fn created_groups_carry_the_retention_and_existing_ones_keep_theirs_unless_reconciled() {
    aws_env();
    let org = unique_org();
    let moto = required_env("ENGAGE_TEST_MOTO_URL");
    let by_group = format!("/logs/{org}/edge/pay=90");
    let settings = |reconcile: &'static str| {
        vec![
            ("ENGAGE_LOG_SINK", "cloudwatch".to_owned()),
            ("ENGAGE_CLOUDWATCH_ENDPOINT", moto.clone()),
            ("ENGAGE_LOG_ORG", org.clone()),
            ("ENGAGE_LOG_RETENTION_DAYS", "7".to_owned()),
            ("ENGAGE_LOG_RETENTION_BY_GROUP", by_group.clone()),
            ("ENGAGE_LOG_RETENTION_RECONCILE", reconcile.to_owned()),
        ]
    };
    // a group that exists before engage writes to it, without a retention
    let existing = format!("/logs/{org}/edge/legacy");
    moto_client().await.create_log_group().log_group_name(&existing).send().await.unwrap();

    let env = settings("false");
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let app = crate::helpers::spawn_app(&env).await;
    for service in ["checkout", "pay", "legacy"] {
        let mut one = event(service);
        one["service"] = json!(service);
        assert_eq!(app.post_json("/v1/logs", &one).await.0, 200);
    }
    assert_eq!(retention_of(&format!("/logs/{org}/edge/checkout")).await, Some(7));
    assert_eq!(retention_of(&format!("/logs/{org}/edge/pay")).await, Some(90), "the per-group setting");
    assert_eq!(retention_of(&existing).await, None, "an existing group's retention is its own");
    drop(app);

    let env = settings("true");
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let app = crate::helpers::spawn_app(&env).await;
    let mut one = event("legacy");
    one["service"] = json!("legacy");
    assert_eq!(app.post_json("/v1/logs", &one).await.0, 200);
    assert_eq!(retention_of(&existing).await, Some(7), "reconciled");
}
