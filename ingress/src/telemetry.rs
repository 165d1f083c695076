//! The Prometheus recorder behind `GET /metrics`.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process-wide recorder once and returns its handle (later calls share it).
pub fn prometheus() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let seconds =
                [0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
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
            register();
            upkeep(handle.clone());
            handle
        })
        .clone()
}

/// How often histogram samples are folded into their buckets.
const UPKEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Folds recorded histogram samples into their buckets every [`UPKEEP_EVERY`]. A recorder made
/// with `build_recorder` keeps every sample until `/metrics` is rendered: unscraped, memory would
/// grow with every request (~12 bytes a sample, several samples a request). A thread, not a task,
/// so it runs whatever runtime (if any) the process has.
fn upkeep(handle: PrometheusHandle) {
    let spawned = std::thread::Builder::new().name("engage-metrics-upkeep".into()).spawn(move || loop {
        std::thread::sleep(UPKEEP_EVERY);
        handle.run_upkeep();
    });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start the metrics upkeep thread: histograms are folded only when /metrics is read");
    }
}

/// Counters (at zero, with their known label values), gauges (at zero) and histograms with their
/// `# HELP` text, so that `/metrics` names every series from the start: a dashboard or alert
/// written against a name finds it before the first event.
fn register() {
    use metrics::{describe_counter, describe_gauge, describe_histogram};
    let counters: &[(&'static str, &'static str, &'static str, &[&'static str])] = &[
        ("engage_http_requests_total", "HTTP requests answered, by route, method and status", "", &[]),
        (
            "engage_log_events_total",
            "log events by outcome",
            "outcome",
            &["accepted", "too_old", "too_new", "expired", "write_failed"],
        ),
        (
            "engage_log_requests_failed_total",
            "log requests refused, by error code",
            "error",
            &[
                "INVALID_JSON",
                "SCHEMA_VIOLATION",
                "BATCH_TOO_LARGE",
                "PAYLOAD_TOO_LARGE",
                "ALL_REJECTED",
                "WRITE_FAILED",
                "UNAUTHORIZED",
                "RATE_LIMITED",
            ],
        ),
        ("engage_log_sink_retries_total", "PutLogEvents calls retried", "sink", &["cloudwatch"]),
        (
            "engage_auth_failures_total",
            "log-route bearer tokens refused, by reason",
            "reason",
            &["missing", "malformed", "algorithm", "unknown_key", "invalid"],
        ),
        ("engage_jwks_fetches_total", "JWKS fetches by outcome", "outcome", &["ok", "error"]),
        (
            "engage_token_checks_total",
            "platform token checks, by where the grant came from: memory (kept while the token watch runs) or the store",
            "answered",
            &["memory", "store"],
        ),
        ("engage_rate_limited_total", "log requests refused by the rate limit", "", &[""]),
        ("engage_ingested_total", "platform events accepted onto the bus, by source", "source", &[]),
        ("engage_ingest_rejected_total", "platform events refused, by source", "source", &[]),
        ("engage_events_processed_total", "bus events processed, by partition", "partition", &[]),
        ("engage_events_retried_total", "bus events handed back for redelivery", "", &[""]),
        (
            "engage_orders_applied_total",
            "orders applied by tenant actors, by outcome",
            "outcome",
            &["new", "updated", "unchanged", "stale", "cart"],
        ),
        ("engage_actor_failures_total", "tenant actor panics caught by supervisors", "", &[""]),
        ("engage_actor_restarts_total", "tenant actors restarted by supervisors", "", &[""]),
        ("engage_actor_quarantines_total", "tenants quarantined after repeated panics", "", &[""]),
        ("engage_actor_passivations_total", "idle tenant actors stopped", "", &[""]),
        (
            "engage_read_ahead_rows_total",
            "rows read before a query reached its tenant actor: used, or read again (written since)",
            "outcome",
            &["used", "read_again"],
        ),
        (
            "engage_event_rows_read_ahead_total",
            "rows read with a batch of bus events before their tenant actors handled them: used, or read again (written since)",
            "outcome",
            &["used", "read_again"],
        ),
        (
            "engage_platform_auth_failures_total",
            "platform credentials refused, by auth family",
            "family",
            &["staff", "integration", "ingestion", "app", "internal"],
        ),
        ("engage_bus_undecodable_total", "bus messages that could not be decoded", "", &[""]),
        ("engage_store_commit_panics_total", "store committer panics (embedded, NATS KV)", "", &[""]),
        (
            "engage_store_dropped_staged_total",
            "NATS KV groups of staged writes that failed and were dropped with every batch queued behind them",
            "",
            &[""],
        ),
        (
            "engage_store_failures_total",
            "embedded store failures for good (a failed sync of staged writes; restart engage)",
            "",
            &[""],
        ),
        (
            "engage_log_segment_failures_total",
            "embedded log sink appends that failed (the log then refuses writes; restart engage)",
            "",
            &[""],
        ),
        ("engage_log_segments_deleted_total", "embedded log segments deleted by the retention", "", &[""]),
        ("engage_log_segment_bytes_deleted_total", "bytes of the log segments the retention deleted", "", &[""]),
        ("engage_log_disk_refusals_total", "log writes refused by the disk guard (507 DISK_FULL)", "", &[""]),
        ("engage_log_retention_failures_total", "CloudWatch retention policies that could not be set", "", &[""]),
        ("engage_sends_queued_total", "paid sends queued, by channel", "", &[]),
        ("engage_sends_delivered_total", "paid sends delivered, by channel", "", &[]),
        ("engage_sends_failed_total", "paid sends failed, by channel", "", &[]),
        (
            "engage_sends_skipped_total",
            "sends skipped, by reason",
            "reason",
            &["consent", "balance", "sender", "daily_cap", "frequency_cap", "no_recipient"],
        ),
        (
            "engage_send_receipts_total",
            "providers' receipts that moved a send, by status",
            "status",
            &["delivered", "read", "failed"],
        ),
        ("engage_job_runs_total", "scheduled job runs, by job and outcome", "", &[]),
    ];
    for (name, help, label, values) in counters {
        describe_counter!(*name, *help);
        for value in *values {
            if label.is_empty() {
                metrics::counter!(*name).absolute(0);
            } else {
                metrics::counter!(*name, *label => *value).absolute(0);
            }
        }
    }
    // sends by provider and outcome (docs/senders.md), every pair at zero
    describe_counter!("engage_sends_total", "calls to messaging providers, by provider and outcome");
    for provider in ["node", "generic", "twilio", "msg91", "whatsapp_cloud", "fcm"] {
        for outcome in ["sent", "rejected", "retried", "gave_up"] {
            metrics::counter!("engage_sends_total", "provider" => provider, "outcome" => outcome).absolute(0);
        }
    }
    // the first scrape's own series, so the name is there before any request finished
    metrics::counter!("engage_http_requests_total", "route" => "/metrics", "method" => "GET", "status" => "200")
        .absolute(0);
    for route in crate::platform::ingestion::ENQUEUE_ROUTES {
        metrics::counter!("engage_ingested_total", "source" => route.source).absolute(0);
        metrics::counter!("engage_ingest_rejected_total", "source" => route.source).absolute(0);
    }
    for (name, help) in [
        ("engage_tenant_actors", "tenant actors running"),
        ("engage_partitions_owned", "partitions this node holds a lease on"),
        ("engage_partitions_running", "partitions this node processes"),
        ("engage_cached_customers", "customers kept in tenant actors' caches"),
        ("engage_cached_customer_bytes", "bytes of the stored rows of the customers in tenant actors' caches"),
        (
            "engage_store_memtable_bytes",
            "bytes the embedded store holds in memtables (flushed after 10 s without writes)",
        ),
        ("engage_log_disk_bytes", "bytes of the embedded log's segment files"),
        ("engage_log_segments", "segment files of the embedded log"),
        ("engage_log_oldest_event_seconds", "timestamp (unix seconds) of the oldest log event still kept"),
    ] {
        describe_gauge!(name, help);
        metrics::gauge!(name).set(0.0);
    }
    for (name, help) in [
        ("engage_http_request_duration_seconds", "HTTP request latency, by route"),
        ("engage_log_sink_latency_seconds", "log sink write latency"),
        ("engage_log_batch_events", "events per sink call (PutLogEvents)"),
        ("engage_log_flush_requests", "requests coalesced per flush"),
        ("engage_log_request_events", "events per log request"),
        ("engage_processing_lag_seconds", "bus publish to processing"),
        ("engage_job_duration_seconds", "scheduled job run time"),
    ] {
        describe_histogram!(name, help);
    }
}
