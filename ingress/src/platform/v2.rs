//! Routes relative to `/crm_api/v2` (spec: POST, no auth header).
//!
//! | Route | Body | Answer |
//! |---|---|---|
//! | `/dashboarData` | StatsRequest | with no `token:` header, only what a brand may show anyone: `{status: 1, data: {parent_business_id, period, has_orders, active_outlets}}`; with a staff token of the brand, the `/stats/dashboard/summary` answer. A `token:` header that is not such a token is 401 `xE_101` |
//! | `/{chat_partner}/generatePartnerToken` | PartnerTokenRequest (`api_key`: an integration token of the brand) | `{status: 1, partner, token, token_type: "Bearer", expires_in: 3600, expires_at}`; 401 `xE_101` for a key that is not the brand's |
//! | `/{chat_partner}/getPartnerProfile` | PartnerProfileRequest (`token`) | `{status: 1, data: {partner, parent_business_id, business_id, expires_at, business}}` (`business`: the configuration record); 401 `xE_101` for a token of another partner or brand, or expired |
//!
//! The chat partner (`{chat_partner}`, 1 to 32 of `a-z 0-9 _ -`) is named in the path and in the
//! token, so a token serves only the partner it was made for. Open routes: the optional per-client
//! rate limit applies.

use axum::extract::{ConnectInfo, Path, State};
use axum::http::HeaderMap;
use axum::Json;
use chrono::{Duration, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

use engage_actors::capabilities::business::{self, BusinessConfig};
use engage_actors::capabilities::stats::shapes::Summary;
use engage_actors::capabilities::stats::{Metric, ReadMetric};
use engage_actors::signed_links::ChatClaims;

use crate::platform::edge::access::{self};
use crate::platform::edge::auth::{header, token};
use crate::platform::edge::contract::Scope;
use crate::platform::edge::errors::IntegrationError;
use crate::platform::edge::requests::{PartnerProfileRequest, PartnerTokenRequest, StatsRequest};
use crate::platform::edge::routes::Routes;
use crate::platform::edge::tokens::TokenKind;
use crate::platform::edge::{answer, open_rate_limit, Answer, Data, Open};
use crate::state::AppState;

/// How long a partner token is valid.
pub const PARTNER_TOKEN_SECS: i64 = 3600;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    let partner = json!([{"name": "chat_partner", "in": "path", "required": true,
                          "schema": {"type": "string", "pattern": "^[a-z0-9_-]{1,32}$"}}]);
    Routes::new()
        .post(
            "/crm_api/v2/dashboarData",
            "The dashboard summary for the CRM. Without a token header only {parent_business_id, period, has_orders, active_outlets}; with a staff token of the brand (token:) the /stats/dashboard/summary answer: {status: 1, data}",
            dashboard_data,
        )
        .answer("401", "xE_101 a token header that is not a staff token of the brand")
        .post(
            "/crm_api/v2/{chat_partner}/generatePartnerToken",
            "A chat partner's token for the brand (1 hour), given an integration token of the brand as api_key: {status: 1, partner, token, token_type, expires_in, expires_at}",
            partner_token,
        )
        .answer("401", "xE_101 not the brand's integration token, or a token of another partner or brand, or expired")
        .tweak(|op| op["parameters"] = partner.clone())
        .post(
            "/crm_api/v2/{chat_partner}/getPartnerProfile",
            "What a partner token is for: {status: 1, data: {partner, parent_business_id, business_id, expires_at, business}}",
            partner_profile,
        )
        .answer("401", "xE_101 not the brand's integration token, or a token of another partner or brand, or expired")
        .tweak(|op| op["parameters"] = partner)
}

/// `/crm_api/v2/dashboarData`.
async fn dashboard_data(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Open { tenant, body }: Open<StatsRequest>,
) -> Result<Json<Answer<Data<Dashboard>>>, IntegrationError> {
    open_rate_limit(&state, "dashboarData", peer)?;
    let signed_in = match header(&headers, "token") {
        None => false,
        Some(_) => match token(&state, TokenKind::Staff, &headers).await {
            // an outlet-limited token sees its outlet's summary only
            Ok(grant) if grant.parent == tenant => {
                access::admit_outlet(&grant, Scope::Outlet, body.business_id.as_deref())?;
                true
            }
            _ => return Err(IntegrationError::auth_failed()),
        },
    };
    let (start, end) = crate::platform::stats::period(&body).map_err(|e| IntegrationError::invalid(e.issues()))?;
    let query = ReadMetric { metric: Metric::Summary, business_id: body.business_id, start, end, limit: 10 };
    let summary = state.platform.gateway.ask(&tenant, query).await?;
    let summary: Summary =
        serde_json::from_value(summary).map_err(|e| IntegrationError::internal(format!("the summary: {e}")))?;
    if signed_in {
        return Ok(answer(Data { data: Dashboard::Full(Box::new(summary)) }));
    }
    Ok(answer(Data {
        data: Dashboard::Public(PublicSummary {
            parent_business_id: tenant,
            period: summary.period,
            has_orders: summary.totals.orders > 0,
            active_outlets: summary.active_outlets,
        }),
    }))
}

/// The dashboard summary: in full with a staff token of the brand, its outline without one.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Dashboard {
    /// `/stats/dashboard/summary`'s answer.
    Full(Box<Summary>),
    /// Without a token.
    Public(PublicSummary),
}

/// What the dashboard summary says without a token.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PublicSummary {
    /// The brand.
    parent_business_id: String,
    /// The period.
    period: engage_actors::capabilities::stats::shapes::PeriodShape,
    /// Whether it has orders in the period.
    has_orders: bool,
    /// Outlets with orders in the period.
    active_outlets: usize,
}

/// A chat partner's token.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PartnerToken {
    /// The partner.
    partner: String,
    /// The token (`Authorization: Bearer`).
    token: String,
    /// `Bearer`.
    token_type: &'static str,
    /// Seconds it is valid (3600).
    expires_in: i64,
    /// When it expires.
    expires_at: chrono::DateTime<Utc>,
}

/// What a partner token is for.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PartnerProfile {
    /// The partner.
    partner: String,
    /// The brand.
    parent_business_id: String,
    /// The outlet (`0`: the whole brand).
    business_id: String,
    /// When the token expires.
    expires_at: Option<chrono::DateTime<Utc>>,
    /// The outlet's configuration record, or null when it has none.
    business: Option<BusinessConfig>,
}

fn partner_name(name: &str) -> Result<(), IntegrationError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(IntegrationError::invalid_message("", "chat_partner is 1 to 32 of a-z, 0-9, _ and -"))
    }
}

/// `/crm_api/v2/{chat_partner}/generatePartnerToken`.
async fn partner_token(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    Path(partner): Path<String>,
    Open { tenant, body }: Open<PartnerTokenRequest>,
) -> Result<Json<Answer<PartnerToken>>, IntegrationError> {
    open_rate_limit(&state, "generatePartnerToken", peer)?;
    partner_name(&partner)?;
    match state.platform.tokens.verify(TokenKind::Integration, &body.api_key).await {
        Ok(Some(grant)) if grant.parent == tenant => {
            access::admit_outlet(&grant, Scope::Outlet, body.business_id.as_deref())?;
        }
        Ok(_) => return Err(IntegrationError::auth_failed()),
        Err(error) => return Err(IntegrationError::unavailable(error)),
    }
    let expires_at = Utc::now() + Duration::seconds(PARTNER_TOKEN_SECS);
    let claims = ChatClaims {
        scope: "chat_partner".to_owned(),
        tenant,
        business_id: body.business_id,
        subject: partner.clone(),
        order_id: None,
        exp: expires_at.timestamp(),
    };
    let token = state.platform.links.sign(&claims).map_err(IntegrationError::internal)?;
    Ok(answer(PartnerToken { partner, token, token_type: "Bearer", expires_in: PARTNER_TOKEN_SECS, expires_at }))
}

/// `/crm_api/v2/{chat_partner}/getPartnerProfile`.
async fn partner_profile(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    Path(partner): Path<String>,
    Open { tenant, body }: Open<PartnerProfileRequest>,
) -> Result<Json<Answer<Data<PartnerProfile>>>, IntegrationError> {
    open_rate_limit(&state, "getPartnerProfile", peer)?;
    partner_name(&partner)?;
    let claims = state
        .platform
        .links
        .verify_as::<ChatClaims>(&body.token)
        .ok()
        .filter(|c| c.scope == "chat_partner" && c.subject == partner && c.tenant == tenant)
        .ok_or_else(IntegrationError::auth_failed)?;
    let business_id = claims.business_id.clone().unwrap_or_else(|| "0".to_owned());
    let query = business::GetConfig { business_id: business_id.clone() };
    let record: BusinessConfig = state.platform.gateway.ask(&tenant, query).await?;
    // an outlet without a record of its own: `business` is null
    let record =
        (record != BusinessConfig { business_id: business_id.clone(), ..Default::default() }).then_some(record);
    let expires_at = chrono::DateTime::from_timestamp(claims.exp, 0);
    Ok(answer(Data {
        data: PartnerProfile { partner, parent_business_id: tenant, business_id, expires_at, business: record },
    }))
}
