//! The rows an erasure keeps for the brand's totals, anonymised ([`Sweep`]): any row of a swept
//! partition whose key or value holds the customer's number (or their name) is written again with
//! the number replaced by a random stand-in (`erased-<12 hex>`, the same in every row of one
//! erasure, so ids that embed the number stay distinct and a report's distinct customers stay
//! right), the name and every [`PERSONAL`] field replaced by `"erased"`; a row whose key changes
//! is deleted under its old key. A queued message not yet sent is cancelled, and what was paid for
//! it is noted so the erasure credits it back.

use rust_decimal::Decimal;
use serde_json::Value;

use engage_storage::WriteOp;

use crate::query::QueryError;
use crate::tenant_core::Tenant;

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

/// Whether `bytes` hold `needle`.
pub(super) fn holds(bytes: &[u8], needle: &str) -> bool {
    !needle.is_empty() && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// `bytes` with every `from` replaced by `to`.
fn replaced(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        if rest.starts_with(from.as_bytes()) {
            out.extend_from_slice(to.as_bytes());
            rest = &rest[from.len()..];
        } else {
            out.push(rest[0]);
            rest = &rest[1..];
        }
    }
    out
}

/// A queued message an erasure cancelled, to be credited back.
pub(super) struct Cancelled {
    /// The paying outlet.
    pub business: String,
    /// What was debited for it.
    pub total: Decimal,
    /// The credit's reference: derived from the send's id, never the number.
    pub reference: String,
}

/// One erasure's anonymising writes.
pub(super) struct Sweep<'a> {
    phone: &'a str,
    name: Option<&'a str>,
    /// What replaces the number.
    pub stand_in: String,
    /// The writes so far.
    pub ops: Vec<WriteOp>,
    /// Rows anonymised so far.
    pub anonymised: u64,
    /// Queued messages cancelled so far.
    pub cancelled: Vec<Cancelled>,
}

impl<'a> Sweep<'a> {
    pub(super) fn new(phone: &'a str, name: Option<&'a str>) -> Self {
        let stand_in = format!("erased-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        Self {
            phone,
            name: name.filter(|n| n.len() >= 3),
            stand_in,
            ops: Vec::new(),
            anonymised: 0,
            cancelled: Vec::new(),
        }
    }

    /// Whether `bytes` name the customer.
    pub(super) fn names(&self, bytes: &[u8]) -> bool {
        holds(bytes, self.phone) || self.name.is_some_and(|name| holds(bytes, name))
    }

    /// `value` with the number replaced, and the name and every [`PERSONAL`] field erased.
    pub(super) fn scrub(&self, value: &mut Value) {
        match value {
            Value::String(text) => {
                if self.name.is_some_and(|name| text.contains(name)) {
                    *text = "erased".to_owned();
                } else if text.contains(self.phone) {
                    *text = text.replace(self.phone, &self.stand_in);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.scrub(item)),
            Value::Object(fields) => {
                for (key, field) in fields.iter_mut() {
                    if PERSONAL.contains(&key.as_str()) && !field.is_null() {
                        *field = match field {
                            Value::Array(_) => Value::Array(Vec::new()),
                            _ => Value::String("erased".to_owned()),
                        };
                    } else {
                        self.scrub(field);
                    }
                }
            }
            _ => {}
        }
    }

    /// Anonymises the rows of `partition` that name the customer and that `keep` takes (by key
    /// and value).
    pub(super) async fn partition(
        &mut self,
        tenant: &Tenant,
        table: &'static str,
        partition: &str,
        keep: impl Fn(&[u8], &Value) -> bool,
    ) -> Result<(), QueryError> {
        let mut after: Option<Vec<u8>> = None;
        loop {
            let rows = tenant.repo().store().scan(table, partition, after.as_deref(), 500).await?;
            let Some(last) = rows.last() else { break };
            after = Some(last.clustering.clone());
            for row in rows {
                if !self.names(&row.clustering) && !self.names(&row.value) {
                    continue;
                }
                let Ok(mut value) = serde_json::from_slice::<Value>(&row.value) else { continue };
                if !keep(&row.clustering, &value) {
                    continue;
                }
                self.cancel_unsent(&mut value);
                self.scrub(&mut value);
                let clustering = replaced(&row.clustering, self.phone, &self.stand_in);
                if clustering != row.clustering {
                    self.ops.push(WriteOp::Delete {
                        table,
                        partition: partition.to_owned(),
                        clustering: row.clustering,
                    });
                }
                let value = serde_json::to_vec(&value).map_err(|e| QueryError::Failed(e.to_string()))?;
                self.ops.push(WriteOp::Put { table, partition: partition.to_owned(), clustering, value });
                self.anonymised += 1;
            }
        }
        Ok(())
    }

    /// A queued message not yet sent never goes out: it is settled `cancelled`, and what was paid
    /// for it is noted for the credit back.
    fn cancel_unsent(&mut self, value: &mut Value) {
        let unsent =
            value.get("processed") == Some(&Value::Bool(false)) || value.get("process_status") == Some(&Value::from(0));
        if !unsent {
            return;
        }
        value["processed"] = Value::Bool(true);
        if value.get("process_status").is_some() {
            value["process_status"] = Value::from(2);
        }
        value["delivery_status"] = Value::String("cancelled".to_owned());
        let paid = value.get("total").and_then(Value::as_str).and_then(|t| t.parse::<Decimal>().ok());
        let business = value.get("business_id").and_then(Value::as_str);
        let send_id = value.get("send_id").and_then(Value::as_str).unwrap_or_default();
        if let (Some(total), Some(business)) = (paid.filter(|t| *t > Decimal::ZERO), business) {
            if value.get("refunded") != Some(&Value::Bool(true)) {
                let reference = format!("erasure-{}", crate::keys::digest(&["erasure", business, send_id]));
                self.cancelled.push(Cancelled { business: business.to_owned(), total, reference });
                value["refunded"] = Value::Bool(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubbing_leaves_no_number_name_or_personal_field() {
        let sweep = Sweep::new("9811400001", Some("Asha"));
        let mut row = serde_json::json!({"mobile_number": "9811400001", "name": "Asha", "rating": 4,
            "comment": "great", "payload": {"customer": {"phone": "9811400001", "email": "a@x.in"}, "amount": 250},
            "message": "Hi Asha", "to": "+919811400001", "send_id": "bulk-1-9811400001"});
        sweep.scrub(&mut row);
        let text = row.to_string();
        assert!(!text.contains("9811400001") && !text.contains("Asha") && !text.contains("a@x.in"), "{text}");
        assert_eq!((&row["rating"], &row["payload"]["amount"]), (&serde_json::json!(4), &serde_json::json!(250)));
        assert_eq!(row["send_id"], format!("bulk-1-{}", sweep.stand_in), "ids stay distinct");
        assert_eq!(replaced(b"t|bulk-1-9811400001", "9811400001", "x"), b"t|bulk-1-x");
    }
}
