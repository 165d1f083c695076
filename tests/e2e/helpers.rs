//! Spawning the app on port 0 with a fresh data directory, and building log events.

use std::time::Duration;

use chrono::Utc;
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use engage::{Application, Settings};

/// A running app.
pub struct TestApp {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// A client for it.
    pub client: reqwest::Client,
    /// Its data directory (kept alive as long as the app).
    pub dir: TempDir,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<anyhow::Result<()>>>,
}

/// The schedules of the jobs that run every few minutes.
const FREQUENT_JOBS: [&str; 5] = [
    "ENGAGE_JOB_SMS_DRAIN",
    "ENGAGE_JOB_CHAT_DRAIN",
    "ENGAGE_JOB_PUSH_DRAIN",
    "ENGAGE_JOB_POS_REVOKE",
    "ENGAGE_JOB_ABANDONED_CART",
];
/// A schedule that does not fire during a test run (midnight IST on 1 January).
const NEVER: &str = "0 0 0 1 1 *";

/// Starts the app with `ENGAGE_*` settings `env` on top of a port-0 address and a fresh data dir.
pub async fn spawn_app(env: &[(&str, &str)]) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    spawn_app_in(dir, env).await
}

/// The keyword webhook secret of provider `provider` in every test app.
pub const KEYWORD_WEBHOOK_SECRET: &str = "test-webhook-secret";
const KEYWORD_WEBHOOK_SECRETS: &str = "provider=test-webhook-secret";

/// Like [`spawn_app`] but in an existing data directory (restart tests).
pub async fn spawn_app_in(dir: TempDir, env: &[(&str, &str)]) -> TestApp {
    let data_dir = dir.path().to_string_lossy().into_owned();
    let mut vars: Vec<(&str, &str)> = vec![("ENGAGE_HTTP_ADDR", "127.0.0.1:0"), ("ENGAGE_DATA_DIR", &data_dir)];
    // The jobs that fire every few minutes run only when a test runs them (or sets a schedule):
    // left on their schedule, one now and then ran between a test's setup and its own run of it
    // and took the rows that run was asserting on.
    for job in FREQUENT_JOBS {
        if !env.iter().any(|(name, _)| *name == job) {
            vars.push((job, NEVER));
        }
    }
    // the keyword webhook of provider `provider` (the examples' path) takes this secret
    if !env.iter().any(|(name, _)| *name == "ENGAGE_KEYWORD_WEBHOOK_SECRETS") {
        vars.push(("ENGAGE_KEYWORD_WEBHOOK_SECRETS", KEYWORD_WEBHOOK_SECRETS));
    }
    // an in-process app stops at once (the drain is for load balancers: operability tests it)
    if !env.iter().any(|(name, _)| *name == "ENGAGE_SHUTDOWN_DRAIN_SECS") {
        vars.push(("ENGAGE_SHUTDOWN_DRAIN_SECS", "0"));
    }
    vars.extend_from_slice(env);
    let settings = Settings::load_with_env(None, &vars).expect("valid test settings");
    let app = Application::build(settings).await.expect("app builds");
    let base = format!("http://127.0.0.1:{}", app.port());
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(app.run_until(async move {
        let _ = rx.await;
    }));
    TestApp {
        base,
        client: reqwest::Client::builder().timeout(Duration::from_secs(30)).build().expect("client"),
        dir,
        shutdown: Some(tx),
        task: Some(task),
    }
}

impl TestApp {
    /// `POST {base}{path}` with a JSON body; returns (status, body as JSON).
    pub async fn post_json(&self, path: &str, body: &Value) -> (u16, Value) {
        let response = self.client.post(format!("{}{path}", self.base)).json(body).send().await.expect("request");
        read(response).await
    }

    /// `POST {base}/v1/logs` with a raw body.
    pub async fn post_raw(&self, path: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request");
        read(response).await
    }

    /// `GET {base}{path}`; returns (status, body as JSON).
    pub async fn get_json(&self, path: &str) -> (u16, Value) {
        let response = self.client.get(format!("{}{path}", self.base)).send().await.expect("request");
        read(response).await
    }

    /// `GET {base}{path}` with the app's admin key (`x-admin-key`), as JSON.
    pub async fn admin_get(&self, path: &str) -> Value {
        let key = std::fs::read_to_string(self.dir.path().join("admin.key")).expect("admin key");
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .header("x-admin-key", key.trim())
            .send()
            .await
            .expect("request");
        response.json().await.expect("JSON")
    }

    /// Stored events of a group (embedded sink), oldest first.
    pub async fn stored(&self, group: &str) -> Vec<Value> {
        let (status, body) = self.get_json(&format!("/v1/logs/events?log_group={group}&limit=10000")).await;
        assert_eq!(status, 200, "{body}");
        body["events"].as_array().cloned().unwrap_or_default()
    }

    /// Graceful stop; returns the data directory for a restart.
    pub async fn stop(mut self) -> TempDir {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("app task").expect("app stopped cleanly");
        }
        self.dir
    }
}

/// Status and JSON body (`Value::Null` when the body is not JSON).
pub async fn read(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A valid LogEvent whose timestamp is `offset` from now.
pub fn event_at(offset: chrono::Duration, message: &str) -> Value {
    json!({
        "timestamp": (Utc::now() + offset).to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "level": "INFO",
        "product": "edge",
        "service": "checkout",
        "component": "api",
        "version": "1.4.2",
        "environment": "test",
        "trace_id": "0b5f6c1e-8d0a-4c4e-9a59-3f3f6a1d2c11",
        "tenant": {"business_id": "b1", "parent_id": "p1"},
        "source": "server",
        "message": message,
        "context": {"order": 7, "note": null}
    })
}

/// A valid LogEvent stamped now.
pub fn event(message: &str) -> Value {
    event_at(chrono::Duration::zero(), message)
}

/// A log org unique to one test, so tests sharing a moto server never share a group.
pub fn unique_org() -> String {
    format!("t{}", uuid::Uuid::new_v4().simple())
}

/// Reads a required test-server address from the environment; a missing one fails the test.
pub fn required_env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with scripts/test.sh, which starts the servers they need")
    })
}

/// Whether a send delayed by `delay` from now still falls on today's IST date. A delayed send is
/// queued under the IST date it is due on, and a drain counts as `scheduled` only the rows of the
/// dates it reads (today's and yesterday's); from 23:45 IST a 15-minute delay lands on tomorrow.
pub fn due_today_ist(delay: chrono::Duration) -> bool {
    let ist = chrono::FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
    let now = chrono::Utc::now();
    (now + delay).with_timezone(&ist).date_naive() == now.with_timezone(&ist).date_naive()
}

/// `now`'s IST day as `YYYYMMDD` (the channel queues' partition names).
pub fn ist_day_compact(now: chrono::DateTime<chrono::Utc>) -> String {
    let ist = chrono::FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
    now.with_timezone(&ist).format("%Y%m%d").to_string()
}

/// Creates a token of `kind` for brand `parent` (limited to outlet `business` when given; an app
/// token's `business` is its customer) through the loopback admin route, with the app's admin key.
pub async fn token_for(app: &TestApp, kind: &str, parent: &str, business: Option<&str>) -> String {
    let key = std::fs::read_to_string(app.dir.path().join("admin.key")).expect("admin.key");
    let response = app
        .client
        .post(format!("{}/admin/tokens", app.base))
        .header("x-admin-key", key.trim())
        .json(&json!({"kind": kind, "parent": parent, "business": business}))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.expect("json");
    body["token"].as_str().expect("token").to_owned()
}
