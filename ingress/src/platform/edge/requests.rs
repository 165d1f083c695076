//! The platform's request bodies as types, one module per area. A type is the one source of its
//! body's contract: its fields (and which are `Option`), their JSON names (`serde`) and their
//! bounds (`#[schemars(...)]`) make the JSON Schema ([`crate::platform::edge::contract`]) that refuses a bad body
//! with a pointer and a message per problem, and that `/openapi.json` publishes under the type's
//! name ([`generated`]); the handler reads the decoded type.
//!
//! A new body type is written in its area's module and named once in `platform_requests!` (and
//! in [`crate::platform::edge::scopes`] for its scope). The ingestion bodies (`Order`, `CreateCustomer`,
//! `PushToken`, `Checkin`, `BusinessStatus`, `MerchantData`, `CrmToken`, `ChatEvent`) have no type
//! on purpose: they are published to the bus as received, so a replay sees the producer's own
//! bytes; their schema is their file in `schemas/`, and the actors read them as
//! `engage_actors::domain::order::OrderFacts`.

use crate::platform::edge::contract::PlatformRequest;
use crate::platform::edge::contract::Scope;

pub use crate::platform::bills::requests::*;
pub use crate::platform::business::requests::*;
pub use crate::platform::consent::requests::*;
pub use crate::platform::customers::requests::*;
pub use crate::platform::feedback::requests::*;
pub use crate::platform::fraud::requests::*;
pub use crate::platform::journeys::requests::*;
pub use crate::platform::loyalty::requests::*;
pub use crate::platform::senders::requests::*;
pub use crate::platform::stats::requests::*;
pub use crate::platform::wallet::requests::*;

macro_rules! platform_requests {
    ($($ty:ident),* $(,)?) => {
        $(impl PlatformRequest for $ty {
            const SCHEMA: &'static str = stringify!($ty);
            const SCOPE: Scope = $ty::SCOPE;
            const OUTLET_FIELDS: &'static [&'static str] = $ty::OUTLET_FIELDS;
            const BRAND_FIELDS: &'static [&'static str] = $ty::BRAND_FIELDS;
            fn tenant(&self) -> Option<&str> {
                self.named_tenant()
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
                $((stringify!($ty), crate::platform::edge::contract::schema_of::<$ty>()),)*
                ("OpenRoutesSettingsRequest", crate::platform::edge::contract::schema_of::<OpenRoutesSettingsRequest>()),
            ]
        }
    };
}

platform_requests!(
    CustomerDetailsRequest,
    UpdateCustomerRequest,
    WaitingRefundsRequest,
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
    ConsentRequest,
    ConsentSettingsRequest,
    CustomerExportRequest,
    SendersRequest,
);

/// Bodies whose brand is `parent_business_id`.
macro_rules! brand_field {
    ($($ty:ident),*) => {$(
        impl $ty {
            const BRAND_FIELDS: &'static [&'static str] = &["parent_business_id"];

            fn named_tenant(&self) -> Option<&str> {
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

            fn named_tenant(&self) -> Option<&str> {
                self.parent_business_id_camel.as_deref().or(self.parent_business_id.as_deref())
            }
        }
    )*};
}

brand_field!(
    CustomerDetailsRequest,
    UpdateCustomerRequest,
    WaitingRefundsRequest,
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
    RiderLoginRequest,
    ConsentRequest,
    ConsentSettingsRequest,
    CustomerExportRequest,
    SendersRequest
);
brand_either!(FraudWalletRulesRequest, FraudAlertSettingsRequest, FraudQueryRequest);

/// Bodies of ingestion-token routes: the brand is the token's.
macro_rules! tenant_of_token {
    ($($ty:ident),*) => {$(
        impl $ty {
            const BRAND_FIELDS: &'static [&'static str] = &[];

            fn named_tenant(&self) -> Option<&str> {
                None
            }
        }
    )*};
}

tenant_of_token!(BillEventRequest, WidgetInsightRequest, ChatCheckRequest);

impl NpsDataRequest {
    const BRAND_FIELDS: &'static [&'static str] = &["parentBusinessId"];

    fn named_tenant(&self) -> Option<&str> {
        Some(self.parent_business_id_camel.as_str())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::platform::edge::schemas::PlatformSchemas;

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
