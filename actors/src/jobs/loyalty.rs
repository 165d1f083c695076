//! The loyalty jobs: `pos_revoke` (POS redemptions past their TTL) and `points_expiry`.

use super::*;

impl Jobs {
    pub(super) async fn revoke(&self, now: DateTime<Utc>) -> Result<Value, JobError> {
        let rows = self.repo.all_json(PENDING_REDEMPTIONS, "due").await?;
        let (mut reverted, mut confirmed, mut waiting) = (0, 0, 0);
        for row in rows {
            if !reached(row["expires_at"].as_str(), now) {
                waiting += 1;
                continue;
            }
            if row["kind"] == "coupon" {
                let (Some(tenant), Some(code)) = (row["tenant"].as_str(), row["code"].as_str()) else { continue };
                let query = RewardsQuery::RevokePendingCoupon { code: code.to_owned(), now: now.to_rfc3339() };
                match self.gateway.ask(tenant, query).await {
                    Ok(answer) if answer["reverted"] == true => reverted += 1,
                    Ok(_) => waiting += 1,
                    Err(error) => tracing::warn!(tenant, code, %error, "coupon revoke postponed"),
                }
                continue;
            }
            let (Some(tenant), Some(phone), Some(order_id)) =
                (row["tenant"].as_str(), row["phone"].as_str(), row["order_id"].as_str())
            else {
                continue;
            };
            let query = RedemptionQuery::Revoke {
                phone: phone.to_owned(),
                order_id: order_id.to_owned(),
                now: now.to_rfc3339(),
                force: false,
            };
            match self.gateway.ask(tenant, query).await {
                Ok(answer) if answer["reverted"] == true => reverted += 1,
                Ok(answer) if answer["confirmed"] == true => confirmed += 1,
                Ok(_) => waiting += 1,
                Err(error) => tracing::warn!(tenant, order_id, %error, "revoke postponed"),
            }
        }
        Ok(json!({"reverted": reverted, "confirmed": confirmed, "waiting": waiting}))
    }

    /// Walks the expiry index in time order up to `now`; each customer's tenant actor expires
    /// their due lots, then the index row goes. A failed tenant call leaves its row for the next
    /// run.
    pub(super) async fn expire_points(&self, now: DateTime<Utc>) -> Result<Value, JobError> {
        let (mut customers, mut points, mut postponed) = (0u64, 0i64, 0u64);
        let mut after: Option<Vec<u8>> = None;
        'scan: loop {
            let rows = self.repo.store().scan(POINTS_EXPIRY, "due", after.as_deref(), 500).await?;
            let Some(last) = rows.last() else { break };
            after = Some(last.clustering.clone());
            let mut done = Vec::new();
            for row in rows {
                let Ok(entry) = serde_json::from_slice::<Value>(&row.value) else { continue };
                if !reached(entry["expires_at"].as_str(), now) {
                    // the index is in time order: nothing after this is due either
                    self.unindex(done).await?;
                    break 'scan;
                }
                let (Some(tenant), Some(phone)) = (entry["tenant"].as_str(), entry["phone"].as_str()) else { continue };
                let query = LoyaltyQuery::ExpirePoints { phone: phone.to_owned(), now: now.to_rfc3339() };
                match self.gateway.ask(tenant, query).await {
                    Ok(answer) => {
                        let expired = answer["expired"].as_i64().unwrap_or(0);
                        if expired > 0 {
                            customers += 1;
                            points += expired;
                        }
                        done.push(WriteOp::Delete {
                            table: POINTS_EXPIRY,
                            partition: "due".into(),
                            clustering: row.clustering,
                        });
                    }
                    Err(error) => {
                        postponed += 1;
                        tracing::warn!(tenant, %error, "points expiry postponed");
                    }
                }
            }
            self.unindex(done).await?;
        }
        Ok(json!({"customers": customers, "points": points, "postponed": postponed}))
    }

    pub(super) async fn unindex(&self, ops: Vec<WriteOp>) -> Result<(), JobError> {
        if ops.is_empty() {
            return Ok(());
        }
        Ok(self.repo.store().batch(ops).await?)
    }
}
