//! Issue 14: the cluster, the CLI, settings and start-up as operators meet them. Most tests run the
//! `engage` binary (and a real `nats-server -js`) the way the README tells people to.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{event, read, required_env, spawn_app};
use crate::procs::{free_port, Engage, NatsServer, BIN};

/// `GET base + path` as (status, JSON body).
async fn get(base: &str, path: &str) -> (u16, Value) {
    match reqwest::Client::new().get(format!("{base}{path}")).send().await {
        Ok(response) => read(response).await,
        Err(_) => (0, Value::Null),
    }
}

async fn metrics_text(base: &str) -> String {
    reqwest::get(format!("{base}/metrics")).await.unwrap().text().await.unwrap()
}

/// The value of an unlabelled series in a Prometheus text page.
fn series(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// Polls `check` every 100 ms until it gives `Some`, failing with `what` after `within`.
async fn eventually<T, F, Fut>(within: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs the CLI with `args` in `cwd` with `env` (and no inherited `ENGAGE_*` settings).
use crate::procs::cli;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The first ```sh block after the heading `### Cluster by hand` in README.md.
fn readme_cluster_lines() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = &readme[readme.find("### Cluster by hand").expect("README has the cluster section")..];
    let start = section.find("```sh\n").expect("a sh block") + "```sh\n".len();
    let end = start + section[start..].find("```").expect("the block ends");
    section[start..end].to_owned()
}

/// Kills a process group (the README's lines start several background processes). Through bash's
/// builtin `kill -- -PGID`: the `/usr/bin/kill` of some systems reads `-9 -PGID` as "every
/// process".
struct Group(u32);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg("-c").arg(format!("kill -9 -- -{}", self.0)).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_cluster_lines_pasted_into_a_shell_give_a_working_two_node_cluster() {
    let lines = readme_cluster_lines();
    let dir = tempfile::tempdir().unwrap();
    // `engage` and `nats-server` on the PATH, as the README asks
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(BIN, bin.join("engage")).unwrap();
    std::os::unix::fs::symlink(required_env("ENGAGE_TEST_NATS_SERVER"), bin.join("nats-server")).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut shell = Command::new("bash");
    shell.arg("-c").arg(&lines).current_dir(&work).env("PATH", path).process_group(0);
    for (name, _) in std::env::vars().filter(|(k, _)| k.starts_with("ENGAGE_") && !k.starts_with("ENGAGE_TEST_")) {
        shell.env_remove(name);
    }
    // files, not pipes: the background processes keep their output open after the shell exits
    let out_path = dir.path().join("shell.out");
    let err_path = dir.path().join("shell.err");
    shell.stdout(std::fs::File::create(&out_path).unwrap()).stderr(std::fs::File::create(&err_path).unwrap());
    let mut child = shell.spawn().unwrap();
    let _group = Group(child.id());
    // the lines end on their own (their wait is bounded); this bound only keeps a broken README
    // from holding the suite, and says what the processes printed
    let waited =
        tokio::time::timeout(Duration::from_secs(300), tokio::task::spawn_blocking(move || child.wait())).await;
    let printed = std::fs::read_to_string(&out_path).unwrap_or_default();
    let errors = std::fs::read_to_string(&err_path).unwrap_or_default();
    let Ok(status) = waited else { panic!("the lines did not end within 300 s:\n{printed}\n{errors}") };
    assert!(status.unwrap().unwrap().success(), "the lines failed:\n{printed}\n{errors}");
    assert!(printed.contains("live nodes: ") && !printed.contains("not ready"), "{printed}\n{errors}");
    assert!(!errors.contains("Locked") && !errors.contains("ERROR"), "{errors}");

    // both nodes own partitions (engage partitions, as the README ends)
    eventually(Duration::from_secs(30), "both nodes to own partitions", || async {
        let out = cli(&work, &[("ENGAGE_NATS_URL", "nats://127.0.0.1:4222")], &["partitions"]);
        let page = text(&out.stdout);
        let count = |node: &str| page.lines().filter(|l| l.ends_with(&format!("\t{node}"))).count();
        (count("n1") + count("n2") == 64 && count("n1") > 0 && count("n2") > 0).then_some(())
    })
    .await;

    // the ingress answers and an order is processed by the node that owns its tenant
    let ingress = "http://127.0.0.1:8080";
    let order = json!({"parentBusinessId": "readme-brand", "businessId": "outlet-1", "orderId": "R-1",
        "customer": {"phone": "9876500001"}, "amount": 80, "orderTime": "2026-11-21 10:00:00"});
    let client = reqwest::Client::new();
    let (status, body) =
        read(client.post(format!("{ingress}/injestion/platform")).json(&order).send().await.unwrap()).await;
    assert_eq!((status, body), (200, json!({"status": 1})));
    eventually(Duration::from_secs(20), "the order to be processed", || async {
        let response = client
            .post(format!("{ingress}/crm_api/get/customer/details"))
            .json(&json!({"parent_business_id": "readme-brand", "customer_number": "9876500001"}))
            .send()
            .await
            .ok()?;
        let (status, body) = read(response).await;
        (status == 200 && body["customer"]["total_orders"] == 1).then_some(())
    })
    .await;

    // each node serves its own /metrics, /healthz and /readyz, with its own partition figures
    for port in [9101, 9102] {
        let base = format!("http://127.0.0.1:{port}");
        assert_eq!(get(&base, "/healthz").await.0, 200);
        let (status, ready) = get(&base, "/readyz").await;
        assert_eq!((status, ready["role"].as_str()), (200, Some("node")), "{ready}");
    }
    // the nodes' figures add up to every partition once a handover in flight has settled (the
    // lease table can show both nodes a moment before the taking node has started the partitions)
    eventually(Duration::from_secs(20), "the nodes' partition figures to add up to 64", || async {
        let mut owned = 0.0;
        for port in [9101, 9102] {
            let page = metrics_text(&format!("http://127.0.0.1:{port}")).await;
            let mine = series(&page, "engage_partitions_owned").unwrap_or_default();
            let running = series(&page, "engage_partitions_running").unwrap_or_default();
            if mine == 0.0 || running != mine {
                return None;
            }
            owned += mine;
        }
        (owned == 64.0).then_some(())
    })
    .await;
    // only the ingress keeps a data dir (its admin key and the embedded log store)
    let entries: Vec<String> =
        std::fs::read_dir(&work).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let mut entries = entries;
    entries.sort();
    assert_eq!(entries, ["data", "nats1", "nats2", "nats3"], "{entries:?}");
    let owner = std::fs::read_to_string(work.join("data/engage.owner")).unwrap();
    assert!(owner.contains("role ingress"), "{owner}");
}

#[tokio::test]
async fn a_held_data_dir_names_the_process_holding_it_and_the_setting_to_change() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let first = Engage::start(&data, free_port(), &[]).await;
    let second_port = free_port();
    let out = cli(
        dir.path(),
        &[("ENGAGE_DATA_DIR", data.to_str().unwrap()), ("ENGAGE_HTTP_ADDR", &format!("127.0.0.1:{second_port}"))],
        &["serve"],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("in use by another engage process (pid {}", first.child.id())), "{stderr}");
    assert!(stderr.contains(&format!("serving 127.0.0.1:{}", first.port)), "{stderr}");
    assert!(stderr.contains("ENGAGE_DATA_DIR"), "{stderr}");
    assert!(!stderr.contains("FjallError"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_needs_no_data_dir_serves_its_ops_routes_and_logs_one_summary_line() {
    let nats = NatsServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("node-data");
    let node = Engage::start(&data, free_port(), &[("ENGAGE_NATS_URL", &nats.url), ("ENGAGE_ROLE", "node")]).await;
    assert!(!data.exists(), "a node on NATS made a data dir");
    let page = eventually(Duration::from_secs(15), "the node to own every partition", || async {
        let page = metrics_text(&node.base).await;
        (series(&page, "engage_partitions_owned") == Some(64.0)).then_some(page)
    })
    .await;
    assert_eq!(series(&page, "engage_partitions_running"), Some(64.0), "{page}");
    assert!(page.contains("# HELP engage_partitions_owned"), "{page}");
    assert_eq!(get(&node.base, "/healthz").await, (200, json!({"status": "ok"})));
    assert_eq!(get(&node.base, "/readyz").await.0, 200);

    // admin commands against a node say to use the ingress
    let out = cli(dir.path(), &[("ENGAGE_HTTP_ADDR", &format!("127.0.0.1:{}", node.port))], &["tokens", "list"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("this is an actor node") && stderr.contains("use the ingress"), "{stderr}");
    assert!(!dir.path().join("data").exists(), "the CLI made a data dir");

    // process logs: one summary line, partitions at debug, no colour into a file, no warning about
    // log ingestion on a process that serves no log routes
    let log = node.stderr();
    assert_eq!(log.matches("engage is serving").count(), 1, "{log}");
    assert!(!log.contains("partition started"), "{log}");
    assert!(!log.contains('\u{1b}'), "ANSI escapes in a log file:\n{log}");
    assert!(!log.contains("ENGAGE_JWKS_URL"), "{log}");
}

#[tokio::test]
async fn credentials_in_the_nats_url_are_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("nats://engage:s3cr3t-pw@127.0.0.1:{}", free_port());
    let env = [
        ("ENGAGE_NATS_URL", url.as_str()),
        ("ENGAGE_CONNECT_TIMEOUT_SECS", "2"),
        ("ENGAGE_HTTP_ADDR", "127.0.0.1:0"),
        ("ENGAGE_ROLE", "node"),
    ];
    let out = cli(dir.path(), &env, &["serve"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("could not reach nats") && stderr.contains("ENGAGE_CONNECT_TIMEOUT_SECS"), "{stderr}");
    assert!(stderr.contains("nats://***@127.0.0.1"), "{stderr}");
    assert!(!stderr.contains("s3cr3t-pw") && !stderr.contains("engage:s3"), "{stderr}");
    let out = cli(dir.path(), &env, &["config"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success());
    assert!(stdout.contains("nats_url = \"nats://***@127.0.0.1"), "{stdout}");
    assert!(!stdout.contains("s3cr3t-pw"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_up_waits_for_nats_answering_readyz_503_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    // two free ports that differ (nothing holds the NATS port until NATS starts)
    let engage_port = free_port();
    let nats_port = std::iter::repeat_with(free_port).find(|p| *p != engage_port).unwrap();
    let url = format!("nats://127.0.0.1:{nats_port}");
    let engage = Engage::spawn(&dir.path().join("data"), engage_port, &[("ENGAGE_NATS_URL", &url)]);
    let (status, body) = eventually(Duration::from_secs(15), "/readyz while starting", || async {
        let (status, body) = get(&engage.base, "/readyz").await;
        (status != 0 && body["problems"]["nats"].is_string()).then_some((status, body))
    })
    .await;
    assert_eq!((status, body["status"].as_str()), (503, Some("starting")), "{body}");
    assert!(body["problems"]["nats"].as_str().unwrap_or_default().contains(&url), "{body}");
    assert_eq!(get(&engage.base, "/healthz").await.0, 200);
    assert!(metrics_text(&engage.base).await.contains("# HELP engage_http_requests_total"));
    let (status, body) = get(&engage.base, "/v1/logs/events?log_group=x").await;
    assert_eq!((status, body["error"].as_str()), (503, Some("STARTING")), "{body}");
    // an admin command given now waits for the server to finish starting
    let token = Command::new(BIN)
        .args(["tokens", "create", "--kind", "staff", "--parent", "brand-late"])
        .env("ENGAGE_HTTP_ADDR", format!("127.0.0.1:{engage_port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // NATS comes up late: engage connects and becomes ready
    tokio::time::sleep(Duration::from_secs(1)).await;
    let _nats = NatsServer::start_on(nats_port).await;
    engage.wait_ready(Duration::from_secs(30)).await;
    let token = tokio::task::spawn_blocking(move || token.wait_with_output()).await.unwrap().unwrap();
    assert!(token.status.success(), "{}", text(&token.stderr));
    assert!(text(&token.stdout).starts_with("eng_staff_"), "{}", text(&token.stdout));
    let log = engage.stderr();
    assert!(log.contains("cannot connect yet; retrying"), "{log}");
    assert!(log.contains("dependency=\"nats\""), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_cloudwatch_sink_shows_in_readyz_and_each_failed_write_logs_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    // nothing listens on this endpoint (a port other than engage's own)
    let engage_port = free_port();
    let endpoint_port = std::iter::repeat_with(free_port).find(|p| *p != engage_port).unwrap();
    let endpoint = format!("http://127.0.0.1:{endpoint_port}");
    let engage = Engage::spawn(
        &dir.path().join("data"),
        engage_port,
        &[
            ("ENGAGE_LOG_SINK", "cloudwatch"),
            ("ENGAGE_CLOUDWATCH_ENDPOINT", &endpoint),
            ("ENGAGE_CLOUDWATCH_DEADLINE_MS", "300"),
        ],
    );
    // serving, but not ready: the sink is named (the check may run before start-up ends)
    let body = eventually(Duration::from_secs(20), "/readyz to name the sink", || async {
        let (status, body) = get(&engage.base, "/readyz").await;
        (status == 503 && body["status"] == "not_ready" && body["problems"]["cloudwatch"].is_string()).then_some(body)
    })
    .await;
    assert!(body["problems"]["cloudwatch"].as_str().unwrap().starts_with("connection"), "{body}");
    let response = reqwest::Client::new()
        .post(format!("{}/v1/logs", engage.base))
        .header("x-trace-id", "trace-cw-unusable-1")
        .json(&event("lost"))
        .send()
        .await
        .unwrap();
    let (status, answer) = read(response).await;
    assert_eq!((status, answer["error"].as_str()), (500, Some("WRITE_FAILED")), "{answer}");
    let log = eventually(Duration::from_secs(5), "the failed write's log line", || async {
        let log = engage.stderr();
        log.lines().any(|l| l.contains("log write failed")).then_some(log)
    })
    .await;
    let line = log.lines().find(|l| l.contains("log write failed")).unwrap();
    assert!(line.contains("WARN") && line.contains("trace-cw-unusable-1"), "{line}");
    assert!(line.contains("cause=") && line.contains("connection"), "{line}");

    // with moto behind it the same sink is usable and /readyz is 200
    let usable = Engage::spawn(
        &dir.path().join("data2"),
        free_port(),
        &[("ENGAGE_LOG_SINK", "cloudwatch"), ("ENGAGE_CLOUDWATCH_ENDPOINT", &required_env("ENGAGE_TEST_MOTO_URL"))],
    );
    usable.wait_ready(Duration::from_secs(20)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cloudwatch_without_a_region_is_named_in_readyz() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let log = std::fs::File::create(dir.path().join("engage.log")).unwrap();
    let port = free_port();
    let mut command = Command::new(BIN);
    command
        .arg("serve")
        .env("ENGAGE_HTTP_ADDR", format!("127.0.0.1:{port}"))
        .env("ENGAGE_DATA_DIR", &path)
        .env("ENGAGE_LOG_SINK", "cloudwatch")
        .env("ENGAGE_CLOUDWATCH_ENDPOINT", required_env("ENGAGE_TEST_MOTO_URL"))
        .env_remove("AWS_REGION")
        .env_remove("AWS_DEFAULT_REGION")
        .env("AWS_CONFIG_FILE", dir.path().join("no-config"))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .stdout(Stdio::null())
        .stderr(log);
    let mut child = command.spawn().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let body = eventually(Duration::from_secs(20), "/readyz to name the missing region", || async {
        let (status, body) = get(&base, "/readyz").await;
        (status == 503 && body["problems"]["cloudwatch"].is_string()).then_some(body)
    })
    .await;
    let _ = child.kill();
    let _ = child.wait();
    assert!(body["problems"]["cloudwatch"].as_str().unwrap().contains("AWS_REGION"), "{body}");
}

#[tokio::test]
async fn an_unreachable_jwks_shows_in_readyz() {
    let url = format!("http://127.0.0.1:{}/jwks.json", free_port());
    let app = spawn_app(&[("ENGAGE_JWKS_URL", &url)]).await;
    let (status, body) = app.get_json("/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(body["problems"]["jwks"].as_str().unwrap_or_default().contains("cannot fetch the JWKS"), "{body}");
}

#[tokio::test]
async fn the_cli_finds_the_servers_admin_key_from_any_directory_and_prints_the_token_alone() {
    let dir = tempfile::tempdir().unwrap();
    let server = Engage::start(&dir.path().join("server-data"), free_port(), &[]).await;
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let addr = format!("127.0.0.1:{}", server.port);
    let env = [("ENGAGE_HTTP_ADDR", addr.as_str())];
    // before any token: the list says it is empty, on stderr (stdout stays one line per token)
    let out = cli(&elsewhere, &env, &["tokens", "list"]);
    assert!(out.status.success() && out.stdout.is_empty(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("no tokens yet"), "{}", text(&out.stderr));
    let out = cli(&elsewhere, &env, &["tokens", "create", "--kind", "staff", "--parent", "brand-cli"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("eng_staff_"), "{stdout}");
    let id = stderr.trim().strip_prefix("token id: ").unwrap_or_else(|| panic!("{stderr}"));
    assert!(!elsewhere.join("data").exists(), "the CLI made an admin key of its own");
    // the token works, and its id is the one `tokens list` shows
    let client = reqwest::Client::new();
    let (status, _) = read(
        client
            .post(format!("{}/crm_api/wallet/balance", server.base))
            .header("token", stdout.trim())
            .json(&json!({"parent_business_id": "brand-cli", "business_id": "outlet-1"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_ne!(status, 403);
    for _ in 0..3 {
        cli(&elsewhere, &env, &["tokens", "create", "--kind", "integration", "--parent", "brand-cli"]);
    }
    let out = cli(&elsewhere, &env, &["tokens", "list"]);
    assert!(text(&out.stdout).lines().any(|l| l.starts_with(id)), "{}", text(&out.stdout));

    // `engage tokens list | head -1`: a closed pipe ends the CLI quietly
    let mut child = Command::new(BIN)
        .args(["tokens", "list"])
        .current_dir(&elsewhere)
        .env("ENGAGE_HTTP_ADDR", &addr)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader is gone before the CLI writes
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");

    // a key the server does not use is refused with the setting to give
    let out = cli(&elsewhere, &[env[0], ("ENGAGE_ADMIN_KEY", "not-the-key")], &["tokens", "list"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("ENGAGE_ADMIN_KEY"), "{stderr}");
}

#[test]
fn engage_config_prints_toml_with_secrets_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(
        dir.path(),
        &[("ENGAGE_ADMIN_KEY", "key-that-must-not-print"), ("ENGAGE_PROVIDER_TOKEN", "provider-secret-1")],
        &["config"],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("http_addr = \"127.0.0.1:8080\""), "{stdout}");
    assert!(stdout.contains("admin_key = \"***\""), "{stdout}");
    assert!(!stdout.contains("key-that-must-not-print") && !stdout.contains("provider-secret-1"), "{stdout}");
    // every line is TOML: a key = value pair or a comment
    for line in stdout.lines().filter(|l| !l.is_empty()) {
        assert!(line.starts_with('#') || line.contains(" = "), "not TOML: {line}");
    }
}

#[tokio::test]
async fn a_json_body_is_json_whatever_its_content_type_and_refusals_are_json() {
    let app = spawn_app(&[]).await;
    let order = json!({"parentBusinessId": "ct-brand", "businessId": "o1", "orderId": "CT-1",
        "customer": {"phone": "9876500002"}, "amount": 80, "orderTime": "2026-11-21 10:00:00"});
    // curl -d: a JSON order labelled as a form
    for content_type in ["application/x-www-form-urlencoded", "text/plain"] {
        let response = app
            .client
            .post(format!("{}/injestion/platform", app.base))
            .header("content-type", content_type)
            .body(order.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(read(response).await, (200, json!({"status": 1})), "{content_type}");
    }
    // the log routes behave the same
    let response = app
        .client
        .post(format!("{}/v1/logs", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(json!([event("form-labelled")]).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(read(response).await, (200, json!({"accepted": 1})));

    // 405 in each route's family, with Allow
    let cases = [("/injestion/platform", "error_code", "xE_405"), ("/v1/logs", "error", "METHOD_NOT_ALLOWED")];
    for (path, field, code) in cases {
        let response = app.client.delete(format!("{}{path}", app.base)).send().await.unwrap();
        assert_eq!(response.headers().get("allow").map(|v| v.to_str().unwrap().to_owned()), Some("POST".to_owned()));
        let (status, body) = read(response).await;
        assert_eq!((status, body[field].as_str()), (405, Some(code)), "{path}: {body}");
    }
    let response = app.client.get(format!("{}/crm_api/wallet/balance", app.base)).send().await.unwrap();
    let (status, body) = read(response).await;
    assert_eq!(status, 405);
    assert!(body["message"].is_string(), "{body}");

    // an order body over 1 MiB is 413, in the route's family
    let big = json!({"parentBusinessId": "ct-brand", "padding": "x".repeat(1_100_000)});
    let response = app.client.post(format!("{}/injestion/platform", app.base)).json(&big).send().await.unwrap();
    let (status, body) = read(response).await;
    assert_eq!((status, body["error_code"].as_str()), (413, Some("xE_413")), "{body}");
    let response = app
        .client
        .post(format!("{}/crm_api/wallet/balance", app.base))
        .header("token", "whatever")
        .json(&big)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403); // the credential is checked first
}

#[tokio::test]
async fn every_counter_and_gauge_the_readme_names_is_on_metrics_from_the_start() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("Counters and gauges, all present from the start").unwrap();
    let end = start + readme[start..].find("Histograms").unwrap();
    let names: Vec<&str> = readme[start..end]
        .split('`')
        .filter_map(|token| token.split('{').next().filter(|name| name.starts_with("engage_")))
        .collect();
    assert!(names.len() >= 20, "{names:?}");
    let app = spawn_app(&[]).await;
    let page = metrics_text(&app.base).await;
    for name in names {
        assert!(page.contains(&format!("# HELP {name} ")), "{name} is not on /metrics at start:\n{page}");
        assert!(page.lines().any(|l| l.starts_with(name) && !l.starts_with('#')), "{name} has no series");
    }
}
