//! Domain logic and the ractor actors that own it.
//!
//! # Layout
//! Imports run one way: [`tenant`] → [`capabilities`] → the shared pieces ([`tenant_core`], [`query`],
//! [`reaction`], [`keys`], [`repo`], [`domain`]).
//! - [`domain`]: pure functions over plain data: the customer aggregate (LTV, LTO, AOV, segment),
//!   order facts, loyalty arithmetic, fraud velocity, wallet prices, IST time.
//! - [`repo`]: the tables over the Store and typed reads ([`repo::Repo::get`]); [`keys`]: one key
//!   builder per table.
//! - [`tenant_core`]: a tenant actor's state as capabilities see it; [`query`]: errors and replies
//!   (a [`query::Reply`] keeps the typed value; JSON only on the NATS path; a
//!   [`query::Question`] names its reply type);
//!   [`reaction`]: the order-reaction seam; [`read_ahead`]: rows a query reads, read before it
//!   reaches its actor, and the write stamps that say whether they are still current.
//! - [`capabilities`]: orders, customers, loyalty, redemption, rewards, referral, OTP, fraud,
//!   wallet (with [`capabilities::wallet::queue_send`], the one path of paid messages), each with
//!   its typed queries and replies.
//! - [`tenant`]: `TenantActor`, one per brand: lifecycle and dispatch only.
//! - [`supervisor`]: `PartitionSupervisor`: spawn on demand, restart with backoff, passivate.
//! - [`engine`]: the node's partitions: pull, route, ack after store.
//! - [`jobs`]: the scheduled jobs: names, schedule and dispatch in `jobs/mod.rs`, one file per area
//!   (drains with the provider adapter, journeys, bills, feedback, reviews, loyalty, the scheduler).
//! - [`rpc`]: NATS request-reply to the owning node; [`rpc::TenantGateway`] picks local or remote.
//!
//! # Reacting to orders
//! A capability that reacts to applied orders implements [`reaction::OrderReaction`] in its own
//! file and adds one line to [`capabilities::order_reactions`]. Its writes join the order's
//! atomic batch (the customer row is written last), and a replayed order must add nothing:
//!
//! ```
//! use async_trait::async_trait;
//! use engage_actors::Tenant;
//! use engage_actors::domain::customer::Customer;
//! use engage_actors::reaction::{OrderEvent, OrderReaction};
//! use engage_storage::{StoreError, WriteOp};
//!
//! /// Remembers each outlet's last order.
//! pub struct LastOrder;
//!
//! #[async_trait]
//! impl OrderReaction for LastOrder {
//!     fn name(&self) -> &'static str {
//!         "last_order"
//!     }
//!
//!     async fn react(
//!         &self,
//!         tenant: &mut Tenant,
//!         order: &OrderEvent<'_>,
//!         _customer: &mut Customer,
//!         ops: &mut Vec<WriteOp>,
//!     ) -> Result<(), StoreError> {
//!         if order.changed() {
//!             ops.push(WriteOp::Put {
//!                 table: "last_orders",
//!                 partition: tenant.id.clone(),
//!                 clustering: order.facts.business_id.as_bytes().to_vec(),
//!                 value: order.facts.order_id.as_bytes().to_vec(),
//!             });
//!         }
//!         Ok(())
//!     }
//! }
//! ```
//!
//! and in `capabilities/mod.rs`: `Arc::new(last_order::LastOrder),` in `order_reactions()`.

pub mod ask;
pub mod capabilities;
pub mod customer_cache;
pub mod directory;
pub mod domain;
pub mod engine;
pub mod jobs;
#[cfg(not(feature = "inspect"))]
pub(crate) mod keys;
#[cfg(feature = "inspect")]
#[doc(hidden)]
pub mod keys;
pub mod query;
pub mod reaction;
pub mod read_ahead;
#[cfg(not(feature = "inspect"))]
pub(crate) mod repo;
#[cfg(feature = "inspect")]
#[doc(hidden)]
pub mod repo;
pub mod reports;
pub mod reviews;
pub mod rpc;
pub mod signed_links;
pub mod supervisor;
#[cfg(not(feature = "inspect"))]
pub(crate) mod tables;
#[cfg(feature = "inspect")]
#[doc(hidden)]
pub mod tables;
pub mod tenant;
#[cfg(not(feature = "inspect"))]
pub(crate) mod tenant_core;
#[cfg(feature = "inspect")]
#[doc(hidden)]
pub mod tenant_core;

/// The store's rows as the actors read and write them, for tests that look at what was stored and
/// benchmarks that seed it (feature `inspect`; the service is built without it).
#[cfg(feature = "inspect")]
pub mod inspect {
    pub use crate::keys;
    pub use crate::repo::{self, Repo};
    pub use crate::tables;
}

pub use engine::{Engine, EngineConfig};
pub use rpc::TenantGateway;
pub use tables::DAY_BUCKET_RETENTION_DAYS;
pub use tenant::{QueryError, TenantQuery};
pub use tenant_core::{Services, Tenant};
