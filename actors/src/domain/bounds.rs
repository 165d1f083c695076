//! What an event must be before processing touches a row for it. The edge refuses anything else
//! with a 400 or 413; an event published straight onto the stream (a replay with the NATS CLI, a
//! hand-written message) skipped the edge, so the engine checks the same bounds again before the
//! event reaches its tenant's actor, and parks one that fails them at once, with the reason (no
//! retry can help it). Ids become store keys and NATS subjects: a bound keeps every key far below
//! what a store or the NATS protocol accepts, whatever the id holds.

use serde_json::Value;

use engage_streams::Envelope;

/// Largest event payload, as JSON (the edge's 413 bound: an order row and a queue record hold
/// the payload, and a NATS KV value or message at most 1 MiB).
pub const MAX_EVENT_BYTES: usize = 256 * 1024;
/// Longest id (`parentBusinessId`, `businessId`, `orderId`, `refundId`), in characters.
pub const MAX_ID: usize = 128;
/// Longest envelope id, source, trace id or `received_at`, in bytes.
const MAX_ENVELOPE_FIELD: usize = 128;
/// Fields holding an id.
const ID_FIELDS: [&str; 4] = ["parentBusinessId", "businessId", "orderId", "refundId"];
/// Fields holding a phone number.
const PHONE_FIELDS: [&str; 3] = ["phone", "referrer_number", "customer_number"];

/// A phone number as the edge accepts it ([`crate::domain::phone`]: an optional `+`, then 7 to
/// 15 digits, spaces, hyphens and parentheses between them allowed).
pub fn is_phone(text: &str) -> bool {
    crate::domain::phone::parse(text).is_ok()
}

fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Why `envelope` cannot be processed, when it is out of bounds (see the module). `encoded_len`
/// is the whole envelope's JSON size when the bus knows it: within [`MAX_EVENT_BYTES`], the
/// payload is too, and is not measured again.
pub fn refusal(envelope: &Envelope, encoded_len: Option<usize>) -> Option<String> {
    for (name, value) in [
        ("id", &envelope.id),
        ("source", &envelope.source),
        ("trace_id", &envelope.trace_id),
        ("received_at", &envelope.received_at),
    ] {
        if value.len() > MAX_ENVELOPE_FIELD {
            return Some(format!("the envelope's {name} is {} bytes long (at most {MAX_ENVELOPE_FIELD})", value.len()));
        }
    }
    if envelope.id.is_empty() {
        return Some("the envelope has no id".to_owned());
    }
    if crate::domain::time::parse_instant(&envelope.received_at).is_none() {
        return Some(format!("the envelope's received_at {:?} is not an RFC 3339 time", envelope.received_at));
    }
    if envelope.tenant.is_empty() || envelope.tenant.chars().count() > MAX_ID {
        return Some(format!("the tenant id is {} characters long (1 to {MAX_ID})", envelope.tenant.chars().count()));
    }
    let size = match encoded_len {
        Some(whole) if whole <= MAX_EVENT_BYTES => whole,
        _ => serde_json::to_vec(&envelope.payload).map_or(usize::MAX, |bytes| bytes.len()),
    };
    if size > MAX_EVENT_BYTES {
        return Some(format!("the payload is {size} bytes as JSON (at most {MAX_EVENT_BYTES})"));
    }
    let payload = &envelope.payload;
    let customer = payload.get("customer");
    for field in ID_FIELDS {
        if let Some(id) = payload.get(field).and_then(id_text) {
            let length = id.chars().count();
            if length > MAX_ID {
                return Some(format!("{field} is {length} characters long (at most {MAX_ID})"));
            }
        }
    }
    let phones = PHONE_FIELDS
        .iter()
        .map(|field| (*field, payload.get(*field)))
        .chain([("customer.phone", customer.and_then(|c| c.get("phone")))]);
    for (field, value) in phones {
        let Some(phone) = value.and_then(id_text) else { continue };
        if !is_phone(&phone) {
            let shown: String = phone.chars().take(20).collect();
            return Some(format!(
                "{field} {shown:?}{} ({} characters) is not a phone number (+ and 7 to 15 digits; spaces, hyphens and parentheses between them)",
                if phone.chars().count() > 20 { "…" } else { "" },
                phone.chars().count()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use engage_streams::EventKind;
    use serde_json::json;

    fn refusal_of(envelope: &Envelope) -> Option<String> {
        refusal(envelope, None)
    }

    fn order(payload: Value) -> Envelope {
        Envelope::new(EventKind::Order, "platform", 1, "brand-1", "t", payload)
    }

    #[test]
    fn an_event_the_edge_accepts_passes() {
        let fine =
            order(json!({"businessId": "o", "orderId": 12, "customer": {"phone": "+919876543210"}, "amount": 1}));
        assert_eq!(refusal_of(&fine), None);
    }

    #[test]
    fn ids_and_phones_that_cannot_be_keys_are_refused_with_the_reason() {
        let long_phone = "9".repeat(3000);
        let refused = refusal_of(&order(json!({"businessId": "o", "orderId": "1", "customer": {"phone": long_phone}})));
        assert!(
            refused.as_deref().is_some_and(|r| r.contains("customer.phone") && r.contains("3000 characters")),
            "{refused:?}"
        );
        let refused = refusal_of(&order(json!({"businessId": "o", "orderId": "x".repeat(129)})));
        assert!(refused.as_deref().is_some_and(|r| r.starts_with("orderId is 129")), "{refused:?}");
        let mut hostile = order(json!({"businessId": "o"}));
        hostile.tenant = "t".repeat(500);
        assert!(refusal_of(&hostile).is_some());
        let mut big = order(json!({"businessId": "o", "note": "x".repeat(MAX_EVENT_BYTES)}));
        assert!(refusal_of(&big).is_some_and(|r| r.contains("payload")));
        // a bus that knows the envelope is small is trusted; one that knows it is big is not
        assert!(refusal(&big, Some(MAX_EVENT_BYTES * 2)).is_some());
        big.payload = json!({});
        big.received_at = "yesterday".into();
        assert!(refusal_of(&big).is_some_and(|r| r.contains("received_at")));
        assert!(refusal_of(&order(json!({"phone": "12ab567"}))).is_some());
    }
}
