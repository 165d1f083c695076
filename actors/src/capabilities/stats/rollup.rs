//! The rollups the tenant actor keeps as an order reaction ([`KeepRollups`]), in the order's own
//! batch: one [`Figures`] row per (outlet, IST day) and one per (brand, IST day) (scope
//! [`BRAND`]), and the [`Contribution`] each order added (table `stats_orders`), so that a newer
//! version of the order takes exactly that back before adding its own. A replay (same or older
//! version, or a copy with the same amount and time) changes nothing.
//!
//! The rows of recent days are cached in the actor (at most [`CACHE_ROWS`]; the cache is emptied
//! when it is full and whenever a batch fails, so the store stays the truth).

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{Datelike, Timelike, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::{StoreError, WriteOp};

use crate::brand::Brand;
use crate::domain::customer::{Applied, Customer};
use crate::domain::order::decimal;
use crate::domain::time::{ist, parse_ist};
use crate::keys;
use crate::reaction::{OrderEvent, OrderReaction};

/// The scope of a brand's own rows (every outlet together).
pub const BRAND: &str = "*";

/// Rollup rows a tenant actor keeps in memory (about 20 days of 50 outlets).
pub const CACHE_ROWS: usize = 1024;

/// What goes under a name (item, city, outlet, hour): a count and revenue. For items the count is
/// the quantity; elsewhere it is orders.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Orders (quantity, for items).
    pub n: i64,
    /// Revenue.
    pub revenue: Decimal,
}

impl Tally {
    fn add(&mut self, n: i64, revenue: Decimal, sign: i64) {
        self.n += sign * n;
        self.revenue += Decimal::from(sign) * revenue;
    }

    fn is_zero(&self) -> bool {
        self.n == 0 && self.revenue.is_zero()
    }

    /// Adds `other`.
    pub fn merge(&mut self, other: &Tally) {
        self.add(other.n, other.revenue, 1);
    }
}

/// One fulfilment channel's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fulfilment {
    /// Orders.
    pub orders: i64,
    /// Revenue.
    pub revenue: Decimal,
    /// Sum of the preparation minutes of the orders that carried them.
    pub prep_minutes: Decimal,
    /// How many did.
    pub prep_orders: i64,
    /// Sum of the delivery minutes of the orders that carried them.
    pub delivery_minutes: Decimal,
    /// How many did.
    pub delivery_orders: i64,
}

impl Fulfilment {
    /// Adds `other`.
    pub fn merge(&mut self, other: &Fulfilment) {
        self.orders += other.orders;
        self.revenue += other.revenue;
        self.prep_minutes += other.prep_minutes;
        self.prep_orders += other.prep_orders;
        self.delivery_minutes += other.delivery_minutes;
        self.delivery_orders += other.delivery_orders;
    }

    fn is_zero(&self) -> bool {
        *self == Fulfilment::default()
    }
}

/// The figures of one scope (an outlet, or the brand) on one IST day.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figures {
    /// Orders.
    pub orders: i64,
    /// Revenue (the orders' `amount`).
    pub revenue: Decimal,
    /// Discounts (the orders' `discount`).
    pub discounts: Decimal,
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
}

fn bump(map: &mut BTreeMap<String, Tally>, name: &str, n: i64, revenue: Decimal, sign: i64) {
    let tally = map.entry(name.to_owned()).or_default();
    tally.add(n, revenue, sign);
    if tally.is_zero() {
        map.remove(name);
    }
}

impl Figures {
    /// Adds (`sign` 1) or takes back (`sign` -1) one order's contribution; `brand` rows also
    /// count it under its outlet.
    pub fn add(&mut self, c: &Contribution, sign: i64, brand: bool) {
        let s = Decimal::from(sign);
        self.orders += sign;
        self.revenue += s * c.amount;
        self.discounts += s * c.discount;
        if c.new_customer {
            self.new_customers += sign;
        } else {
            self.returning_orders += sign;
        }
        self.points_earned += sign * c.points_earned;
        self.points_redeemed += sign * c.points_redeemed;
        if self.hours.len() != 24 {
            self.hours.resize(24, Tally::default());
        }
        if let Some(hour) = self.hours.get_mut(usize::from(c.hour)) {
            hour.add(1, c.amount, sign);
        }
        for item in &c.items {
            bump(&mut self.items, &item.name, item.qty, item.revenue, sign);
        }
        let channel = self.channels.entry(c.channel.clone()).or_default();
        channel.orders += sign;
        channel.revenue += s * c.amount;
        if let Some(minutes) = c.prep_minutes {
            channel.prep_minutes += s * minutes;
            channel.prep_orders += sign;
        }
        if let Some(minutes) = c.delivery_minutes {
            channel.delivery_minutes += s * minutes;
            channel.delivery_orders += sign;
        }
        if channel.is_zero() {
            self.channels.remove(&c.channel);
        }
        bump(&mut self.cities, &c.city, 1, c.amount, sign);
        bump(&mut self.pincodes, &c.pincode, 1, c.amount, sign);
        if brand {
            bump(&mut self.outlets, &c.outlet, 1, c.amount, sign);
        }
        if self.hours.iter().all(Tally::is_zero) {
            self.hours.clear();
        }
    }

    /// Adds another scope's or day's figures.
    pub fn merge(&mut self, other: &Figures) {
        self.orders += other.orders;
        self.revenue += other.revenue;
        self.discounts += other.discounts;
        self.new_customers += other.new_customers;
        self.returning_orders += other.returning_orders;
        self.points_earned += other.points_earned;
        self.points_redeemed += other.points_redeemed;
        if !other.hours.is_empty() {
            self.hours.resize(24, Tally::default());
            for (mine, theirs) in self.hours.iter_mut().zip(&other.hours) {
                mine.merge(theirs);
            }
        }
        for (target, source) in
            [(&mut self.items, &other.items), (&mut self.cities, &other.cities), (&mut self.pincodes, &other.pincodes)]
        {
            for (name, tally) in source {
                target.entry(name.clone()).or_default().merge(tally);
            }
        }
        for (name, tally) in &other.outlets {
            self.outlets.entry(name.clone()).or_default().merge(tally);
        }
        for (name, channel) in &other.channels {
            self.channels.entry(name.clone()).or_default().merge(channel);
        }
    }
}

/// One item line of an order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemLine {
    /// Item name.
    pub name: String,
    /// Quantity.
    pub qty: i64,
    /// Quantity × price.
    pub revenue: Decimal,
}

/// What one order version added to the rollups (kept in `stats_orders`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contribution {
    /// Outlet.
    pub outlet: String,
    /// IST day of `orderTime` (of the acceptance when absent).
    pub day: String,
    /// Its IST hour.
    pub hour: u8,
    /// `amount`.
    pub amount: Decimal,
    /// `discount` (0 when absent).
    pub discount: Decimal,
    /// The customer's first order.
    pub new_customer: bool,
    /// Points the order earned.
    pub points_earned: i64,
    /// Points redeemed against it.
    pub points_redeemed: i64,
    /// Item lines (quantity above 0).
    pub items: Vec<ItemLine>,
    /// `channel` (or `fulfillment`), lower case; `unspecified` when absent.
    pub channel: String,
    /// `prepMinutes`, when given.
    pub prep_minutes: Option<Decimal>,
    /// `deliveryMinutes`, when given.
    pub delivery_minutes: Option<Decimal>,
    /// `city` (or `customer.city`), as sent; `unknown` when absent.
    pub city: String,
    /// `pincode` (or `customer.pincode`); `unknown` when absent.
    pub pincode: String,
}

/// The first of `names` that `payload` (or its `customer`) carries as text or a number.
fn field(payload: &Value, names: &[&str]) -> Option<String> {
    let customer = payload.get("customer");
    names.iter().find_map(|name| {
        [payload.get(*name), customer.and_then(|c| c.get(*name))].into_iter().flatten().find_map(|v| match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    })
}

impl Contribution {
    /// The contribution of `payload` (an order of `outlet`, accepted at `received`).
    pub fn of(
        payload: &Value,
        outlet: &str,
        order_time: Option<&str>,
        received: chrono::DateTime<Utc>,
        amount: Decimal,
    ) -> Self {
        let at = order_time.and_then(parse_ist).unwrap_or(received).with_timezone(&ist());
        let items = payload
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|line| {
                let name = line.get("name")?.as_str()?.to_owned();
                let qty = line.get("qty")?.as_i64().filter(|q| *q > 0)?;
                let price = line.get("price").and_then(decimal)?;
                Some(ItemLine { name, qty, revenue: price * Decimal::from(qty) })
            })
            .collect();
        let minutes = |name: &str| payload.get(name).and_then(decimal).filter(|m| !m.is_sign_negative());
        Self {
            outlet: outlet.to_owned(),
            day: format!("{:04}-{:02}-{:02}", at.year(), at.month(), at.day()),
            hour: u8::try_from(at.hour()).unwrap_or(0),
            amount,
            discount: payload.get("discount").and_then(decimal).filter(|d| !d.is_sign_negative()).unwrap_or_default(),
            new_customer: false,
            points_earned: 0,
            points_redeemed: 0,
            items,
            channel: field(payload, &["channel", "fulfillment"])
                .map_or_else(|| "unspecified".to_owned(), |c| c.to_lowercase()),
            prep_minutes: minutes("prepMinutes"),
            delivery_minutes: minutes("deliveryMinutes"),
            city: field(payload, &["city"]).unwrap_or_else(|| "unknown".to_owned()),
            pincode: field(payload, &["pincode"]).unwrap_or_else(|| "unknown".to_owned()),
        }
    }
}

/// The reaction that keeps the rollups.
pub struct KeepRollups;

/// A rollup row, from the actor's cache or the store.
async fn row(brand: &mut Brand, scope: &str, day: &str) -> Result<Figures, StoreError> {
    let cache_key = (scope.to_owned(), day.to_owned());
    if let Some(figures) = brand.rollups.get(&cache_key) {
        return Ok(figures.clone());
    }
    Ok(brand.repo().get(&keys::stats_day(&brand.tenant, scope, day)).await?.unwrap_or_default())
}

/// Adds (`sign` 1) or takes back (-1) `c` in the outlet's and the brand's rows of its day; the
/// rows changed are named in `dirty`.
async fn apply(
    brand: &mut Brand,
    c: &Contribution,
    sign: i64,
    dirty: &mut Vec<(String, String)>,
) -> Result<(), StoreError> {
    for scope in [c.outlet.as_str(), BRAND] {
        let mut figures = row(brand, scope, &c.day).await?;
        figures.add(c, sign, scope == BRAND);
        let key = (scope.to_owned(), c.day.clone());
        brand.rollups.insert(key.clone(), figures);
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
        brand: &mut Brand,
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
        );
        let key = keys::stats_order(&brand.tenant, &facts.business_id, &facts.order_id);
        let old: Option<Contribution> =
            if order.applied == Applied::Updated { brand.repo().get(&key).await? } else { None };
        new.new_customer = match &old {
            Some(old) => old.new_customer,
            None => customer.orders.len() == 1,
        };
        new.points_earned = customer.orders.get(&facts.key()).map_or(0, |c| c.points);
        // at most four rows change (the old day's and the new day's, outlet and brand)
        if brand.rollups.len() + 4 > CACHE_ROWS {
            brand.rollups.clear();
        }
        let mut dirty = Vec::new();
        if let Some(old) = &old {
            apply(brand, old, -1, &mut dirty).await?;
        }
        apply(brand, &new, 1, &mut dirty).await?;
        for (scope, day) in dirty {
            if let Some(figures) = brand.rollups.get(&(scope.clone(), day.clone())) {
                ops.push(keys::stats_day(&brand.tenant, &scope, &day).put(figures));
            }
        }
        ops.push(key.put(&new));
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
    brand: &mut Brand,
    outlet: Option<&str>,
    at: chrono::DateTime<Utc>,
    points: i64,
    ops: &mut Vec<WriteOp>,
) -> Result<(), StoreError> {
    let day = crate::domain::time::ist_day(at);
    if brand.rollups.len() + 2 > CACHE_ROWS {
        brand.rollups.clear();
    }
    for scope in outlet.into_iter().chain([BRAND]) {
        let mut figures = row(brand, scope, &day).await?;
        figures.points_redeemed += points;
        ops.push(keys::stats_day(&brand.tenant, scope, &day).put(&figures));
        brand.rollups.insert((scope.to_owned(), day.clone()), figures);
    }
    Ok(())
}
