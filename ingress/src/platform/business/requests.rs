//! `/crm_api/open_routes/settings`: a brand opens or closes the spec's open routes. The JSON
//! Schema of the body is generated from its type ([`crate::platform::edge::contract`]).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platform::edge::contract::PlatformRequest;
use crate::platform::edge::contract::Scope;

/// `/crm_api/open_routes/settings`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    description = r#"/crm_api/open_routes/settings (engage's route): read, or with open_routes set, change whether the spec's open routes take requests for this brand without a credential. closed: each then needs an integration token of the brand (Authorization:)."#
)]
pub struct OpenRoutesSettingsRequest {
    #[schemars(length(min = 1, max = 128))]
    #[schemars(required)]
    pub parent_business_id: Option<String>,
    #[schemars(extend("enum" = ["open", "closed"]))]
    pub open_routes: Option<String>,
}

impl PlatformRequest for OpenRoutesSettingsRequest {
    const SCHEMA: &'static str = "OpenRoutesSettingsRequest";
    const SCOPE: Scope = Scope::Tenant;
    const BRAND_FIELDS: &'static [&'static str] = &["parent_business_id"];

    fn tenant(&self) -> Option<&str> {
        self.parent_business_id.as_deref()
    }
}
