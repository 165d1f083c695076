//! The typed HTTP edge of the platform routes: one extractor per auth family, each reading the
//! body (JSON or url-encoded), checking it against the JSON Schema named after its type
//! ([`PlatformRequest::SCHEMA`], `schemas/*.json`), decoding it into that type and finding the
//! brand, and refusing in its own family's shape. Handlers then take the extractor, ask the
//! tenant, and return `Result<Json<…>, StaffError | IntegrationError>` with `?`:
//!
//! ```ignore
//! async fn redeem_points(
//!     State(state): State<AppState>,
//!     Integration { brand, body }: Integration<RedeemPointsRequest>,
//! ) -> Result<Json<Answer<Redeemed>>, IntegrationError> {
//!     let redeemed = state.platform.gateway.ask(&brand, redeem_query(body, None)).await?;
//!     Ok(answer(redeemed))
//! }
//! ```
//!
//! | extractor | auth | brand | refusals |
//! |---|---|---|---|
//! | [`Staff`] | staff token (`token:`) | the body's `parent_business_id` (or `parentBusinessId`), which must be the token's | staff family: 403 `invalid credentials` / not allowed for this business, 400 `{message, errors}`, 500 when the check fails |
//! | [`Integration`] | integration token (raw `Authorization:`) | the token's; a body naming another is 403 `xE_103` | integration family: 401 `xE_101`, 400 `xE_102` |
//! | [`Open`] | none (the `/pos_e/v1` routes, `/crm_api/get/customer/details`, …); an integration token once closed | the body's `parent_business_id`, required (the token's, once closed) | integration family: 400 `xE_102`, 401/403 once closed, 429 over the per-client limit |
//! | [`Ingested`] | ingestion token (`token:`) | the token's; a body naming another is 403 | staff family |
//! | [`AppCustomer`] | app token (`token:` + `source: mobile`) | the token's, and the customer is the token's; a body naming another brand is 403 | staff family |
//!
//! Every token's request is held to its brand and outlet by [`crate::platform::edge::access`] before its body is
//! validated.
//!
//! The schemas and the types cannot drift apart: a test in [`crate::platform::edge::requests`] checks every
//! type's fields, required fields and JSON types against its schema.

pub mod access;
pub mod auth;
pub mod body;
pub mod coerce;
pub mod contract;
pub mod errors;
pub mod examples;
pub mod form_view;
pub mod grant_cache;
pub mod requests;
pub mod routes;
pub mod schemas;
pub mod scopes;
pub mod tokens;
pub mod upload;

use axum::extract::{FromRequest, Request};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Issue;
use crate::platform::edge::access::Denied;
use crate::platform::edge::auth::token;
use crate::platform::edge::contract::PlatformRequest;
use crate::platform::edge::errors::{IntegrationError, StaffError};
use crate::platform::edge::tokens::{TokenGrant, TokenKind};
use crate::state::AppState;

/// The body of `request`, checked against `T`'s schema and decoded; or what is wrong with it.
async fn decode<T: PlatformRequest>(request: Request, state: &AppState) -> Result<T, body::BodyError> {
    validated(body::read(request).await?, state)
}

/// The body of a token's request: the token's outlet bound, and refused (403) when it names
/// another brand, or (outlet-limited tokens) another outlet or a route of the wrong scope, before
/// anything else is looked at ([`access::admit_raw`]); else checked against `T`'s schema and
/// decoded.
async fn decode_for<T: PlatformRequest, E>(request: Request, state: &AppState, grant: &TokenGrant) -> Result<T, E>
where
    E: From<body::BodyError> + From<Denied>,
{
    let mut value = body::read(request).await?;
    access::bind_outlet(grant, T::OUTLET_FIELDS.first().copied(), &mut value);
    access::admit_raw(grant, T::SCOPE, &value)?;
    Ok(validated(value, state)?)
}

/// `value` checked against `T`'s schema and decoded.
fn validated<T: PlatformRequest>(mut value: Value, state: &AppState) -> Result<T, body::BodyError> {
    state.platform.schemas.coerce(T::SCHEMA, &mut value);
    let issues = state.platform.schemas.issues(T::SCHEMA, &value);
    if !issues.is_empty() {
        return Err(body::BodyError::Invalid(issues));
    }
    // the schema accepted it, so only a type that drifted from its schema can refuse it here
    serde_json::from_value(value)
        .map_err(|e| body::BodyError::Invalid(vec![Issue { pointer: String::new(), message: e.to_string() }]))
}

/// A staff-token request for the brand its body names.
pub struct Staff<T> {
    /// The brand (the token's, and the body's).
    pub tenant: String,
    /// The token's grant (its id names who acted; its outlet limits some routes).
    pub grant: TokenGrant,
    /// The decoded body.
    pub body: T,
}

impl<T: PlatformRequest> FromRequest<AppState> for Staff<T> {
    type Rejection = StaffError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let grant = token(state, TokenKind::Staff, request.headers()).await?;
        let body: T = decode_for::<T, StaffError>(request, state, &grant).await?;
        let tenant = staff_tenant(&grant, body.tenant().map(str::to_owned))?;
        Ok(Self { tenant, grant, body })
    }
}

/// The brand a staff token acts for, as a request names it (body, multipart field or query
/// parameter): required, and it must be the token's.
pub fn staff_tenant(grant: &TokenGrant, tenant: Option<String>) -> Result<String, StaffError> {
    match tenant.filter(|b| !b.is_empty()) {
        None => Err(StaffError::invalid_message(
            "/parent_business_id",
            "parentBusinessId or parent_business_id is required",
        )),
        Some(tenant) if tenant == grant.parent => Ok(tenant),
        Some(_) => Err(StaffError::forbidden_business()),
    }
}

/// A list's optional `start`..`end` filter, in either order (the days between the two).
pub fn ordered(start: &Option<String>, end: &Option<String>) -> (Option<String>, Option<String>) {
    match (start, end) {
        (Some(first), Some(last)) if first > last => (Some(last.clone()), Some(first.clone())),
        _ => (start.clone(), end.clone()),
    }
}

/// Most days a period may cover.
pub const MAX_DAYS: i64 = 731;

/// The one period rule of every read and export that takes a period (IST days, `YYYY-MM-DD`):
/// `start` and `end` (in either order: the days between the two); `start` alone, the 7 days from
/// it; `end` alone, the 7 days up to it; else `date` (that one day); else the 7 days up to today.
/// A period of more than [`MAX_DAYS`] days keeps its last [`MAX_DAYS`] (the answers that echo
/// their `period` show which). 400 naming the field only for a day that is not a real date.
pub fn period_of(
    start: &Option<String>,
    end: &Option<String>,
    date: &Option<String>,
) -> Result<(String, String), StaffError> {
    use chrono::{Days, NaiveDate};
    let day = |text: &str, pointer: &str| {
        NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .map_err(|_| StaffError::invalid_message(pointer, format!("{text:?} is not an IST day (YYYY-MM-DD)")))
    };
    let week = Days::new(6);
    let (first, last) = match (start, end, date) {
        (Some(start), Some(end), _) => {
            let (a, b) = (day(start, "/start")?, day(end, "/end")?);
            (a.min(b), a.max(b))
        }
        (Some(start), None, _) => {
            let first = day(start, "/start")?;
            (first, first.checked_add_days(week).unwrap_or(first))
        }
        (None, Some(end), _) => {
            let last = day(end, "/end")?;
            (last.checked_sub_days(week).unwrap_or(last), last)
        }
        (None, None, Some(date)) => {
            let only = day(date, "/date")?;
            (only, only)
        }
        (None, None, None) => {
            let today = day(&engage_actors::domain::time::ist_day(chrono::Utc::now()), "/end")?;
            (today.checked_sub_days(week).unwrap_or(today), today)
        }
    };
    let earliest = last.checked_sub_days(Days::new(MAX_DAYS as u64 - 1)).unwrap_or(first);
    let first = first.max(earliest);
    let text = |d: NaiveDate| d.format("%Y-%m-%d").to_string();
    Ok((text(first), text(last)))
}

/// A chat template category as a body names it (`MARKETING`; anything else is utility).
pub fn template_type(named: Option<&str>) -> engage_actors::domain::wallet::TemplateType {
    match named {
        Some("MARKETING") => engage_actors::domain::wallet::TemplateType::Marketing,
        _ => engage_actors::domain::wallet::TemplateType::Utility,
    }
}

/// A decimal field of a body, or `current` when the body leaves it out.
pub fn decimal(given: &Option<serde_json::Number>) -> Option<rust_decimal::Decimal> {
    given.as_ref().and_then(|n| engage_actors::domain::order::decimal(&Value::Number(n.clone())))
}

/// An ingestion-token request: the brand is the token's (staff error family).
pub struct Ingested<T> {
    /// The token's brand.
    pub tenant: String,
    /// The decoded body.
    pub body: T,
}

impl<T: PlatformRequest> FromRequest<AppState> for Ingested<T> {
    type Rejection = StaffError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let grant = token(state, TokenKind::Ingestion, request.headers()).await?;
        let body: T = decode_for::<T, StaffError>(request, state, &grant).await?;
        Ok(Self { tenant: grant.parent, body })
    }
}

/// The body of `request`, checked against `T`'s schema and decoded, for handlers that check
/// their caller themselves: held to `grant`'s brand and outlet when a stored token is the caller.
pub async fn checked_body<T: PlatformRequest>(
    request: Request,
    state: &AppState,
    grant: Option<&TokenGrant>,
) -> Result<T, StaffError> {
    match grant {
        Some(grant) => decode_for::<T, StaffError>(request, state, grant).await,
        None => decode(request, state).await.map_err(StaffError::from),
    }
}

/// An integration-token request: the brand is the token's.
pub struct Integration<T> {
    /// The token's brand.
    pub tenant: String,
    /// The decoded body.
    pub body: T,
}

impl<T: PlatformRequest> FromRequest<AppState> for Integration<T> {
    type Rejection = IntegrationError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let grant = token(state, TokenKind::Integration, request.headers()).await?;
        let body: T = decode_for::<T, IntegrationError>(request, state, &grant).await?;
        Ok(Self { tenant: grant.parent, body })
    }
}

/// A request of one of the spec's open routes: the brand is the body's `parent_business_id`.
/// Counted against the per-client limit of the open routes; once the operator or the brand
/// closed the open routes it needs an integration token of the brand ([`access::open_gate`]).
pub struct Open<T> {
    /// The body's brand (the token's, on a closed route).
    pub tenant: String,
    /// The decoded body.
    pub body: T,
}

impl<T: PlatformRequest> FromRequest<AppState> for Open<T> {
    type Rejection = IntegrationError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let peer = request.extensions().get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0);
        access::open_route_limit(state, request.uri().path(), peer)?;
        let headers = request.headers().clone();
        let mut value = body::read(request).await?;
        let outlet_field = T::OUTLET_FIELDS.first().copied();
        let grant = access::open_gate(state, &headers, &mut value, T::SCOPE, outlet_field).await?;
        let body: T = validated(value, state)?;
        let tenant = match grant {
            Some(grant) => grant.parent,
            None => body.tenant().filter(|b| !b.is_empty()).map(str::to_owned).ok_or_else(|| {
                IntegrationError::invalid_message(
                    "/parent_business_id",
                    "\"parent_business_id\" is a required property",
                )
            })?,
        };
        Ok(Self { tenant, body })
    }
}

/// The optional per-client rate limit of the open routes (`ENGAGE_RATE_LIMIT_PER_SECOND`, off by
/// default), per route and client address: 429 `xE_429` over it.
pub fn open_rate_limit(state: &AppState, route: &str, peer: std::net::SocketAddr) -> Result<(), IntegrationError> {
    match &state.limiter {
        Some(limiter) if limiter.check(&format!("{route}/{}", peer.ip())).is_err() => {
            Err(IntegrationError::rate_limited())
        }
        _ => Ok(()),
    }
}

/// An app-token caller: a customer of a brand (the app routes take no body).
pub struct AppCustomer {
    /// The token's brand.
    pub tenant: String,
    /// The token's customer (its phone number).
    pub phone: String,
}

impl FromRequest<AppState> for AppCustomer {
    type Rejection = StaffError;

    /// The token's customer; a body is not needed, but one that names another brand is refused
    /// (403) like any token's.
    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let grant = token(state, TokenKind::App, request.headers()).await?;
        if let Ok(value) = body::read(request).await {
            access::admit_tenant(&grant, &value)?;
        }
        Ok(Self { tenant: grant.parent, phone: grant.business.unwrap_or_default() })
    }
}

/// A staff-family answer: `{status: true, …fields of T}`; its schema in `/openapi.json` is
/// generated from `T` ([`crate::platform::edge::routes::Answers`]).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct StaffAnswer<T> {
    /// Always `true` on a 200.
    #[schemars(extend("const" = true))]
    status: bool,
    #[serde(flatten)]
    body: T,
}

/// `{status: true, …body}`.
pub fn staff_answer<T: Serialize>(body: T) -> Json<StaffAnswer<T>> {
    Json(StaffAnswer { status: true, body })
}

/// An integration-family answer: `{status: 1, …fields of T}`; its schema in `/openapi.json` is
/// generated from `T` ([`crate::platform::edge::routes::Answers`]).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Answer<T> {
    /// Always `1` on a 200.
    #[schemars(extend("const" = 1))]
    status: u8,
    #[serde(flatten)]
    body: T,
}

/// `{status: 1}` and nothing else: the spec's acknowledgement of the enqueue routes (the event is
/// on the bus, durably) and of the chat publish routes. It says all there is to say: what the event
/// does happens later, and is read through the brand's other routes.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-engage-answer" = "acknowledgement"))]
pub struct Ack {
    /// Always `1`: accepted.
    #[schemars(extend("const" = 1))]
    pub status: u8,
}

/// `{data}`: an answer that is one value under `data`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Data<T> {
    /// The value.
    pub data: T,
}

/// `{message, data}`: what a change saved, and a line that says so.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Saved<T> {
    /// What was done.
    pub message: String,
    /// What was saved.
    pub data: T,
}

/// `{status: 1, …body}`.
pub fn answer<T: Serialize>(body: T) -> Json<Answer<T>> {
    Json(Answer { status: 1, body })
}

/// A brand id given as a string or an integer (`parentBusinessId: 42`), as a string.
pub fn id_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<Value>::deserialize(deserializer)?.as_ref().and_then(access::id_of))
}
