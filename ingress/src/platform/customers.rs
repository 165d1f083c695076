//! `/crm_api/get/customer/details` (open, synchronous read) and
//! `/crm_api/update/customer/details` (staff token), answered by the tenant's actor wherever it
//! runs (this node, or the owner by NATS request-reply).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use engage_actors::capabilities::customers::CustomersQuery;
use engage_actors::QueryError;

use super::auth::{check, Auth, Caller};
use super::body::PlatformBody;
use super::errors::{IntegrationError, StaffError};
use crate::AppState;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/crm_api/get/customer/details", post(get_customer_details))
        .route("/crm_api/update/customer/details", post(update_customer_details))
}

fn text(body: &Value, name: &str) -> Option<String> {
    body.get(name).and_then(Value::as_str).map(str::to_owned)
}

/// `{status: 1, customer: {customer_number, name, total_orders, last_order, loyalty_points,
/// segment, lifetime_value, average_order_value}}`; 404 `xE_404` for an unknown customer.
pub async fn get_customer_details(
    State(state): State<AppState>,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let body = match body {
        Ok(PlatformBody(body)) => body,
        Err(error) => return error.into_response(),
    };
    let issues = state.platform.schemas.issues("CustomerDetailsRequest", &body);
    if !issues.is_empty() {
        return IntegrationError::invalid(issues).into_response();
    }
    let (Some(tenant), Some(phone)) = (text(&body, "parent_business_id"), text(&body, "customer_number")) else {
        return IntegrationError::invalid_message("", "parent_business_id and customer_number are required")
            .into_response();
    };
    match state.platform.gateway.ask(&tenant, CustomersQuery::Details { phone }).await {
        Ok(customer) => Json(json!({"status": 1, "customer": customer})).into_response(),
        Err(QueryError::NotFound) => IntegrationError::not_found("customer").into_response(),
        Err(QueryError::Invalid(message)) => IntegrationError::invalid_message("", message).into_response(),
        Err(error) => IntegrationError::unavailable(error).into_response(),
    }
}

/// Updates name, email, gender or dob; answers `{status: 1, message, customer}`.
pub async fn update_customer_details(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let caller = match check(&state, Auth::Staff, &headers).await {
        Ok(caller) => caller,
        Err(refusal) => return refusal,
    };
    let body = match body {
        Ok(PlatformBody(body)) => body,
        Err(_) => return StaffError::invalid_message("", "the body is not JSON").into_response(),
    };
    let issues = state.platform.schemas.issues("UpdateCustomerRequest", &body);
    if !issues.is_empty() {
        return StaffError::invalid(issues).into_response();
    }
    let tenant = text(&body, "parent_business_id").unwrap_or_default();
    if let Caller::Token(grant) = &caller {
        let outlet_ok = grant.business.as_deref().is_none_or(|b| text(&body, "business_id").as_deref() == Some(b));
        if grant.parent != tenant || !outlet_ok {
            return StaffError::forbidden_business().into_response();
        }
    }
    let query = CustomersQuery::Update {
        phone: text(&body, "customer_number").unwrap_or_default(),
        name: text(&body, "name"),
        email: text(&body, "email"),
        gender: text(&body, "gender"),
        dob: text(&body, "dob"),
    };
    match state.platform.gateway.ask(&tenant, query).await {
        Ok(customer) => Json(json!({"status": 1, "message": "customer updated", "customer": customer})).into_response(),
        Err(QueryError::NotFound) => StaffError::not_found("customer").into_response(),
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}
