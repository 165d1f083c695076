//! Subjects, envelopes and the Bus (embedded durable queue, NATS JetStream), partitioning and
//! partition ownership.
//!
//! Nothing lives here yet: the log ingestion service needs no bus. The order-ingestion issue fills
//! this crate (see `../shared/ARCHITECTURE.md`).
