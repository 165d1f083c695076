//! Fraud prevention: velocity limits over a customer's points history, and the flag state machine.
//!
//! **Periods** are calendar buckets in IST, as the wallet-history record's `event_hour`,
//! `event_date` fields suggest: `hour` is the same IST date and hour, `day` the same IST date,
//! `week` the same ISO week.
//!
//! **The limit's edge** (the spec gives `>` in one place and `>=` in another): a limit of `L`
//! allows `L` transactions of the kind per period; the `L+1`-th is the breach. Put as the code
//! does: breach when the count already in the period is `>= L`.
//!
//! **Flag states**: `flagged` (status 1) → block → `blocked` (status 2, customer blocked) →
//! unblock → `unblocked` (status 2, customer clean again); `flagged` → resolve → `resolved`
//! (status 2). Every other transition is refused.

use chrono::{DateTime, Datelike, Utc};
use serde::{Deserialize, Serialize};

use super::time::ist;

/// `Redemption Frequency Limit`.
pub const REDEMPTION_FREQUENCY: &str = "Redemption Frequency Limit";
/// `Points Earning Limit`.
pub const POINTS_EARNING: &str = "Points Earning Limit";

/// Wallet-history transaction types.
pub const TXN_EARN: u8 = 1;
/// Redemption.
pub const TXN_REDEEM: u8 = 2;

/// A velocity period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    /// The IST clock hour.
    Hour,
    /// The IST day.
    #[default]
    Day,
    /// The ISO week (IST).
    Week,
}

/// A brand's velocity limits (`None`: no limit).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VelocityRules {
    /// Redemptions allowed per period.
    pub redemption_limit_value: Option<u32>,
    /// Their period.
    pub redemption_limit_period: Period,
    /// Point allocations (earns) allowed per period.
    pub points_earning_limit_value: Option<u32>,
    /// Their period.
    pub points_earning_limit_period: Period,
}

/// One entry of the recent wallet history kept with a customer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecentTxn {
    /// 1 earn, 2 redeem.
    pub txn_type: u8,
    /// When (RFC 3339).
    pub at: String,
}

/// The calendar bucket of `at` for `period`.
pub fn bucket(period: Period, at: DateTime<Utc>) -> String {
    let local = at.with_timezone(&ist());
    match period {
        Period::Hour => local.format("%Y-%m-%dT%H").to_string(),
        Period::Day => local.format("%Y-%m-%d").to_string(),
        Period::Week => {
            let week = local.iso_week();
            format!("{}-W{:02}", week.year(), week.week())
        }
    }
}

/// Transactions of `txn_type` already in `now`'s bucket.
pub fn count_in_period(recent: &[RecentTxn], txn_type: u8, period: Period, now: DateTime<Utc>) -> u32 {
    let current = bucket(period, now);
    let count = recent
        .iter()
        .filter(|t| t.txn_type == txn_type)
        .filter_map(|t| DateTime::parse_from_rfc3339(&t.at).ok())
        .filter(|at| bucket(period, at.with_timezone(&Utc)) == current)
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// Whether one more transaction breaches `limit`, `already` being in the period.
pub fn breaches(limit: Option<u32>, already: u32) -> bool {
    limit.is_some_and(|limit| already >= limit)
}

/// Drops history older than 8 days (no period is longer than a week).
pub fn prune(recent: &mut Vec<RecentTxn>, now: DateTime<Utc>) {
    recent.retain(|t| {
        DateTime::parse_from_rfc3339(&t.at).is_ok_and(|at| now - at.with_timezone(&Utc) < chrono::Duration::days(8))
    });
}

/// A flag's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlagState {
    /// Raised by a breach; status 1.
    Flagged,
    /// Blocked by staff; status 2; the customer is blocked.
    Blocked,
    /// Resolved by staff; status 2.
    Resolved,
    /// Unblocked after a block; status 2; the customer is clean again.
    Unblocked,
}

impl FlagState {
    /// The spec's status: 1 pending, 2 resolved.
    pub fn status(self) -> u8 {
        if self == FlagState::Flagged {
            1
        } else {
            2
        }
    }
}

/// What staff do to a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlagAction {
    /// Block the customer (`block_unblock_resolve_contacts` status 2).
    Block,
    /// Unblock (`block_unblock_resolve_contacts` status 3).
    Unblock,
    /// Resolve without blocking (`mark_resolve_contacts`).
    Resolve,
}

/// A refused transition.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("cannot {action:?} a flag that is {state:?}")]
pub struct TransitionRefused {
    /// The flag's state.
    pub state: FlagState,
    /// The refused action.
    pub action: FlagAction,
}

/// The flag state machine.
pub fn transition(state: FlagState, action: FlagAction) -> Result<FlagState, TransitionRefused> {
    match (state, action) {
        (FlagState::Flagged, FlagAction::Block) => Ok(FlagState::Blocked),
        (FlagState::Flagged, FlagAction::Resolve) => Ok(FlagState::Resolved),
        (FlagState::Blocked, FlagAction::Unblock) => Ok(FlagState::Unblocked),
        _ => Err(TransitionRefused { state, action }),
    }
}

/// A fraud flag, as the spec's record (plus `flag_id` and `state`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FraudFlag {
    /// Id.
    pub flag_id: String,
    /// Customer phone.
    pub contact: String,
    /// Customer name.
    pub name: Option<String>,
    /// `Redemption Frequency Limit` or `Points Earning Limit`.
    pub fraud_type: String,
    /// Brand.
    pub parent_business_id: String,
    /// Outlet.
    pub child_business_id: Option<String>,
    /// Why.
    pub block_reason: String,
    /// `System` or a user id.
    pub blocked_by: String,
    /// 1 pending, 2 resolved.
    pub status: u8,
    /// State-machine state.
    pub state: FlagState,
    /// Staff comment.
    pub comment: Option<String>,
    /// Comment on resolution.
    pub resolved_comment: Option<String>,
    /// Who acted.
    pub submitted_by: Option<String>,
    /// Created (RFC 3339).
    pub created_at: String,
    /// Updated (RFC 3339).
    pub updated_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn buckets_are_ist_calendar_periods() {
        // 18:45 UTC is 00:15 IST the next day
        let t = at("2026-11-21T18:45:00Z");
        assert_eq!(bucket(Period::Hour, t), "2026-11-22T00");
        assert_eq!(bucket(Period::Day, t), "2026-11-22");
        assert_eq!(bucket(Period::Week, t), "2026-W47");
    }

    #[test]
    fn the_limit_allows_exactly_l_per_period() {
        let now = at("2026-11-21T10:00:00Z");
        let recent: Vec<RecentTxn> = (0..3)
            .map(|i| RecentTxn { txn_type: TXN_REDEEM, at: format!("2026-11-21T09:{:02}:00Z", i * 10) })
            .collect();
        let already = count_in_period(&recent, TXN_REDEEM, Period::Day, now);
        assert_eq!(already, 3);
        assert!(!breaches(Some(4), already), "the 4th of a limit of 4 is allowed");
        assert!(breaches(Some(3), already), "the 4th of a limit of 3 is the breach");
        assert!(!breaches(None, 1000));
        assert_eq!(count_in_period(&recent, TXN_EARN, Period::Day, now), 0);
        assert_eq!(
            count_in_period(&recent, TXN_REDEEM, Period::Hour, now),
            0,
            "09:xx UTC is another IST hour than 10:00 UTC"
        );
    }

    #[test]
    fn every_transition_and_every_refusal() {
        use FlagAction::*;
        use FlagState::*;
        assert_eq!(transition(Flagged, Block), Ok(Blocked));
        assert_eq!(transition(Flagged, Resolve), Ok(Resolved));
        assert_eq!(transition(Blocked, Unblock), Ok(Unblocked));
        for (state, action) in [
            (Flagged, Unblock),
            (Blocked, Block),
            (Blocked, Resolve),
            (Resolved, Block),
            (Resolved, Unblock),
            (Resolved, Resolve),
            (Unblocked, Block),
            (Unblocked, Unblock),
            (Unblocked, Resolve),
        ] {
            assert_eq!(transition(state, action), Err(TransitionRefused { state, action }));
        }
        assert_eq!(Flagged.status(), 1);
        assert_eq!(Blocked.status(), 2);
    }
}
