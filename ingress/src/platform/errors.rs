//! The platform's error families (spec "Errors"):
//! - integration: `{status: 0, error_code, error_message}` (integration middleware, enqueue
//!   routes, `/integration/v1`); engage adds `errors: [{pointer, message}]` on validation failures;
//! - staff: `{message}` (staff-token middleware and staff routes).
//!
//! Integration codes: `xE_101` authentication failed (401), `xE_102` invalid request (400),
//! `xE_103` the body's parent business differs from the token's (403), `xE_404` not found (404),
//! `xE_500` internal (500), `xE_503` queue or owner unavailable, retry (503).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::error::Issue;

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
            body: IntegrationErrorBody { status: 0, error_code: code, error_message: message.into(), errors: None },
        }
    }

    /// 401 `xE_101` "Authentication Failed".
    pub fn auth_failed() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "xE_101", "Authentication Failed")
    }

    /// 400 `xE_102` with the validation problems.
    pub fn invalid(issues: Vec<Issue>) -> Self {
        let summary =
            issues.iter().take(3).map(|i| format!("{}: {}", i.pointer, i.message)).collect::<Vec<_>>().join("; ");
        let mut error = Self::new(StatusCode::BAD_REQUEST, "xE_102", format!("Invalid request: {summary}"));
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

    /// 404 `xE_404`.
    pub fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, "xE_404", format!("{what} not found"))
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
}

impl StaffError {
    /// 403 "invalid credentials".
    pub fn invalid_credentials() -> Self {
        Self { status: StatusCode::FORBIDDEN, message: "invalid credentials".to_owned(), errors: None }
    }

    /// 500 "authentication failed": the check itself failed (fail closed).
    pub fn authentication_failed(cause: impl std::fmt::Display) -> Self {
        tracing::error!(%cause, "authentication check failed");
        Self { status: StatusCode::INTERNAL_SERVER_ERROR, message: "authentication failed".to_owned(), errors: None }
    }

    /// 403: the token's business may not act on this business.
    pub fn forbidden_business() -> Self {
        Self { status: StatusCode::FORBIDDEN, message: "not allowed for this business".to_owned(), errors: None }
    }

    /// 400 with validation problems.
    pub fn invalid(issues: Vec<Issue>) -> Self {
        Self { status: StatusCode::BAD_REQUEST, message: "invalid request".to_owned(), errors: Some(issues) }
    }

    /// 400 with one problem.
    pub fn invalid_message(pointer: &str, message: impl Into<String>) -> Self {
        Self::invalid(vec![Issue { pointer: pointer.to_owned(), message: message.into() }])
    }

    /// 404.
    pub fn not_found(what: &str) -> Self {
        Self { status: StatusCode::NOT_FOUND, message: format!("{what} not found"), errors: None }
    }

    /// 503.
    pub fn unavailable(cause: impl std::fmt::Display) -> Self {
        tracing::warn!(%cause, "unavailable");
        Self {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: "temporarily unavailable; retry".to_owned(),
            errors: None,
        }
    }
}

impl IntoResponse for StaffError {
    fn into_response(self) -> Response {
        let mut body = json!({"message": self.message});
        if let Some(errors) = self.errors {
            body["errors"] = json!(errors);
        }
        (self.status, Json(body)).into_response()
    }
}
