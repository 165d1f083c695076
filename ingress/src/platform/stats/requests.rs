//! Dashboard metrics, and chat partners and riders. The JSON Schema of each body is generated from its type
//! ([`crate::platform::edge::contract`]).

use schemars::JsonSchema;
use serde::Deserialize;

/// The `/stats` metrics.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"The /stats metrics: parent_business_id (the staff token's brand), business_id (one outlet; left out: every outlet), and the period in IST days: start and end (both, at most 731 days), or date (one day), or neither (the 7 days up to today). Every answer carries the period and the previous one (as many days, just before). limit: entries of /metrics/top-items (10 by default)."#
)]
pub struct StatsRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub start: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub end: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub date: Option<String>,
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u64>,
}

/// `/stats/special-days`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/stats/special-days (engage's route): mark IST days as special for /metrics/special-days (weekends always are), or unmark them with remove true. Answers every marked day."#
)]
pub struct SpecialDaysRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 366))]
    #[schemars(extend("items" = {"type": "string", "format": "date"}))]
    pub dates: Vec<String>,
    #[schemars(length(min = 1, max = 64))]
    pub label: Option<String>,
    pub remove: Option<bool>,
}

/// `/crm_api/v2/{chat_partner}/generatePartnerToken`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/crm_api/v2/{chat_partner}/generatePartnerToken (no auth header): the chat partner proves itself with an integration token of the brand (api_key) and gets a partner token for one hour."#
)]
pub struct PartnerTokenRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(length(min = 1, max = 256))]
    pub api_key: String,
}

/// `/crm_api/v2/{chat_partner}/getPartnerProfile`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/crm_api/v2/{chat_partner}/getPartnerProfile (no auth header): the partner token generatePartnerToken gave, for the same brand and partner."#
)]
pub struct PartnerProfileRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 2048))]
    pub token: String,
}

/// `/crm_api/rider/chat/login`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/crm_api/rider/chat/login (no auth): a delivery rider signs in to the chat of one order the outlet has; the answer is a chat token for that order, valid 12 hours."#
)]
pub struct RiderLoginRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: String,
    #[schemars(length(min = 1, max = 128))]
    pub order_id: String,
    #[schemars(pattern(r#"^[6-9][0-9]{9}$"#))]
    pub rider_phone: String,
    #[schemars(length(max = 100))]
    pub rider_name: Option<String>,
}

/// `/crm_api/check/chat/login`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/crm_api/check/chat/login (internal JWT): is a chat token (a rider's or a chat partner's) valid, and whose is it."#
)]
pub struct ChatCheckRequest {
    #[schemars(length(min = 1, max = 2048))]
    pub token: String,
}
