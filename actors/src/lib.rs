//! Domain logic and the ractor actors that own it.
//!
//! # Layout
//! - [`domain`]: pure functions over plain data: the customer aggregate (LTV, LTO, AOV, segment),
//!   order facts, IST time.
//! - [`repo`]: typed tables over the Store (`customers`, `orders`, `crm_queue`, …) and the queue
//!   status values.
//! - [`tenant`]: `TenantActor`, one per brand; `TenantMsg`, `TenantQuery`.
//! - [`supervisor`]: `PartitionSupervisor`: spawn on demand, restart with backoff, passivate.
//! - [`engine`]: the node's partitions: pull, route, ack after store.
//! - [`jobs`]: the scheduler and the drain, revoke and refund jobs; provider adapters.
//! - [`rpc`]: NATS request-reply to the owning node; [`rpc::TenantGateway`] picks local or remote.

pub mod domain;
pub mod engine;
pub mod jobs;
pub mod repo;
pub mod rpc;
pub mod supervisor;
pub mod tenant;

pub use engine::{Engine, EngineConfig};
pub use rpc::TenantGateway;
pub use tenant::{QueryError, QueryReply, TenantQuery};
