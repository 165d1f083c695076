//! `/healthz`, `/readyz`, `/metrics`, `/openapi.json`.

use serde_json::{json, Value};

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

#[tokio::test]
async fn every_documented_operation_states_its_auth_and_error_family() {
    let app = spawn_app(&[]).await;
    let (_, doc) = app.get_json("/openapi.json").await;
    let ops_routes = ["/healthz", "/readyz", "/metrics", "/openapi.json"];
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() > 160, "{} paths", paths.len());
    for (path, item) in paths {
        let item = item.as_object().unwrap();
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
            // a static page (the dashboard, the favicon) has no error to answer
            let responses = op["responses"].as_object().unwrap();
            let static_page = responses.len() == 1
                && responses["200"]["content"].as_object().is_some_and(|c| !c.contains_key("application/json"));
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

/// The document and the router come from one declaration per route, so what `/openapi.json` says
/// of a route is what it does: every documented operation is served (not the 404 fallback, not
/// 405), and without a credential each answers as its security says — 403 `invalid credentials`
/// (staff, ingestion, app tokens), 401 `xE_101` (integration token), 401 (internal JWT).
#[tokio::test]
async fn every_documented_operation_is_served_and_refuses_without_its_credential() {
    let app = spawn_app(&[]).await;
    let (_, doc) = app.get_json("/openapi.json").await;
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        if path.starts_with("/admin") {
            continue; // loopback and admin key: tests/e2e/cli.rs and dead_letters.rs
        }
        let url = format!("{}{}", app.base, path.replace(['{', '}'], ""));
        for (method, op) in item.as_object().unwrap() {
            let request = match method.as_str() {
                "get" => app.client.get(&url),
                "post" => app.client.post(&url).json(&json!({})),
                "delete" => app.client.delete(&url),
                other => panic!("{other} {path}"),
            };
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let body: serde_json::Value = response.json().await.unwrap_or_default();
            assert_ne!(status, 405, "{method} {path} is documented but not served: {body}");
            assert!(body["error"] != "NOT_FOUND", "{method} {path} is documented but not mounted: {body}");
            let security = op["security"].to_string();
            let expected = if ["staffToken", "appToken", "ingestionToken"].iter().any(|s| security.contains(s)) {
                Some(403)
            } else if (security.contains("integrationToken") && !security.contains("{}"))
                || security.contains("internalJwt")
            {
                Some(401)
            } else {
                None
            };
            if let Some(expected) = expected {
                assert_eq!(status, expected, "{method} {path} ({security}) without a credential: {body}");
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} operations need a credential");
}

/// Posts each operation's example (in `/openapi.json`) with a credential of the example's brand
/// as the operation's security names: `(path, status, answer)` of each.
pub(crate) async fn post_examples(app: &crate::helpers::TestApp, doc: &Value) -> Vec<(String, u16, Value)> {
    let brand = engage_ingress::platform::edge::examples::BRAND;
    let staff = crate::helpers::token_for(app, "staff", brand, None).await;
    let integration = crate::helpers::token_for(app, "integration", brand, None).await;
    let ingestion = crate::helpers::token_for(app, "ingestion", brand, None).await;
    let customer = crate::helpers::token_for(app, "app", brand, Some("9876543210")).await;
    let mut answers = Vec::new();
    let mut partner_token = String::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let Some(op) = item.get("post") else { continue };
        let Some(example) = op.pointer("/requestBody/content/application~1json/example") else { continue };
        let security = op["security"].to_string();
        if path.starts_with("/admin") || security.contains("internalJwt") {
            continue; // the admin key and internal JWTs: tests/e2e/cli.rs, jwt.rs
        }
        let url = format!("{}{}", app.base, path.replace(['{', '}'], ""));
        let mut example = example.clone();
        // the credentials a body carries: the brand's integration token, the partner token it got
        if example.get("api_key").is_some() {
            example["api_key"] = json!(integration);
        }
        if path.ends_with("getPartnerProfile") {
            example["token"] = json!(partner_token);
        }
        let mut request = app.client.post(&url).json(&example);
        request = match () {
            _ if security.contains("staffToken") => request.header("token", &staff),
            _ if security.contains("ingestionToken") => request.header("token", &ingestion),
            _ if security.contains("keywordWebhookSecret") => {
                request.header("x-engage-webhook-secret", crate::helpers::KEYWORD_WEBHOOK_SECRET)
            }
            // a signature the example's phone-number id (no brand's) is never checked against
            _ if security.contains("metaSignature") => request.header("x-hub-signature-256", "sha256=00"),
            _ if security.contains("appToken") => request.header("token", &customer).header("source", "mobile"),
            _ if security.contains("integrationToken") && !security.contains("{}") => {
                request.header("authorization", &integration)
            }
            _ => request,
        };
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap_or_default();
        if path.ends_with("generatePartnerToken") {
            partner_token = body["token"].as_str().unwrap_or_default().to_owned();
        }
        answers.push((path.clone(), status, body));
    }
    answers
}

/// Each operation's example (in `/openapi.json`, made from the schema the route validates with) is
/// accepted: posted with a credential of the example's brand as the operation's security names,
/// no example is refused as bad input (400), nor for its credential, nor fails (5xx). A 404 (the
/// example's customer is not the brand's yet) or a 409 (the state refuses it) are answers to valid
/// data.
#[tokio::test]
async fn every_operation_accepts_its_own_example() {
    let app = spawn_app(&[]).await;
    let (_, doc) = app.get_json("/openapi.json").await;
    let answers = post_examples(&app, &doc).await;
    for (path, status, body) in &answers {
        // a 403 that denies the action itself (a one-time password never sent, a fraud denial) is
        // an answer to valid data; a 403 for the credential is not
        let denial = *status == 403 && matches!(body["error_code"].as_str(), Some("xE_108" | "xE_109" | "xE_112"));
        assert!(
            matches!(status, 200..=299 | 404 | 409) || denial,
            "POST {path} refused its own example with {status}: {body}"
        );
    }
    let posted = answers.len();
    assert!(posted > 120, "only {posted} examples posted");
}
