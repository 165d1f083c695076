//! Marketing consent: a customer's subscriptions, the brand's defaults. The JSON Schema of each
//! body is generated from its type ([`crate::platform::edge::contract`]).

use schemars::JsonSchema;
use serde::Deserialize;

/// `/crm_api/consent/customer` (staff) and `/integration/v1/consent` (integration token): read a
/// customer's marketing subscriptions, or with any channel given, set it.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct ConsentRequest {
    /// The brand (required with a staff token; an integration token's brand is its own).
    #[schemars(length(min = 1, max = 128))]
    pub parent_business_id: Option<String>,
    /// The customer: 7 to 15 digits, a leading `+`, spaces, hyphens and parentheses allowed;
    /// `+91…`, `91…`, `0…` and the ten digits of an Indian mobile are one customer.
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
    pub mobile_number: String,
    /// Marketing by SMS: true subscribes, false unsubscribes.
    pub sms: Option<bool>,
    /// Marketing by chat.
    pub chat: Option<bool>,
    /// Marketing by push.
    pub push: Option<bool>,
}

/// `/crm_api/customer/export` (staff): everything the brand holds about a customer.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct CustomerExportRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    /// The customer: 7 to 15 digits, a leading `+`, spaces, hyphens and parentheses allowed;
    /// `+91…`, `91…`, `0…` and the ten digits of an Indian mobile are one customer.
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
    pub mobile_number: String,
}

/// `/crm_api/consent/settings`: read the brand's defaults, or with any part given, change them.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct ConsentSettingsRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    /// Whether a customer with no recorded choice may get marketing by SMS.
    pub sms: Option<bool>,
    /// By chat.
    pub chat: Option<bool>,
    /// By push.
    pub push: Option<bool>,
    /// The answer to a customer who sends HELP (`""` restores the built-in one).
    #[schemars(length(max = 300))]
    pub help_text: Option<String>,
}

/// `POST /webhooks/keywords/{provider}`: a message a customer sent to the brand's number.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeywordRequest {
    /// The brand whose number got the message.
    #[schemars(length(min = 1, max = 128))]
    pub parent_business_id: String,
    /// The customer's number (`+91 98111 10008`, `919811110008`, `09811110008` are one customer).
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
    pub from: String,
    /// The message.
    #[schemars(length(max = 1000))]
    pub text: String,
    /// The channel it came on.
    #[schemars(extend("enum" = ["sms", "chat"]))]
    pub channel: String,
}
