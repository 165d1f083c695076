//! The channel drains (`sms_drain`, `chat_drain`, `push_drain`) with the provider HTTP adapter, and `chat_refund` (failed chat sends refunded to the paying wallet).
//! A brand with its own sender on the channel sends through it ([`super::providers`]); the others
//! through the node-wide provider URL.

use super::*;
use crate::capabilities::consent::CountSkips;
use crate::capabilities::wallet::Recharge;
use crate::domain::consent::{is_marketing, ConsentDefaults, Subscriptions};
use crate::domain::delivery::{quick_delay, retry_delay, DeliveryError, QUICK_RETRIES};
use crate::domain::sender::Sender;

/// How many IST days before today a drain reads queues of. A send is queued under its delivery
/// day and may first go out at that day's last minute (or, after quiet hours, the next morning);
/// it is then retried through [`crate::domain::delivery::RETRY_WINDOW`] (24 h) and must still be
/// read when that ends, to fail for good and be credited back: so today, yesterday and the day
/// before. With yesterday only, a send first tried late on its day was never read again once the
/// day after ended: paid for, neither sent nor credited.
const DRAIN_LOOK_BACK_DAYS: i64 = 2;

impl Jobs {
    /// The sends of queue partition `partition` (`sms_queue_20261126`) still to act on, read
    /// through their work-left markers (`channel_work`), each row read again from the queue (the
    /// truth: a marker left behind is removed). A partition from before the markers is given its
    /// markers by one full read, once.
    pub(super) async fn open_sends(&self, partition: &str) -> Result<Vec<QueuedSend>, JobError> {
        let indexed = keys::channel_work_indexed(partition);
        if self.repo.row(&indexed).await?.is_none() {
            let rows: Vec<QueuedSend> = self.repo.all(CHANNEL_QUEUE, partition).await?;
            self.write_all(rows.iter().filter(|r| r.open()).map(|r| r.work_key().put(&json!({}))).collect()).await?;
            self.write_all(vec![indexed.put(&json!({}))]).await?;
        }
        let mut open = Vec::new();
        let mut stale = Vec::new();
        for clustering in self.repo.clusterings(CHANNEL_WORK, partition).await? {
            let row = self.repo.json(CHANNEL_QUEUE, partition, clustering.as_bytes()).await?;
            match row.map(serde_json::from_value::<QueuedSend>) {
                Some(Ok(row)) if row.open() => open.push(row),
                _ => stale.push(WriteOp::Delete {
                    table: CHANNEL_WORK,
                    partition: partition.to_owned(),
                    clustering: clustering.into_bytes(),
                }),
            }
        }
        self.write_all(stale).await?;
        Ok(open)
    }

    pub(super) fn provider(&self, channel: Channel) -> Option<&str> {
        match channel {
            Channel::Sms => self.providers.sms.as_deref(),
            Channel::Chat => self.providers.chat.as_deref(),
            Channel::Push => self.providers.push.as_deref(),
        }
    }

    pub(super) async fn drain(&self, channel: Channel, now: DateTime<Utc>) -> Result<JobOutcome, JobError> {
        let node_url = self.provider(channel).map(str::to_owned);
        // each brand's own sender on the channel, read once per drain
        let mut senders: HashMap<String, Option<Arc<Sender>>> = HashMap::new();
        let (mut routed, mut no_provider) = (0u64, 0u64);
        let (mut sent, mut failed, mut retrying, mut unpaid, mut quiet, mut scheduled) = (0, 0, 0, 0, 0, 0);
        let (mut unsubscribed, mut waiting) = (0, 0);
        let mut quiet_hours = HashMap::new();
        let mut defaults = HashMap::new();
        let mut budget = DRAIN_BATCH;
        for day in Self::days(now, DRAIN_LOOK_BACK_DAYS) {
            let partition = format!("{}_{day}", channel.queue());
            let rows = self.open_sends(&partition).await?;
            let mut due = Vec::new();
            let mut withdrawn = Vec::new();
            for row in rows.into_iter().filter(QueuedSend::pending) {
                if due.len() >= budget {
                    break;
                }
                if row.not_before.is_some_and(|at| at > now) {
                    scheduled += 1;
                    continue;
                }
                // a send whose last attempt may pass waits out its backoff
                if row.retry_at.is_some_and(|at| at > now) {
                    waiting += 1;
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
                // a customer who unsubscribed since the message was queued gets nothing (its debit
                // is credited back)
                if !self.consented(&mut defaults, &row).await? {
                    withdrawn.push(row);
                    continue;
                }
                let Some(sender) = self.route(&mut senders, &row, node_url.as_deref()).await else {
                    // no provider for this brand on this channel yet: the row waits
                    no_provider += 1;
                    continue;
                };
                routed += 1;
                due.push((row, sender));
            }
            budget -= due.len();
            unsubscribed += self.withdraw(withdrawn).await?;
            // each send's row is written as soon as its answer (and those ready with it) came, so a
            // provider's receipt finds the message id it names
            let tripped = Tripped::default();
            let mut answered = futures::stream::iter(due)
                .map(|(row, sender)| {
                    let url = node_url.clone();
                    let tripped = &tripped;
                    async move {
                        let (provider, outcome, tries) =
                            self.attempts(&row, sender.as_deref(), url.as_deref(), tripped).await;
                        let outcome_name = match &outcome {
                            Ok(_) => "sent",
                            Err(error) if error.is_permanent() => "rejected",
                            Err(_) if row.retries_over(now) => "gave_up",
                            Err(_) => "retried",
                        };
                        metrics::counter!("engage_sends_total", "provider" => provider, "outcome" => outcome_name)
                            .increment(1);
                        (row, outcome, tries)
                    }
                })
                .buffer_unordered(DRAIN_CONCURRENCY)
                .ready_chunks(DRAIN_CONCURRENCY);
            while let Some(results) = answered.next().await {
                let mut ops = Vec::with_capacity(2 * results.len());
                for (mut row, outcome, tries) in results {
                    row.attempts += tries;
                    match outcome {
                        Ok(provider_id) => {
                            sent += 1;
                            row.delivery_status = Some("sent".to_owned());
                            row.provider_message_id = provider_id;
                            row.sent_at = Some(Utc::now());
                            row.retry_at = None;
                            row.settle(true);
                        }
                        Err(error) => {
                            row.last_error = Some(error.to_string());
                            if error.is_permanent() || row.retries_over(now) {
                                // refused for good, or still failing at the end of the retry
                                // window: failed now, its debit credited back once
                                failed += 1;
                                row.delivery_status = Some("failed".to_owned());
                                row.retry_at = None;
                                row.settle(false);
                                self.credit_back(&mut row).await;
                            } else {
                                let throttled = match error {
                                    DeliveryError::Throttled { retry_after, .. } => retry_after,
                                    _ => None,
                                };
                                row.failed_runs += 1;
                                row.retry_at = Some(now + retry_delay(row.failed_runs, &row.send_id, throttled));
                                retrying += 1;
                            }
                        }
                    }
                    ops.extend(row.writes());
                }
                self.write_all(ops).await?;
            }
        }
        if node_url.is_none() && routed == 0 && waiting == 0 {
            return Ok(NotDrained {
                skipped: "no provider URL configured and no brand sender; rows stay pending".to_owned(),
            }
            .into());
        }
        if no_provider > 0 {
            tracing::info!(
                channel = channel.queue(),
                no_provider,
                "sends of brands without a sender wait: no node-wide provider URL"
            );
        }
        metrics::counter!("engage_sends_delivered_total", "channel" => channel.queue()).increment(sent);
        metrics::counter!("engage_sends_failed_total", "channel" => channel.queue()).increment(failed);
        Ok(Drained { sent, failed, retrying, waiting, unpaid, quiet, scheduled, unsubscribed }.into())
    }

    /// Delivers `row` through `sender` (or the node-wide `url`), trying again at once up to
    /// [`QUICK_RETRIES`] times after an answer that may pass, with a short backoff and jitter
    /// ([`quick_delay`]), unless its provider already failed [`TRIP_AFTER`] sends this run
    /// (`tripped`: a provider that is down costs one call per send, not four). Answers the
    /// provider's name, the last outcome and the calls made.
    async fn attempts(
        &self,
        row: &QueuedSend,
        sender: Option<&Sender>,
        url: Option<&str>,
        tripped: &Tripped,
    ) -> (&'static str, Result<Option<String>, DeliveryError>, u32) {
        let message = match &row.button {
            Some(button) if sender.is_some() => {
                format!("{}\n{}: {}", row.message, button.text, self.button_url(row, button))
            }
            _ => row.message.clone(),
        };
        let via = providers::Via {
            client: &self.client,
            tokens: &self.fcm,
            public_url: self.providers.links.as_ref().map(|links| links.base_url()),
        };
        let (provider, route) = match (sender, url) {
            (Some(sender), _) => (
                sender.provider.name(),
                format!("{}:{}", sender.provider.name(), sender.base_url().unwrap_or_default()),
            ),
            (None, Some(url)) => ("node", url.to_owned()),
            (None, None) => {
                let none = DeliveryError::Unreachable { what: "provider", error: "none configured".into() };
                return ("node", Err(none), 0);
            }
        };
        let mut tries = 0;
        loop {
            let outcome = match sender {
                Some(sender) => providers::deliver(&via, sender, row, &message).await,
                None => self.deliver(url.unwrap_or_default(), row).await,
            };
            tries += 1;
            let error = match &outcome {
                Err(error) if !error.is_permanent() => error,
                _ => return (provider, outcome, tries),
            };
            let asked = match error {
                DeliveryError::Throttled { retry_after, .. } => *retry_after,
                _ => None,
            };
            let wait = quick_delay(tries, &row.send_id, asked);
            match wait {
                Some(wait) if tries <= QUICK_RETRIES && !tripped.is_open(&route) => tokio::time::sleep(wait).await,
                _ => {
                    tripped.failed(&route);
                    return (provider, outcome, tries);
                }
            }
        }
    }

    /// The brand's own sender on `channel` (read once per drain; an unreadable row counts as
    /// none, and is logged).
    async fn sender(
        &self,
        cache: &mut HashMap<String, Option<Arc<Sender>>>,
        tenant: &str,
        channel: Channel,
    ) -> Option<Arc<Sender>> {
        if !cache.contains_key(tenant) {
            let sender = match crate::capabilities::senders::sender_of(&self.repo, tenant, channel).await {
                Ok(sender) => sender,
                Err(error) => {
                    tracing::warn!(tenant, %error, "the brand's sender is unreadable: the node-wide provider sends");
                    None
                }
            };
            cache.insert(tenant.to_owned(), sender.map(Arc::new));
        }
        cache.get(tenant).cloned().flatten()
    }

    /// Where `row` goes: its brand's sender, the node-wide provider, or nowhere yet (`None`: a
    /// brand whose sender is incomplete, or no sender and no node-wide URL).
    async fn route(
        &self,
        cache: &mut HashMap<String, Option<Arc<Sender>>>,
        row: &QueuedSend,
        node_url: Option<&str>,
    ) -> Option<Option<Arc<Sender>>> {
        match self.sender(cache, &row.parent_business_id, row.channel).await {
            Some(sender) if sender.incomplete().is_some() => None,
            Some(sender) => Some(Some(sender)),
            None => node_url.map(|_| None),
        }
    }

    /// Credits `row`'s debit back to the wallet that paid it, once: the credit's reference is
    /// `<why>-<send id>`, so asking again never credits twice. Marks the row refunded with the
    /// credit's transaction (the caller writes it).
    async fn credit_send(&self, row: &mut QueuedSend, why: &str) -> Result<(), crate::query::QueryError> {
        if row.total.is_zero() {
            // a free send (push is free unless the brand prices it): nothing to credit
            row.refunded = true;
            return Ok(());
        }
        let query = Recharge {
            business: row.business_id.clone(),
            amount: row.total.to_string(),
            reference: Some(format!("{why}-{}", row.send_id)),
            refund: true,
        };
        let recharged = self.ask(&row.parent_business_id, query).await?;
        row.refunded = true;
        row.refund_txn_id = Some(recharged.txn_id);
        Ok(())
    }

    /// Credits a send that failed for good (refused, or failing through the retry window) back to
    /// the wallet that paid it, once (the reference `refund-<send id>` is the one the failed-chat
    /// refund and a failed receipt use: never twice).
    async fn credit_back(&self, row: &mut QueuedSend) {
        if row.refunded {
            return;
        }
        // a credit that cannot be made now: a chat send is credited by the nightly chat_refund
        if let Err(error) = self.credit_send(row, "refund").await {
            tracing::warn!(tenant = row.parent_business_id, send_id = row.send_id, %error, "credit of a refused send postponed")
        }
    }

    /// Whether `tenant`'s quiet hours hold at `now` (settings read once per drain; an unreadable
    /// row counts as none).
    pub(super) async fn quiet(
        &self,
        cache: &mut HashMap<String, Option<QuietHours>>,
        tenant: &str,
        now: DateTime<Utc>,
    ) -> bool {
        if !cache.contains_key(tenant) {
            let settings: Option<JourneySettings> = self.repo.get(&keys::journey_settings(tenant)).await.ok().flatten();
            cache.insert(tenant.to_owned(), settings.and_then(|s| s.quiet_hours));
        }
        cache.get(tenant).and_then(Option::as_ref).is_some_and(|hours| hours.contains(now))
    }

    /// Whether the send's wallet debit is committed: the wallet's sequence is past the send's and
    /// the transaction there is the send's (a queue row left by a batch that never committed may
    /// name a sequence a later transaction took).
    pub(super) async fn paid(&self, row: &QueuedSend) -> bool {
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
    pub(super) fn button_url(&self, row: &QueuedSend, button: &ChatButton) -> String {
        let (Some(links), Some(journey)) = (&self.providers.links, &row.auto_id) else { return button.url.clone() };
        links.url(&row.parent_business_id, journey, &row.to, &button.occasion, &button.url, Utc::now()).unwrap_or_else(
            |error| {
                tracing::warn!(%error, send_id = row.send_id, "tracking link not signed; the button links directly");
                button.url.clone()
            },
        )
    }

    pub(super) async fn deliver(&self, url: &str, row: &QueuedSend) -> Result<Option<String>, DeliveryError> {
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
        let mut request = self.client.post(url).header("Idempotency-Key", &row.send_id).json(&body);
        if let Some(token) = &self.providers.token {
            request = request.bearer_auth(token);
        }
        let response =
            request.send().await.map_err(|e| DeliveryError::Unreachable { what: "provider", error: e.to_string() })?;
        let status = response.status();
        if !status.is_success() {
            let after = providers::retry_after(&response);
            return providers::judge("provider", status, "", &[], after).map(|()| None);
        }
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        Ok(answer["id"].as_str().map(str::to_owned))
    }

    /// Whether `row` may be delivered as far as consent goes: a marketing SMS or chat message to
    /// a customer subscribed on its channel now (a push send goes to a device token: its
    /// customer's choice was checked by phone when it was queued).
    async fn consented(
        &self,
        defaults: &mut HashMap<String, ConsentDefaults>,
        row: &QueuedSend,
    ) -> Result<bool, JobError> {
        if row.channel == Channel::Push || !is_marketing(row.purpose, row.template_type) {
            return Ok(true);
        }
        let tenant = &row.parent_business_id;
        if !defaults.contains_key(tenant) {
            let found: Option<ConsentDefaults> = self.repo.get(&keys::consent_defaults(tenant)).await?;
            defaults.insert(tenant.clone(), found.unwrap_or_default());
        }
        let subs: Subscriptions = self.repo.get(&keys::consent(tenant, &row.to)).await?.unwrap_or_default();
        Ok(defaults.get(tenant).is_none_or(|d| subs.subscribed(row.channel, d)))
    }

    /// Gives up sends whose customer unsubscribed after they were queued: each debit is credited
    /// back to the paying wallet (once: the credit's reference is the send's), then the send is
    /// settled undelivered (`delivery_status` `unsubscribed`). A credit the brand cannot take now
    /// leaves the send pending for the next run. Answers how many were given up.
    async fn withdraw(&self, rows: Vec<QueuedSend>) -> Result<u64, JobError> {
        let mut ops = Vec::new();
        let mut counted = Vec::new();
        let mut done = 0;
        for mut row in rows {
            match self.credit_send(&mut row, "consent").await {
                Ok(()) => {
                    row.settle(false);
                    row.delivery_status = Some("unsubscribed".to_owned());
                    row.last_error = Some("the customer unsubscribed from marketing on this channel".to_owned());
                    counted.push((row.parent_business_id.clone(), row.business_id.clone(), row.channel));
                    ops.extend(row.writes());
                    done += 1;
                }
                Err(error) => {
                    tracing::warn!(tenant = row.parent_business_id, send_id = row.send_id, %error, "unsubscribed send left for the next run")
                }
            }
        }
        self.write_all(ops).await?;
        // counted for `/stats/metrics/campaigns`, per brand, outlet and channel
        let mut skipped: std::collections::BTreeMap<(String, String, Channel), u64> = Default::default();
        for row in &counted {
            *skipped.entry((row.0.clone(), row.1.clone(), row.2)).or_default() += 1;
        }
        for ((tenant, business, channel), count) in skipped {
            let query = CountSkips { business, channel, count, now: Utc::now() };
            if let Err(error) = self.ask(&tenant, query).await {
                tracing::warn!(tenant, %error, "sends withdrawn for consent were not counted in the brand's stats");
            }
        }
        Ok(done)
    }

    pub(super) async fn refund(&self, now: DateTime<Utc>) -> Result<Refunded, JobError> {
        let (mut refunded, mut amount) = (0, rust_decimal::Decimal::ZERO);
        for day in Self::days(now, 7) {
            let partition = format!("{}_{day}", Channel::Chat.queue());
            let rows = self.open_sends(&partition).await?;
            let mut ops: Vec<WriteOp> = Vec::new();
            for mut row in rows.into_iter().filter(|r| r.process_status == Some(2) && !r.refunded) {
                match self.credit_send(&mut row, "refund").await {
                    Ok(()) => {
                        refunded += 1;
                        amount += row.total;
                        ops.extend(row.writes());
                    }
                    Err(error) => {
                        tracing::warn!(tenant = row.parent_business_id, send_id = row.send_id, %error, "refund postponed")
                    }
                }
            }
            self.repo.store().batch(ops).await?;
        }
        Ok(Refunded { refunded, amount: amount.normalize().to_string() })
    }
}

/// Sends whose provider kept failing, per provider (its name and URL), in one drain run: after
/// [`TRIP_AFTER`] of them, the run stops its quick retries to that provider.
#[derive(Default)]
struct Tripped(std::sync::Mutex<HashMap<String, u32>>);

/// Sends that used up their quick retries before a provider gets no more of them this run.
const TRIP_AFTER: u32 = 3;

impl Tripped {
    fn is_open(&self, route: &str) -> bool {
        self.0.lock().map(|failed| failed.get(route).copied().unwrap_or(0) >= TRIP_AFTER).unwrap_or(false)
    }

    fn failed(&self, route: &str) {
        if let Ok(mut failed) = self.0.lock() {
            *failed.entry(route.to_owned()).or_default() += 1;
        }
    }
}
