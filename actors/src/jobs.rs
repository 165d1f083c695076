//! Scheduled jobs (spec "Scheduled jobs", IST): one scheduler per node; in distributed mode each
//! occurrence of a job runs on one node only (it claims `job.<name>.<time>` in the lease bucket).
//! A drain runs alone, on a node and across nodes, whoever started it ([`Jobs::exclusive`]).
//!
//! | job | default cron (sec min hour day month weekday, IST) | what it does |
//! |---|---|---|
//! | `sms_drain` | `0 */3 * * * *` | delivers pending rows of yesterday's and today's `sms_queue_<YYYYMMDD>`, at most 8000 a run |
//! | `chat_drain` | `30 */3 * * * *` | the same for `chat_queue_<YYYYMMDD>` (`process_status` 0 → 1 sent / 2 failed) |
//! | `push_drain` | `0 */5 * * * *` | the same for `push_queue_<YYYYMMDD>` |
//! | `pos_revoke` | `15 */5 * * * *` | reverts POS redemptions past their TTL whose order never arrived |
//! | `chat_refund` | `0 0 0 * * *` | refunds failed chat sends of the last 7 days to the paying wallet (once each) |
//! | `points_expiry` | `0 5 0 * * *` | expires loyalty points whose expiry has passed (earned points are usable through the last IST day of their validity and expire at the following IST midnight) |
//! | `journeys` | `0 0 22 * * *` | the nightly journey run: every brand with journeys, a page of 1,000 customers at a time, in the brand's tenant actor (birthday, anniversary, lost customers, wallet expiry), queued for the next IST day |
//! | `abandoned_cart` | `0 */5 * * * *` | hands each brand's open carts to its tenant actor, which reminds those left for the journey's trigger minutes (once per customer per IST day) |
//! | `roi_lost_customers` | `0 0 0 * * *` | ROI attribution of lost-customers journeys |
//! | `roi_referral` | `0 30 5 * * *` | ROI attribution of referral-boost journeys |
//! | `roi_journeys` | `0 0 6 * * *` | ROI attribution of birthday, anniversary, wallet-expiry and low-rating journeys |
//! | `roi_abandoned_cart` | `0 30 6 * * *` | ROI attribution of abandoned-cart journeys |
//! | `roi_welcome` | `0 30 7 * * *` | ROI attribution of welcome journeys |
//! | `auto_campaign_sync` | `0 47 12 * * *` | sets each brand's and outlet's `business_configs.auto_campaign` (1 when a journey of theirs is enabled and configured) |
//! | `health_reports` | `0 0 12 * * Mon` | writes the five journey health workbooks of the last 7 IST days under `<data dir>/reports/` and POSTs them to `ENGAGE_MAIL_SERVICE_URL` when set ([`crate::reports`]) |
//! | `bill_generation` | `0 57 9 * * *` | digital bills for each brand's queue records of yesterday and today with status 1 and source 2 that the order reaction did not bill (a configuration added later, a wallet recharged), 10,000 a page, in the brand's tenant actor; skips counted by reason |
//! | `bill_report` | `0 32 11 * * *` | the digital-bill workbook of yesterday (vs one and two weeks earlier; skips; enabled-but-unsent businesses with the reason) under `<data dir>/reports/bills-<day>/`, POSTed to `ENGAGE_MAIL_SERVICE_URL` when set |
//! | `feedback_config_sync` | `0 6 12 * * *` | a brand's feedback configuration with `feedback_flow` 1 is copied to each outlet it knows (wallets, business records) that has no record of its own; copies are refreshed daily |
//! | `review_sync` | `0 0 */3 * * *` | app-store reviews of each brand's apps (store A, store B), upserted by review id, from each brand's last-reviewed marker ([`crate::reviews`]) |
//! | `legacy_feedback_drain` | `0 */5 * * * *` | the legacy feedback SMS queue: due rows picked (`processed` 2), their gateway URL called by GET, then 1; a failure goes back to 0 and is retried, given up after 5 |
//! | `nps_conversion` | `0 0 6 * * *` | yesterday's feedback-form ratings (source `'3'`) of every brand with feedback become NPS responses (a rating of 5 or less doubled), once each |
//!
//! A send with a `not_before` (a digital bill's `scheduled_at`) stays queued until then.
//! Quiet hours: a drain leaves a brand's campaign sends (`purpose` `campaign`) queued while the
//! brand's quiet hours (IST) last; they go out on the first drain after.
//!
//! Provider adapter (HTTP, ours): `POST <provider url>` with `Authorization: Bearer <token>` and
//! `{send_id, to, message, channel, template_type, business_id}` (plus `template_id` and
//! `sender_id` when the send names them, and `buttons: [{text, url}]` for a chat button, whose `url` is the signed tracking
//! link of [`crate::links`]); a 2xx answer is delivered (its
//! JSON `id`, if any, is kept as `provider_message_id`); anything else is a failure, retried on
//! the next runs, failed for good after 3 attempts. Without a provider URL a drain leaves the rows
//! pending. `engage jobs run NAME [--now T]` runs a job at once (optionally as of time `T`).

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

use crate::capabilities::bills::{BillReport, BillsQuery, Generated};
use crate::capabilities::feedback::nps::Converted;
use crate::capabilities::feedback::{ConfigsSynced, FeedbackQuery};
use crate::capabilities::journeys::{
    Attributed, CartsHandled, FlagsSynced, Health, JourneySettings, JourneysQuery, OpenCart, QuietHours, RunPage,
};
use crate::capabilities::loyalty::LoyaltyQuery;
use crate::capabilities::redemption::RedemptionQuery;
use crate::capabilities::rewards::RewardsQuery;
use crate::capabilities::wallet::{ChatButton, QueuedSend, Recharged, WalletQuery, WalletTxn};
use crate::domain::time::{ist, ist_day, reached};
use crate::domain::wallet::{Channel, Purpose, Wallet};
use crate::keys;
use crate::links::Links;
use crate::repo::{
    Repo, BILL_BRANDS, CHANNEL_QUEUE, FEEDBACK_BRANDS, JOURNEY_BRANDS, OPEN_CARTS, PENDING_REDEMPTIONS, POINTS_EXPIRY,
};
use crate::reports;
use crate::rpc::TenantGateway;
use crate::tenant::TenantQuery;

/// Rows a drain delivers per run at most.
pub const DRAIN_BATCH: usize = 8000;
/// Deliveries in flight at once.
const DRAIN_CONCURRENCY: usize = 16;
/// Attempts before a send fails for good.
pub const MAX_ATTEMPTS: u32 = 3;

/// The jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
}

/// How long a run waits for another node's run of the same job to end before it gives up
const EXCLUSIVE_WAIT: Duration = Duration::from_secs(300);

/// A brand-by-brand job's outcome: an error (the job failed; running it again finishes it, as
/// every brand's work is idempotent) when some brands failed.
fn all_brands(outcome: Value, failed: &[String]) -> Result<Value, String> {
    if failed.is_empty() {
        Ok(outcome)
    } else {
        Err(format!("brands failed, run the job again: {outcome}"))
    }
}

/// The cron schedule of `cron` (validated at start-up by the settings).
fn schedule(cron: &str) -> Option<cron::Schedule> {
    cron.parse().ok()
}

impl Jobs {
    /// The jobs of a node. `claims` is the lease bucket in distributed mode.
    pub fn new(
        repo: Repo,
        gateway: TenantGateway,
        providers: Providers,
        schedules: Vec<(JobName, String)>,
        claims: Option<async_nats::jetstream::kv::Store>,
        node: String,
    ) -> Arc<Self> {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap_or_default();
        Arc::new(Self { repo, gateway, providers, client, schedules, claims, node, running: Default::default() })
    }

    /// Each job with its cron and next run (IST).
    pub fn list(&self) -> Vec<Value> {
        self.schedules
            .iter()
            .map(|(job, cron)| {
                let next = schedule(cron).and_then(|s| s.upcoming(ist()).next()).map(|t| t.to_rfc3339());
                json!({"job": job.as_str(), "cron": cron, "next": next})
            })
            .collect()
    }

    /// Runs `job` now, as of `now`.
    pub async fn run(&self, job: JobName, now: DateTime<Utc>) -> Result<Value, String> {
        let started = Instant::now();
        let outcome = match job {
            JobName::SmsDrain => self.exclusive(job, self.drain(Channel::Sms, now)).await,
            JobName::ChatDrain => self.exclusive(job, self.drain(Channel::Chat, now)).await,
            JobName::PushDrain => self.exclusive(job, self.drain(Channel::Push, now)).await,
            JobName::PosRevoke => self.revoke(now).await,
            JobName::ChatRefund => self.refund(now).await,
            JobName::PointsExpiry => self.expire_points(now).await,
            JobName::Journeys => self.nightly(now).await,
            JobName::AbandonedCart => self.abandoned_carts(now).await,
            JobName::RoiLostCustomers
            | JobName::RoiReferral
            | JobName::RoiJourneys
            | JobName::RoiAbandonedCart
            | JobName::RoiWelcome => self.attribute(job.roi_types(), now).await,
            JobName::AutoCampaignSync => self.sync_flags(now).await,
            JobName::HealthReports => self.health_reports(now).await,
            JobName::BillGeneration => self.generate_bills(now).await,
            JobName::BillReport => self.bill_report(now).await,
            JobName::NpsConversion => self.convert_nps(now).await,
            JobName::FeedbackConfigSync => self.sync_feedback_configs(now).await,
            JobName::ReviewSync => self.sync_reviews(now).await,
            JobName::LegacyFeedbackDrain => self.exclusive(job, self.drain_legacy_feedback(now)).await,
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

    /// Starts one timer per job; stops when `stop` flips.
    pub fn spawn_scheduler(self: Arc<Self>, stop: watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
        self.schedules
            .clone()
            .into_iter()
            .filter_map(|(job, cron)| schedule(&cron).map(|s| (job, s)))
            .map(|(job, schedule)| {
                let jobs = self.clone();
                let mut stop = stop.clone();
                tokio::spawn(async move {
                    while let Some(next) = schedule.upcoming(ist()).next() {
                        let wait = (next.with_timezone(&Utc) - Utc::now()).to_std().unwrap_or_default();
                        tokio::select! {
                            _ = tokio::time::sleep(wait) => {}
                            _ = stop.wait_for(|s| *s) => break,
                        }
                        if jobs.claim(job, next.timestamp()).await {
                            let _ = jobs.run(job, Utc::now()).await;
                        }
                    }
                })
            })
            .collect()
    }

    /// Whether this node runs the occurrence at `at` (always in embedded mode).
    async fn claim(&self, job: JobName, at: i64) -> bool {
        match &self.claims {
            None => true,
            Some(bucket) => {
                bucket.create(format!("job.{}.{at}", job.as_str()), self.node.as_bytes().to_vec().into()).await.is_ok()
            }
        }
    }

    /// Runs `work` as the only run of `job` at a time, for a job that reads pending rows, calls a
    /// provider, then marks them: two runs at once would both send the same rows. On this node a
    /// lock per job orders them; in distributed mode the key `run.<job>` in the lease bucket does
    /// the same across nodes. It is created before the run, renewed while it lasts and deleted
    /// after; if its node dies it lapses like a partition lease. A run that finds the job running
    /// waits for it (up to [`EXCLUSIVE_WAIT`] for another node's), then finds those rows sent.
    async fn exclusive(
        &self,
        job: JobName,
        work: impl std::future::Future<Output = Result<Value, String>>,
    ) -> Result<Value, String> {
        let local = {
            let mut running = self.running.lock().map_err(|_| "the job locks are poisoned".to_owned())?;
            running.entry(job).or_default().clone()
        };
        let _local = local.lock().await;
        let Some(bucket) = &self.claims else {
            return work.await;
        };
        let key = format!("run.{}", job.as_str());
        let holder = bytes::Bytes::from(self.node.clone().into_bytes());
        let lifetime = bucket.status().await.map(|status| status.max_age()).unwrap_or_default();
        let deadline = Instant::now() + EXCLUSIVE_WAIT;
        let mut revision = loop {
            match bucket.create(&key, holder.clone()).await {
                Ok(revision) => break revision,
                Err(error) if error.kind() == async_nats::jetstream::kv::CreateErrorKind::AlreadyExists => {
                    if Instant::now() >= deadline {
                        return Err(format!(
                            "another node's {} run still holds {key}; run it again later",
                            job.as_str()
                        ));
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Err(error) => return Err(format!("cannot claim {key}: {error}")),
            }
        };
        tracing::debug!(key, revision, "job run claimed");
        let mut renew = tokio::time::interval((lifetime / 3).max(Duration::from_millis(100)));
        renew.tick().await;
        tokio::pin!(work);
        let outcome = loop {
            tokio::select! {
                outcome = &mut work => break outcome,
                _ = renew.tick() => match bucket.update(&key, holder.clone(), revision).await {
                    Ok(next) => revision = next,
                    Err(error) => tracing::warn!(%error, key, "cannot renew a job run's claim"),
                },
            }
        };
        if let Err(error) = bucket.delete_expect_revision(&key, Some(revision)).await {
            tracing::warn!(%error, key, "cannot release a job run's claim; it lapses with the lease");
        }
        outcome
    }

    fn provider(&self, channel: Channel) -> Option<&str> {
        match channel {
            Channel::Sms => self.providers.sms.as_deref(),
            Channel::Chat => self.providers.chat.as_deref(),
            Channel::Push => self.providers.push.as_deref(),
        }
    }

    fn days(now: DateTime<Utc>, back: i64) -> Vec<String> {
        (0..=back).rev().map(|d| ist_day(now - chrono::Duration::days(d)).replace('-', "")).collect()
    }

    async fn drain(&self, channel: Channel, now: DateTime<Utc>) -> Result<Value, String> {
        let Some(url) = self.provider(channel).map(str::to_owned) else {
            return Ok(json!({"skipped": "no provider URL configured; rows stay pending"}));
        };
        let (mut sent, mut failed, mut retrying, mut unpaid, mut quiet, mut scheduled) = (0, 0, 0, 0, 0, 0);
        let mut quiet_hours = HashMap::new();
        let mut budget = DRAIN_BATCH;
        for day in Self::days(now, 1) {
            let partition = format!("{}_{day}", channel.queue());
            let rows: Vec<QueuedSend> = self.repo.all(CHANNEL_QUEUE, &partition).await.map_err(|e| e.to_string())?;
            let mut due = Vec::new();
            for row in rows.into_iter().filter(QueuedSend::pending) {
                if due.len() >= budget {
                    break;
                }
                if row.not_before.is_some_and(|at| at > now) {
                    scheduled += 1;
                    continue;
                }
                if row.purpose == Purpose::Campaign && self.quiet(&mut quiet_hours, &row.parent_business_id, now).await
                {
                    quiet += 1;
                    continue;
                }
                // a send whose wallet debit was never committed (possible only on a store without
                // atomic batches) is not delivered
                if !self.paid(&row).await {
                    unpaid += 1;
                    continue;
                }
                due.push(row);
            }
            budget -= due.len();
            let results: Vec<(QueuedSend, Result<Option<String>, String>)> = futures::stream::iter(due)
                .map(|row| {
                    let url = url.clone();
                    async move {
                        let outcome = self.deliver(&url, &row).await;
                        (row, outcome)
                    }
                })
                .buffer_unordered(DRAIN_CONCURRENCY)
                .collect()
                .await;
            let mut ops = Vec::with_capacity(results.len());
            for (mut row, outcome) in results {
                row.attempts += 1;
                match outcome {
                    Ok(provider_id) => {
                        sent += 1;
                        row.delivery_status = Some("sent".to_owned());
                        row.provider_message_id = provider_id;
                        row.sent_at = Some(Utc::now());
                        row.settle(true);
                    }
                    Err(error) => {
                        row.last_error = Some(error);
                        if row.attempts >= MAX_ATTEMPTS {
                            failed += 1;
                            row.delivery_status = Some("failed".to_owned());
                            row.settle(false);
                        } else {
                            retrying += 1;
                        }
                    }
                }
                ops.push(row.key().put(&row));
            }
            for chunk in ops.chunks(500) {
                self.repo.store().batch(chunk.to_vec()).await.map_err(|e| e.to_string())?;
            }
        }
        metrics::counter!("engage_sends_delivered_total", "channel" => channel.queue()).increment(sent);
        metrics::counter!("engage_sends_failed_total", "channel" => channel.queue()).increment(failed);
        Ok(json!({"sent": sent, "failed": failed, "retrying": retrying, "unpaid": unpaid, "quiet": quiet,
                  "scheduled": scheduled}))
    }

    /// Whether `tenant`'s quiet hours hold at `now` (settings read once per drain; an unreadable
    /// row counts as none).
    async fn quiet(&self, cache: &mut HashMap<String, Option<QuietHours>>, tenant: &str, now: DateTime<Utc>) -> bool {
        if !cache.contains_key(tenant) {
            let settings: Option<JourneySettings> = self.repo.get(&keys::journey_settings(tenant)).await.ok().flatten();
            cache.insert(tenant.to_owned(), settings.and_then(|s| s.quiet_hours));
        }
        cache.get(tenant).and_then(Option::as_ref).is_some_and(|hours| hours.contains(now))
    }

    /// The brands of a brand index (`journey_brands`, `bill_brands`, `feedback_brands`: partition
    /// `all`, clustering the tenant).
    async fn brands(&self, index: &'static str) -> Result<Vec<String>, String> {
        self.repo.clusterings(index, "all").await.map_err(|e| e.to_string())
    }

    /// The nightly journey run as at `now`: each brand's tenant actor runs its pages in turn. A
    /// brand that fails is reported (the job fails) after the others ran; running the job again
    /// finishes it and sends nothing twice.
    async fn nightly(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let (mut brands, mut scanned, mut sent, mut holdout, mut skipped) = (0, 0usize, 0u64, 0u64, 0u64);
        let mut failed = Vec::new();
        for tenant in self.brands(JOURNEY_BRANDS).await? {
            let mut after = None;
            let outcome = loop {
                let query = JourneysQuery::RunPage { now, after: after.clone() };
                match self.gateway.ask_as::<RunPage>(&tenant, query).await {
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
                Ok(()) => brands += 1,
                Err(error) => {
                    tracing::error!(tenant, %error, "nightly journey run failed for a brand; run the job again");
                    failed.push(tenant);
                }
            }
        }
        metrics::counter!("engage_journey_customers_scanned_total").increment(scanned as u64);
        let outcome = json!({"brands": brands, "scanned": scanned, "sent": sent, "holdout": holdout,
                             "skipped": skipped, "failed": failed});
        all_brands(outcome, &failed)
    }

    /// The abandoned-cart reminders as at `now`: the open carts, brand by brand.
    async fn abandoned_carts(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let mut by_brand: std::collections::BTreeMap<String, Vec<OpenCart>> = Default::default();
        self.repo
            .visit(OPEN_CARTS, "all", |cart: OpenCart| by_brand.entry(cart.tenant.clone()).or_default().push(cart))
            .await
            .map_err(|e| e.to_string())?;
        let (mut sent, mut waiting, mut dropped) = (0, 0, 0);
        let mut failed = Vec::new();
        for (tenant, carts) in by_brand {
            match self.gateway.ask_as::<CartsHandled>(&tenant, JourneysQuery::Carts { now, carts }).await {
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
        Ok(json!({"sent": sent, "waiting": waiting, "dropped": dropped, "postponed": failed}))
    }

    /// Asks every brand of the brand index `index` `query()` and hands each answer to `take`;
    /// answers the brands that failed (each logged with `what`), after all were asked.
    async fn each_brand<T: serde::de::DeserializeOwned, Q: Into<TenantQuery>>(
        &self,
        index: &'static str,
        what: &str,
        query: impl Fn() -> Q,
        mut take: impl FnMut(&str, T),
    ) -> Result<Vec<String>, String> {
        let mut failed = Vec::new();
        for tenant in self.brands(index).await? {
            match self.gateway.ask_as::<T>(&tenant, query()).await {
                Ok(answer) => take(&tenant, answer),
                Err(error) => {
                    tracing::error!(tenant, %error, "{what} failed for a brand");
                    failed.push(tenant);
                }
            }
        }
        Ok(failed)
    }

    /// ROI attribution of the journeys of `types` as at `now`, brand by brand.
    async fn attribute(&self, types: &[&str], now: DateTime<Utc>) -> Result<Value, String> {
        let campaign_types: Vec<String> = types.iter().map(|t| (*t).to_owned()).collect();
        let (mut journeys, mut measured, mut rows) = (0, 0, 0);
        let query = || JourneysQuery::Attribute { now, campaign_types: campaign_types.clone() };
        let failed = self
            .each_brand(JOURNEY_BRANDS, "ROI attribution", query, |_, done: Attributed| {
                journeys += done.journeys;
                measured += done.measured;
                rows += done.rows;
            })
            .await?;
        let outcome = json!({"journeys": journeys, "measured": measured, "rows": rows, "failed": failed});
        all_brands(outcome, &failed)
    }

    /// The daily `auto_campaign` flag sync, brand by brand.
    async fn sync_flags(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let (mut brands, mut records, mut on) = (0, 0, 0);
        let failed = self
            .each_brand(
                JOURNEY_BRANDS,
                "auto_campaign flag sync",
                || JourneysQuery::SyncFlags { now },
                |_, done: FlagsSynced| {
                    brands += 1;
                    records += done.records;
                    on += done.on;
                },
            )
            .await?;
        let outcome = json!({"brands": brands, "records": records, "on": on, "failed": failed});
        all_brands(outcome, &failed)
    }

    /// The weekly health reports: the 7 IST days before `now`'s day, every brand's journeys.
    async fn health_reports(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let (from, to) = (ist_day(now - chrono::Duration::days(7)), ist_day(now - chrono::Duration::days(1)));
        let mut rows = Vec::new();
        let query = || JourneysQuery::Health { from: from.clone(), to: to.clone() };
        let failed = self
            .each_brand(JOURNEY_BRANDS, "health report", query, |_, health: Health| rows.extend(health.data))
            .await?;
        let dir = self.providers.reports_dir.join(format!("health-{from}_{to}"));
        let files = reports::write_health(&dir, &from, &to, &rows).map_err(|e| format!("reports not written: {e}"))?;
        let letter = reports::Letter {
            report: "journey-health",
            subject: format!("Journey health reports, {from} to {to}"),
            from: &from,
            to: &to,
        };
        let mailed = self.mail(&letter, &files, &dir).await?;
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let outcome = json!({"from": from, "to": to, "journeys": rows.len(), "files": files, "mailed": mailed,
                             "failed": failed});
        all_brands(outcome, &failed)
    }

    /// POSTs written reports to `ENGAGE_MAIL_SERVICE_URL`: whether they were mailed (false when it
    /// is unset); an error names where they were written.
    async fn mail(
        &self,
        letter: &reports::Letter<'_>,
        files: &[std::path::PathBuf],
        dir: &std::path::Path,
    ) -> Result<Value, String> {
        let Some(url) = &self.providers.mail else { return Ok(Value::Bool(false)) };
        match reports::mail(&self.client, url, self.providers.token.as_deref(), letter, files).await {
            Ok(()) => Ok(Value::Bool(true)),
            Err(error) => Err(format!("reports written under {} but not mailed: {error}", dir.display())),
        }
    }

    /// Bill generation as at `now`: each brand's queue records of yesterday and today (IST) with
    /// status 1 and source 2, 10,000 a page, in the brand's tenant actor.
    async fn generate_bills(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let (mut brands, mut records, mut generated) = (0, 0u64, 0u64);
        let mut skipped: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
        let mut failed = Vec::new();
        let days = [ist_day(now - chrono::Duration::days(1)), ist_day(now)];
        for tenant in self.brands(BILL_BRANDS).await? {
            brands += 1;
            'days: for day in &days {
                let mut after = None;
                loop {
                    let query = BillsQuery::Generate { now, day: day.clone(), after: after.take() };
                    match self.gateway.ask_as::<Generated>(&tenant, query).await {
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
        let outcome = json!({"brands": brands, "records": records, "generated": generated, "skipped": skipped,
                             "failed": failed});
        all_brands(outcome, &failed)
    }

    /// The daily bill report of the IST day before `now`'s: every brand's figures in one workbook
    /// under `<data dir>/reports/bills-<day>/`, mailed when a mail service is set.
    async fn bill_report(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let day = ist_day(now - chrono::Duration::days(1));
        let mut figures = Vec::new();
        let query = || BillsQuery::Report { day: day.clone() };
        let failed =
            self.each_brand(BILL_BRANDS, "bill report", query, |_, report: BillReport| figures.push(report)).await?;
        let dir = self.providers.reports_dir.join(format!("bills-{day}"));
        let file = reports::write_bills(&dir, &figures).map_err(|e| format!("report not written: {e}"))?;
        let letter =
            reports::Letter { report: "digital-bills", subject: format!("Digital bills, {day}"), from: &day, to: &day };
        let mailed = self.mail(&letter, std::slice::from_ref(&file), &dir).await?;
        let outlets: usize = figures.iter().map(|f| f.funnel.len()).sum();
        let unsent: usize = figures.iter().map(|f| f.unsent.len()).sum();
        let outcome = json!({"date": day, "brands": figures.len(), "outlets": outlets, "unsent": unsent,
                             "file": file.display().to_string(), "mailed": mailed, "failed": failed});
        all_brands(outcome, &failed)
    }

    /// The legacy feedback SMS drain: every due row is picked (processed 2), its URL called by
    /// GET, and settled (1 sent; back to 0 to retry; given up after 5 failures).
    async fn drain_legacy_feedback(&self, now: DateTime<Utc>) -> Result<Value, String> {
        use crate::capabilities::feedback::legacy::LegacySms;
        let stale = chrono::Duration::minutes(10);
        let rows: Vec<LegacySms> =
            self.repo.all(crate::repo::LEGACY_FEEDBACK_SMS, "all").await.map_err(|e| e.to_string())?;
        let due: Vec<LegacySms> = rows.into_iter().filter(|r| r.due(now, stale)).take(DRAIN_BATCH).collect();
        let picked: Vec<WriteOp> = due
            .iter()
            .map(|row| {
                let mut row = row.clone();
                row.processed = 2;
                row.process_time = Some(now);
                keys::legacy_sms(&row.parent_business_id, &row.id).put(&row)
            })
            .collect();
        for chunk in picked.chunks(500) {
            self.repo.store().batch(chunk.to_vec()).await.map_err(|e| e.to_string())?;
        }
        let results: Vec<(LegacySms, Result<(), String>)> = futures::stream::iter(due)
            .map(|row| async move {
                let outcome = match self.client.get(&row.url).send().await {
                    Ok(response) if response.status().is_success() => Ok(()),
                    Ok(response) => Err(format!("gateway answered {}", response.status())),
                    Err(error) => Err(format!("gateway unreachable: {error}")),
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
            settled.push(keys::legacy_sms(&row.parent_business_id, &row.id).put(&row));
        }
        for chunk in settled.chunks(500) {
            self.repo.store().batch(chunk.to_vec()).await.map_err(|e| e.to_string())?;
        }
        metrics::counter!("engage_legacy_feedback_sms_total", "outcome" => "sent").increment(sent);
        metrics::counter!("engage_legacy_feedback_sms_total", "outcome" => "failed").increment(retrying + given_up);
        Ok(json!({"sent": sent, "retrying": retrying, "given_up": given_up}))
    }

    /// The app-store review sync: each brand with feedback whose own feedback configuration
    /// names an app of a store that is set up.
    async fn sync_reviews(&self, now: DateTime<Utc>) -> Result<Value, String> {
        use crate::reviews::{sync, AppStore, Synced};
        let mut total = json!({});
        let mut failed = Vec::new();
        for tenant in self.brands(FEEDBACK_BRANDS).await? {
            let config: Option<crate::capabilities::feedback::FeedbackConfig> =
                self.repo.get(&keys::feedback_config(&tenant, "0")).await.map_err(|e| e.to_string())?;
            let Some(config) = config else { continue };
            for (store, client, app) in [
                (AppStore::A, &self.providers.store_a, &config.store_a_app_id),
                (AppStore::B, &self.providers.store_b, &config.store_b_app_id),
            ] {
                let Some(app) = app.as_deref().filter(|a| !a.is_empty()) else { continue };
                match sync(&self.repo, &self.client, client, store, &tenant, app, now).await {
                    Ok(done) => {
                        let slot = &mut total[store.as_str()];
                        let mut sum: Synced = serde_json::from_value(slot.clone()).unwrap_or_default();
                        sum.pages += done.pages;
                        sum.read += done.read;
                        sum.inserted += done.inserted;
                        sum.updated += done.updated;
                        sum.unchanged += done.unchanged;
                        sum.retried += done.retried;
                        *slot = serde_json::to_value(sum).unwrap_or_default();
                    }
                    Err(error) => {
                        tracing::warn!(tenant, store = store.as_str(), %error, "review sync failed; the next run resumes from the marker");
                        failed.push(format!("{tenant}/{}", store.as_str()));
                    }
                }
            }
        }
        total["failed"] = json!(failed);
        all_brands(total, &failed)
    }

    /// The 12:06 feedback config sync, brand by brand.
    async fn sync_feedback_configs(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let (mut brands, mut copied, mut own) = (0, 0, 0);
        let query = || FeedbackQuery::SyncConfigs { now };
        let failed = self
            .each_brand(FEEDBACK_BRANDS, "feedback config sync", query, |_, done: ConfigsSynced| {
                brands += 1;
                copied += done.copied;
                own += done.own;
            })
            .await?;
        all_brands(json!({"brands": brands, "copied": copied, "own": own, "failed": failed}), &failed)
    }

    /// The NPS conversion of the IST day before `now`'s, brand by brand.
    async fn convert_nps(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let day = ist_day(now - chrono::Duration::days(1));
        let (mut brands, mut ratings, mut responses) = (0, 0, 0);
        let query = || FeedbackQuery::NpsConvert { day: day.clone() };
        let failed = self
            .each_brand(FEEDBACK_BRANDS, "NPS conversion", query, |_, done: Converted| {
                brands += 1;
                ratings += done.ratings;
                responses += done.responses;
            })
            .await?;
        let outcome =
            json!({"date": day, "brands": brands, "ratings": ratings, "responses": responses, "failed": failed});
        all_brands(outcome, &failed)
    }

    /// Whether the send's wallet debit is committed: the wallet's sequence is past the send's and
    /// the transaction there is the send's (a queue row left by a batch that never committed may
    /// name a sequence a later transaction took).
    async fn paid(&self, row: &QueuedSend) -> bool {
        let (tenant, business) = (&row.parent_business_id, &row.business_id);
        match self.repo.get::<Wallet>(&keys::wallet(tenant, business)).await {
            Ok(Some(wallet)) if wallet.txn_seq > row.wallet_seq => {
                let txn = self.repo.get::<WalletTxn>(&keys::wallet_txn(tenant, business, row.wallet_seq)).await;
                matches!(txn, Ok(Some(txn)) if txn.txn_id == row.txn_id)
            }
            _ => false,
        }
    }

    /// A chat button's URL as sent: the signed tracking link of a journey send, the target itself
    /// when there is nothing to count it against or no signer.
    fn button_url(&self, row: &QueuedSend, button: &ChatButton) -> String {
        let (Some(links), Some(journey)) = (&self.providers.links, &row.auto_id) else { return button.url.clone() };
        links.url(&row.parent_business_id, journey, &row.to, &button.occasion, &button.url, Utc::now()).unwrap_or_else(
            |error| {
                tracing::warn!(%error, send_id = row.send_id, "tracking link not signed; the button links directly");
                button.url.clone()
            },
        )
    }

    async fn deliver(&self, url: &str, row: &QueuedSend) -> Result<Option<String>, String> {
        let mut body = json!({"send_id": row.send_id, "to": row.to, "message": row.message, "channel": row.channel,
                          "template_type": row.template_type, "business_id": row.business_id});
        if let Some(template_id) = &row.template_id {
            body["template_id"] = json!(template_id);
        }
        if let Some(sender_id) = &row.sender_id {
            body["sender_id"] = json!(sender_id);
        }
        if let Some(button) = &row.button {
            body["buttons"] = json!([{"text": button.text, "url": self.button_url(row, button)}]);
        }
        let mut request = self.client.post(url).json(&body);
        if let Some(token) = &self.providers.token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.map_err(|e| format!("provider unreachable: {e}"))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("provider answered {status}"));
        }
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        Ok(answer["id"].as_str().map(str::to_owned))
    }

    async fn revoke(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let rows = self.repo.all_json(PENDING_REDEMPTIONS, "due").await.map_err(|e| e.to_string())?;
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
    async fn expire_points(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let (mut customers, mut points, mut postponed) = (0u64, 0i64, 0u64);
        let mut after: Option<Vec<u8>> = None;
        'scan: loop {
            let rows =
                self.repo.store().scan(POINTS_EXPIRY, "due", after.as_deref(), 500).await.map_err(|e| e.to_string())?;
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

    async fn unindex(&self, ops: Vec<WriteOp>) -> Result<(), String> {
        if ops.is_empty() {
            return Ok(());
        }
        self.repo.store().batch(ops).await.map_err(|e| e.to_string())
    }

    async fn refund(&self, now: DateTime<Utc>) -> Result<Value, String> {
        let (mut refunded, mut amount) = (0, rust_decimal::Decimal::ZERO);
        for day in Self::days(now, 7) {
            let partition = format!("{}_{day}", Channel::Chat.queue());
            let rows: Vec<QueuedSend> = self.repo.all(CHANNEL_QUEUE, &partition).await.map_err(|e| e.to_string())?;
            let mut ops: Vec<WriteOp> = Vec::new();
            for mut row in rows.into_iter().filter(|r| r.process_status == Some(2) && !r.refunded) {
                let query = WalletQuery::Recharge {
                    business: row.business_id.clone(),
                    amount: row.total.to_string(),
                    reference: Some(format!("refund-{}", row.send_id)),
                    refund: true,
                };
                match self.gateway.ask_as::<Recharged>(&row.parent_business_id, query).await {
                    Ok(recharged) => {
                        refunded += 1;
                        amount += row.total;
                        row.refunded = true;
                        row.refund_txn_id = Some(recharged.txn_id);
                        ops.push(row.key().put(&row));
                    }
                    Err(error) => {
                        tracing::warn!(tenant = row.parent_business_id, send_id = row.send_id, %error, "refund postponed")
                    }
                }
            }
            self.repo.store().batch(ops).await.map_err(|e| e.to_string())?;
        }
        Ok(json!({"refunded": refunded, "amount": amount.normalize().to_string()}))
    }
}
