//! Authentication of the log routes, and their rate limit.
//!
//! [`LogCaller`] is the extractor every log route takes: when `ENGAGE_JWKS_URL` is set it requires
//! `Authorization: Bearer <RS256 JWT>` ([`jwks`]); then it applies the per-caller rate limit
//! ([`crate::rate_limit`]), keyed by the token's subject, or by the client address when auth is off.

pub mod jwks;

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use crate::error::ApiError;
use crate::state::AppState;

/// Who is calling a log route.
#[derive(Debug, Clone)]
pub struct LogCaller {
    /// `sub:<subject>` of the verified token, or `addr:<ip>` when auth is off.
    pub subject: String,
}

impl FromRequestParts<AppState> for LogCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let subject = match &state.jwt {
            Some(verifier) => {
                let token = bearer_token(parts).ok_or_else(|| {
                    metrics::counter!("engage_auth_failures_total", "reason" => "missing").increment(1);
                    ApiError::unauthorized(&jwks::AuthError::Missing.to_string())
                })?;
                let claims = verifier.verify(token).await.map_err(|error| {
                    metrics::counter!("engage_auth_failures_total", "reason" => reason_label(&error)).increment(1);
                    tracing::info!(%error, "bearer token refused");
                    ApiError::unauthorized(&error.to_string())
                })?;
                format!("sub:{}", claims.sub.unwrap_or_default())
            }
            None => {
                let addr = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip().to_string());
                format!("addr:{}", addr.unwrap_or_else(|| "unknown".to_owned()))
            }
        };
        if let Some(limiter) = &state.limiter {
            limiter.check(&subject)?;
        }
        Ok(Self { subject })
    }
}

fn bearer_token(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(token.trim()).filter(|t| !t.is_empty())
}

fn reason_label(error: &jwks::AuthError) -> &'static str {
    match error {
        jwks::AuthError::Missing => "missing",
        jwks::AuthError::Malformed => "malformed",
        jwks::AuthError::Algorithm => "algorithm",
        jwks::AuthError::UnknownKey => "unknown_key",
        jwks::AuthError::Invalid(_) => "invalid",
    }
}
