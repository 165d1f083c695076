//! What each job's run did: one type per job, as `engage jobs run` and `/admin/jobs/run` show it
//! ([`JobOutcome`]), and as a failed run reports what it did before it failed
//! ([`super::JobError::TenantsFailed`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::reviews::Synced;

/// A job's outcome: the shape of the job that ran (the answer names the job beside it).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum JobOutcome {
    /// `sms_drain`, `chat_drain`, `push_drain`.
    Drained(Drained),
    /// A drain with no provider URL configured.
    NotDrained(NotDrained),
    /// `chat_refund`.
    Refunded(Refunded),
    /// `pos_revoke`.
    Revoked(RevokeRun),
    /// `points_expiry`.
    Expired(ExpiryRun),
    /// `journeys`.
    Journeys(JourneyRun),
    /// `abandoned_cart`.
    Carts(CartRun),
    /// `roi_*`.
    Attributed(AttributionRun),
    /// `auto_campaign_sync`.
    FlagsSynced(FlagSyncRun),
    /// `health_reports`.
    Health(HealthRun),
    /// `bill_generation`.
    Bills(BillRun),
    /// `bill_report`.
    BillReport(BillReportRun),
    /// `nps_conversion`.
    Nps(NpsRun),
    /// `feedback_config_sync`.
    FeedbackConfigs(ConfigSyncRun),
    /// `review_sync`.
    Reviews(ReviewRun),
    /// `legacy_feedback_drain`.
    LegacyFeedback(LegacyDrain),
}

impl std::fmt::Display for JobOutcome {
    /// The outcome as JSON (as logged, and as a failed run's error says it).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&serde_json::to_string(self).map_err(|_| std::fmt::Error)?)
    }
}

macro_rules! outcomes {
    ($($ty:ident => $variant:ident),* $(,)?) => {$(
        impl From<$ty> for JobOutcome {
            fn from(outcome: $ty) -> Self {
                JobOutcome::$variant(outcome)
            }
        }
    )*};
}

outcomes!(
    Drained => Drained,
    NotDrained => NotDrained,
    Refunded => Refunded,
    RevokeRun => Revoked,
    ExpiryRun => Expired,
    JourneyRun => Journeys,
    CartRun => Carts,
    AttributionRun => Attributed,
    FlagSyncRun => FlagsSynced,
    HealthRun => Health,
    BillRun => Bills,
    BillReportRun => BillReport,
    NpsRun => Nps,
    ConfigSyncRun => FeedbackConfigs,
    ReviewRun => Reviews,
    LegacyDrain => LegacyFeedback,
);

/// A channel drain.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Drained {
    /// Sends the provider took.
    pub sent: u64,
    /// Sends given up (refused for good, or still failing at the end of the retry window), each
    /// credited back.
    pub failed: u64,
    /// Sends whose attempt now may pass (5xx, 429, no answer): tried again after a backoff.
    pub retrying: u64,
    /// Sends waiting out the backoff of an earlier attempt (not tried in this run).
    pub waiting: u64,
    /// Sends held because the wallet could not pay.
    pub unpaid: u64,
    /// Sends held for the brand's quiet hours.
    pub quiet: u64,
    /// Sends not yet due (a later `not_before`).
    pub scheduled: u64,
    /// Marketing sends given up because the customer unsubscribed after they were queued (each
    /// debit credited back).
    pub unsubscribed: u64,
}

/// A drain that did not run.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NotDrained {
    /// Why: no provider URL configured; the rows stay pending.
    pub skipped: String,
}

/// The chat refund.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Refunded {
    /// Failed chat sends credited back.
    pub refunded: u64,
    /// The amount credited (decimal text).
    pub amount: String,
}

/// The POS redemption revoke.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RevokeRun {
    /// Pending redemptions reverted (the order never came).
    pub reverted: u64,
    /// Pending redemptions confirmed by their order.
    pub confirmed: u64,
    /// Pending redemptions still waiting.
    pub waiting: u64,
}

/// The points expiry.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExpiryRun {
    /// Customers whose points expired.
    pub customers: u64,
    /// Points expired.
    pub points: i64,
    /// Customers left for the next run (their brand could not answer).
    pub postponed: u64,
}

/// The nightly journey run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JourneyRun {
    /// Brands run.
    pub brands: u64,
    /// Customers looked at.
    pub scanned: u64,
    /// Messages queued.
    pub sent: u64,
    /// Customers held out (the control group).
    pub holdout: u64,
    /// Customers skipped (no wallet balance, no template, …).
    pub skipped: u64,
    /// Brands that failed (run the job again).
    pub failed: Vec<String>,
}

/// The abandoned-cart reminders.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CartRun {
    /// Reminders queued.
    pub sent: u64,
    /// Carts not yet due.
    pub waiting: u64,
    /// Carts dropped (ordered since, or too old).
    pub dropped: u64,
    /// Brands whose carts wait for the next run.
    pub postponed: Vec<String>,
}

/// An ROI attribution.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AttributionRun {
    /// Journeys attributed.
    pub journeys: u64,
    /// Sends measured.
    pub measured: u64,
    /// ROI rows written.
    pub rows: u64,
    /// Brands that failed.
    pub failed: Vec<String>,
}

/// The `auto_campaign` flag sync.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FlagSyncRun {
    /// Brands synced.
    pub brands: u64,
    /// Flag records written.
    pub records: u64,
    /// Of which on.
    pub on: u64,
    /// Brands that failed.
    pub failed: Vec<String>,
}

/// The weekly health reports.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HealthRun {
    /// First IST day.
    pub from: String,
    /// Last IST day.
    pub to: String,
    /// Journeys reported.
    pub journeys: u64,
    /// Report files written.
    pub files: Vec<String>,
    /// Whether they were mailed.
    pub mailed: bool,
    /// Brands that failed.
    pub failed: Vec<String>,
}

/// The bill generation.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BillRun {
    /// Brands looked at.
    pub brands: u64,
    /// Orders read.
    pub records: u64,
    /// Bills generated.
    pub generated: u64,
    /// Orders skipped, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Brands that failed.
    pub failed: Vec<String>,
}

/// The daily bill report.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BillReportRun {
    /// The IST day reported.
    pub date: String,
    /// Brands in the report.
    pub brands: u64,
    /// Outlets in the report.
    pub outlets: u64,
    /// Bills not sent, listed.
    pub unsent: u64,
    /// The workbook written.
    pub file: String,
    /// Whether it was mailed.
    pub mailed: bool,
    /// Brands that failed.
    pub failed: Vec<String>,
}

/// The NPS conversion.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NpsRun {
    /// The IST day converted.
    pub date: String,
    /// Brands converted.
    pub brands: u64,
    /// Ratings read.
    pub ratings: u64,
    /// NPS responses written.
    pub responses: u64,
    /// Brands that failed.
    pub failed: Vec<String>,
}

/// The feedback configuration sync.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConfigSyncRun {
    /// Brands synced.
    pub brands: u64,
    /// Outlets that took the brand's configuration.
    pub copied: u64,
    /// Outlets that keep their own.
    pub own: u64,
    /// Brands that failed.
    pub failed: Vec<String>,
}

/// The app-store review sync: each store's totals (absent when no brand names an app there).
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewRun {
    /// Store A.
    #[serde(rename = "a", skip_serializing_if = "Option::is_none")]
    pub a: Option<Synced>,
    /// Store B.
    #[serde(rename = "b", skip_serializing_if = "Option::is_none")]
    pub b: Option<Synced>,
    /// `brand/store` pairs that failed (the next run resumes from the marker).
    pub failed: Vec<String>,
}

/// The legacy feedback SMS drain.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LegacyDrain {
    /// Sent.
    pub sent: u64,
    /// Failed and waiting for another attempt.
    pub retrying: u64,
    /// Given up.
    pub given_up: u64,
}
