//! Feedback configuration, ratings and NPS. The JSON Schema of each body is generated from its type
//! ([`crate::platform::edge::contract`]).

use schemars::JsonSchema;
use serde::Deserialize;

/// `/crm_api/save/feedback/config`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/save/feedback/config (engage's route; the spec has none): create or replace a business's feedback configuration. child_business_id "0" (or left out) is the brand's own record. An outlet's record applies when its feedback_flow is 1, else the brand's when its feedback_flow is 1. feedback_sms / feedback_chat 'true' send the form link by SMS / chat, feedback_time minutes after the order. Templates may use x_cust_name, x_cust_mobile, x_order_id and x_feedback_url (appended when missing). questions are shown on the form; alert_contacts and alert_emails are whom a low rating alerts. store_a_app_id / store_b_app_id (the brand's record) name the brand's apps whose reviews the review_sync job reads."#
)]
pub struct FeedbackConfigRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub child_business_id: Option<String>,
    #[schemars(extend("enum" = [0, 1]))]
    pub feedback_flow: u8,
    #[schemars(extend("enum" = ["true", "false"]))]
    pub feedback_sms: Option<String>,
    #[schemars(extend("enum" = ["true", "false"]))]
    pub feedback_chat: Option<String>,
    #[schemars(range(min = 0, max = 10080))]
    pub feedback_time: Option<i64>,
    #[schemars(length(max = 1000))]
    pub sms_template: Option<String>,
    #[schemars(length(max = 1000))]
    pub chat_template: Option<String>,
    #[schemars(extend("enum" = ["UTILITY", "MARKETING"]))]
    pub chat_template_type: Option<String>,
    #[schemars(length(max = 64))]
    pub sender_id: Option<String>,
    #[schemars(length(max = 10))]
    #[schemars(extend("items" = {"type": "string", "minLength": 1, "maxLength": 200}))]
    pub questions: Option<Vec<String>>,
    #[schemars(length(max = 20))]
    #[schemars(extend("items" = {"type": "string", "pattern": "^[6-9][0-9]{9}$"}))]
    pub alert_contacts: Option<Vec<String>>,
    #[schemars(length(max = 20))]
    #[schemars(extend("items" = {"type": "string", "format": "email", "maxLength": 254}))]
    pub alert_emails: Option<Vec<String>>,
    #[schemars(pattern(r#"^[A-Za-z0-9._-]{1,128}$"#))]
    pub store_a_app_id: Option<String>,
    #[schemars(pattern(r#"^[A-Za-z0-9._-]{1,128}$"#))]
    pub store_b_app_id: Option<String>,
}

/// The feedback and rating reads.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Feedback and rating reads: /get/feedback/config (child_business_id, "0" by default), /fetch_feedback_customers (20 a page), /feedback_form_interaction_mis (start and end required), /get/rating_list (source 1 or 2: engage's own ratings; 3 and 4: the app stores' reviews; 20 a page), /get/rating_count_datewise, /get/hear_about_us_source, /get/latest_rating. business_id limits to one outlet; start and end are IST days."#
)]
pub struct FeedbackReadRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub child_business_id: Option<String>,
    #[schemars(range(min = 1, max = 1000000))]
    pub page: Option<u64>,
    #[schemars(extend("format" = "date"))]
    pub start: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub end: Option<String>,
    #[schemars(
        description = r#"one IST day: the period when start and end are left out (neither: the 7 IST days up to today)"#
    )]
    #[schemars(extend("format" = "date"))]
    pub date: Option<String>,
    #[schemars(extend("enum" = [1, 2, 3, 4]))]
    pub source: Option<u8>,
}

/// `/crm_api/nps/data`: one NPS answer.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/nps/data (no auth): one NPS answer. rating is 0 to 10; mobileNo ten digits from 6; the same outlet, customer and order_id sent again replaces the answer. The optional per-client rate limit of the open routes (ENGAGE_RATE_LIMIT_PER_SECOND, off by default) applies."#
)]
pub struct NpsDataRequest {
    #[serde(rename = "parentBusinessId")]
    #[schemars(length(min = 1, max = 128))]
    pub parent_business_id_camel: String,
    #[serde(rename = "businessId")]
    #[schemars(length(min = 1, max = 128))]
    pub business_id: String,
    #[serde(rename = "mobileNo")]
    #[schemars(pattern(r#"^[6-9][0-9]{9}$"#))]
    pub mobile_no: String,
    #[schemars(range(min = 0, max = 10))]
    pub rating: u8,
    #[schemars(length(max = 128))]
    pub order_id: Option<String>,
    #[schemars(length(max = 50))]
    #[schemars(extend("items" = {"type": "object"}))]
    pub questions: Option<Vec<serde_json::Map<String, serde_json::Value>>>,
}

/// `/crm_api/npsList`, `/crm_api/npsData`, `/crm_api/download/nps/data`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"NPS reads: /npsList (20 a page; rating and mobile_number filter; an empty page is data []), /npsData (start and end IST days required; promoter_from, 9 by default, and passive_from, 7 by default, set the buckets of this report), /download/nps/data (start and end required: an XLSX workbook). business_id limits to one outlet."#
)]
pub struct NpsRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(range(min = 1, max = 1000000))]
    pub page: Option<u64>,
    #[schemars(range(min = 0, max = 10))]
    pub rating: Option<u8>,
    #[schemars(pattern(r#"^[0-9]{10}$"#))]
    pub mobile_number: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub start: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub end: Option<String>,
    #[schemars(
        description = r#"one IST day: the period when start and end are left out (neither: the 7 IST days up to today)"#
    )]
    #[schemars(extend("format" = "date"))]
    pub date: Option<String>,
    #[schemars(range(min = 1, max = 10))]
    pub promoter_from: Option<u8>,
    #[schemars(range(min = 0, max = 10))]
    pub passive_from: Option<u8>,
}

/// `/crm_api/legacy/feedback_sms`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/legacy/feedback_sms (engage's route): put a row of the legacy feedback SMS queue, a ready-made SMS gateway URL, for the legacy_feedback_drain job to call by GET (processed 0 -> 2 -> 1)."#
)]
pub struct LegacySmsRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(pattern(r#"^https?://[^\s]+$"#))]
    #[schemars(length(max = 2000))]
    pub url: String,
}
