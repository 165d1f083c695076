//! The customer aggregate of one brand: identity, and every order's contribution to the totals.
//!
//! The aggregate is one row: totals and the orders they are made of are written together, so the
//! totals can never drift from the orders on any store backend (NATS KV has no multi-row
//! atomicity). Applying an order is idempotent: the same order again changes nothing; an updated
//! order (same outlet and order id, newer version) replaces its amount; an older version arriving
//! late (redelivery after a nak) is ignored.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

pub use super::kept_orders::{Contribution, KeptOrders};
use super::order::OrderFacts;
use super::time::parse_ist;

/// Most orders a customer's row keeps one by one ([`Customer::orders`]): the latest by
/// `orderTime`; older ones are folded into [`Customer::folded`] (still in the totals) and their
/// contributions live in their own order rows (`counted`), where a refund or a bill of an old
/// order reads them. So the row an order rewrites, and a cached customer, cost the same for a
/// regular's 500th order as for their 16th (issue 57; `docs/operations.md`, "Sizing").
pub const MAX_KEPT_ORDERS: usize = 16;

/// The orders folded out of a customer's row: still in the totals.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Folded {
    /// How many.
    pub orders: u64,
    /// Their amounts, summed.
    pub amount: Decimal,
    /// The latest `orderTime` among the folded orders that count (the customer's last order when
    /// every kept one was cancelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_order_time: Option<String>,
}

/// A redemption, remembered per order (table `loyalty_redemptions`) so that a retried redemption is
/// not applied twice. It counts only when the customer row committed it: `ledger_seq` is below the
/// customer's `ledger_seq`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Redemption {
    /// Its ledger transaction id.
    pub txn_id: String,
    /// Points redeemed.
    pub points: i64,
    /// For a POS redemption still waiting for its order: when it may be revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_until: Option<chrono::DateTime<chrono::Utc>>,
    /// The ledger row of the redemption (to mark it reverted).
    #[serde(default)]
    pub ledger_seq: u64,
}

/// A customer of one brand (keyed by brand + phone).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Customer {
    /// Phone number (the key).
    pub phone: String,
    /// Name, last one given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Email, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Gender, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gender: Option<String>,
    /// Date of birth, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dob: Option<String>,
    /// Anniversary (`YYYY-MM-DD`), when given (the anniversary journey).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anniversary: Option<String>,
    /// Push tokens registered through `/injestion/fcms`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub push_tokens: Vec<String>,
    /// Last check-in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_checkin: Option<chrono::DateTime<chrono::Utc>>,
    /// Loyalty points balance (the loyalty issue fills it).
    #[serde(default)]
    pub loyalty_points: i64,
    /// Each kept order's contribution, by `outlet/orderId` (the latest [`MAX_KEPT_ORDERS`]).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Contribution>")]
    pub orders: KeptOrders,
    /// Sum of contributions: lifetime value (LTV).
    #[serde(default)]
    pub lifetime_value: Decimal,
    /// First time seen.
    #[serde(default)]
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Milestones (order counts) already awarded.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub milestones_awarded: std::collections::BTreeSet<u32>,
    /// Low-rating recoveries made for this customer (spec `rating_frequency`).
    #[serde(default, skip_serializing_if = "super::is_default")]
    pub rating_frequency: u32,
    /// Blocked by staff through a fraud flag.
    #[serde(default, skip_serializing_if = "super::is_default")]
    pub is_blocked: bool,
    /// Velocity counters (earns and redemptions in the current hour, day and week).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub velocity: super::fraud::Counters,
    /// Open fraud flags (flagged or blocked) by flag id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub flags: BTreeMap<String, super::fraud::FlagState>,
    /// Orders older than the [`MAX_KEPT_ORDERS`] kept in `orders`, as totals.
    #[serde(default, skip_serializing_if = "super::is_default")]
    pub folded: Folded,
    /// The outlet that created this customer (`businessId` of `/injestion/createCustomer`), when
    /// one did: their outlet until they order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at_outlet: Option<String>,
    /// The customer who referred this one (a phone of the same brand), when one was named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub referred_by: Option<String>,
    /// Whether this customer's referral was rewarded (their first qualifying order came).
    #[serde(default, skip_serializing_if = "super::is_default")]
    pub referral_rewarded: bool,
    /// The order (`outlet/orderId`) whose referral reward was paid: refunded as a whole, the
    /// reward is taken back and a later order may earn it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub referral_order: Option<String>,
    /// Customers this one referred whose referral rewarded this one.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub referrals_rewarded: std::collections::BTreeSet<String>,
    /// Earned points by expiry (see [`super::loyalty::Lots`]).
    #[serde(default, skip_serializing_if = "super::is_default")]
    pub point_lots: super::loyalty::Lots,
    /// Number of ledger entries written; the next entry's key. Kept in this row so that a retried
    /// write reuses the same ledger key.
    #[serde(default, skip_serializing_if = "super::is_default")]
    pub ledger_seq: u64,
    /// When journeys last messaged this customer (the last 7 days; the frequency cap).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub journey_sends: Vec<chrono::DateTime<chrono::Utc>>,
    /// Every order of this customer is listed in `customer_orders` (false for rows written before
    /// that table: their kept orders are listed at their next order, before any is folded).
    #[serde(default, skip_serializing_if = "super::is_default")]
    pub orders_indexed: bool,
}

/// What applying an order did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// A new order: counted.
    New,
    /// A newer version of a known order: amount replaced.
    Updated,
    /// The same version again: nothing changed.
    Unchanged,
    /// An older version than the one counted: ignored.
    Stale,
}

impl Applied {
    /// Its name in metrics (`engage_orders_applied_total{outcome}`).
    pub fn label(self) -> &'static str {
        match self {
            Applied::New => "new",
            Applied::Updated => "updated",
            Applied::Unchanged => "unchanged",
            Applied::Stale => "stale",
        }
    }
}

impl Customer {
    /// A new customer.
    pub fn new(phone: &str, now: DateTime<Utc>) -> Self {
        Self { phone: phone.to_owned(), created_at: Some(now), orders_indexed: true, ..Self::default() }
    }

    /// Whether orders were folded out of the row (an order it does not keep may be an old one:
    /// its own row says what it counted).
    pub fn has_folded(&self) -> bool {
        self.folded != Folded::default()
    }

    /// Lifetime orders (LTO), the folded ones included.
    pub fn total_orders(&self) -> usize {
        let counted = self.orders.values().filter(|c| !c.void).count();
        counted.saturating_add(usize::try_from(self.folded.orders).unwrap_or(usize::MAX))
    }

    /// Average order value (AOV), rounded to 2 decimals; 0 without orders.
    pub fn average_order_value(&self) -> Decimal {
        match self.total_orders() {
            0 => Decimal::ZERO,
            orders => (self.lifetime_value / Decimal::from(orders)).round_dp(2),
        }
    }

    /// The latest `orderTime` among the counted orders.
    pub fn last_order(&self) -> Option<&str> {
        let kept = self.orders.values().filter(|c| !c.void).filter_map(|c| c.order_time.as_deref()).max();
        kept.max(self.folded.last_order_time.as_deref())
    }

    /// The customer's outlet: their latest order's (by `orderTime`; the last-keyed order when
    /// none has one), else the outlet that created them, else none (the brand's).
    pub fn home_outlet(&self) -> Option<&str> {
        self.orders
            .iter()
            .max_by(|a, b| a.1.order_time.cmp(&b.1.order_time))
            .and_then(|(key, _)| key.split_once('/'))
            .map(|(outlet, _)| outlet)
            .or(self.created_at_outlet.as_deref())
    }

    /// Applies one order version and folds what the row no longer keeps; recomputes LTV (LTO
    /// and AOV are derived).
    pub fn apply_order(&mut self, facts: &OrderFacts, version: &str) -> Applied {
        let applied = self.apply_copy(facts, version, None);
        self.fold_kept();
        applied
    }

    /// Applies one copy of an order, ranked by `version` ([`super::order::copy_version`]): an
    /// older copy than the one counted is `Stale`; the same content again (the same copy, or a
    /// newer copy that changes nothing) is `Unchanged`; otherwise the order's contribution is
    /// replaced. The same version with other content is an update too: the copy's recorded
    /// refunds grew (refunds only ever add).
    ///
    /// `stored` is what the order's own row says it counted, given for an order this row no
    /// longer keeps one by one ([`MAX_KEPT_ORDERS`]): it is taken out of the folded totals and
    /// ranked as usual, so a refund of an old order takes back exactly what it added.
    ///
    /// The order applied stays kept one by one (the row may hold one more than
    /// [`MAX_KEPT_ORDERS`]) until [`Customer::fold_kept`]: the order's reactions read and set its
    /// contribution (the points it earned), and its own row records it, even when it is older
    /// than every order kept and is folded right after.
    pub fn apply_copy(&mut self, facts: &OrderFacts, version: &str, stored: Option<Contribution>) -> Applied {
        let key = facts.key();
        let mut unfolded = false;
        if let Some(stored) = stored.filter(|_| !self.orders.contains_key(&key) && self.has_folded()) {
            self.folded.orders = self.folded.orders.saturating_sub(u64::from(!stored.void));
            self.folded.amount = (self.folded.amount - stored.amount).max(Decimal::ZERO);
            self.orders.insert(key.clone(), stored);
            unfolded = true;
        }
        let contribution = Contribution {
            amount: facts.net(),
            version: version.to_owned(),
            order_time: facts.order_time.clone(),
            points: self.orders.get(&key).map_or(0, |c| c.points),
            void: facts.void,
            refunded: facts.refunded,
        };
        let applied = match self.orders.get_mut(&key) {
            None => Applied::New,
            Some(existing) if existing.version.as_str() > version => Applied::Stale,
            Some(existing)
                if existing.amount == contribution.amount
                    && existing.void == contribution.void
                    && existing.refunded == contribution.refunded
                    && existing.order_time == facts.order_time =>
            {
                // the same content again: remember the newest version, totals stay
                existing.version = version.to_owned();
                Applied::Unchanged
            }
            Some(_) => Applied::Updated,
        };
        if applied != Applied::Stale {
            if let Some(name) = &facts.name {
                self.name = Some(name.clone());
            }
        }
        if matches!(applied, Applied::New | Applied::Updated) {
            self.orders.insert(key.clone(), contribution);
        }
        if unfolded || matches!(applied, Applied::New | Applied::Updated) {
            self.fold_oldest(Some(&key));
            self.lifetime_value = self.orders.values().map(|c| c.amount).sum::<Decimal>() + self.folded.amount;
        }
        applied
    }

    /// Folds the oldest orders (by `orderTime`, then version) past [`MAX_KEPT_ORDERS`] into the
    /// totals: once an order's reactions have run and its row has recorded what it counted.
    pub fn fold_kept(&mut self) {
        self.fold_oldest(None);
    }

    /// Folds the oldest orders past [`MAX_KEPT_ORDERS`] into the totals, `spared` (kept beyond
    /// the limit) aside. Folding moves an order's amount to the folded totals: LTV is unchanged.
    fn fold_oldest(&mut self, spared: Option<&str>) {
        let spared = spared.filter(|key| self.orders.contains_key(key));
        while self.orders.len() > MAX_KEPT_ORDERS + usize::from(spared.is_some()) {
            let Some(oldest) = self
                .orders
                .iter()
                .filter(|(key, _)| Some(key.as_str()) != spared)
                .min_by(|a, b| (&a.1.order_time, &a.1.version).cmp(&(&b.1.order_time, &b.1.version)))
                .map(|(key, _)| key.clone())
            else {
                return;
            };
            if let Some(folded) = self.orders.remove(&oldest) {
                self.folded.orders += u64::from(!folded.void);
                self.folded.amount += folded.amount;
                if !folded.void && folded.order_time > self.folded.last_order_time {
                    self.folded.last_order_time = folded.order_time;
                }
            }
        }
    }

    /// The segment shown by `get/customer/details`:
    /// `prospect` (no order), `lapsed` (last order more than 90 days before `now`), `loyal`
    /// (5 or more orders), `repeat` (2–4), `new` (1).
    pub fn segment(&self, now: DateTime<Utc>) -> &'static str {
        let orders = self.total_orders();
        if orders == 0 {
            return "prospect";
        }
        if let Some(last) = self.last_order().and_then(parse_ist) {
            if now - last > chrono::Duration::days(90) {
                return "lapsed";
            }
        }
        match orders {
            1 => "new",
            2..=4 => "repeat",
            _ => "loyal",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn a_customer_of_thousands_of_orders_keeps_a_bounded_row_and_exact_totals() {
        let mut customer = Customer::new("9876543210", Utc::now());
        for i in 0..3000u32 {
            let time = format!("2026-{:02}-{:02} 10:00:00", 1 + i % 12, 1 + i % 28);
            customer.apply_order(&order(&i.to_string(), "10", &time), &format!("v{i:05}"));
        }
        assert_eq!(customer.orders.len(), MAX_KEPT_ORDERS);
        assert_eq!(customer.total_orders(), 3000);
        assert_eq!(customer.lifetime_value, Decimal::from(30_000));
        assert_eq!(customer.average_order_value(), Decimal::from(10));
        assert_eq!(customer.last_order(), Some("2026-12-28 10:00:00"));
        let row = serde_json::to_vec(&customer).unwrap();
        assert!(row.len() < 256 * 1024, "{} bytes", row.len());
        // a kept order replayed changes nothing
        let kept = customer.orders.keys().next().unwrap().rsplit_once('/').unwrap().1.to_owned();
        let version = customer.orders.values().next().unwrap().version.clone();
        let time = customer.orders.values().next().unwrap().order_time.clone().unwrap();
        assert_eq!(customer.apply_order(&order(&kept, "10", &time), &version), Applied::Unchanged);
        assert_eq!(customer.total_orders(), 3000);
    }

    #[test]
    fn an_order_older_than_every_kept_one_stays_kept_until_its_reactions_ran() {
        let mut customer = Customer::new("9876543210", Utc::now());
        for i in 0..MAX_KEPT_ORDERS {
            customer.apply_order(&order(&i.to_string(), "10", &format!("2026-11-{:02} 10:00:00", 1 + i)), "v1");
        }
        let old = order("old", "50", "2026-10-01 10:00:00");
        assert_eq!(customer.apply_copy(&old, "v2", None), Applied::New);
        // its reactions set what it earned on its contribution, and its row records it
        assert_eq!(customer.orders.len(), MAX_KEPT_ORDERS + 1);
        assert!(customer.orders.get(&old.key()).is_some());
        assert_eq!(customer.lifetime_value, Decimal::from(16 * 10 + 50));
        customer.fold_kept();
        // then it is folded: the oldest, the row keeps the latest 16; totals unchanged
        assert_eq!(customer.orders.len(), MAX_KEPT_ORDERS);
        assert!(customer.orders.get(&old.key()).is_none());
        assert_eq!((customer.total_orders(), customer.lifetime_value), (17, Decimal::from(16 * 10 + 50)));
        // a newer order applied next folds the oldest kept one, never itself
        let newer = order("newer", "20", "2026-11-30 10:00:00");
        customer.apply_copy(&newer, "v3", None);
        customer.fold_kept();
        assert!(customer.orders.get(&newer.key()).is_some());
        assert_eq!(customer.orders.len(), MAX_KEPT_ORDERS);
    }

    #[test]
    fn a_regulars_500th_order_rewrites_a_row_no_bigger_than_their_20th() {
        let mut customer = Customer::new("9876543210", Utc::now());
        let mut sizes = Vec::new();
        for i in 0..500u32 {
            let time = format!("2026-01-01 {:02}:{:02}:{:02}", i / 3600, i / 60 % 60, i % 60);
            customer.apply_order(&order(&format!("{i:05}"), "10", &time), &format!("v{i:05}"));
            sizes.push(serde_json::to_vec(&customer).unwrap().len());
        }
        assert!(sizes[499] <= sizes[19] + 64, "20th: {} bytes, 500th: {} bytes", sizes[19], sizes[499]);
        assert!(sizes[3] < sizes[19], "a small customer's row is smaller still");
        assert_eq!((customer.total_orders(), customer.lifetime_value), (500, Decimal::from(5000)));
        // every kept order cancelled: the last order is the latest folded one that counts
        for key in customer.orders.keys().cloned().collect::<Vec<_>>() {
            let (outlet, id) = key.split_once('/').unwrap();
            let time = customer.orders.get(&key).unwrap().order_time.clone().unwrap();
            let void = OrderFacts { void: true, refunded: Decimal::from(10), ..order(id, "10", &time) };
            assert_eq!(customer.apply_order(&void, "v99999"), Applied::Updated, "{outlet}/{id}");
        }
        assert_eq!(customer.total_orders(), 500 - MAX_KEPT_ORDERS);
        assert_eq!(customer.last_order(), Some("2026-01-01 00:08:03"));
    }

    #[test]
    fn a_refund_of_an_order_folded_out_of_the_row_takes_back_what_it_added() {
        let mut customer = Customer::new("9876543210", Utc::now());
        for i in 0..600u32 {
            let time = format!("2026-01-01 {:02}:{:02}:00", i / 60, i % 60);
            customer.apply_order(&order(&i.to_string(), "10", &time), &format!("v{i:05}"));
        }
        assert!(!customer.orders.contains_key("outlet/0"), "the oldest is folded");
        let stored = Contribution {
            amount: Decimal::from(10),
            version: "v00000".into(),
            order_time: Some("2026-01-01 00:00:00".into()),
            points: 3,
            void: false,
            refunded: Decimal::ZERO,
        };
        let void = OrderFacts { void: true, refunded: Decimal::from(10), ..order("0", "10", "2026-01-01 00:00:00") };
        assert_eq!(customer.apply_copy(&void, "v00000", Some(stored.clone())), Applied::Updated);
        assert_eq!((customer.total_orders(), customer.lifetime_value), (599, Decimal::from(5990)));
        // folded again once its reactions ran (as the order capability does)
        customer.fold_kept();
        assert_eq!(customer.orders.len(), MAX_KEPT_ORDERS, "the row stays bounded");
        // the same refund again (the order folded once more) changes nothing
        let again =
            customer.apply_copy(&void, "v00000", Some(Contribution { void: true, amount: Decimal::ZERO, ..stored }));
        customer.fold_kept();
        assert!(matches!(again, Applied::Unchanged | Applied::Updated));
        assert_eq!((customer.total_orders(), customer.lifetime_value), (599, Decimal::from(5990)));
    }

    #[test]
    fn copies_rank_by_position_not_by_the_clock() {
        use crate::domain::order::copy_version;
        let mut customer = Customer::new("9876543210", Utc::now());
        let same_ms = "2026-11-21T10:00:00.000Z";
        assert_eq!(
            customer.apply_order(&order("1", "80", "2026-11-21 10:00:00"), &copy_version(7, same_ms)),
            Applied::New
        );
        let void = OrderFacts { void: true, refunded: Decimal::from(80), ..order("1", "80", "2026-11-21 10:00:00") };
        assert_eq!(customer.apply_order(&void, &copy_version(8, same_ms)), Applied::Updated);
        // the sale delivered again after its void changes nothing
        assert_eq!(
            customer.apply_order(&order("1", "80", "2026-11-21 10:00:00"), &copy_version(7, same_ms)),
            Applied::Stale
        );
        assert_eq!(customer.total_orders(), 0);
        // a copy ranked by position beats one ranked by the older clock form
        let mut old = Customer::new("9876543210", Utc::now());
        old.apply_order(&order("1", "80", "2026-11-21 10:00:00"), "2026-11-21T10:00:00.000Z|ffff");
        assert_eq!(old.apply_order(&void, &copy_version(1, same_ms)), Applied::Updated);
        assert!(copy_version(9, same_ms) < copy_version(10, same_ms));
    }

    #[test]
    fn the_outlet_that_created_a_customer_is_theirs_until_they_order() {
        let mut customer = Customer { created_at_outlet: Some("outlet-2".into()), ..Customer::default() };
        assert_eq!(customer.home_outlet(), Some("outlet-2"));
        customer.apply_order(&order("1", "10", "2026-11-21 10:00:00"), "v1");
        assert_eq!(customer.home_outlet(), Some("outlet"));
        assert_eq!(Customer::default().home_outlet(), None);
    }

    fn order(id: &str, amount: &str, time: &str) -> OrderFacts {
        OrderFacts {
            business_id: "outlet".into(),
            order_id: id.into(),
            phone: "9876543210".into(),
            name: Some("Asha".into()),
            amount: Decimal::from_str(amount).unwrap(),
            order_time: Some(time.into()),
            status: None,
            os: None,
            refunded: Decimal::ZERO,
            void: false,
        }
    }

    #[test]
    fn a_refund_takes_the_order_out_of_every_total() {
        let now = Utc::now();
        let mut customer = Customer::new("9876543210", now);
        customer.apply_order(&order("1", "100", "2026-11-21 10:00:00"), "v1");
        customer.apply_order(&order("2", "50", "2026-11-22 10:00:00"), "v1");
        let returned = OrderFacts { refunded: Decimal::from(30), ..order("1", "100", "2026-11-21 10:00:00") };
        assert_eq!(customer.apply_order(&returned, "v2"), Applied::Updated);
        assert_eq!((customer.total_orders(), customer.lifetime_value), (2, Decimal::from(120)));
        let void = OrderFacts { refunded: Decimal::from(50), void: true, ..order("2", "50", "2026-11-22 10:00:00") };
        assert_eq!(customer.apply_order(&void, "v2"), Applied::Updated);
        assert_eq!((customer.total_orders(), customer.lifetime_value), (1, Decimal::from(70)));
        assert_eq!(customer.last_order(), Some("2026-11-21 10:00:00"), "a void order is no last order");
        assert_eq!(customer.average_order_value(), Decimal::from(70));
        // the same refund again changes nothing
        assert_eq!(customer.apply_order(&void, "v2"), Applied::Unchanged);
    }

    #[test]
    fn totals_count_each_order_once_and_replace_updates() {
        let now = Utc::now();
        let mut c = Customer::new("9876543210", now);
        assert_eq!(c.apply_order(&order("1", "100.10", "2026-11-20 10:00:00"), "v1"), Applied::New);
        assert_eq!(c.apply_order(&order("1", "100.10", "2026-11-20 10:00:00"), "v1"), Applied::Unchanged);
        assert_eq!(c.apply_order(&order("2", "50", "2026-11-21 10:00:00"), "v2"), Applied::New);
        assert_eq!(c.lifetime_value, Decimal::from_str("150.10").unwrap());
        assert_eq!(c.average_order_value(), Decimal::from_str("75.05").unwrap());
        // order 1 updated: its amount is replaced, the count stays
        assert_eq!(c.apply_order(&order("1", "120", "2026-11-20 10:00:00"), "v3"), Applied::Updated);
        assert_eq!(c.total_orders(), 2);
        assert_eq!(c.lifetime_value, Decimal::from_str("170").unwrap());
        // the old version arriving late is ignored
        assert_eq!(c.apply_order(&order("1", "100.10", "2026-11-20 10:00:00"), "v1"), Applied::Stale);
        assert_eq!(c.lifetime_value, Decimal::from_str("170").unwrap());
        assert_eq!(c.last_order(), Some("2026-11-21 10:00:00"));
    }

    #[test]
    fn a_row_leaves_out_empty_fields_and_reads_back_the_same() {
        let now = parse_ist("2026-11-21 12:00:00").unwrap();
        let mut fresh = Customer::new("9876543210", now);
        fresh.apply_order(&order("1", "100", "2026-11-20 10:00:00"), "v1");
        let row = serde_json::to_value(&fresh).unwrap();
        let fields: Vec<&str> = row.as_object().unwrap().keys().map(String::as_str).collect();
        // a name came with the order; nothing else optional is set
        assert_eq!(
            fields,
            ["created_at", "lifetime_value", "loyalty_points", "name", "orders", "orders_indexed", "phone"]
        );
        assert_eq!(
            row["orders"]["outlet/1"],
            serde_json::json!({"amount": "100", "version": "v1", "order_time": "2026-11-20 10:00:00"})
        );
        assert_eq!(serde_json::from_value::<Customer>(row).unwrap(), fresh);

        // every field set survives the round trip
        let mut full = fresh.clone();
        full.email = Some("a@b.c".into());
        full.gender = Some("f".into());
        full.dob = Some("1990-01-01".into());
        full.push_tokens = vec!["t".into()];
        full.last_checkin = Some(now);
        full.loyalty_points = 5;
        full.orders.get_mut("outlet/1").unwrap().points = 5;
        full.milestones_awarded.insert(1);
        full.rating_frequency = 2;
        full.is_blocked = true;
        full.velocity.insert("1|d".into(), 3);
        full.referral_rewarded = true;
        full.referrals_rewarded.insert("9000000000".into());
        full.point_lots.0.insert(now, 5);
        full.ledger_seq = 7;
        let row = serde_json::to_vec(&full).unwrap();
        assert_eq!(serde_json::from_slice::<Customer>(&row).unwrap(), full);
        // and a row written before fields were left out still reads
        let old = br#"{"phone":"1","name":null,"email":null,"gender":null,"dob":null,"push_tokens":[],"last_checkin":null,"loyalty_points":0,"orders":{},"lifetime_value":"0","created_at":null,"milestones_awarded":[],"rating_frequency":0,"is_blocked":false,"velocity":{},"flags":{},"referral_rewarded":false,"referrals_rewarded":[],"point_lots":{},"ledger_seq":0}"#;
        assert_eq!(
            serde_json::from_slice::<Customer>(old).unwrap(),
            Customer { phone: "1".into(), ..Customer::default() }
        );
    }

    #[test]
    fn segments_follow_the_documented_rule() {
        let now = parse_ist("2026-11-21 12:00:00").unwrap();
        let mut c = Customer::new("1", now);
        assert_eq!(c.segment(now), "prospect");
        c.apply_order(&order("1", "1", "2026-11-20 10:00:00"), "a");
        assert_eq!(c.segment(now), "new");
        c.apply_order(&order("2", "1", "2026-11-20 10:00:00"), "b");
        assert_eq!(c.segment(now), "repeat");
        for i in 3..=5 {
            c.apply_order(&order(&i.to_string(), "1", "2026-11-20 10:00:00"), &format!("c{i}"));
        }
        assert_eq!(c.segment(now), "loyal");
        let later = parse_ist("2027-03-01 00:00:00").unwrap();
        assert_eq!(c.segment(later), "lapsed");
    }
}
