//! The feedback jobs: `legacy_feedback_drain`, `feedback_config_sync`, `nps_conversion`.

use super::*;
use crate::capabilities::feedback::{NpsConvert, SyncConfigs};
use crate::domain::delivery::DeliveryError;

impl Jobs {
    /// The legacy feedback SMS drain: every due row of each brand's pending partition is picked
    /// (processed 2), its URL called by GET, and settled (1 sent; back to 0 to retry; given up
    /// after 5 failures). A row sent or given up moves to the brand's `done` partition, so a run
    /// reads only rows still to call.
    pub(super) async fn drain_legacy_feedback(&self, now: DateTime<Utc>) -> Result<LegacyDrain, JobError> {
        use crate::capabilities::feedback::legacy::LegacySms;
        let stale = chrono::Duration::minutes(10);
        self.move_legacy_sms().await?;
        let mut due: Vec<LegacySms> = Vec::new();
        for tenant in self.tenants(crate::repo::LEGACY_SMS_BRANDS).await? {
            if due.len() >= DRAIN_BATCH {
                break;
            }
            let partition = keys::legacy_sms_partition(&tenant, true);
            let rows: Vec<LegacySms> = self.repo.all(crate::repo::LEGACY_FEEDBACK_SMS, &partition).await?;
            due.extend(rows.into_iter().filter(|r| r.due(now, stale)).take(DRAIN_BATCH - due.len()));
        }
        let picked: Vec<WriteOp> = due
            .iter()
            .map(|row| {
                let mut row = row.clone();
                row.processed = 2;
                row.process_time = Some(now);
                keys::legacy_sms(&row.parent_business_id, &row.id, true).put(&row)
            })
            .collect();
        self.write_all(picked).await?;
        let results: Vec<(LegacySms, Result<(), DeliveryError>)> = futures::stream::iter(due)
            .map(|row| async move {
                let outcome = match self.client.get(&row.url).send().await {
                    Ok(response) if response.status().is_success() => Ok(()),
                    Ok(response) => {
                        Err(DeliveryError::Refused { what: "gateway", status: response.status().to_string() })
                    }
                    Err(error) => Err(DeliveryError::Unreachable { what: "gateway", error: error.to_string() }),
                };
                (row, outcome)
            })
            .buffer_unordered(DRAIN_CONCURRENCY)
            .collect()
            .await;
        let (mut sent, mut retrying, mut given_up) = (0, 0, 0);
        let mut settled = Vec::with_capacity(results.len());
        for (mut row, outcome) in results {
            row.process_time = Some(now);
            row.settle(outcome, now);
            match (row.processed, row.given_up) {
                (1, _) => sent += 1,
                (_, true) => given_up += 1,
                _ => retrying += 1,
            }
            let done = row.settled();
            if done {
                settled.push(keys::legacy_sms(&row.parent_business_id, &row.id, true).delete());
            }
            settled.push(keys::legacy_sms(&row.parent_business_id, &row.id, !done).put(&row));
        }
        self.write_all(settled).await?;
        metrics::counter!("engage_legacy_feedback_sms_total", "outcome" => "sent").increment(sent);
        metrics::counter!("engage_legacy_feedback_sms_total", "outcome" => "failed").increment(retrying + given_up);
        Ok(LegacyDrain { sent, retrying, given_up })
    }

    /// Moves rows queued before each brand had its own partitions (partition `all`) into them.
    async fn move_legacy_sms(&self) -> Result<(), JobError> {
        use crate::capabilities::feedback::legacy::LegacySms;
        let legacy: Vec<LegacySms> = self.repo.all(crate::repo::LEGACY_FEEDBACK_SMS, keys::LEGACY_SMS_ALL).await?;
        let moves = legacy
            .iter()
            .map(|row| {
                let key = keys::legacy_sms(&row.parent_business_id, &row.id, !row.settled());
                let old = WriteOp::Delete {
                    table: crate::repo::LEGACY_FEEDBACK_SMS,
                    partition: keys::LEGACY_SMS_ALL.to_owned(),
                    clustering: key.clustering.clone(),
                };
                [old, key.put(row), keys::legacy_sms_tenant(&row.parent_business_id).put(&json!({}))]
            })
            .collect();
        self.move_rows(moves).await
    }

    /// The 12:06 feedback config sync, brand by brand.
    pub(super) async fn sync_feedback_configs(&self, now: DateTime<Utc>) -> Result<ConfigSyncRun, JobError> {
        let (mut tenants, mut copied, mut own) = (0, 0, 0);
        let query = || SyncConfigs { now };
        let failed = self
            .each_tenant(FEEDBACK_BRANDS, "feedback config sync", query, |_, done: ConfigsSynced| {
                tenants += 1;
                copied += done.copied;
                own += done.own;
            })
            .await?;
        all_tenants(
            ConfigSyncRun { brands: tenants, copied: copied as u64, own: own as u64, failed: failed.clone() },
            &failed,
        )
    }

    /// The NPS conversion of the IST day before `now`'s, brand by brand.
    pub(super) async fn convert_nps(&self, now: DateTime<Utc>) -> Result<NpsRun, JobError> {
        let day = ist_day(now - chrono::Duration::days(1));
        let (mut tenants, mut ratings, mut responses) = (0, 0, 0);
        let query = || NpsConvert { day: day.clone() };
        let failed = self
            .each_tenant(FEEDBACK_BRANDS, "NPS conversion", query, |_, done: Converted| {
                tenants += 1;
                ratings += done.ratings;
                responses += done.responses;
            })
            .await?;
        let outcome = NpsRun { date: day, brands: tenants, ratings, responses, failed: failed.clone() };
        all_tenants(outcome, &failed)
    }
}
