//! The loyalty jobs: `pos_revoke` (POS redemptions past their TTL) and `points_expiry`.

use super::*;

impl Jobs {
    /// Reads the pending-redemption index a day bucket at a time (`jobs/due_days.rs`); each due
    /// row's tenant actor reverts or confirms it and removes the row. A row of the legacy
    /// partition is removed here once its actor answered.
    pub(super) async fn revoke(&self, now: DateTime<Utc>) -> Result<RevokeRun, JobError> {
        let (mut reverted, mut confirmed, mut waiting) = (0, 0, 0);
        let mut oldest_left = None;
        for partition in self.due_partitions(PENDING_REDEMPTIONS, now).await? {
            let rows = self.repo.rows(PENDING_REDEMPTIONS, &partition.name).await?;
            let mut done = Vec::new();
            for row in rows {
                let Ok(entry) = serde_json::from_slice::<Value>(&row.value) else { continue };
                let answer =
                    if !reached(entry["expires_at"].as_str(), now) { None } else { self.revoke_one(&entry, now).await };
                match answer {
                    Some(Revoked::Reverted) => reverted += 1,
                    Some(Revoked::Confirmed) => confirmed += 1,
                    Some(Revoked::Waiting) | None => waiting += 1,
                    Some(Revoked::Gone) => {}
                }
                if answer == Some(Revoked::Gone) || (partition.day.is_none() && answer.is_some()) {
                    done.push(WriteOp::Delete {
                        table: PENDING_REDEMPTIONS,
                        partition: partition.name.clone(),
                        clustering: row.clustering,
                    });
                } else if answer.is_none() || answer == Some(Revoked::Waiting) {
                    oldest_left = oldest_left.or(partition.day);
                }
            }
            self.write_all(done).await?;
        }
        self.keep_due_cursor(PENDING_REDEMPTIONS, now, oldest_left).await?;
        Ok(RevokeRun { reverted, confirmed, waiting })
    }

    /// Asks the row's tenant actor to revoke a due pending redemption or coupon use; `None` when
    /// the row is unreadable or the actor could not answer (the row stays for the next run).
    async fn revoke_one(&self, row: &Value, now: DateTime<Utc>) -> Option<Revoked> {
        let outcome = |reverted: bool, confirmed: bool| match (reverted, confirmed) {
            (true, _) => Revoked::Reverted,
            (_, true) => Revoked::Confirmed,
            _ => Revoked::Waiting,
        };
        use crate::query::QueryError;
        let gone = |error: &QueryError| matches!(error, QueryError::NotFound | QueryError::Missing(_));
        let tenant = row["tenant"].as_str()?;
        if row["kind"] == "coupon" {
            let code = row["code"].as_str()?;
            let query = rewards::RevokePendingCoupon { code: code.to_owned(), now: now.to_rfc3339() };
            return match self.ask(tenant, query).await {
                Ok(answer) => Some(outcome(answer.reverted, false)),
                Err(error) if gone(&error) => Some(Revoked::Gone),
                Err(error) => {
                    tracing::warn!(tenant, code, %error, "coupon revoke postponed");
                    None
                }
            };
        }
        let (phone, order_id) = (row["phone"].as_str()?, row["order_id"].as_str()?);
        let query = redemption::Revoke {
            phone: phone.to_owned(),
            order_id: order_id.to_owned(),
            now: now.to_rfc3339(),
            force: false,
        };
        match self.ask(tenant, query).await {
            Ok(answer) => Some(outcome(answer.reverted, answer.confirmed == Some(true))),
            Err(error) if gone(&error) => Some(Revoked::Gone),
            Err(error) => {
                tracing::warn!(tenant, order_id, %error, "revoke postponed");
                None
            }
        }
    }

    /// Walks the expiry index in time order up to `now`, a day bucket at a time (see
    /// [`due_days`]); each customer's tenant actor expires their due lots, then the index row
    /// goes. A failed tenant call leaves its row for the next run.
    pub(super) async fn expire_points(&self, now: DateTime<Utc>) -> Result<ExpiryRun, JobError> {
        let (mut customers, mut points, mut postponed) = (0u64, 0i64, 0u64);
        let mut oldest_left = None;
        for partition in self.due_partitions(POINTS_EXPIRY, now).await? {
            let mut after: Option<Vec<u8>> = None;
            'scan: loop {
                let rows = self.repo.store().scan(POINTS_EXPIRY, &partition.name, after.as_deref(), 500).await?;
                let Some(last) = rows.last() else { break };
                after = Some(last.clustering.clone());
                let mut done = Vec::new();
                for row in rows {
                    let Ok(entry) = serde_json::from_slice::<Value>(&row.value) else { continue };
                    if !reached(entry["expires_at"].as_str(), now) {
                        // the bucket is in time order: nothing after this is due either
                        oldest_left = oldest_left.or(partition.day);
                        self.write_all(done).await?;
                        break 'scan;
                    }
                    let (Some(tenant), Some(phone)) = (entry["tenant"].as_str(), entry["phone"].as_str()) else {
                        continue;
                    };
                    let query = ExpirePoints { phone: phone.to_owned(), now: now.to_rfc3339() };
                    match self.ask(tenant, query).await {
                        Ok(answer) => {
                            let expired = answer.expired;
                            if expired > 0 {
                                customers += 1;
                                points += expired;
                            }
                            done.push(WriteOp::Delete {
                                table: POINTS_EXPIRY,
                                partition: partition.name.clone(),
                                clustering: row.clustering,
                            });
                        }
                        Err(error) => {
                            postponed += 1;
                            oldest_left = oldest_left.or(partition.day);
                            tracing::warn!(tenant, %error, "points expiry postponed");
                        }
                    }
                }
                self.write_all(done).await?;
            }
        }
        self.keep_due_cursor(POINTS_EXPIRY, now, oldest_left).await?;
        Ok(ExpiryRun { customers, points, postponed })
    }
}

/// What a tenant actor did with a due pending redemption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Revoked {
    Reverted,
    Confirmed,
    Waiting,
    /// The customer or the coupon is gone: nothing to revoke, the index row goes.
    Gone,
}
