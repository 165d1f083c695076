//! The kinds a setting chooses between (sinks, log formats, stores, roles, open routes) and `Secret`, a value never printed.

use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::*;

/// Where accepted log events are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogSinkKind {
    /// The embedded store in `data_dir` (default; no AWS needed).
    Embedded,
    /// CloudWatch Logs through `aws-sdk-cloudwatchlogs`.
    Cloudwatch,
}

/// How the process writes its own `tracing` logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines (default).
    Text,
    /// One JSON object per line.
    Json,
}

/// Which store backend holds the platform's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    /// fjall in `data_dir` (one node).
    Embedded,
    /// NATS JetStream KV (a cluster needs only NATS).
    Nats,
    /// ScyllaDB (`scylla_nodes`).
    Scylla,
}

/// What a process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// HTTP ingress and actor node in one process.
    All,
    /// HTTP only: publishes to the bus, asks owners by NATS request-reply.
    Ingress,
    /// Actor node only: leases partitions, consumes, processes.
    Node,
}

/// Whether the spec's open routes (no credential: `/injestion/platform`, `/pos_e/v1/*`,
/// `/crm_api/get/customer/details`, …) take requests without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpenRoutes {
    /// As the spec has them (each brand may still close them for itself).
    Open,
    /// Every open route requires an integration token of the brand it acts on.
    Closed,
}

/// A secret setting: never printed (`Debug` shows `***`).
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl Secret {
    /// The secret value.
    pub fn expose(&self) -> &str {
        &self.0
    }
}
