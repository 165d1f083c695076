//! The answers of the loopback admin routes ([`crate::platform::admin`], [`crate::platform::admin::dead_letters`]), each a
//! type: `/openapi.json` documents each route's answer from these.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use engage_actors::jobs::JobSchedule;
use engage_streams::dead_letter::DeadLetter;

use crate::platform::edge::tokens::TokenGrant;

/// Where the server's admin key is.
#[derive(Debug, Serialize, JsonSchema)]
pub struct KeyLocation {
    /// The key file's absolute path (when the key is kept in a file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_file: Option<String>,
    /// `ENGAGE_ADMIN_KEY` (when the key is set by it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_setting: Option<&'static str>,
}

/// The scheduled jobs.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Jobs {
    /// Each job, its cron and next run.
    pub jobs: Vec<JobSchedule>,
}

/// A job run now.
#[derive(Debug, Serialize, JsonSchema)]
pub struct JobRun {
    /// The job.
    pub job: &'static str,
    /// What it did: the job's own outcome (one shape per job; docs/operations.md names each).
    pub outcome: engage_actors::jobs::JobOutcome,
}

/// The tokens.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Tokens {
    /// Every token (never its secret).
    pub tokens: Vec<TokenGrant>,
}

/// A token made.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Created {
    /// What it grants.
    #[serde(flatten)]
    pub grant: TokenGrant,
    /// The token itself: shown once.
    pub token: String,
}

/// `{revoked: true}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Revoked {
    /// True.
    pub revoked: bool,
}

/// The parked events.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DeadLetters {
    /// Oldest first, without their payloads.
    pub dead_letters: Vec<LetterSummary>,
}

/// A parked event without its payload.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LetterSummary {
    /// The event's id.
    pub id: String,
    /// Its brand.
    pub tenant: String,
    /// What it carries.
    pub kind: Value,
    /// Where it came from.
    pub source: String,
    /// Its trace id.
    pub trace_id: String,
    /// When the edge accepted it.
    pub received_at: String,
    /// Why it was parked.
    pub error: String,
    /// Deliveries tried.
    pub attempts: u32,
    /// When it first failed.
    pub first_failure: String,
    /// When it last failed.
    pub last_failure: String,
    /// Its partition.
    pub partition: u32,
    /// Its bus position, when known.
    pub position: Option<u64>,
    /// Whether it can be replayed.
    pub replayable: bool,
}

impl LetterSummary {
    /// The summary of `letter`.
    pub fn of(letter: &DeadLetter) -> Self {
        let envelope = &letter.envelope;
        Self {
            id: envelope.id.clone(),
            tenant: envelope.tenant.clone(),
            kind: serde_json::to_value(envelope.kind).unwrap_or(Value::Null),
            source: envelope.source.clone(),
            trace_id: envelope.trace_id.clone(),
            received_at: envelope.received_at.clone(),
            error: letter.error.clone(),
            attempts: letter.attempts,
            first_failure: letter.first_failure.clone(),
            last_failure: letter.last_failure.clone(),
            partition: letter.partition,
            position: letter.position,
            replayable: letter.unreplayable.is_none(),
        }
    }
}

/// A parked event whole.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Letter {
    /// The event as accepted (free-form: each kind's own fields, and its payload as received).
    pub envelope: Value,
    /// Why it was parked.
    pub error: String,
    /// Deliveries tried.
    pub attempts: u32,
    /// When it first failed.
    pub first_failure: String,
    /// When it last failed.
    pub last_failure: String,
    /// Its partition.
    pub partition: u32,
    /// Its bus position, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<u64>,
    /// Why it cannot be replayed, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreplayable: Option<String>,
}

impl Letter {
    /// `letter` whole.
    pub fn of(letter: DeadLetter) -> Self {
        Self {
            envelope: serde_json::to_value(&letter.envelope).unwrap_or(Value::Null),
            error: letter.error,
            attempts: letter.attempts,
            first_failure: letter.first_failure,
            last_failure: letter.last_failure,
            partition: letter.partition,
            position: letter.position,
            unreplayable: letter.unreplayable,
        }
    }
}

/// `{dropped: true, id}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Dropped {
    /// True.
    pub dropped: bool,
    /// The event.
    pub id: String,
}

/// `{replayed: true, id, tenant}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Replayed {
    /// True.
    pub replayed: bool,
    /// The event.
    pub id: String,
    /// Its brand.
    pub tenant: String,
}
