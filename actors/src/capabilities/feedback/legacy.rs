//! The legacy feedback SMS queue (spec "States and transitions": processed 0 → drain picks it →
//! 2 → the stored URL is called by GET → 1). engage fills it only through
//! `/crm_api/legacy/feedback_sms` (staff): operators moving from the legacy system put the rows it
//! left, each a ready-made SMS gateway URL, and the `legacy_feedback_drain` job (every 5 minutes)
//! calls them. engage's own feedback links go through the paid SMS and chat queues instead.
//!
//! A row (table `legacy_feedback_sms`, partition `all`, clustering `tenant|id`) is picked
//! (`processed` 2, written before the call), then `processed` 1 on a 2xx answer. A failed call
//! puts it back to 0 with `attempts` + 1, to be retried by the next run; after
//! [`LEGACY_ATTEMPTS`] failed calls it stays at 2 with `given_up`. A row picked by a run that
//! died is picked again by the next run (a GET may then happen twice: the gateway URL is the
//! legacy system's, at-least-once).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

crate::query::question! {
    /// Queue a legacy feedback SMS (a gateway URL the drain calls by GET): [`LegacyQueued`].
    pub struct QueueLegacySms {
        /// The outlet, when given.
        pub business_id: Option<String>,
        /// The gateway URL to GET.
        pub url: String,
        /// The clock.
        pub now: DateTime<Utc>,
    } -> LegacyQueued;
}

/// A queued legacy feedback SMS.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LegacyQueued {
    /// Its id.
    pub id: String,
}

/// Writes the row (processed 0) and lists the brand for the drain, in one batch.
pub(super) async fn queue(
    tenant: &mut crate::tenant_core::Tenant,
    question: QueueLegacySms,
) -> Result<LegacyQueued, crate::query::QueryError> {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let row = LegacySms {
        id: id.clone(),
        parent_business_id: tenant.id.clone(),
        business_id: question.business_id,
        url: question.url,
        processed: 0,
        attempts: 0,
        last_error: None,
        given_up: false,
        inserted_at: question.now,
        process_time: None,
        sent_at: None,
    };
    let put = crate::keys::legacy_sms(&tenant.id, &id, true).put(&row);
    let listed = crate::keys::legacy_sms_tenant(&tenant.id).put(&serde_json::json!({}));
    tenant.batch(vec![put, listed]).await?;
    Ok(LegacyQueued { id })
}

/// Failed calls before a row is given up.
pub const LEGACY_ATTEMPTS: u32 = 5;

/// A legacy feedback SMS.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LegacySms {
    /// Its id.
    pub id: String,
    /// The brand.
    pub parent_business_id: String,
    /// The outlet, when given.
    pub business_id: Option<String>,
    /// The gateway URL to GET.
    pub url: String,
    /// 0 waiting, 2 picked (or given up), 1 sent.
    pub processed: u8,
    /// Failed calls.
    pub attempts: u32,
    /// The last failure.
    pub last_error: Option<String>,
    /// After [`LEGACY_ATTEMPTS`] failures.
    pub given_up: bool,
    /// When it was queued.
    pub inserted_at: DateTime<Utc>,
    /// When it was picked last.
    pub process_time: Option<DateTime<Utc>>,
    /// When the call succeeded.
    pub sent_at: Option<DateTime<Utc>>,
}

impl LegacySms {
    /// Sent, or given up: the drain calls it no more.
    pub fn settled(&self) -> bool {
        self.processed == 1 || self.given_up
    }

    /// Waiting to be called: `processed` 0, or picked by a run that never finished (2, not given
    /// up, picked more than `stale_after` ago).
    pub fn due(&self, now: DateTime<Utc>, stale_after: chrono::Duration) -> bool {
        match self.processed {
            0 => true,
            2 => !self.given_up && self.process_time.is_some_and(|t| now - t > stale_after),
            _ => false,
        }
    }

    /// What a call's outcome makes of it.
    pub fn settle(&mut self, outcome: Result<(), crate::domain::delivery::DeliveryError>, now: DateTime<Utc>) {
        match outcome {
            Ok(()) => {
                self.processed = 1;
                self.sent_at = Some(now);
                self.last_error = None;
            }
            Err(error) => {
                self.attempts += 1;
                self.last_error = Some(error.to_string());
                if self.attempts >= LEGACY_ATTEMPTS {
                    self.given_up = true;
                    self.processed = 2;
                } else {
                    self.processed = 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::delivery::DeliveryError;

    #[test]
    fn failures_go_back_to_waiting_until_given_up() {
        let now = Utc::now();
        let mut row = LegacySms {
            id: "1".into(),
            parent_business_id: "b".into(),
            business_id: None,
            url: "http://x".into(),
            processed: 2,
            attempts: 0,
            last_error: None,
            given_up: false,
            inserted_at: now,
            process_time: Some(now),
            sent_at: None,
        };
        for attempt in 1..LEGACY_ATTEMPTS {
            row.settle(Err(DeliveryError::Refused { what: "gateway", status: "503".into() }), now);
            assert_eq!((row.processed, row.attempts, row.given_up), (0, attempt, false));
        }
        row.settle(Err(DeliveryError::Refused { what: "gateway", status: "503".into() }), now);
        assert_eq!((row.processed, row.given_up), (2, true));
        assert!(!row.due(now + chrono::Duration::hours(1), chrono::Duration::minutes(10)));
        let mut ok = LegacySms { processed: 2, given_up: false, attempts: 0, ..row };
        assert!(ok.due(now + chrono::Duration::minutes(11), chrono::Duration::minutes(10)));
        ok.settle(Ok(()), now);
        assert_eq!(ok.processed, 1);
    }
}
