//! Typed settings for engage.
//!
//! Layering, lowest first: built-in defaults < an optional TOML file (`engage serve --config PATH`)
//! < `ENGAGE_*` environment variables. Every field of [`Settings`] is one setting; its environment
//! name is `ENGAGE_` + the field name in upper case (`http_addr` -> `ENGAGE_HTTP_ADDR`). Unknown keys
//! and invalid values stop start-up with a [`ConfigError`] that names the setting.

mod cluster;
mod errors;
mod kinds;
mod redact;
mod retention;
mod validate;

pub use cluster::*;
pub use errors::*;
pub use kinds::*;
pub use redact::*;
pub use retention::*;

/// The partition counts a cluster may have (`ENGAGE_PARTITIONS`, `engage partitions set`).
pub const PARTITION_COUNTS: std::ops::RangeInclusive<u32> = 1..=4096;

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

use figment::providers::{Format, Serialized, Toml};
use figment::Figment;
use serde::{Deserialize, Serialize};

/// Environment variables with this prefix are read as settings.
pub const ENV_PREFIX: &str = "ENGAGE_";

/// Environment variables under the prefix that are not settings: the test harness's switches
/// (`ENGAGE_TEST_*`) and what one command reads for itself (`ENGAGE_LOGS_TOKEN`, the bearer token of
/// `engage logs tail|usage`). Every command ignores them when loading its settings.
const NOT_SETTINGS: &[&str] = &["test_*", "logs_token"];

/// All settings of one engage process. Inert data: nothing here opens a connection.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Address the HTTP server binds (`ENGAGE_HTTP_ADDR`): an IP and port, or a host name and port
    /// (`localhost:8080`, resolved at start).
    #[serde(deserialize_with = "resolve_addr")]
    pub http_addr: SocketAddr,
    /// Directory of the embedded store (`ENGAGE_DATA_DIR`).
    pub data_dir: PathBuf,
    /// Log sink: `embedded` or `cloudwatch` (`ENGAGE_LOG_SINK`).
    pub log_sink: LogSinkKind,
    /// CloudWatch Logs endpoint override, e.g. a local moto server (`ENGAGE_CLOUDWATCH_ENDPOINT`).
    /// Region and credentials come from the standard AWS environment.
    pub cloudwatch_endpoint: Option<String>,
    /// How long one PutLogEvents batch may be retried (throttling, 5xx, connection errors) before
    /// the request gets `WRITE_FAILED` (`ENGAGE_CLOUDWATCH_DEADLINE_MS`).
    pub cloudwatch_deadline_ms: u64,
    /// How often a waiting tail read (`engage logs tail --follow`) asks CloudWatch again, 100 ms
    /// or more (`ENGAGE_CLOUDWATCH_TAIL_POLL_MS`; each follower costs 1000/this FilterLogEvents a
    /// second of the account's quota).
    pub cloudwatch_tail_poll_ms: u64,
    /// Days log events are kept, on both sinks: 0 (forever) or a value CloudWatch takes
    /// (`ENGAGE_LOG_RETENTION_DAYS`, default 30; [`LogRetention`]).
    pub log_retention_days: u32,
    /// Per-group retention, `GROUP=DAYS` or `PREFIX*=DAYS`, comma-separated
    /// (`ENGAGE_LOG_RETENTION_BY_GROUP`).
    pub log_retention_by_group: Option<String>,
    /// Whether the CloudWatch sink also sets the retention of groups it did not create
    /// (`ENGAGE_LOG_RETENTION_RECONCILE`, default false: an existing group's retention is its own).
    pub log_retention_reconcile: bool,
    /// Bytes after which the embedded log starts a new segment, 64 KiB–1 GiB
    /// (`ENGAGE_LOG_SEGMENT_BYTES`, default 64 MiB; whole segments are what expiry deletes).
    pub log_segment_bytes: u64,
    /// Seconds between two passes of the embedded log's expiry (`ENGAGE_LOG_EXPIRY_INTERVAL_SECS`).
    pub log_expiry_interval_secs: u64,
    /// Below this many free bytes on the log directory's filesystem the log routes refuse writes
    /// with 507 `DISK_FULL` (`ENGAGE_LOG_MIN_FREE_BYTES`, default 256 MiB; 0: no guard).
    pub log_min_free_bytes: u64,
    /// The `<org>` segment of log group names `/logs/<org>/<product>/<service>` (`ENGAGE_LOG_ORG`).
    pub log_org: String,
    /// JWKS URL; when set, the log routes require an RS256 bearer JWT (`ENGAGE_JWKS_URL`).
    pub jwks_url: Option<String>,
    /// Required `iss` claim, when set (`ENGAGE_JWT_ISSUER`).
    pub jwt_issuer: Option<String>,
    /// Required `aud` claim, when set (`ENGAGE_JWT_AUDIENCE`).
    pub jwt_audience: Option<String>,
    /// Age after which the cached JWKS is fetched again (`ENGAGE_JWKS_REFRESH_SECS`).
    pub jwks_refresh_secs: u64,
    /// Least time between two JWKS fetches caused by unknown key ids (`ENGAGE_JWKS_MIN_REFETCH_SECS`).
    pub jwks_min_refetch_secs: u64,
    /// `text` or `json` process logs (`ENGAGE_LOG_FORMAT`).
    pub log_format: LogFormat,
    /// `tracing` filter, e.g. `info` or `engage=debug` (`ENGAGE_LOG_LEVEL`).
    pub log_level: String,
    /// Largest accepted request body after decompression, in bytes (`ENGAGE_MAX_BODY_BYTES`).
    pub max_body_bytes: usize,
    /// Largest accepted log event, serialised as JSON, in bytes (`ENGAGE_MAX_EVENT_BYTES`).
    pub max_event_bytes: usize,
    /// Requests per second allowed per caller on the log routes; unset means no limit
    /// (`ENGAGE_RATE_LIMIT_PER_SECOND`).
    pub rate_limit_per_second: Option<NonZeroU32>,
    /// Burst size for the rate limit; defaults to the per-second rate (`ENGAGE_RATE_LIMIT_BURST`).
    pub rate_limit_burst: Option<NonZeroU32>,
    /// The spec's open routes: `open` (default; a brand can close them for itself) or `closed`
    /// (every one requires an integration token of its brand) (`ENGAGE_OPEN_ROUTES`).
    pub open_routes: OpenRoutes,
    /// Requests per second allowed per client address on each open route that reads or changes a
    /// customer (not the order ingestion routes); `0` turns it off
    /// (`ENGAGE_OPEN_ROUTES_RATE_LIMIT`).
    pub open_routes_rate_limit: u32,
    /// Largest multipart upload (CSV files of the blocklist and bulk campaign routes), in bytes
    /// (`ENGAGE_MAX_UPLOAD_BYTES`).
    pub max_upload_bytes: usize,
    /// Longest wait for in-flight requests on shutdown, in seconds (`ENGAGE_SHUTDOWN_GRACE_SECS`).
    pub shutdown_grace_secs: u64,
    /// On SIGINT/SIGTERM, how long the process goes on serving every request while `/readyz`
    /// answers 503 `shutting_down`, so that a load balancer stops sending before the listener
    /// closes, in seconds (`ENGAGE_SHUTDOWN_DRAIN_SECS`).
    pub shutdown_drain_secs: u64,
    /// NATS server URLs, comma-separated (`nats://a:4222,nats://b:4222`); when set the bus is
    /// JetStream and the default store NATS KV (`ENGAGE_NATS_URL`).
    pub nats_url: Option<String>,
    /// Replicas of every stream and bucket engage creates: 1 on one server, 3 on a three-server
    /// cluster (`ENGAGE_NATS_REPLICAS`). An existing one with another count is updated at start.
    pub nats_replicas: u8,
    /// Per-name exceptions, `NAME=COUNT,…` with names as `nats stream ls` shows them
    /// (`ENGAGE_NATS_REPLICAS_BY_NAME`, e.g. `KV_engage_leases=1`).
    pub nats_replicas_by_name: Option<String>,
    /// Store backend; default `embedded`, or `nats` when `nats_url` is set (`ENGAGE_STORE`).
    pub store: Option<StoreKind>,
    /// ScyllaDB contact points, comma-separated `host:port` (`ENGAGE_SCYLLA_NODES`).
    pub scylla_nodes: Option<String>,
    /// ScyllaDB keyspace (`ENGAGE_SCYLLA_KEYSPACE`).
    pub scylla_keyspace: String,
    /// Replication strategy of a keyspace engage creates: `simple` or `network_topology`
    /// (`ENGAGE_SCYLLA_REPLICATION`; production: `network_topology`).
    pub scylla_replication: ScyllaReplication,
    /// Replication factor of a keyspace engage creates (`ENGAGE_SCYLLA_REPLICATION_FACTOR`; 1
    /// fits the compose single node, production: 3).
    pub scylla_replication_factor: u32,
    /// Consistency of reads (`ENGAGE_SCYLLA_READ_CONSISTENCY`; default `local_quorum`).
    pub scylla_read_consistency: ScyllaConsistency,
    /// Consistency of writes (`ENGAGE_SCYLLA_WRITE_CONSISTENCY`; default `local_quorum`).
    pub scylla_write_consistency: ScyllaConsistency,
    /// Number of tenant partitions ([`PARTITION_COUNTS`]), cluster-wide; never change it on a live cluster
    /// (`ENGAGE_PARTITIONS`). On NATS the cluster keeps the count it was made with and a process
    /// that was not given one takes the cluster's (`engage_streams::bus::partition_count`).
    pub partitions: u32,
    /// Whether `partitions` was given (environment or file) rather than left at its default.
    #[serde(skip)]
    pub partitions_given: bool,
    /// This node's id; defaults to `<hostname>-<pid>` (`ENGAGE_NODE_ID`).
    pub node_id: Option<String>,
    /// How long a partition lease lives without a heartbeat (`ENGAGE_PARTITION_LEASE_SECS`).
    pub partition_lease_secs: u64,
    /// What this process runs: `all`, `ingress`, `node` (`ENGAGE_ROLE`, or `serve --role`).
    pub role: Role,
    /// Age after which messages leave the JetStream streams, in hours (`ENGAGE_STREAM_RETENTION_HOURS`).
    pub stream_retention_hours: u64,
    /// Idle time after which a tenant actor is stopped, in seconds (`ENGAGE_PASSIVATE_AFTER_SECS`).
    pub passivate_after_secs: u64,
    /// Most customers cached by all tenant actors of this node together
    /// (`ENGAGE_CACHED_CUSTOMERS_MAX`); each brand caches at most 10,000 of its own as well.
    pub cached_customers_max: u64,
    /// The embedded store's block cache, in MiB (`ENGAGE_STORE_CACHE_MIB`).
    pub store_cache_mib: u64,
    /// Each table's memtable in the embedded store, in MiB (`ENGAGE_STORE_MEMTABLE_MIB`).
    pub store_memtable_mib: u64,
    /// Key for the loopback admin routes (`/admin/*`, used by `engage tokens`); when unset a random
    /// key is kept in `<data_dir>/admin.key` (`ENGAGE_ADMIN_KEY`).
    pub admin_key: Option<Secret>,
    /// HS256 secret for internal JWTs (`Authorization: Bearer`); RS256 internal JWTs are verified
    /// with the JWKS of `jwks_url` (`ENGAGE_INTERNAL_JWT_SECRET`).
    pub internal_jwt_secret: Option<Secret>,
    /// SMS provider endpoint the SMS queue drains POST to (`ENGAGE_SMS_PROVIDER_URL`).
    pub sms_provider_url: Option<String>,
    /// Chat provider endpoint (`ENGAGE_CHAT_PROVIDER_URL`).
    pub chat_provider_url: Option<String>,
    /// Push provider endpoint (`ENGAGE_PUSH_PROVIDER_URL`).
    pub push_provider_url: Option<String>,
    /// Bearer credential sent to the providers (`ENGAGE_PROVIDER_TOKEN`).
    pub provider_token: Option<Secret>,
    /// Cron (seconds first, IST) of the SMS queue drain (`ENGAGE_JOB_SMS_DRAIN`).
    pub job_sms_drain: String,
    /// Cron of the chat queue drain (`ENGAGE_JOB_CHAT_DRAIN`).
    pub job_chat_drain: String,
    /// Cron of the push queue drain (`ENGAGE_JOB_PUSH_DRAIN`).
    pub job_push_drain: String,
    /// Cron of the POS redemption revoke job (`ENGAGE_JOB_POS_REVOKE`).
    pub job_pos_revoke: String,
    /// Cron of the failed-chat refund job (`ENGAGE_JOB_CHAT_REFUND`).
    pub job_chat_refund: String,
    /// Cron of the loyalty points expiry job (`ENGAGE_JOB_POINTS_EXPIRY`).
    pub job_points_expiry: String,
    /// Cron of the nightly journey run (`ENGAGE_JOB_JOURNEYS`; spec: 22:00 IST).
    pub job_journeys: String,
    /// Cron of the abandoned-cart reminders (`ENGAGE_JOB_ABANDONED_CART`; every 5 minutes).
    pub job_abandoned_cart: String,
    /// Cron of the lost-customers ROI attribution (`ENGAGE_JOB_ROI_LOST_CUSTOMERS`; 00:00).
    pub job_roi_lost_customers: String,
    /// Cron of the referral ROI attribution (`ENGAGE_JOB_ROI_REFERRAL`; 05:30).
    pub job_roi_referral: String,
    /// Cron of the birthday, anniversary and wallet-expiry ROI attribution
    /// (`ENGAGE_JOB_ROI_JOURNEYS`; 06:00).
    pub job_roi_journeys: String,
    /// Cron of the abandoned-cart ROI attribution (`ENGAGE_JOB_ROI_ABANDONED_CART`; 06:30).
    pub job_roi_abandoned_cart: String,
    /// Cron of the welcome ROI attribution (`ENGAGE_JOB_ROI_WELCOME`; 07:30).
    pub job_roi_welcome: String,
    /// Cron of the `business_config.auto_campaign` flag sync (`ENGAGE_JOB_AUTO_CAMPAIGN_SYNC`;
    /// 12:47).
    pub job_auto_campaign_sync: String,
    /// Cron of the weekly journey health reports (`ENGAGE_JOB_HEALTH_REPORTS`; Monday 12:00).
    pub job_health_reports: String,
    /// Cron of the digital bill generation (`ENGAGE_JOB_BILL_GENERATION`; 09:57).
    pub job_bill_generation: String,
    /// Cron of the daily digital bill report (`ENGAGE_JOB_BILL_REPORT`; 11:32).
    pub job_bill_report: String,
    /// Cron of the NPS conversion (`ENGAGE_JOB_NPS_CONVERSION`; 06:00).
    pub job_nps_conversion: String,
    /// Cron of the feedback config sync (`ENGAGE_JOB_FEEDBACK_CONFIG_SYNC`; 12:06).
    pub job_feedback_config_sync: String,
    /// Cron of the app-store review sync (`ENGAGE_JOB_REVIEW_SYNC`; every 3 hours).
    pub job_review_sync: String,
    /// Cron of the legacy feedback SMS drain (`ENGAGE_JOB_LEGACY_FEEDBACK_DRAIN`; every 5 min).
    pub job_legacy_feedback_drain: String,
    /// App store A's base URL (`ENGAGE_STORE_A_URL`); unset: not synced.
    pub store_a_url: Option<String>,
    /// App store A's bearer credential (`ENGAGE_STORE_A_TOKEN`).
    pub store_a_token: Option<Secret>,
    /// App store B's base URL (`ENGAGE_STORE_B_URL`); unset: not synced.
    pub store_b_url: Option<String>,
    /// App store B's bearer credential (`ENGAGE_STORE_B_TOKEN`).
    pub store_b_token: Option<Secret>,
    /// The link service that makes bills' short links (`ENGAGE_LINK_SERVICE_URL`; `POST` answering
    /// `shortened_url`, `bill_id`). Unset: engage serves each bill itself at `/b/<bill_id>`.
    pub link_service_url: Option<String>,
    /// The feedback form service (`ENGAGE_FEEDBACK_SERVICE_URL`): feedback links are
    /// `<it>?token=<JWT>`. Unset: engage serves the form itself at `/f/<JWT>`.
    pub feedback_service_url: Option<String>,
    /// The public base URL of this service, for links in messages (`ENGAGE_PUBLIC_URL`; default
    /// `http://<http_addr>`).
    pub public_url: Option<String>,
    /// Secret that signs chat tracking links (`ENGAGE_LINK_SECRET`). Unset: one is made at first
    /// start and kept in the store, so every node sharing the store signs alike.
    pub link_secret: Option<Secret>,
    /// Where the health and bill reports are POSTed (`ENGAGE_MAIL_SERVICE_URL`); unset: written
    /// only.
    pub mail_service_url: Option<String>,
    /// The secrets of the SMS and chat providers' inbound keyword webhook
    /// (`ENGAGE_KEYWORD_WEBHOOK_SECRETS`, `provider=secret[,provider=secret…]`): a provider posts
    /// to `/webhooks/keywords/<provider>` with its secret in `x-engage-webhook-secret`. Unset: the
    /// webhook refuses every call.
    pub keyword_webhook_secrets: Option<Secret>,
    /// Minutes a POS redemption stays pending before the revoke job may revert it
    /// (`ENGAGE_POS_REDEMPTION_TTL_MINUTES`).
    pub pos_redemption_ttl_minutes: u64,
    /// How long start-up keeps retrying NATS and ScyllaDB before it gives up, in seconds
    /// (`ENGAGE_CONNECT_TIMEOUT_SECS`).
    pub connect_timeout_secs: u64,
    /// Testing only: the tenant actor panics once on the order with this `orderId`
    /// (`ENGAGE_FAULT_PANIC_ORDER_ID`). Used by the supervision tests.
    pub fault_panic_order_id: Option<String>,
    /// Testing only: processing the order with this `orderId` panics on every delivery, a
    /// permanent poison (`ENGAGE_FAULT_POISON_ORDER_ID`). Used by the dead-letter tests.
    pub fault_poison_order_id: Option<String>,
    /// Deliveries of an event that may fail (an error or a panic) before it is parked in the
    /// dead-letter place (`ENGAGE_MAX_DELIVERIES`).
    pub max_deliveries: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            http_addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("./data"),
            log_sink: LogSinkKind::Embedded,
            cloudwatch_endpoint: None,
            cloudwatch_deadline_ms: 10_000,
            cloudwatch_tail_poll_ms: 500,
            log_retention_days: 30,
            log_retention_by_group: None,
            log_retention_reconcile: false,
            log_segment_bytes: 64 * 1024 * 1024,
            log_expiry_interval_secs: 60,
            log_min_free_bytes: 256 * 1024 * 1024,
            log_org: "org".to_owned(),
            jwks_url: None,
            jwt_issuer: None,
            jwt_audience: None,
            jwks_refresh_secs: 300,
            jwks_min_refetch_secs: 10,
            log_format: LogFormat::Text,
            log_level: "info".to_owned(),
            max_body_bytes: 5 * 1024 * 1024,
            max_event_bytes: 256 * 1024 - 26,
            rate_limit_per_second: None,
            rate_limit_burst: None,
            open_routes: OpenRoutes::Open,
            open_routes_rate_limit: 200,
            max_upload_bytes: 5 * 1024 * 1024,
            shutdown_grace_secs: 30,
            shutdown_drain_secs: 2,
            nats_url: None,
            nats_replicas: 1,
            nats_replicas_by_name: None,
            store: None,
            scylla_nodes: None,
            scylla_keyspace: "engage".to_owned(),
            scylla_replication: ScyllaReplication::Simple,
            scylla_replication_factor: 1,
            scylla_read_consistency: ScyllaConsistency::LocalQuorum,
            scylla_write_consistency: ScyllaConsistency::LocalQuorum,
            partitions: 64,
            partitions_given: false,
            node_id: None,
            partition_lease_secs: 10,
            role: Role::All,
            stream_retention_hours: 168,
            passivate_after_secs: 300,
            cached_customers_max: 50_000,
            store_cache_mib: 32,
            store_memtable_mib: 16,
            admin_key: None,
            internal_jwt_secret: None,
            fault_panic_order_id: None,
            fault_poison_order_id: None,
            max_deliveries: 5,
            sms_provider_url: None,
            chat_provider_url: None,
            push_provider_url: None,
            provider_token: None,
            job_sms_drain: "0 */3 * * * *".to_owned(),
            job_chat_drain: "30 */3 * * * *".to_owned(),
            job_push_drain: "0 */5 * * * *".to_owned(),
            job_pos_revoke: "15 */5 * * * *".to_owned(),
            job_chat_refund: "0 0 0 * * *".to_owned(),
            job_points_expiry: "0 5 0 * * *".to_owned(),
            job_journeys: "0 0 22 * * *".to_owned(),
            job_abandoned_cart: "0 */5 * * * *".to_owned(),
            job_roi_lost_customers: "0 0 0 * * *".to_owned(),
            job_roi_referral: "0 30 5 * * *".to_owned(),
            job_roi_journeys: "0 0 6 * * *".to_owned(),
            job_roi_abandoned_cart: "0 30 6 * * *".to_owned(),
            job_roi_welcome: "0 30 7 * * *".to_owned(),
            job_auto_campaign_sync: "0 47 12 * * *".to_owned(),
            job_health_reports: "0 0 12 * * Mon".to_owned(),
            job_bill_generation: "0 57 9 * * *".to_owned(),
            job_bill_report: "0 32 11 * * *".to_owned(),
            job_nps_conversion: "0 0 6 * * *".to_owned(),
            job_feedback_config_sync: "0 6 12 * * *".to_owned(),
            job_review_sync: "0 0 */3 * * *".to_owned(),
            job_legacy_feedback_drain: "0 */5 * * * *".to_owned(),
            store_a_url: None,
            store_a_token: None,
            store_b_url: None,
            store_b_token: None,
            link_service_url: None,
            feedback_service_url: None,
            public_url: None,
            link_secret: None,
            mail_service_url: None,
            keyword_webhook_secrets: None,
            pos_redemption_ttl_minutes: 30,
            connect_timeout_secs: 60,
        }
    }
}

/// Settings whose values are never printed.
const SECRET_KEYS: &[&str] = &[
    "admin_key",
    "internal_jwt_secret",
    "provider_token",
    "store_a_token",
    "store_b_token",
    "link_secret",
    "keyword_webhook_secrets",
];

impl Settings {
    /// Loads from defaults < `file` < the given `(NAME, value)` pairs, then validates: the CLI
    /// passes the process's `ENGAGE_*` variables, tests their own (no global state). An error names
    /// the setting as the user wrote it: the variable when the environment set it, else the file's
    /// key.
    pub fn load_with_env(file: Option<&Path>, env: &[(&str, &str)]) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Settings::default()));
        if let Some(path) = file {
            if !path.is_file() {
                return Err(ConfigError {
                    origin: Origin::ConfigFlag,
                    ..ConfigError::new(
                        "config",
                        format!(
                            "{}: no such file (give the path of a TOML settings file, e.g. --config engage.toml)",
                            path.display()
                        ),
                    )
                });
            }
            figment = figment.merge(Toml::file_exact(path));
        }
        let mut from_env = Vec::new();
        for (name, value) in env {
            if let Some(key) = name.strip_prefix(ENV_PREFIX) {
                let key = key.to_lowercase();
                if is_setting(&key) {
                    figment = figment.merge((key.as_str(), parse_env_value(value)));
                    from_env.push(key);
                }
            }
        }
        let origin_of = |mut error: ConfigError| {
            if let Some(path) = file {
                if !from_env.contains(&error.key) {
                    error.origin = Origin::File(path.to_owned());
                }
            }
            error
        };
        let mut settings: Settings = figment.extract().map_err(from_figment_error).map_err(origin_of)?;
        settings.validate().map_err(origin_of)?;
        // given when a provider other than the defaults supplied it
        let defaults = Figment::from(Serialized::defaults(Settings::default()));
        let source = |figment: &Figment| figment.find_metadata("partitions").map(|m| m.name.clone());
        settings.partitions_given = source(&figment) != source(&defaults);
        Ok(settings)
    }

    /// The effective settings as TOML, as `engage config` prints them: secrets as `"***"`, user
    /// info in URLs as `***`, unset settings listed in a closing comment.
    pub fn to_toml_redacted(&self) -> String {
        let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(self) else {
            return String::new();
        };
        let mut table = toml::Table::new();
        let mut unset = Vec::new();
        for (key, value) in fields {
            let value = match value {
                serde_json::Value::Null => {
                    unset.push(key);
                    continue;
                }
                _ if SECRET_KEYS.contains(&key.as_str()) => toml::Value::String("***".to_owned()),
                serde_json::Value::String(text) => toml::Value::String(redact_url(&text)),
                serde_json::Value::Bool(b) => toml::Value::Boolean(b),
                serde_json::Value::Number(n) => match n.as_i64() {
                    Some(i) => toml::Value::Integer(i),
                    None => toml::Value::Float(n.as_f64().unwrap_or_default()),
                },
                other => toml::Value::String(other.to_string()),
            };
            table.insert(key, value);
        }
        let mut text = toml::to_string(&table).unwrap_or_default();
        if !unset.is_empty() {
            text.push_str(&format!("# unset: {}\n", unset.join(", ")));
        }
        text
    }
}

impl Settings {
    /// Each scheduled job's name (as `engage jobs run` takes it) and cron.
    pub fn job_crons(&self) -> [(&'static str, &str); 21] {
        [
            ("sms_drain", &self.job_sms_drain),
            ("chat_drain", &self.job_chat_drain),
            ("push_drain", &self.job_push_drain),
            ("pos_revoke", &self.job_pos_revoke),
            ("chat_refund", &self.job_chat_refund),
            ("points_expiry", &self.job_points_expiry),
            ("journeys", &self.job_journeys),
            ("abandoned_cart", &self.job_abandoned_cart),
            ("roi_lost_customers", &self.job_roi_lost_customers),
            ("roi_referral", &self.job_roi_referral),
            ("roi_journeys", &self.job_roi_journeys),
            ("roi_abandoned_cart", &self.job_roi_abandoned_cart),
            ("roi_welcome", &self.job_roi_welcome),
            ("auto_campaign_sync", &self.job_auto_campaign_sync),
            ("health_reports", &self.job_health_reports),
            ("bill_generation", &self.job_bill_generation),
            ("bill_report", &self.job_bill_report),
            ("nps_conversion", &self.job_nps_conversion),
            ("feedback_config_sync", &self.job_feedback_config_sync),
            ("review_sync", &self.job_review_sync),
            ("legacy_feedback_drain", &self.job_legacy_feedback_drain),
        ]
    }

    /// The store backend in effect: `store`, else `nats` when `nats_url` is set, else `embedded`.
    pub fn store_kind(&self) -> StoreKind {
        self.store.unwrap_or(if self.nats_url.is_some() { StoreKind::Nats } else { StoreKind::Embedded })
    }

    /// The retention of each log group ([`LogRetention`]).
    pub fn log_retention(&self) -> Result<LogRetention, ConfigError> {
        LogRetention::parse(self.log_retention_days, self.log_retention_by_group.as_deref())
    }

    /// The replica count of each stream and bucket ([`NatsReplicas`]).
    pub fn nats_replicas(&self) -> Result<NatsReplicas, ConfigError> {
        NatsReplicas::parse(self.nats_replicas, self.nats_replicas_by_name.as_deref())
    }

    /// Where the admin key is kept when `admin_key` is unset: `<data_dir>/admin.key`.
    pub fn admin_key_file(&self) -> PathBuf {
        self.data_dir.join("admin.key")
    }

    /// The public base URL for links in messages, without a trailing `/`.
    pub fn public_base_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://{}", self.http_addr),
        }
    }

    /// This node's id: `node_id`, else `<hostname>-<pid>`.
    pub fn node_id(&self) -> String {
        self.node_id.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "node".to_owned());
            let host: String = host.trim().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
            format!("{host}-{}", std::process::id())
        })
    }
}

fn is_setting(key: &str) -> bool {
    let key = key.to_lowercase();
    !NOT_SETTINGS.iter().any(|name| match name.strip_suffix('*') {
        Some(prefix) => key.starts_with(prefix),
        None => key == *name,
    })
}

/// `http_addr` as written, or, for `HOST:PORT` with a host name (`localhost:8080`), the first
/// address the name resolves to (IPv4 first): what a user types is taken, from the environment or
/// the file alike.
fn resolve_addr<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<std::net::SocketAddr, D::Error> {
    use std::net::{SocketAddr, ToSocketAddrs};
    let text = String::deserialize(deserializer)?;
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let resolved = text.to_socket_addrs().ok().and_then(|addrs| {
        let addrs: Vec<SocketAddr> = addrs.collect();
        addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()).copied()
    });
    resolved.ok_or_else(|| {
        serde::de::Error::custom(format!(
            "{text:?} is not an address to listen on: HOST:PORT, e.g. 127.0.0.1:8080, 0.0.0.0:8080 or localhost:8080"
        ))
    })
}

/// Parses an environment value the way figment's `Env` provider does (numbers, booleans, strings).
fn parse_env_value(value: &str) -> figment::value::Value {
    value.parse().unwrap_or_else(|_| figment::value::Value::from(value.to_owned()))
}

#[cfg(test)]
mod tests;
