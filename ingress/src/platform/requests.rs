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

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Number;

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

        /// (schema name, the JSON Schema generated from the type) of every typed body: the
        /// schema the edge validates it with and `/openapi.json` publishes.
        pub fn generated() -> Vec<(&'static str, serde_json::Value)> {
            vec![
                $((stringify!($ty), super::contract::schema_of::<$ty>()),)*
                ("OpenRoutesSettingsRequest", super::contract::schema_of::<super::open_routes::OpenRoutesSettingsRequest>()),
            ]
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
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CustomerDetailsRequest {
    #[schemars(length(min = 1, max = 128))]
    pub business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(pattern(r#"^\+?[0-9]{7,15}$"#))]
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
    #[schemars(pattern(r#"^\+?[0-9]{7,15}$"#))]
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

/// Loyalty rules: fields left out keep their value.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("minProperties" = 1))]
#[schemars(
    description = r#"Add or edit a brand's loyalty rules; fields left out keep their current value. parent_business_id is required on the staff route; the integration route takes the brand from its token."#
)]
pub struct LoyaltyRulesRequest {
    #[schemars(length(min = 1, max = 128))]
    pub parent_business_id: Option<String>,
    #[schemars(range(min = 0, max = 100))]
    pub earn_percent: Option<Number>,
    #[schemars(range(min = 0))]
    pub min_bill: Option<Number>,
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub point_value: Option<Number>,
    #[schemars(range(min = 1, max = 3650))]
    pub points_expiry_days: Option<u32>,
    #[schemars(range(min = 0, max = 100))]
    pub max_redeem_percent: Option<Number>,
    #[schemars(range(min = 1, max = 1000000000_i64))]
    pub min_redeem_points: Option<i64>,
    pub otp_required: Option<bool>,
    #[schemars(description = r#"The refer-and-earn programme; fields left out keep their current value."#)]
    #[schemars(extend("additionalProperties" = false))]
    pub referral: Option<ReferralPatch>,
}

/// The refer-and-earn programme: fields left out keep their value.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
#[schemars(inline)]
pub struct ReferralPatch {
    pub enabled: Option<bool>,
    #[schemars(range(min = 0, max = 1000000))]
    pub referrer_points: Option<i64>,
    #[schemars(range(min = 0, max = 1000000))]
    pub referee_points: Option<i64>,
    #[schemars(range(min = 0))]
    pub min_order_amount: Option<Number>,
    #[schemars(range(min = 0, max = 1000000))]
    pub max_referrals: Option<u32>,
}

/// `/crm_api/add_edit_milestone`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Replace a brand's milestone bonuses: bonus_points awarded once when a customer's order count reaches orders."#
)]
pub struct MilestonesRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(max = 100))]
    pub milestones: Vec<MilestoneInput>,
}

/// One milestone bonus.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct MilestoneInput {
    #[schemars(range(min = 1, max = 1000000))]
    pub orders: u32,
    #[schemars(range(min = 1, max = 1000000000_i64))]
    pub bonus_points: i64,
}

/// A redemption for an order.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Redeem points for an order. One redemption per order_id: a retry answers the first one. bill_amount, when given, caps the points by the brand's max_redeem_percent."#
)]
pub struct RedeemPointsRequest {
    #[schemars(
        description = r#"The brand, on the open /pos_e/v1 routes (the integration routes take it from the token; naming another brand there is 403 xE_103)."#
    )]
    #[schemars(length(min = 1, max = 128))]
    pub parent_business_id: Option<String>,
    #[schemars(pattern(r#"^\+?[0-9]{7,15}$"#))]
    pub customer_number: String,
    #[schemars(range(min = 1, max = 1000000000000_i64))]
    pub points: i64,
    #[schemars(length(min = 1, max = 128))]
    pub order_id: String,
    #[schemars(length(min = 1, max = 128))]
    pub outlet_id: Option<String>,
    #[schemars(range(min = 0, max = 100000000))]
    pub bill_amount: Option<Number>,
    #[schemars(pattern(r#"^[0-9]{6}$"#))]
    pub otp: Option<String>,
}

/// A customer's loyalty (balance, ledger page, revocation).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CustomerLoyaltyRequest {
    #[schemars(
        description = r#"The brand, on the open /pos_e/v1 routes (the integration routes take it from the token; naming another brand there is 403 xE_103)."#
    )]
    #[schemars(length(min = 1, max = 128))]
    pub parent_business_id: Option<String>,
    #[schemars(pattern(r#"^\+?[0-9]{7,15}$"#))]
    pub customer_number: String,
    #[schemars(range(min = 0, max = 100000000))]
    pub bill_amount: Option<Number>,
    #[schemars(length(min = 1, max = 128))]
    pub order_id: Option<String>,
    #[schemars(range(min = 1, max = 1000000))]
    pub page: Option<u64>,
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
}

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
    #[schemars(pattern(r#"^\+?[0-9]{7,15}$"#))]
    pub contact: Option<String>,
    #[schemars(length(max = 1000))]
    #[schemars(extend("items" = {"type": "string", "pattern": "^\\+?[0-9]{7,15}$"}))]
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

/// A business wallet.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"A business wallet: recharge (amount, optional payment reference: a reference applied once only), balance, or a page of transactions."#
)]
pub struct WalletRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub business_id: String,
    #[schemars(range(max = 10000000, min = 0.0001))]
    pub amount: Option<Number>,
    #[schemars(length(min = 1, max = 128))]
    pub reference: Option<String>,
    #[schemars(range(min = 1, max = 1000000))]
    pub page: Option<u64>,
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
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
    #[schemars(pattern(r#"^\+?[0-9]{7,15}$"#))]
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
    #[schemars(pattern(r#"^\+?[0-9]{7,15}$"#))]
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

/// A reward of the catalogue (no `reward_id`: a new one).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Add (no reward_id) or edit a reward of the brand's catalogue: bought with points_cost points, it issues a coupon valid valid_days days."#
)]
pub struct RewardRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(length(min = 1, max = 64))]
    pub reward_id: Option<String>,
    #[schemars(length(min = 1, max = 200))]
    pub name: String,
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    #[schemars(range(min = 1, max = 1000000000_i64))]
    pub points_cost: i64,
    #[schemars(range(min = 1, max = 3650))]
    pub valid_days: Option<i64>,
    pub active: Option<bool>,
}

/// Rewards and coupons.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Rewards and coupons: customer_number with reward_id (purchase, optional reference for retries) or coupon_code (+ order_id to use it). The /pos_e/v1 routes name the brand in parent_business_id."#
)]
pub struct CouponRequest {
    #[schemars(length(min = 1, max = 128))]
    pub parent_business_id: Option<String>,
    #[schemars(pattern(r#"^\+?[0-9]{7,15}$"#))]
    pub customer_number: Option<String>,
    #[schemars(length(min = 1, max = 64))]
    pub reward_id: Option<String>,
    #[schemars(pattern(r#"^[A-Z0-9]{8}$"#))]
    pub coupon_code: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub order_id: Option<String>,
    #[schemars(length(min = 1, max = 128))]
    pub reference: Option<String>,
}

/// `/crm_api/day/wise/data`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"Day-wise loyalty figures of a brand for the IST days start_date..=end_date (at most 92 days; default: the last 7 days up to today)."#
)]
pub struct DayWiseRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub start_date: Option<String>,
    #[schemars(extend("format" = "date"))]
    pub end_date: Option<String>,
}

/// A brand's price table: read it, or apply `pricing` to it.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"A brand's price table for paid messages (the spec's wallet pricing configuration plus engage's per-purpose lists). /crm_api/wallet/get_pricing reads it; /crm_api/wallet/set_pricing applies `pricing` to it: fields left out keep their value. Prices are per message before GST; GST is a percentage."#
)]
pub struct WalletPricingRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(extend("additionalProperties" = false, "minProperties" = 1))]
    pub pricing: Option<PricingPatch>,
}

/// Prices to change (before GST) and GST percentages; fields left out keep their value.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false, "minProperties" = 1))]
#[schemars(inline)]
pub struct PricingPatch {
    #[schemars(range(min = 0, max = 1000))]
    pub digital_bill_sms: Option<Number>,
    #[schemars(range(min = 0, max = 1000))]
    pub digital_chat_cost: Option<Number>,
    #[schemars(range(min = 0, max = 1000))]
    pub digital_chat_cost_utility: Option<Number>,
    #[schemars(range(min = 0, max = 100))]
    pub sms_gst: Option<Number>,
    #[schemars(range(min = 0, max = 100))]
    pub chat_gst: Option<Number>,
    #[schemars(extend("additionalProperties" = false, "minProperties" = 1))]
    pub feedback: Option<ChannelPricesPatch>,
    #[schemars(extend("additionalProperties" = false, "minProperties" = 1))]
    pub fraud_alert: Option<ChannelPricesPatch>,
    #[schemars(extend("additionalProperties" = false, "minProperties" = 1))]
    pub campaign: Option<ChannelPricesPatch>,
    #[schemars(extend("additionalProperties" = false, "minProperties" = 1))]
    pub otp: Option<ChannelPricesPatch>,
}

/// One purpose's prices per channel; fields left out keep their value.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false, "minProperties" = 1))]
#[schemars(inline)]
pub struct ChannelPricesPatch {
    #[schemars(range(min = 0, max = 1000))]
    pub sms: Option<Number>,
    #[schemars(range(min = 0, max = 1000))]
    pub chat: Option<Number>,
    #[schemars(range(min = 0, max = 1000))]
    pub chat_utility: Option<Number>,
    #[schemars(range(min = 0, max = 1000))]
    pub push: Option<Number>,
}

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

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::super::schemas::PlatformSchemas;

    fn schema(name: &str) -> Value {
        super::generated().into_iter().find(|(n, _)| *n == name).map(|(_, s)| s).unwrap_or_default()
    }

    #[test]
    fn every_typed_body_has_a_schema_generated_from_its_type_that_compiles() {
        let schemas = PlatformSchemas::compile().unwrap();
        let generated = super::generated();
        assert!(generated.len() >= 40, "{} typed bodies", generated.len());
        for (name, schema) in &generated {
            assert_eq!(schema["type"], "object", "{name}");
            assert!(schema["properties"].is_object(), "{name}");
            assert!(!schema.to_string().contains("$ref"), "{name}: every part is inline");
            // every typed body is validated by its generated schema: an empty body misses the
            // fields its type requires (those that are not `Option`)
            if schema["required"].as_array().is_some_and(|r| !r.is_empty()) {
                assert!(!schemas.issues(name, &json!({})).is_empty(), "{name}");
            }
        }
    }

    #[test]
    fn the_schema_says_what_the_type_and_its_attributes_say() {
        let wallet = schema("WalletRequest");
        // `business_id: String` is required, and the brand (`#[schemars(required)]` on its
        // `Option`, which the extractor reads); `amount: Option<Number>` is optional, not nullable
        assert_eq!(wallet["required"], json!(["parent_business_id", "business_id"]), "{wallet}");
        assert_eq!(wallet["properties"]["amount"]["type"], "number", "{wallet}");
        assert_eq!(wallet["properties"]["amount"]["minimum"], json!(0.0001), "{wallet}");
        assert_eq!(wallet["properties"]["business_id"]["maxLength"], 128, "{wallet}");
        assert!(wallet["properties"]["page"].get("format").is_none(), "no integer width: {wallet}");
        // a serde rename is the JSON name; a nested type is inline with its own bounds
        let bill = schema("BillConfigRequest");
        assert!(bill["properties"]["brandColor"].is_object(), "{bill}");
        let pricing = schema("WalletPricingRequest");
        assert_eq!(pricing["properties"]["pricing"]["properties"]["feedback"]["minProperties"], 1, "{pricing}");
        // a field where null means "remove it" keeps null
        let config = schema("BusinessConfigRequest");
        assert_eq!(config["properties"]["city"]["type"], json!(["string", "null"]), "{config}");
        // and the validator enforces it
        let schemas = PlatformSchemas::compile().unwrap();
        let too_small = json!({"parent_business_id": "b1", "business_id": "o1", "amount": 0});
        assert_eq!(schemas.issues("WalletRequest", &too_small)[0].pointer, "/amount");
    }
}

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

/// A field that may be sent as `null`: absent is `None`, `null` is `Some(Value::Null)`.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
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
