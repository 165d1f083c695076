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
}

impl DeadLetter {
    /// The envelope id: what `engage dead-letters show|replay|drop` take.
    pub fn id(&self) -> &str {
        &self.envelope.id
    }
}

/// `engage.dead.<partition>.<token(tenant)>`.
pub fn dead_subject(partition: u32, tenant: &str) -> String {
    format!("{DEAD_LETTER_PREFIX}.{partition}.{}", token(tenant))
}
