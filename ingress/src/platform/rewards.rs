//! The rewards catalogue and coupons: a reward is bought with points and issues a coupon; a coupon
//! is used on an order (`redeemed`) or, while unused, revoked for its points back.
//!
//! | Route | Auth | Answer |
//! |---|---|---|
//! | `/crm_api/add_edit_reward` (ours: the spec shows no catalogue route) | staff | `{status: true, reward}` |
//! | `/integration/v1/get_rewards` (`customer_number` optional) | integration | `{status: 1, rewards[+affordable], loyalty_points}` |
//! | `/integration/v1/purchase_rewards` (`customer_number`, `reward_id`, `reference`?) | integration | `{status: 1, coupon, loyalty_points}`; insufficient points 400 `xE_105` |
//! | `/integration/v1/redeem_rewards` (`coupon_code`, `order_id`) | integration | `{status: 1, coupon}` |
//! | `/integration/v1/revoke_reward` (`customer_number`, `coupon_code`) | integration | `{status: 1, coupon, loyalty_points}` |
//! | `/pos_e/v1/get_coupon_details` (`coupon_code`) | open | `{status: 1, coupon}` |
//! | `/pos_e/v1/redeem_coupon_details` (`coupon_code`, `order_id`) | open | `{status: 1, coupon}` |
//!
//! An expired, used or revoked coupon cannot be used: 400 `xE_102`; an unknown one 404 `xE_404`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use engage_actors::TenantQuery;

use super::auth::Auth;
use super::body::PlatformBody;
use super::errors::{IntegrationError, StaffError};
use super::loyalty::{tenant_call, text, with_status};
use super::staff::staff_request;
use crate::AppState;

const SCHEMA: &str = "CouponRequest";

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/crm_api/add_edit_reward", post(add_edit_reward))
        .route("/integration/v1/get_rewards", post(get_rewards))
        .route("/integration/v1/purchase_rewards", post(purchase_rewards))
        .route("/integration/v1/redeem_rewards", post(|s, h, b| use_coupon(s, h, b, Auth::Integration)))
        .route("/pos_e/v1/redeem_coupon_details", post(|s, h, b| use_coupon(s, h, b, Auth::None)))
        .route("/integration/v1/revoke_reward", post(revoke_reward))
        .route("/pos_e/v1/get_coupon_details", post(get_coupon_details))
}

async fn add_edit_reward(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (brand, _, body) = match staff_request(&state, &headers, body, "RewardRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let reward = json!({
        "reward_id": body.get("reward_id"), "name": body["name"], "description": body.get("description"),
        "points_cost": body["points_cost"], "valid_days": body.get("valid_days").cloned().unwrap_or(json!(30)),
        "active": body.get("active"),
    });
    match state.platform.gateway.ask(&brand, TenantQuery::UpsertReward { reward }).await {
        Ok(reward) => Json(json!({"status": true, "reward": reward})).into_response(),
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

fn required(body: &Value, name: &str) -> Result<String, Response> {
    text(body, name).ok_or_else(|| {
        IntegrationError::invalid_message(&format!("/{name}"), format!("\"{name}\" is a required property"))
            .into_response()
    })
}

async fn get_rewards(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    tenant_call(
        &state,
        Auth::Integration,
        &headers,
        body,
        SCHEMA,
        |_, body| Ok(TenantQuery::ListRewards { phone: text(body, "customer_number") }),
        with_status,
    )
    .await
}

async fn purchase_rewards(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |_: &str, body: &Value| {
        Ok(TenantQuery::PurchaseReward {
            phone: required(body, "customer_number")?,
            reward_id: required(body, "reward_id")?,
            reference: text(body, "reference"),
        })
    };
    tenant_call(&state, Auth::Integration, &headers, body, SCHEMA, query, with_status).await
}

async fn use_coupon(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    auth: Auth,
) -> Response {
    let query = |_: &str, body: &Value| {
        Ok(TenantQuery::UseCoupon { code: required(body, "coupon_code")?, order_id: required(body, "order_id")? })
    };
    tenant_call(&state, auth, &headers, body, SCHEMA, query, |coupon| json!({"status": 1, "coupon": coupon})).await
}

async fn revoke_reward(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |_: &str, body: &Value| {
        Ok(TenantQuery::RevokeCoupon {
            phone: required(body, "customer_number")?,
            code: required(body, "coupon_code")?,
        })
    };
    tenant_call(&state, Auth::Integration, &headers, body, SCHEMA, query, with_status).await
}

async fn get_coupon_details(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |_: &str, body: &Value| Ok(TenantQuery::GetCoupon { code: required(body, "coupon_code")? });
    tenant_call(&state, Auth::None, &headers, body, SCHEMA, query, |coupon| json!({"status": 1, "coupon": coupon}))
        .await
}
