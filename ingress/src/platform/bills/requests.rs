//! Digital bills, their configuration and widgets. The JSON Schema of each body is generated from its type
//! ([`crate::platform::edge::contract`]).

use schemars::JsonSchema;
use serde::Deserialize;

/// The digital-bill staff reads and the on/off toggle.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Digital-bill staff routes: /links/getWidgetList, /links/getBusinessConfig (business_id optional: the brand's own record), /update/bill/status (status 0 or 1 required), /get_digital_bill_customers (page from 1, 10 a page; start/end IST days optional), /get_digital_bill_mis (start and end IST days required)."#
)]
pub struct BillRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(extend("enum" = [0, 1]))]
    pub status: Option<u8>,
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
}

/// `/crm_api/links/addBusinessConfig`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/links/addBusinessConfig: create or replace a business's digital-bill configuration. business_id left out (or equal to parent_business_id) is the brand's own record (stored with parentId "0"); an outlet's own record wins over the brand's. mode 1 SMS, 2 chat. time: delivery delay in minutes, 0 (immediate) or 15 to 240. linkValidity: days the bill link works (0: always). platform: the order platforms that get bills (empty or left out: all). Templates may use x_cust_name, x_order_id, x_amount and x_short_url (the link is appended when the template lacks it). chat_template_type prices chat sends (UTILITY by default)."#
)]
pub struct BillConfigRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(extend("enum" = [1, 2]))]
    pub mode: u8,
    #[serde(rename = "type")]
    #[schemars(range(min = 0, max = 1000))]
    pub bill_type: Option<i64>,
    #[serde(rename = "linkValidity")]
    #[schemars(range(min = 0, max = 3650))]
    pub link_validity: Option<i64>,
    #[serde(rename = "brandColor")]
    #[schemars(pattern(r#"^#[0-9a-fA-F]{6}$"#))]
    pub brand_color: Option<String>,
    #[serde(rename = "enableFooter")]
    #[schemars(extend("enum" = [0, 1]))]
    pub enable_footer: Option<u8>,
    #[serde(rename = "footerButton")]
    #[schemars(length(max = 64))]
    pub footer_button: Option<String>,
    #[schemars(range(min = 0, max = 240))]
    #[schemars(extend("not" = {"minimum": 1, "maximum": 14}))]
    pub time: Option<i64>,
    #[schemars(extend("enum" = [0, 1]))]
    pub status: Option<u8>,
    #[schemars(length(max = 1000))]
    pub sms_template: Option<String>,
    #[schemars(length(max = 1000))]
    pub chat_template: Option<String>,
    #[schemars(extend("enum" = ["UTILITY", "MARKETING"]))]
    pub chat_template_type: Option<String>,
    #[schemars(length(max = 64))]
    pub sender_id: Option<String>,
    #[schemars(length(max = 1000))]
    pub sms_variables: Option<String>,
    #[schemars(length(max = 1000))]
    pub chat_variables: Option<String>,
    #[schemars(length(max = 5))]
    #[schemars(extend("uniqueItems" = true, "items" = {"type": "string", "enum": ["app", "website", "kiosk", "pos", "chat_api"]}))]
    pub platform: Option<Vec<String>>,
}

/// `/crm_api/links/addWidget` and `/crm_api/links/editWidget`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/links/addWidget (widget_id required: the catalogue id 1 to 6 of /links/getWidgetList; a business maps each kind once; business_id left out maps it for the brand) and /links/editWidget (id required: the mapping's id; fields left out keep their value). sequence orders the widgets on the bill."#
)]
pub struct WidgetRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(range(min = 1, max = 1000000000000_i64))]
    pub id: Option<u64>,
    #[schemars(range(min = 1, max = 6))]
    pub widget_id: Option<u32>,
    #[schemars(range(min = 0, max = 1000))]
    pub sequence: Option<i64>,
    #[schemars(length(max = 200))]
    pub title: Option<String>,
    #[schemars(length(max = 2000))]
    pub value: Option<String>,
    #[schemars(length(max = 2000))]
    pub static_banner_link: Option<String>,
    #[schemars(extend("enum" = [0, 1]))]
    pub status: Option<u8>,
}

/// `/crm_api/invoice/open`, `/crm_api/feedback_invoice/open`, `/crm_api/invoice/download`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/invoice/open, /feedback_invoice/open, /invoice/download: bill_id is required (400 when missing); an unknown bill_id changes nothing (200, counted false). The brand is the ingestion token's."#
)]
pub struct BillEventRequest {
    #[schemars(length(min = 1, max = 128))]
    pub bill_id: String,
}

/// `/crm_api/update/widget/insight`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("if" = {"properties": {"event_type": {"const": "watch"}}, "required": ["event_type"]}, "then" = {"required": ["watch_time"]}))]
#[schemars(
    description = r#"/update/widget/insight: event_type click adds 1 to the widget's clicks; watch sets its watchTime to watch_time (seconds, required then). widget_id is the catalogue id of a widget the bill shows. An unknown bill or a widget the bill does not show changes nothing (200, counted false)."#
)]
pub struct WidgetInsightRequest {
    #[schemars(length(min = 1, max = 128))]
    pub bill_id: String,
    #[schemars(range(min = 1, max = 6))]
    pub widget_id: u32,
    #[schemars(extend("enum" = ["click", "watch"]))]
    pub event_type: String,
    #[schemars(range(min = 0, max = 86400))]
    pub watch_time: Option<u64>,
}
