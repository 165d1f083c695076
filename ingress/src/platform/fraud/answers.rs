//! The answers of the fraud routes ([`crate::platform::fraud`]), each a type: `/openapi.json` documents
//! each route's 200 from these.

use schemars::JsonSchema;
use serde::Serialize;

use engage_actors::capabilities::fraud::AlertSettings;
use engage_actors::domain::fraud::{FraudFlag, VelocityRules};

pub use crate::platform::edge::upload::InvalidLine;

/// `{message, rules}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RulesSaved {
    /// "fraud wallet rules saved".
    pub message: &'static str,
    /// The velocity limits now.
    pub rules: VelocityRules,
}

/// `{message, settings}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SettingsSaved {
    /// "fraud alert settings saved".
    pub message: &'static str,
    /// The alert settings now.
    pub settings: AlertSettings,
}

/// The brand's fraud configuration.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Configuration {
    /// The velocity limits.
    pub wallet_rules: VelocityRules,
    /// The alert settings; null until set.
    pub alert_settings: Option<AlertSettings>,
}

/// What a blocklist upload did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Uploaded {
    /// Numbers added.
    pub inserted: usize,
    /// Lines whose number was on the list already, or given before in the file.
    pub duplicates: Vec<DuplicateLine>,
    /// Lines refused, with why.
    pub invalid: Vec<InvalidLine>,
    /// Store batches written.
    pub batches: usize,
}

/// A line of the file whose number is a duplicate.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DuplicateLine {
    /// Line of the file (the header is line 1).
    pub line: usize,
    /// The number.
    pub contact: String,
}

/// `{deleted}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Deleted {
    /// Entries removed.
    pub deleted: usize,
}

/// A staff action on each contact's flags: `status` false (and HTTP 409) when every contact was
/// refused.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlagResults {
    /// Whether any contact's flags changed.
    pub status: bool,
    /// Per contact, in the order given.
    pub results: Vec<FlagResult>,
}

/// The action on one contact's flags.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlagResult {
    /// The contact.
    pub contact: String,
    /// Whether its flags changed.
    pub ok: bool,
    /// Its flags as written (when ok).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<FraudFlag>>,
    /// Whether the customer is blocked now (when ok).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_blocked: Option<bool>,
    /// Why it was refused (when not ok).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Whether a contact is blocked.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Blocked {
    /// The contact.
    pub contact: String,
    /// On the blocklist or blocked by staff.
    pub blocked: bool,
    /// On the blocklist.
    pub blocklisted: bool,
    /// Blocked by staff.
    pub is_blocked: bool,
}

/// What a fraud alert send did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AlertQueued {
    /// Messages queued.
    pub queued: usize,
    /// Recipients the wallet could not pay for.
    pub skipped: Vec<SkippedRecipient>,
    /// Rupees charged (decimal text).
    pub charged: String,
}

/// A recipient not sent to.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SkippedRecipient {
    /// The recipient.
    pub recipient: String,
    /// Why.
    pub reason: String,
}
