//! Journey sends: what one journey does for one customer on one occasion ([`reach`]: holdout,
//! daily cap, frequency cap, then one paid message per channel through `queue_send`), the record
//! of each such decision ([`JourneySend`], table `journey_sends`), the send history of each run
//! ([`JourneyRun`], table `journey_runs`), and the nightly run itself ([`run_page`]), which the
//! `journeys` job drives a page of 1,000 customers at a time.
//!
//! Every decision is keyed by (journey, customer, occasion). An occasion is what the message is
//! about: the birthday's date, the lapse (the last order's time), the expiring lot, the first
//! order. A customer sent to (or held out) for an occasion is never reached again for it, so a
//! re-run, a retried page or a run resumed on another node sends nothing twice; the send ids
//! (`<type>-<journey>-<phone>-<occasion>-<channel>`) make the wallet debit idempotent as well.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use engage_storage::{StoreError, WriteOp};

use super::occasions::{backtracking, occasion};
use super::{applicable, fill, journeys, settings, JourneyChannel, JourneyConfig};
use crate::capabilities::wallet::{committed, put_wallet, queue_send, wallet, SendRequest};
use crate::domain::customer::Customer;
use crate::domain::time::ist_day;
use crate::domain::wallet::{Purpose, TemplateType, Wallet};
use crate::keys::{self, digest};
use crate::query::QueryError;
use crate::repo::CUSTOMERS;
use crate::tenant_core::Tenant;

/// Customers a nightly page reads (the spec's audience page).
pub const AUDIENCE_PAGE: usize = 1000;
/// Most customers the first run after activation reaches (the spec's backtracking rule).
pub const BACKTRACK_LIMIT: u32 = 10_000;
/// The frequency cap's window.
pub const FREQUENCY_WINDOW_DAYS: i64 = 7;
/// The journey types the nightly run handles (the spec's queue builder).
pub const NIGHTLY: [&str; 4] = ["birthday", "anniversary", "lost_customers", "wallet_expiry"];

/// What became of one customer for one journey occasion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Messages were paid for and queued.
    Sent,
    /// In the journey's holdout group: never sent (the baseline of its ROI).
    Holdout,
    /// Not sent, for `reason`; a later run may reach the customer for the same occasion.
    Skipped,
}

/// One queued message of a journey send.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SentMessage {
    /// `sms`, `chat` or `push`.
    pub channel: JourneyChannel,
    /// The send id (the queue row and the wallet debit).
    pub send_id: String,
    /// The queue day, `YYYYMMDD`.
    pub delivery_date: String,
}

/// A journey's decision about one customer for one occasion (table `journey_sends`, partition
/// `tenant|journey`, clustering `phone|occasion`); the ROI job adds the orders that followed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JourneySend {
    /// The journey.
    pub campaign_journey_id: String,
    /// Its type.
    pub campaign_type: String,
    /// The customer.
    pub phone: String,
    /// The outlet whose wallet pays.
    pub business_id: String,
    /// What the message is about (a date, a lapse, a lot, the first order).
    pub occasion: String,
    /// The IST day of the decision.
    pub run_day: String,
    /// When it was decided.
    pub at: DateTime<Utc>,
    /// Sent, held out or skipped.
    pub outcome: Outcome,
    /// Why it was skipped: `balance`, `daily_cap`, `frequency_cap`, `consent`, `sender` or
    /// `no_recipient`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The queued messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sends: Vec<SentMessage>,
    /// Orders in the attribution window after `at` (the ROI job).
    #[serde(default)]
    pub orders: u32,
    /// Their revenue.
    #[serde(default)]
    pub revenue: Decimal,
    /// Clicks on the chat button's tracking link.
    #[serde(default, skip_serializing_if = "crate::domain::is_default")]
    pub clicks: u32,
    /// The first click.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_click_at: Option<DateTime<Utc>>,
}

impl JourneySend {
    /// Its row's key.
    pub fn key(&self, tenant: &str) -> keys::Key {
        keys::journey_send(tenant, &self.campaign_journey_id, &self.phone, &self.occasion)
    }
}

/// The send history of one journey on one IST day (table `journey_runs`, partition tenant,
/// clustering `journey|day`): the spec's "Journey send history".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JourneyRun {
    /// The journey.
    pub campaign_journey_id: String,
    /// Its type.
    pub campaign_type: String,
    /// The journey's outlet.
    #[serde(rename = "businessId")]
    pub business_id: String,
    /// The brand.
    #[serde(rename = "parentBusinessId")]
    pub parent_business_id: String,
    /// The IST day.
    pub run_day: String,
    /// Customers sent to.
    pub sent_count: u32,
    /// Customers held out.
    pub holdout_count: u32,
    /// Customers skipped, by reason (a customer reached later for the same occasion leaves it).
    pub skipped: BTreeMap<String, u32>,
    /// The first decision of the day.
    pub started_at: DateTime<Utc>,
    /// When the nightly run finished its last page (event journeys: never).
    #[serde(default)]
    pub completed_at: Option<DateTime<Utc>>,
}

impl JourneyRun {
    fn new(tenant: &Tenant, journey: &JourneyConfig, run_day: &str, now: DateTime<Utc>) -> Self {
        Self {
            campaign_journey_id: journey.campaign_journey_id.clone(),
            campaign_type: journey.campaign_type.clone(),
            business_id: journey.child_business_id.clone(),
            parent_business_id: tenant.id.clone(),
            run_day: run_day.to_owned(),
            sent_count: 0,
            holdout_count: 0,
            skipped: BTreeMap::new(),
            started_at: now,
            completed_at: None,
        }
    }

    /// The day's row of `journey`, stored or new.
    pub async fn load(
        tenant: &Tenant,
        journey: &JourneyConfig,
        run_day: &str,
        now: DateTime<Utc>,
    ) -> Result<Self, StoreError> {
        let key = keys::journey_run(&tenant.id, &journey.campaign_journey_id, run_day);
        Ok(tenant.repo().get(&key).await?.unwrap_or_else(|| Self::new(tenant, journey, run_day, now)))
    }

    /// Its row's write.
    pub fn put(&self) -> WriteOp {
        keys::journey_run(&self.parent_business_id, &self.campaign_journey_id, &self.run_day).put(self)
    }

    /// Counts `decision`, which replaced `previous` (a skip a later run retried).
    pub fn count(&mut self, decision: &JourneySend, previous: Option<&JourneySend>) {
        if let Some(reason) = previous.and_then(|p| p.reason.as_ref()) {
            if let Some(n) = self.skipped.get_mut(reason) {
                *n = n.saturating_sub(1);
            }
        }
        match decision.outcome {
            Outcome::Sent => self.sent_count += 1,
            Outcome::Holdout => self.holdout_count += 1,
            Outcome::Skipped => {
                *self.skipped.entry(decision.reason.clone().unwrap_or_default()).or_default() += 1;
            }
        }
    }
}

/// Whether `phone` is in `journey`'s holdout group: a stable hash of (journey, phone) below the
/// journey's `holdout_percent`.
pub fn in_holdout(journey: &JourneyConfig, phone: &str) -> bool {
    let percent = journey.campaign_data.holdout_percent.unwrap_or(0);
    if percent == 0 {
        return false;
    }
    let hash = digest(&["holdout", &journey.campaign_journey_id, phone]);
    u32::from_str_radix(&hash[..8], 16).is_ok_and(|h| h % 100 < u32::from(percent))
}

/// One journey reaching one customer.
pub struct Reach<'a> {
    /// The journey.
    pub journey: &'a JourneyConfig,
    /// What the message is about.
    pub occasion: String,
    /// The queue day, `YYYYMMDD`.
    pub delivery_date: String,
    /// The outlet whose wallet pays.
    pub payer: String,
    /// The journey's volume for the day is used up.
    pub capped: bool,
    /// The brand's frequency cap (messages per customer per 7 days).
    pub frequency_cap: Option<u32>,
    /// Now.
    pub now: DateTime<Utc>,
    /// More template variables and their values (after the customer's: `x_dynamic_coupon`, …).
    pub variables: Vec<(&'static str, String)>,
}

/// Decides what `reach.journey` does for `customer` on `reach.occasion` and, when it sends, pays
/// for and queues one message per channel (campaign prices, `auto_id` the journey) from `purse`,
/// adding the writes to `ops`; the caller writes `purse` and `customer` after them (the wallet
/// last: it commits the batch).
///
/// In order: an occasion already sent or held out is left alone (`None`); a customer in the
/// holdout group is held out; a used-up daily cap, the frequency cap, a wallet that cannot pay
/// the first message or no reachable channel skip the customer (a later run may retry). Answers
/// the decision and the decision it replaced. A daily-cap skip is stored only over an earlier skip.
pub async fn reach(
    tenant: &mut Tenant,
    reach: &Reach<'_>,
    customer: &mut Customer,
    purse: &mut Wallet,
    ops: &mut Vec<WriteOp>,
) -> Result<Option<(JourneySend, Option<JourneySend>)>, StoreError> {
    let journey = reach.journey;
    let key = keys::journey_send(&tenant.id, &journey.campaign_journey_id, &customer.phone, &reach.occasion);
    let previous: Option<JourneySend> = tenant.repo().get(&key).await?;
    match &previous {
        Some(p) if p.outcome == Outcome::Holdout => return Ok(None),
        // on a store whose batches are not atomic (NATS KV) a process killed mid-page can leave a
        // decision whose debit never committed: that customer is decided again (a debit that did
        // commit is recognised by its send id and never paid twice)
        Some(p) if p.outcome == Outcome::Sent => match p.sends.first() {
            Some(first) if committed(tenant, &p.business_id, &first.send_id).await?.is_none() => {}
            _ => return Ok(None),
        },
        _ => {}
    }
    let mut decision = JourneySend {
        campaign_journey_id: journey.campaign_journey_id.clone(),
        campaign_type: journey.campaign_type.clone(),
        phone: customer.phone.clone(),
        business_id: reach.payer.clone(),
        occasion: reach.occasion.clone(),
        run_day: ist_day(reach.now),
        at: reach.now,
        outcome: Outcome::Skipped,
        reason: None,
        sends: Vec::new(),
        orders: 0,
        revenue: Decimal::ZERO,
        clicks: 0,
        first_click_at: None,
    };
    let window = reach.now - Duration::days(FREQUENCY_WINDOW_DAYS);
    customer.journey_sends.retain(|at| *at > window);
    if in_holdout(journey, &customer.phone) {
        decision.outcome = Outcome::Holdout;
    } else if reach.capped {
        decision.reason = Some("daily_cap".into());
    } else if reach.frequency_cap.is_some_and(|cap| customer.journey_sends.len() >= cap as usize) {
        decision.reason = Some("frequency_cap".into());
    } else {
        let (sends, short, refused) = send(tenant, reach, customer, purse, ops).await?;
        decision.sends = sends;
        if decision.sends.is_empty() {
            decision.reason = Some(
                match (short, refused) {
                    (true, _) => "balance",
                    (false, Some(why)) => why,
                    (false, None) => "no_recipient",
                }
                .into(),
            );
        } else {
            decision.outcome = Outcome::Sent;
            customer.journey_sends.push(reach.now);
        }
    }
    // the wallet, consent and the sender count their own skips (`queue_send`)
    if let Some(reason) = decision.reason.as_deref().filter(|r| !matches!(*r, "balance" | "consent" | "sender")) {
        metrics::counter!("engage_sends_skipped_total", "reason" => reason.to_owned()).increment(1);
    }
    // a customer over the daily cap is counted, not recorded (unless an earlier skip is to be
    // replaced): the next run decides afresh, and a capped night over a large audience writes
    // nothing per customer
    if decision.reason.as_deref() != Some("daily_cap") || previous.is_some() {
        ops.push(key.put(&decision));
    }
    Ok(Some((decision, previous)))
}

/// One paid message per channel the customer can be reached on and subscribed to; stops at the
/// first the wallet cannot pay. Answers the messages queued, whether the wallet ran short, and
/// why a channel was left out, if one was: `consent` (the customer's), `sender` (the brand's own
/// sender would refuse it: an SMS template without a DLT id).
async fn send(
    tenant: &mut Tenant,
    reach: &Reach<'_>,
    customer: &Customer,
    purse: &mut Wallet,
    ops: &mut Vec<WriteOp>,
) -> Result<(Vec<SentMessage>, bool, Option<&'static str>), StoreError> {
    let journey = reach.journey;
    let mut refused = None;
    let data = &journey.campaign_data;
    let mut sent = Vec::new();
    for channel in &data.channels {
        let (to, template) = match channel {
            JourneyChannel::Sms => (Some(customer.phone.clone()), &data.sms_template),
            JourneyChannel::Chat => (Some(customer.phone.clone()), &data.chat_template),
            JourneyChannel::Push => (customer.push_tokens.last().cloned(), &data.push_template),
        };
        let (Some(to), Some(template)) = (to, template) else { continue };
        // a push send goes to a device token: the customer's choice is recorded by phone
        if *channel == JourneyChannel::Push
            && !crate::capabilities::consent::may_send(tenant, &customer.phone, crate::domain::wallet::Channel::Push)
                .await
                .map_err(|e| StoreError::Backend(e.to_string()))?
        {
            crate::capabilities::consent::count_skips(
                tenant,
                &reach.payer,
                crate::domain::wallet::Channel::Push,
                1,
                reach.now,
            )
            .await
            .map_err(|e| StoreError::Backend(e.to_string()))?;
            refused = Some("consent");
            continue;
        }
        let queue = channel.channel();
        let send_id = format!(
            "{}-{}-{}-{}-{}",
            journey.campaign_type,
            journey.campaign_journey_id,
            customer.phone,
            reach.occasion,
            queue.queue()
        );
        let request = SendRequest {
            business: reach.payer.clone(),
            channel: queue,
            template_type: TemplateType::Marketing,
            purpose: Purpose::Campaign,
            to,
            message: reach
                .variables
                .iter()
                .fold(fill(template, customer), |text, (name, value)| text.replace(name, value)),
            send_id: send_id.clone(),
            delivery_date: reach.delivery_date.clone(),
            auto_id: Some(journey.campaign_journey_id.clone()),
            template_id: None,
            button: (*channel == JourneyChannel::Chat).then(|| data.chat_button(&reach.occasion)).flatten(),
            sender_id: None,
            not_before: None,
        };
        match queue_send(tenant, purse, &request, reach.now, ops).await {
            Ok(_) => sent.push(SentMessage { channel: *channel, send_id, delivery_date: reach.delivery_date.clone() }),
            Err(QueryError::Insufficient(_)) => return Ok((sent, true, refused)),
            Err(QueryError::NoConsent(_)) => refused = Some("consent"),
            Err(QueryError::Unsendable(_)) => refused = refused.or(Some("sender")),
            Err(error) => return Err(StoreError::Backend(error.to_string())),
        }
    }
    Ok((sent, false, refused))
}

/// One journey reaching one customer on its own (an event: the welcome order, an abandoned
/// cart), as at `now`: [`reach`] with the day's daily cap and the brand's frequency cap, paid by
/// `payer`'s wallet, delivered today (IST); the day's history row and then (when it moved) the
/// wallet are added to `ops` after the send's writes. Answers the decision, if one was made.
pub async fn reach_one(
    tenant: &mut Tenant,
    journey: &JourneyConfig,
    customer: &mut Customer,
    payer: &str,
    occasion: &str,
    now: DateTime<Utc>,
    ops: &mut Vec<WriteOp>,
) -> Result<Option<JourneySend>, StoreError> {
    reach_one_with(tenant, journey, customer, payer, occasion, now, Vec::new(), ops).await
}

/// [`reach_one`] with more template `variables`.
#[allow(clippy::too_many_arguments)]
pub async fn reach_one_with(
    tenant: &mut Tenant,
    journey: &JourneyConfig,
    customer: &mut Customer,
    payer: &str,
    occasion: &str,
    now: DateTime<Utc>,
    variables: Vec<(&'static str, String)>,
    ops: &mut Vec<WriteOp>,
) -> Result<Option<JourneySend>, StoreError> {
    let day = ist_day(now);
    let mut run = JourneyRun::load(tenant, journey, &day, now).await?;
    let mut purse = wallet(tenant, payer).await?;
    let before = purse.clone();
    let one = Reach {
        journey,
        occasion: occasion.to_owned(),
        delivery_date: day.replace('-', ""),
        payer: payer.to_owned(),
        capped: journey.campaign_data.daily_cap.is_some_and(|cap| run.sent_count >= cap),
        frequency_cap: settings(tenant).await?.frequency_cap,
        now,
        variables,
    };
    let decided = reach(tenant, &one, customer, &mut purse, ops).await?;
    if let Some((decision, previous)) = &decided {
        run.count(decision, previous.as_ref());
        ops.push(run.put());
    }
    if purse != before {
        ops.push(put_wallet(tenant, payer, &purse));
    }
    Ok(decided.map(|(decision, _)| decision))
}

/// A nightly page's answer.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunPage {
    /// The last customer of this page when more follow (the next page starts after it).
    pub next: Option<String>,
    /// Customers read.
    pub scanned: usize,
    /// Customers sent to.
    pub sent: u32,
    /// Customers held out.
    pub holdout: u32,
    /// Customers skipped.
    pub skipped: u32,
}

/// One page of the nightly run at `now`: the next 1,000 customers after `after` (by phone), each
/// reached by the enabled nightly journeys that apply to them (their latest order's outlet's,
/// else the brand's), paid by that outlet's wallet (the brand's own for a customer without
/// orders), queued for the next IST day. The page is written in one batch per paying wallet (its
/// sends and decisions, then the wallet row, which commits them on a store without atomic
/// batches), then one with the day's history rows and the customers' frequency counters. The last
/// page marks each journey's day complete.
pub async fn run_page(tenant: &mut Tenant, now: DateTime<Utc>, after: Option<String>) -> Result<RunPage, QueryError> {
    let all = journeys(tenant).await?;
    let enabled = |j: &&JourneyConfig| {
        NIGHTLY.contains(&j.campaign_type.as_str()) && j.campaign_enabled == 1 && j.config_enabled == 1
    };
    if !all.iter().any(|j| enabled(&j)) {
        return Ok(RunPage::default());
    }
    let frequency_cap = settings(tenant).await?.frequency_cap;
    let run_day = ist_day(now);
    let delivery_date = ist_day(now + Duration::days(1)).replace('-', "");
    let rows =
        tenant.repo().store().scan(CUSTOMERS, &tenant.id, after.as_deref().map(str::as_bytes), AUDIENCE_PAGE).await?;
    let mut page = RunPage {
        next: (rows.len() == AUDIENCE_PAGE)
            .then(|| rows.last().map(|r| String::from_utf8_lossy(&r.clustering).into_owned()))
            .flatten(),
        scanned: rows.len(),
        ..RunPage::default()
    };
    let mut runs: HashMap<String, JourneyRun> = HashMap::new();
    let mut purses: HashMap<String, (Wallet, Wallet)> = HashMap::new();
    // one batch per paying wallet, its wallet row last (it commits the batch on NATS KV)
    let mut ops: HashMap<String, Vec<WriteOp>> = HashMap::new();
    let mut touched = Vec::new();
    for row in rows {
        let Ok(mut customer) = serde_json::from_slice::<Customer>(&row.value) else {
            tracing::warn!(tenant = tenant.id, "a customer row that does not decode is left out of the run");
            continue;
        };
        let payer = customer.home_outlet().unwrap_or(&tenant.id).to_owned();
        let mut changed = false;
        for campaign_type in NIGHTLY {
            let Some(journey) = applicable(&all, campaign_type, &payer, &tenant.id) else { continue };
            let backtrack = backtracking(journey, now);
            let Some(occasion) = occasion(journey, &customer, now, backtrack) else { continue };
            let mut run = match runs.remove(&journey.campaign_journey_id) {
                Some(run) => run,
                None => JourneyRun::load(tenant, journey, &run_day, now).await?,
            };
            let cap = journey.campaign_data.daily_cap.unwrap_or(u32::MAX);
            let limit = if backtrack { cap.min(BACKTRACK_LIMIT) } else { cap };
            let (mut purse, before) = match purses.remove(&payer) {
                Some(pair) => pair,
                None => {
                    let purse = wallet(tenant, &payer).await?;
                    (purse.clone(), purse)
                }
            };
            let reaching = Reach {
                journey,
                occasion,
                delivery_date: delivery_date.clone(),
                payer: payer.clone(),
                capped: run.sent_count >= limit,
                frequency_cap,
                now,
                variables: Vec::new(),
            };
            let payer_ops = ops.entry(payer.clone()).or_default();
            let decided = reach(tenant, &reaching, &mut customer, &mut purse, payer_ops).await?;
            if let Some((decision, previous)) = decided {
                run.count(&decision, previous.as_ref());
                match decision.outcome {
                    Outcome::Sent => {
                        page.sent += 1;
                        changed = true;
                    }
                    Outcome::Holdout => page.holdout += 1,
                    Outcome::Skipped => page.skipped += 1,
                }
            }
            purses.insert(payer.clone(), (purse, before));
            runs.insert(journey.campaign_journey_id.clone(), run);
        }
        if changed {
            touched.push(customer);
        }
    }
    if page.next.is_none() {
        for journey in all.iter().filter(enabled) {
            let mut run = match runs.remove(&journey.campaign_journey_id) {
                Some(run) => run,
                None => JourneyRun::load(tenant, journey, &run_day, now).await?,
            };
            run.completed_at = Some(now);
            runs.insert(journey.campaign_journey_id.clone(), run);
        }
    }
    for (payer, (after, before)) in &purses {
        let mut batch = ops.remove(payer).unwrap_or_default();
        if after != before {
            batch.push(put_wallet(tenant, payer, after));
        }
        if !batch.is_empty() {
            tenant.batch(batch).await?;
        }
    }
    let mut rest: Vec<WriteOp> = runs.values().map(JourneyRun::put).collect();
    rest.extend(touched.iter().map(|c| tenant.put_customer(c)));
    tenant.batch(rest).await?;
    for customer in &touched {
        tenant.forget_customer(&customer.phone);
    }
    Ok(page)
}
