//! The platform's auth families (spec "Authentication"), checked per route from the headers:
//!
//! | family | header | failure |
//! |---|---|---|
//! | staff token | `token: <token>` | 403 `{message: "invalid credentials"}`; 500 `{message: "authentication failed"}` when the check itself fails (fail closed) |
//! | ingestion token | `token: <token>` (a token of kind `ingestion`) | same as staff (the ingestion middleware is a staff-family middleware) |
//! | integration token | `Authorization: <token>` (raw, no `Bearer`); sets the parent business | 401 `{status: 0, error_code: "xE_101", error_message: "Authentication Failed"}` (500 `xE_500` when the check fails) |
//! | app token | `token: <token>` with `source: mobile` (a token of kind `app`, whose `business` is the customer's number) | same as staff |
//! | internal JWT | `Authorization: Bearer <JWT>`: HS256 with `ENGAGE_INTERNAL_JWT_SECRET`, or RS256 by the JWKS of `ENGAGE_JWKS_URL` | 401 `{message: "invalid token"}` with `WWW-Authenticate: Bearer` |

use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use serde_json::json;

use crate::platform::edge::errors::{IntegrationError, StaffError};
use crate::platform::edge::tokens::{TokenGrant, TokenKind};
use crate::state::AppState;

/// The auth a route requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    /// Open.
    None,
    /// Staff token (`token:`).
    Staff,
    /// Ingestion token (`token:`).
    Ingestion,
    /// Integration token (raw `Authorization:`).
    Integration,
    /// Internal JWT (`Authorization: Bearer`).
    InternalJwt,
    /// App token (`token:` with `source: mobile`): a customer of the brand.
    App,
}

impl Auth {
    /// The OpenAPI security scheme name, when any.
    pub fn scheme(self) -> Option<&'static str> {
        match self {
            Auth::None => None,
            Auth::Staff => Some("staffToken"),
            Auth::Ingestion => Some("ingestionToken"),
            Auth::Integration => Some("integrationToken"),
            Auth::InternalJwt => Some("internalJwt"),
            Auth::App => Some("appToken"),
        }
    }
}

/// Who passed the check.
#[derive(Clone, Debug)]
pub enum Caller {
    /// An open route.
    Anonymous,
    /// A stored token.
    Token(TokenGrant),
    /// An internal JWT's subject.
    Internal(String),
}

impl Caller {
    /// The brand a stored token binds (any kind of token): the request acts for it alone.
    pub fn bound_tenant(&self) -> Option<&str> {
        match self {
            Caller::Token(grant) => Some(&grant.parent),
            _ => None,
        }
    }
}

pub(crate) fn header(headers: &HeaderMap, name: impl axum::http::header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty())
}

fn count_failure(family: &'static str) {
    metrics::counter!("engage_platform_auth_failures_total", "family" => family).increment(1);
}

/// Why a stored-token check did not pass.
#[derive(Debug)]
pub enum TokenRefusal {
    /// No token, a wrong one, or (app tokens) no `source: mobile`.
    Invalid,
    /// No `token` header, but an `Authorization` one: a staff, ingestion or app token sent where
    /// an integration token goes.
    InAuthorization,
    /// The check itself failed (the token store); callers fail closed.
    CheckFailed(String),
}

impl From<TokenRefusal> for StaffError {
    fn from(refusal: TokenRefusal) -> Self {
        match refusal {
            TokenRefusal::Invalid => StaffError::invalid_credentials(),
            TokenRefusal::InAuthorization => StaffError::invalid_credentials().with_hint(
                "this route takes its token in the `token` header, not `Authorization` (that one is for integration \
                 tokens); a staff token is made with `engage tokens create --kind staff --parent <brand>`",
            ),
            TokenRefusal::CheckFailed(cause) => StaffError::authentication_failed(cause),
        }
    }
}

impl From<TokenRefusal> for IntegrationError {
    fn from(refusal: TokenRefusal) -> Self {
        match refusal {
            TokenRefusal::Invalid | TokenRefusal::InAuthorization => IntegrationError::auth_failed(),
            TokenRefusal::CheckFailed(cause) => IntegrationError::internal(cause),
        }
    }
}

/// The grant of the stored token of `kind` the headers carry: `token:` for staff, ingestion and
/// app tokens (app tokens also need `source: mobile`), raw `Authorization:` for integration ones.
pub async fn token(state: &AppState, kind: TokenKind, headers: &HeaderMap) -> Result<TokenGrant, TokenRefusal> {
    // authMiddleware's app branch is selected by `source: mobile`
    if kind == TokenKind::App && header(headers, "source") != Some("mobile") {
        count_failure("app");
        return Err(TokenRefusal::Invalid);
    }
    let presented = match kind {
        TokenKind::Integration => header(headers, AUTHORIZATION),
        _ => header(headers, "token"),
    };
    let Some(presented) = presented else {
        count_failure(kind.as_str());
        if kind != TokenKind::Integration && header(headers, AUTHORIZATION).is_some() {
            return Err(TokenRefusal::InAuthorization);
        }
        return Err(TokenRefusal::Invalid);
    };
    match state.platform.tokens.verify(kind, presented).await {
        Ok(Some(grant)) => Ok(grant),
        Ok(None) => {
            count_failure(kind.as_str());
            Err(TokenRefusal::Invalid)
        }
        Err(error) => Err(TokenRefusal::CheckFailed(error.to_string())),
    }
}

/// Checks `auth` against the request headers; the error is the family's answer.
pub async fn check(state: &AppState, auth: Auth, headers: &HeaderMap) -> Result<Caller, Response> {
    let kind = match auth {
        Auth::None => return Ok(Caller::Anonymous),
        Auth::InternalJwt => return internal_caller(state, headers).await,
        Auth::Staff => TokenKind::Staff,
        Auth::Ingestion => TokenKind::Ingestion,
        Auth::App => TokenKind::App,
        Auth::Integration => TokenKind::Integration,
    };
    match token(state, kind, headers).await {
        Ok(grant) => Ok(Caller::Token(grant)),
        Err(refusal) if auth == Auth::Integration => Err(IntegrationError::from(refusal).into_response()),
        Err(refusal) => Err(StaffError::from(refusal).into_response()),
    }
}

async fn internal_caller(state: &AppState, headers: &HeaderMap) -> Result<Caller, Response> {
    match internal_jwt(state, headers).await {
        Some(subject) => Ok(Caller::Internal(subject)),
        None => {
            count_failure("internal_jwt");
            let mut response = (StatusCode::UNAUTHORIZED, Json(json!({"message": "invalid token"}))).into_response();
            response.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            Err(response)
        }
    }
}

#[derive(serde::Deserialize)]
struct InternalClaims {
    sub: Option<String>,
}

async fn internal_jwt(state: &AppState, headers: &HeaderMap) -> Option<String> {
    let value = header(headers, AUTHORIZATION)?;
    let (scheme, token) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = token.trim();
    match decode_header(token).ok()?.alg {
        Algorithm::HS256 => {
            let secret = state.settings.internal_jwt_secret.as_ref()?;
            let mut validation = Validation::new(Algorithm::HS256);
            validation.leeway = 60;
            validation.validate_aud = false;
            let data =
                decode::<InternalClaims>(token, &DecodingKey::from_secret(secret.expose().as_bytes()), &validation)
                    .ok()?;
            Some(data.claims.sub.unwrap_or_default())
        }
        Algorithm::RS256 => {
            let verifier = state.jwt.as_ref()?;
            verifier.verify(token).await.ok().map(|c| c.sub.unwrap_or_default())
        }
        _ => None,
    }
}

/// Whether `presented` is `expected`, compared in constant time (for secrets).
pub fn same_secret(presented: &[u8], expected: &[u8]) -> bool {
    presented.len() == expected.len() && presented.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}
