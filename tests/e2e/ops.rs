//! `/healthz`, `/readyz`, `/metrics`, `/openapi.json`.

use serde_json::json;

use crate::helpers::{event, spawn_app};

#[tokio::test]
async fn health_and_readiness() {
    let app = spawn_app(&[]).await;
    assert_eq!(app.get_json("/healthz").await, (200, json!({"status": "ok"})));
    let (status, body) = app.get_json("/readyz").await;
    assert_eq!(status, 200);
    assert_eq!(body["sink"], "embedded");
}

#[tokio::test]
async fn metrics_count_requests_and_events_by_outcome() {
    let app = spawn_app(&[]).await;
    app.post_json("/v1/logs", &json!([event("a"), event("b")])).await;
    app.post_json("/v1/logs", &json!({"bad": true})).await;
    let text = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    for needle in [
        "engage_http_requests_total{route=\"/v1/logs\",method=\"POST\",status=\"200\"}",
        "engage_log_events_total{outcome=\"accepted\"}",
        "engage_log_requests_failed_total{error=\"SCHEMA_VIOLATION\"}",
        "engage_log_sink_latency_seconds_bucket",
        "engage_log_batch_events_bucket",
    ] {
        assert!(text.contains(needle), "missing {needle} in:\n{text}");
    }
}

#[tokio::test]
async fn openapi_describes_the_routes_and_the_validation_schema() {
    let app = spawn_app(&[]).await;
    let (status, doc) = app.get_json("/openapi.json").await;
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    for path in ["/v1/logs", "/v1/logs/ingest"] {
        let op = &doc["paths"][path]["post"];
        for code in ["200", "207", "400", "500"] {
            assert!(op["responses"][code].is_object(), "{path} {code}");
        }
        assert_eq!(
            op["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/LogIngestRequest"
        );
    }
    for path in ["/v1/logs/events", "/healthz", "/readyz", "/metrics", "/openapi.json"] {
        assert!(doc["paths"][path]["get"].is_object(), "{path}");
    }
    // the validator's $defs are components of their own, so every reference resolves in the document
    let event = &doc["components"]["schemas"]["LogEvent"];
    assert_eq!(event["properties"]["level"]["enum"], json!(["ERROR", "WARN", "INFO", "DEBUG"]));
    assert_eq!(event["properties"]["timestamp"]["format"], "date-time");
    assert!(!doc.to_string().contains("#/$defs/"));
    assert!(doc["components"]["schemas"]["ApiErrorBody"]["properties"]["issues"].is_object());
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
}

/// Every path registered with `.route("…")` in the ingress source (the enqueue table's paths are
/// the same table `/openapi.json` is built from).
fn registered_routes() -> Vec<String> {
    fn visit(dir: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                visit(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (at, _) in text.match_indices(".route(") {
                    let rest = text[at + ".route(".len()..].trim_start();
                    if let Some(literal) = rest.strip_prefix('"') {
                        out.push(literal[..literal.find('"').unwrap()].to_owned());
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    visit(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ingress/src"), &mut out);
    out.sort();
    out.dedup();
    out
}

#[tokio::test]
async fn every_registered_route_is_in_openapi_with_its_auth_and_error_family() {
    let app = spawn_app(&[]).await;
    let (_, doc) = app.get_json("/openapi.json").await;
    let routes = registered_routes();
    assert!(routes.len() > 60, "the scan found only {routes:?}");
    let ops_routes = ["/healthz", "/readyz", "/metrics", "/openapi.json"];
    // the admin routes are documented too; the one left out is a node's catch-all `/admin/{*rest}`
    // (404 "this is an actor node"), which serves no route of the document
    for path in routes.iter().filter(|p| !p.contains("{*")) {
        let item = doc["paths"][path.as_str()].as_object().unwrap_or_else(|| panic!("{path} is not in /openapi.json"));
        for (method, op) in item {
            if ops_routes.contains(&path.as_str()) {
                continue;
            }
            assert!(op["security"].is_array(), "{method} {path} states no auth");
            let families: Vec<String> = op["responses"]
                .as_object()
                .unwrap()
                .iter()
                .filter(|(code, _)| code.starts_with('4'))
                .filter_map(|(_, r)| r["content"]["application/json"]["schema"]["$ref"].as_str().map(str::to_owned))
                .collect();
            // a web page (the bill page) answers its errors as pages
            let page = op["responses"]
                .as_object()
                .unwrap()
                .iter()
                .any(|(code, r)| code.starts_with('4') && r["content"]["text/html"].is_object());
            // a static page (the dashboard) has no error to answer
            let responses = op["responses"].as_object().unwrap();
            let static_page = responses.len() == 1 && responses["200"]["content"]["text/html"].is_object();
            assert!(
                page || static_page || families.iter().any(|f| f.ends_with("ErrorBody")),
                "{method} {path} documents no error family: {families:?}"
            );
            for family in &families {
                let name = family.trim_start_matches("#/components/schemas/");
                assert!(doc["components"]["schemas"][name].is_object(), "{family} is not a component");
            }
        }
    }
}

/// (path, handler) of every `.route("…", post(handler))` in the platform's modules, with the
/// handler's source text up to its return type.
fn typed_handlers() -> Vec<(String, String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ingress/src/platform");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (at, _) in text.match_indices(".route(\"") {
            let rest = &text[at + ".route(\"".len()..];
            let route = &rest[..rest.find('"').unwrap()];
            let Some(handler) = rest[route.len()..].trim_start_matches(['"', ',', ' ']).strip_prefix("post(") else {
                continue;
            };
            let name: String = handler.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let Some(start) = text.find(&format!("async fn {name}(")) else { continue };
            let signature = &text[start..start + text[start..].find("->").unwrap()];
            out.push((route.to_owned(), name, signature.to_owned()));
        }
    }
    out
}

#[tokio::test]
async fn every_typed_handler_is_documented_with_its_body_type_and_auth() {
    let app = spawn_app(&[]).await;
    let (_, doc) = app.get_json("/openapi.json").await;
    let mut typed = 0;
    for (route, handler, signature) in typed_handlers() {
        let op = &doc["paths"][route.as_str()]["post"];
        let security = op["security"].to_string();
        let extractor = ["Staff<", "Integration<", "Open<", "Ingested<"].into_iter().find(|e| signature.contains(e));
        if let Some(extractor) = extractor {
            typed += 1;
            let at = signature.find(extractor).unwrap() + extractor.len();
            let body = &signature[at..at + signature[at..].find('>').unwrap()];
            let schema =
                op["requestBody"]["content"]["application/json"]["schema"]["$ref"].as_str().unwrap_or_default();
            assert_eq!(
                schema.trim_start_matches("#/components/schemas/"),
                body,
                "{route} ({handler}) reads {body}, /openapi.json documents {schema}"
            );
            let scheme = match extractor {
                "Staff<" => "staffToken",
                "Integration<" => "integrationToken",
                "Ingested<" => "ingestionToken",
                _ => "[]",
            };
            assert!(security.contains(scheme), "{route} ({handler}) is {extractor}…>, documented as {security}");
        } else if signature.contains("AppCustomer") {
            typed += 1;
            assert!(security.contains("appToken"), "{route} ({handler}) takes an app token, documented as {security}");
        }
    }
    assert!(typed >= 45, "the scan found only {typed} typed handlers");
}
