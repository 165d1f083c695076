//! Storage for engage.
//!
//! # Layout
//! - [`store`]: the Store API, tables over `(partition key, clustering key)` with atomic batches
//!   and range scans, and its embedded backend (fjall). [`store::conformance`] is the test suite
//!   every backend must pass.
//! - [`logs`]: the log sinks of the log ingestion service. [`logs::LogWriter`] coalesces concurrent
//!   requests into per-(group, stream) batches and hands them to a [`logs::LogBackend`]: the
//!   embedded store ([`logs::embedded`]) or CloudWatch Logs ([`logs::cloudwatch`]).
//! - [`replicas`]: the replica count of the JetStream streams and buckets.

pub mod logs;
pub mod replicas;
pub mod store;

pub use store::{
    set_idle_hook, Durable, EmbeddedStore, NatsKvStore, Row, ScyllaOptions, ScyllaStore, Store, StoreError,
    TableChanges, WriteOp,
};
