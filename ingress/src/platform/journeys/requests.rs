//! Automated journeys, their types, settings and tags. The JSON Schema of each body is generated from its type
//! ([`crate::platform::edge::contract`]).

use schemars::JsonSchema;
use serde::Deserialize;

/// The journey-type catalogue routes.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"The journey-type catalogue: /get/campaign/type/ids and /get/days/type/options need only the brand; /get/campaign/fields names a type; /get/field/parameters a type and one of its fields."#
)]
pub struct JourneyCatalogueRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(pattern(r#"^[0-9a-f]{24}$"#))]
    pub campaign_type_id: Option<String>,
    #[schemars(length(min = 1, max = 64))]
    pub ref_id: Option<String>,
}

/// `/crm_api/save/campaign/journey`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Save the journey of (brand, outlet, type): saving the same triple again updates it. campaign_data carries the channels, a template per channel, daily_cap, send_days_type (an id of /get/days/type/options) and the type's own fields (days, trigger_minutes, rating, frequency_rating, promo_details, orders), chat_button_text and chat_button_url (a chat call-to-action; the message carries a signed tracking link, /track/chat/link/{token}, that counts the click and redirects to the URL), and holdout_percent: the share of eligible customers, chosen by a stable hash, who are never sent (the ROI baseline)."#
)]
pub struct SaveJourneyRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub child_business_id: String,
    #[schemars(pattern(r#"^[0-9a-f]{24}$"#))]
    pub campaign_type_id: String,
    pub campaign_data: CampaignDataInput,
}

/// A journey's `campaign_data`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct CampaignDataInput {
    #[schemars(length(min = 1, max = 3))]
    #[schemars(extend("uniqueItems" = true, "items" = {"enum": ["sms", "chat", "push"]}))]
    pub channels: Vec<String>,
    #[schemars(length(max = 2000))]
    pub sms_template: Option<String>,
    #[schemars(length(max = 2000))]
    pub chat_template: Option<String>,
    #[schemars(length(max = 2000))]
    pub push_template: Option<String>,
    #[schemars(range(min = 1, max = 10000000))]
    pub daily_cap: Option<u32>,
    #[schemars(pattern(r#"^[0-9a-f]{24}$"#))]
    pub send_days_type: Option<String>,
    #[schemars(range(min = 1, max = 3650))]
    pub days: Option<u32>,
    #[schemars(range(min = 1, max = 10080))]
    pub trigger_minutes: Option<u32>,
    #[schemars(range(min = 1, max = 5))]
    pub rating: Option<u8>,
    #[schemars(range(min = 1, max = 1000))]
    pub frequency_rating: Option<u32>,
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    #[schemars(extend("type" = "object"))]
    pub promo_details: Option<serde_json::Value>,
    #[schemars(range(min = 1, max = 100000))]
    pub orders: Option<u32>,
    #[schemars(range(min = 0, max = 100))]
    pub holdout_percent: Option<u8>,
    #[schemars(length(min = 1, max = 20))]
    pub chat_button_text: Option<String>,
    #[schemars(pattern(r#"^https?://[^\s]+$"#))]
    #[schemars(length(max = 2000))]
    pub chat_button_url: Option<String>,
}

/// A brand's journey configurations (enable, view, per business).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"A brand's journey configurations: /enable/automated/campaign/ (campaign_journey_id, campaign_enabled 0 or 1), /view/campaign/journey (campaign_journey_id), /get/campaign/mapped/business (child_business_id optional)."#
)]
pub struct JourneyRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub child_business_id: Option<String>,
    #[schemars(pattern(r#"^[0-9a-f]{24}$"#))]
    pub campaign_journey_id: Option<String>,
    #[schemars(extend("enum" = [0, 1]))]
    pub campaign_enabled: Option<u8>,
}

/// The journey reports: `/get/auto_campaign_users` (`campaign_journey_id`, `page`, `page_size`),
/// `/view/sent/automated/campaigns` (`campaign_journey_id` optional),
/// `/automated/campaigns/report` (`auto_id`, `business_id` optional).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"The journey reports: /get/auto_campaign_users (campaign_journey_id required; page from 1, page_size 1-100, default 20), /view/sent/automated/campaigns (campaign_journey_id optional), /automated/campaigns/report (auto_id required: a journey id; business_id optional)."#
)]
pub struct JourneyReportRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(pattern(r#"^[0-9a-f]{24}$"#))]
    pub campaign_journey_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub auto_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(range(min = 1, max = 1000000))]
    pub page: Option<u32>,
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u32>,
}

/// `/crm_api/journeys/settings`: the brand's quiet hours and frequency cap.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"The brand's journey settings (beyond the spec). quiet_hours: IST HH:MM start and end (end excluded; a start after the end spans midnight; equal ends turn them off): campaign messages are not delivered inside them and wait for their end. frequency_cap: journey messages per customer per rolling 7 days at most (0 turns it off). Fields left out keep their value; a body with neither only reads them."#
)]
pub struct JourneySettingsRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    pub quiet_hours: Option<QuietHoursInput>,
    #[schemars(range(min = 0, max = 1000))]
    pub frequency_cap: Option<u32>,
}

/// Quiet hours, `HH:MM` IST (equal ends: none).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct QuietHoursInput {
    #[schemars(pattern(r#"^([01][0-9]|2[0-3]):[0-5][0-9]$"#))]
    pub start: String,
    #[schemars(pattern(r#"^([01][0-9]|2[0-3]):[0-5][0-9]$"#))]
    pub end: String,
}

/// `/crm_api/create/campaign_tag` (`tag_name`, `color`) and `/crm_api/get/campaign_tags`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Campaign tags: /create/campaign_tag (tag_name required, unique per brand regardless of letter case; color optional, #rrggbb), /get/campaign_tags (no other field)."#
)]
pub struct CampaignTagRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(pattern(r#"\S"#))]
    #[schemars(length(min = 1, max = 64))]
    pub tag_name: Option<String>,
    #[schemars(pattern(r#"^#[0-9a-fA-F]{6}$"#))]
    pub color: Option<String>,
}

/// `/crm_api/autoCampaign`: a new journey type.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Add a journey type (a master record): its campaign_type must be new. It gets the common form fields (channels, templates, daily_cap, send_days_type)."#
)]
pub struct AutoCampaignRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    #[schemars(pattern(r#"^[a-z][a-z0-9_]{1,40}$"#))]
    pub campaign_type: String,
    #[schemars(length(max = 2000))]
    pub icon_url: Option<String>,
    #[schemars(extend("enum" = ["1", "2"]))]
    pub execution_type: String,
}
