//! The customer routes of `/integration/v1` (integration token; the brand is the token's) and the
//! loyalty routes of `/pos_e/v1` (open, as the spec says; the brand is the body's
//! `parent_business_id`). All answered by the brand's tenant actor.
//!
//! | Route | Answer |
//! |---|---|
//! | `/integration/v1/create_user` | `{status: 1, customer}` (created or updated; `referrer_number` names a new customer's referrer) |
//! | `/integration/v1/get_user_profile` | `{status: 1, customer}`; 404 `xE_404` |
//! | `/integration/v1/update_user_profile` | `{status: 1, customer}`; 404 `xE_404` |
//! | `/integration/v1/fcm_token_ingestion` (`fcm_token`) | `{status: 1, customer}` |
//! | `/integration/v1/deduct_wallet_points` (`points`, `reference`) | `{status: 1, deducted, wallet_balance, txn_id}`: a final redemption keyed by `reference` (once per reference), under the same fraud and limit checks |
//! | `/pos_e/v1/get_loyalty_details` | `{status: 1, loyalty_points, redeemable_points, …}` |
//! | `/pos_e/v1/redeem_loyalty_points`, `/pos_e/v1/revoke_loyalty_points` | the handlers of `/api/redeemLoyalty` and `/api/revokeLoyalty` (in [`super::loyalty`]), open |
//! | `/pos_e/v1/update_pos_customer_details` | `{status: 1, customer}` (created or updated) |
//!
//! The open `/pos_e/v1` routes let anyone who can reach them redeem a customer's points: put them
//! behind a network boundary (they are open in the spec). OTP authentication
//! (`authenticate_points_redemption`) is in [`super::loyalty`], coupons (`get_coupon_details`,
//! `redeem_coupon_details`) in [`super::rewards`].

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Router};
use serde_json::{json, Value};

use engage_actors::capabilities::customers::CustomersQuery;
use engage_actors::capabilities::loyalty::LoyaltyQuery;
use engage_streams::{Envelope, EventKind};

use super::auth::Auth;
use super::body::PlatformBody;
use super::errors::IntegrationError;
use super::loyalty::{redeem_query, tenant_call, text, with_status};
use crate::trace::TraceId;
use crate::AppState;

const SCHEMA: &str = "IntegrationUserRequest";

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/integration/v1/create_user", post(|s, t, h, b| upsert_customer(s, t, h, b, Auth::Integration)))
        .route("/pos_e/v1/update_pos_customer_details", post(|s, t, h, b| upsert_customer(s, t, h, b, Auth::None)))
        .route("/integration/v1/get_user_profile", post(get_user_profile))
        .route("/integration/v1/update_user_profile", post(update_user_profile))
        .route("/integration/v1/fcm_token_ingestion", post(fcm_token_ingestion))
        .route("/integration/v1/deduct_wallet_points", post(deduct_wallet_points))
        .route("/pos_e/v1/get_loyalty_details", post(pos_loyalty_details))
}

fn customer_answer(customer: Value) -> Value {
    json!({"status": 1, "customer": customer})
}

/// Applies a customer event at once through the actor (no bus: the answer carries the result).
fn apply_now(kind: EventKind, source: &str, brand: &str, trace: &str, body: &Value) -> CustomersQuery {
    let mut payload = json!({
        "parentBusinessId": brand,
        "phone": text(body, "customer_number"),
    });
    for field in ["name", "email", "gender", "dob", "fcm_token", "platform", "referrer_number"] {
        if let Some(value) = text(body, field) {
            payload[field] = json!(value);
        }
    }
    if let Some(business) = text(body, "business_id") {
        payload["businessId"] = json!(business);
    }
    CustomersQuery::ApplyNow { envelope: Envelope::new(kind, source, 0, brand, trace, payload) }
}

async fn upsert_customer(
    State(state): State<AppState>,
    Extension(trace): Extension<TraceId>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    auth: Auth,
) -> Response {
    let source = if auth == Auth::Integration { "integration" } else { "pos_e" };
    tenant_call(
        &state,
        auth,
        &headers,
        body,
        SCHEMA,
        |brand, body| Ok(apply_now(EventKind::Customer, source, brand, &trace.0, body)),
        customer_answer,
    )
    .await
}

async fn get_user_profile(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |_: &str, body: &Value| {
        Ok(CustomersQuery::Details { phone: text(body, "customer_number").unwrap_or_default() })
    };
    tenant_call(&state, Auth::Integration, &headers, body, SCHEMA, query, customer_answer).await
}

async fn update_user_profile(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |_: &str, body: &Value| {
        Ok(CustomersQuery::Update {
            phone: text(body, "customer_number").unwrap_or_default(),
            name: text(body, "name"),
            email: text(body, "email"),
            gender: text(body, "gender"),
            dob: text(body, "dob"),
        })
    };
    tenant_call(&state, Auth::Integration, &headers, body, SCHEMA, query, customer_answer).await
}

async fn fcm_token_ingestion(
    State(state): State<AppState>,
    Extension(trace): Extension<TraceId>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |brand: &str, body: &Value| {
        if text(body, "fcm_token").is_none() {
            return Err(
                IntegrationError::invalid_message("/fcm_token", "\"fcm_token\" is a required property").into_response()
            );
        }
        Ok(apply_now(EventKind::PushToken, "integration", brand, &trace.0, body))
    };
    tenant_call(&state, Auth::Integration, &headers, body, SCHEMA, query, customer_answer).await
}

async fn deduct_wallet_points(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |_: &str, body: &Value| {
        let (Some(_), Some(reference)) = (body.get("points").and_then(Value::as_i64), text(body, "reference")) else {
            return Err(
                IntegrationError::invalid_message("/reference", "points and reference are required").into_response()
            );
        };
        let mut body = body.clone();
        body["order_id"] = json!(reference);
        Ok(redeem_query(&body, None))
    };
    tenant_call(&state, Auth::Integration, &headers, body, SCHEMA, query, |answer| {
        json!({"status": 1, "deducted": answer["redeemed"], "wallet_balance": answer["wallet_balance"], "txn_id": answer["txn_id"]})
    })
    .await
}

async fn pos_loyalty_details(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |_: &str, body: &Value| {
        Ok(LoyaltyQuery::Balance {
            phone: text(body, "customer_number").unwrap_or_default(),
            bill: text(body, "bill_amount"),
        })
    };
    tenant_call(&state, Auth::None, &headers, body, SCHEMA, query, with_status).await
}
