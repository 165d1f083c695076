//! The programs in `examples/` (issue 55) run as a user runs them, against a started `engage
//! serve`: the OTLP emitter (the official OpenTelemetry SDK), the POS integration (tokens, a
//! loyalty rule, an order, points, a refund) and the brand with a bill page and a feedback form
//! (whose printed links open in a browser).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::procs::{as_a_user, free_port, Engage, BIN};

/// Runs `python3 examples/NAME` against `engage`; its stdout (the test fails when it fails).
async fn run_example(engage: &Engage, data: &Path, name: &str) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let script = Path::new(root).join("examples").join(name);
    let (base, port, data) = (engage.base.clone(), engage.port, data.to_owned());
    let output = tokio::task::spawn_blocking(move || {
        let mut command = Command::new("python3");
        command.arg(script).current_dir(root);
        as_a_user(&mut command)
            .env("SERVER", &base)
            .env("ENGAGE", BIN)
            .env("ENGAGE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .env("ENGAGE_DATA_DIR", &data)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "examples/{name} failed:\n{stdout}\n{stderr}");
    stdout.into_owned()
}

#[tokio::test]
async fn the_examples_run_against_a_started_engage() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let engage = Engage::start(&data, free_port(), &[]).await;
    let client = reqwest::Client::new();

    let said = run_example(&engage, &data, "otlp_emitter.py").await;
    assert!(said.contains("exported 3 records to") && said.contains(": 3 SUCCESS"), "{said}");
    let url = format!("{}/v1/logs/events?log_group=/logs/org/edge/checkout", engage.base);
    let stored: Value = client.get(url).send().await.unwrap().json().await.unwrap();
    let levels: Vec<&str> =
        stored["events"].as_array().unwrap().iter().filter_map(|e| e["event"]["level"].as_str()).collect();
    assert_eq!(levels.len(), 3, "{stored}");
    assert!(levels.contains(&"WARN") && levels.contains(&"ERROR"), "{levels:?}");

    let said = run_example(&engage, &data, "pos_integration.py").await;
    assert!(said.contains("customer 9845012345: 1 order, +24 points, 24 points in all"), "{said}");
    assert!(
        said.contains("refund of 40.00 on POS-") && said.contains("-4 points, 20 points in all, lifetime value 200"),
        "{said}"
    );

    let said = run_example(&engage, &data, "brand_pages.py").await;
    let link = |label: &str| {
        said.lines()
            .find_map(|l| l.strip_prefix(label))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no {label} in {said}"))
            .to_owned()
    };
    let (bill, form) = (link("bill page:"), link("feedback form:"));
    assert!(bill.starts_with(&format!("{}/b/", engage.base)), "{bill}");
    let page = client.get(&bill).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let page = page.text().await.unwrap();
    assert!(page.contains("Dosa Corner") && page.contains("masala dosa"), "the bill page: {page}");
    let page = client.get(&form).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("How was the food?"), "the feedback form");
}
