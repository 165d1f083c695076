//! Business wallets and paid sends: recharges (idempotent per reference), balances, transaction
//! pages, the brand's price table, and [`queue_send`], the one path every paid message takes
//! (fraud alerts and one-time passwords now; journeys, bills and feedback next).

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::{StoreError, WriteOp};

use crate::brand::Brand;
use crate::domain::order::decimal;
use crate::domain::wallet::{Channel, Pricing, Purpose, TemplateType, Wallet};
use crate::keys::{self, digest};
use crate::query::{reply, QueryError, QueryReply};

/// Wallet queries.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum WalletQuery {
    /// Credit a business wallet (idempotent per `reference`): [`Recharged`].
    Recharge {
        /// The outlet.
        business: String,
        /// Amount, decimal text, positive.
        amount: String,
        /// Payment reference; a recharge with a reference already applied changes nothing.
        reference: Option<String>,
        /// `recharge` (default) or `refund` (the failed-chat refund job).
        #[serde(default)]
        refund: bool,
    },
    /// A business wallet's balance: [`Balance`].
    Balance {
        /// The outlet.
        business: String,
    },
    /// A page of a business wallet's transactions: [`TxnPage`].
    Txns {
        /// The outlet.
        business: String,
        /// Page, from 1.
        page: u64,
        /// Per page.
        page_size: u64,
    },
    /// Debit the wallet for one send and queue it for delivery (idempotent per `send_id`): [`Queued`].
    Send(SendRequest),
    /// The brand's price table: [`Pricing`].
    GetPricing,
    /// Replace the brand's price table; answers it.
    SetPricing {
        /// The new table.
        pricing: Pricing,
    },
}

/// One paid message.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// `sent` or `failed`, once the drains know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_status: Option<String>,
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

    /// Its row's key.
    pub fn key(&self) -> keys::Key {
        keys::queued_send(self.channel.queue(), &self.delivery_date, &self.parent_business_id, &self.send_id)
    }
}

/// A wallet transaction (table `wallet_txns`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

#[derive(Serialize, Deserialize)]
struct WalletRef {
    txn_id: String,
    seq: u64,
}

/// A recharge's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Recharged {
    /// Its transaction.
    pub txn_id: String,
    /// The balance after it.
    pub balance: String,
    /// True when the reference was applied before (nothing changed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// A wallet's balance.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Balance {
    /// The outlet.
    pub business_id: String,
    /// Decimal text.
    pub balance: String,
    /// Transactions written.
    pub transactions: u64,
}

/// A page of transactions.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TxnPage {
    /// The transactions, oldest first.
    pub data: Vec<Value>,
    /// Page, from 1.
    pub page: u64,
    /// Per page.
    pub page_size: u64,
    /// All transactions.
    pub total: u64,
    /// Decimal text.
    pub balance: String,
}

/// A send's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Queued {
    /// The wallet transaction that paid it.
    pub txn_id: String,
    /// The balance after it.
    pub balance: String,
    /// Debited (cost + GST), decimal text; absent on a replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charged: Option<String>,
    /// `<channel>_queue_<YYYYMMDD>`; absent on a replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// True when the send id was paid before (nothing changed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

fn text(amount: Decimal) -> String {
    amount.normalize().to_string()
}

/// An outlet's wallet.
pub async fn wallet(brand: &Brand, business: &str) -> Result<Wallet, StoreError> {
    if let Some(in_batch) = brand.wallet_in_batch(business) {
        return Ok(in_batch);
    }
    stored_wallet(brand, business).await
}

/// An outlet's wallet as stored (without the debits of the batch being built).
async fn stored_wallet(brand: &Brand, business: &str) -> Result<Wallet, StoreError> {
    Ok(brand.repo().get(&keys::wallet(&brand.tenant, business)).await?.unwrap_or_default())
}

/// The write of an outlet's wallet row: last in its batch, it commits the transactions before it.
/// The message's later reads of the wallet see it ([`Brand::keep_wallet`]).
pub fn put_wallet(brand: &Brand, business: &str, wallet: &Wallet) -> WriteOp {
    brand.keep_wallet(business, wallet);
    keys::wallet(&brand.tenant, business).put(wallet)
}

/// The brand's price table (cached; the spec's values until one is stored).
pub async fn pricing(brand: &mut Brand) -> Result<Pricing, StoreError> {
    if let Some(pricing) = &brand.pricing {
        return Ok(pricing.clone());
    }
    let pricing: Pricing = brand.repo().get(&keys::pricing(&brand.tenant)).await?.unwrap_or_default();
    brand.pricing = Some(pricing.clone());
    Ok(pricing)
}

/// The transaction id of the send or recharge `reference` of `business`'s wallet, when its debit
/// or credit is committed.
///
/// Checked against the stored wallet (not one carrying debits of a batch being built) and the
/// transaction row itself: on a store whose batches are not atomic (NATS KV) a process killed
/// mid-batch can leave the reference row of a debit that never committed, whose sequence number
/// a later transaction then takes; such a reference is not committed.
pub async fn committed(brand: &Brand, business: &str, reference: &str) -> Result<Option<String>, StoreError> {
    let Some(row) = brand.repo().get::<WalletRef>(&keys::wallet_ref(&brand.tenant, business, reference)).await? else {
        return Ok(None);
    };
    if row.seq >= stored_wallet(brand, business).await?.txn_seq {
        return Ok(None);
    }
    let txn: Option<WalletTxn> = brand.repo().get(&keys::wallet_txn(&brand.tenant, business, row.seq)).await?;
    Ok(txn.filter(|t| t.txn_id == row.txn_id).map(|_| row.txn_id))
}

/// The writes of one wallet transaction (its row, keyed by the wallet's next sequence, and the
/// reference row); the caller writes the wallet row after them.
fn record_txn(
    brand: &Brand,
    business: &str,
    wallet: &mut Wallet,
    reference: &str,
    mut txn: WalletTxn,
) -> (String, Vec<WriteOp>) {
    let seq = wallet.txn_seq;
    wallet.txn_seq += 1;
    let txn_id = format!("W-{}", digest(&[&brand.tenant, business, reference]));
    txn.txn_id = txn_id.clone();
    txn.balance_after = wallet.balance.normalize();
    let ops = vec![
        keys::wallet_txn(&brand.tenant, business, seq).put(&txn),
        keys::wallet_ref(&brand.tenant, business, reference).put(&WalletRef { txn_id: txn_id.clone(), seq }),
    ];
    (txn_id, ops)
}

/// Pays for one send and queues it: the price from the brand's table, a debit of `wallet` that
/// never takes it below zero, the wallet transaction (with `transaction_type`, `purpose` and
/// `auto_id`) and the channel-queue row of the delivery date, added to `ops`. The caller writes
/// `wallet` (with [`put_wallet`]) after `ops`, in the same batch, which is what commits the send.
///
/// Idempotent per send id: a send id already paid (its wallet row committed) adds nothing and
/// answers `replayed`. A wallet that cannot pay refuses with [`QueryError::Insufficient`].
pub async fn queue_send(
    brand: &mut Brand,
    wallet: &mut Wallet,
    send: &SendRequest,
    now: DateTime<Utc>,
    ops: &mut Vec<WriteOp>,
) -> Result<Queued, QueryError> {
    if let Some(txn_id) = committed(brand, &send.business, &send.send_id).await? {
        return Ok(Queued { txn_id, balance: text(wallet.balance), charged: None, queue: None, replayed: true });
    }
    let charge = pricing(brand).await?.price(send.purpose, send.channel, send.template_type);
    if let Err(short) = wallet.debit(charge.total) {
        metrics::counter!("engage_sends_skipped_total", "reason" => "balance").increment(1);
        return Err(QueryError::Insufficient(short));
    }
    let seq = wallet.txn_seq;
    let purpose =
        serde_json::to_value(send.purpose).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let txn = WalletTxn {
        txn_id: String::new(),
        transaction_type: "debit".to_owned(),
        amount: charge.total.normalize(),
        balance_after: Decimal::ZERO,
        purpose,
        at: now,
        status: 1,
        reference: None,
        cost: Some(charge.cost.normalize()),
        gst: Some(charge.gst.normalize()),
        channel: Some(send.channel),
        send_id: Some(send.send_id.clone()),
        auto_id: send.auto_id.clone(),
    };
    let (txn_id, txn_ops) = record_txn(brand, &send.business, wallet, &send.send_id, txn);
    ops.extend(txn_ops);
    let chat = send.channel == Channel::Chat;
    let row = QueuedSend {
        send_id: send.send_id.clone(),
        parent_business_id: brand.tenant.clone(),
        business_id: send.business.clone(),
        channel: send.channel,
        to: send.to.clone(),
        message: send.message.clone(),
        template_type: send.template_type,
        purpose: send.purpose,
        auto_id: send.auto_id.clone(),
        cost: charge.cost.normalize(),
        gst: charge.gst.normalize(),
        total: charge.total.normalize(),
        txn_id: txn_id.clone(),
        wallet_seq: seq,
        delivery_date: send.delivery_date.clone(),
        created_at: now,
        processed: (!chat).then_some(false),
        process_status: chat.then_some(0),
        attempts: 0,
        delivery_status: None,
        provider_message_id: None,
        sent_at: None,
        last_error: None,
        refunded: false,
        refund_txn_id: None,
        template_id: send.template_id.clone(),
        button: send.button.clone(),
        sender_id: send.sender_id.clone(),
        not_before: send.not_before,
    };
    let queue = format!("{}_{}", send.channel.queue(), send.delivery_date);
    ops.push(row.key().put(&row));
    metrics::counter!("engage_sends_queued_total", "channel" => format!("{:?}", send.channel).to_lowercase())
        .increment(1);
    Ok(Queued {
        txn_id,
        balance: text(wallet.balance),
        charged: Some(text(charge.total)),
        queue: Some(queue),
        replayed: false,
    })
}

/// One send on its own: [`queue_send`], then `extra` writes (rows the send belongs with), then the
/// wallet row, in one batch.
pub async fn send_now(
    brand: &mut Brand,
    send: &SendRequest,
    extra: Vec<WriteOp>,
    now: DateTime<Utc>,
) -> Result<Queued, QueryError> {
    let mut wallet = wallet(brand, &send.business).await?;
    let mut ops = Vec::new();
    let queued = queue_send(brand, &mut wallet, send, now, &mut ops).await?;
    if queued.replayed {
        return Ok(queued);
    }
    ops.extend(extra);
    ops.push(put_wallet(brand, &send.business, &wallet));
    brand.batch(ops).await?;
    Ok(queued)
}

/// Answers a wallet query.
pub async fn handle(brand: &mut Brand, query: WalletQuery) -> QueryReply {
    let now = Utc::now();
    match query {
        WalletQuery::Recharge { business, amount, reference, refund } => {
            reply(recharge(brand, &business, &amount, reference, refund, now).await)
        }
        WalletQuery::Balance { business } => {
            let wallet = wallet(brand, &business).await?;
            reply(Ok(Balance { business_id: business, balance: text(wallet.balance), transactions: wallet.txn_seq }))
        }
        WalletQuery::Txns { business, page, page_size } => {
            let wallet = wallet(brand, &business).await?;
            let page = page.max(1);
            let page_size = page_size.clamp(1, 100);
            let partition = keys::wallet_txns_partition(&brand.tenant, &business);
            let data = brand
                .repo()
                .seq_page(crate::repo::WALLET_TXNS, &partition, (page - 1) * page_size, page_size as usize)
                .await?;
            reply(Ok(TxnPage { data, page, page_size, total: wallet.txn_seq, balance: text(wallet.balance) }))
        }
        WalletQuery::Send(send) => reply(send_now(brand, &send, Vec::new(), now).await),
        WalletQuery::GetPricing => reply(Ok(pricing(brand).await?)),
        WalletQuery::SetPricing { pricing } => {
            pricing.check().map_err(QueryError::Invalid)?;
            brand.batch(vec![keys::pricing(&brand.tenant).put(&pricing)]).await?;
            brand.pricing = Some(pricing.clone());
            reply(Ok(pricing))
        }
    }
}

async fn recharge(
    brand: &mut Brand,
    business: &str,
    amount: &str,
    reference: Option<String>,
    refund: bool,
    now: DateTime<Utc>,
) -> Result<Recharged, QueryError> {
    let amount = decimal(&Value::String(amount.to_owned()))
        .filter(|a| *a > Decimal::ZERO)
        .ok_or_else(|| QueryError::Invalid(format!("amount {amount:?} must be a positive number")))?;
    let mut wallet = wallet(brand, business).await?;
    let reference = reference.unwrap_or_else(|| format!("recharge-{}", now.timestamp_nanos_opt().unwrap_or_default()));
    if let Some(txn_id) = committed(brand, business, &reference).await? {
        return Ok(Recharged { txn_id, balance: text(wallet.balance), replayed: true });
    }
    wallet.credit(amount);
    let txn = WalletTxn {
        txn_id: String::new(),
        transaction_type: "credit".to_owned(),
        amount: amount.normalize(),
        balance_after: Decimal::ZERO,
        purpose: if refund { "refund" } else { "recharge" }.to_owned(),
        at: now,
        status: 1,
        reference: Some(reference.clone()),
        cost: None,
        gst: None,
        channel: None,
        send_id: None,
        auto_id: None,
    };
    let (txn_id, mut ops) = record_txn(brand, business, &mut wallet, &reference, txn);
    ops.push(put_wallet(brand, business, &wallet));
    brand.batch(ops).await?;
    Ok(Recharged { txn_id, balance: text(wallet.balance), replayed: false })
}
