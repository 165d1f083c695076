//! What types alone cannot say about [`Settings`]: checked once, at load, each failure naming
//! its setting.

use crate::{check_nats_server, nats_servers, ConfigError, Role, Settings, StoreKind};

impl Settings {
    /// Checks what types alone cannot.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.data_dir.as_os_str().is_empty() {
            return Err(ConfigError::new("data_dir", "must not be empty (it would write into the current directory)"));
        }
        if let Err(error) = tracing_subscriber::EnvFilter::try_new(&self.log_level) {
            return Err(ConfigError::new(
                "log_level",
                format!(
                    "{:?} is not a log filter ({error}); use error, warn, info, debug, trace or target=level lists",
                    self.log_level
                ),
            ));
        }
        if self.connect_timeout_secs == 0 {
            return Err(ConfigError::new("connect_timeout_secs", "must be at least 1"));
        }
        if self.log_org.is_empty() || !self.log_org.chars().all(|c| c.is_ascii_alphanumeric() || "_-.#".contains(c)) {
            return Err(ConfigError::new(
                "log_org",
                "must be a non-empty log group segment of letters, digits, '_', '-', '.', '#'",
            ));
        }
        for (key, value) in [("jwks_url", &self.jwks_url), ("cloudwatch_endpoint", &self.cloudwatch_endpoint)] {
            if let Some(url) = value {
                if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
                    return Err(ConfigError::new(key, format!("must be an http(s) URL, got {url:?}")));
                }
            }
        }
        if self.rate_limit_burst.is_some() && self.rate_limit_per_second.is_none() {
            return Err(ConfigError::new("rate_limit_burst", "needs ENGAGE_RATE_LIMIT_PER_SECOND as well"));
        }
        if self.max_deliveries == 0 || self.max_deliveries > 1000 {
            return Err(ConfigError::new("max_deliveries", "must be between 1 and 1000"));
        }
        if self.max_upload_bytes < 1024 {
            return Err(ConfigError::new("max_upload_bytes", "must be at least 1024"));
        }
        if self.max_body_bytes < 1024 {
            return Err(ConfigError::new("max_body_bytes", "must be at least 1024"));
        }
        if self.max_event_bytes < 256 || self.max_event_bytes > 1_048_576 - 26 {
            return Err(ConfigError::new("max_event_bytes", "must be between 256 and 1048550"));
        }
        if !crate::PARTITION_COUNTS.contains(&self.partitions) {
            let (least, most) = (crate::PARTITION_COUNTS.start(), crate::PARTITION_COUNTS.end());
            return Err(ConfigError::new("partitions", format!("must be between {least} and {most}")));
        }
        if self.cached_customers_max == 0 {
            return Err(ConfigError::new("cached_customers_max", "must be at least 1"));
        }
        if self.store_cache_mib == 0 || self.store_cache_mib > 1 << 20 {
            return Err(ConfigError::new("store_cache_mib", "must be between 1 and 1048576"));
        }
        if self.store_memtable_mib == 0 || self.store_memtable_mib > 1024 {
            return Err(ConfigError::new("store_memtable_mib", "must be between 1 and 1024"));
        }
        if self.partition_lease_secs < 2 {
            return Err(ConfigError::new("partition_lease_secs", "must be at least 2"));
        }
        if let Some(url) = &self.nats_url {
            let servers = nats_servers(url);
            if servers.is_empty() {
                return Err(ConfigError::new("nats_url", "names no server; e.g. nats://127.0.0.1:4222"));
            }
            for server in &servers {
                check_nats_server(server).map_err(|e| ConfigError::new("nats_url", e))?;
            }
        }
        self.nats_replicas()?;
        if !(1..=15).contains(&self.scylla_replication_factor) {
            return Err(ConfigError::new("scylla_replication_factor", "must be between 1 and 15"));
        }
        match self.store_kind() {
            StoreKind::Nats if self.nats_url.is_none() => {
                return Err(ConfigError::new("store", "nats needs ENGAGE_NATS_URL"));
            }
            StoreKind::Scylla if self.scylla_nodes.is_none() => {
                return Err(ConfigError::new("store", "scylla needs ENGAGE_SCYLLA_NODES"));
            }
            _ => {}
        }
        if self.role != Role::All && self.nats_url.is_none() {
            return Err(ConfigError::new("role", "ingress and node roles need ENGAGE_NATS_URL"));
        }
        if self.node_id.as_deref().is_some_and(|id| id.is_empty() || id.contains(['.', '*', '>', ' '])) {
            return Err(ConfigError::new("node_id", "must be non-empty without '.', '*', '>' or spaces"));
        }
        for (job, cron) in self.job_crons() {
            if let Err(error) = cron.parse::<cron::Schedule>() {
                return Err(ConfigError::new(
                    &format!("job_{job}"),
                    format!("{cron:?} is not a cron expression (sec min hour day month weekday): {error}"),
                ));
            }
        }
        for (key, url) in [
            ("sms_provider_url", &self.sms_provider_url),
            ("chat_provider_url", &self.chat_provider_url),
            ("push_provider_url", &self.push_provider_url),
            ("public_url", &self.public_url),
            ("mail_service_url", &self.mail_service_url),
            ("link_service_url", &self.link_service_url),
            ("feedback_service_url", &self.feedback_service_url),
            ("store_a_url", &self.store_a_url),
            ("store_b_url", &self.store_b_url),
        ] {
            if url.as_ref().is_some_and(|u| !(u.starts_with("http://") || u.starts_with("https://"))) {
                return Err(ConfigError::new(key, "must be an http(s) URL"));
            }
        }
        if self.cloudwatch_deadline_ms == 0 {
            return Err(ConfigError::new("cloudwatch_deadline_ms", "must be above 0"));
        }
        self.log_retention()?;
        if !(64 * 1024..=1 << 30).contains(&self.log_segment_bytes) {
            return Err(ConfigError::new("log_segment_bytes", "must be from 65536 (64 KiB) to 1073741824 (1 GiB)"));
        }
        if self.log_expiry_interval_secs == 0 {
            return Err(ConfigError::new("log_expiry_interval_secs", "must be above 0"));
        }
        if self.cloudwatch_tail_poll_ms < 100 {
            return Err(ConfigError::new("cloudwatch_tail_poll_ms", "must be 100 or more"));
        }
        Ok(())
    }
}
