//! Loyalty programme rules and the arithmetic of earning and redeeming points.
//!
//! A brand's rules ([`LoyaltyRules`]): points earned are `earn_percent`% of the bill (rounded
//! down), on bills of at least `min_bill`; a point is worth `point_value` when redeemed; at most
//! `max_redeem_percent`% of a bill may be paid with points; fewer than `min_redeem_points` cannot
//! be redeemed; earned points expire after `points_expiry_days`; milestone bonuses are awarded
//! once when a customer's order count reaches each threshold. Without configured rules nothing is
//! earned. All arithmetic is decimal.

use std::collections::BTreeSet;

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// A milestone: a bonus when the customer's order count reaches `orders`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Milestone {
    /// The order count that triggers it.
    pub orders: u32,
    /// Points awarded.
    pub bonus_points: i64,
}

/// A brand's loyalty rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoyaltyRules {
    /// Points earned, in percent of the bill amount.
    pub earn_percent: Decimal,
    /// Smallest bill that earns points.
    pub min_bill: Decimal,
    /// Currency value of one point when redeemed.
    pub point_value: Decimal,
    /// Days after which earned points expire.
    pub points_expiry_days: u32,
    /// Largest share of a bill, in percent, payable with points.
    pub max_redeem_percent: Decimal,
    /// Fewest points a redemption may use.
    pub min_redeem_points: i64,
    /// POS redemptions need a one-time password first (`/api/generateOTP`, then the OTP in the
    /// redemption or `/pos_e/v1/authenticate_points_redemption`).
    #[serde(default)]
    pub otp_required: bool,
    /// Milestone bonuses, by order count.
    #[serde(default)]
    pub milestones: Vec<Milestone>,
    /// The refer-and-earn programme.
    #[serde(default)]
    pub referral: ReferralRules,
}

/// The refer-and-earn programme: a new customer names an existing customer of the brand as their
/// referrer (`referrer_number` when the customer is created); on the new customer's first order
/// of at least `min_order_amount`, the referee earns `referee_points` and the referrer
/// `referrer_points` (at most `max_referrals` rewarded referrals per referrer; 0 = no cap). The
/// points expire like earned points.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReferralRules {
    /// Whether referrals are rewarded.
    #[serde(default)]
    pub enabled: bool,
    /// Points for the referrer.
    #[serde(default)]
    pub referrer_points: i64,
    /// Points for the new customer.
    #[serde(default)]
    pub referee_points: i64,
    /// Smallest first order that rewards the referral.
    #[serde(default)]
    pub min_order_amount: Decimal,
    /// Rewarded referrals per referrer at most; 0: no cap.
    #[serde(default)]
    pub max_referrals: u32,
}

/// Changes to a brand's loyalty rules; fields left out keep their value, milestones are kept.
/// Applied by the brand's actor to the rules it holds, in one turn, so concurrent patches of
/// different fields all land.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RulesPatch {
    /// See [`LoyaltyRules::earn_percent`].
    pub earn_percent: Option<Decimal>,
    /// See [`LoyaltyRules::min_bill`].
    pub min_bill: Option<Decimal>,
    /// See [`LoyaltyRules::point_value`].
    pub point_value: Option<Decimal>,
    /// See [`LoyaltyRules::points_expiry_days`].
    pub points_expiry_days: Option<u32>,
    /// See [`LoyaltyRules::max_redeem_percent`].
    pub max_redeem_percent: Option<Decimal>,
    /// See [`LoyaltyRules::min_redeem_points`].
    pub min_redeem_points: Option<i64>,
    /// See [`LoyaltyRules::otp_required`].
    pub otp_required: Option<bool>,
    /// Changes to the refer-and-earn programme.
    #[serde(default)]
    pub referral: ReferralPatch,
}

/// Changes to the refer-and-earn programme; fields left out keep their value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReferralPatch {
    /// See [`ReferralRules::enabled`].
    pub enabled: Option<bool>,
    /// See [`ReferralRules::referrer_points`].
    pub referrer_points: Option<i64>,
    /// See [`ReferralRules::referee_points`].
    pub referee_points: Option<i64>,
    /// See [`ReferralRules::min_order_amount`].
    pub min_order_amount: Option<Decimal>,
    /// See [`ReferralRules::max_referrals`].
    pub max_referrals: Option<u32>,
}

impl RulesPatch {
    /// `current` with this patch's fields (milestones kept).
    pub fn apply(&self, current: &LoyaltyRules) -> LoyaltyRules {
        let referral = &self.referral;
        let was = &current.referral;
        LoyaltyRules {
            earn_percent: self.earn_percent.unwrap_or(current.earn_percent),
            min_bill: self.min_bill.unwrap_or(current.min_bill),
            point_value: self.point_value.unwrap_or(current.point_value),
            points_expiry_days: self.points_expiry_days.unwrap_or(current.points_expiry_days),
            max_redeem_percent: self.max_redeem_percent.unwrap_or(current.max_redeem_percent),
            min_redeem_points: self.min_redeem_points.unwrap_or(current.min_redeem_points),
            otp_required: self.otp_required.unwrap_or(current.otp_required),
            milestones: current.milestones.clone(),
            referral: ReferralRules {
                enabled: referral.enabled.unwrap_or(was.enabled),
                referrer_points: referral.referrer_points.unwrap_or(was.referrer_points),
                referee_points: referral.referee_points.unwrap_or(was.referee_points),
                min_order_amount: referral.min_order_amount.unwrap_or(was.min_order_amount),
                max_referrals: referral.max_referrals.unwrap_or(was.max_referrals),
            },
        }
    }
}

impl From<LoyaltyRules> for RulesPatch {
    /// Every field of `rules` (milestones aside).
    fn from(rules: LoyaltyRules) -> Self {
        let r = rules.referral;
        Self {
            earn_percent: Some(rules.earn_percent),
            min_bill: Some(rules.min_bill),
            point_value: Some(rules.point_value),
            points_expiry_days: Some(rules.points_expiry_days),
            max_redeem_percent: Some(rules.max_redeem_percent),
            min_redeem_points: Some(rules.min_redeem_points),
            otp_required: Some(rules.otp_required),
            referral: ReferralPatch {
                enabled: Some(r.enabled),
                referrer_points: Some(r.referrer_points),
                referee_points: Some(r.referee_points),
                min_order_amount: Some(r.min_order_amount),
                max_referrals: Some(r.max_referrals),
            },
        }
    }
}

impl Default for LoyaltyRules {
    /// No programme: nothing is earned, nothing can be redeemed below 1 point.
    fn default() -> Self {
        Self {
            earn_percent: Decimal::ZERO,
            min_bill: Decimal::ZERO,
            point_value: Decimal::ONE,
            points_expiry_days: 365,
            max_redeem_percent: Decimal::ONE_HUNDRED,
            min_redeem_points: 1,
            otp_required: false,
            milestones: Vec::new(),
            referral: ReferralRules::default(),
        }
    }
}

/// Why a redemption is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize, schemars::JsonSchema)]
pub enum RedeemError {
    /// Points must be positive.
    #[error("points must be a positive whole number")]
    NotPositive,
    /// Fewer points than the programme's minimum.
    #[error("at least {minimum} points must be redeemed")]
    BelowMinimum {
        /// The minimum.
        minimum: i64,
    },
    /// More points than the balance.
    #[error("insufficient points: the balance is {balance}")]
    Insufficient {
        /// The balance.
        balance: i64,
    },
    /// More than the allowed share of the bill.
    #[error("at most {maximum} points may be redeemed on this bill")]
    OverBillShare {
        /// The most points allowed on this bill.
        maximum: i64,
    },
}

impl LoyaltyRules {
    /// Points earned on a bill of `amount`.
    pub fn points_for(&self, amount: Decimal) -> i64 {
        if amount < self.min_bill || self.earn_percent <= Decimal::ZERO {
            return 0;
        }
        (amount * self.earn_percent / Decimal::ONE_HUNDRED).floor().to_i64().unwrap_or(0)
    }

    /// Milestones reached by going to `orders` orders that were not awarded yet.
    pub fn milestones_reached(&self, orders: u32, awarded: &BTreeSet<u32>) -> Vec<Milestone> {
        self.milestones.iter().filter(|m| m.orders <= orders && !awarded.contains(&m.orders)).cloned().collect()
    }

    /// The most points usable on a bill of `bill` (or on any bill when unknown) with `balance`.
    pub fn redeemable(&self, balance: i64, bill: Option<Decimal>) -> i64 {
        let mut most = balance;
        if let Some(bill) = bill {
            most = most.min(self.bill_cap(bill));
        }
        if most < self.min_redeem_points {
            0
        } else {
            most.max(0)
        }
    }

    fn bill_cap(&self, bill: Decimal) -> i64 {
        if self.point_value <= Decimal::ZERO {
            return 0;
        }
        (bill * self.max_redeem_percent / Decimal::ONE_HUNDRED / self.point_value).floor().to_i64().unwrap_or(0)
    }

    /// Checks a redemption of `points` from `balance` on a bill of `bill` (when known).
    pub fn check_redeem(&self, balance: i64, points: i64, bill: Option<Decimal>) -> Result<(), RedeemError> {
        if points <= 0 {
            return Err(RedeemError::NotPositive);
        }
        if points < self.min_redeem_points {
            return Err(RedeemError::BelowMinimum { minimum: self.min_redeem_points });
        }
        if let Some(bill) = bill {
            let maximum = self.bill_cap(bill);
            if points > maximum {
                return Err(RedeemError::OverBillShare { maximum });
            }
        }
        if points > balance {
            return Err(RedeemError::Insufficient { balance });
        }
        Ok(())
    }
}

/// Points that expire together: a lot of earned points with its expiry instant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Lot {
    /// When these points expire.
    pub expires_at: chrono::DateTime<chrono::Utc>,
    /// How many.
    pub points: i64,
}

/// The lots of a customer's balance, by expiry.
/// Their sum never exceeds the balance; points outside any lot (none are made any more) never
/// expire.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Lots(pub std::collections::BTreeMap<chrono::DateTime<chrono::Utc>, i64>);

impl Lots {
    /// Adds `lot`.
    pub fn credit(&mut self, lot: &Lot) {
        if lot.points > 0 {
            *self.0.entry(lot.expires_at).or_default() += lot.points;
        }
    }

    /// Takes `points` from the lots that expire first; returns what was taken from which lot.
    pub fn debit(&mut self, mut points: i64) -> Vec<Lot> {
        let mut taken = Vec::new();
        while points > 0 {
            let Some(mut first) = self.0.first_entry() else { break };
            let take = (*first.get()).min(points);
            taken.push(Lot { expires_at: *first.key(), points: take });
            points -= take;
            *first.get_mut() -= take;
            if *first.get() <= 0 {
                first.remove();
            }
        }
        taken
    }

    /// Removes and returns the lots that expire at or before `now`.
    pub fn expire(&mut self, now: chrono::DateTime<chrono::Utc>) -> Vec<Lot> {
        let expired: Vec<Lot> = self
            .0
            .iter()
            .filter(|(expires_at, _)| **expires_at <= now)
            .map(|(expires_at, points)| Lot { expires_at: *expires_at, points: *points })
            .collect();
        for lot in &expired {
            self.0.remove(&lot.expires_at);
        }
        expired
    }

    /// The earliest expiry and its points.
    pub fn next(&self) -> Option<Lot> {
        self.0.first_key_value().map(|(expires_at, points)| Lot { expires_at: *expires_at, points: *points })
    }
}

/// One day's (or a range's) loyalty figures, from the ledger entries of the day
/// (`/crm_api/day/wise/data`). Redeemed and expired points are counted as positive numbers;
/// `net_points` is the change of all balances.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DayFigures {
    /// The sums (the customer counts are filled in by [`Self::view`]).
    sums: DayRow,
    earners: BTreeSet<String>,
    redeemers: BTreeSet<String>,
}

impl DayFigures {
    /// Counts one ledger entry of `kind` for `phone`.
    pub fn add(&mut self, phone: &str, kind: &str, points: i64) {
        let sums = &mut self.sums;
        sums.transactions += 1;
        sums.net_points += points;
        match kind {
            "earn" | "adjust" => {
                sums.points_earned += points;
                self.earners.insert(phone.to_owned());
            }
            "bonus" => sums.bonus_points += points,
            "referral" => sums.referral_points += points,
            "redeem" | "reward_purchase" => {
                sums.points_redeemed -= points;
                self.redeemers.insert(phone.to_owned());
            }
            "revoke" | "reward_revoke" => sums.points_restored += points,
            "expire" => sums.points_expired -= points,
            "clawback" => sums.points_clawed_back -= points,
            _ => {}
        }
    }

    /// The figures as answered (customers who earned / redeemed counted once each), without a
    /// date.
    pub fn view(&self) -> DayRow {
        DayRow {
            date: None,
            customers_earned: self.earners.len() as u64,
            customers_redeemed: self.redeemers.len() as u64,
            ..self.sums.clone()
        }
    }
}

/// One IST day's loyalty figures, or a range's totals (`/crm_api/day/wise/data`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DayRow {
    /// The IST day, `YYYY-MM-DD` (left out of the totals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Earned on orders (updates of orders included, so it may shrink).
    pub points_earned: i64,
    /// Milestone bonuses.
    pub bonus_points: i64,
    /// Refer-and-earn points.
    pub referral_points: i64,
    /// Redeemed, on orders or for rewards (a positive number).
    pub points_redeemed: i64,
    /// Given back by revoked redemptions and rewards.
    pub points_restored: i64,
    /// Expired (a positive number).
    pub points_expired: i64,
    /// Taken back by refunds (a positive number).
    pub points_clawed_back: i64,
    /// Sum of every entry: the change of all balances.
    pub net_points: i64,
    /// Ledger entries.
    pub transactions: u64,
    /// Customers who earned (each once).
    pub customers_earned: u64,
    /// Customers who redeemed (each once).
    pub customers_redeemed: u64,
}

/// One row of a customer's points ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LedgerEntry {
    /// Transaction id (deterministic: a retried operation writes the same row).
    pub txn_id: String,
    /// `earn`, `adjust` (an updated order), `clawback` (taken back by a refund), `bonus`
    /// (milestone), `redeem`, …
    pub kind: String,
    /// Points added (positive) or taken (negative).
    pub points: i64,
    /// Balance after this entry.
    pub balance_after: i64,
    /// The order it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
    /// The outlet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outlet_id: Option<String>,
    /// When.
    pub at: chrono::DateTime<chrono::Utc>,
    /// When earned points expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
    /// 1 active, 2 reverted.
    pub status: u8,
    /// The lots this entry added (earned, restored) or took points from (redeemed, expired).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lots: Vec<Lot>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(text: &str) -> Decimal {
        Decimal::from_str(text).unwrap()
    }

    fn rules() -> LoyaltyRules {
        LoyaltyRules {
            earn_percent: d("10"),
            min_bill: d("100"),
            point_value: d("0.5"),
            points_expiry_days: 365,
            max_redeem_percent: d("50"),
            min_redeem_points: 20,
            otp_required: false,
            milestones: vec![Milestone { orders: 3, bonus_points: 50 }, Milestone { orders: 5, bonus_points: 100 }],
            referral: ReferralRules::default(),
        }
    }

    #[test]
    fn earning_is_a_floored_percentage_above_the_minimum_bill() {
        assert_eq!(rules().points_for(d("99.99")), 0);
        assert_eq!(rules().points_for(d("100")), 10);
        assert_eq!(rules().points_for(d("259.90")), 25);
        assert_eq!(LoyaltyRules::default().points_for(d("1000")), 0);
    }

    #[test]
    fn redemption_limits_hold_at_their_edges() {
        let r = rules();
        // bill 200, 50% payable, a point worth 0.5: at most 200 points
        assert_eq!(r.check_redeem(1000, 200, Some(d("200"))), Ok(()));
        assert_eq!(r.check_redeem(1000, 201, Some(d("200"))), Err(RedeemError::OverBillShare { maximum: 200 }));
        assert_eq!(r.check_redeem(1000, 20, None), Ok(()));
        assert_eq!(r.check_redeem(1000, 19, None), Err(RedeemError::BelowMinimum { minimum: 20 }));
        assert_eq!(r.check_redeem(30, 30, None), Ok(()));
        assert_eq!(r.check_redeem(30, 31, None), Err(RedeemError::Insufficient { balance: 30 }));
        assert_eq!(r.check_redeem(30, 0, None), Err(RedeemError::NotPositive));
        assert_eq!(r.redeemable(19, None), 0);
        assert_eq!(r.redeemable(500, Some(d("100"))), 100);
    }

    #[test]
    fn debits_take_the_points_that_expire_first_and_expiry_takes_what_is_left() {
        let at = |text: &str| chrono::DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&chrono::Utc);
        let lot = |expires_at: &str, points| Lot { expires_at: at(expires_at), points };
        let mut lots = Lots::default();
        lots.credit(&lot("2027-01-02T00:00:00+00:00", 30));
        lots.credit(&lot("2027-01-01T00:00:00+00:00", 10));
        lots.credit(&lot("2027-01-02T00:00:00+00:00", 5));
        assert_eq!(lots.0.values().sum::<i64>(), 45);
        assert_eq!(lots.debit(15), vec![lot("2027-01-01T00:00:00+00:00", 10), lot("2027-01-02T00:00:00+00:00", 5)]);
        assert_eq!(lots.0.values().sum::<i64>(), 30);
        // at the expiry instant itself the lot is gone; a second before it is not
        assert!(lots.expire(at("2027-01-01T23:59:59+00:00")).is_empty());
        assert_eq!(lots.expire(at("2027-01-02T05:30:00+05:30")), vec![lot("2027-01-02T00:00:00+00:00", 30)]);
        assert_eq!(lots.0.values().sum::<i64>(), 0);
        // more than the lots hold: what the lots have is taken
        lots.credit(&lot("2027-02-01T00:00:00+00:00", 3));
        assert_eq!(lots.debit(10), vec![lot("2027-02-01T00:00:00+00:00", 3)]);
        assert_eq!(lots.next(), None);
    }

    #[test]
    fn day_figures_count_each_kind_and_each_customer_once() {
        let mut day = DayFigures::default();
        day.add("1", "earn", 10);
        day.add("1", "earn", 5);
        day.add("2", "bonus", 50);
        day.add("2", "redeem", -20);
        day.add("2", "revoke", 20);
        day.add("3", "expire", -7);
        day.add("3", "referral", 25);
        let view = day.view();
        assert_eq!(view.points_earned, 15);
        assert_eq!(view.points_redeemed, 20);
        assert_eq!(view.points_restored, 20);
        assert_eq!(view.points_expired, 7);
        assert_eq!(view.net_points, 83);
        assert_eq!(view.customers_earned, 1);
        assert_eq!(view.customers_redeemed, 1);
        assert_eq!(view.transactions, 7);
    }

    #[test]
    fn milestones_are_awarded_once() {
        let r = rules();
        let mut awarded = BTreeSet::new();
        assert!(r.milestones_reached(2, &awarded).is_empty());
        assert_eq!(r.milestones_reached(3, &awarded), vec![Milestone { orders: 3, bonus_points: 50 }]);
        awarded.insert(3);
        assert!(r.milestones_reached(4, &awarded).is_empty());
        assert_eq!(r.milestones_reached(5, &awarded).len(), 1);
    }
}
