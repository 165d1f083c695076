//! What is wrong with the settings: `ConfigError`, which names the setting, where it came from and an example of a good value.

use std::path::PathBuf;

#[allow(unused_imports)]
use super::*;

/// Where a setting's value came from: how an error names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// An `ENGAGE_*` environment variable (or a default).
    Env,
    /// A key of the TOML file at this path.
    File(PathBuf),
    /// The `--config` flag itself.
    ConfigFlag,
}

/// A setting that is unknown or has an invalid value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{}", self.render())]
pub struct ConfigError {
    /// The key as written in `engage.toml`.
    pub key: String,
    /// The environment variable of the same setting.
    pub env: String,
    /// What is wrong with it.
    pub message: String,
    /// Where the value came from.
    pub origin: Origin,
}

impl ConfigError {
    pub(super) fn new(key: &str, message: impl Into<String>) -> Self {
        Self {
            key: key.to_owned(),
            env: format!("{ENV_PREFIX}{}", key.to_uppercase()),
            message: message.into(),
            origin: Origin::Env,
        }
    }

    /// The setting as the user wrote it, the problem, and a valid example.
    pub(super) fn render(&self) -> String {
        let example = example(&self.key);
        match &self.origin {
            Origin::Env => {
                let mut text = format!("invalid setting {}: {}", self.env, self.message);
                if let Some(example) = example {
                    text.push_str(&format!(" (example: {}={example})", self.env));
                }
                text
            }
            Origin::File(path) => {
                let mut text = format!("invalid setting `{}` in {}: {}", self.key, path.display(), self.message);
                if let Some(example) = example {
                    let value =
                        if example.parse::<f64>().is_ok() { example.to_owned() } else { format!("{example:?}") };
                    text.push_str(&format!(" (example: {} = {value})", self.key));
                }
                text
            }
            Origin::ConfigFlag => format!("--config {}", self.message),
        }
    }
}

/// A valid value of `key`, for error messages.
pub(super) fn example(key: &str) -> Option<&'static str> {
    Some(match key {
        "http_addr" => "127.0.0.1:8080",
        "data_dir" => "/var/lib/engage",
        "log_sink" => "embedded",
        "log_format" => "json",
        "log_level" => "info",
        "log_org" => "acme",
        "store" => "nats",
        "role" => "node",
        "nats_url" => "nats://127.0.0.1:4222",
        "scylla_nodes" => "10.0.0.5:9042,10.0.0.6:9042",
        "node_id" => "node-1",
        "partitions" => "64",
        "partition_lease_secs" => "10",
        "shutdown_drain_secs" => "2",
        "connect_timeout_secs" => "60",
        "max_body_bytes" => "5242880",
        "max_event_bytes" => "262118",
        "rate_limit_per_second" | "rate_limit_burst" => "100",
        "open_routes" => "closed",
        "max_deliveries" => "5",
        "open_routes_rate_limit" => "200",
        "max_upload_bytes" => "5242880",
        "cloudwatch_endpoint" => "http://127.0.0.1:5000",
        "jwks_url" => "https://auth.example.com/.well-known/jwks.json",
        "cloudwatch_deadline_ms" => "10000",
        "cloudwatch_tail_poll_ms" => "500",
        "log_retention_days" => "30",
        "log_retention_by_group" => "/logs/org/edge/api=7,/logs/org/flash/*=90",
        "log_segment_bytes" => "67108864",
        "log_min_free_bytes" => "268435456",
        key if key.starts_with("job_") => "0 */3 * * * *",
        key if key.ends_with("_url") => "https://example.com/path",
        key if key.ends_with("_secs") || key.ends_with("_hours") || key.ends_with("_minutes") => "30",
        _ => return None,
    })
}

pub(super) fn from_figment_error(error: figment::Error) -> ConfigError {
    use figment::error::Kind;
    let first = error.into_iter().next();
    let Some(error) = first else {
        return ConfigError::new("settings", "could not be read");
    };
    let key = error.path.join(".");
    match &error.kind {
        Kind::UnknownField(field, expected) => {
            // figment may or may not have put the field on the path already.
            let key =
                if key.is_empty() || key.ends_with(field.as_str()) { field.clone() } else { format!("{key}.{field}") };
            let known: &[&str] = expected;
            let closest = known
                .iter()
                .map(|name| (strsim::jaro_winkler(name, &field.to_lowercase()), *name))
                .filter(|(score, _)| *score > 0.85)
                .max_by(|a, b| a.0.total_cmp(&b.0));
            match closest {
                Some((_, name)) => ConfigError::new(
                    &key,
                    format!(
                        "is not a known setting; did you mean {ENV_PREFIX}{} (`{name}` in a file)?",
                        name.to_uppercase()
                    ),
                ),
                None => ConfigError::new(&key, "is not a known setting (`engage config` lists every setting)"),
            }
        }
        _ if key.is_empty() => ConfigError::new("config", error.to_string()),
        kind => ConfigError::new(&key, kind.to_string()),
    }
}
