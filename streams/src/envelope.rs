//! The envelope every ingestion event travels in: `{id, source, kind, tenant, received_at,
//! payload}`, readable as JSON with `nats stream view`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What an envelope carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// An order (all `/injestion/*` order routes, orderPush, the serverless tier).
    Order,
    /// `/injestion/createCustomer`.
    Customer,
    /// `/injestion/fcms`: a push token.
    PushToken,
    /// `/injestion/checkin`.
    Checkin,
    /// `/update/business/status`.
    BusinessStatus,
    /// `/insert/merchant/data`.
    MerchantData,
    /// `/sync/crm/token`.
    CrmToken,
    /// `/integration/v1/order/refund`: a refund of an order, by refund id.
    Refund,
}

/// One ingestion event on the bus.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// Message id: `Nats-Msg-Id` for publish de-duplication and the actor's idempotency key.
    /// A digest of (kind, tenant, source, payload): the same event sent twice has the same id,
    /// an updated order (same orderId, new amount) has a new one.
    pub id: String,
    /// Source name: `platform`, `pos_a`, `pos_c`, `orderPush`, `pos_d`, `pos_e`, `salon`,
    /// `instant`, or the route's name for non-order events.
    pub source: String,
    /// The spec's source id: 1 platform, 2 pos_a, 3 pos_c, 4 orderPush, 6 pos_d, 7 pos_e
    /// (salon and instant orders count as platform, 1); 0 for non-order events.
    pub source_id: u8,
    /// What the payload is.
    pub kind: EventKind,
    /// The tenant: `parent_business_id`.
    pub tenant: String,
    /// When the ingress accepted it (RFC 3339, UTC).
    pub received_at: String,
    /// `lambda` when written by the serverless tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_source: Option<String>,
    /// The request's trace id.
    pub trace_id: String,
    /// The payload as received (validated by the route).
    pub payload: Value,
    /// The bus position it was first accepted at, when it travels again (a dead-letter replay
    /// keeps its rank; the instant-order route applies it with the position its publish got).
    /// Absent on a first publish: the delivery's own position ranks it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u64>,
}

impl Envelope {
    /// A new envelope; its id is derived from the content (see [`Envelope::id`]).
    pub fn new(kind: EventKind, source: &str, source_id: u8, tenant: &str, trace_id: &str, payload: Value) -> Self {
        let id = content_id(kind, source, tenant, &payload);
        Self {
            id,
            source: source.to_owned(),
            source_id,
            kind,
            tenant: tenant.to_owned(),
            received_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            api_source: None,
            trace_id: trace_id.to_owned(),
            payload,
            position: None,
        }
    }
}

/// The spec's source id of a source name.
pub fn source_id(source: &str) -> u8 {
    match source {
        "platform" | "salon" | "instant" => 1,
        "pos_a" => 2,
        "pos_c" => 3,
        "orderPush" => 4,
        "pos_d" => 6,
        "pos_e" => 7,
        _ => 0,
    }
}

fn content_id(kind: EventKind, source: &str, tenant: &str, payload: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(serde_json::to_vec(&kind).unwrap_or_default());
    hasher.update([0]);
    hasher.update(source.as_bytes());
    hasher.update([0]);
    hasher.update(tenant.as_bytes());
    hasher.update([0]);
    // serde_json maps are ordered by key, so equal payloads serialise equally
    hasher.update(payload.to_string().as_bytes());
    let digest = hasher.finalize();
    hex::encode(&digest[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_follow_content() {
        let a = Envelope::new(EventKind::Order, "platform", 1, "t", "tr", json!({"orderId": "1", "amount": 10}));
        let b =
            Envelope::new(EventKind::Order, "platform", 1, "t", "other-trace", json!({"amount": 10, "orderId": "1"}));
        let c = Envelope::new(EventKind::Order, "platform", 1, "t", "tr", json!({"orderId": "1", "amount": 11}));
        assert_eq!(a.id, b.id, "same content, same id");
        assert_ne!(a.id, c.id, "updated order, new id");
        assert_eq!(a.id.len(), 32);
    }

    #[test]
    fn source_ids_match_the_spec() {
        assert_eq!(["platform", "pos_a", "pos_c", "orderPush", "pos_d", "pos_e"].map(source_id), [1, 2, 3, 4, 6, 7]);
    }
}
