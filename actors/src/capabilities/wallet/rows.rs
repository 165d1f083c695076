//! The wallet rows a brand keeps: queued sends, transactions, the references applied once, and the wallet read and written through the brand.

use crate::domain::wallet::{Channel, Pricing, Purpose, TemplateType, Wallet};
use crate::keys::{self, digest};
use crate::tenant_core::Tenant;
use chrono::{DateTime, Utc};
use engage_storage::{StoreError, WriteOp};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::*;

/// One paid message.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SendRequest {
    /// The outlet paying.
    pub business: String,
    /// Channel.
    pub channel: Channel,
    /// Template category.
    pub template_type: TemplateType,
    /// Which price list.
    pub purpose: Purpose,
    /// Recipient.
    pub to: String,
    /// Message text.
    pub message: String,
    /// Caller's id of this send: a send id already paid is never paid again.
    pub send_id: String,
    /// Delivery date, `YYYYMMDD` (the queue suffix).
    pub delivery_date: String,
    /// Campaign id (`auto_id`), when any.
    pub auto_id: Option<String>,
    /// The provider's template id (DLT template, chat template name), when the caller names one.
    #[serde(default)]
    pub template_id: Option<String>,
    /// A chat message's call-to-action button, when any.
    #[serde(default)]
    pub button: Option<ChatButton>,
    /// The sender (SMS sender id), when the caller names one.
    #[serde(default)]
    pub sender_id: Option<String>,
    /// Not delivered before this instant (a digital bill's `scheduled_at`); none: the next drain.
    #[serde(default)]
    pub not_before: Option<DateTime<Utc>>,
}

/// A chat message's call-to-action button. The drain sends its `url` as a signed tracking link
/// (`/track/chat/link/:token`) that counts the click against the journey send of `occasion`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChatButton {
    /// Label.
    pub text: String,
    /// Where a click lands (after it is counted).
    pub url: String,
    /// The journey occasion the send belongs to (with the queue row's `auto_id` and `to`, the
    /// journey send a click counts against).
    pub occasion: String,
}

/// A queued send (table `channel_queue`), as the drains read and update it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueuedSend {
    /// The caller's id of the send.
    pub send_id: String,
    /// The brand.
    pub parent_business_id: String,
    /// The outlet that paid.
    pub business_id: String,
    /// Channel.
    pub channel: Channel,
    /// Recipient.
    pub to: String,
    /// Message text.
    pub message: String,
    /// Template category.
    pub template_type: TemplateType,
    /// Price list.
    pub purpose: Purpose,
    /// Campaign id.
    #[serde(default)]
    pub auto_id: Option<String>,
    /// Price before tax.
    pub cost: Decimal,
    /// GST.
    pub gst: Decimal,
    /// Debited.
    pub total: Decimal,
    /// The wallet transaction that paid it.
    pub txn_id: String,
    /// That transaction's sequence (the send counts as paid once the wallet's `txn_seq` is past it).
    pub wallet_seq: u64,
    /// `YYYYMMDD`.
    pub delivery_date: String,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// SMS and push: delivered (or given up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processed: Option<bool>,
    /// Chat: 0 pending, 1 sent, 2 failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_status: Option<u8>,
    /// Delivery attempts so far (the drains).
    #[serde(default, skip_serializing_if = "crate::domain::is_default")]
    pub attempts: u32,
    /// `sent` or `failed` once the drains know; then `delivered`, `read` or `failed` as the
    /// provider's receipts say (`docs/senders.md`, "Receipts").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_status: Option<String>,
    /// When the last receipt that moved it came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt_at: Option<DateTime<Utc>>,
    /// The provider's id of the delivered message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_message_id: Option<String>,
    /// When it was delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_at: Option<DateTime<Utc>>,
    /// The last delivery error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// A failed chat send's cost went back to the wallet (the refund job).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refunded: bool,
    /// The refund's wallet transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_txn_id: Option<String>,
    /// The provider's template id, when the send names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_id: Option<String>,
    /// A chat call-to-action button.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub button: Option<ChatButton>,
    /// The sender id, when the send names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_id: Option<String>,
    /// The drains leave it queued until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<DateTime<Utc>>,
    /// After an attempt that may pass (5xx, 429, no answer): the drains try again from then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_at: Option<DateTime<Utc>>,
    /// Drain runs whose attempts all failed in a way that may pass: the backoff doubles with
    /// each (the quick retries inside one run do not count).
    #[serde(default, skip_serializing_if = "crate::domain::is_default")]
    pub failed_runs: u32,
}

impl QueuedSend {
    /// Not yet delivered nor given up.
    pub fn pending(&self) -> bool {
        match self.channel {
            Channel::Chat => self.process_status == Some(0),
            _ => self.processed == Some(false),
        }
    }

    /// Delivered (`delivered`) or given up: SMS and push are processed, chat 1 sent or 2 failed.
    pub fn settle(&mut self, delivered: bool) {
        match self.channel {
            Channel::Chat => self.process_status = Some(if delivered { 1 } else { 2 }),
            _ => self.processed = Some(true),
        }
    }

    /// Given up before delivery because what it was about is gone (its order was cancelled or
    /// refunded as a whole): `delivery_status` `cancelled`, and never delivered. It was paid when
    /// it was queued and stays paid (a chat send is marked so that the failed-chat refund job
    /// does not credit it either; `docs/refunds.md`).
    pub fn cancel(&mut self, why: &str) {
        self.settle(false);
        self.delivery_status = Some("cancelled".to_owned());
        self.last_error = Some(why.to_owned());
        if self.channel == Channel::Chat {
            self.refunded = true;
        }
    }

    /// Whether a failed attempt at `now` is its last: the retry window
    /// ([`crate::domain::delivery::RETRY_WINDOW`]) from when it was first due has passed.
    pub fn retries_over(&self, now: DateTime<Utc>) -> bool {
        now >= self.not_before.unwrap_or(self.created_at) + crate::domain::delivery::RETRY_WINDOW
    }

    /// How providers echo it back in receipts.
    pub fn send_ref(&self) -> crate::domain::receipt::SendRef {
        crate::domain::receipt::SendRef {
            queue: format!("{}_{}", self.channel.queue(), self.delivery_date),
            send_id: self.send_id.clone(),
        }
    }

    /// Its row's key.
    pub fn key(&self) -> keys::Key {
        keys::queued_send(self.channel.queue(), &self.delivery_date, &self.parent_business_id, &self.send_id)
    }

    /// Whether a drain or the chat refund job still has to act on it: pending, or a failed chat
    /// send not refunded.
    pub fn open(&self) -> bool {
        self.pending() || (self.channel == Channel::Chat && self.process_status == Some(2) && !self.refunded)
    }

    /// Its work-left marker's key (`channel_work`).
    pub fn work_key(&self) -> keys::Key {
        keys::channel_work(self.channel.queue(), &self.delivery_date, &self.parent_business_id, &self.send_id)
    }

    /// The writes that store it: the row, and its work-left marker while it is [`Self::open`]
    /// (removed once it is not).
    pub fn writes(&self) -> [WriteOp; 2] {
        let marker = if self.open() { self.work_key().put(&serde_json::json!({})) } else { self.work_key().delete() };
        [self.key().put(self), marker]
    }
}

/// A wallet transaction (table `wallet_txns`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WalletTxn {
    /// `W-<digest>`.
    pub txn_id: String,
    /// `credit` or `debit`.
    pub transaction_type: String,
    /// Amount moved (for a debit, cost + GST).
    pub amount: Decimal,
    /// Balance after it.
    pub balance_after: Decimal,
    /// `recharge`, `refund`, or a send's purpose.
    pub purpose: String,
    /// When.
    pub at: DateTime<Utc>,
    /// 1.
    pub status: u8,
    /// A recharge's payment reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// A send's price before tax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Decimal>,
    /// A send's GST.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gst: Option<Decimal>,
    /// A send's channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<Channel>,
    /// A send's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_id: Option<String>,
    /// A send's campaign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_id: Option<String>,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
pub(super) struct WalletRef {
    txn_id: String,
    seq: u64,
}

pub(super) fn text(amount: Decimal) -> String {
    amount.normalize().to_string()
}

/// An outlet's wallet.
pub async fn wallet(tenant: &Tenant, business: &str) -> Result<Wallet, StoreError> {
    if let Some(in_batch) = tenant.wallet_in_batch(business) {
        return Ok(in_batch);
    }
    stored_wallet(tenant, business).await
}

/// An outlet's wallet as stored (without the debits of the batch being built).
pub(super) async fn stored_wallet(tenant: &Tenant, business: &str) -> Result<Wallet, StoreError> {
    Ok(tenant.repo().get(&keys::wallet(&tenant.id, business)).await?.unwrap_or_default())
}

/// The write of an outlet's wallet row: last in its batch, it commits the transactions before it.
/// The message's later reads of the wallet see it ([`Tenant::keep_wallet`]).
pub fn put_wallet(tenant: &Tenant, business: &str, wallet: &Wallet) -> WriteOp {
    tenant.keep_wallet(business, wallet);
    keys::wallet(&tenant.id, business).put(wallet)
}

/// The brand's price table (cached; the spec's values until one is stored).
pub async fn pricing(tenant: &mut Tenant) -> Result<Pricing, StoreError> {
    if let Some(pricing) = &tenant.pricing {
        return Ok(pricing.clone());
    }
    let pricing: Pricing = tenant.repo().get(&keys::pricing(&tenant.id)).await?.unwrap_or_default();
    tenant.pricing = Some(pricing.clone());
    Ok(pricing)
}

/// The transaction id of the send or recharge `reference` of `business`'s wallet, when its debit
/// or credit is committed.
///
/// Checked against the stored wallet (not one carrying debits of a batch being built) and the
/// transaction row itself: on a store whose batches are not atomic (NATS KV) a process killed
/// mid-batch can leave the reference row of a debit that never committed, whose sequence number
/// a later transaction then takes; such a reference is not committed.
pub async fn committed(tenant: &Tenant, business: &str, reference: &str) -> Result<Option<String>, StoreError> {
    let Some(row) = tenant.repo().get::<WalletRef>(&keys::wallet_ref(&tenant.id, business, reference)).await? else {
        return Ok(None);
    };
    if row.seq >= stored_wallet(tenant, business).await?.txn_seq {
        return Ok(None);
    }
    let txn: Option<WalletTxn> = tenant.repo().get(&keys::wallet_txn(&tenant.id, business, row.seq)).await?;
    Ok(txn.filter(|t| t.txn_id == row.txn_id).map(|_| row.txn_id))
}

/// The writes of one wallet transaction (its row, keyed by the wallet's next sequence, and the
/// reference row); the caller writes the wallet row after them.
pub(super) fn record_txn(
    tenant: &Tenant,
    business: &str,
    wallet: &mut Wallet,
    reference: &str,
    mut txn: WalletTxn,
) -> (String, Vec<WriteOp>) {
    let seq = wallet.txn_seq;
    wallet.txn_seq += 1;
    let txn_id = format!("W-{}", digest(&[&tenant.id, business, reference]));
    txn.txn_id = txn_id.clone();
    txn.balance_after = wallet.balance.normalize();
    let ops = vec![
        keys::wallet_txn(&tenant.id, business, seq).put(&txn),
        keys::wallet_ref(&tenant.id, business, reference).put(&WalletRef { txn_id: txn_id.clone(), seq }),
    ];
    (txn_id, ops)
}
