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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// A customer's velocity counters: `"<txn_type>|<period>|<bucket>" -> count`, for the current
/// bucket of each period only (older buckets are dropped), so the row stays small however many
/// transactions a customer makes.
pub type Counters = std::collections::BTreeMap<String, u32>;

fn period_name(period: Period) -> &'static str {
    match period {
        Period::Hour => "hour",
        Period::Day => "day",
        Period::Week => "week",
    }
}

fn counter_key(txn_type: u8, period: Period, at: DateTime<Utc>) -> String {
    format!("{txn_type}|{}|{}", period_name(period), bucket(period, at))
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

/// Transactions of `txn_type` already in `now`'s bucket of `period`.
pub fn count_in_period(counters: &Counters, txn_type: u8, period: Period, now: DateTime<Utc>) -> u32 {
    counters.get(&counter_key(txn_type, period, now)).copied().unwrap_or(0)
}

/// Takes back one transaction of `txn_type` counted at `at` (a refunded order's earn), in every
/// period whose bucket is still kept; a count never goes below zero.
pub fn unrecord(counters: &mut Counters, txn_type: u8, at: DateTime<Utc>) {
    for period in [Period::Hour, Period::Day, Period::Week] {
        let key = counter_key(txn_type, period, at);
        if let Some(count) = counters.get_mut(&key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                counters.remove(&key);
            }
        }
    }
}

/// Counts one transaction of `txn_type` at `at` in every period, and drops buckets older than
/// `at`'s.
pub fn record(counters: &mut Counters, txn_type: u8, at: DateTime<Utc>) {
    for period in [Period::Hour, Period::Day, Period::Week] {
        *counters.entry(counter_key(txn_type, period, at)).or_default() += 1;
    }
    counters.retain(|key, _| {
        let mut parts = key.splitn(3, '|');
        let (_, name, bucket_of_key) =
            (parts.next(), parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
        let period = match name {
            "hour" => Period::Hour,
            "day" => Period::Day,
            _ => Period::Week,
        };
        bucket_of_key >= bucket(period, at).as_str()
    });
}

/// Whether one more transaction breaches `limit`, `already` being in the period.
pub fn breaches(limit: Option<u32>, already: u32) -> bool {
    limit.is_some_and(|limit| already >= limit)
}

/// A flag's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FraudFlag {
    /// Id.
    pub flag_id: String,
    /// Customer phone.
    pub contact: String,
    /// Customer name.
    pub name: Option<String>,
    /// `Redemption Frequency Limit` or `Points Earning Limit`.
    pub fraud_type: String,
    /// Tenant.
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
    /// Created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// Updated.
    pub updated_at: chrono::DateTime<chrono::Utc>,
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
        let mut counters = Counters::new();
        for minute in [0, 10, 20] {
            record(&mut counters, TXN_REDEEM, at(&format!("2026-11-21T09:{minute:02}:00Z")));
        }
        let already = count_in_period(&counters, TXN_REDEEM, Period::Day, now);
        assert_eq!(already, 3);
        assert!(!breaches(Some(4), already), "the 4th of a limit of 4 is allowed");
        assert!(breaches(Some(3), already), "the 4th of a limit of 3 is the breach");
        assert!(!breaches(None, 1000));
        assert_eq!(count_in_period(&counters, TXN_EARN, Period::Day, now), 0);
        assert_eq!(
            count_in_period(&counters, TXN_REDEEM, Period::Hour, now),
            0,
            "09:xx UTC is another IST hour than 10:00 UTC"
        );
        assert_eq!(count_in_period(&counters, TXN_REDEEM, Period::Week, now), 3);
    }

    #[test]
    fn counters_stay_small() {
        let mut counters = Counters::new();
        for day in 1..=20 {
            record(&mut counters, TXN_REDEEM, at(&format!("2026-11-{day:02}T10:00:00Z")));
            record(&mut counters, TXN_EARN, at(&format!("2026-11-{day:02}T10:00:00Z")));
        }
        assert_eq!(counters.len(), 6, "one bucket per kind and period: {counters:?}");
        assert_eq!(count_in_period(&counters, TXN_REDEEM, Period::Day, at("2026-11-20T12:00:00Z")), 1);
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
