//! The staff-route preamble shared by the staff-token routes: the token, the JSON body against its
//! schema, and the brand (`parentBusinessId` or `parent_business_id`, a string or an integer),
//! which must be the token's. Refusals are staff-family answers.

use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::auth::{check, Auth, Caller};
use super::body::PlatformBody;
use super::errors::{IntegrationError, StaffError};
use crate::AppState;

fn id_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Staff auth, JSON body against `schema`, and the brand: `(brand, token id, body)`.
pub(super) async fn staff_request(
    state: &AppState,
    headers: &HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    schema: &str,
) -> Result<(String, String, Value), Response> {
    let caller = check(state, Auth::Staff, headers).await?;
    let Ok(PlatformBody(body)) = body else {
        return Err(StaffError::invalid_message("", "the body is not JSON").into_response());
    };
    let issues = state.platform.schemas.issues(schema, &body);
    if !issues.is_empty() {
        return Err(StaffError::invalid(issues).into_response());
    }
    let brand = id_text(body.get("parentBusinessId")).or_else(|| id_text(body.get("parent_business_id")));
    let (brand, who) = authorize_brand(&caller, brand)?;
    Ok((brand, who, body))
}

pub(super) fn authorize_brand(caller: &Caller, brand: Option<String>) -> Result<(String, String), Response> {
    let Some(brand) = brand else {
        return Err(StaffError::invalid_message(
            "/parent_business_id",
            "parentBusinessId or parent_business_id is required",
        )
        .into_response());
    };
    match caller {
        Caller::Token(grant) if grant.parent == brand => Ok((brand, grant.id.clone())),
        _ => Err(StaffError::forbidden_business().into_response()),
    }
}
