//! Subjects, envelopes and the Bus; partitioning and partition ownership.
//!
//! # Layout
//! - [`subject`]: `engage.orders.<partition>.<tenant>`, the stable partition hash, subject tokens.
//! - [`envelope`]: the [`Envelope`] every ingestion event travels in.
//! - [`bus`]: the [`Bus`] trait and its backends: [`bus::EmbeddedBus`] (a durable queue in the
//!   store: the enqueue is on disk before the HTTP ack) and [`bus::JetStreamBus`] (stream
//!   `ENGAGE_ORDERS`, durable pull consumer per partition).
//! - [`dead_letter`]: events parked after their last failed delivery, on either bus.
//! - [`lease`]: partition ownership leased through a JetStream KV bucket with heartbeats.

pub mod bus;
pub mod dead_letter;
pub mod envelope;
pub mod lease;
pub mod subject;

pub use bus::{Bus, BusError, Delivery, PartitionConsumer};
pub use dead_letter::DeadLetter;
pub use envelope::{Envelope, EventKind};
