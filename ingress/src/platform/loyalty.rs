//! Loyalty routes (spec "Integration routes", "Legacy routes" loyalty rewards, "Ingestion and POS
//! routes" loyalty): rules and milestones, points balance, redemption, ledger. Every answer comes
//! from the brand's tenant actor, which serialises all balance changes: concurrent redemptions
//! can never overspend.
//!
//! | Route | Auth | Body |
//! |---|---|---|
//! | `/crm_api/add_edit_rules` | staff token | LoyaltyRulesRequest (+ `parent_business_id`) |
//! | `/crm_api/add_edit_milestone` | staff token | MilestonesRequest |
//! | `/crm_api/day/wise/data` | staff token | DayWiseRequest: `{status: true, from, to, data: [{date, points_earned, bonus_points, referral_points, points_redeemed, points_restored, points_expired, net_points, transactions, customers_earned, customers_redeemed}], totals}` |
//! | `/crm_api/get/referal/rules` | staff token | `parent_business_id`: `{status: true, referral: {enabled, referrer_points, referee_points, min_order_amount, max_referrals}}` |
//! | `/integration/v1/configure_points` | integration token | LoyaltyRulesRequest |
//! | `/integration/v1/redeem_points` | integration token | RedeemPointsRequest |
//! | `/integration/v1/get_user_loyalty`, `/api/checkLoyaltyRewards` | integration token | CustomerLoyaltyRequest |
//! | `/integration/v1/get_wallet_ledger` | integration token | CustomerLoyaltyRequest (`page`, `page_size` ≤ 100) |
//! | `/api/redeemLoyalty` | integration token | RedeemPointsRequest: a POS redemption, pending until its order arrives |
//! | `/api/revokeLoyalty` | integration token | CustomerLoyaltyRequest with `order_id`: revoke that redemption now |
//!
//! Redemption refusals (integration family, HTTP 400): `xE_105` insufficient points, `xE_106`
//! below the minimum, `xE_107` over the bill share; unknown customer 404 `xE_404`. Fraud
//! prevention denials are 403 with `fraud_detected` ([`fraud_denial`]).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use engage_actors::capabilities::loyalty::LoyaltyQuery;
use engage_actors::capabilities::otp::OtpQuery;
use engage_actors::capabilities::redemption::{RedeemRequest, RedemptionQuery};
use engage_actors::capabilities::rewards::RewardsQuery;
use engage_actors::domain::loyalty::{LoyaltyRules, Milestone, RedeemError, ReferralRules};
use engage_actors::domain::order::decimal;
use engage_actors::{QueryError, TenantQuery};

use super::auth::{check, Auth, Caller};
use super::body::PlatformBody;
use super::errors::{IntegrationError, StaffError};
use crate::AppState;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/crm_api/add_edit_rules", post(add_edit_rules))
        .route("/crm_api/add_edit_milestone", post(add_edit_milestone))
        .route("/integration/v1/configure_points", post(configure_points))
        .route("/integration/v1/redeem_points", post(redeem_points))
        .route("/integration/v1/get_user_loyalty", post(get_user_loyalty))
        .route("/api/checkLoyaltyRewards", post(get_user_loyalty))
        .route("/integration/v1/get_wallet_ledger", post(get_wallet_ledger))
        .route("/api/redeemLoyalty", post(|s, h, b| redeem_loyalty(s, h, b, Auth::Integration)))
        .route("/pos_e/v1/redeem_loyalty_points", post(|s, h, b| redeem_loyalty(s, h, b, Auth::None)))
        .route("/api/revokeLoyalty", post(|s, h, b| revoke_loyalty(s, h, b, Auth::Integration)))
        .route("/pos_e/v1/revoke_loyalty_points", post(|s, h, b| revoke_loyalty(s, h, b, Auth::None)))
        .route("/api/generateOTP", post(generate_otp))
        .route("/crm_api/fetch_loyalty_details", post(|s, h, b| staff_loyalty(s, h, b, StaffRead::Details)))
        .route("/crm_api/loyalty/ledger", post(|s, h, b| staff_loyalty(s, h, b, StaffRead::Ledger)))
        .route("/crm_api/redeem_points", post(|s, h, b| staff_loyalty(s, h, b, StaffRead::Redeem)))
        .route("/crm_api/day/wise/data", post(|s, h, b| staff_loyalty(s, h, b, StaffRead::DayWise)))
        .route("/crm_api/get/referal/rules", post(|s, h, b| staff_loyalty(s, h, b, StaffRead::ReferralRules)))
        .route("/crm_api/get/loyalty/rules/details", post(rules_details))
        .route("/pos_e/v1/authenticate_points_redemption", post(authenticate_points_redemption))
}

/// What a legacy staff loyalty route does.
#[derive(Clone, Copy)]
enum StaffRead {
    /// `/crm_api/fetch_loyalty_details`: the brand's rules and active rewards.
    Details,
    /// `/crm_api/loyalty/ledger`: a customer's ledger page.
    Ledger,
    /// `/crm_api/redeem_points`: a final redemption by staff.
    Redeem,
    /// `/crm_api/day/wise/data`: the brand's loyalty figures per IST day.
    DayWise,
    /// `/crm_api/get/referal/rules`: the refer-and-earn programme.
    ReferralRules,
}

/// Longest range of `/crm_api/day/wise/data`, in days.
const DAY_WISE_MAX_DAYS: i64 = 92;

/// The day-wise query of a body: `start_date..=end_date` (default the 7 IST days up to today),
/// or the staff-family refusal.
fn day_wise_query(body: &Value) -> Result<LoyaltyQuery, Response> {
    let today = engage_actors::domain::time::ist_day(chrono::Utc::now());
    let date = |name: &str, default: &str| {
        chrono::NaiveDate::parse_from_str(&text(body, name).unwrap_or_else(|| default.to_owned()), "%Y-%m-%d")
    };
    let refuse = |pointer: &str, message: String| StaffError::invalid_message(pointer, message).into_response();
    let to = date("end_date", &today).map_err(|e| refuse("/end_date", e.to_string()))?;
    let week_before = (to - chrono::Days::new(6)).format("%Y-%m-%d").to_string();
    let from = date("start_date", &week_before).map_err(|e| refuse("/start_date", e.to_string()))?;
    let days = (to - from).num_days() + 1;
    if days < 1 {
        return Err(refuse("/start_date", "start_date is after end_date".into()));
    }
    if days > DAY_WISE_MAX_DAYS {
        return Err(refuse("/end_date", format!("at most {DAY_WISE_MAX_DAYS} days at a time (asked for {days})")));
    }
    Ok(LoyaltyQuery::DayWise { from: from.format("%Y-%m-%d").to_string(), to: to.format("%Y-%m-%d").to_string() })
}

/// The legacy staff loyalty routes (staff token of the brand in `parent_business_id`); answers
/// `{status: true, …}`, staff-family errors.
async fn staff_loyalty(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    read: StaffRead,
) -> Response {
    let schema = match read {
        StaffRead::Details | StaffRead::ReferralRules => "LoyaltyRulesRequest",
        StaffRead::Ledger | StaffRead::Redeem => "IntegrationUserRequest",
        StaffRead::DayWise => "DayWiseRequest",
    };
    let (caller, body) = match accept(&state, Auth::Staff, &headers, body, schema).await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let brand = match staff_brand(&caller, &body) {
        Ok(brand) => brand,
        Err(refusal) => return refusal,
    };
    let answer = match read {
        StaffRead::Details => {
            let rules = state.platform.gateway.ask(&brand, LoyaltyQuery::GetRules).await;
            let rewards = state.platform.gateway.ask(&brand, RewardsQuery::ListRewards { phone: None }).await;
            rules.and_then(|rules| rewards.map(|rewards| json!({"rules": rules, "rewards": rewards["rewards"]})))
        }
        StaffRead::Ledger => {
            let query = LoyaltyQuery::Ledger {
                phone: text(&body, "customer_number").unwrap_or_default(),
                page: body.get("page").and_then(Value::as_u64).unwrap_or(1),
                page_size: body.get("page_size").and_then(Value::as_u64).unwrap_or(20),
            };
            state.platform.gateway.ask(&brand, query).await
        }
        StaffRead::Redeem => {
            if body.get("points").is_none() || text(&body, "order_id").is_none() {
                return StaffError::invalid_message("/order_id", "points and order_id are required").into_response();
            }
            state.platform.gateway.ask(&brand, redeem_query(&body, None)).await
        }
        StaffRead::DayWise => match day_wise_query(&body) {
            Ok(query) => state.platform.gateway.ask(&brand, query).await,
            Err(refusal) => return refusal,
        },
        StaffRead::ReferralRules => state
            .platform
            .gateway
            .ask(&brand, LoyaltyQuery::GetRules)
            .await
            .map(|rules| json!({"referral": rules["referral"]})),
    };
    match answer {
        Ok(mut answer) => {
            answer["status"] = json!(true);
            Json(answer).into_response()
        }
        Err(QueryError::NotFound) => StaffError::not_found("customer").into_response(),
        Err(
            error @ (QueryError::Redeem(_) | QueryError::Blocked | QueryError::Fraud { .. } | QueryError::Invalid(_)),
        ) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"message": error.to_string().trim_start_matches("refused: ").to_owned()})),
        )
            .into_response(),
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

/// `/crm_api/get/loyalty/rules/details` (integration token): `{status: 1, rules}`.
async fn rules_details(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    integration_call(
        &state,
        &headers,
        body,
        "LoyaltyRulesRequest",
        |_| Ok(LoyaltyQuery::GetRules),
        |rules| json!({"status": 1, "rules": rules}),
    )
    .await
}

/// `{status: 1, message, expires_at}`: a 6-digit one-time password, valid 5 minutes, sent by SMS
/// to the customer and paid by `business_id`'s wallet (SMS price + GST); never in the answer.
async fn generate_otp(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |body: &Value| {
        let Some(business) = text(body, "business_id") else {
            return Err(IntegrationError::invalid_message(
                "/business_id",
                "business_id (the outlet paying for the SMS) is required",
            )
            .into_response());
        };
        Ok(OtpQuery::Generate { phone: text(body, "customer_number").unwrap_or_default(), business })
    };
    integration_call(
        &state,
        &headers,
        body,
        "IntegrationUserRequest",
        query,
        |answer| json!({"status": 1, "message": "one-time password sent by SMS", "expires_at": answer["expires_at"]}),
    )
    .await
}

/// `/pos_e/v1/authenticate_points_redemption` (open): `{status: 1, verified: true, valid_until}`;
/// a correct password opens a 5-minute window for one POS redemption; 403 `xE_112` otherwise.
async fn authenticate_points_redemption(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |_: &str, body: &Value| {
        let Some(otp) = text(body, "otp") else {
            return Err(IntegrationError::invalid_message("/otp", "\"otp\" is a required property").into_response());
        };
        Ok(OtpQuery::Verify { phone: text(body, "customer_number").unwrap_or_default(), otp })
    };
    tenant_call(&state, Auth::None, &headers, body, "IntegrationUserRequest", query, with_status).await
}

/// Auth, body and schema: the caller, the body, or the refusal in the route's family.
async fn accept(
    state: &AppState,
    auth: Auth,
    headers: &HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    schema: &str,
) -> Result<(Caller, Value), Response> {
    let caller = check(state, auth, headers).await?;
    let staff = auth == Auth::Staff;
    let body = match body {
        Ok(PlatformBody(body)) => body,
        Err(_) if staff => return Err(StaffError::invalid_message("", "the body is not JSON").into_response()),
        Err(error) => return Err(error.into_response()),
    };
    let issues = state.platform.schemas.issues(schema, &body);
    if !issues.is_empty() {
        return Err(if staff {
            StaffError::invalid(issues).into_response()
        } else {
            IntegrationError::invalid(issues).into_response()
        });
    }
    Ok((caller, body))
}

/// The brand a staff caller acts for: the body's `parent_business_id`, which must be the token's.
fn staff_brand(caller: &Caller, body: &Value) -> Result<String, Response> {
    let brand = body.get("parent_business_id").and_then(Value::as_str).unwrap_or_default().to_owned();
    match caller {
        Caller::Token(grant) if grant.parent == brand && !brand.is_empty() => Ok(brand),
        _ => Err(StaffError::forbidden_business().into_response()),
    }
}

fn integration_brand(caller: &Caller) -> Result<String, Response> {
    caller.integration_parent().map(str::to_owned).ok_or_else(|| IntegrationError::auth_failed().into_response())
}

/// Current rules with the body's fields applied.
async fn merged_rules(state: &AppState, brand: &str, body: &Value) -> Result<LoyaltyRules, QueryError> {
    let current: LoyaltyRules =
        serde_json::from_value(state.platform.gateway.ask(brand, LoyaltyQuery::GetRules).await?)
            .map_err(|e| QueryError::Failed(e.to_string()))?;
    let dec = |name: &str, current| body.get(name).and_then(decimal).unwrap_or(current);
    let int = |name: &str| body.get(name).and_then(Value::as_i64);
    Ok(LoyaltyRules {
        earn_percent: dec("earn_percent", current.earn_percent),
        min_bill: dec("min_bill", current.min_bill),
        point_value: dec("point_value", current.point_value),
        points_expiry_days: int("points_expiry_days")
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(current.points_expiry_days),
        max_redeem_percent: dec("max_redeem_percent", current.max_redeem_percent),
        min_redeem_points: int("min_redeem_points").unwrap_or(current.min_redeem_points),
        otp_required: body.get("otp_required").and_then(Value::as_bool).unwrap_or(current.otp_required),
        referral: merged_referral(current.referral, body.get("referral")),
        milestones: current.milestones,
    })
}

/// The referral programme with the body's `referral` fields applied.
fn merged_referral(current: ReferralRules, patch: Option<&Value>) -> ReferralRules {
    let Some(patch) = patch else { return current };
    let int = |name: &str| patch.get(name).and_then(Value::as_i64);
    ReferralRules {
        enabled: patch.get("enabled").and_then(Value::as_bool).unwrap_or(current.enabled),
        referrer_points: int("referrer_points").unwrap_or(current.referrer_points),
        referee_points: int("referee_points").unwrap_or(current.referee_points),
        min_order_amount: patch.get("min_order_amount").and_then(decimal).unwrap_or(current.min_order_amount),
        max_referrals: int("max_referrals").and_then(|v| u32::try_from(v).ok()).unwrap_or(current.max_referrals),
    }
}

fn integration_failure(error: QueryError) -> Response {
    let (status, code, message) = match &error {
        QueryError::NotFound => return IntegrationError::not_found("customer").into_response(),
        QueryError::Invalid(message) => return IntegrationError::invalid_message("", message.clone()).into_response(),
        QueryError::Redeem(RedeemError::NotPositive) => (StatusCode::BAD_REQUEST, "xE_102", error.to_string()),
        QueryError::Redeem(RedeemError::Insufficient { .. }) => (StatusCode::BAD_REQUEST, "xE_105", error.to_string()),
        QueryError::Redeem(RedeemError::BelowMinimum { .. }) => (StatusCode::BAD_REQUEST, "xE_106", error.to_string()),
        QueryError::Redeem(RedeemError::OverBillShare { .. }) => (StatusCode::BAD_REQUEST, "xE_107", error.to_string()),
        QueryError::Unavailable(_) | QueryError::Failed(_) => {
            return IntegrationError::unavailable(error).into_response()
        }
        QueryError::Blocked | QueryError::Fraud { .. } => return fraud_denial(&error),
        QueryError::Transition(refused) => (StatusCode::CONFLICT, "xE_110", refused.to_string()),
        QueryError::Insufficient(short) => (StatusCode::BAD_REQUEST, "xE_111", short.to_string()),
        QueryError::Otp(reason) => (StatusCode::FORBIDDEN, "xE_112", format!("one-time password {reason}")),
    };
    let message = message.trim_start_matches("refused: ").to_owned();
    (status, Json(json!({"status": 0, "error_code": code, "error_message": message}))).into_response()
}

/// A loyalty action denied by fraud prevention, answered inside the ordinary loyalty call:
/// 403 `{status: 0, status_code: 403, fraud_detected: true, action_taken, error_code,
/// error_message[, fraud_type, flag_id]}` — `xE_108` blocked customer, `xE_109` velocity breach.
pub fn fraud_denial(error: &QueryError) -> Response {
    let body = match error {
        QueryError::Fraud { fraud_type, flag_id } => json!({
            "status": 0, "status_code": 403, "fraud_detected": true,
            "action_taken": "redemption denied and the customer flagged for review",
            "fraud_type": fraud_type, "flag_id": flag_id,
            "error_code": "xE_109", "error_message": error.to_string(),
        }),
        _ => json!({
            "status": 0, "status_code": 403, "fraud_detected": true,
            "action_taken": "denied: the customer is blocked",
            "error_code": "xE_108", "error_message": "the customer is blocked",
        }),
    };
    (StatusCode::FORBIDDEN, Json(body)).into_response()
}

async fn add_edit_rules(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (caller, body) = match accept(&state, Auth::Staff, &headers, body, "LoyaltyRulesRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let brand = match staff_brand(&caller, &body) {
        Ok(brand) => brand,
        Err(refusal) => return refusal,
    };
    let saved = match merged_rules(&state, &brand, &body).await {
        Ok(rules) => state.platform.gateway.ask(&brand, LoyaltyQuery::SetRules { rules }).await,
        Err(error) => Err(error),
    };
    match saved {
        Ok(rules) => Json(json!({"status": true, "message": "loyalty rules saved", "rules": rules})).into_response(),
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

async fn add_edit_milestone(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (caller, body) = match accept(&state, Auth::Staff, &headers, body, "MilestonesRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let brand = match staff_brand(&caller, &body) {
        Ok(brand) => brand,
        Err(refusal) => return refusal,
    };
    let milestones: Vec<Milestone> = serde_json::from_value(body["milestones"].clone()).unwrap_or_default();
    match state.platform.gateway.ask(&brand, LoyaltyQuery::SetMilestones { milestones }).await {
        Ok(rules) => Json(json!({"status": true, "message": "milestones saved", "rules": rules})).into_response(),
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

async fn configure_points(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (caller, body) = match accept(&state, Auth::Integration, &headers, body, "LoyaltyRulesRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let brand = match integration_brand(&caller) {
        Ok(brand) => brand,
        Err(refusal) => return refusal,
    };
    if body.get("parent_business_id").and_then(Value::as_str).is_some_and(|given| given != brand) {
        return IntegrationError::tenant_mismatch().into_response();
    }
    let saved = match merged_rules(&state, &brand, &body).await {
        Ok(rules) => state.platform.gateway.ask(&brand, LoyaltyQuery::SetRules { rules }).await,
        Err(error) => Err(error),
    };
    match saved {
        Ok(rules) => Json(json!({"status": 1, "rules": rules})).into_response(),
        Err(error) => integration_failure(error),
    }
}

pub(super) fn text(body: &Value, name: &str) -> Option<String> {
    match body.get(name)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// One tenant call in the integration family: auth (`Integration`: the brand is the token's;
/// `None`: the open `/pos_e/v1` routes, the brand is the body's `parent_business_id`), the body
/// against `schema`, then the tenant's answer to `query(brand, body)` shaped by `shape`, or the
/// refusal.
pub(super) async fn tenant_call<Q: Into<TenantQuery>>(
    state: &AppState,
    auth: Auth,
    headers: &HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    schema: &str,
    query: impl FnOnce(&str, &Value) -> Result<Q, Response>,
    shape: impl FnOnce(Value) -> Value,
) -> Response {
    let (caller, body) = match accept(state, auth, headers, body, schema).await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let brand = if auth == Auth::Integration {
        match integration_brand(&caller) {
            Ok(brand) => brand,
            Err(refusal) => return refusal,
        }
    } else {
        match text(&body, "parent_business_id").filter(|b| !b.is_empty()) {
            Some(brand) => brand,
            None => {
                return IntegrationError::invalid_message(
                    "/parent_business_id",
                    "\"parent_business_id\" is a required property",
                )
                .into_response()
            }
        }
    };
    let query = match query(&brand, &body) {
        Ok(query) => query,
        Err(refusal) => return refusal,
    };
    match state.platform.gateway.ask(&brand, query).await {
        Ok(answer) => Json(shape(answer)).into_response(),
        Err(error) => integration_failure(error),
    }
}

/// [`tenant_call`] with an integration token.
async fn integration_call<Q: Into<TenantQuery>>(
    state: &AppState,
    headers: &HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    schema: &str,
    query: impl FnOnce(&Value) -> Result<Q, Response>,
    shape: impl FnOnce(Value) -> Value,
) -> Response {
    tenant_call(state, Auth::Integration, headers, body, schema, |_, body| query(body), shape).await
}

pub(super) fn with_status(mut answer: Value) -> Value {
    answer["status"] = json!(1);
    answer
}

pub(super) fn redeem_query(body: &Value, pending_minutes: Option<u64>) -> RedemptionQuery {
    RedemptionQuery::Redeem(RedeemRequest {
        phone: text(body, "customer_number").unwrap_or_default(),
        points: body.get("points").and_then(Value::as_i64).unwrap_or_default(),
        order_id: text(body, "order_id").unwrap_or_default(),
        outlet_id: text(body, "outlet_id"),
        bill: text(body, "bill_amount"),
        pending_minutes,
        otp: text(body, "otp"),
    })
}

/// `{status: 1, redeemed, wallet_balance, txn_id}` (spec shape; `wallet_balance` is the points
/// balance after the redemption).
async fn redeem_points(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    integration_call(&state, &headers, body, "RedeemPointsRequest", |body| Ok(redeem_query(body, None)), |answer| {
        json!({"status": 1, "redeemed": answer["redeemed"], "wallet_balance": answer["wallet_balance"], "txn_id": answer["txn_id"]})
    })
    .await
}

/// `{status: 1, redeemed, wallet_balance, txn_id, expires_at}`: points are taken now; the
/// redemption stays pending until a POS order with this `order_id` arrives, and the `pos_revoke`
/// job reverts it after `ENGAGE_POS_REDEMPTION_TTL_MINUTES` otherwise.
async fn redeem_loyalty(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    auth: Auth,
) -> Response {
    let ttl = state.settings.pos_redemption_ttl_minutes;
    let query = |_: &str, body: &Value| Ok(redeem_query(body, Some(ttl)));
    tenant_call(&state, auth, &headers, body, "RedeemPointsRequest", query, |answer| {
        json!({"status": 1, "redeemed": answer["redeemed"], "wallet_balance": answer["wallet_balance"],
               "txn_id": answer["txn_id"], "expires_at": answer["pending_until"]})
    })
    .await
}

/// `{status: 1, reverted, restored, wallet_balance}`.
async fn revoke_loyalty(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    auth: Auth,
) -> Response {
    let query = |_: &str, body: &Value| {
        let Some(order_id) = text(body, "order_id") else {
            return Err(
                IntegrationError::invalid_message("/order_id", "\"order_id\" is a required property").into_response()
            );
        };
        Ok(RedemptionQuery::Revoke {
            phone: text(body, "customer_number").unwrap_or_default(),
            order_id,
            now: chrono::Utc::now().to_rfc3339(),
            force: true,
        })
    };
    tenant_call(&state, auth, &headers, body, "CustomerLoyaltyRequest", query, with_status).await
}

/// `{status: 1, customer_number, loyalty_points, redeemable_points, point_value, min_redeem_points,
/// max_redeem_percent}`; `redeemable_points` honours `bill_amount` when given.
async fn get_user_loyalty(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |body: &Value| {
        Ok(LoyaltyQuery::Balance {
            phone: text(body, "customer_number").unwrap_or_default(),
            bill: text(body, "bill_amount"),
        })
    };
    integration_call(&state, &headers, body, "CustomerLoyaltyRequest", query, with_status).await
}

/// `{status: 1, data: [ledger entries, oldest first], page, page_size, total, loyalty_points}`.
async fn get_wallet_ledger(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let query = |body: &Value| {
        Ok(LoyaltyQuery::Ledger {
            phone: text(body, "customer_number").unwrap_or_default(),
            page: body.get("page").and_then(Value::as_u64).unwrap_or(1),
            page_size: body.get("page_size").and_then(Value::as_u64).unwrap_or(20),
        })
    };
    integration_call(&state, &headers, body, "CustomerLoyaltyRequest", query, with_status).await
}
