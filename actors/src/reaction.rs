//! The order-reaction seam. When the tenant actor applies an order it runs the list it was
//! started with ([`TenantArgs::reactions`](crate::tenant::TenantArgs::reactions)) in order; each
//! [`OrderReaction`] gets the order's facts and the customer and adds write operations to the
//! one atomic batch of that order (written with the customer row last). The default list is
//! [`crate::capabilities::order_reactions`].
//!
//! A reaction must be idempotent by order id and version: [`OrderEvent::applied`] says whether the
//! order is new, an update, or a replay of a version already applied (`Unchanged`, `Stale`), and a
//! replay must add nothing that was not already written.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use engage_storage::{StoreError, WriteOp};
use engage_streams::Envelope;

use crate::domain::customer::{Applied, Customer};
use crate::domain::order::OrderFacts;
use crate::keys::Key;
use crate::tenant_core::Tenant;

/// The reactions a tenant actor runs on every applied order, in order; the engine hands them to
/// its actors ([`crate::capabilities::order_reactions`] unless a test chooses others).
pub type Reactions = std::sync::Arc<Vec<std::sync::Arc<dyn OrderReaction>>>;

/// An order the tenant actor is applying.
pub struct OrderEvent<'a> {
    /// The order's facts (outlet, order id, phone, amount, …).
    pub facts: &'a OrderFacts,
    /// The envelope it came in.
    pub envelope: &'a Envelope,
    /// When the ingress accepted it.
    pub received: DateTime<Utc>,
    /// What applying it to the customer did.
    pub applied: Applied,
    /// What the customer counted for this order before (an update's previous version), to see
    /// what a refund takes back.
    pub before: Option<crate::domain::customer::Contribution>,
    /// The status its queue record is written with (a reaction that completes the record's
    /// processing, as the bill generation does, raises it).
    pub queue_status: std::sync::atomic::AtomicU8,
    /// Fields reactions add to the order's own row (written after them, in the same batch).
    pub order_row: std::sync::Mutex<serde_json::Map<String, serde_json::Value>>,
}

impl OrderEvent<'_> {
    /// A new order or a newer version of one (not a replay).
    pub fn changed(&self) -> bool {
        matches!(self.applied, Applied::New | Applied::Updated)
    }

    /// This version cancels or refunds, as a whole, an order that counted before (or arrives
    /// cancelled): what it caused is taken back.
    pub fn voids(&self) -> bool {
        self.changed() && self.facts.void && self.before.as_ref().is_none_or(|before| !before.void)
    }
}

/// Something that reacts to applied orders inside the order's batch.
#[async_trait]
pub trait OrderReaction: Send + Sync {
    /// A short name, for logs and metrics.
    fn name(&self) -> &'static str;

    /// The rows this reaction will read for the order `facts` of `tenant`. The order path reads
    /// every reaction's rows (and the customer's) together before the reactions run, so a
    /// networked store answers them in one round trip instead of one each (issue 13); the
    /// reaction then reads them through [`Tenant::get`] / [`Tenant::row`] as usual.
    fn reads(&self, _tenant: &str, _facts: &OrderFacts) -> Vec<Key> {
        Vec::new()
    }

    /// Adds this reaction's writes for `order` to `ops`; may change `customer` (written last).
    async fn react(
        &self,
        tenant: &mut Tenant,
        order: &OrderEvent<'_>,
        customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError>;
}
