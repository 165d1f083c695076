//! Baseline for BENCHMARKS.md: a bare axum server that parses a JSON body and answers
//! `{"accepted": n}`, and answers `GET /b/{id}` with a fixed 3 KiB HTML page (the floor of the
//! bill page). Nothing else (no schema, no sink, no store). Usage:
//! `bare-json-baseline 127.0.0.1:8091`.

use axum::body::Bytes;
use axum::extract::Path;
use axum::response::Html;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8091".to_owned());
    let app = Router::new()
        .route(
            "/v1/logs",
            post(|body: Bytes| async move {
                match serde_json::from_slice::<Value>(&body) {
                    Ok(Value::Array(events)) => Json(json!({"accepted": events.len()})),
                    Ok(_) => Json(json!({"accepted": 1})),
                    Err(_) => Json(json!({"error": "INVALID_JSON"})),
                }
            }),
        )
        .route(
            "/b/{id}",
            get(|Path(id): Path<String>| async move {
                Html(format!(
                    "<!doctype html><html><body data-bill=\"{id}\">{}</body></html>",
                    "<p>bill</p>".repeat(280)
                ))
            }),
        )
        .layer(axum::extract::DefaultBodyLimit::max(5 * 1024 * 1024));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    axum::serve(listener, app).await?;
    Ok(())
}
