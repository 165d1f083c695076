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
    let schema = &doc["components"]["schemas"]["LogIngestRequest"];
    assert_eq!(schema["$defs"]["LogEvent"]["properties"]["level"]["enum"], json!(["ERROR", "WARN", "INFO", "DEBUG"]));
    assert_eq!(schema["$defs"]["LogEvent"]["properties"]["timestamp"]["format"], "date-time");
    assert!(doc["components"]["schemas"]["ApiErrorBody"]["properties"]["issues"].is_object());
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
}
