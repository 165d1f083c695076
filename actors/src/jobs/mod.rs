//! Scheduled jobs (spec "Scheduled jobs", IST): one scheduler per node; in distributed mode each
//! occurrence of a job runs on one node only (it claims `job.<name>.<time>` in the lease bucket).
//! A drain runs alone, on a node and across nodes, whoever started it ([`Jobs::exclusive`]).
//!
//! | job | default cron (sec min hour day month weekday, IST) | what it does | code |
//! |---|---|---|---|
//! | `sms_drain` | `0 */3 * * * *` | delivers pending rows of yesterday's and today's `sms_queue_<YYYYMMDD>`, at most 8000 a run | [`drains`] |
//! | `chat_drain` | `30 */3 * * * *` | the same for `chat_queue_<YYYYMMDD>` (`process_status` 0 → 1 sent / 2 failed) | [`drains`] |
//! | `push_drain` | `0 */5 * * * *` | the same for `push_queue_<YYYYMMDD>` | [`drains`] |
//! | `pos_revoke` | `15 */5 * * * *` | reverts POS redemptions past their TTL whose order never arrived | [`loyalty`] |
//! | `chat_refund` | `0 0 0 * * *` | refunds failed chat sends of the last 7 days to the paying wallet (once each) | [`drains`] |
//! | `points_expiry` | `0 5 0 * * *` | expires loyalty points whose expiry has passed (earned points are usable through the last IST day of their validity and expire at the following IST midnight) | [`loyalty`] |
//! | `journeys` | `0 0 22 * * *` | the nightly journey run: every brand with journeys, a page of 1,000 customers at a time, in the brand's tenant actor (birthday, anniversary, lost customers, wallet expiry), queued for the next IST day | [`journeys`] |
//! | `abandoned_cart` | `0 */5 * * * *` | hands each brand's open carts to its tenant actor, which reminds those left for the journey's trigger minutes (once per customer per IST day) | [`journeys`] |
//! | `roi_lost_customers` | `0 0 0 * * *` | ROI attribution of lost-customers journeys | [`journeys`] |
//! | `roi_referral` | `0 30 5 * * *` | ROI attribution of referral-boost journeys | [`journeys`] |
//! | `roi_journeys` | `0 0 6 * * *` | ROI attribution of birthday, anniversary, wallet-expiry and low-rating journeys | [`journeys`] |
//! | `roi_abandoned_cart` | `0 30 6 * * *` | ROI attribution of abandoned-cart journeys | [`journeys`] |
//! | `roi_welcome` | `0 30 7 * * *` | ROI attribution of welcome journeys | [`journeys`] |
//! | `auto_campaign_sync` | `0 47 12 * * *` | sets each brand's and outlet's `business_configs.auto_campaign` (1 when a journey of theirs is enabled and configured) | [`journeys`] |
//! | `health_reports` | `0 0 12 * * Mon` | writes the five journey health workbooks of the last 7 IST days under `<data dir>/reports/` and POSTs them to `ENGAGE_MAIL_SERVICE_URL` when set ([`crate::reports`]) | [`journeys`] |
//! | `bill_generation` | `0 57 9 * * *` | digital bills for each brand's queue records of yesterday and today with status 1 and source 2 that the order reaction did not bill (a configuration added later, a wallet recharged), 10,000 a page, in the brand's tenant actor; skips counted by reason | [`bills`] |
//! | `bill_report` | `0 32 11 * * *` | the digital-bill workbook of yesterday (vs one and two weeks earlier; skips; enabled-but-unsent businesses with the reason) under `<data dir>/reports/bills-<day>/`, POSTed to `ENGAGE_MAIL_SERVICE_URL` when set | [`bills`] |
//! | `feedback_config_sync` | `0 6 12 * * *` | a brand's feedback configuration with `feedback_flow` 1 is copied to each outlet it knows (wallets, business records) that has no record of its own; copies are refreshed daily | [`feedback`] |
//! | `review_sync` | `0 0 */3 * * *` | app-store reviews of each brand's apps (store A, store B), upserted by review id, from each brand's last-reviewed marker ([`crate::reviews`]) | [`reviews`] |
//! | `legacy_feedback_drain` | `0 */5 * * * *` | the legacy feedback SMS queue: due rows picked (`processed` 2), their gateway URL called by GET, then 1; a failure goes back to 0 and is retried, given up after 5 | [`feedback`] |
//! | `nps_conversion` | `0 0 6 * * *` | yesterday's feedback-form ratings (source `'3'`) of every brand with feedback become NPS responses (a rating of 5 or less doubled), once each | [`feedback`] |
//!
//! `mod.rs` holds the job names, the schedule and the dispatch ([`Jobs::run`]); each job's code is
//! in the file of its area (last column), the scheduler, claims and [`Jobs::exclusive`] in
//! [`scheduler`].
//!
//! A send with a `not_before` (a digital bill's `scheduled_at`) stays queued until then.
//! Quiet hours: a drain leaves a brand's campaign sends (`purpose` `campaign`) queued while the
//! brand's quiet hours (IST) last; they go out on the first drain after.
//!
//! Provider adapter (HTTP, ours): `POST <provider url>` with `Authorization: Bearer <token>` and
//! `{send_id, to, message, channel, template_type, business_id}` (plus `template_id` and
//! `sender_id` when the send names them, and `buttons: [{text, url}]` for a chat button, whose `url` is the signed tracking
//! link of [`crate::signed_links`]); a 2xx answer is delivered (its
//! JSON `id`, if any, is kept as `provider_message_id`); anything else is a failure, retried on
//! the next runs, failed for good after 3 attempts. Without a provider URL a drain leaves the rows
//! pending. A brand with its own sender on the channel sends through it instead, in its
//! provider's format ([`providers`], `docs/senders.md`). `engage jobs run NAME [--now T]` runs a job at once (optionally as of time `T`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use engage_storage::WriteOp;

use crate::capabilities::bills::BillReport;
use crate::capabilities::feedback::nps::Converted;
use crate::capabilities::feedback::ConfigsSynced;
use crate::capabilities::journeys::{Attributed, FlagsSynced, Health, JourneySettings, OpenCart, QuietHours};
use crate::capabilities::loyalty::ExpirePoints;
use crate::capabilities::redemption;
use crate::capabilities::rewards;
use crate::capabilities::wallet::{ChatButton, QueuedSend, WalletTxn};
use crate::domain::time::{ist, ist_day, reached};
use crate::domain::wallet::{Channel, Purpose, Wallet};
use crate::keys;
use crate::repo::{
    Repo, BILL_BRANDS, CART_BRANDS, CHANNEL_QUEUE, CHANNEL_WORK, FEEDBACK_BRANDS, JOURNEY_BRANDS, OPEN_CARTS,
    PENDING_REDEMPTIONS, POINTS_EXPIRY,
};
use crate::reports;
use crate::rpc::TenantGateway;
use crate::signed_links::Links;

mod bills;
mod drains;
mod due_days;
mod fcm;
mod feedback;
mod journeys;
mod loyalty;
mod outcomes;
mod providers;
mod reviews;
mod scheduler;

pub use outcomes::*;

/// Rows a drain delivers per run at most.
pub const DRAIN_BATCH: usize = 8000;
/// Deliveries in flight at once.
const DRAIN_CONCURRENCY: usize = 16;

/// The jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobName {
    /// SMS queue drain.
    SmsDrain,
    /// Chat queue drain.
    ChatDrain,
    /// Push queue drain.
    PushDrain,
    /// POS redemption revoke.
    PosRevoke,
    /// Failed chat refund.
    ChatRefund,
    /// Loyalty points expiry.
    PointsExpiry,
    /// The nightly journey run.
    Journeys,
    /// Abandoned-cart reminders.
    AbandonedCart,
    /// Lost-customers ROI.
    RoiLostCustomers,
    /// Referral ROI.
    RoiReferral,
    /// Birthday, anniversary and wallet-expiry ROI.
    RoiJourneys,
    /// Abandoned-cart ROI.
    RoiAbandonedCart,
    /// Welcome ROI.
    RoiWelcome,
    /// The `business_configs.auto_campaign` flag sync.
    AutoCampaignSync,
    /// The weekly journey health reports.
    HealthReports,
    /// Digital bill generation (catch-up of what the order reaction could not do).
    BillGeneration,
    /// The daily digital bill report.
    BillReport,
    /// Yesterday's feedback-form ratings become NPS responses.
    NpsConversion,
    /// The brand's feedback configuration copied to its outlets.
    FeedbackConfigSync,
    /// App-store reviews.
    ReviewSync,
    /// The legacy feedback SMS queue.
    LegacyFeedbackDrain,
}

impl JobName {
    /// Every job.
    pub const ALL: [JobName; 21] = [
        JobName::SmsDrain,
        JobName::ChatDrain,
        JobName::PushDrain,
        JobName::PosRevoke,
        JobName::ChatRefund,
        JobName::PointsExpiry,
        JobName::Journeys,
        JobName::AbandonedCart,
        JobName::RoiLostCustomers,
        JobName::RoiReferral,
        JobName::RoiJourneys,
        JobName::RoiAbandonedCart,
        JobName::RoiWelcome,
        JobName::AutoCampaignSync,
        JobName::HealthReports,
        JobName::BillGeneration,
        JobName::BillReport,
        JobName::NpsConversion,
        JobName::FeedbackConfigSync,
        JobName::ReviewSync,
        JobName::LegacyFeedbackDrain,
    ];

    /// The job's name.
    pub fn as_str(self) -> &'static str {
        match self {
            JobName::SmsDrain => "sms_drain",
            JobName::ChatDrain => "chat_drain",
            JobName::PushDrain => "push_drain",
            JobName::PosRevoke => "pos_revoke",
            JobName::ChatRefund => "chat_refund",
            JobName::PointsExpiry => "points_expiry",
            JobName::Journeys => "journeys",
            JobName::AbandonedCart => "abandoned_cart",
            JobName::RoiLostCustomers => "roi_lost_customers",
            JobName::RoiReferral => "roi_referral",
            JobName::RoiJourneys => "roi_journeys",
            JobName::RoiAbandonedCart => "roi_abandoned_cart",
            JobName::RoiWelcome => "roi_welcome",
            JobName::AutoCampaignSync => "auto_campaign_sync",
            JobName::HealthReports => "health_reports",
            JobName::BillGeneration => "bill_generation",
            JobName::BillReport => "bill_report",
            JobName::NpsConversion => "nps_conversion",
            JobName::FeedbackConfigSync => "feedback_config_sync",
            JobName::ReviewSync => "review_sync",
            JobName::LegacyFeedbackDrain => "legacy_feedback_drain",
        }
    }

    /// The journey types an ROI job attributes.
    pub fn roi_types(self) -> &'static [&'static str] {
        match self {
            JobName::RoiLostCustomers => &["lost_customers"],
            JobName::RoiReferral => &["referral_boost"],
            JobName::RoiJourneys => &["birthday", "anniversary", "wallet_expiry", "low_rating"],
            JobName::RoiAbandonedCart => &["abandoned_cart"],
            JobName::RoiWelcome => &["welcome"],
            _ => &[],
        }
    }

    /// By name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|j| j.as_str() == name)
    }
}

/// Provider endpoints.
#[derive(Clone, Default)]
pub struct Providers {
    /// SMS provider URL.
    pub sms: Option<String>,
    /// Chat provider URL.
    pub chat: Option<String>,
    /// Push provider URL.
    pub push: Option<String>,
    /// Bearer token sent to them.
    pub token: Option<String>,
    /// Signs chat buttons' tracking links; without it a button links to its target directly.
    pub links: Option<Links>,
    /// Where the health reports are POSTed (`ENGAGE_MAIL_SERVICE_URL`).
    pub mail: Option<String>,
    /// Where the health reports are written (`<data dir>/reports`).
    pub reports_dir: std::path::PathBuf,
    /// App store A.
    pub store_a: crate::reviews::StoreClient,
    /// App store B.
    pub store_b: crate::reviews::StoreClient,
}

/// A job, its cron and its next run.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct JobSchedule {
    /// Its name.
    pub job: &'static str,
    /// Its cron (IST).
    pub cron: String,
    /// Its next run (RFC 3339, IST), when the cron has one.
    pub next: Option<String>,
}

/// What the jobs need.
pub struct Jobs {
    repo: Repo,
    gateway: TenantGateway,
    providers: Providers,
    client: reqwest::Client,
    schedules: Vec<(JobName, String)>,
    claims: Option<async_nats::jetstream::kv::Store>,
    node: String,
    /// One lock per job that must not run twice at once on this node (see [`Jobs::exclusive`])
    running: std::sync::Mutex<HashMap<JobName, Arc<tokio::sync::Mutex<()>>>>,
    /// FCM access tokens of the brands' service-account keys, kept across drains.
    fcm: fcm::Tokens,
}

/// How long a run waits for another node's run of the same job to end before it gives up
const EXCLUSIVE_WAIT: Duration = Duration::from_secs(300);

/// Why a job run failed (its outcome is then an error: run it again; every job's work is
/// idempotent).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] engage_storage::StoreError),
    /// A brand's tenant actor refused or could not answer.
    #[error("a brand's tenant could not answer: {0}")]
    Tenant(#[from] crate::query::QueryError),
    /// Some brands failed; the others were done.
    #[error("brands failed, run the job again: {0}")]
    TenantsFailed(Box<JobOutcome>),
    /// Reports were written but the mail service did not take them.
    #[error("reports written under {dir} but not mailed: {cause}")]
    NotMailed {
        /// Where the reports are.
        dir: String,
        /// What the mail service said.
        cause: String,
    },
    /// Another node's run of the job still holds it.
    #[error("another node's {job} run still holds {key}; run it again later")]
    Busy {
        /// The job.
        job: &'static str,
        /// The claim key.
        key: String,
    },
    /// The run could not be claimed in the lease bucket.
    #[error("cannot claim {key}: {cause}")]
    Claim {
        /// The claim key.
        key: String,
        /// The bucket's error.
        cause: String,
    },
    /// A report could not be written.
    #[error("{0}")]
    Report(String),
    /// The job's locks are poisoned (a run panicked while holding one).
    #[error("the job locks are poisoned")]
    Poisoned,
}

/// A brand-by-brand job's outcome: an error (the job failed; running it again finishes it, as
/// every brand's work is idempotent) when some brands failed.
fn all_tenants<T: Into<JobOutcome>>(outcome: T, failed: &[String]) -> Result<T, JobError> {
    if failed.is_empty() {
        Ok(outcome)
    } else {
        Err(JobError::TenantsFailed(Box::new(outcome.into())))
    }
}

/// The cron schedule of `cron` (validated at start-up by the settings).
fn schedule(cron: &str) -> Option<cron::Schedule> {
    cron.parse().ok()
}

impl Jobs {
    /// The jobs of a node. `claims` is the lease bucket in distributed mode.
    pub fn new(
        store: Arc<dyn engage_storage::Store>,
        gateway: TenantGateway,
        providers: Providers,
        schedules: Vec<(JobName, String)>,
        claims: Option<async_nats::jetstream::kv::Store>,
        node: String,
    ) -> Arc<Self> {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap_or_default();
        let repo = Repo::new(store);
        let fcm = fcm::Tokens::default();
        Arc::new(Self { repo, gateway, providers, client, schedules, claims, node, running: Default::default(), fcm })
    }

    /// Each job with its cron and next run (IST).
    pub fn list(&self) -> Vec<JobSchedule> {
        self.schedules
            .iter()
            .map(|(job, cron)| {
                let next = schedule(cron).and_then(|s| s.upcoming(ist()).next()).map(|t| t.to_rfc3339());
                JobSchedule { job: job.as_str(), cron: cron.clone(), next }
            })
            .collect()
    }

    /// Runs `job` now, as of `now`.
    pub async fn run(&self, job: JobName, now: DateTime<Utc>) -> Result<JobOutcome, JobError> {
        let started = Instant::now();
        let outcome = match job {
            JobName::SmsDrain => self.exclusive(job, self.drain(Channel::Sms, now)).await,
            JobName::ChatDrain => self.exclusive(job, self.drain(Channel::Chat, now)).await,
            JobName::PushDrain => self.exclusive(job, self.drain(Channel::Push, now)).await,
            JobName::PosRevoke => self.revoke(now).await.map(JobOutcome::from),
            JobName::ChatRefund => self.refund(now).await.map(JobOutcome::from),
            JobName::PointsExpiry => self.expire_points(now).await.map(JobOutcome::from),
            JobName::Journeys => self.nightly(now).await.map(JobOutcome::from),
            JobName::AbandonedCart => self.abandoned_carts(now).await.map(JobOutcome::from),
            JobName::RoiLostCustomers
            | JobName::RoiReferral
            | JobName::RoiJourneys
            | JobName::RoiAbandonedCart
            | JobName::RoiWelcome => self.attribute(job.roi_types(), now).await.map(JobOutcome::from),
            JobName::AutoCampaignSync => self.sync_flags(now).await.map(JobOutcome::from),
            JobName::HealthReports => self.health_reports(now).await.map(JobOutcome::from),
            JobName::BillGeneration => self.generate_bills(now).await.map(JobOutcome::from),
            JobName::BillReport => self.bill_report(now).await.map(JobOutcome::from),
            JobName::NpsConversion => self.convert_nps(now).await.map(JobOutcome::from),
            JobName::FeedbackConfigSync => self.sync_feedback_configs(now).await.map(JobOutcome::from),
            JobName::ReviewSync => self.sync_reviews(now).await.map(JobOutcome::from),
            JobName::LegacyFeedbackDrain => {
                self.exclusive(job, self.drain_legacy_feedback(now)).await.map(JobOutcome::from)
            }
        };
        let label = if outcome.is_ok() { "ok" } else { "error" };
        metrics::counter!("engage_job_runs_total", "job" => job.as_str(), "outcome" => label).increment(1);
        metrics::histogram!("engage_job_duration_seconds", "job" => job.as_str())
            .record(started.elapsed().as_secs_f64());
        match &outcome {
            Ok(result) => tracing::info!(job = job.as_str(), %result, "job ran"),
            Err(error) => tracing::error!(job = job.as_str(), %error, "job failed"),
        }
        outcome
    }

    fn days(now: DateTime<Utc>, back: i64) -> Vec<String> {
        (0..=back).rev().map(|d| ist_day(now - chrono::Duration::days(d)).replace('-', "")).collect()
    }

    /// Writes `ops` in batches of at most 500 (none when empty). Each write stands alone: use
    /// [`Jobs::move_rows`] for writes that must land together.
    async fn write_all(&self, ops: Vec<WriteOp>) -> Result<(), JobError> {
        for chunk in ops.chunks(500) {
            self.repo.store().batch(chunk.to_vec()).await?;
        }
        Ok(())
    }

    /// Moves rows out of a partition an older engage shared between brands: each move (the old
    /// row's delete, its new row, its brand's listing) lands whole, 200 moves a batch.
    async fn move_rows(&self, moves: Vec<[WriteOp; 3]>) -> Result<(), JobError> {
        for chunk in moves.chunks(200) {
            self.repo.store().batch(chunk.iter().flatten().cloned().collect()).await?;
        }
        Ok(())
    }

    /// The brands of a brand index (`journey_brands`, `bill_brands`, `feedback_brands`: partition
    /// `all`, clustering the tenant).
    async fn tenants(&self, index: &'static str) -> Result<Vec<String>, JobError> {
        Ok(self.repo.clusterings(index, "all").await?)
    }

    /// Asks `tenant`'s actor `question` as jobs do: waiting up to [`crate::rpc::JOB_TIMEOUT`], as
    /// a job's question is bulk work.
    async fn ask<Q: crate::ask::Answer + Into<crate::tenant::TenantQuery>>(
        &self,
        tenant: &str,
        question: Q,
    ) -> crate::ask::Answered<Q> {
        self.gateway.ask_within(tenant, question, crate::rpc::JOB_TIMEOUT).await
    }

    /// Asks every brand of the brand index `index` `query()` and hands each answer to `take`;
    /// answers the brands that failed (each logged with `what`), after all were asked.
    async fn each_tenant<Q: crate::ask::Answer + Into<crate::tenant::TenantQuery>>(
        &self,
        index: &'static str,
        what: &str,
        query: impl Fn() -> Q,
        mut take: impl FnMut(&str, Q::Reply),
    ) -> Result<Vec<String>, JobError> {
        let mut failed = Vec::new();
        for tenant in self.tenants(index).await? {
            match self.ask(&tenant, query()).await {
                Ok(answer) => take(&tenant, answer),
                Err(error) => {
                    tracing::error!(tenant, %error, "{what} failed for a brand");
                    failed.push(tenant);
                }
            }
        }
        Ok(failed)
    }

    /// POSTs written reports to `ENGAGE_MAIL_SERVICE_URL`: whether they were mailed (false when it
    /// is unset); an error names where they were written.
    async fn mail(
        &self,
        letter: &reports::Letter<'_>,
        files: &[std::path::PathBuf],
        dir: &std::path::Path,
    ) -> Result<bool, JobError> {
        let Some(url) = &self.providers.mail else { return Ok(false) };
        match reports::mail(&self.client, url, self.providers.token.as_deref(), letter, files).await {
            Ok(()) => Ok(true),
            Err(error) => Err(JobError::NotMailed { dir: dir.display().to_string(), cause: error.to_string() }),
        }
    }
}
