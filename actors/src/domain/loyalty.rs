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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Milestone {
    /// The order count that triggers it.
    pub orders: u32,
    /// Points awarded.
    pub bonus_points: i64,
}

/// A brand's loyalty rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
        }
    }
}

/// Why a redemption is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
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

/// One row of a customer's points ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// Transaction id (deterministic: a retried operation writes the same row).
    pub txn_id: String,
    /// `earn`, `adjust` (an updated order), `bonus` (milestone), `redeem`.
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
    /// When (RFC 3339).
    pub at: String,
    /// When earned points expire (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// 1 active, 2 reverted.
    pub status: u8,
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
