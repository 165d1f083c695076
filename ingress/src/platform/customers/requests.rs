//! Customers and business configuration: `/crm_api/get/customer/details`, `/crm_api/update/customer/details`, the `/integration/v1` customer routes, `/crm_api/add_b_config`. The JSON Schema of each body is generated from its type
//! ([`crate::platform::edge::contract`]).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Number;

/// `/crm_api/get/customer/details`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CustomerDetailsRequest {
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
    pub customer_number: String,
}

/// `/crm_api/update/customer/details`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateCustomerRequest {
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
    pub customer_number: String,
    #[schemars(length(min = 1, max = 200))]
    pub name: Option<String>,
    #[schemars(extend("format" = "email"))]
    pub email: Option<String>,
    #[schemars(extend("enum" = ["male", "female", "other", "M", "F", "O"]))]
    pub gender: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub dob: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub anniversary: Option<String>,
}

/// A customer of the brand; the fields beyond `customer_number` depend on the route.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"A customer of the token's brand (the /pos_e/v1 routes name the brand in parent_business_id). Fields beyond customer_number depend on the route."#
)]
pub struct IntegrationUserRequest {
    #[schemars(length(min = 1, max = 128))]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
    pub customer_number: String,
    #[schemars(length(min = 1, max = 200))]
    pub name: Option<String>,
    #[schemars(extend("format" = "email"))]
    pub email: Option<String>,
    #[schemars(extend("enum" = ["male", "female", "other", "M", "F", "O"]))]
    pub gender: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub dob: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub anniversary: Option<String>,
    #[schemars(length(min = 8, max = 4096))]
    pub fcm_token: Option<String>,
    #[schemars(extend("enum" = ["android", "ios", "web"]))]
    pub platform: Option<String>,
    #[schemars(range(min = 1, max = 1000000000000_i64))]
    pub points: Option<i64>,
    #[schemars(length(min = 1, max = 128))]
    pub order_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub outlet_id: Option<String>,
    #[schemars(range(min = 0, max = 100000000))]
    pub bill_amount: Option<Number>,
    #[schemars(length(min = 1, max = 128))]
    pub reference: Option<String>,
    #[schemars(length(max = 500))]
    pub reason: Option<String>,
    #[schemars(pattern(r#"^[0-9]{6}$"#))]
    pub otp: Option<String>,
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
    #[schemars(
        description = r#"create_user / update_pos_customer_details: the existing customer who referred this new one (refer-and-earn)."#
    )]
    pub referrer_number: Option<String>,
    #[schemars(description = r#"/crm_api/loyalty/ledger: the page, from 1."#)]
    #[schemars(range(min = 1, max = 1000000))]
    pub page: Option<u64>,
    #[schemars(description = r#"/crm_api/loyalty/ledger: rows per page (default 20)."#)]
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
}

/// `/crm_api/add_b_config` and `/crm_api/add_b_config/php`: the fields to set (a field sent as
/// `null` is removed; one left out keeps its value).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
#[schemars(
    description = r#"/crm_api/add_b_config (staff token) and /crm_api/add_b_config/php (open): set fields of a business's configuration record (business_id "0" is the brand's own). Fields left out keep their value; null removes one. auto_campaign is the journeys' daily sync's and digital_bill the bill status route's: they are read-only here."#
)]
pub struct BusinessConfigRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: String,
    #[serde(default, deserialize_with = "present")]
    #[schemars(extend("type" = ["string", "null"], "x-engage-nullable" = true, "minLength" = 1, "maxLength" = 200))]
    pub business_name: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(extend("type" = ["string", "null"], "x-engage-nullable" = true, "minLength" = 1, "maxLength" = 100))]
    pub city: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(description = r#"the 6-letter SMS header"#)]
    #[schemars(extend("type" = ["string", "null"], "x-engage-nullable" = true, "pattern" = "^[A-Z]{6}$"))]
    pub sms_sender_id: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(description = r#"the business's chat (WhatsApp) number"#)]
    #[schemars(extend("type" = ["string", "null"], "x-engage-nullable" = true, "pattern" = "^[0-9]{10,15}$"))]
    pub chat_number: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(extend("type" = ["integer", "null"], "x-engage-nullable" = true, "enum" = [0, 1, null]))]
    pub feedback: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(extend("type" = ["integer", "null"], "x-engage-nullable" = true, "enum" = [0, 1, null]))]
    pub loyalty: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(extend("type" = ["integer", "null"], "x-engage-nullable" = true, "enum" = [0, 1, null]))]
    pub chat: Option<serde_json::Value>,
}

impl BusinessConfigRequest {
    /// The fields the body sent (`null` included), by name.
    pub fn fields(self) -> serde_json::Map<String, serde_json::Value> {
        [
            ("business_name", self.business_name),
            ("city", self.city),
            ("sms_sender_id", self.sms_sender_id),
            ("chat_number", self.chat_number),
            ("feedback", self.feedback),
            ("loyalty", self.loyalty),
            ("chat", self.chat),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.map(|v| (name.to_owned(), v)))
        .collect()
    }
}

/// A field that may be sent as `null`: absent is `None`, `null` is `Some(Value::Null)`.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

/// `/crm_api/get/waiting_refunds`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Refunds waiting for their order: the brand's, or one outlet's (business_id); a page of at most limit orders (default 100), after the cursor `after` (the `next` of the page before)."#
)]
pub struct WaitingRefundsRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(pattern(r#"^([0-9a-f]{2}){1,600}$"#))]
    pub after: Option<String>,
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u64>,
}
