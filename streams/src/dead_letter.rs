//! Parked events: an envelope whose processing failed on every one of its deliveries (an error or
//! a panic, [`crate::bus::Bus::park`]) leaves its partition's queue and waits here, with why and
//! when, until an operator replays or drops it (`engage dead-letters`, `/admin/dead-letters`).
//!
//! - Embedded bus: table `dead_letters`, partition `all`, clustering the envelope id, value the
//!   [`DeadLetter`] as JSON.
//! - JetStream: stream [`DEAD_LETTER_STREAM`] (`engage.dead.<partition>.<tenant token>`, file
//!   storage, kept until dropped), one message per parked event, its payload the [`DeadLetter`]
//!   as JSON, headers `Nats-Msg-Id` (the envelope id), `Engage-Trace-Id`, `Engage-Tenant`,
//!   `Engage-Error` and `Engage-Attempts`: `nats stream view ENGAGE_DEAD_LETTERS` shows them.

use serde::{Deserialize, Serialize};

use crate::envelope::Envelope;
use crate::subject::token;

/// Stream of parked events (JetStream).
pub const DEAD_LETTER_STREAM: &str = "ENGAGE_DEAD_LETTERS";
/// Subject prefix of [`DEAD_LETTER_STREAM`].
pub const DEAD_LETTER_PREFIX: &str = "engage.dead";

/// One parked event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeadLetter {
    /// The envelope as it was published (a replay publishes it again).
    pub envelope: Envelope,
    /// The last failure.
    pub error: String,
    /// Deliveries that failed.
    pub attempts: u32,
    /// When its first failure was seen (RFC 3339; on this node, since it last started).
    pub first_failure: String,
    /// When its last failure was seen (RFC 3339).
    pub last_failure: String,
    /// The partition it was taken from.
    pub partition: u32,
    /// The bus position it was accepted at: a replay keeps this rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u64>,
    /// Set when the parked copy is not the whole event (it did not fit in a dead letter, or it
    /// was not an envelope at all): why it cannot be replayed, and where the original is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreplayable: Option<String>,
}

/// What a truncated or undecodable event keeps of its payload, in bytes.
pub const KEPT_HEAD: usize = 4096;

impl DeadLetter {
    /// Whether this parked event is `tenant`'s (or no tenant's: bytes that were never an
    /// envelope) and holds `phone` anywhere: what an erasure of that customer removes.
    pub fn names(&self, tenant: &str, phone: &str) -> bool {
        (self.envelope.tenant == tenant || self.envelope.tenant.is_empty())
            && serde_json::to_string(self).is_ok_and(|text| text.contains(phone))
    }

    /// The envelope id: what `engage dead-letters show|replay|drop` take.
    pub fn id(&self) -> &str {
        &self.envelope.id
    }

    /// A letter for bus bytes that are not an envelope at all (garbage published straight onto
    /// the stream): its id is `undecodable-<partition>-<position>`, its tenant what the subject
    /// names (or empty), its payload the first [`KEPT_HEAD`] bytes as text. It cannot be replayed.
    pub fn undecodable(partition: u32, position: u64, tenant: &str, raw: &[u8], error: &str, at: &str) -> Self {
        let head = String::from_utf8_lossy(&raw[..raw.len().min(KEPT_HEAD)]).into_owned();
        let payload = serde_json::json!({"undecodable": head, "bytes": raw.len()});
        let mut envelope = Envelope::new(crate::EventKind::Order, "undecodable", 0, tenant, "", payload);
        envelope.id = format!("undecodable-{partition}-{position}");
        Self {
            envelope,
            error: format!("not an envelope: {error}"),
            attempts: 1,
            first_failure: at.to_owned(),
            last_failure: at.to_owned(),
            partition,
            position: Some(position),
            unreplayable: Some(format!(
                "the message at position {position} of partition {partition} is not an engage envelope ({} bytes; the first {} kept here)",
                raw.len(),
                raw.len().min(KEPT_HEAD)
            )),
        }
    }

    /// This letter, cut to at most `limit` bytes as JSON: when the whole envelope does not fit
    /// (an event near the bus's own size limit), its payload is replaced by its first
    /// [`KEPT_HEAD`] bytes and the letter says where the original is. The error text is cut to
    /// 2 KiB as well.
    pub fn fit(mut self, limit: usize) -> (Self, Vec<u8>) {
        if self.error.len() > 2048 {
            let mut end = 2048;
            while !self.error.is_char_boundary(end) {
                end -= 1;
            }
            self.error.truncate(end);
        }
        let whole = serde_json::to_vec(&self).unwrap_or_default();
        if whole.len() <= limit {
            return (self, whole);
        }
        let text = self.envelope.payload.to_string();
        let mut end = text.len().min(KEPT_HEAD);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.envelope.payload = serde_json::json!({"truncated": &text[..end], "bytes": text.len()});
        let position = self.position.map_or_else(|| "unknown".to_owned(), |p| p.to_string());
        self.unreplayable = Some(format!(
            "its payload ({} bytes) did not fit in a dead letter; the first {end} bytes are kept here, the whole event is at position {position} of partition {} of the orders stream while the stream keeps it",
            text.len(),
            self.partition
        ));
        let cut = serde_json::to_vec(&self).unwrap_or_default();
        (self, cut)
    }
}

/// Longest tenant token a dead-letter subject carries as it is.
const MAX_SUBJECT_TOKEN: usize = 200;

/// `engage.dead.<partition>.<token(tenant)>`; a tenant whose token is longer than 200 bytes (an
/// event published by hand, out of bounds) is named by `~h` and a digest of it instead, so the
/// subject stays far inside the NATS protocol's control line.
pub fn dead_subject(partition: u32, tenant: &str) -> String {
    let mut tenant_token = token(tenant);
    if tenant_token.len() > MAX_SUBJECT_TOKEN {
        use sha2::Digest;
        tenant_token = format!("~h{}", hex::encode(&sha2::Sha256::digest(tenant.as_bytes())[..16]));
    }
    format!("{DEAD_LETTER_PREFIX}.{partition}.{tenant_token}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::EventKind;
    use serde_json::json;

    fn letter(payload: serde_json::Value) -> DeadLetter {
        DeadLetter {
            envelope: Envelope::new(EventKind::Order, "platform", 1, "t", "tr", payload),
            error: "e".repeat(5000),
            attempts: 5,
            first_failure: "a".into(),
            last_failure: "b".into(),
            partition: 3,
            position: Some(42),
            unreplayable: None,
        }
    }

    #[test]
    fn a_letter_that_fits_stays_whole_and_one_that_does_not_is_cut_and_says_where_the_event_is() {
        let (small, bytes) = letter(json!({"orderId": "1"})).fit(1 << 20);
        assert!(small.unreplayable.is_none());
        assert_eq!(small.error.len(), 2048, "errors are cut to 2 KiB");
        assert_eq!(serde_json::from_slice::<DeadLetter>(&bytes).unwrap(), small);
        let (cut, bytes) = letter(json!({"note": "x".repeat(1 << 20)})).fit(64 * 1024);
        assert!(bytes.len() <= 64 * 1024, "{}", bytes.len());
        let why = cut.unreplayable.as_deref().unwrap();
        assert!(why.contains("position 42 of partition 3"), "{why}");
        assert_eq!(cut.envelope.payload["bytes"], json!((1 << 20) + 11));
    }

    #[test]
    fn bytes_that_are_no_envelope_become_an_unreplayable_letter() {
        let letter = DeadLetter::undecodable(2, 9, "brand", b"\xff\x00garbage", "expected value", "now");
        assert_eq!(letter.id(), "undecodable-2-9");
        assert!(letter.unreplayable.is_some() && letter.error.contains("not an envelope"));
        assert_eq!(letter.envelope.payload["bytes"], json!(9));
    }

    #[test]
    fn a_dead_letter_subject_stays_short_whatever_the_tenant() {
        assert_eq!(dead_subject(1, "brand-1"), "engage.dead.1.brand-1");
        let long = dead_subject(1, &"é".repeat(3000));
        assert!(long.len() < 100 && long.starts_with("engage.dead.1.~h"), "{long}");
    }
}
