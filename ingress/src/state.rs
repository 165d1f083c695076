//! [`AppState`]: what every route shares (settings, the log writer and reader, auth, limits, the
//! rendered OpenAPI document, readiness and the platform's parts).

use std::sync::Arc;

use metrics_exporter_prometheus::PrometheusHandle;

use engage_config::LogRetention;
use engage_config::Settings;
use engage_storage::logs::disk::DiskGuard;
use engage_storage::logs::embedded::EmbeddedLogs;
use engage_storage::logs::tail::LogTail;
use engage_storage::logs::LogWriter;

use crate::auth::jwks::JwksVerifier;
use crate::logs::schema::LogSchema;
use crate::platform::state::PlatformState;
use crate::rate_limit::CallerLimiter;
use crate::readiness;

/// The log sink's read side, its disk guard and the retention, as [`AppState::new`] takes them.
pub struct LogReads {
    /// What `GET /v1/logs/events` reads.
    pub logs: EmbeddedLogs,
    /// What `GET /v1/logs/tail` reads.
    pub tail: LogTail,
    /// The embedded log's disk guard.
    pub disk: Option<Arc<DiskGuard>>,
    /// The retention of each log group.
    pub retention: LogRetention,
}

/// Shared state of every route. Cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<AppInner>);

impl std::ops::Deref for AppState {
    type Target = AppInner;
    fn deref(&self) -> &AppInner {
        &self.0
    }
}

/// What the process serves that is built once from the code: the OpenAPI document, the log
/// request schema and the `/metrics` renderer ([`crate::served`] builds them, outside this module,
/// which only holds them).
pub struct Served {
    /// The OpenAPI document, rendered.
    pub openapi: String,
    /// The compiled log request schema.
    pub schema: LogSchema,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
}

/// What [`AppState`] holds.
pub struct AppInner {
    /// The settings the process started with.
    pub settings: Settings,
    /// The log sink's coalescing writer.
    pub writer: LogWriter,
    /// What `GET /v1/logs/events` reads back (embedded sink).
    pub logs: EmbeddedLogs,
    /// What `GET /v1/logs/tail` reads (either sink).
    pub tail: LogTail,
    /// The embedded log's disk guard (None on CloudWatch, or without a log of its own).
    pub disk: Option<Arc<DiskGuard>>,
    /// How long each log group's events are kept: reads skip what is older.
    pub retention: LogRetention,
    /// JWT verification, when `ENGAGE_JWKS_URL` is set.
    pub jwt: Option<Arc<JwksVerifier>>,
    /// Rate limit, when configured.
    pub limiter: Option<Arc<CallerLimiter>>,
    /// The compiled request schema.
    pub schema: LogSchema,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
    /// The OpenAPI document, rendered once.
    pub openapi: String,
    /// The phase and the unusable dependencies `/readyz` reports.
    pub readiness: Arc<readiness::Readiness>,
    /// The engagement platform's shared parts.
    pub platform: PlatformState,
}

impl AppState {
    /// The state of a process serving `served`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        settings: Settings,
        writer: LogWriter,
        reads: LogReads,
        jwt: Option<Arc<JwksVerifier>>,
        limiter: Option<Arc<CallerLimiter>>,
        platform: PlatformState,
        readiness: Arc<readiness::Readiness>,
        served: Served,
    ) -> Self {
        Self(Arc::new(AppInner {
            settings,
            writer,
            logs: reads.logs,
            tail: reads.tail,
            disk: reads.disk,
            retention: reads.retention,
            jwt,
            limiter,
            schema: served.schema,
            metrics: served.metrics,
            openapi: served.openapi,
            readiness,
            platform,
        }))
    }
}
