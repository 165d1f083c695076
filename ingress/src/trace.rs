//! `x-trace-id`: taken from the request (when it is 1–128 visible ASCII characters) or generated,
//! carried by every log line of the request's span, echoed in the response header, and counted
//! per route in `/metrics`.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

/// The header name.
pub const TRACE_HEADER: &str = "x-trace-id";

/// The trace id of the current request (in request extensions).
#[derive(Clone, Debug)]
pub struct TraceId(pub String);

/// Middleware: trace id, request span, access log and request metrics.
pub async fn trace_requests(mut request: Request, next: Next) -> Response {
    let trace_id = request
        .headers()
        .get(TRACE_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    request.extensions_mut().insert(TraceId(trace_id.clone()));
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    let method = request.method().to_string();
    let span = tracing::info_span!("request", trace_id = %trace_id, %method, path = %request.uri().path());
    let started = Instant::now();
    let mut response = next.run(request).instrument(span.clone()).await;
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    if matches!(status, 405 | 415) && !is_json(&response) {
        // axum's own 405 and 415 have no body: answer in the route's error family
        let allow = response.headers().get(header::ALLOW).cloned();
        response = crate::platform::refusal(&route, response.status());
        if let Some(allow) = allow {
            response.headers_mut().insert(header::ALLOW, allow);
        }
    }
    if let Ok(value) = HeaderValue::from_str(&trace_id) {
        response.headers_mut().insert(TRACE_HEADER, value);
    }
    metrics::counter!("engage_http_requests_total", "route" => route.clone(), "method" => method, "status" => status.to_string())
        .increment(1);
    metrics::histogram!("engage_http_request_duration_seconds", "route" => route).record(elapsed.as_secs_f64());
    span.in_scope(|| tracing::info!(status, elapsed_ms = elapsed.as_secs_f64() * 1000.0, "request served"));
    response
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}
