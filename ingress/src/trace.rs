//! `x-trace-id`: taken from the request (when it is 1–128 visible ASCII characters) or generated,
//! carried by every log line of the request's span, echoed in the response header, and counted
//! per route in `/metrics`.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use metrics::{Counter, Histogram};
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
    if let Ok(value) = HeaderValue::from_str(&trace_id) {
        response.headers_mut().insert(TRACE_HEADER, value);
    }
    let (requests, duration) = route_metrics(&route, &method, status);
    requests.increment(1);
    duration.record(elapsed.as_secs_f64());
    span.in_scope(|| tracing::info!(status, elapsed_ms = elapsed.as_secs_f64() * 1000.0, "request served"));
    response
}

/// Handles of one route's request metrics, registered once: building a labelled key and looking it
/// up in the recorder's registry on every request was ~4% of the runtime workers' samples on the
/// single-event log route (issue 13).
struct RouteMetrics {
    /// `engage_http_requests_total` by (method, status).
    answered: Vec<(String, u16, Counter)>,
    /// `engage_http_request_duration_seconds`.
    duration: Histogram,
}

/// The request counter for (`route`, `method`, `status`) and the route's duration histogram.
fn route_metrics(route: &str, method: &str, status: u16) -> (Counter, Histogram) {
    static ROUTES: OnceLock<RwLock<HashMap<String, RouteMetrics>>> = OnceLock::new();
    let routes = ROUTES.get_or_init(Default::default);
    let known = |metrics: &RouteMetrics| {
        let counter = metrics.answered.iter().find(|(m, s, _)| m == method && *s == status)?;
        Some((counter.2.clone(), metrics.duration.clone()))
    };
    if let Some(found) = routes.read().ok().and_then(|routes| routes.get(route).and_then(known)) {
        return found;
    }
    let counter = metrics::counter!("engage_http_requests_total", "route" => route.to_owned(), "method" => method.to_owned(), "status" => status.to_string());
    let duration = metrics::histogram!("engage_http_request_duration_seconds", "route" => route.to_owned());
    if let Ok(mut routes) = routes.write() {
        let metrics = routes
            .entry(route.to_owned())
            .or_insert_with(|| RouteMetrics { answered: Vec::new(), duration: duration.clone() });
        if known(metrics).is_none() {
            metrics.answered.push((method.to_owned(), status, counter.clone()));
        }
    }
    (counter, duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_metrics_are_registered_once_per_route_method_and_status() {
        let handle = crate::telemetry::prometheus();
        let route = "/test/route-metrics";
        for _ in 0..3 {
            let (answered, duration) = route_metrics(route, "POST", 200);
            answered.increment(1);
            duration.record(0.001);
        }
        let (answered, duration) = route_metrics(route, "POST", 400);
        answered.increment(1);
        duration.record(0.002);
        route_metrics(route, "GET", 200).0.increment(1);
        let text = handle.render();
        for series in [
            r#"engage_http_requests_total{route="/test/route-metrics",method="POST",status="200"} 3"#,
            r#"engage_http_requests_total{route="/test/route-metrics",method="POST",status="400"} 1"#,
            r#"engage_http_requests_total{route="/test/route-metrics",method="GET",status="200"} 1"#,
            r#"engage_http_request_duration_seconds_count{route="/test/route-metrics"} 4"#,
        ] {
            assert!(text.lines().any(|line| line == series), "{series} missing from:\n{text}");
        }
    }
}
