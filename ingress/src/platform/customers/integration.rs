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
//! | `/pos_e/v1/redeem_loyalty_points`, `/pos_e/v1/revoke_loyalty_points` | the handlers of `/api/redeemLoyalty` and `/api/revokeLoyalty` (in [`crate::platform::loyalty`]), open |
//! | `/pos_e/v1/update_pos_customer_details` | `{status: 1, customer}` (created or updated) |
//!
//! The open `/pos_e/v1` routes let anyone who can reach them redeem a customer's points: put them
//! behind a network boundary (they are open in the spec). OTP authentication
//! (`authenticate_points_redemption`) is in [`crate::platform::loyalty`], coupons (`get_coupon_details`,
//! `redeem_coupon_details`) in [`crate::platform::rewards`].

use axum::extract::State;
use axum::{Extension, Json};
use serde::Serialize;
use serde_json::json;

use engage_actors::ask::Answer as Question;
use engage_actors::capabilities::customers::{self, CustomerView};
use engage_actors::capabilities::loyalty::{self, PointsBalance};
use engage_actors::capabilities::redemption::Redeemed;
use engage_streams::{Envelope, EventKind};

use crate::platform::customers::CustomerAnswer;
use crate::platform::edge::errors::IntegrationError;
use crate::platform::edge::requests::IntegrationUserRequest;
use crate::platform::edge::routes::Routes;
use crate::platform::edge::{answer, Answer, Integration, Open};
use crate::platform::loyalty::user_redemption;
use crate::state::AppState;
use crate::trace::TraceId;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post("/integration/v1/create_user", "Create or update a customer of the token's brand", create_user)
        .post(
            "/pos_e/v1/update_pos_customer_details",
            "Create or update a customer (brand in parent_business_id)",
            update_pos_customer_details,
        )
        .post("/integration/v1/get_user_profile", "A customer's profile and totals", get_user_profile)
        .post("/integration/v1/update_user_profile", "Update name, email, gender or dob", update_user_profile)
        .post("/integration/v1/fcm_token_ingestion", "Register a push token (fcm_token)", fcm_token_ingestion)
        .requires(&["fcm_token"])
        .post(
            "/integration/v1/deduct_wallet_points",
            "Deduct points once per reference: {status, deducted, wallet_balance, txn_id}",
            deduct_wallet_points,
        )
        .requires(&["points", "reference"])
        .post("/pos_e/v1/get_loyalty_details", "A customer's points (brand in parent_business_id)", pos_loyalty_details)
}

/// Applies a customer event at once through the actor (no bus: the answer carries the result).
fn apply_now(
    kind: EventKind,
    source: &str,
    tenant: &str,
    trace: &str,
    body: &IntegrationUserRequest,
) -> customers::ApplyNow {
    let mut payload = json!({"parentBusinessId": tenant, "phone": body.customer_number});
    let fields = [
        ("name", &body.name),
        ("email", &body.email),
        ("gender", &body.gender),
        ("dob", &body.dob),
        ("anniversary", &body.anniversary),
        ("fcm_token", &body.fcm_token),
        ("platform", &body.platform),
        ("referrer_number", &body.referrer_number),
        ("businessId", &body.business_id),
    ];
    for (field, value) in fields {
        if let Some(value) = value {
            payload[field] = json!(value);
        }
    }
    customers::ApplyNow { envelope: Envelope::new(kind, source, 0, tenant, trace, payload) }
}

async fn ask_customer(
    state: &AppState,
    tenant: &str,
    query: impl Question<Reply = CustomerView> + Into<engage_actors::TenantQuery>,
) -> Result<Json<Answer<CustomerAnswer>>, IntegrationError> {
    let customer = state.platform.gateway.ask(tenant, query).await?;
    Ok(answer(CustomerAnswer::from(customer)))
}

/// `/integration/v1/create_user`: `{status: 1, customer}` (created or updated).
async fn create_user(
    State(state): State<AppState>,
    Extension(trace): Extension<TraceId>,
    Integration { tenant, body }: Integration<IntegrationUserRequest>,
) -> Result<Json<Answer<CustomerAnswer>>, IntegrationError> {
    let query = apply_now(EventKind::Customer, "integration", &tenant, &trace.0, &body);
    ask_customer(&state, &tenant, query).await
}

/// `/pos_e/v1/update_pos_customer_details` (open): `{status: 1, customer}` (created or updated).
async fn update_pos_customer_details(
    State(state): State<AppState>,
    Extension(trace): Extension<TraceId>,
    Open { tenant, body }: Open<IntegrationUserRequest>,
) -> Result<Json<Answer<CustomerAnswer>>, IntegrationError> {
    let query = apply_now(EventKind::Customer, "pos_e", &tenant, &trace.0, &body);
    ask_customer(&state, &tenant, query).await
}

/// `/integration/v1/get_user_profile`: `{status: 1, customer}`; 404 `xE_404`.
async fn get_user_profile(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<IntegrationUserRequest>,
) -> Result<Json<Answer<CustomerAnswer>>, IntegrationError> {
    ask_customer(&state, &tenant, customers::Details { phone: body.customer_number }).await
}

/// `/integration/v1/update_user_profile`: `{status: 1, customer}`; 404 `xE_404`.
async fn update_user_profile(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<IntegrationUserRequest>,
) -> Result<Json<Answer<CustomerAnswer>>, IntegrationError> {
    let query = customers::Update {
        phone: body.customer_number,
        name: body.name,
        email: body.email,
        gender: body.gender,
        dob: body.dob,
        anniversary: body.anniversary,
    };
    ask_customer(&state, &tenant, query).await
}

/// `/integration/v1/fcm_token_ingestion`: `{status: 1, customer}`.
async fn fcm_token_ingestion(
    State(state): State<AppState>,
    Extension(trace): Extension<TraceId>,
    Integration { tenant, body }: Integration<IntegrationUserRequest>,
) -> Result<Json<Answer<CustomerAnswer>>, IntegrationError> {
    if body.fcm_token.is_none() {
        return Err(IntegrationError::invalid_message("/fcm_token", "\"fcm_token\" is a required property"));
    }
    let query = apply_now(EventKind::PushToken, "integration", &tenant, &trace.0, &body);
    ask_customer(&state, &tenant, query).await
}

/// A deduction's answer: `{deducted, wallet_balance, txn_id}`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Deducted {
    deducted: i64,
    wallet_balance: i64,
    txn_id: String,
}

/// `/integration/v1/deduct_wallet_points`: a final redemption keyed by `reference`.
async fn deduct_wallet_points(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<IntegrationUserRequest>,
) -> Result<Json<Answer<Deducted>>, IntegrationError> {
    let (Some(points), Some(reference)) = (body.points, body.reference.clone()) else {
        return Err(IntegrationError::invalid_message("/reference", "points and reference are required"));
    };
    let done: Redeemed = state.platform.gateway.ask(&tenant, user_redemption(body, points, reference)).await?;
    Ok(answer(Deducted { deducted: done.redeemed, wallet_balance: done.wallet_balance, txn_id: done.txn_id }))
}

/// `/pos_e/v1/get_loyalty_details` (open): `{status: 1, loyalty_points, redeemable_points, …}`.
async fn pos_loyalty_details(
    State(state): State<AppState>,
    Open { tenant, body }: Open<IntegrationUserRequest>,
) -> Result<Json<Answer<PointsBalance>>, IntegrationError> {
    let query = loyalty::Balance { phone: body.customer_number, bill: body.bill_amount.map(|n| n.to_string()) };
    Ok(answer(state.platform.gateway.ask(&tenant, query).await?))
}
