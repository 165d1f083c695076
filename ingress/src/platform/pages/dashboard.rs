//! `GET /dashboard`: the web dashboard, one page served from the binary (`dashboard.html`: HTML,
//! CSS and a small script, no build chain, no external assets). The page signs in with a staff
//! token alone (kept in the tab's `sessionStorage`, so a reload shows the board again): it asks
//! `GET /dashboard/session` which brand (and outlet, for an outlet-limited token) the token acts
//! for, then the `/stats` routes for the chosen outlet and period, and draws the charts as SVG;
//! it works down to phone width. `/favicon.ico` is the pages' icon ([`crate::pages::favicon`]).

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Json;
use serde_json::{json, Value};

use engage_actors::capabilities::business::{self, BusinessConfig};

use crate::platform::edge::auth::{token, Auth};
use crate::platform::edge::errors::StaffError;
use crate::platform::edge::routes::Routes;
use crate::platform::edge::tokens::TokenKind;
use crate::platform::edge::{staff_answer, Data, StaffAnswer};
use crate::state::AppState;

/// The page.
pub const PAGE: &str = include_str!("dashboard.html");

/// What the page may load: only this origin; its own inline style and script.
const POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                      connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'";

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new().route(
        "/dashboard",
        get(page),
        serde_json::json!({"get": {
            "summary": "The web dashboard: one HTML page (sign in with a staff token; it reads the /stats routes)",
            "tags": ["stats"],
            "security": [],
            "responses": {"200": crate::platform::edge::routes::html("the page")}}}),
    )
    .route("/dashboard/session", get(session), json!({"get": session_operation()}))
    .route(
        "/favicon.ico",
        get(crate::pages::favicon),
        serde_json::json!({"get": {
            "summary": "The icon of engage's pages (SVG)",
            "tags": ["stats"],
            "security": [],
            "responses": {"200": {"description": "the icon", "content": {"image/svg+xml": {"schema": {"type": "string"}}}}}}}),
    )
}

async fn page() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::CACHE_CONTROL, "no-cache"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        PAGE,
    )
}

fn session_operation() -> Value {
    let mut op = crate::platform::edge::routes::operation(
        "Whom a staff token acts for (the dashboard's sign-in): {status, data: {parent_business_id, business_id (the outlet it is limited to, or null), brand_name, outlet_name (as /crm_api/add_b_config set them, or null), outlets (the brand's named outlets, id to name)}}",
        Auth::Staff,
        None,
        crate::platform::edge::contract::answer_schema::<StaffAnswer<Data<Session>>>(),
    );
    // about the credential itself: it names no brand and answers the token's own
    op["x-engage-scope"] = json!("token");
    op
}

/// `GET /dashboard/session`: the brand (and outlet) of the staff token in `token`, with their
/// configured names.
/// Whom a staff token acts for.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Session {
    /// The brand.
    parent_business_id: String,
    /// The outlet the token is limited to, or null.
    business_id: Option<String>,
    /// The brand's name as `/crm_api/add_b_config` set it, or null.
    brand_name: Option<String>,
    /// The outlet's name, or null.
    outlet_name: Option<String>,
    /// The brand's outlets that have a name (`/crm_api/add_b_config`'s `business_name`), id →
    /// name: the dashboard's outlet list shows them by name.
    outlets: std::collections::BTreeMap<String, String>,
}

async fn session(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<StaffAnswer<Data<Session>>>, StaffError> {
    let grant = token(&state, TokenKind::Staff, &headers).await?;
    let name = |business_id: String| {
        let gateway = state.platform.gateway.clone();
        let tenant = grant.parent.clone();
        async move {
            let config: BusinessConfig = gateway.ask(&tenant, business::GetConfig { business_id }).await?;
            Ok::<_, StaffError>(config.name().map(str::to_owned))
        }
    };
    let brand_name = name("0".to_owned()).await?;
    let outlet_name = match &grant.business {
        Some(outlet) => name(outlet.clone()).await?,
        None => None,
    };
    let named: business::NamedOutlets =
        state.platform.gateway.ask(&grant.parent, business::OutletNames {}).await.map_err(StaffError::from)?;
    let data = Session {
        parent_business_id: grant.parent,
        business_id: grant.business,
        brand_name,
        outlet_name,
        outlets: named.names,
    };
    Ok(staff_answer(Data { data }))
}
