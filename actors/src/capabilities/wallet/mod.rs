//! Business wallets and paid sends: recharges (idempotent per reference), balances, transaction
//! pages, the brand's price table, and [`queue_send`], the one path every paid message takes
//! (fraud alerts and one-time passwords now; journeys, bills and feedback next).

mod query;
mod rows;

pub use query::*;
pub use rows::*;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde_json::Value;

use engage_storage::WriteOp;

use crate::domain::order::decimal;
use crate::domain::sender::Sender;
use crate::domain::wallet::{Channel, Wallet};
use crate::keys::{self};
use crate::query::QueryError;
use crate::tenant_core::Tenant;

/// `message` with the customer's opt-out link (`{public_url}/u/<code>`) after it, and the write
/// that makes the link name the customer (every marketing message carries a way out).
fn with_opt_out(tenant: &Tenant, to: &str, message: &str, ops: &mut Vec<WriteOp>) -> String {
    use crate::capabilities::consent::{link_code, link_row};
    let links = &tenant.ctx.services.links;
    let code = link_code(links.salt(), &tenant.id, to);
    ops.push(link_row(&code, &tenant.id, to));
    format!("{message}\nOpt out: {}/u/{code}", links.base_url().trim_end_matches('/'))
}

/// Pays for one send and queues it: the price from the brand's table, a debit of `wallet` that
/// never takes it below zero, the wallet transaction (with `transaction_type`, `purpose` and
/// `auto_id`) and the channel-queue row of the delivery date, added to `ops`. The caller writes
/// `wallet` (with [`put_wallet`]) after `ops`, in the same batch, which is what commits the send.
///
/// Idempotent per send id: a send id already paid (its wallet row committed) adds nothing and
/// answers `replayed`. A wallet that cannot pay refuses with [`QueryError::Insufficient`]; a
/// marketing send to an unsubscribed customer with [`QueryError::NoConsent`]; a send the brand's
/// own sender would refuse (`docs/senders.md`) with [`QueryError::Unsendable`]: none of them
/// costs anything.
pub async fn queue_send(
    tenant: &mut Tenant,
    wallet: &mut Wallet,
    send: &SendRequest,
    now: DateTime<Utc>,
    ops: &mut Vec<WriteOp>,
) -> Result<Queued, QueryError> {
    if let Some(txn_id) = committed(tenant, &send.business, &send.send_id).await? {
        return Ok(Queued { txn_id, balance: text(wallet.balance), charged: None, queue: None, replayed: true });
    }
    let marketing = crate::domain::consent::is_marketing(send.purpose, send.template_type);
    if marketing && !crate::capabilities::consent::may_send(tenant, &send.to, send.channel).await? {
        crate::capabilities::consent::count_skips(tenant, &send.business, send.channel, 1, now).await?;
        return Err(QueryError::NoConsent(send.channel));
    }
    if let Some(sender) = tenant.get::<Sender>(&keys::brand_sender(&tenant.id, send.channel)).await? {
        if let Some(why) = sender.refuses(send.template_id.as_deref(), send.purpose) {
            metrics::counter!("engage_sends_skipped_total", "reason" => "sender").increment(1);
            return Err(QueryError::Unsendable(why));
        }
    }
    let charge = pricing(tenant).await?.price(send.purpose, send.channel, send.template_type);
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
    let (txn_id, txn_ops) = record_txn(tenant, &send.business, wallet, &send.send_id, txn);
    ops.extend(txn_ops);
    let chat = send.channel == Channel::Chat;
    let row = QueuedSend {
        send_id: send.send_id.clone(),
        parent_business_id: tenant.id.clone(),
        business_id: send.business.clone(),
        channel: send.channel,
        to: send.to.clone(),
        message: match marketing {
            true => with_opt_out(tenant, &send.to, &send.message, ops),
            false => send.message.clone(),
        },
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
        receipt_at: None,
        provider_message_id: None,
        sent_at: None,
        last_error: None,
        refunded: false,
        refund_txn_id: None,
        template_id: send.template_id.clone(),
        button: send.button.clone(),
        sender_id: send.sender_id.clone(),
        not_before: send.not_before,
        retry_at: None,
        failed_runs: 0,
    };
    let queue = format!("{}_{}", send.channel.queue(), send.delivery_date);
    ops.extend(row.writes());
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

/// Cancels the send `send_id` queued for `delivery_date` (`YYYYMMDD`) on any channel, when it
/// is still pending ([`QueuedSend::cancel`]); how many were.
pub async fn cancel_queued(
    tenant: &Tenant,
    send_id: &str,
    delivery_date: &str,
    why: &str,
    ops: &mut Vec<WriteOp>,
) -> Result<u32, engage_storage::StoreError> {
    let mut cancelled = 0;
    for channel in [Channel::Sms, Channel::Chat, Channel::Push] {
        let key = keys::queued_send(channel.queue(), delivery_date, &tenant.id, send_id);
        if let Some(mut row) = tenant.repo().get::<QueuedSend>(&key).await? {
            if row.pending() {
                row.cancel(why);
                ops.extend(row.writes());
                cancelled += 1;
                metrics::counter!("engage_sends_cancelled_total", "purpose" => format!("{:?}", row.purpose).to_lowercase())
                    .increment(1);
            }
        }
    }
    Ok(cancelled)
}

/// One send on its own: [`queue_send`], then `extra` writes (rows the send belongs with), then the
/// wallet row, in one batch.
pub async fn send_now(
    tenant: &mut Tenant,
    send: &SendRequest,
    extra: Vec<WriteOp>,
    now: DateTime<Utc>,
) -> Result<Queued, QueryError> {
    let mut wallet = wallet(tenant, &send.business).await?;
    let mut ops = Vec::new();
    let queued = queue_send(tenant, &mut wallet, send, now, &mut ops).await?;
    if queued.replayed {
        return Ok(queued);
    }
    ops.extend(extra);
    ops.push(put_wallet(tenant, &send.business, &wallet));
    tenant.batch(ops).await?;
    Ok(queued)
}

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _) let now = Utc::now();
    Recharge: Recharge { business, amount, reference, refund } => {
        recharge(tenant, &business, &amount, reference, refund, now).await
    },
    GetBalance: GetBalance { business } => {
        let wallet = wallet(tenant, &business).await?;
        Ok(Balance { business_id: business, balance: text(wallet.balance), transactions: wallet.txn_seq })
    },
    Txns: Txns { business, page, page_size } => {
        let wallet = wallet(tenant, &business).await?;
        let page = page.max(1);
        let page_size = page_size.clamp(1, 100);
        let partition = keys::wallet_txns_partition(&tenant.id, &business);
        let data = tenant
            .repo()
            .seq_page(crate::repo::WALLET_TXNS, &partition, (page - 1) * page_size, page_size as usize)
            .await?;
        Ok(TxnPage { data, page, page_size, total: wallet.txn_seq, balance: text(wallet.balance) })
    },
    SendRequest: send => send_now(tenant, &send, Vec::new(), now).await,
    GetPricing: _ => Ok(pricing(tenant).await?),
    SetPricing: SetPricing { patch } => {
        let pricing = patch.apply(&pricing(tenant).await?);
        pricing.check().map_err(|refused| QueryError::Invalid(refused.to_string()))?;
        tenant.batch(vec![keys::pricing(&tenant.id).put(&pricing)]).await?;
        tenant.pricing = Some(pricing.clone());
        Ok(pricing)
    },
}

pub(crate) async fn recharge(
    tenant: &mut Tenant,
    business: &str,
    amount: &str,
    reference: Option<String>,
    refund: bool,
    now: DateTime<Utc>,
) -> Result<Recharged, QueryError> {
    let amount = decimal(&Value::String(amount.to_owned()))
        .filter(|a| *a > Decimal::ZERO)
        .ok_or_else(|| QueryError::Invalid(format!("amount {amount:?} must be a positive number")))?;
    let mut wallet = wallet(tenant, business).await?;
    let reference = reference.unwrap_or_else(|| format!("recharge-{}", now.timestamp_nanos_opt().unwrap_or_default()));
    if let Some(txn_id) = committed(tenant, business, &reference).await? {
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
    let (txn_id, mut ops) = record_txn(tenant, business, &mut wallet, &reference, txn);
    ops.push(put_wallet(tenant, business, &wallet));
    tenant.batch(ops).await?;
    Ok(Recharged { txn_id, balance: text(wallet.balance), replayed: false })
}
