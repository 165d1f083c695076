//! Delivery receipts (`docs/senders.md`, "Receipts"), applied in the brand's actor once its
//! webhook's signature is the brand's ([`super::webhooks`]): the send the provider names moves to
//! `delivered`, `read` or `failed` in the brand's channel queue, a failed one is credited back
//! once, and the day's `send_receipts` row counts them for `/stats/metrics/campaigns`.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use crate::capabilities::wallet::QueuedSend;
use crate::domain::receipt::{Receipt, SendRef};
use crate::keys;
use crate::query::QueryError;
use crate::tenant_core::Tenant;

/// One receipt as a provider posted it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Posted {
    /// The provider's id of the message (Twilio's `MessageSid`, WhatsApp's `id`).
    pub message_id: String,
    /// The send, as the provider echoed it back (`None`: it named none engage knows).
    pub send: Option<SendRef>,
    /// What it says.
    pub receipt: Receipt,
    /// The provider's error code or title, on a failure.
    pub error: Option<String>,
}

/// Applies `posted` to the brand's send: whether it moved it. A receipt for a send the brand
/// does not have, or whose provider message id is another (a forged or stale reference), or that
/// would move it backwards, changes nothing.
pub async fn apply(tenant: &mut Tenant, posted: &Posted, now: DateTime<Utc>) -> Result<bool, QueryError> {
    let Some(send) = &posted.send else { return Ok(false) };
    let (queue, day) = send.parts();
    let key = keys::queued_send(queue, day, &tenant.id, &send.send_id);
    let Some(mut row) = tenant.get::<QueuedSend>(&key).await? else {
        tracing::info!(tenant = %tenant.id, send_id = send.send_id, "a receipt for no send of the brand");
        return Ok(false);
    };
    if row.provider_message_id.as_deref() != Some(posted.message_id.as_str())
        || !posted.receipt.moves(row.delivery_status.as_deref())
    {
        return Ok(false);
    }
    let before = row.delivery_status.clone();
    row.delivery_status = Some(posted.receipt.name().to_owned());
    row.receipt_at = Some(now);
    if posted.receipt == Receipt::Failed {
        row.last_error = Some(posted.error.clone().unwrap_or_else(|| "the provider could not deliver it".into()));
        row.settle(false);
        if !row.refunded && !row.total.is_zero() {
            // the reference a refused send's credit uses: never credited twice
            let amount = row.total.to_string();
            let reference = Some(format!("refund-{}", row.send_id));
            let credit =
                crate::capabilities::wallet::recharge(tenant, &row.business_id, &amount, reference, true, now).await?;
            row.refunded = true;
            row.refund_txn_id = Some(credit.txn_id);
        }
    }
    let mut ops = row.writes().to_vec();
    ops.push(count(tenant, &row, before.as_deref(), posted.receipt, now).await?);
    tenant.batch(ops).await?;
    metrics::counter!("engage_send_receipts_total", "status" => posted.receipt.name()).increment(1);
    tracing::info!(tenant = %tenant.id, send_id = row.send_id, status = posted.receipt.name(), "a send's receipt");
    Ok(true)
}

/// The day's `send_receipts` row of the send's outlet with the receipt counted: a send read
/// without a delivery receipt before counts as delivered too.
async fn count(
    tenant: &Tenant,
    row: &QueuedSend,
    before: Option<&str>,
    receipt: Receipt,
    now: DateTime<Utc>,
) -> Result<engage_storage::WriteOp, QueryError> {
    let key = keys::send_receipts(&tenant.id, &crate::domain::time::ist_day(now), &row.business_id);
    let mut counts: Value = tenant.get(&key).await?.unwrap_or_else(|| json!({"child_business_id": row.business_id}));
    let channel =
        serde_json::to_value(row.channel).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let mut add = |status: &str| {
        let field = format!("{channel}_{status}");
        let total = counts.get(&field).and_then(Value::as_u64).unwrap_or(0) + 1;
        counts[field.as_str()] = Value::from(total);
    };
    if receipt == Receipt::Read && before == Some("sent") {
        add(Receipt::Delivered.name());
    }
    add(receipt.name());
    Ok(key.put(&counts))
}
