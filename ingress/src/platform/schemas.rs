//! The JSON Schemas of the platform's request bodies (`schemas/*.json`): compiled once, used by
//! the routes, and published in `/openapi.json` under their names.

use std::collections::BTreeMap;

use jsonschema::Validator;
use serde_json::Value;

use crate::error::Issue;
use crate::validation;

/// (name, schema text) of every body schema.
pub const SCHEMAS: &[(&str, &str)] = &[
    ("Order", include_str!("schemas/order.json")),
    ("CreateCustomer", include_str!("schemas/customer.json")),
    ("PushToken", include_str!("schemas/push_token.json")),
    ("Checkin", include_str!("schemas/checkin.json")),
    ("BusinessStatus", include_str!("schemas/business_status.json")),
    ("MerchantData", include_str!("schemas/merchant_data.json")),
    ("CrmToken", include_str!("schemas/crm_token.json")),
    ("ChatEvent", include_str!("schemas/chat_event.json")),
    ("CustomerDetailsRequest", include_str!("schemas/customer_details.json")),
    ("UpdateCustomerRequest", include_str!("schemas/update_customer.json")),
    ("LoyaltyRulesRequest", include_str!("schemas/loyalty_rules.json")),
    ("MilestonesRequest", include_str!("schemas/milestones.json")),
    ("RedeemPointsRequest", include_str!("schemas/redeem_points.json")),
    ("CustomerLoyaltyRequest", include_str!("schemas/customer_loyalty.json")),
    ("FraudWalletRulesRequest", include_str!("schemas/fraud_wallet_rules.json")),
    ("FraudAlertSettingsRequest", include_str!("schemas/fraud_alert_settings.json")),
    ("FraudQueryRequest", include_str!("schemas/fraud_query.json")),
    ("WalletRequest", include_str!("schemas/wallet.json")),
    ("IntegrationUserRequest", include_str!("schemas/integration_user.json")),
    ("RewardRequest", include_str!("schemas/reward.json")),
    ("CouponRequest", include_str!("schemas/coupon.json")),
    ("DayWiseRequest", include_str!("schemas/day_wise.json")),
    ("WalletPricingRequest", include_str!("schemas/wallet_pricing.json")),
    ("JourneyCatalogueRequest", include_str!("schemas/journey_catalogue.json")),
    ("SaveJourneyRequest", include_str!("schemas/save_journey.json")),
    ("JourneyRequest", include_str!("schemas/journey.json")),
    ("JourneyReportRequest", include_str!("schemas/journey_report.json")),
    ("JourneySettingsRequest", include_str!("schemas/journey_settings.json")),
    ("CampaignTagRequest", include_str!("schemas/campaign_tag.json")),
    ("AutoCampaignRequest", include_str!("schemas/auto_campaign.json")),
    ("BillRequest", include_str!("schemas/bill.json")),
    ("BillConfigRequest", include_str!("schemas/bill_config.json")),
    ("WidgetRequest", include_str!("schemas/widget.json")),
    ("BillEventRequest", include_str!("schemas/bill_event.json")),
    ("WidgetInsightRequest", include_str!("schemas/widget_insight.json")),
    ("FeedbackConfigRequest", include_str!("schemas/feedback_config.json")),
    ("FeedbackReadRequest", include_str!("schemas/feedback_read.json")),
    ("NpsDataRequest", include_str!("schemas/nps_data.json")),
    ("NpsRequest", include_str!("schemas/nps.json")),
    ("LegacySmsRequest", include_str!("schemas/legacy_sms.json")),
    ("StatsRequest", include_str!("schemas/stats.json")),
    ("SpecialDaysRequest", include_str!("schemas/special_days.json")),
    ("BusinessConfigRequest", include_str!("schemas/business_config.json")),
    ("PartnerTokenRequest", include_str!("schemas/partner_token.json")),
    ("PartnerProfileRequest", include_str!("schemas/partner_profile.json")),
    ("RiderLoginRequest", include_str!("schemas/rider_login.json")),
    ("ChatCheckRequest", include_str!("schemas/chat_check.json")),
    ("OpenRoutesSettingsRequest", include_str!("schemas/open_routes_settings.json")),
];

/// Compiled validators by schema name.
pub struct PlatformSchemas {
    validators: BTreeMap<&'static str, Validator>,
    documents: BTreeMap<&'static str, Value>,
}

impl PlatformSchemas {
    /// Compiles every schema (formats asserted).
    pub fn compile() -> Result<Self, String> {
        let mut validators = BTreeMap::new();
        let mut documents = BTreeMap::new();
        for (name, text) in SCHEMAS {
            let schema: Value = serde_json::from_str(text).map_err(|e| format!("schema {name}: {e}"))?;
            let validator = validation::compile(&schema).map_err(|e| format!("schema {name}: {e}"))?;
            validators.insert(*name, validator);
            documents.insert(*name, schema);
        }
        Ok(Self { validators, documents })
    }

    /// Converts the values of `instance` whose type schema `name` does not declare, where the
    /// conversion is exact ([`super::coerce`]); then [`PlatformSchemas::issues`] judges it.
    pub fn coerce(&self, name: &str, instance: &mut Value) {
        if let Some(schema) = self.documents.get(name) {
            super::coerce::coerce(schema, instance);
        }
    }

    /// Problems of `instance` against schema `name` (an unknown name is a problem too).
    pub fn issues(&self, name: &str, instance: &Value) -> Vec<Issue> {
        let Some(validator) = self.validators.get(name) else {
            return vec![Issue { pointer: String::new(), message: format!("no schema {name}") }];
        };
        validation::issues(validator, instance)
    }

    /// The schema documents, for `/openapi.json`.
    pub fn documents() -> Vec<(&'static str, Value)> {
        SCHEMAS.iter().filter_map(|(name, text)| serde_json::from_str(text).ok().map(|v| (*name, v))).collect()
    }
}
