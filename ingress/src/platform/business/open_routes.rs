//! `/crm_api/open_routes/settings` (engage's route, staff token, brand-level): whether the spec's
//! open routes take requests for the brand without a credential. The operator's
//! `ENGAGE_OPEN_ROUTES=closed` closes them for every brand; this route lets one brand close (or
//! reopen) them for itself. Closed, each open route needs an integration token of the brand
//! (`Authorization:`), bound to its brand and outlet ([`crate::platform::edge::access`]). Other processes of a
//! cluster see a change within [`crate::platform::state::BRAND_SETTING_TTL`].
//!
//! Request `{parent_business_id, open_routes?: "open" | "closed"}`; answer
//! `{status: true, open_routes: "open" | "closed", closed_for_all: bool}` (`closed_for_all`: the
//! operator closed them for every brand, whatever the brand's setting).

use axum::extract::State;
use axum::Json;
use schemars::JsonSchema;
use serde::Serialize;

use engage_actors::capabilities::business;

use crate::platform::edge::errors::StaffError;
use crate::platform::edge::requests::OpenRoutesSettingsRequest;
use crate::platform::edge::routes::Routes;
use crate::platform::edge::{staff_answer, Staff, StaffAnswer};
use crate::state::AppState;

/// The route's path.
pub const PATH: &str = "/crm_api/open_routes/settings";

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post(
            PATH,
            "Read, or with open_routes, change whether the spec's open routes take this brand's requests without a credential (closed: an integration token of the brand is required): {status, open_routes, closed_for_all}",
            settings,
        )
}

/// `{open_routes, closed_for_all}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OpenRoutesAnswer {
    /// The brand's setting.
    #[schemars(extend("enum" = ["open", "closed"]))]
    open_routes: &'static str,
    /// Whether the operator closed the open routes for every brand (`ENGAGE_OPEN_ROUTES=closed`).
    closed_for_all: bool,
}

async fn settings(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<OpenRoutesSettingsRequest>,
) -> Result<Json<StaffAnswer<OpenRoutesAnswer>>, StaffError> {
    let wanted = body.open_routes.as_deref().map(|wanted| wanted == "closed");
    let query = business::OpenRoutes { closed: wanted, now: chrono::Utc::now() };
    let closed = state.platform.gateway.ask(&tenant, query).await?.closed;
    if wanted.is_some() {
        tracing::info!(tenant, closed, "a brand changed its open routes");
    }
    state.platform.open_routes.remember(&tenant, closed);
    Ok(staff_answer(OpenRoutesAnswer {
        open_routes: if closed { "closed" } else { "open" },
        closed_for_all: state.platform.open_routes.closed_for_all(),
    }))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_schema_is_the_types() {
        let schema = crate::platform::edge::contract::schema_of::<super::OpenRoutesSettingsRequest>();
        let mut fields: Vec<&str> =
            schema["properties"].as_object().map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
        fields.sort_unstable();
        assert_eq!(fields, ["open_routes", "parent_business_id"]);
        assert_eq!(schema["properties"]["open_routes"]["enum"], serde_json::json!(["open", "closed"]));
    }
}
