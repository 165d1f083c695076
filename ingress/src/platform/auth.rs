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

use super::errors::{IntegrationError, StaffError};
use super::tokens::{TokenGrant, TokenKind};
use crate::AppState;

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
    /// The parent business an integration token sets.
    pub fn integration_parent(&self) -> Option<&str> {
        match self {
            Caller::Token(grant) if grant.kind == TokenKind::Integration => Some(&grant.parent),
            _ => None,
        }
    }
}

fn header(headers: &HeaderMap, name: impl axum::http::header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty())
}

fn count_failure(family: &'static str) {
    metrics::counter!("engage_platform_auth_failures_total", "family" => family).increment(1);
}

/// Checks `auth` against the request headers; the error is the family's answer.
pub async fn check(state: &AppState, auth: Auth, headers: &HeaderMap) -> Result<Caller, Response> {
    let tokens = &state.platform.tokens;
    match auth {
        Auth::None => Ok(Caller::Anonymous),
        Auth::Staff | Auth::Ingestion | Auth::App => {
            let kind = match auth {
                Auth::Staff => TokenKind::Staff,
                Auth::Ingestion => TokenKind::Ingestion,
                _ => TokenKind::App,
            };
            // authMiddleware's app branch is selected by `source: mobile`
            if auth == Auth::App && header(headers, "source") != Some("mobile") {
                count_failure("app");
                return Err(StaffError::invalid_credentials().into_response());
            }
            let Some(token) = header(headers, "token") else {
                count_failure(kind.as_str());
                return Err(StaffError::invalid_credentials().into_response());
            };
            match tokens.verify(kind, token).await {
                Ok(Some(grant)) => Ok(Caller::Token(grant)),
                Ok(None) => {
                    count_failure(kind.as_str());
                    Err(StaffError::invalid_credentials().into_response())
                }
                Err(error) => Err(StaffError::authentication_failed(error).into_response()),
            }
        }
        Auth::Integration => {
            let Some(token) = header(headers, AUTHORIZATION) else {
                count_failure("integration");
                return Err(IntegrationError::auth_failed().into_response());
            };
            match tokens.verify(TokenKind::Integration, token).await {
                Ok(Some(grant)) => Ok(Caller::Token(grant)),
                Ok(None) => {
                    count_failure("integration");
                    Err(IntegrationError::auth_failed().into_response())
                }
                Err(error) => Err(IntegrationError::internal(error).into_response()),
            }
        }
        Auth::InternalJwt => match internal_jwt(state, headers).await {
            Some(subject) => Ok(Caller::Internal(subject)),
            None => {
                count_failure("internal_jwt");
                let mut response =
                    (StatusCode::UNAUTHORIZED, Json(json!({"message": "invalid token"}))).into_response();
                response.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                Err(response)
            }
        },
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
