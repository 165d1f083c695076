//! The rollups the tenant actor keeps as an order reaction ([`KeepRollups`]), in the order's own
//! batch: one [`Figures`] row per (outlet, IST day) and one per (brand, IST day) (scope
//! [`BRAND`]), and the [`Contribution`] each order added (in the order's own row, field
//! [`ORDER_FIELD`]), so that a newer version of the order takes exactly that back before adding its
//! own. A replay (same or older
//! version, or a copy with the same amount and time) changes nothing.
//!
//! The rows of recent days are cached in the actor (at most [`CACHE_ROWS`]; the cache is emptied
//! when it is full and whenever a batch fails, so the store stays the truth).

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{Datelike, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::{StoreError, WriteOp};

use crate::domain::customer::{Applied, Customer};
use crate::domain::is_default;
use crate::tenant_core::Tenant;

use crate::keys;
use crate::reaction::{OrderEvent, OrderReaction};

pub use super::contribution::{Contribution, ItemLine};

/// The field of the order's row that keeps what its applied version added.
pub const ORDER_FIELD: &str = "stats";

/// The scope of a brand's own rows (every outlet together).
pub const BRAND: &str = "*";

/// Rollup rows a tenant actor keeps in memory (about 20 days of 50 outlets).
pub const CACHE_ROWS: usize = 1024;

/// Money in a rollup row: an integer of ten-thousandths (rows are rewritten with every order, and
/// an integer is written and read many times faster than a decimal's text). Amounts are kept to 4
/// decimal places.
pub mod money {
    use rust_decimal::prelude::ToPrimitive;
    use rust_decimal::Decimal;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Ten-thousandths of `value` (rounded to 4 places), saturating at the ends of `i64` (no
    /// real figure comes near: that is 922 trillion in money).
    pub fn units(value: Decimal) -> i64 {
        let saturated = if value.is_sign_negative() { i64::MIN } else { i64::MAX };
        value.round_dp(4).checked_mul(Decimal::from(10_000)).and_then(|u| u.to_i64()).unwrap_or(saturated)
    }

    /// The decimal of `units` ten-thousandths.
    pub fn decimal(units: i64) -> Decimal {
        Decimal::new(units, 4).normalize()
    }

    /// Serializes as ten-thousandths.
    pub fn serialize<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(units(*value))
    }

    /// Reads ten-thousandths.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Decimal, D::Error> {
        i64::deserialize(deserializer).map(decimal)
    }
}

/// What goes under a name (item, city, outlet, hour): a count and revenue. For items the count is
/// the quantity; elsewhere it is orders. The revenue is kept (and stored) in ten-thousandths: a
/// brand's row holds over a hundred of these and is rewritten with every order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(from = "(i64, i64)", into = "(i64, i64)")]
pub struct Tally {
    /// Orders (quantity, for items).
    pub n: i64,
    /// Revenue, in ten-thousandths ([`money::units`]).
    pub units: i64,
}

impl From<(i64, i64)> for Tally {
    fn from((n, units): (i64, i64)) -> Self {
        Self { n, units }
    }
}

impl From<Tally> for (i64, i64) {
    fn from(tally: Tally) -> Self {
        (tally.n, tally.units)
    }
}

impl Tally {
    fn add(&mut self, n: i64, units: i64, sign: i64) {
        self.n = self.n.saturating_add(n.saturating_mul(sign));
        self.units = self.units.saturating_add(units.saturating_mul(sign));
    }

    /// The revenue.
    pub fn revenue(&self) -> Decimal {
        money::decimal(self.units)
    }

    /// Adds `other`.
    pub fn merge(&mut self, other: &Tally) {
        self.add(other.n, other.units, 1);
    }
}

/// One fulfilment channel's figures (money and minutes in ten-thousandths).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fulfilment {
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue_units: i64,
    /// Sum of the preparation minutes of the orders that carried them.
    pub prep_units: i64,
    /// How many did.
    pub prep_orders: i64,
    /// Sum of the delivery minutes of the orders that carried them.
    pub delivery_units: i64,
    /// How many did.
    pub delivery_orders: i64,
}

impl Fulfilment {
    /// Adds `other`.
    pub fn merge(&mut self, other: &Fulfilment) {
        for (mine, theirs) in [
            (&mut self.orders, other.orders),
            (&mut self.revenue_units, other.revenue_units),
            (&mut self.prep_units, other.prep_units),
            (&mut self.prep_orders, other.prep_orders),
            (&mut self.delivery_units, other.delivery_units),
            (&mut self.delivery_orders, other.delivery_orders),
        ] {
            *mine = mine.saturating_add(theirs);
        }
    }

    /// The revenue.
    pub fn revenue(&self) -> Decimal {
        money::decimal(self.revenue_units)
    }

    /// The preparation minutes, summed.
    pub fn prep_minutes(&self) -> Decimal {
        money::decimal(self.prep_units)
    }

    /// The delivery minutes, summed.
    pub fn delivery_minutes(&self) -> Decimal {
        money::decimal(self.delivery_units)
    }
}

/// The figures of one scope (an outlet, or the brand) on one IST day.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Figures {
    /// Orders.
    pub orders: i64,
    /// Revenue (the orders' `amount`), in ten-thousandths.
    pub revenue_units: i64,
    /// Discounts (the orders' `discount`), in ten-thousandths.
    pub discount_units: i64,
    /// Customers whose first order this was.
    pub new_customers: i64,
    /// Orders of customers who had ordered before.
    pub returning_orders: i64,
    /// Loyalty points the orders earned.
    pub points_earned: i64,
    /// Loyalty points redeemed against the orders.
    pub points_redeemed: i64,
    /// By IST hour (24 entries, or none while empty).
    #[serde(default)]
    pub hours: Vec<Tally>,
    /// By item name (`n` is the quantity).
    #[serde(default)]
    pub items: BTreeMap<String, Tally>,
    /// By fulfilment channel.
    #[serde(default)]
    pub channels: BTreeMap<String, Fulfilment>,
    /// By city.
    #[serde(default)]
    pub cities: BTreeMap<String, Tally>,
    /// By pincode.
    #[serde(default)]
    pub pincodes: BTreeMap<String, Tally>,
    /// By outlet (the brand's rows only).
    #[serde(default)]
    pub outlets: BTreeMap<String, Tally>,
    /// Orders cancelled or refunded as a whole (they count in no other figure). Stored after the
    /// rest ([`encode`]), so rows written before refunds were counted still read.
    #[serde(skip)]
    pub refunded_orders: i64,
    /// Money given back (whole refunds and partial returns), in ten-thousandths; `revenue` is net
    /// of it.
    #[serde(skip)]
    pub refunded_units: i64,
}

/// Most distinct item names one rollup row keeps; past them, new names count under
/// [`OTHER`]. With names of at most 200 characters a row stays far below every backend's value
/// limit (NATS: 1 MiB) however many distinct items a day sells.
pub const MAX_ITEMS: usize = 1000;
/// Most distinct cities, and pincodes, one rollup row keeps (the rest count under [`OTHER`]).
pub const MAX_PLACES: usize = 1000;
/// The name under which what is past a row's bound counts.
pub const OTHER: &str = "(other)";

fn bump(map: &mut BTreeMap<String, Tally>, name: &str, n: i64, units: i64, sign: i64) {
    bump_within(map, name, n, units, sign, usize::MAX);
}

/// [`bump`], keeping at most `bound` names: a new name past it counts under [`OTHER`].
fn bump_within(map: &mut BTreeMap<String, Tally>, name: &str, n: i64, units: i64, sign: i64, bound: usize) {
    let name = if map.contains_key(name) || map.len() < bound.saturating_sub(1) { name } else { OTHER };
    let tally = match map.get_mut(name) {
        Some(tally) => tally,
        None => map.entry(name.to_owned()).or_default(),
    };
    tally.add(n, units, sign);
    if is_default(tally) {
        map.remove(name);
    }
}

/// `*slot += value * sign`, saturating (a figure never wraps, and a sum never panics).
fn plus(slot: &mut i64, value: i64, sign: i64) {
    *slot = slot.saturating_add(value.saturating_mul(sign));
}

impl Figures {
    /// The revenue.
    pub fn revenue(&self) -> Decimal {
        money::decimal(self.revenue_units)
    }

    /// The money given back.
    pub fn refunds(&self) -> Decimal {
        money::decimal(self.refunded_units)
    }

    /// The discounts.
    pub fn discounts(&self) -> Decimal {
        money::decimal(self.discount_units)
    }

    /// Adds (`sign` 1) or takes back (`sign` -1) one order's contribution; brand-wide rows (`whole`) also
    /// count it under its outlet.
    pub fn add(&mut self, c: &Contribution, sign: i64, whole: bool) {
        plus(&mut self.refunded_units, money::units(c.refunded), sign);
        if c.void {
            plus(&mut self.refunded_orders, 1, sign);
            return;
        }
        let amount = money::units(c.amount);
        plus(&mut self.orders, 1, sign);
        plus(&mut self.revenue_units, amount, sign);
        plus(&mut self.discount_units, money::units(c.discount), sign);
        if c.new_customer {
            plus(&mut self.new_customers, 1, sign);
        } else {
            plus(&mut self.returning_orders, 1, sign);
        }
        plus(&mut self.points_earned, c.points_earned, sign);
        plus(&mut self.points_redeemed, c.points_redeemed, sign);
        if self.hours.len() != 24 {
            self.hours.resize(24, Tally::default());
        }
        if let Some(hour) = self.hours.get_mut(usize::from(c.hour)) {
            hour.add(1, amount, sign);
        }
        for item in &c.items {
            bump_within(&mut self.items, &item.name, item.qty, money::units(item.revenue), sign, MAX_ITEMS);
        }
        let channel = self.channels.entry(c.channel.clone()).or_default();
        plus(&mut channel.orders, 1, sign);
        plus(&mut channel.revenue_units, amount, sign);
        if let Some(minutes) = c.prep_minutes {
            plus(&mut channel.prep_units, money::units(minutes), sign);
            plus(&mut channel.prep_orders, 1, sign);
        }
        if let Some(minutes) = c.delivery_minutes {
            plus(&mut channel.delivery_units, money::units(minutes), sign);
            plus(&mut channel.delivery_orders, 1, sign);
        }
        if is_default(channel) {
            self.channels.remove(&c.channel);
        }
        bump_within(&mut self.cities, &c.city, 1, amount, sign, MAX_PLACES);
        bump_within(&mut self.pincodes, &c.pincode, 1, amount, sign, MAX_PLACES);
        if whole {
            bump(&mut self.outlets, &c.outlet, 1, amount, sign);
        }
        if self.hours.iter().all(is_default) {
            self.hours.clear();
        }
    }

    /// Adds another scope's or day's figures.
    pub fn merge(&mut self, other: &Figures) {
        for (mine, theirs) in [
            (&mut self.orders, other.orders),
            (&mut self.revenue_units, other.revenue_units),
            (&mut self.discount_units, other.discount_units),
            (&mut self.new_customers, other.new_customers),
            (&mut self.returning_orders, other.returning_orders),
            (&mut self.points_earned, other.points_earned),
            (&mut self.points_redeemed, other.points_redeemed),
            (&mut self.refunded_orders, other.refunded_orders),
            (&mut self.refunded_units, other.refunded_units),
        ] {
            plus(mine, theirs, 1);
        }
        if !other.hours.is_empty() {
            self.hours.resize(24, Tally::default());
            for (mine, theirs) in self.hours.iter_mut().zip(&other.hours) {
                mine.merge(theirs);
            }
        }
        for (target, source) in [
            (&mut self.items, &other.items),
            (&mut self.cities, &other.cities),
            (&mut self.pincodes, &other.pincodes),
            (&mut self.outlets, &other.outlets),
        ] {
            for (name, tally) in source {
                target.entry(name.clone()).or_default().merge(tally);
            }
        }
        for (name, channel) in &other.channels {
            self.channels.entry(name.clone()).or_default().merge(channel);
        }
    }
}

/// The first byte of a rollup row: postcard, this layout.
const ROW_FORMAT: u8 = 2;
/// Rows written before refunds were counted: the figures alone.
const ROW_FORMAT_WITHOUT_REFUNDS: u8 = 1;

/// A rollup row's bytes: [`ROW_FORMAT`], the postcard encoding of `figures`, then of its refunds
/// (`refunded_orders`, `refunded_units`).
pub fn encode(figures: &Figures) -> Vec<u8> {
    let mut bytes = vec![ROW_FORMAT];
    bytes.extend(postcard::to_allocvec(figures).unwrap_or_default());
    bytes.extend(postcard::to_allocvec(&(figures.refunded_orders, figures.refunded_units)).unwrap_or_default());
    bytes
}

/// Why stored bytes are no rollup row.
#[derive(Debug, thiserror::Error)]
pub enum RowError {
    /// The row's format byte is not one this build reads.
    #[error("not a rollup row of a known format")]
    UnknownFormat,
    /// The row does not decode.
    #[error("{0}")]
    Decode(#[from] postcard::Error),
}

/// A rollup row from its bytes.
pub fn decode(bytes: &[u8]) -> Result<Figures, RowError> {
    match bytes.split_first() {
        Some((&ROW_FORMAT, rest)) => {
            let (mut figures, tail) = postcard::take_from_bytes::<Figures>(rest)?;
            (figures.refunded_orders, figures.refunded_units) = postcard::from_bytes(tail)?;
            Ok(figures)
        }
        Some((&ROW_FORMAT_WITHOUT_REFUNDS, rest)) => Ok(postcard::from_bytes(rest)?),
        _ => Err(RowError::UnknownFormat),
    }
}

/// The write of the rollup row of `scope` on `day`.
pub fn put_row(tenant: &str, scope: &str, day: &str, figures: &Figures) -> WriteOp {
    let key = keys::stats_day(tenant, scope, day);
    WriteOp::Put { table: key.table, partition: key.partition, clustering: key.clustering, value: encode(figures) }
}

/// The stored rollup row of `scope` on `day`, if any.
pub async fn stored_row(
    repo: &crate::repo::Repo,
    tenant: &str,
    scope: &str,
    day: &str,
) -> Result<Option<Figures>, StoreError> {
    let key = keys::stats_day(tenant, scope, day);
    let Some(bytes) = repo.row(&key).await? else { return Ok(None) };
    decode(&bytes).map(Some).map_err(|e| StoreError::Backend(format!("{}: {e}", key.describe())))
}

/// The reaction that keeps the rollups.
pub struct KeepRollups;

/// Empties the cache when `rows` more could overflow it: done before an order's rows are touched,
/// never between (a row changed and not yet written must stay cached).
fn make_room(tenant: &mut Tenant, rows: usize) {
    if let Some(cached) = tenant.cache.get_or_default::<Rollups>() {
        if cached.len() + rows > CACHE_ROWS {
            cached.clear();
        }
    }
}

/// Rollup rows of recent days by (scope, IST day), as the brand caches them ([`Tenant::cache`]):
/// written through, emptied when a batch fails.
pub type Rollups = std::collections::HashMap<(String, String), Figures>;

/// The cached rollup row of `scope` on `day`, loaded from the store first when it is not cached.
async fn row<'a>(tenant: &'a mut Tenant, scope: &str, day: &str) -> Result<&'a mut Figures, StoreError> {
    let key = (scope.to_owned(), day.to_owned());
    if !tenant.cache.get::<Rollups>().is_some_and(|cached| cached.contains_key(&key)) {
        let stored = stored_row(tenant.repo(), &tenant.id, scope, day).await?.unwrap_or_default();
        tenant.cache.get_or_default::<Rollups>().map(|cached| cached.insert(key.clone(), stored));
    }
    let cached = tenant.cache.get_or_default::<Rollups>();
    cached.map(|cached| cached.entry(key).or_default()).ok_or_else(|| StoreError::Backend("the rollup cache".into()))
}

/// Adds (`sign` 1) or takes back (-1) `c` in the outlet's and the brand's rows of its day; the
/// rows changed are named in `dirty`.
async fn apply(
    tenant: &mut Tenant,
    c: &Contribution,
    sign: i64,
    dirty: &mut Vec<(String, String)>,
) -> Result<(), StoreError> {
    for scope in [c.outlet.as_str(), BRAND] {
        row(tenant, scope, &c.day).await?.add(c, sign, scope == BRAND);
        let key = (scope.to_owned(), c.day.clone());
        if !dirty.contains(&key) {
            dirty.push(key);
        }
    }
    Ok(())
}

#[async_trait]
impl OrderReaction for KeepRollups {
    fn name(&self) -> &'static str {
        "stats_rollups"
    }

    async fn react(
        &self,
        tenant: &mut Tenant,
        order: &OrderEvent<'_>,
        customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        if !order.changed() {
            return Ok(());
        }
        let facts = order.facts;
        let mut new = Contribution::of(
            &order.envelope.payload,
            &facts.business_id,
            facts.order_time.as_deref(),
            order.received,
            facts.amount,
        )
        .refunded(facts);
        // what the version applied before added is kept in the order's row
        let old: Option<Contribution> = if order.applied == Applied::Updated {
            let row: Option<Value> =
                tenant.repo().get(&keys::order(&tenant.id, &facts.business_id, &facts.order_id)).await?;
            row.and_then(|mut row| serde_json::from_value(row.get_mut(ORDER_FIELD)?.take()).ok())
        } else {
            None
        };
        new.new_customer = match &old {
            Some(old) => old.new_customer,
            None => customer.total_orders() == 1,
        };
        new.points_earned = customer.orders.get(&facts.key()).map_or(0, |c| c.points);
        // at most four rows change (the old day's and the new day's, outlet and brand)
        make_room(tenant, 4);
        let mut dirty = Vec::new();
        if let Some(old) = &old {
            apply(tenant, old, -1, &mut dirty).await?;
        }
        apply(tenant, &new, 1, &mut dirty).await?;
        for (scope, day) in dirty {
            if let Some(figures) =
                tenant.cache.get::<Rollups>().and_then(|cached| cached.get(&(scope.clone(), day.clone())))
            {
                ops.push(put_row(&tenant.id, &scope, &day, figures));
            }
        }
        if let (Ok(value), Ok(mut fields)) = (serde_json::to_value(&new), order.order_row.lock()) {
            fields.insert(ORDER_FIELD.to_owned(), value);
        }
        Ok(())
    }
}

/// The IST weekday of a `YYYY-MM-DD` day: 0 Monday … 6 Sunday.
pub fn weekday(day: &str) -> Option<u32> {
    chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").ok().map(|d| d.weekday().num_days_from_monday())
}

/// Counts `points` redeemed at `at` (IST day) against `outlet` (and the brand), in `ops`: a
/// redemption counts once it is final (at once, or when a POS redemption's order arrives).
pub async fn count_redeemed(
    tenant: &mut Tenant,
    outlet: Option<&str>,
    at: chrono::DateTime<Utc>,
    points: i64,
    ops: &mut Vec<WriteOp>,
) -> Result<(), StoreError> {
    let day = crate::domain::time::ist_day(at);
    make_room(tenant, 2);
    for scope in outlet.into_iter().chain([BRAND]) {
        let id = tenant.id.clone();
        let figures = row(tenant, scope, &day).await?;
        plus(&mut figures.points_redeemed, points, 1);
        ops.push(put_row(&id, scope, &day, figures));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
