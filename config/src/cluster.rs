//! Settings of the cluster engines: the NATS server list and the replica count of each JetStream
//! stream and bucket, and ScyllaDB's replication and consistency.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::*;

/// The streams and buckets engage creates, by the name `nats stream ls` shows (a bucket `B` is the
/// stream `KV_B`).
pub const NATS_RESOURCES: &[&str] =
    &["ENGAGE_ORDERS", "ENGAGE_CHAT", "ENGAGE_DEAD_LETTERS", "KV_engage_store", "KV_engage_leases"];

/// The server URLs of `ENGAGE_NATS_URL`: a comma-separated list, blanks dropped.
pub fn nats_servers(url: &str) -> Vec<String> {
    url.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// Checks one server URL: `nats://host:port` (also `tls://`, `ws://`, or bare `host:port`).
pub(crate) fn check_nats_server(server: &str) -> Result<(), String> {
    let rest = ["nats://", "tls://", "ws://", "wss://"].iter().find_map(|s| server.strip_prefix(s)).unwrap_or(server);
    let host_port = rest.rsplit('@').next().unwrap_or(rest).trim_end_matches('/');
    let port_ok = match host_port.rsplit_once(':') {
        Some((host, port)) => !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0),
        None => !host_port.is_empty() && rest.len() < server.len(),
    };
    if port_ok && !host_port.contains(['/', ' ', ',']) {
        Ok(())
    } else {
        Err(format!("{:?} is not a NATS server URL like nats://127.0.0.1:4222", redact_url(server)))
    }
}

/// Replica counts of the streams and buckets: `ENGAGE_NATS_REPLICAS` for all, overridden per name
/// by `ENGAGE_NATS_REPLICAS_BY_NAME` (`KV_engage_leases=1,ENGAGE_CHAT=1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NatsReplicas {
    default: usize,
    by_name: BTreeMap<String, usize>,
}

impl NatsReplicas {
    /// Every stream and bucket with `replicas`.
    pub fn all(replicas: usize) -> Self {
        Self { default: replicas, by_name: BTreeMap::new() }
    }

    /// Parses the two settings.
    pub fn parse(default: u8, by_name: Option<&str>) -> Result<Self, ConfigError> {
        let check = |key: &str, n: usize| {
            if (1..=5).contains(&n) {
                Ok(n)
            } else {
                Err(ConfigError::new(key, format!("a replica count is 1 to 5 (JetStream's limit), got {n}")))
            }
        };
        let default = check("nats_replicas", usize::from(default))?;
        let mut names = BTreeMap::new();
        for item in by_name.unwrap_or_default().split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let key = "nats_replicas_by_name";
            let Some((name, count)) = item.split_once('=') else {
                return Err(ConfigError::new(key, format!("{item:?} is not NAME=COUNT (e.g. KV_engage_leases=1)")));
            };
            let name = name.trim();
            if !NATS_RESOURCES.contains(&name) {
                return Err(ConfigError::new(
                    key,
                    format!("{name:?} is not a stream or bucket of engage; one of {}", NATS_RESOURCES.join(", ")),
                ));
            }
            let count = count
                .trim()
                .parse::<usize>()
                .map_err(|_| ConfigError::new(key, format!("{item:?}: the count after '=' is a number from 1 to 5")))?;
            names.insert(name.to_owned(), check(key, count)?);
        }
        Ok(Self { default, by_name: names })
    }

    /// The replica count of stream `name` (a bucket by its stream name, `KV_<bucket>`).
    pub fn of(&self, name: &str) -> usize {
        self.by_name.get(name).copied().unwrap_or(self.default)
    }
}

impl Default for NatsReplicas {
    fn default() -> Self {
        Self::all(1)
    }
}

/// How a ScyllaDB keyspace engage creates is replicated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScyllaReplication {
    /// `SimpleStrategy`: one data centre (the compose single node, development).
    Simple,
    /// `NetworkTopologyStrategy` with the factor in every data centre (production).
    NetworkTopology,
}

/// A ScyllaDB consistency level engage reads or writes at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScyllaConsistency {
    /// One replica.
    One,
    /// One replica in the local data centre.
    LocalOne,
    /// A majority of the replicas in the local data centre (production default).
    LocalQuorum,
    /// A majority of all replicas.
    Quorum,
    /// Every replica.
    All,
}
