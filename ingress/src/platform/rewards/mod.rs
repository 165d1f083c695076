//! The rewards catalogue and coupons: a reward is bought with points and issues a coupon; a coupon
//! is used on an order (`redeemed`) or, while unused, revoked for its points back.
//!
//! | Route | Auth | Answer |
//! |---|---|---|
//! | `/crm_api/add_edit_reward` (ours: the spec shows no catalogue route) | staff | `{status: true, reward}` |
//! | `/integration/v1/get_rewards` (`customer_number` optional) | integration | `{status: 1, rewards[+affordable], loyalty_points}` |
//! | `/integration/v1/purchase_rewards` (`customer_number`, `reward_id`, `reference`?) | integration | `{status: 1, coupon, loyalty_points}`; insufficient points 409 `xE_105` |
//! | `/integration/v1/redeem_rewards` (`coupon_code`, `order_id`) | integration | `{status: 1, coupon}` |
//! | `/integration/v1/revoke_reward` (`customer_number`, `coupon_code`) | integration | `{status: 1, coupon, loyalty_points}` |
//! | `/pos_e/v1/get_coupon_details` (`coupon_code`) | open | `{status: 1, coupon}` |
//! | `/pos_e/v1/redeem_coupon_details` (`coupon_code`, `order_id`) | open | `{status: 1, coupon}` |
//!
//! | `/crm_api/get/customer/loyalty/details`, `/crm_api/view/all/rewards`, `/crm_api/view/expired/redeemed/rewards` | app token (`token:` + `source: mobile`) | the token's customer's loyalty, the catalogue with `affordable`, the coupons no longer usable |
//!
//! An expired, used or revoked coupon cannot be used: 400 `xE_102`; an unknown one 404 `xE_404`.

use axum::extract::State;
use axum::Json;
use serde::Serialize;

use engage_actors::capabilities::customers::{self, CustomerView};
use engage_actors::capabilities::loyalty::{self, PointsBalance};
use engage_actors::capabilities::rewards::{
    self, Catalogue, Coupon, CouponStatus, Coupons, Purchased, Reward, RewardDraft,
};

use crate::platform::edge::errors::{IntegrationError, StaffError};
use crate::platform::edge::requests::{CouponRequest, RewardRequest};
use crate::platform::edge::routes::Routes;
use crate::platform::edge::{answer, staff_answer, Answer, AppCustomer, Integration, Open, Staff, StaffAnswer};
use crate::state::AppState;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post("/crm_api/add_edit_reward", "Add or edit a reward of the brand's catalogue", add_edit_reward)
        .post("/integration/v1/get_rewards", "Active rewards (affordable for customer_number when given)", get_rewards)
        .post("/integration/v1/purchase_rewards", "Buy a reward with points: a coupon is issued", purchase_rewards)
        .requires(&["customer_number", "reward_id"])
        .post("/integration/v1/redeem_rewards", "Use a coupon on an order", redeem_rewards)
        .requires(&["coupon_code", "order_id"])
        .post(
            "/pos_e/v1/redeem_coupon_details",
            "Use a coupon on an order (brand in parent_business_id)",
            redeem_coupon_details,
        )
        .requires(&["coupon_code", "order_id"])
        .post("/integration/v1/revoke_reward", "Revoke an unused coupon: its points come back", revoke_reward)
        .requires(&["customer_number", "coupon_code"])
        .post("/pos_e/v1/get_coupon_details", "A coupon (brand in parent_business_id)", get_coupon_details)
        .requires(&["coupon_code"])
        .post(
            "/crm_api/get/customer/loyalty/details",
            "The app user's customer record and loyalty (no body needed)",
            app_loyalty,
        )
        .post(
            "/crm_api/view/all/rewards",
            "The catalogue, with affordable for the app user (no body needed)",
            app_rewards,
        )
        .post(
            "/crm_api/view/expired/redeemed/rewards",
            "The app user's coupons that are redeemed, revoked or expired (no body needed)",
            app_used_coupons,
        )
}

/// `{customer, loyalty}`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AppLoyalty {
    /// The customer.
    customer: CustomerView,
    /// Their points.
    loyalty: PointsBalance,
}

/// `/crm_api/get/customer/loyalty/details` (app token): `{status: true, customer, loyalty}`.
async fn app_loyalty(
    State(state): State<AppState>,
    AppCustomer { tenant, phone }: AppCustomer,
) -> Result<Json<StaffAnswer<AppLoyalty>>, StaffError> {
    let gateway = &state.platform.gateway;
    let customer: CustomerView = gateway.ask(&tenant, customers::Details { phone: phone.clone() }).await?;
    let loyalty: PointsBalance = gateway.ask(&tenant, loyalty::Balance { phone, bill: None }).await?;
    Ok(staff_answer(AppLoyalty { customer, loyalty }))
}

/// `/crm_api/view/all/rewards` (app token): `{status: true, rewards[+affordable], loyalty_points}`.
async fn app_rewards(
    State(state): State<AppState>,
    AppCustomer { tenant, phone }: AppCustomer,
) -> Result<Json<StaffAnswer<Catalogue>>, StaffError> {
    Ok(staff_answer(state.platform.gateway.ask(&tenant, rewards::ListRewards { phone: Some(phone) }).await?))
}

/// `/crm_api/view/expired/redeemed/rewards` (app token): `{status: true, coupons}` no longer
/// usable (redeemed, revoked or expired).
async fn app_used_coupons(
    State(state): State<AppState>,
    AppCustomer { tenant, phone }: AppCustomer,
) -> Result<Json<StaffAnswer<Coupons>>, StaffError> {
    let mut all: Coupons = state.platform.gateway.ask(&tenant, rewards::CustomerCoupons { phone }).await?;
    all.coupons.retain(|c| c.status != CouponStatus::Issued);
    Ok(staff_answer(all))
}

/// `{reward}`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RewardAnswer {
    reward: Reward,
}

/// `/crm_api/add_edit_reward`: `{status: true, reward}`.
async fn add_edit_reward(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<RewardRequest>,
) -> Result<Json<StaffAnswer<RewardAnswer>>, StaffError> {
    let reward = RewardDraft {
        reward_id: body.reward_id,
        name: body.name,
        description: body.description,
        points_cost: body.points_cost,
        valid_days: body.valid_days,
        active: body.active,
    };
    let reward = state.platform.gateway.ask(&tenant, rewards::UpsertReward { reward }).await?;
    Ok(staff_answer(RewardAnswer { reward }))
}

/// A field the route needs that the shared coupon schema leaves optional.
fn required(value: Option<String>, name: &str) -> Result<String, IntegrationError> {
    value.ok_or_else(|| {
        IntegrationError::invalid_message(&format!("/{name}"), format!("\"{name}\" is a required property"))
    })
}

/// `/integration/v1/get_rewards`: `{status: 1, rewards[+affordable], loyalty_points}`.
async fn get_rewards(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<CouponRequest>,
) -> Result<Json<Answer<Catalogue>>, IntegrationError> {
    let query = rewards::ListRewards { phone: body.customer_number };
    Ok(answer(state.platform.gateway.ask(&tenant, query).await?))
}

/// `/integration/v1/purchase_rewards`: `{status: 1, coupon, loyalty_points}`.
async fn purchase_rewards(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<CouponRequest>,
) -> Result<Json<Answer<Purchased>>, IntegrationError> {
    let query = rewards::PurchaseReward {
        phone: required(body.customer_number, "customer_number")?,
        reward_id: required(body.reward_id, "reward_id")?,
        reference: body.reference,
    };
    Ok(answer(state.platform.gateway.ask(&tenant, query).await?))
}

/// `{coupon}`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CouponAnswer {
    coupon: Coupon,
}

/// Uses the body's coupon on its order; POS use (`pending_minutes`) stays pending until the order
/// arrives.
async fn use_coupon(
    state: &AppState,
    tenant: &str,
    body: CouponRequest,
    pending_minutes: Option<u64>,
) -> Result<Json<Answer<CouponAnswer>>, IntegrationError> {
    let query = rewards::UseCoupon {
        code: required(body.coupon_code, "coupon_code")?,
        order_id: required(body.order_id, "order_id")?,
        pending_minutes,
    };
    Ok(answer(CouponAnswer { coupon: state.platform.gateway.ask(tenant, query).await? }))
}

/// `/integration/v1/redeem_rewards`: `{status: 1, coupon}`, final at once.
async fn redeem_rewards(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<CouponRequest>,
) -> Result<Json<Answer<CouponAnswer>>, IntegrationError> {
    use_coupon(&state, &tenant, body, None).await
}

/// `/pos_e/v1/redeem_coupon_details` (open): `{status: 1, coupon}`, pending until the order.
async fn redeem_coupon_details(
    State(state): State<AppState>,
    Open { tenant, body }: Open<CouponRequest>,
) -> Result<Json<Answer<CouponAnswer>>, IntegrationError> {
    let ttl = state.settings.pos_redemption_ttl_minutes;
    use_coupon(&state, &tenant, body, Some(ttl)).await
}

/// `/integration/v1/revoke_reward`: `{status: 1, coupon, loyalty_points}`.
async fn revoke_reward(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<CouponRequest>,
) -> Result<Json<Answer<Purchased>>, IntegrationError> {
    let query = rewards::RevokeCoupon {
        phone: required(body.customer_number, "customer_number")?,
        code: required(body.coupon_code, "coupon_code")?,
    };
    Ok(answer(state.platform.gateway.ask(&tenant, query).await?))
}

/// `/pos_e/v1/get_coupon_details` (open): `{status: 1, coupon}`.
async fn get_coupon_details(
    State(state): State<AppState>,
    Open { tenant, body }: Open<CouponRequest>,
) -> Result<Json<Answer<CouponAnswer>>, IntegrationError> {
    let query = rewards::GetCoupon { code: required(body.coupon_code, "coupon_code")? };
    Ok(answer(CouponAnswer { coupon: state.platform.gateway.ask(&tenant, query).await? }))
}
