//! The Prometheus recorder behind `GET /metrics`.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process-wide recorder once and returns its handle (later calls share it).
pub fn prometheus() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let seconds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
            let sizes = [1.0, 2.0, 5.0, 10.0, 50.0, 100.0, 500.0, 1000.0, 5000.0, 10000.0, 50000.0];
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".to_owned()), &seconds)
                .and_then(|b| b.set_buckets_for_metric(Matcher::Prefix("engage_log_batch".to_owned()), &sizes))
                .and_then(|b| b.set_buckets_for_metric(Matcher::Prefix("engage_log_flush".to_owned()), &sizes))
                .and_then(|b| {
                    b.set_buckets_for_metric(Matcher::Prefix("engage_log_request_events".to_owned()), &sizes)
                });
            let recorder = match builder {
                Ok(builder) => builder.build_recorder(),
                Err(_) => PrometheusBuilder::new().build_recorder(),
            };
            let handle = recorder.handle();
            // Fails only if another recorder was installed first; metrics then go there.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}
