//! The platform's error families (spec "Errors"):
//! - integration: `{status: 0, error_code, error_message}` (integration middleware, enqueue
//!   routes, `/integration/v1`); engage adds `errors: [{pointer, message}]` on validation failures;
//! - staff: `{message}` (staff-token middleware and staff routes).
//!
//! Integration codes: `xE_101` authentication failed (401), `xE_102` invalid request (400),
//! `xE_103` the body's parent business differs from the token's (403), `xE_404` not found (404),
//! `xE_500` internal (500), `xE_503` queue or owner unavailable, retry (503), `xE_413` body too
//! large (413), `xE_405` method not allowed (405), `xE_415` unsupported content type (415).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use engage_actors::domain::loyalty::RedeemError;
use engage_actors::QueryError;

use crate::error::Issue;

/// Most issues an `xE_102` message spells out (all of them are in `errors`).
const SUMMARISED_ISSUES: usize = 10;

/// Every issue as `pointer: message` (the message alone for the body itself), then how many more.
fn summary(issues: &[Issue]) -> String {
    let mut parts: Vec<String> = issues
        .iter()
        .take(SUMMARISED_ISSUES)
        .map(|i| if i.pointer.is_empty() { i.message.clone() } else { format!("{}: {}", i.pointer, i.message) })
        .collect();
    if issues.len() > SUMMARISED_ISSUES {
        parts.push(format!("and {} more (see errors)", issues.len() - SUMMARISED_ISSUES));
    }
    parts.join("; ")
}

/// Body of the integration family.
#[derive(Debug, Serialize, ToSchema)]
pub struct IntegrationErrorBody {
    /// Always 0.
    pub status: u8,
    /// `xE_…` code.
    pub error_code: &'static str,
    /// Human-readable message.
    pub error_message: String,
    /// Validation problems, on `xE_102`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<Issue>>,
    /// On a fraud prevention denial (`xE_108`, `xE_109`): what was done and why.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub fraud: Option<FraudDenial>,
}

/// The fields a fraud prevention denial adds to the integration body (spec "Fraud prevention"):
/// `{status_code: 403, fraud_detected: true, action_taken[, fraud_type, flag_id]}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FraudDenial {
    /// Always 403.
    pub status_code: u16,
    /// Always true.
    pub fraud_detected: bool,
    /// What engage did.
    pub action_taken: &'static str,
    /// The breached limit (velocity breaches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraud_type: Option<String>,
    /// The flag raised (velocity breaches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flag_id: Option<String>,
}

/// An integration-family error answer.
#[derive(Debug)]
pub struct IntegrationError {
    status: StatusCode,
    body: IntegrationErrorBody,
}

impl IntegrationError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            body: IntegrationErrorBody {
                status: 0,
                error_code: code,
                error_message: message.into(),
                errors: None,
                fraud: None,
            },
        }
    }

    /// 401 `xE_101` "Authentication Failed".
    pub fn auth_failed() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "xE_101", "Authentication Failed")
    }

    /// 400 `xE_102` with the validation problems.
    pub fn invalid(issues: Vec<Issue>) -> Self {
        let mut error = Self::new(StatusCode::BAD_REQUEST, "xE_102", format!("Invalid request: {}", summary(&issues)));
        error.body.errors = Some(issues);
        error
    }

    /// 400 `xE_102` with one message.
    pub fn invalid_message(pointer: &str, message: impl Into<String>) -> Self {
        Self::invalid(vec![Issue { pointer: pointer.to_owned(), message: message.into() }])
    }

    /// 403 `xE_103`.
    pub fn tenant_mismatch() -> Self {
        Self::new(StatusCode::FORBIDDEN, "xE_103", "parentBusinessId does not match the token's business")
    }

    /// 413 `xE_413` naming the limit.
    pub fn too_large(what: &str, limit: usize) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "xE_413", format!("{what} exceeds {limit} bytes"))
    }

    /// 403 `xE_103` with its reason (an outlet-limited token out of its outlet).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "xE_103", message)
    }

    /// 404 `xE_404`.
    pub fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, "xE_404", format!("{what} not found"))
    }

    /// 429 `xE_429`: over the per-client rate limit of the open routes.
    pub fn rate_limited() -> Self {
        Self::new(StatusCode::TOO_MANY_REQUESTS, "xE_429", "too many requests; slow down")
    }

    /// 503 `xE_503`: retry later.
    pub fn unavailable(cause: impl std::fmt::Display) -> Self {
        tracing::warn!(%cause, "unavailable");
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "xE_503", "temporarily unavailable; retry")
    }

    /// 500 `xE_500`: the cause is logged only.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(%cause, "internal error");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "xE_500", "internal error")
    }
}

/// A tenant's refusal in the integration family: not found 404 `xE_404`; invalid 400 `xE_102`;
/// redemption refusals (the data is valid; the balance or the rules refuse it) 409 `xE_105`
/// insufficient, `xE_106` below the minimum, `xE_107` over the
/// bill share; blocked 403 `xE_108` and velocity breach 403 `xE_109` (with [`FraudDenial`]); a
/// refused flag transition 409 `xE_110`; a wallet that cannot pay 409 `xE_111`; a refused
/// one-time password 403 `xE_112`; a marketing send to an unsubscribed customer 409 `xE_113`;
/// unavailable or failed 503 `xE_503`.
impl From<QueryError> for IntegrationError {
    fn from(error: QueryError) -> Self {
        let message = error.to_string().trim_start_matches("refused: ").to_owned();
        let (status, code) = match &error {
            QueryError::NotFound => return Self::not_found("customer"),
            QueryError::Missing(what) => return Self::not_found(what),
            QueryError::Duplicate(_) => (StatusCode::CONFLICT, "xE_409"),
            QueryError::Invalid(message) => return Self::invalid_message("", message.clone()),
            QueryError::Unavailable(_) | QueryError::Failed(_) => return Self::unavailable(error),
            QueryError::Redeem(RedeemError::NotPositive) => (StatusCode::BAD_REQUEST, "xE_102"),
            QueryError::Redeem(RedeemError::Insufficient { .. }) => (StatusCode::CONFLICT, "xE_105"),
            QueryError::Redeem(RedeemError::BelowMinimum { .. }) => (StatusCode::CONFLICT, "xE_106"),
            QueryError::Redeem(RedeemError::OverBillShare { .. }) => (StatusCode::CONFLICT, "xE_107"),
            QueryError::Blocked => {
                let mut denial = Self::new(StatusCode::FORBIDDEN, "xE_108", "the customer is blocked");
                denial.body.fraud = Some(FraudDenial {
                    status_code: 403,
                    fraud_detected: true,
                    action_taken: "denied: the customer is blocked",
                    fraud_type: None,
                    flag_id: None,
                });
                return denial;
            }
            QueryError::Fraud { fraud_type, flag_id } => {
                let mut denial = Self::new(StatusCode::FORBIDDEN, "xE_109", message);
                denial.body.fraud = Some(FraudDenial {
                    status_code: 403,
                    fraud_detected: true,
                    action_taken: "redemption denied and the customer flagged for review",
                    fraud_type: Some(fraud_type.clone()),
                    flag_id: Some(flag_id.clone()),
                });
                return denial;
            }
            QueryError::Transition(_) => (StatusCode::CONFLICT, "xE_110"),
            QueryError::Insufficient(_) => (StatusCode::CONFLICT, "xE_111"),
            QueryError::NoConsent(_) => (StatusCode::CONFLICT, "xE_113"),
            QueryError::Unsendable(_) => (StatusCode::CONFLICT, "xE_114"),
            QueryError::Otp(reason) => {
                return Self::new(StatusCode::FORBIDDEN, "xE_112", format!("one-time password {reason}"))
            }
        };
        Self::new(status, code, message)
    }
}

impl IntoResponse for IntegrationError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// A staff-family error answer: `{message}` (plus `errors` on validation failures).
#[derive(Debug)]
pub struct StaffError {
    status: StatusCode,
    message: String,
    errors: Option<Vec<Issue>>,
    hint: Option<&'static str>,
}

impl StaffError {
    /// An answer of `status` saying `message`, nothing more.
    fn of(status: StatusCode, message: impl Into<String>) -> Self {
        Self { status, message: message.into(), errors: None, hint: None }
    }

    /// 403 "invalid credentials".
    pub fn invalid_credentials() -> Self {
        Self::of(StatusCode::FORBIDDEN, "invalid credentials")
    }

    /// The same error with a `hint`: what would work instead.
    #[must_use]
    pub fn with_hint(mut self, hint: &'static str) -> Self {
        self.hint = Some(hint);
        self
    }

    /// 500 "authentication failed": the check itself failed (fail closed).
    pub fn authentication_failed(cause: impl std::fmt::Display) -> Self {
        tracing::error!(%cause, "authentication check failed");
        Self::of(StatusCode::INTERNAL_SERVER_ERROR, "authentication failed")
    }

    /// 403: the token's business may not act on this business.
    pub fn forbidden_business() -> Self {
        Self::of(StatusCode::FORBIDDEN, "not allowed for this business")
    }

    /// 413 `{message}` naming the limit.
    pub fn too_large(limit: usize) -> Self {
        Self::of(StatusCode::PAYLOAD_TOO_LARGE, format!("the body exceeds {limit} bytes"))
    }

    /// 403 `{message}` with its reason (an outlet-limited token out of its outlet).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::of(StatusCode::FORBIDDEN, message)
    }

    /// 400 with validation problems.
    pub fn invalid(issues: Vec<Issue>) -> Self {
        Self { errors: Some(issues), ..Self::of(StatusCode::BAD_REQUEST, "invalid request") }
    }

    /// 400 with one problem.
    pub fn invalid_message(pointer: &str, message: impl Into<String>) -> Self {
        Self::invalid(vec![Issue { pointer: pointer.to_owned(), message: message.into() }])
    }

    /// The problems it names (its message when it names none), for an answer in another family.
    pub fn issues(&self) -> Vec<Issue> {
        self.errors.clone().unwrap_or_else(|| vec![Issue { pointer: String::new(), message: self.message.clone() }])
    }

    /// 400 `{message}`: the request was understood and refused (a redemption over the limits, a
    /// wallet that cannot pay, a denied customer).
    pub fn refused(message: impl Into<String>) -> Self {
        Self::of(StatusCode::BAD_REQUEST, message)
    }

    /// 409 `{message}`: the transition is refused in the current state.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::of(StatusCode::CONFLICT, message)
    }

    /// 410 `{message}`: the thing (a link) was valid once and has expired.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::of(StatusCode::GONE, message)
    }

    /// 404.
    pub fn not_found(what: &str) -> Self {
        Self::of(StatusCode::NOT_FOUND, format!("{what} not found"))
    }

    /// 500 "internal error": a fault of this build (logged with its cause), not of the request.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(%cause, "internal error");
        Self::of(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
    }

    /// 503.
    pub fn unavailable(cause: impl std::fmt::Display) -> Self {
        tracing::warn!(%cause, "unavailable");
        Self::of(StatusCode::SERVICE_UNAVAILABLE, "temporarily unavailable; retry")
    }
}

/// A tenant's refusal in the staff family: not found 404; invalid 400 with `errors`; a denied
/// customer 400 `{message}`; a refused redemption, a wallet that cannot pay or a refused flag
/// transition 409; unavailable or failed 503.
impl StaffError {
    /// A capability's refusal naming what was asked for: not found 404 `{what} not found`; an
    /// invalid request 400 at the pointer its message starts with (`/field: …`); the rest as
    /// [`From<QueryError>`].
    pub fn from_query(error: QueryError, what: &str) -> Self {
        match error {
            QueryError::NotFound => Self::not_found(what),
            QueryError::Invalid(message) => match message.split_once(": ") {
                Some((pointer, text)) if pointer.starts_with('/') => Self::invalid_message(pointer, text),
                _ => Self::invalid_message("", message),
            },
            other => other.into(),
        }
    }
}

impl From<QueryError> for StaffError {
    fn from(error: QueryError) -> Self {
        match error {
            QueryError::NotFound => Self::not_found("customer"),
            QueryError::Missing(what) => Self::not_found(&what),
            QueryError::Duplicate(what) => Self::conflict(what),
            QueryError::Invalid(message) => Self::invalid_message("", message),
            QueryError::Transition(refused) => Self::conflict(refused.to_string()),
            QueryError::Redeem(RedeemError::NotPositive) => Self::refused("points must be positive"),
            // the request is valid; the balance or the rules refuse it now
            error @ (QueryError::Redeem(_)
            | QueryError::Insufficient(_)
            | QueryError::NoConsent(_)
            | QueryError::Unsendable(_)) => {
                Self::conflict(error.to_string().trim_start_matches("refused: ").to_owned())
            }
            error @ (QueryError::Blocked | QueryError::Fraud { .. } | QueryError::Otp(_)) => {
                Self::refused(error.to_string().trim_start_matches("refused: "))
            }
            error @ (QueryError::Unavailable(_) | QueryError::Failed(_)) => Self::unavailable(error),
        }
    }
}

impl IntoResponse for StaffError {
    fn into_response(self) -> Response {
        let mut body = json!({"message": self.message});
        if let Some(errors) = self.errors {
            body["errors"] = json!(errors);
        }
        if let Some(hint) = self.hint {
            body["hint"] = json!(hint);
        }
        (self.status, Json(body)).into_response()
    }
}

#[cfg(test)]
mod summary_tests {
    use super::*;

    #[test]
    fn every_issue_is_named_and_the_body_itself_has_no_empty_pointer() {
        let issue = |pointer: &str, message: &str| Issue { pointer: pointer.into(), message: message.into() };
        let four = vec![issue("/a", "one"), issue("/b", "two"), issue("/c", "three"), issue("/d", "four")];
        assert_eq!(summary(&four), "/a: one; /b: two; /c: three; /d: four");
        assert_eq!(summary(&[issue("", "the body is not JSON")]), "the body is not JSON");
        let many: Vec<Issue> = (0..12).map(|i| issue(&format!("/{i}"), "bad")).collect();
        assert!(summary(&many).ends_with("; and 2 more (see errors)"));
    }
}
