//! Abandoned carts (spec "Journey behaviour" 10): an order with `status` 0 is a cart; one with a
//! total over 1 placed in an app (`os` `A`, `I`) or on the `website` is indexed (table
//! `open_carts`, in the brand's own partition, and the brand in `cart_brands`). Every 5 minutes
//! the `abandoned_cart` job hands each brand's open carts to its tenant actor, which sends the brand's abandoned-cart journey for each cart left for
//! `trigger_minutes` (default 30) since its last update, at most once per customer per IST day
//! (the occasion is the day), paid by the cart's outlet and delivered today.
//!
//! A cart leaves the index when it is sent, when its order was paid (the same `orderId` arrived
//! with `status` 1), when no abandoned-cart journey is on for it, when its customer was reached
//! today already, or when it is older than a day (too late to remind).

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::runs::{reach_one, Outcome};
use super::{applicable, journeys};
use crate::domain::time::ist_day;
use crate::keys;
use crate::query::QueryError;
use crate::tenant_core::Tenant;

/// Where a cart may be abandoned (the order's `os`).
pub const CART_SOURCES: [&str; 3] = ["A", "I", "website"];
/// Minutes a cart is left before the reminder, when the journey does not say.
pub const DEFAULT_TRIGGER_MINUTES: u32 = 30;
/// A cart older than this is no longer reminded.
pub const CART_STALE_HOURS: i64 = 24;

/// An open cart (table `open_carts`, partition `brand|<tenant>`, clustering `tenant|outlet/orderId`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OpenCart {
    /// The brand.
    pub tenant: String,
    /// The customer.
    pub phone: String,
    /// The outlet.
    pub business_id: String,
    /// The order id.
    pub order_id: String,
    /// The cart's total.
    pub amount: Decimal,
    /// When its latest copy arrived.
    pub updated_at: DateTime<Utc>,
}

impl OpenCart {
    /// Its index row's key.
    pub fn key(&self) -> keys::Key {
        keys::open_cart(&self.tenant, &self.business_id, &self.order_id)
    }
}

/// What a brand did with its open carts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CartsHandled {
    /// Reminders sent.
    pub sent: u32,
    /// Carts still inside their trigger time.
    pub waiting: u32,
    /// Carts dropped from the index without a reminder (paid, no journey, reached today, stale,
    /// skipped).
    pub dropped: u32,
}

/// Handles the brand's `carts` as at `now` (each re-read from the index, so a newer copy wins).
pub async fn abandoned(
    tenant: &mut Tenant,
    now: DateTime<Utc>,
    carts: Vec<OpenCart>,
) -> Result<CartsHandled, QueryError> {
    let all = journeys(tenant).await?;
    let day = ist_day(now);
    let mut handled = CartsHandled::default();
    let mut ops = Vec::new();
    for listed in carts {
        let Some(cart) = tenant.repo().get::<OpenCart>(&listed.key()).await? else { continue };
        let Some(mut customer) = tenant.customer(&cart.phone).await? else {
            ops.push(cart.key().delete());
            handled.dropped += 1;
            continue;
        };
        // an order that arrived cancelled or refunded as a whole did not pay for the cart
        let paid = crate::capabilities::orders::contribution(tenant, &customer, &cart.business_id, &cart.order_id)
            .await?
            .is_some_and(|c| !c.void);
        let journey = applicable(&all, "abandoned_cart", &cart.business_id, &tenant.id).cloned();
        let Some(journey) = journey.filter(|_| !paid && now - cart.updated_at < Duration::hours(CART_STALE_HOURS))
        else {
            ops.push(cart.key().delete());
            handled.dropped += 1;
            continue;
        };
        let trigger = journey.campaign_data.trigger_minutes.unwrap_or(DEFAULT_TRIGGER_MINUTES);
        if now - cart.updated_at < Duration::minutes(i64::from(trigger)) {
            handled.waiting += 1;
            continue;
        }
        let mut cart_ops = Vec::new();
        let occasion = format!("cart-{day}");
        let decision =
            reach_one(tenant, &journey, &mut customer, &cart.business_id, &occasion, now, &mut cart_ops).await?;
        let sent = decision.is_some_and(|d| d.outcome == Outcome::Sent);
        if sent {
            handled.sent += 1;
            cart_ops.push(tenant.put_customer(&customer));
        } else {
            handled.dropped += 1;
        }
        // after the wallet row that commits the send: a cart left behind by a crash finds its
        // decision made on the next run and is dropped
        cart_ops.push(cart.key().delete());
        tenant.batch(cart_ops).await?;
        if sent {
            tenant.forget_customer(&customer.phone);
        }
    }
    if !ops.is_empty() {
        tenant.batch(ops).await?;
    }
    Ok(handled)
}
