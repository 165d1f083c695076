//! Loyalty rules, milestones, redemptions, rewards and coupons. The JSON Schema of each body is generated from its type
//! ([`crate::platform::edge::contract`]).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Number;

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
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
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
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
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
    #[schemars(pattern(engage_actors::domain::phone::PATTERN))]
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
