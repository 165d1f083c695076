//! Who may touch what: the one place where a credential's brand and outlet are held against what a
//! request names. Every auth-family extractor of [`crate::platform::edge`], the enqueue routes of
//! [`crate::platform::ingestion`] and the hand-written multipart routes call these functions, so a route
//! cannot forget the check.
//!
//! - **Tenant.** A stored token (staff, integration, ingestion, app) acts for its own brand only. A
//!   body naming another brand (`parentBusinessId` or `parent_business_id`, string or number) is
//!   refused with 403 in the route's family *before* the body is validated or anything is read:
//!   staff family `{message}`, integration family `xE_103`.
//! - **Outlet.** A token created with `--business <outlet>` (staff, integration, ingestion) is
//!   limited to that outlet. Each request type declares its [`Scope`]: a brand-level route (it acts
//!   on the whole brand: rules, catalogues, journey types, fraud settings and lists, settings)
//!   refuses such a token; an outlet-level route (its body names the outlet: `business_id`,
//!   `businessId`, `child_business_id` or `outlet_id`) takes it for the token's outlet; a
//!   customer-level route (one customer of the brand: loyalty, coupons, profiles, orders) takes
//!   it, and an outlet it names must be the token's. A body that leaves the outlet out gets the
//!   token's ([`bind_outlet`]). `/openapi.json` shows each operation's scope as `x-engage-scope`.
//! - **Open routes.** The spec's open routes stay open unless the operator closes them
//!   ([`OpenRoutes`]): then they require an integration token of the brand, bound as above.

use axum::http::HeaderMap;
use serde_json::Value;

use crate::platform::edge::auth::token;
use crate::platform::edge::contract::Scope;
use crate::platform::edge::errors::{IntegrationError, StaffError};
use crate::platform::edge::tokens::{TokenGrant, TokenKind};
use crate::state::AppState;

/// Why a credential may not do what the request asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    /// The request names a brand other than the credential's.
    OtherTenant,
    /// An outlet-limited credential on a route that acts on the whole brand.
    BrandLevel {
        /// The credential's outlet.
        outlet: String,
    },
    /// An outlet-limited credential naming another outlet, or no outlet.
    OtherOutlet {
        /// The credential's outlet.
        outlet: String,
    },
}

impl Denied {
    /// What the refusal says.
    pub fn message(&self) -> String {
        match self {
            Denied::OtherTenant => "not allowed for this business".to_owned(),
            Denied::BrandLevel { outlet } => format!(
                "not allowed for this business: this token is limited to outlet {outlet:?} and this route acts on the whole brand"
            ),
            Denied::OtherOutlet { outlet } => format!(
                "not allowed for this business: this token is limited to outlet {outlet:?}; name it as the request's outlet"
            ),
        }
    }
}

impl From<Denied> for StaffError {
    fn from(denied: Denied) -> Self {
        metrics::counter!("engage_platform_access_denied_total", "family" => "staff").increment(1);
        match denied {
            Denied::OtherTenant => StaffError::forbidden_business(),
            _ => StaffError::forbidden(denied.message()),
        }
    }
}

impl From<Denied> for IntegrationError {
    fn from(denied: Denied) -> Self {
        metrics::counter!("engage_platform_access_denied_total", "family" => "integration").increment(1);
        match denied {
            Denied::OtherTenant => IntegrationError::tenant_mismatch(),
            _ => IntegrationError::forbidden(denied.message()),
        }
    }
}

/// The body fields that name a brand.
pub const BRAND_FIELDS: [&str; 2] = ["parentBusinessId", "parent_business_id"];

/// The body fields that name an outlet.
pub const OUTLET_FIELDS: [&str; 4] = ["business_id", "businessId", "child_business_id", "outlet_id"];

/// A brand or outlet id as a body gives it (a string, or an integer).
pub fn id_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Every brand a raw body (JSON, or a form turned into JSON) names (an empty one names none).
pub fn named_tenants(body: &Value) -> impl Iterator<Item = String> + '_ {
    BRAND_FIELDS.iter().filter_map(|field| body.get(field)).filter_map(id_of).filter(|tenant| !tenant.is_empty())
}

/// The brand a stored token binds. App tokens bind theirs too; their `business` is a customer.
pub fn bound_outlet(grant: &TokenGrant) -> Option<&str> {
    match grant.kind {
        TokenKind::App => None,
        _ => grant.business.as_deref().filter(|outlet| !outlet.is_empty()),
    }
}

/// Refuses a raw body that names a brand other than the token's.
pub fn admit_tenant(grant: &TokenGrant, body: &Value) -> Result<(), Denied> {
    match named_tenants(body).any(|tenant| tenant != grant.parent) {
        true => Err(Denied::OtherTenant),
        false => Ok(()),
    }
}

/// Holds an outlet-limited token to its outlet: a brand-level route refuses it; an outlet-level
/// route takes it when `named` (the outlet the request names) is the token's.
pub fn admit_outlet(grant: &TokenGrant, scope: Scope, named: Option<&str>) -> Result<(), Denied> {
    let Some(outlet) = bound_outlet(grant) else { return Ok(()) };
    match (scope, named) {
        (Scope::Tenant, _) => Err(Denied::BrandLevel { outlet: outlet.to_owned() }),
        (Scope::Outlet | Scope::Customer, Some(named)) if named == outlet => Ok(()),
        (Scope::Customer, None) => Ok(()),
        (Scope::Outlet | Scope::Customer, _) => Err(Denied::OtherOutlet { outlet: outlet.to_owned() }),
    }
}

/// Binds an outlet-limited token's outlet: a body that names no outlet gets the token's in
/// `field` (the body type's first outlet field), so the request acts on the token's outlet. A
/// body naming an outlet is left as it is (and refused by [`admit_raw`] when it is another).
pub fn bind_outlet(grant: &TokenGrant, field: Option<&str>, body: &mut Value) {
    let (Some(outlet), Some(field)) = (bound_outlet(grant), field) else { return };
    let names_one = OUTLET_FIELDS.iter().any(|f| body.get(f).is_some_and(|v| !v.is_null()));
    if let (false, Some(object)) = (names_one, body.as_object_mut()) {
        object.insert(field.to_owned(), Value::String(outlet.to_owned()));
    }
}

/// Holds a raw body (before it is validated) to a token: no other brand, and for an
/// outlet-limited token no brand-level route, no other outlet in any outlet field, and (on an
/// outlet-level route) its own outlet named.
pub fn admit_raw(grant: &TokenGrant, scope: Scope, body: &Value) -> Result<(), Denied> {
    admit_tenant(grant, body)?;
    let Some(outlet) = bound_outlet(grant) else { return Ok(()) };
    let named: Vec<String> = OUTLET_FIELDS.iter().filter_map(|field| body.get(field)).filter_map(id_of).collect();
    if let Some(other) = named.iter().find(|named| *named != outlet) {
        return admit_outlet(grant, scope, Some(other));
    }
    admit_outlet(grant, scope, named.first().map(String::as_str))
}

/// Whether `tenant` closed the open routes for itself (cached for [`BRAND_SETTING_TTL`]).
pub async fn brand_closed(state: &AppState, tenant: &str) -> Result<bool, IntegrationError> {
    let open_routes = &state.platform.open_routes;
    if let Some(closed) = open_routes.cached(tenant) {
        return Ok(closed);
    }
    // read beside the actor, not asked of it: the gate must not wait on the brand's owner node
    let closed = state.platform.directory.open_routes_closed(tenant).await.map_err(IntegrationError::unavailable)?;
    open_routes.remember(tenant, closed);
    Ok(closed)
}

/// The gate of an open route: `None` while the route is open for the brand the body names; once
/// the operator (`ENGAGE_OPEN_ROUTES=closed`) or the brand closed it, the integration token the
/// request must carry (401 `xE_101` without one), bound to its brand and outlet like any token's
/// request (403 `xE_103` for another brand's body).
pub async fn open_gate(
    state: &AppState,
    headers: &HeaderMap,
    body: &mut Value,
    scope: Scope,
    outlet_field: Option<&str>,
) -> Result<Option<TokenGrant>, IntegrationError> {
    let closed = match named_tenants(body).next() {
        _ if state.platform.open_routes.closed_for_all() => true,
        Some(tenant) => brand_closed(state, &tenant).await?,
        None => false,
    };
    if !closed {
        return Ok(None);
    }
    let grant = token(state, TokenKind::Integration, headers).await?;
    bind_outlet(&grant, outlet_field, body);
    admit_raw(&grant, scope, body)?;
    Ok(Some(grant))
}

/// Counts a request of an open route against the per-client limit of `ENGAGE_OPEN_ROUTES_RATE_LIMIT`
/// (429 `xE_429` over it).
pub fn open_route_limit(
    state: &AppState,
    route: &str,
    peer: Option<std::net::SocketAddr>,
) -> Result<(), IntegrationError> {
    let (Some(limiter), Some(peer)) = (&state.platform.open_limiter, peer) else { return Ok(()) };
    limiter.check(&format!("{route} {}", peer.ip())).map_err(|_| IntegrationError::rate_limited())
}

/// Logs once, at start, which routes take requests without a credential and how to close them.
pub fn log_open_routes(settings: &engage_config::Settings) {
    let (paths, _, _) = crate::platform::openapi();
    let open: Vec<&str> = paths
        .iter()
        .filter(|(_, item)| {
            item.as_object().into_iter().flat_map(|ops| ops.values()).any(|op| op["x-engage-open"] == true)
        })
        .map(|(path, _)| path.as_str())
        .collect();
    if settings.open_routes == engage_config::OpenRoutes::Closed {
        tracing::info!(
            routes = open.len(),
            "ENGAGE_OPEN_ROUTES=closed: the spec's open routes require an integration token of their brand"
        );
    } else {
        tracing::warn!(
            routes = %open.join(" "),
            "{} routes are open (as the spec has them) to anyone who can reach {}: close them all with ENGAGE_OPEN_ROUTES=closed, or one brand's with /crm_api/open_routes/settings",
            open.len(),
            settings.http_addr
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn grant(kind: TokenKind, parent: &str, business: Option<&str>) -> TokenGrant {
        TokenGrant {
            id: "id".into(),
            kind,
            parent: parent.into(),
            business: business.map(str::to_owned),
            created_at: String::new(),
            revoked_at: None,
        }
    }

    #[test]
    fn a_body_naming_another_brand_in_either_field_or_as_a_number_is_refused() {
        let staff = grant(TokenKind::Staff, "42", None);
        assert_eq!(admit_tenant(&staff, &json!({"parent_business_id": "42"})), Ok(()));
        assert_eq!(admit_tenant(&staff, &json!({"parentBusinessId": 42})), Ok(()));
        assert_eq!(admit_tenant(&staff, &json!({})), Ok(()));
        assert_eq!(admit_tenant(&staff, &json!({"parentBusinessId": "43"})), Err(Denied::OtherTenant));
        assert_eq!(
            admit_tenant(&staff, &json!({"parent_business_id": "42", "parentBusinessId": "4|2"})),
            Err(Denied::OtherTenant)
        );
    }

    #[test]
    fn an_outlet_token_keeps_to_its_outlet_and_off_brand_routes() {
        let outlet = grant(TokenKind::Staff, "b", Some("o1"));
        assert_eq!(admit_outlet(&outlet, Scope::Outlet, Some("o1")), Ok(()));
        assert!(matches!(admit_outlet(&outlet, Scope::Outlet, Some("o2")), Err(Denied::OtherOutlet { .. })));
        assert!(matches!(admit_outlet(&outlet, Scope::Outlet, None), Err(Denied::OtherOutlet { .. })));
        assert!(matches!(admit_outlet(&outlet, Scope::Tenant, Some("o1")), Err(Denied::BrandLevel { .. })));
        assert_eq!(admit_outlet(&outlet, Scope::Customer, None), Ok(()));
        assert_eq!(admit_outlet(&outlet, Scope::Customer, Some("o1")), Ok(()));
        assert!(matches!(admit_outlet(&outlet, Scope::Customer, Some("o2")), Err(Denied::OtherOutlet { .. })));
        let whole = grant(TokenKind::Staff, "b", None);
        assert_eq!(admit_outlet(&whole, Scope::Tenant, None), Ok(()));
        // an app token's `business` is its customer, not an outlet
        let app = grant(TokenKind::App, "b", Some("9876543210"));
        assert_eq!(admit_outlet(&app, Scope::Tenant, None), Ok(()));
    }
}
