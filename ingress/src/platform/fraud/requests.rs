//! Fraud prevention: velocity rules, alert settings, the read and action routes. The JSON Schema of each body is generated from its type
//! ([`crate::platform::edge::contract`]).

use schemars::JsonSchema;
use serde::Deserialize;

use engage_actors::domain::fraud::Period;

use crate::platform::edge::id_text;

/// Velocity limits.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Velocity limits: a limit of L allows L transactions of the kind per period; the L+1-th is a breach. Periods are IST calendar hours, days or ISO weeks. A value of 0 or null removes the limit."#
)]
pub struct FraudWalletRulesRequest {
    #[serde(rename = "parentBusinessId", default, deserialize_with = "id_text")]
    #[schemars(length(min = 1, max = 128))]
    #[schemars(extend("type" = ["integer", "string"], "maximum" = 999999999999999_i64))]
    pub parent_business_id_camel: Option<String>,
    #[serde(default, deserialize_with = "id_text")]
    #[schemars(length(min = 1, max = 128))]
    #[schemars(extend("type" = ["integer", "string"], "maximum" = 999999999999999_i64))]
    pub parent_business_id: Option<String>,
    #[schemars(range(min = 0, max = 1000000))]
    #[schemars(extend("type" = ["integer", "null"], "x-engage-nullable" = true))]
    pub redemption_limit_value: Option<u32>,
    #[schemars(with = "Option<String>")]
    #[schemars(extend("enum" = ["hour", "day", "week"]))]
    pub redemption_limit_period: Option<Period>,
    #[schemars(range(min = 0, max = 1000000))]
    #[schemars(extend("type" = ["integer", "null"], "x-engage-nullable" = true))]
    pub points_earning_limit_value: Option<u32>,
    #[schemars(with = "Option<String>")]
    #[schemars(extend("enum" = ["hour", "day", "week"]))]
    pub points_earning_limit_period: Option<Period>,
}

/// Fraud alert recipients, channel and template.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FraudAlertSettingsRequest {
    #[serde(rename = "parentBusinessId", default, deserialize_with = "id_text")]
    #[schemars(length(min = 1, max = 128))]
    #[schemars(extend("type" = ["integer", "string"], "maximum" = 999999999999999_i64))]
    pub parent_business_id_camel: Option<String>,
    #[serde(default, deserialize_with = "id_text")]
    #[schemars(length(min = 1, max = 128))]
    #[schemars(extend("type" = ["integer", "string"], "maximum" = 999999999999999_i64))]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 50))]
    #[schemars(extend("items" = {"type": "string", "pattern": "^[6-9][0-9]{9}$"}))]
    pub alert_recipients: Vec<String>,
    #[schemars(extend("enum" = ["sms", "chat"]))]
    pub channel_type: String,
    #[schemars(length(min = 1))]
    pub template: String,
    pub sender_id: Option<String>,
    #[schemars(extend("enum" = ["UTILITY", "MARKETING"]))]
    pub template_type: Option<String>,
}

/// The fraud read and action routes: the brand plus optional filters.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(description = r#"Brand plus the optional filters of the fraud read and action routes."#)]
pub struct FraudQueryRequest {
    #[serde(rename = "parentBusinessId", default, deserialize_with = "id_text")]
    #[schemars(length(min = 1, max = 128))]
    #[schemars(extend("type" = ["integer", "string"], "maximum" = 999999999999999_i64))]
    pub parent_business_id_camel: Option<String>,
    #[serde(default, deserialize_with = "id_text")]
    #[schemars(length(min = 1, max = 128))]
    #[schemars(extend("type" = ["integer", "string"], "maximum" = 999999999999999_i64))]
    pub parent_business_id: Option<String>,
    #[schemars(description = r#"/send_fraud_alert: the outlet whose wallet pays for the alerts."#)]
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
    pub contact: Option<String>,
    #[schemars(length(max = 1000))]
    #[schemars(extend("items" = {"type": "string", "pattern": engage_actors::domain::phone::PATTERN}, "minItems" = 1))]
    pub contacts: Option<Vec<String>>,
    #[schemars(extend("enum" = [1, 2, 3]))]
    pub status: Option<u8>,
    #[schemars(length(max = 1000))]
    pub comment: Option<String>,
    #[schemars(length(max = 1000))]
    pub resolved_comment: Option<String>,
    #[schemars(range(min = 1, max = 1000000))]
    pub page: Option<u64>,
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
    #[schemars(extend("format" = "date"))]
    pub start: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub end: Option<String>,
}
