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
//! | `/crm_api/get/customer/loyalty/details`, `/crm_api/view/all/rewards`, `/crm_api/view/expired/redeemed/rewards` | app token (`token:` + `source: mobile`) | the token's customer's loyalty, the catalogue with `affordable`, the coupons no longer usable |
//!
//! An expired, used or revoked coupon cannot be used: 400 `xE_102`; an unknown one 404 `xE_404`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use engage_actors::capabilities::customers::CustomersQuery;
use engage_actors::capabilities::loyalty::LoyaltyQuery;
use engage_actors::capabilities::rewards::{RewardDraft, RewardsQuery};

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
        .route("/crm_api/get/customer/loyalty/details", post(|s, h| app_read(s, h, AppRead::Loyalty)))
        .route("/crm_api/view/all/rewards", post(|s, h| app_read(s, h, AppRead::Rewards)))
        .route("/crm_api/view/expired/redeemed/rewards", post(|s, h| app_read(s, h, AppRead::Used)))
}

/// What an app-token route reads (for the token's customer).
#[derive(Clone, Copy)]
enum AppRead {
    /// `/crm_api/get/customer/loyalty/details`: `{status: true, customer, loyalty}`.
    Loyalty,
    /// `/crm_api/view/all/rewards`: `{status: true, rewards[+affordable], loyalty_points}`.
    Rewards,
    /// `/crm_api/view/expired/redeemed/rewards`: `{status: true, coupons}` not usable any more.
    Used,
}

/// The app-token routes: the customer is the token's, so they take no body.
async fn app_read(State(state): State<AppState>, headers: HeaderMap, read: AppRead) -> Response {
    let grant = match super::auth::check(&state, Auth::App, &headers).await {
        Ok(super::auth::Caller::Token(grant)) => grant,
        Ok(_) => return super::errors::StaffError::invalid_credentials().into_response(),
        Err(refusal) => return refusal,
    };
    let (brand, phone) = (grant.parent.clone(), grant.business.clone().unwrap_or_default());
    let gateway = &state.platform.gateway;
    let answer = match read {
        AppRead::Loyalty => match gateway.ask(&brand, CustomersQuery::Details { phone: phone.clone() }).await {
            Ok(customer) => gateway
                .ask(&brand, LoyaltyQuery::Balance { phone, bill: None })
                .await
                .map(|loyalty| json!({"customer": customer, "loyalty": loyalty})),
            Err(error) => Err(error),
        },
        AppRead::Rewards => gateway.ask(&brand, RewardsQuery::ListRewards { phone: Some(phone) }).await,
        AppRead::Used => gateway.ask(&brand, RewardsQuery::CustomerCoupons { phone }).await.map(|mut all| {
            if let Some(coupons) = all["coupons"].as_array_mut() {
                coupons.retain(|c| c["status"] != "issued");
            }
            all
        }),
    };
    match answer {
        Ok(mut answer) => {
            answer["status"] = json!(true);
            Json(answer).into_response()
        }
        Err(engage_actors::QueryError::NotFound) => super::errors::StaffError::not_found("customer").into_response(),
        Err(error) => super::errors::StaffError::unavailable(error).into_response(),
    }
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
    let reward = RewardDraft {
        reward_id: text(&body, "reward_id"),
        name: text(&body, "name").unwrap_or_default(),
        description: text(&body, "description"),
        points_cost: body.get("points_cost").and_then(Value::as_i64).unwrap_or_default(),
        valid_days: body.get("valid_days").and_then(Value::as_i64),
        active: body.get("active").and_then(Value::as_bool),
    };
    match state.platform.gateway.ask(&brand, RewardsQuery::UpsertReward { reward }).await {
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
        |_, body| Ok(RewardsQuery::ListRewards { phone: text(body, "customer_number") }),
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
        Ok(RewardsQuery::PurchaseReward {
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
    // POS use stays pending until the order arrives; the integration route is final at once
    let pending_minutes = (auth == Auth::None).then_some(state.settings.pos_redemption_ttl_minutes);
    let query = |_: &str, body: &Value| {
        Ok(RewardsQuery::UseCoupon {
            code: required(body, "coupon_code")?,
            order_id: required(body, "order_id")?,
            pending_minutes,
        })
    };
    tenant_call(&state, auth, &headers, body, SCHEMA, query, |coupon| json!({"status": 1, "coupon": coupon})).await
}

async fn revoke_reward(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |_: &str, body: &Value| {
        Ok(RewardsQuery::RevokeCoupon {
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
    let query = |_: &str, body: &Value| Ok(RewardsQuery::GetCoupon { code: required(body, "coupon_code")? });
    tenant_call(&state, Auth::None, &headers, body, SCHEMA, query, |coupon| json!({"status": 1, "coupon": coupon}))
        .await
}
