//! Erasure of a customer's personal data in one brand ([`Erase`]): in the brand's actor's turn,
//! so no order or question of the customer runs half-way through it.
//!
//! - the customer row, the loyalty ledger, the redemptions, the subscriptions and the opt-out link
//!   are deleted, and the actor forgets the cached customer;
//! - the brand's other rows that name the customer (order rows, coupons, bills, feedback requests,
//!   ratings, NPS answers, recoveries, queued messages of the last 35 days) are kept for the brand's
//!   totals and anonymised: every field holding the number, the name, an e-mail, a birthday or a
//!   comment becomes `"erased"` (or is emptied), and a queued message not yet sent is cancelled;
//! - journey decisions about the customer (keyed by the number) are deleted;
//! - an audit row (`erasures`, partition the brand): when, by whom, how many rows; no personal data.
//!
//! The dashboard's rollups hold no personal data and are left as they are, so `/stats` totals do
//! not move. Erasing twice changes nothing the second time (nothing names the number any more).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::WriteOp;

use super::names;
use crate::domain::customer::Customer;
use crate::keys;
use crate::query::{question, QueryError};
use crate::tables::{
    CAMPAIGN_JOURNEYS, CHANNEL_QUEUE, COUPONS, DIGITAL_BILLS, ERASURES, FEEDBACK_RECOVERIES, FEEDBACK_REQUESTS,
    JOURNEY_SENDS, LOYALTY_LEDGER, NPS_RESPONSES, RATINGS, REDEMPTIONS,
};
use crate::tenant_core::Tenant;

question! {
    /// Erases `phone`'s personal data in the brand: [`Erased`].
    pub struct Erase {
        /// Customer phone.
        pub phone: String,
        /// Who asked (a staff token's id, or `cli`): kept in the audit row.
        pub by: String,
        /// When.
        pub now: DateTime<Utc>,
    } -> Erased;
}

/// What an erasure did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Erased {
    /// Rows deleted.
    pub deleted: u64,
    /// Rows kept for the brand's totals, anonymised.
    pub anonymised: u64,
    /// Queued messages not yet sent, cancelled.
    pub cancelled: u64,
}

/// Fields whose value is personal whatever it holds.
const PERSONAL: [&str; 12] = [
    "name",
    "customer_name",
    "email",
    "dob",
    "anniversary",
    "gender",
    "comment",
    "comments",
    "message",
    "address",
    "push_tokens",
    "questions",
];

/// `value` with every string naming `phone` or `name`, and every [`PERSONAL`] field, erased.
fn scrub(value: &mut Value, phone: &str, name: Option<&str>) {
    match value {
        Value::String(text) if text.contains(phone) || name.is_some_and(|n| !n.is_empty() && text.contains(n)) => {
            *text = "erased".to_owned();
        }
        Value::Array(items) => items.iter_mut().for_each(|item| scrub(item, phone, name)),
        Value::Object(fields) => {
            for (key, field) in fields.iter_mut() {
                if PERSONAL.contains(&key.as_str()) && !field.is_null() {
                    *field = match field {
                        Value::Array(_) => Value::Array(Vec::new()),
                        _ => Value::String("erased".to_owned()),
                    };
                } else {
                    scrub(field, phone, name);
                }
            }
        }
        _ => {}
    }
}

/// The writes that anonymise the rows of `partition` that name `phone`, and how many.
async fn anonymise(
    tenant: &Tenant,
    table: &'static str,
    partition: &str,
    phone: &str,
    name: Option<&str>,
    keep: impl Fn(&Value) -> bool,
    ops: &mut Vec<WriteOp>,
) -> Result<(u64, u64), QueryError> {
    let (mut anonymised, mut cancelled) = (0, 0);
    let mut after: Option<Vec<u8>> = None;
    loop {
        let rows = tenant.repo().store().scan(table, partition, after.as_deref(), 500).await?;
        let Some(last) = rows.last() else { break };
        after = Some(last.clustering.clone());
        for row in rows {
            let Ok(mut value) = serde_json::from_slice::<Value>(&row.value) else { continue };
            if !names(&value, phone) || !keep(&value) {
                continue;
            }
            // a queued message not yet sent is cancelled: it never goes out
            if value.get("processed") == Some(&Value::Bool(false)) {
                value["processed"] = Value::Bool(true);
                value["delivery_status"] = Value::String("cancelled".to_owned());
                cancelled += 1;
            } else if value.get("process_status") == Some(&Value::from(0)) {
                value["process_status"] = Value::from(2);
                value["refunded"] = Value::Bool(true);
                value["delivery_status"] = Value::String("cancelled".to_owned());
                cancelled += 1;
            }
            scrub(&mut value, phone, name);
            let value = serde_json::to_vec(&value).map_err(|e| QueryError::Failed(e.to_string()))?;
            ops.push(WriteOp::Put { table, partition: partition.to_owned(), clustering: row.clustering, value });
            anonymised += 1;
        }
    }
    Ok((anonymised, cancelled))
}

/// The deletes of every row of `partition`.
async fn delete_all(
    tenant: &Tenant,
    table: &'static str,
    partition: &str,
    ops: &mut Vec<WriteOp>,
) -> Result<u64, QueryError> {
    let rows = tenant.repo().store().scan(table, partition, None, 100_000).await?;
    let n = rows.len() as u64;
    ops.extend(rows.into_iter().map(|row| WriteOp::Delete {
        table,
        partition: partition.to_owned(),
        clustering: row.clustering,
    }));
    Ok(n)
}

/// Erases `phone` in the brand.
pub async fn erase(tenant: &mut Tenant, phone: &str, by: &str, now: DateTime<Utc>) -> Result<Erased, QueryError> {
    let id = tenant.id.clone();
    let customer: Option<Customer> = tenant.repo().get(&keys::customer(&id, phone)).await?;
    let name = customer.as_ref().and_then(|c| c.name.clone());
    let name = name.as_deref();
    let mut ops = Vec::new();
    let mut done = Erased::default();
    if let Some(customer) = &customer {
        ops.push(keys::customer(&id, phone).delete());
        done.deleted += 1;
        for key in customer.orders.keys() {
            let (outlet, order_id) = key.split_once('/').unwrap_or(("", key));
            let order = keys::order(&id, outlet, order_id);
            if let Some(mut row) = tenant.repo().get::<Value>(&order).await? {
                scrub(&mut row, phone, name);
                ops.push(order.put(&row));
                done.anonymised += 1;
            }
        }
    }
    let mine = keys::ledger_partition(&id, phone);
    done.deleted += delete_all(tenant, LOYALTY_LEDGER, &mine, &mut ops).await?;
    done.deleted += delete_all(tenant, REDEMPTIONS, &mine, &mut ops).await?;
    for key in [
        keys::consent(&id, phone),
        keys::consent_link(&super::super::consent::link_code(tenant.ctx.services.links.salt(), &id, phone)),
    ] {
        if tenant.repo().get::<Value>(&key).await?.is_some() {
            ops.push(key.delete());
            done.deleted += 1;
        }
    }
    for table in [COUPONS, DIGITAL_BILLS, FEEDBACK_REQUESTS, RATINGS, NPS_RESPONSES, FEEDBACK_RECOVERIES] {
        let (anonymised, _) = anonymise(tenant, table, &id, phone, name, |_| true, &mut ops).await?;
        done.anonymised += anonymised;
    }
    for partition in super::queue_partitions(now) {
        let ours = |row: &Value| row.get("parent_business_id").and_then(Value::as_str) == Some(id.as_str());
        let (anonymised, cancelled) = anonymise(tenant, CHANNEL_QUEUE, &partition, phone, name, ours, &mut ops).await?;
        done.anonymised += anonymised;
        done.cancelled += cancelled;
    }
    for journey in tenant.repo().clusterings(CAMPAIGN_JOURNEYS, &id).await? {
        let partition = keys::journey_sends_partition(&id, &journey);
        let prefix = format!("{phone}|");
        let rows = tenant.repo().store().scan(JOURNEY_SENDS, &partition, None, 100_000).await?;
        for row in rows.into_iter().filter(|r| r.clustering.starts_with(prefix.as_bytes())) {
            ops.push(WriteOp::Delete {
                table: JOURNEY_SENDS,
                partition: partition.clone(),
                clustering: row.clustering,
            });
            done.deleted += 1;
        }
    }
    if done == Erased::default() {
        return Ok(done);
    }
    let audit = serde_json::json!({"tenant": id, "at": now, "by": by, "deleted": done.deleted,
        "anonymised": done.anonymised, "cancelled": done.cancelled});
    let clustering =
        format!("{}|{}", now.timestamp_micros(), keys::digest(&["erasure", &id, phone, &now.to_rfc3339()]));
    ops.push(WriteOp::Put {
        table: ERASURES,
        partition: id.clone(),
        clustering: clustering.into_bytes(),
        value: serde_json::to_vec(&audit).map_err(|e| QueryError::Failed(e.to_string()))?,
    });
    for chunk in ops.chunks(500) {
        tenant.batch(chunk.to_vec()).await?;
    }
    tenant.forget_customer(phone);
    metrics::counter!("engage_customers_erased_total").increment(1);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubbing_leaves_no_number_name_or_personal_field() {
        let mut row = serde_json::json!({"mobile_number": "9811400001", "name": "Asha", "rating": 4,
            "comment": "great", "payload": {"customer": {"phone": "9811400001", "email": "a@x.in"}, "amount": 250},
            "message": "Hi Asha", "to": "+919811400001"});
        scrub(&mut row, "9811400001", Some("Asha"));
        let text = row.to_string();
        assert!(!text.contains("9811400001") && !text.contains("Asha") && !text.contains("a@x.in"), "{text}");
        assert_eq!((&row["rating"], &row["payload"]["amount"]), (&serde_json::json!(4), &serde_json::json!(250)));
    }
}
