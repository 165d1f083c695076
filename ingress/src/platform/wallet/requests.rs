//! Business wallets and their price table. The JSON Schema of each body is generated from its type
//! ([`crate::platform::edge::contract`]).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Number;

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
