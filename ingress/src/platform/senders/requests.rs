//! `/crm_api/senders`: a brand's own senders.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use engage_actors::domain::wallet::Channel;

/// The provider named in a sender change: one of the providers, or `default` (the node-wide one).
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ProviderChoice {
    /// The node-wide provider: the brand's sender on the channel is removed.
    Default,
    /// engage's own JSON to the brand's URL.
    Generic,
    /// Twilio Programmable Messaging.
    Twilio,
    /// An Indian DLT gateway, MSG91 Flow style.
    Msg91,
    /// The WhatsApp Cloud API.
    WhatsappCloud,
    /// Firebase Cloud Messaging HTTP v1 (push).
    Fcm,
}

/// A credential as sent: text, or (an FCM service-account key) the key file's JSON object.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum CredentialInput {
    /// A token, a key, or a key file's text.
    Text(#[schemars(length(min = 1, max = 4096))] String),
    /// An FCM service-account key file, as its JSON object.
    Key(serde_json::Map<String, serde_json::Value>),
}

/// A credential as text: an object (a service-account key file) is kept as its JSON text.
fn credential<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<CredentialInput>::deserialize(deserializer)? {
        None => None,
        Some(CredentialInput::Text(text)) => Some(text),
        Some(CredentialInput::Key(key)) => Some(serde_json::Value::Object(key).to_string()),
    })
}

/// `/crm_api/senders`: read the brand's senders, or with `channel` and `provider`, set one.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct SendersRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    /// The channel to set (with `provider`; either left out: the senders are read).
    pub channel: Option<Channel>,
    /// The provider on that channel (`default`: back to the node-wide provider).
    pub provider: Option<ProviderChoice>,
    /// The provider's API base URL (required for `generic`: the URL engage POSTs to).
    #[schemars(length(min = 1, max = 500), pattern(r"^https?://[^\s]+$"))]
    pub base_url: Option<String>,
    /// Who messages come from: a Twilio number (E.164), a DLT sender id, a WhatsApp phone-number
    /// id, a Firebase project id.
    #[schemars(length(min = 1, max = 64))]
    pub sender: Option<String>,
    /// The Twilio account SID.
    #[schemars(length(min = 1, max = 64))]
    pub account: Option<String>,
    /// The credential (Twilio auth token, MSG91 auth key, WhatsApp access token, FCM
    /// service-account key: the JSON file's object, or its text; generic bearer): written, never
    /// answered.
    #[serde(default, deserialize_with = "credential")]
    #[schemars(with = "Option<CredentialInput>")]
    pub credential: Option<String>,
    /// The brand's DLT principal entity id.
    #[schemars(length(min = 1, max = 64))]
    pub dlt_entity_id: Option<String>,
    /// DLT template ids by engage template id (`""` removes one).
    pub dlt_templates: Option<BTreeMap<String, String>>,
    /// The WhatsApp template language (`en`, `hi`, `en_US`).
    #[schemars(length(min = 2, max = 16))]
    pub language: Option<String>,
    /// The WhatsApp app secret its webhooks are signed with: written, never answered.
    #[schemars(length(min = 1, max = 256))]
    pub app_secret: Option<String>,
    /// The token the WhatsApp webhook's verification handshake presents: written, never answered.
    #[schemars(length(min = 1, max = 256))]
    pub verify_token: Option<String>,
}
