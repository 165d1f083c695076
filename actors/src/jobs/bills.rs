//! The digital-bill jobs: `bill_generation` and `bill_report`.

use super::*;
use crate::capabilities::bills::{Generate, Report};

impl Jobs {
    /// Bill generation as at `now`: each brand's queue records of yesterday and today (IST) with
    /// status 1 and source 2, 10,000 a page, in the brand's tenant actor.
    pub(super) async fn generate_bills(&self, now: DateTime<Utc>) -> Result<BillRun, JobError> {
        let (mut tenants, mut records, mut generated) = (0, 0u64, 0u64);
        let mut skipped: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
        let mut failed = Vec::new();
        let days = [ist_day(now - chrono::Duration::days(1)), ist_day(now)];
        for tenant in self.tenants(BILL_BRANDS).await? {
            tenants += 1;
            'days: for day in &days {
                let mut after = None;
                loop {
                    let query = Generate { now, day: day.clone(), after: after.take() };
                    match self.ask(&tenant, query).await {
                        Ok(page) => {
                            records += page.records;
                            generated += page.generated;
                            for (reason, n) in page.skipped {
                                *skipped.entry(reason).or_default() += n;
                            }
                            match page.next {
                                Some(next) => after = Some(next),
                                None => break,
                            }
                        }
                        Err(error) => {
                            tracing::error!(tenant, %error, "bill generation failed for a brand");
                            failed.push(tenant.clone());
                            break 'days;
                        }
                    }
                }
            }
        }
        let outcome = BillRun { brands: tenants, records, generated, skipped, failed: failed.clone() };
        all_tenants(outcome, &failed)
    }

    /// The daily bill report of the IST day before `now`'s: every brand's figures in one workbook
    /// under `<data dir>/reports/bills-<day>/`, mailed when a mail service is set.
    pub(super) async fn bill_report(&self, now: DateTime<Utc>) -> Result<BillReportRun, JobError> {
        let day = ist_day(now - chrono::Duration::days(1));
        let mut figures = Vec::new();
        let query = || Report { day: day.clone() };
        let failed =
            self.each_tenant(BILL_BRANDS, "bill report", query, |_, report: BillReport| figures.push(report)).await?;
        let dir = self.providers.reports_dir.join(format!("bills-{day}"));
        let file =
            reports::write_bills(&dir, &figures).map_err(|e| JobError::Report(format!("report not written: {e}")))?;
        let letter =
            reports::Letter { report: "digital-bills", subject: format!("Digital bills, {day}"), from: &day, to: &day };
        let mailed = self.mail(&letter, std::slice::from_ref(&file), &dir).await?;
        let outlets: usize = figures.iter().map(|f| f.funnel.len()).sum();
        let unsent: usize = figures.iter().map(|f| f.unsent.len()).sum();
        let outcome = BillReportRun {
            date: day,
            brands: figures.len() as u64,
            outlets: outlets as u64,
            unsent: unsent as u64,
            file: file.display().to_string(),
            mailed,
            failed: failed.clone(),
        };
        all_tenants(outcome, &failed)
    }
}
