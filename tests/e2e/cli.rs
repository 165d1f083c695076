//! The `engage` binary: invalid settings stop start-up naming the setting; SIGTERM drains and
//! flushes; JSON logs carry the trace id; the CLI reaches a running server (jobs, reports,
//! wallets).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::event;

const BIN: &str = env!("CARGO_BIN_EXE_engage");

#[test]
fn invalid_settings_stop_start_up_and_name_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    for (name, value) in [
        ("ENGAGE_HTTP_ADDR", "not-an-address"),
        ("ENGAGE_LOG_SINK", "s3"),
        ("ENGAGE_LOG_FORMAT", "xml"),
        ("ENGAGE_MAX_BODY_BYTES", "lots"),
        ("ENGAGE_JWKS_URL", "file:///etc/passwd"),
        ("ENGAGE_HTTP_ADRESS", "127.0.0.1:1"),
    ] {
        let output =
            Command::new(BIN).arg("serve").env("ENGAGE_DATA_DIR", dir.path()).env(name, value).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(name), "{name}: {stderr}");
    }
    // a bad TOML file is named too
    let file = dir.path().join("engage.toml");
    std::fs::write(&file, "log_org = 5\n").unwrap();
    let output = Command::new(BIN).args(["serve", "--config"]).arg(&file).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("log_org"));
}

#[test]
fn settings_errors_name_the_setting_as_written_and_give_an_example() {
    let dir = tempfile::tempdir().unwrap();
    let run = |env: &[(&str, &str)], args: &[&str]| {
        let mut command = Command::new(BIN);
        command.args(args).current_dir(dir.path()).env("ENGAGE_HTTP_ADDR", "127.0.0.1:0");
        command.envs(env.iter().copied());
        let output = command.output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    // an invalid log filter no longer starts silently
    let (code, stderr) = run(&[("ENGAGE_LOG_LEVEL", "loud[")], &["serve"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("ENGAGE_LOG_LEVEL") && stderr.contains("example: ENGAGE_LOG_LEVEL=info"), "{stderr}");
    // an empty data dir no longer writes into the current directory
    let (code, stderr) = run(&[("ENGAGE_DATA_DIR", "")], &["serve"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("ENGAGE_DATA_DIR") && stderr.contains("example:"), "{stderr}");
    assert!(!dir.path().join("admin.key").exists());
    // a missing --config file is the flag's problem, not ENGAGE_CONFIG's
    let (code, stderr) = run(&[], &["serve", "--config", "absent.toml"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--config absent.toml: no such file") && !stderr.contains("ENGAGE_CONFIG"), "{stderr}");
    // an unknown key in the file is named as the file's key
    let file = dir.path().join("engage.toml");
    std::fs::write(&file, "http_adress = \"127.0.0.1:1\"\n").unwrap();
    let (code, stderr) = run(&[], &["serve", "--config", file.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("`http_adress` in") && !stderr.contains("ENGAGE_HTTP_ADRESS"), "{stderr}");
    // a host name without a port gets an example (with one it is taken: `engage config` prints it)
    let (code, stderr) = run(&[("ENGAGE_HTTP_ADDR", "localhost")], &["serve"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("example: ENGAGE_HTTP_ADDR=127.0.0.1:8080"), "{stderr}");
    let output = Command::new(BIN).arg("config").env("ENGAGE_HTTP_ADDR", "localhost:8080").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("http_addr = \"127.0.0.1:8080\""));
    // a mistyped setting gets the one meant
    let (code, stderr) = run(&[("ENGAGE_HTTP_ADRR", "127.0.0.1:1")], &["config"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("ENGAGE_HTTP_ADRR") && stderr.contains("did you mean ENGAGE_HTTP_ADDR"), "{stderr}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn wait_ready(client: &reqwest::Client, base: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(response) = client.get(format!("{base}/readyz")).send().await {
            if response.status() == 200 {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("engage did not become ready at {base}");
}

#[tokio::test]
async fn sigterm_drains_flushes_and_json_logs_carry_the_trace_id() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let spawn = || {
        Command::new(BIN)
            .arg("serve")
            .env("ENGAGE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .env("ENGAGE_DATA_DIR", dir.path())
            .env("ENGAGE_LOG_FORMAT", "json")
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    };
    let child = spawn();
    wait_ready(&client, &base).await;
    let response = client
        .post(format!("{base}/v1/logs"))
        .header("x-trace-id", "cli-trace-0001")
        .json(&json!([event("persisted-1"), event("persisted-2")]))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let output = tokio::task::spawn_blocking(move || child.wait_with_output()).await.unwrap().unwrap();
    assert!(output.status.success(), "clean exit on SIGTERM: {:?}", output.status);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<Value> = stderr.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(!lines.is_empty(), "JSON log lines expected:\n{stderr}");
    assert!(
        lines.iter().any(|l| l["span"]["trace_id"] == "cli-trace-0001"),
        "a log line with the request's trace id:\n{stderr}"
    );
    assert!(stderr.contains("engage stopped"));

    let mut child = spawn();
    wait_ready(&client, &base).await;
    let body: Value = client
        .get(format!("{base}/v1/logs/events?log_group=/logs/org/edge/checkout"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(body["events"].as_array().map(Vec::len), Some(2), "{body}");
}

/// Runs the `engage` CLI against the running `engage` (data dir `data`); its stdout.
fn cli(engage: &crate::procs::Engage, data: &std::path::Path, args: &[&str]) -> String {
    String::from_utf8(engage.cli(data, args).stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engage_reports_health_writes_the_five_workbooks_through_the_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let engage = crate::procs::Engage::start(&data, crate::procs::free_port(), &[]).await;
    let run = |args: &[&str]| cli(&engage, &data, args);
    let jobs = run(&["jobs", "list"]);
    assert!(jobs.contains("auto_campaign_sync\t0 47 12 * * *"), "{jobs}");
    assert!(jobs.contains("health_reports\t0 0 12 * * Mon"), "{jobs}");
    let printed = run(&["reports", "health", "--now", "2026-11-23T06:30:00Z"]);
    let files: Vec<&str> = printed.lines().collect();
    assert_eq!(files.len(), 5, "{printed}");
    let folder = data.join("reports").join("health-2026-11-16_2026-11-22");
    for file in files {
        let path = std::path::Path::new(file);
        assert_eq!(path.parent(), Some(folder.as_path()), "{file}");
        // an XLSX file is a zip archive
        assert_eq!(&std::fs::read(path).unwrap()[..2], b"PK", "{file}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engage_wallet_recharges_and_reads_through_the_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let engage = crate::procs::Engage::start(&data, crate::procs::free_port(), &[]).await;
    let run = |args: &[&str]| cli(&engage, &data, args).trim().to_owned();
    let neft_7 =
        ["wallet", "recharge", "--parent", "brand-1", "--business", "o1", "--amount", "99.50", "--reference", "neft-7"];
    assert_eq!(run(&neft_7), "99.5");
    // the same reference again: counted once
    assert_eq!(run(&neft_7), "99.5");
    assert_eq!(run(&["wallet", "recharge", "--parent", "brand-1", "--business", "o1", "--amount", "0.5"]), "100");
    assert_eq!(run(&["wallet", "balance", "--parent", "brand-1", "--business", "o1"]), "100");
}
