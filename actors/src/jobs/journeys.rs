//! The journey jobs: the nightly run (`journeys`, 22:00 IST), `abandoned_cart`, the `roi_*` attributions, `auto_campaign_sync`, `health_reports`.

use super::*;
use crate::capabilities::journeys::{Attribute, Carts, GetHealth, GetRunPage, SyncFlags};

impl Jobs {
    /// The nightly journey run as at `now`: each brand's tenant actor runs its pages in turn. A
    /// brand that fails is reported (the job fails) after the others ran; running the job again
    /// finishes it and sends nothing twice.
    pub(super) async fn nightly(&self, now: DateTime<Utc>) -> Result<JourneyRun, JobError> {
        let (mut tenants, mut scanned, mut sent, mut holdout, mut skipped) = (0, 0usize, 0u64, 0u64, 0u64);
        let mut failed = Vec::new();
        for tenant in self.tenants(JOURNEY_BRANDS).await? {
            let mut after = None;
            let outcome = loop {
                let query = GetRunPage { now, after: after.clone() };
                match self.ask(&tenant, query).await {
                    Ok(page) => {
                        scanned += page.scanned;
                        sent += u64::from(page.sent);
                        holdout += u64::from(page.holdout);
                        skipped += u64::from(page.skipped);
                        match page.next {
                            Some(next) => after = Some(next),
                            None => break Ok(()),
                        }
                    }
                    Err(error) => break Err(error),
                }
            };
            match outcome {
                Ok(()) => tenants += 1,
                Err(error) => {
                    tracing::error!(tenant, %error, "nightly journey run failed for a brand; run the job again");
                    failed.push(tenant);
                }
            }
        }
        metrics::counter!("engage_journey_customers_scanned_total").increment(scanned as u64);
        let outcome =
            JourneyRun { brands: tenants, scanned: scanned as u64, sent, holdout, skipped, failed: failed.clone() };
        all_tenants(outcome, &failed)
    }

    /// The abandoned-cart reminders as at `now`: the open carts, brand by brand.
    pub(super) async fn abandoned_carts(&self, now: DateTime<Utc>) -> Result<CartRun, JobError> {
        self.move_legacy_carts().await?;
        let (mut sent, mut waiting, mut dropped) = (0, 0, 0);
        let mut failed = Vec::new();
        for tenant in self.tenants(CART_BRANDS).await? {
            let carts: Vec<OpenCart> = self.repo.all(OPEN_CARTS, &keys::open_carts_partition(&tenant)).await?;
            if carts.is_empty() {
                continue;
            }
            match self.ask(&tenant, Carts { now, carts }).await {
                Ok(done) => {
                    sent += done.sent;
                    waiting += done.waiting;
                    dropped += done.dropped;
                }
                Err(error) => {
                    tracing::error!(tenant, %error, "abandoned carts postponed");
                    failed.push(tenant);
                }
            }
        }
        Ok(CartRun { sent: sent.into(), waiting: waiting.into(), dropped: dropped.into(), postponed: failed })
    }

    /// Moves carts indexed before each brand had its own partition (partition `all`) into their
    /// brands' partitions, each with its brand listed, and empties the old partition.
    async fn move_legacy_carts(&self) -> Result<(), JobError> {
        let legacy: Vec<OpenCart> = self.repo.all(OPEN_CARTS, keys::LEGACY_OPEN_CARTS).await?;
        let moves = legacy
            .iter()
            .map(|cart| {
                let key = cart.key();
                let old = WriteOp::Delete {
                    table: OPEN_CARTS,
                    partition: keys::LEGACY_OPEN_CARTS.to_owned(),
                    clustering: key.clustering.clone(),
                };
                [old, key.put(cart), keys::cart_tenant(&cart.tenant).put(&json!({}))]
            })
            .collect();
        self.move_rows(moves).await
    }

    /// ROI attribution of the journeys of `types` as at `now`, brand by brand.
    pub(super) async fn attribute(&self, types: &[&str], now: DateTime<Utc>) -> Result<AttributionRun, JobError> {
        let campaign_types: Vec<String> = types.iter().map(|t| (*t).to_owned()).collect();
        let (mut journeys, mut measured, mut rows) = (0, 0, 0);
        let query = || Attribute { now, campaign_types: campaign_types.clone() };
        let failed = self
            .each_tenant(JOURNEY_BRANDS, "ROI attribution", query, |_, done: Attributed| {
                journeys += done.journeys;
                measured += done.measured;
                rows += done.rows;
            })
            .await?;
        let outcome = AttributionRun {
            journeys: journeys as u64,
            measured: measured as u64,
            rows: rows as u64,
            failed: failed.clone(),
        };
        all_tenants(outcome, &failed)
    }

    /// The daily `auto_campaign` flag sync, brand by brand.
    pub(super) async fn sync_flags(&self, now: DateTime<Utc>) -> Result<FlagSyncRun, JobError> {
        let (mut tenants, mut records, mut on) = (0, 0, 0);
        let failed = self
            .each_tenant(
                JOURNEY_BRANDS,
                "auto_campaign flag sync",
                || SyncFlags { now },
                |_, done: FlagsSynced| {
                    tenants += 1;
                    records += done.records;
                    on += done.on;
                },
            )
            .await?;
        let outcome = FlagSyncRun { brands: tenants, records: records as u64, on: on as u64, failed: failed.clone() };
        all_tenants(outcome, &failed)
    }

    /// The weekly health reports: the 7 IST days before `now`'s day, every brand's journeys.
    pub(super) async fn health_reports(&self, now: DateTime<Utc>) -> Result<HealthRun, JobError> {
        let (from, to) = (ist_day(now - chrono::Duration::days(7)), ist_day(now - chrono::Duration::days(1)));
        let mut rows = Vec::new();
        let query = || GetHealth { from: from.clone(), to: to.clone() };
        let failed = self
            .each_tenant(JOURNEY_BRANDS, "health report", query, |_, health: Health| rows.extend(health.data))
            .await?;
        let dir = self.providers.reports_dir.join(format!("health-{from}_{to}"));
        let files = reports::write_health(&dir, &from, &to, &rows)
            .map_err(|e| JobError::Report(format!("reports not written: {e}")))?;
        let letter = reports::Letter {
            report: "journey-health",
            subject: format!("Journey health reports, {from} to {to}"),
            from: &from,
            to: &to,
        };
        let mailed = self.mail(&letter, &files, &dir).await?;
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let outcome = HealthRun { from, to, journeys: rows.len() as u64, files, mailed, failed: failed.clone() };
        all_tenants(outcome, &failed)
    }
}
