//! The platform's request bodies as types, one per JSON Schema of `schemas/` and named after it.
//! The schema is what refuses a bad body (with a pointer and a message per problem) and what
//! `/openapi.json` publishes; the type is what a handler reads. A test below checks each type
//! against its schema (field names, required fields, JSON types, nested objects), so the two
//! cannot drift.
//!
//! The ingestion bodies (`Order`, `CreateCustomer`, `PushToken`, `Checkin`, `BusinessStatus`,
//! `MerchantData`, `CrmToken`, `ChatEvent`) have no type here on purpose: they are published to
//! the bus as received, so a replay sees the producer's own bytes; the actors read them as
//! `engage_actors::domain::order::OrderFacts`.

use serde::Deserialize;
use serde_json::Number;
use utoipa::ToSchema;

use engage_actors::domain::fraud::Period;

use super::access::Scope;
use super::edge::{id_text, PlatformRequest};

macro_rules! platform_requests {
    ($($ty:ident),* $(,)?) => {
        $(impl PlatformRequest for $ty {
            const SCHEMA: &'static str = stringify!($ty);
            const SCOPE: Scope = $ty::SCOPE;
            const OUTLET_FIELDS: &'static [&'static str] = $ty::OUTLET_FIELDS;
            const BRAND_FIELDS: &'static [&'static str] = $ty::BRAND_FIELDS;
            fn brand(&self) -> Option<&str> {
                self.named_brand()
            }
        })*

        /// The scope of the typed body whose schema is `schema` (for `/openapi.json`).
        pub fn scope_of(schema: &str) -> Option<Scope> {
            match schema {
                $(stringify!($ty) => Some($ty::SCOPE),)*
                _ => None,
            }
        }

        /// (schema name, the type's generated schema) of every typed body.
        #[cfg(test)]
        fn typed() -> Vec<(&'static str, serde_json::Value)> {
            vec![$((stringify!($ty), serde_json::to_value(<$ty as utoipa::PartialSchema>::schema()).unwrap_or_default())),*]
        }
    };
}

platform_requests!(
    CustomerDetailsRequest,
    UpdateCustomerRequest,
    LoyaltyRulesRequest,
    MilestonesRequest,
    RedeemPointsRequest,
    CustomerLoyaltyRequest,
    FraudWalletRulesRequest,
    FraudAlertSettingsRequest,
    FraudQueryRequest,
    WalletRequest,
    IntegrationUserRequest,
    RewardRequest,
    CouponRequest,
    DayWiseRequest,
    WalletPricingRequest,
    JourneyCatalogueRequest,
    SaveJourneyRequest,
    JourneyRequest,
    AutoCampaignRequest,
    JourneyReportRequest,
    JourneySettingsRequest,
    CampaignTagRequest,
    BillRequest,
    BillConfigRequest,
    WidgetRequest,
    BillEventRequest,
    WidgetInsightRequest,
    FeedbackConfigRequest,
    FeedbackReadRequest,
    NpsDataRequest,
    NpsRequest,
    LegacySmsRequest,
    StatsRequest,
    SpecialDaysRequest,
    BusinessConfigRequest,
    PartnerTokenRequest,
    PartnerProfileRequest,
    RiderLoginRequest,
    ChatCheckRequest,
);

/// Bodies whose brand is `parent_business_id`.
macro_rules! brand_field {
    ($($ty:ident),*) => {$(
        impl $ty {
            const BRAND_FIELDS: &'static [&'static str] = &["parent_business_id"];

            fn named_brand(&self) -> Option<&str> {
                self.parent_business_id.as_deref()
            }
        }
    )*};
}

/// Bodies whose brand is `parentBusinessId` or `parent_business_id` (string or integer).
macro_rules! brand_either {
    ($($ty:ident),*) => {$(
        impl $ty {
            const BRAND_FIELDS: &'static [&'static str] = &["parentBusinessId", "parent_business_id"];

            fn named_brand(&self) -> Option<&str> {
                self.parent_business_id_camel.as_deref().or(self.parent_business_id.as_deref())
            }
        }
    )*};
}

brand_field!(
    CustomerDetailsRequest,
    UpdateCustomerRequest,
    LoyaltyRulesRequest,
    MilestonesRequest,
    IntegrationUserRequest,
    WalletRequest,
    RewardRequest,
    CouponRequest,
    DayWiseRequest,
    WalletPricingRequest,
    JourneyCatalogueRequest,
    SaveJourneyRequest,
    JourneyRequest,
    AutoCampaignRequest,
    JourneyReportRequest,
    JourneySettingsRequest,
    CampaignTagRequest,
    BillRequest,
    BillConfigRequest,
    WidgetRequest,
    FeedbackConfigRequest,
    FeedbackReadRequest,
    NpsRequest,
    LegacySmsRequest,
    RedeemPointsRequest,
    CustomerLoyaltyRequest,
    StatsRequest,
    SpecialDaysRequest,
    BusinessConfigRequest,
    PartnerTokenRequest,
    PartnerProfileRequest,
    RiderLoginRequest
);
brand_either!(FraudWalletRulesRequest, FraudAlertSettingsRequest, FraudQueryRequest);

/// Bodies of ingestion-token routes: the brand is the token's.
macro_rules! brand_of_token {
    ($($ty:ident),*) => {$(
        impl $ty {
            const BRAND_FIELDS: &'static [&'static str] = &[];

            fn named_brand(&self) -> Option<&str> {
                None
            }
        }
    )*};
}

brand_of_token!(BillEventRequest, WidgetInsightRequest, ChatCheckRequest);

impl NpsDataRequest {
    const BRAND_FIELDS: &'static [&'static str] = &["parentBusinessId"];

    fn named_brand(&self) -> Option<&str> {
        Some(self.parent_business_id_camel.as_str())
    }
}

/// `/crm_api/get/customer/details`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CustomerDetailsRequest {
    pub business_id: Option<String>,
    pub parent_business_id: Option<String>,
    pub customer_number: String,
}

/// `/crm_api/update/customer/details`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct UpdateCustomerRequest {
    pub business_id: Option<String>,
    pub parent_business_id: Option<String>,
    pub customer_number: String,
    pub name: Option<String>,
    pub email: Option<String>,
    pub gender: Option<String>,
    pub dob: Option<String>,
    pub anniversary: Option<String>,
}

/// Loyalty rules: fields left out keep their value.
#[derive(Debug, Deserialize, ToSchema)]
pub struct LoyaltyRulesRequest {
    pub parent_business_id: Option<String>,
    #[schema(value_type = Option<f64>)]
    pub earn_percent: Option<Number>,
    #[schema(value_type = Option<f64>)]
    pub min_bill: Option<Number>,
    #[schema(value_type = Option<f64>)]
    pub point_value: Option<Number>,
    pub points_expiry_days: Option<u32>,
    #[schema(value_type = Option<f64>)]
    pub max_redeem_percent: Option<Number>,
    pub min_redeem_points: Option<i64>,
    pub otp_required: Option<bool>,
    #[schema(inline)]
    pub referral: Option<ReferralPatch>,
}

/// The refer-and-earn programme: fields left out keep their value.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ReferralPatch {
    pub enabled: Option<bool>,
    pub referrer_points: Option<i64>,
    pub referee_points: Option<i64>,
    #[schema(value_type = Option<f64>)]
    pub min_order_amount: Option<Number>,
    pub max_referrals: Option<u32>,
}

/// `/crm_api/add_edit_milestone`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct MilestonesRequest {
    pub parent_business_id: Option<String>,
    #[schema(inline)]
    pub milestones: Vec<MilestoneInput>,
}

/// One milestone bonus.
#[derive(Debug, Deserialize, ToSchema)]
pub struct MilestoneInput {
    pub orders: u32,
    pub bonus_points: i64,
}

/// A redemption for an order.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RedeemPointsRequest {
    pub parent_business_id: Option<String>,
    pub customer_number: String,
    pub points: i64,
    pub order_id: String,
    pub outlet_id: Option<String>,
    #[schema(value_type = Option<f64>)]
    pub bill_amount: Option<Number>,
    pub otp: Option<String>,
}

/// A customer's loyalty (balance, ledger page, revocation).
#[derive(Debug, Deserialize, ToSchema)]
pub struct CustomerLoyaltyRequest {
    pub parent_business_id: Option<String>,
    pub customer_number: String,
    #[schema(value_type = Option<f64>)]
    pub bill_amount: Option<Number>,
    pub order_id: Option<String>,
    pub page: Option<u64>,
    pub page_size: Option<u64>,
}

/// Velocity limits.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FraudWalletRulesRequest {
    #[serde(rename = "parentBusinessId", default, deserialize_with = "id_text")]
    #[schema(value_type = Option<String>)]
    pub parent_business_id_camel: Option<String>,
    #[serde(default, deserialize_with = "id_text")]
    #[schema(value_type = Option<String>)]
    pub parent_business_id: Option<String>,
    pub redemption_limit_value: Option<u32>,
    #[schema(value_type = Option<String>)]
    pub redemption_limit_period: Option<Period>,
    pub points_earning_limit_value: Option<u32>,
    #[schema(value_type = Option<String>)]
    pub points_earning_limit_period: Option<Period>,
}

/// Fraud alert recipients, channel and template.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FraudAlertSettingsRequest {
    #[serde(rename = "parentBusinessId", default, deserialize_with = "id_text")]
    #[schema(value_type = Option<String>)]
    pub parent_business_id_camel: Option<String>,
    #[serde(default, deserialize_with = "id_text")]
    #[schema(value_type = Option<String>)]
    pub parent_business_id: Option<String>,
    pub alert_recipients: Vec<String>,
    pub channel_type: String,
    pub template: String,
    pub sender_id: Option<String>,
    pub template_type: Option<String>,
}

/// The fraud read and action routes: the brand plus optional filters.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FraudQueryRequest {
    #[serde(rename = "parentBusinessId", default, deserialize_with = "id_text")]
    #[schema(value_type = Option<String>)]
    pub parent_business_id_camel: Option<String>,
    #[serde(default, deserialize_with = "id_text")]
    #[schema(value_type = Option<String>)]
    pub parent_business_id: Option<String>,
    pub business_id: Option<String>,
    pub contact: Option<String>,
    pub contacts: Option<Vec<String>>,
    pub status: Option<u8>,
    pub comment: Option<String>,
    pub resolved_comment: Option<String>,
    pub page: Option<u64>,
    pub page_size: Option<u64>,
    pub start: Option<String>,
    pub end: Option<String>,
}

/// A business wallet.
#[derive(Debug, Deserialize, ToSchema)]
pub struct WalletRequest {
    pub parent_business_id: Option<String>,
    pub business_id: String,
    #[schema(value_type = Option<f64>)]
    pub amount: Option<Number>,
    pub reference: Option<String>,
    pub page: Option<u64>,
    pub page_size: Option<u64>,
}

/// A customer of the brand; the fields beyond `customer_number` depend on the route.
#[derive(Debug, Deserialize, ToSchema)]
pub struct IntegrationUserRequest {
    pub parent_business_id: Option<String>,
    pub business_id: Option<String>,
    pub customer_number: String,
    pub name: Option<String>,
    pub email: Option<String>,
    pub gender: Option<String>,
    pub dob: Option<String>,
    pub anniversary: Option<String>,
    pub fcm_token: Option<String>,
    pub platform: Option<String>,
    pub points: Option<i64>,
    pub order_id: Option<String>,
    pub outlet_id: Option<String>,
    #[schema(value_type = Option<f64>)]
    pub bill_amount: Option<Number>,
    pub reference: Option<String>,
    pub reason: Option<String>,
    pub otp: Option<String>,
    pub referrer_number: Option<String>,
    pub page: Option<u64>,
    pub page_size: Option<u64>,
}

/// A reward of the catalogue (no `reward_id`: a new one).
#[derive(Debug, Deserialize, ToSchema)]
pub struct RewardRequest {
    pub parent_business_id: Option<String>,
    pub reward_id: Option<String>,
    pub name: String,
    pub description: Option<String>,
    pub points_cost: i64,
    pub valid_days: Option<i64>,
    pub active: Option<bool>,
}

/// Rewards and coupons.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CouponRequest {
    pub parent_business_id: Option<String>,
    pub customer_number: Option<String>,
    pub reward_id: Option<String>,
    pub coupon_code: Option<String>,
    pub order_id: Option<String>,
    pub reference: Option<String>,
}

/// `/crm_api/day/wise/data`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct DayWiseRequest {
    pub parent_business_id: Option<String>,
    pub start_date: Option<String>,
    pub end_date: Option<String>,
}

/// A brand's price table: read it, or apply `pricing` to it.
#[derive(Debug, Deserialize, ToSchema)]
pub struct WalletPricingRequest {
    pub parent_business_id: Option<String>,
    #[schema(inline)]
    pub pricing: Option<PricingPatch>,
}

/// Prices to change (before GST) and GST percentages; fields left out keep their value.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PricingPatch {
    #[schema(value_type = Option<f64>)]
    pub digital_bill_sms: Option<Number>,
    #[schema(value_type = Option<f64>)]
    pub digital_chat_cost: Option<Number>,
    #[schema(value_type = Option<f64>)]
    pub digital_chat_cost_utility: Option<Number>,
    #[schema(value_type = Option<f64>)]
    pub sms_gst: Option<Number>,
    #[schema(value_type = Option<f64>)]
    pub chat_gst: Option<Number>,
    #[schema(inline)]
    pub feedback: Option<ChannelPricesPatch>,
    #[schema(inline)]
    pub fraud_alert: Option<ChannelPricesPatch>,
    #[schema(inline)]
    pub campaign: Option<ChannelPricesPatch>,
    #[schema(inline)]
    pub otp: Option<ChannelPricesPatch>,
}

/// One purpose's prices per channel; fields left out keep their value.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ChannelPricesPatch {
    #[schema(value_type = Option<f64>)]
    pub sms: Option<Number>,
    #[schema(value_type = Option<f64>)]
    pub chat: Option<Number>,
    #[schema(value_type = Option<f64>)]
    pub chat_utility: Option<Number>,
    #[schema(value_type = Option<f64>)]
    pub push: Option<Number>,
}

/// The journey-type catalogue routes.
#[derive(Debug, Deserialize, ToSchema)]
pub struct JourneyCatalogueRequest {
    pub parent_business_id: Option<String>,
    pub campaign_type_id: Option<String>,
    pub ref_id: Option<String>,
}

/// `/crm_api/save/campaign/journey`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct SaveJourneyRequest {
    pub parent_business_id: Option<String>,
    pub child_business_id: String,
    pub campaign_type_id: String,
    #[schema(inline)]
    pub campaign_data: CampaignDataInput,
}

/// A journey's `campaign_data`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CampaignDataInput {
    pub channels: Vec<String>,
    pub sms_template: Option<String>,
    pub chat_template: Option<String>,
    pub push_template: Option<String>,
    pub daily_cap: Option<u32>,
    pub send_days_type: Option<String>,
    pub days: Option<u32>,
    pub trigger_minutes: Option<u32>,
    pub rating: Option<u8>,
    pub frequency_rating: Option<u32>,
    #[schema(value_type = Option<Object>)]
    pub promo_details: Option<serde_json::Value>,
    pub orders: Option<u32>,
    pub holdout_percent: Option<u8>,
    pub chat_button_text: Option<String>,
    pub chat_button_url: Option<String>,
}

/// A brand's journey configurations (enable, view, per business).
#[derive(Debug, Deserialize, ToSchema)]
pub struct JourneyRequest {
    pub parent_business_id: Option<String>,
    pub child_business_id: Option<String>,
    pub campaign_journey_id: Option<String>,
    pub campaign_enabled: Option<u8>,
}

/// The journey reports: `/get/auto_campaign_users` (`campaign_journey_id`, `page`, `page_size`),
/// `/view/sent/automated/campaigns` (`campaign_journey_id` optional),
/// `/automated/campaigns/report` (`auto_id`, `business_id` optional).
#[derive(Debug, Deserialize, ToSchema)]
pub struct JourneyReportRequest {
    pub parent_business_id: Option<String>,
    pub campaign_journey_id: Option<String>,
    pub auto_id: Option<String>,
    pub business_id: Option<String>,
    pub page: Option<u32>,
    pub page_size: Option<u32>,
}

/// `/crm_api/journeys/settings`: the brand's quiet hours and frequency cap.
#[derive(Debug, Deserialize, ToSchema)]
pub struct JourneySettingsRequest {
    pub parent_business_id: Option<String>,
    #[schema(inline)]
    pub quiet_hours: Option<QuietHoursInput>,
    pub frequency_cap: Option<u32>,
}

/// Quiet hours, `HH:MM` IST (equal ends: none).
#[derive(Debug, Deserialize, ToSchema)]
pub struct QuietHoursInput {
    pub start: String,
    pub end: String,
}

/// `/crm_api/create/campaign_tag` (`tag_name`, `color`) and `/crm_api/get/campaign_tags`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CampaignTagRequest {
    pub parent_business_id: Option<String>,
    pub tag_name: Option<String>,
    pub color: Option<String>,
}

/// `/crm_api/autoCampaign`: a new journey type.
#[derive(Debug, Deserialize, ToSchema)]
pub struct AutoCampaignRequest {
    pub parent_business_id: Option<String>,
    pub title: String,
    pub description: Option<String>,
    pub campaign_type: String,
    pub icon_url: Option<String>,
    pub execution_type: String,
}

/// The digital-bill staff reads and the on/off toggle.
#[derive(Debug, Deserialize, ToSchema)]
pub struct BillRequest {
    pub parent_business_id: Option<String>,
    pub business_id: Option<String>,
    pub status: Option<u8>,
    pub page: Option<u64>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub date: Option<String>,
}

/// `/crm_api/links/addBusinessConfig`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct BillConfigRequest {
    pub parent_business_id: Option<String>,
    pub business_id: Option<String>,
    pub mode: u8,
    #[serde(rename = "type")]
    pub bill_type: Option<i64>,
    #[serde(rename = "linkValidity")]
    pub link_validity: Option<i64>,
    #[serde(rename = "brandColor")]
    pub brand_color: Option<String>,
    #[serde(rename = "enableFooter")]
    pub enable_footer: Option<u8>,
    #[serde(rename = "footerButton")]
    pub footer_button: Option<String>,
    pub time: Option<i64>,
    pub status: Option<u8>,
    pub sms_template: Option<String>,
    pub chat_template: Option<String>,
    pub chat_template_type: Option<String>,
    pub sender_id: Option<String>,
    pub sms_variables: Option<String>,
    pub chat_variables: Option<String>,
    pub platform: Option<Vec<String>>,
}

/// `/crm_api/links/addWidget` and `/crm_api/links/editWidget`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct WidgetRequest {
    pub parent_business_id: Option<String>,
    pub business_id: Option<String>,
    pub id: Option<u64>,
    pub widget_id: Option<u32>,
    pub sequence: Option<i64>,
    pub title: Option<String>,
    pub value: Option<String>,
    pub static_banner_link: Option<String>,
    pub status: Option<u8>,
}

/// `/crm_api/invoice/open`, `/crm_api/feedback_invoice/open`, `/crm_api/invoice/download`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct BillEventRequest {
    pub bill_id: String,
}

/// `/crm_api/update/widget/insight`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct WidgetInsightRequest {
    pub bill_id: String,
    pub widget_id: u32,
    pub event_type: String,
    pub watch_time: Option<u64>,
}

/// `/crm_api/save/feedback/config`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FeedbackConfigRequest {
    pub parent_business_id: Option<String>,
    pub child_business_id: Option<String>,
    pub feedback_flow: u8,
    pub feedback_sms: Option<String>,
    pub feedback_chat: Option<String>,
    pub feedback_time: Option<i64>,
    pub sms_template: Option<String>,
    pub chat_template: Option<String>,
    pub chat_template_type: Option<String>,
    pub sender_id: Option<String>,
    pub questions: Option<Vec<String>>,
    pub alert_contacts: Option<Vec<String>>,
    pub alert_emails: Option<Vec<String>>,
    pub store_a_app_id: Option<String>,
    pub store_b_app_id: Option<String>,
}

/// The feedback and rating reads.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FeedbackReadRequest {
    pub parent_business_id: Option<String>,
    pub business_id: Option<String>,
    pub child_business_id: Option<String>,
    pub page: Option<u64>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub date: Option<String>,
    pub source: Option<u8>,
}

/// `/crm_api/nps/data`: one NPS answer.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NpsDataRequest {
    #[serde(rename = "parentBusinessId")]
    pub parent_business_id_camel: String,
    #[serde(rename = "businessId")]
    pub business_id: String,
    #[serde(rename = "mobileNo")]
    pub mobile_no: String,
    pub rating: u8,
    pub order_id: Option<String>,
    pub questions: Option<Vec<serde_json::Map<String, serde_json::Value>>>,
}

/// `/crm_api/npsList`, `/crm_api/npsData`, `/crm_api/download/nps/data`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NpsRequest {
    pub parent_business_id: Option<String>,
    pub business_id: Option<String>,
    pub page: Option<u64>,
    pub rating: Option<u8>,
    pub mobile_number: Option<String>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub date: Option<String>,
    pub promoter_from: Option<u8>,
    pub passive_from: Option<u8>,
}

/// `/crm_api/legacy/feedback_sms`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct LegacySmsRequest {
    pub parent_business_id: Option<String>,
    pub business_id: Option<String>,
    pub url: String,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::super::schemas::PlatformSchemas;
    use super::*;

    /// The JSON types a schema allows (from `type`, else from its `enum` or `const` values).
    fn types(schema: &Value) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        match &schema["type"] {
            Value::String(t) => {
                out.insert(t.clone());
            }
            Value::Array(all) => out.extend(all.iter().filter_map(Value::as_str).map(str::to_owned)),
            _ => {
                let values = schema["enum"].as_array().cloned().unwrap_or_default();
                for value in values.iter().chain(schema.get("const")) {
                    out.insert(
                        match value {
                            Value::String(_) => "string",
                            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                            Value::Number(_) => "number",
                            Value::Bool(_) => "boolean",
                            Value::Null => "null",
                            Value::Array(_) => "array",
                            Value::Object(_) => "object",
                        }
                        .to_owned(),
                    );
                }
            }
        }
        out
    }

    /// The non-null alternative of a generated `Option<inline struct>` (`oneOf`/`anyOf`).
    fn unwrap_null(generated: &Value) -> &Value {
        for key in ["oneOf", "anyOf"] {
            if let Some(all) = generated[key].as_array() {
                if let Some(some) = all.iter().find(|s| s["type"] != "null") {
                    return some;
                }
            }
        }
        generated
    }

    /// Where the type `generated` disagrees with the hand-written schema `written`.
    fn disagreements(path: &str, written: &Value, generated: &Value, out: &mut Vec<String>) {
        let generated = unwrap_null(generated);
        let (want, mut got) = (types(written), types(generated));
        got.remove("null");
        // an integer is a number; a schema without a type (or with null only) takes anything
        let fits = |t: &String| want.contains(t) || (t == "integer" && want.contains("number"));
        if !want.is_empty() && !got.is_empty() && !got.iter().all(fits) {
            out.push(format!("{path}: the schema allows {want:?}, the type reads {got:?}"));
        }
        if let Some(props) = written.get("properties").and_then(Value::as_object) {
            let empty = serde_json::Map::new();
            let gen_props = generated.get("properties").and_then(Value::as_object).unwrap_or(&empty);
            let a: BTreeSet<_> = props.keys().collect();
            let b: BTreeSet<_> = gen_props.keys().collect();
            if a != b {
                out.push(format!("{path}: schema properties {a:?}, type fields {b:?}"));
            }
            let required = |s: &Value| -> BTreeSet<String> {
                s["required"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
            };
            // a type may require less than its schema when the extractor finds the field
            // itself (the brand); it may never require what the schema lets a body leave out
            let extra: Vec<_> = required(generated).difference(&required(written)).cloned().collect();
            if !extra.is_empty() {
                out.push(format!("{path}: the type requires {extra:?}, which the schema makes optional"));
            }
            for (name, property) in props {
                if let Some(field) = gen_props.get(name) {
                    disagreements(&format!("{path}/{name}"), property, field, out);
                }
            }
        }
        if let (Some(items), Some(gen_items)) = (written.get("items"), generated.get("items")) {
            disagreements(&format!("{path}[]"), items, gen_items, out);
        }
    }

    #[test]
    fn every_typed_body_agrees_with_its_schema() {
        let documents: std::collections::BTreeMap<_, _> = PlatformSchemas::documents().into_iter().collect();
        let mut problems = Vec::new();
        for (name, generated) in typed() {
            match documents.get(name) {
                Some(written) => disagreements(name, written, &generated, &mut problems),
                None => problems.push(format!("{name}: no schema of that name")),
            }
        }
        assert!(problems.is_empty(), "types and schemas disagree:\n{}", problems.join("\n"));
    }

    #[test]
    fn the_check_sees_a_drifted_type() {
        let written = serde_json::json!({"type": "object", "required": ["a"],
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}});
        let drifted = serde_json::json!({"type": "object", "required": ["a", "b"],
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "string"}}});
        let mut problems = Vec::new();
        disagreements("T", &written, &drifted, &mut problems);
        assert_eq!(problems.len(), 3, "{problems:?}");
    }
}

/// The `/stats` metrics.
#[derive(Debug, Deserialize, ToSchema)]
pub struct StatsRequest {
    pub parent_business_id: Option<String>,
    pub business_id: Option<String>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub date: Option<String>,
    pub limit: Option<u64>,
}

/// `/stats/special-days`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct SpecialDaysRequest {
    pub parent_business_id: Option<String>,
    pub dates: Vec<String>,
    pub label: Option<String>,
    pub remove: Option<bool>,
}

/// A field that may be sent as `null`: absent is `None`, `null` is `Some(Value::Null)`.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

/// `/crm_api/add_b_config` and `/crm_api/add_b_config/php`: the fields to set (a field sent as
/// `null` is removed; one left out keeps its value).
#[derive(Debug, Deserialize, ToSchema)]
pub struct BusinessConfigRequest {
    pub parent_business_id: Option<String>,
    pub business_id: String,
    #[serde(default, deserialize_with = "present")]
    pub business_name: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    pub city: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    pub sms_sender_id: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    pub chat_number: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    pub feedback: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    pub loyalty: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
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

/// `/crm_api/v2/{chat_partner}/generatePartnerToken`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PartnerTokenRequest {
    pub parent_business_id: Option<String>,
    pub business_id: Option<String>,
    pub api_key: String,
}

/// `/crm_api/v2/{chat_partner}/getPartnerProfile`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PartnerProfileRequest {
    pub parent_business_id: Option<String>,
    pub token: String,
}

/// `/crm_api/rider/chat/login`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RiderLoginRequest {
    pub parent_business_id: Option<String>,
    pub business_id: String,
    pub order_id: String,
    pub rider_phone: String,
    pub rider_name: Option<String>,
}

/// `/crm_api/check/chat/login`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ChatCheckRequest {
    pub token: String,
}
