//! Loyalty routes (spec "Integration routes", "Legacy routes" loyalty rewards, "Ingestion and POS
//! routes" loyalty): rules and milestones, points balance, redemption, ledger. Every answer comes
//! from the brand's tenant actor, which serialises all balance changes: concurrent redemptions
//! can never overspend.
//!
//! | Route | Auth | Body |
//! |---|---|---|
//! | `/crm_api/add_edit_rules` | staff token | LoyaltyRulesRequest (+ `parent_business_id`) |
//! | `/crm_api/add_edit_milestone` | staff token | MilestonesRequest |
//! | `/crm_api/day/wise/data` | staff token | DayWiseRequest: `{status: true, from, to, data: [{date, points_earned, bonus_points, referral_points, points_redeemed, points_restored, points_expired, points_clawed_back, net_points, transactions, customers_earned, customers_redeemed}], totals}` |
//! | `/crm_api/get/referal/rules` | staff token | `parent_business_id`: `{status: true, referral: {enabled, referrer_points, referee_points, min_order_amount, max_referrals}}` |
//! | `/integration/v1/configure_points` | integration token | LoyaltyRulesRequest |
//! | `/integration/v1/redeem_points` | integration token | RedeemPointsRequest |
//! | `/integration/v1/get_user_loyalty`, `/api/checkLoyaltyRewards` | integration token | CustomerLoyaltyRequest |
//! | `/integration/v1/get_wallet_ledger` | integration token | CustomerLoyaltyRequest (`page`, `page_size` ≤ 100) |
//! | `/api/redeemLoyalty` | integration token | RedeemPointsRequest: a POS redemption, pending until its order arrives |
//! | `/api/revokeLoyalty` | integration token | CustomerLoyaltyRequest with `order_id`: revoke that redemption now |
//!
//! Redemption refusals (integration family, HTTP 409: the request is valid, the balance or rules refuse it): `xE_105` insufficient points, `xE_106`
//! below the minimum, `xE_107` over the bill share; unknown customer 404 `xE_404`. Fraud
//! prevention denials are 403 with `fraud_detected` ([`FraudDenial`](crate::platform::edge::errors::FraudDenial)).

pub mod requests;

use axum::extract::State;
use axum::Json;
use serde::Serialize;

use engage_actors::capabilities::loyalty::{self, DayWise, LedgerPage, PointsBalance};
use engage_actors::capabilities::otp::{self, Verified};
use engage_actors::capabilities::redemption::{RedeemRequest, Redeemed, Revoke, Revoked};
use engage_actors::capabilities::rewards::{self, Catalogue};
use engage_actors::domain::loyalty::{self as loyalty_domain, LoyaltyRules, Milestone, RulesPatch};
use schemars::JsonSchema;

use crate::platform::edge::errors::{IntegrationError, StaffError};
use crate::platform::edge::requests::{
    CustomerLoyaltyRequest, DayWiseRequest, IntegrationUserRequest, LoyaltyRulesRequest, MilestonesRequest,
    RedeemPointsRequest, ReferralPatch,
};
use crate::platform::edge::routes::Routes;
use crate::platform::edge::{answer, decimal, staff_answer, Answer, Integration, Open, Staff, StaffAnswer};
use crate::state::AppState;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post("/crm_api/add_edit_rules", "Add or edit the brand's loyalty rules (fields left out keep their value)", add_edit_rules)
        .post("/crm_api/add_edit_milestone", "Replace the brand's milestone bonuses", add_edit_milestone)
        .post("/integration/v1/configure_points", "Configure the token's brand's loyalty rules", configure_points)
        .post("/integration/v1/redeem_points", "Redeem points for an order: {status, redeemed, wallet_balance, txn_id}; xE_105 insufficient, xE_106 below minimum, xE_107 over the bill share", redeem_points)
        .post("/integration/v1/get_user_loyalty", "A customer's points and redeemable points", get_user_loyalty)
        .post("/api/checkLoyaltyRewards", "A customer's points and redeemable points (POS)", get_user_loyalty)
        .post("/integration/v1/get_wallet_ledger", "A page of the customer's points ledger, oldest first", get_wallet_ledger)
        .post("/api/redeemLoyalty", "POS redemption: pending until its order arrives; the revoke job reverts it after ENGAGE_POS_REDEMPTION_TTL_MINUTES otherwise", redeem_loyalty)
        .post("/pos_e/v1/redeem_loyalty_points", "POS redemption, pending until the order arrives", pos_redeem_loyalty)
        .post("/api/revokeLoyalty", "Revoke the redemption of order_id now: points restored, ledger row status 2", revoke_loyalty)
        .requires(&["order_id"])
        .post("/pos_e/v1/revoke_loyalty_points", "Revoke the redemption of order_id", pos_revoke_loyalty)
        .requires(&["order_id"])
        .post("/api/generateOTP", "Send the customer a one-time password by SMS (business_id's wallet pays)", generate_otp)
        .requires(&["business_id"])
        .post("/crm_api/fetch_loyalty_details", "The brand's loyalty rules and active rewards", fetch_loyalty_details)
        .post("/crm_api/loyalty/ledger", "A customer's points ledger (parent_business_id, customer_number, page, page_size)", staff_ledger)
        .post("/crm_api/redeem_points", "Redeem points by staff (customer_number, points, order_id)", staff_redeem)
        .requires(&["points", "order_id"])
        .post("/crm_api/day/wise/data", "Loyalty figures per IST day (earned, bonus, referral, redeemed, restored, expired, customers) and totals", day_wise)
        .post("/crm_api/get/referal/rules", "The brand's refer-and-earn programme", referral_rules)
        .post("/crm_api/get/loyalty/rules/details", "The token's brand's loyalty rules", rules_details)
        .post("/pos_e/v1/authenticate_points_redemption", "Check a one-time password: opens a 5-minute window for one POS redemption", authenticate_points_redemption)
        .requires(&["otp"])
}

/// Longest range of `/crm_api/day/wise/data`, in days.
const DAY_WISE_MAX_DAYS: i64 = 92;

/// The day-wise query of a body: `start_date..=end_date` (default the 7 IST days up to today).
fn day_wise_query(body: &DayWiseRequest) -> Result<loyalty::GetDayWise, StaffError> {
    let parse = |given: &Option<String>, pointer: &str| {
        given
            .as_deref()
            .map(|day| chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d"))
            .transpose()
            .map_err(|e| StaffError::invalid_message(pointer, e.to_string()))
    };
    let today = parse(&Some(engage_actors::domain::time::ist_day(chrono::Utc::now())), "/end_date")?;
    let to = parse(&body.end_date, "/end_date")?.or(today).unwrap_or_default();
    let from = parse(&body.start_date, "/start_date")?.unwrap_or(to - chrono::Days::new(6));
    // in either order: the days between the two
    let (from, to) = (from.min(to), from.max(to));
    // a longer range keeps its last DAY_WISE_MAX_DAYS days (the answer's days say which)
    let from = from.max(to - chrono::Days::new(DAY_WISE_MAX_DAYS as u64 - 1));
    Ok(loyalty::GetDayWise { from: from.format("%Y-%m-%d").to_string(), to: to.format("%Y-%m-%d").to_string() })
}

/// `{rules, rewards}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LoyaltyDetails {
    /// The brand's rules.
    rules: LoyaltyRules,
    /// The brand's rewards catalogue.
    rewards: Vec<engage_actors::capabilities::rewards::RewardView>,
}

/// `{referral}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReferralAnswer {
    /// The refer-and-earn programme.
    referral: engage_actors::domain::loyalty::ReferralRules,
}

/// `{message, expires_at}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OtpSent {
    /// "one-time password sent by SMS".
    message: &'static str,
    /// When the password expires (RFC 3339).
    expires_at: String,
}

/// `/crm_api/fetch_loyalty_details`: `{status: true, rules, rewards}`.
async fn fetch_loyalty_details(
    State(state): State<AppState>,
    Staff { tenant, .. }: Staff<LoyaltyRulesRequest>,
) -> Result<Json<StaffAnswer<LoyaltyDetails>>, StaffError> {
    let gateway = &state.platform.gateway;
    let rules: LoyaltyRules = gateway.ask(&tenant, loyalty::GetRules {}).await?;
    let catalogue: Catalogue = gateway.ask(&tenant, rewards::ListRewards { phone: None }).await?;
    Ok(staff_answer(LoyaltyDetails { rules, rewards: catalogue.rewards }))
}

/// `/crm_api/loyalty/ledger`: `{status: true, data, page, page_size, total, loyalty_points}`.
async fn staff_ledger(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<IntegrationUserRequest>,
) -> Result<Json<StaffAnswer<LedgerPage>>, StaffError> {
    let query = loyalty::Ledger {
        phone: body.customer_number,
        page: body.page.unwrap_or(1),
        page_size: body.page_size.unwrap_or(20),
    };
    Ok(staff_answer(state.platform.gateway.ask(&tenant, query).await?))
}

/// `/crm_api/redeem_points`: a final redemption by staff, `{status: true, redeemed,
/// wallet_balance, txn_id}`.
async fn staff_redeem(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<IntegrationUserRequest>,
) -> Result<Json<StaffAnswer<Redemption>>, StaffError> {
    let (Some(points), Some(order_id)) = (body.points, body.order_id.clone()) else {
        return Err(StaffError::invalid_message("/order_id", "points and order_id are required"));
    };
    let redeemed: Redeemed = state.platform.gateway.ask(&tenant, user_redemption(body, points, order_id)).await?;
    Ok(staff_answer(Redemption::from(redeemed)))
}

/// `/crm_api/day/wise/data`: `{status: true, from, to, data, totals}`.
async fn day_wise(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<DayWiseRequest>,
) -> Result<Json<StaffAnswer<DayWise>>, StaffError> {
    Ok(staff_answer(state.platform.gateway.ask(&tenant, day_wise_query(&body)?).await?))
}

/// `/crm_api/get/referal/rules`: `{status: true, referral}`.
async fn referral_rules(
    State(state): State<AppState>,
    Staff { tenant, .. }: Staff<LoyaltyRulesRequest>,
) -> Result<Json<StaffAnswer<ReferralAnswer>>, StaffError> {
    let rules: LoyaltyRules = state.platform.gateway.ask(&tenant, loyalty::GetRules {}).await?;
    Ok(staff_answer(ReferralAnswer { referral: rules.referral }))
}

/// `/crm_api/get/loyalty/rules/details` (integration token): `{status: 1, rules}`.
async fn rules_details(
    State(state): State<AppState>,
    Integration { tenant, .. }: Integration<LoyaltyRulesRequest>,
) -> Result<Json<Answer<RulesAnswer>>, IntegrationError> {
    let rules: LoyaltyRules = state.platform.gateway.ask(&tenant, loyalty::GetRules {}).await?;
    Ok(answer(RulesAnswer { rules }))
}

/// `{status: 1, message, expires_at}`: a 6-digit one-time password, valid 5 minutes, sent by SMS
/// to the customer and paid by `business_id`'s wallet (SMS price + GST); never in the answer.
async fn generate_otp(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<IntegrationUserRequest>,
) -> Result<Json<Answer<OtpSent>>, IntegrationError> {
    let Some(business) = body.business_id else {
        return Err(IntegrationError::invalid_message(
            "/business_id",
            "business_id (the outlet paying for the SMS) is required",
        ));
    };
    let query = otp::Generate { phone: body.customer_number, business };
    let generated = state.platform.gateway.ask(&tenant, query).await?;
    Ok(answer(OtpSent { message: "one-time password sent by SMS", expires_at: generated.expires_at }))
}

/// `/pos_e/v1/authenticate_points_redemption` (open): `{status: 1, verified: true, valid_until}`;
/// a correct password opens a 5-minute window for one POS redemption; 403 `xE_112` otherwise.
async fn authenticate_points_redemption(
    State(state): State<AppState>,
    Open { tenant, body }: Open<IntegrationUserRequest>,
) -> Result<Json<Answer<Verified>>, IntegrationError> {
    let Some(otp) = body.otp else {
        return Err(IntegrationError::invalid_message("/otp", "\"otp\" is a required property"));
    };
    let query = otp::Verify { phone: body.customer_number, otp };
    Ok(answer(state.platform.gateway.ask(&tenant, query).await?))
}

/// The body's fields as a patch of the brand's rules (applied by its actor in one turn).
fn rules_patch(body: &LoyaltyRulesRequest) -> RulesPatch {
    let referral = body.referral.as_ref();
    RulesPatch {
        earn_percent: decimal(&body.earn_percent),
        min_bill: decimal(&body.min_bill),
        point_value: decimal(&body.point_value),
        points_expiry_days: body.points_expiry_days,
        max_redeem_percent: decimal(&body.max_redeem_percent),
        min_redeem_points: body.min_redeem_points,
        otp_required: body.otp_required,
        referral: referral.map(referral_patch).unwrap_or_default(),
    }
}

fn referral_patch(patch: &ReferralPatch) -> loyalty_domain::ReferralPatch {
    loyalty_domain::ReferralPatch {
        enabled: patch.enabled,
        referrer_points: patch.referrer_points,
        referee_points: patch.referee_points,
        min_order_amount: decimal(&patch.min_order_amount),
        max_referrals: patch.max_referrals,
    }
}

/// `{message, rules}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RulesSaved {
    /// What was saved.
    message: &'static str,
    /// The brand's rules after the change.
    rules: LoyaltyRules,
}

/// `{rules}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RulesAnswer {
    /// The brand's rules.
    rules: LoyaltyRules,
}

/// `/crm_api/add_edit_rules`: `{status: true, message, rules}`.
async fn add_edit_rules(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<LoyaltyRulesRequest>,
) -> Result<Json<StaffAnswer<RulesSaved>>, StaffError> {
    let rules = state.platform.gateway.ask(&tenant, loyalty::SetRules { patch: rules_patch(&body) }).await?;
    Ok(staff_answer(RulesSaved { message: "loyalty rules saved", rules }))
}

/// `/crm_api/add_edit_milestone`: `{status: true, message, rules}`.
async fn add_edit_milestone(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<MilestonesRequest>,
) -> Result<Json<StaffAnswer<RulesSaved>>, StaffError> {
    let milestones = body.milestones.into_iter().map(|m| Milestone { orders: m.orders, bonus_points: m.bonus_points });
    let query = loyalty::SetMilestones { milestones: milestones.collect() };
    let rules = state.platform.gateway.ask(&tenant, query).await?;
    Ok(staff_answer(RulesSaved { message: "milestones saved", rules }))
}

/// `/integration/v1/configure_points`: `{status: 1, rules}`.
async fn configure_points(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<LoyaltyRulesRequest>,
) -> Result<Json<Answer<RulesAnswer>>, IntegrationError> {
    let rules = state.platform.gateway.ask(&tenant, loyalty::SetRules { patch: rules_patch(&body) }).await?;
    Ok(answer(RulesAnswer { rules }))
}

/// A redemption's answer: `{redeemed, wallet_balance, txn_id[, expires_at]}` (spec shape;
/// `wallet_balance` is the points balance after it; `expires_at` the deadline of a POS
/// redemption's order).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Redemption {
    redeemed: i64,
    wallet_balance: i64,
    txn_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl From<Redeemed> for Redemption {
    fn from(done: Redeemed) -> Self {
        Self { redeemed: done.redeemed, wallet_balance: done.wallet_balance, txn_id: done.txn_id, expires_at: None }
    }
}

/// The redemption a body asks for (`pending_minutes`: a POS redemption waiting for its order).
pub(super) fn redeem_query(body: RedeemPointsRequest, pending_minutes: Option<u64>) -> RedeemRequest {
    RedeemRequest {
        phone: body.customer_number,
        points: body.points,
        order_id: body.order_id,
        outlet_id: body.outlet_id,
        bill: body.bill_amount.map(|n| n.to_string()),
        pending_minutes,
        otp: body.otp,
    }
}

/// A final redemption of `points` for `order_id` (or a deduction's reference) by a customer body.
pub(super) fn user_redemption(body: IntegrationUserRequest, points: i64, order_id: String) -> RedeemRequest {
    RedeemRequest {
        phone: body.customer_number,
        points,
        order_id,
        outlet_id: body.outlet_id,
        bill: body.bill_amount.map(|n| n.to_string()),
        pending_minutes: None,
        otp: body.otp,
    }
}

/// `/integration/v1/redeem_points`: `{status: 1, redeemed, wallet_balance, txn_id}`.
async fn redeem_points(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<RedeemPointsRequest>,
) -> Result<Json<Answer<Redemption>>, IntegrationError> {
    let redeemed = state.platform.gateway.ask(&tenant, redeem_query(body, None)).await?;
    Ok(answer(Redemption::from(redeemed)))
}

/// A POS redemption: points are taken now; it stays pending until a POS order with this
/// `order_id` arrives, and the `pos_revoke` job reverts it after
/// `ENGAGE_POS_REDEMPTION_TTL_MINUTES` otherwise.
async fn pos_redemption(
    state: &AppState,
    tenant: &str,
    body: RedeemPointsRequest,
) -> Result<Redemption, engage_actors::QueryError> {
    let ttl = state.settings.pos_redemption_ttl_minutes;
    let redeemed = state.platform.gateway.ask(tenant, redeem_query(body, Some(ttl))).await?;
    let expires_at = redeemed.pending_until;
    Ok(Redemption { expires_at, ..Redemption::from(redeemed) })
}

/// `/api/redeemLoyalty`: `{status: 1, redeemed, wallet_balance, txn_id, expires_at}`.
async fn redeem_loyalty(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<RedeemPointsRequest>,
) -> Result<Json<Answer<Redemption>>, IntegrationError> {
    Ok(answer(pos_redemption(&state, &tenant, body).await?))
}

/// `/pos_e/v1/redeem_loyalty_points` (open): as `/api/redeemLoyalty`.
async fn pos_redeem_loyalty(
    State(state): State<AppState>,
    Open { tenant, body }: Open<RedeemPointsRequest>,
) -> Result<Json<Answer<Redemption>>, IntegrationError> {
    Ok(answer(pos_redemption(&state, &tenant, body).await?))
}

/// Revokes the redemption of the body's `order_id` now.
async fn revoke(state: &AppState, tenant: &str, body: CustomerLoyaltyRequest) -> Result<Revoked, IntegrationError> {
    let Some(order_id) = body.order_id else {
        return Err(IntegrationError::invalid_message("/order_id", "\"order_id\" is a required property"));
    };
    let query = Revoke { phone: body.customer_number, order_id, now: chrono::Utc::now().to_rfc3339(), force: true };
    Ok(state.platform.gateway.ask(tenant, query).await?)
}

/// `/api/revokeLoyalty`: `{status: 1, reverted, restored, wallet_balance}`.
async fn revoke_loyalty(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<CustomerLoyaltyRequest>,
) -> Result<Json<Answer<Revoked>>, IntegrationError> {
    Ok(answer(revoke(&state, &tenant, body).await?))
}

/// `/pos_e/v1/revoke_loyalty_points` (open): as `/api/revokeLoyalty`.
async fn pos_revoke_loyalty(
    State(state): State<AppState>,
    Open { tenant, body }: Open<CustomerLoyaltyRequest>,
) -> Result<Json<Answer<Revoked>>, IntegrationError> {
    Ok(answer(revoke(&state, &tenant, body).await?))
}

/// `{status: 1, customer_number, loyalty_points, redeemable_points, point_value, min_redeem_points,
/// max_redeem_percent}`; `redeemable_points` honours `bill_amount` when given.
async fn get_user_loyalty(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<CustomerLoyaltyRequest>,
) -> Result<Json<Answer<PointsBalance>>, IntegrationError> {
    let query = loyalty::Balance { phone: body.customer_number, bill: body.bill_amount.map(|n| n.to_string()) };
    Ok(answer(state.platform.gateway.ask(&tenant, query).await?))
}

/// `{status: 1, data: [ledger entries, oldest first], page, page_size, total, loyalty_points}`.
async fn get_wallet_ledger(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<CustomerLoyaltyRequest>,
) -> Result<Json<Answer<LedgerPage>>, IntegrationError> {
    let query = loyalty::Ledger {
        phone: body.customer_number,
        page: body.page.unwrap_or(1),
        page_size: body.page_size.unwrap_or(20),
    };
    Ok(answer(state.platform.gateway.ask(&tenant, query).await?))
}
