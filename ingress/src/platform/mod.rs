//! The customer engagement platform's HTTP routes (`spec/engagement-platform.md`).
//!
//! | spec area | module |
//! |---|---|
//! | Ingestion and POS routes (`/injestion/*`, `/api/ingestion/orderPush`, `/update/business/status`, `/insert/merchant/data`, `/sync/crm/token`, the `/crm_api/injestion/{pos}` serverless tier) | [`ingestion`] (one table, [`ingestion::ENQUEUE_ROUTES`]) |
//! | `/crm_api/get/customer/details`, `/crm_api/update/customer/details` | [`customers`] |
//! | `/chat/send`, `/chat/receipts`, chat login: `/crm_api/rider/chat/login`, `/crm_api/check/chat/login` | [`chat`] |
//! | `/crm_api/add_b_config`, `/crm_api/add_b_config/php` | [`business_config`] |
//! | `/crm_api/v2/dashboarData`, `/crm_api/v2/{chat_partner}/generatePartnerToken`, `/crm_api/v2/{chat_partner}/getPartnerProfile` | [`v2`] |
//! | loyalty: `/crm_api/add_edit_rules`, `/crm_api/add_edit_milestone`, `/crm_api/day/wise/data`, `/crm_api/get/referal/rules`, the legacy staff loyalty routes, `/integration/v1/configure_points`, `/integration/v1/redeem_points`, `/integration/v1/get_user_loyalty`, `/integration/v1/get_wallet_ledger`, `/api/*Loyalty*`, `/api/generateOTP` | [`loyalty`] |
//! | `/integration/v1` customer routes, `/pos_e/v1` loyalty routes | [`integration`] |
//! | rewards catalogue and coupons (`/integration/v1/*reward*`, `/pos_e/v1/*coupon*`) | [`rewards`] |
//! | fraud prevention: `/crm_api/configure_fraud_*`, blocklist, flags, checks, MIS | [`fraud`] |
//! | business wallets: `/crm_api/wallet/*` | [`wallet`] |
//! | automated journeys: `/crm_api/autoCampaign`, `/crm_api/get/campaign/*`, `/crm_api/save/campaign/journey`, `/crm_api/enable/automated/campaign/`, `/crm_api/view/campaign/journey`, `/crm_api/get/field/parameters`, `/crm_api/get/days/type/options`, `/crm_api/get/auto_campaign_users`, `/crm_api/view/sent/automated/campaigns`, `/crm_api/automated/campaigns/report`, `/crm_api/journeys/settings`, `/crm_api/create/campaign_tag`, `/crm_api/get/campaign_tags`, `/crm_api/create/bulk/campaign`, `GET /track/chat/link/{token}` | [`journeys`] |
//! | digital bills: `/crm_api/links/*`, `/crm_api/update/bill/status`, `/crm_api/get_digital_bill_customers`, `/crm_api/get_digital_bill_mis`, `/crm_api/invoice/open`, `/crm_api/feedback_invoice/open`, `/crm_api/update/widget/insight`, `/crm_api/invoice/download`, `GET /b/{bill_id}` | [`bills`] (the page: [`bill_page`]) |
//! | feedback, ratings and NPS: `/crm_api/{save,get}/feedback/config`, `/crm_api/{nps/data,npsList,npsData,download/nps/data,orders_summary,legacy/feedback_sms}`, `/crm_api/fetch_feedback_customers`, `/crm_api/feedback_form_interaction_mis`, `/crm_api/get/{rating_list,rating_count_datewise,hear_about_us_source,latest_rating}`, `GET`/`POST /f/{token}` | [`feedback`] (the form: [`feedback_page`]) |
//! | dashboard metrics: `/stats/dashboard/summary`, `/stats/metrics/*`, `/stats/special-days` | [`stats`] (the rollups: `engage_actors::capabilities::stats`) |
//! | the web dashboard: `GET /dashboard` | [`dashboard`] (`dashboard.html`) |
//! | auth families | [`auth`], stored tokens [`tokens`], `/admin/tokens` [`admin`], who may touch what [`access`], `/crm_api/open_routes/settings` [`open_routes`] |
//! | parked events: `/admin/dead-letters` | [`dead_letters`] |
//! | error families | [`errors`] |
//! | request bodies (JSON or url-encoded), their types and schemas | [`body`], [`requests`], [`schemas`] |
//! | the typed edge: auth-family extractors, answers | [`edge`] |
//! | staff CSV uploads (multipart form, `Phone` column) | [`upload`] |

// Route helpers return `Result<_, Response>`: the refusal is the answer itself, built at most once
// per request, so boxing it would only add an allocation.
#![allow(clippy::result_large_err)]

pub mod access;
pub mod admin;
pub mod auth;
pub mod bill_page;
pub mod bills;
pub mod body;
pub mod business_config;
pub mod chat;
pub mod coerce;
pub mod customers;
pub mod dashboard;
pub mod dead_letters;
pub mod edge;
pub mod errors;
pub mod feedback;
pub mod feedback_page;
pub mod fraud;
pub mod ingestion;
pub mod integration;
pub mod journeys;
pub mod loyalty;
pub mod open_routes;
pub mod requests;
pub mod rewards;
pub mod schemas;
pub mod scopes;
pub mod stats;
pub mod tokens;
pub mod upload;
pub mod v2;
pub mod wallet;

use std::sync::Arc;

use axum::Router;
use serde_json::{json, Map, Value};

use engage_actors::TenantGateway;
use engage_streams::Bus;

use crate::AppState;
use auth::Auth;

/// What the platform routes share.
pub struct PlatformState {
    /// The bus orders are published on.
    pub bus: Arc<dyn Bus>,
    /// Questions to tenant actors (local or by NATS).
    pub gateway: TenantGateway,
    /// Stored tokens.
    pub tokens: tokens::TokenStore,
    /// Compiled body schemas.
    pub schemas: schemas::PlatformSchemas,
    /// Key of the loopback admin routes.
    pub admin_key: String,
    /// Direct table access for reads and brand configuration that need no tenant actor.
    pub repo: engage_actors::repo::Repo,
    /// The scheduled jobs, on processes that run the engine.
    pub jobs: Option<Arc<engage_actors::jobs::Jobs>>,
    /// Verifies chat tracking links.
    pub links: engage_actors::links::Links,
    /// Whether the spec's open routes are open (for all brands, and per brand).
    pub open_routes: access::OpenRoutes,
    /// The per-client limit of the open routes that read or change a customer
    /// (`ENGAGE_OPEN_ROUTES_RATE_LIMIT`), when on.
    pub open_limiter: Option<Arc<crate::rate_limit::CallerLimiter>>,
}

/// Every platform route.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(ingestion::router())
        .merge(customers::router())
        .merge(chat::router())
        .merge(loyalty::router())
        .merge(integration::router())
        .merge(rewards::router())
        .merge(fraud::router())
        .merge(wallet::router())
        .merge(journeys::router())
        .merge(bills::router())
        .merge(feedback::router())
        .merge(stats::router())
        .merge(dashboard::router())
        .merge(business_config::router())
        .merge(v2::router())
        .merge(admin::router())
        .merge(open_routes::router())
        .merge(dead_letters::router())
}

/// The error family of a platform route (by its path template), read off `/openapi.json`: what
/// its 400 answer is. `None` for routes that are not the platform's (the log service's family).
fn family_of(route: &str) -> Option<Family> {
    static FAMILIES: std::sync::OnceLock<std::collections::HashMap<String, Family>> = std::sync::OnceLock::new();
    FAMILIES
        .get_or_init(|| {
            let (paths, _, _) = openapi();
            let mut families = std::collections::HashMap::new();
            for (path, item) in paths {
                let refs = item.as_object().into_iter().flat_map(|ops| ops.values()).filter_map(|op| {
                    op.pointer("/responses/400/content/application~1json/schema/$ref").and_then(Value::as_str)
                });
                for reference in refs {
                    let family =
                        if reference.ends_with("IntegrationErrorBody") { Family::Integration } else { Family::Staff };
                    families.insert(path.clone(), family);
                }
            }
            families
        })
        .get(route)
        .copied()
}

#[derive(Clone, Copy)]
enum Family {
    Integration,
    Staff,
}

/// The JSON body of a 405 or 415 answer in the route's family (axum's own have none).
pub fn refusal(route: &str, status: axum::http::StatusCode) -> axum::response::Response {
    let (code, message) = if status == axum::http::StatusCode::METHOD_NOT_ALLOWED {
        ("METHOD_NOT_ALLOWED", "this route does not take that method (the Allow header lists those it takes)")
    } else {
        ("UNSUPPORTED_MEDIA_TYPE", "unsupported content-type: send the body as application/json")
    };
    let body = match family_of(route) {
        Some(Family::Integration) => {
            json!({"status": 0, "error_code": format!("xE_{}", status.as_u16()), "error_message": message})
        }
        Some(Family::Staff) => json!({"message": message}),
        None => json!({"error": code, "message": message}),
    };
    axum::response::IntoResponse::into_response((status, axum::Json(body)))
}

/// Routes that move fraud flags: 409 when the transition is refused.
const FLAG_ROUTES: &[&str] = &["/crm_api/block_unblock_resolve_contacts", "/crm_api/mark_resolve_contacts"];

pub(crate) fn operation(summary: &str, auth: Auth, schema: &str, ok: Value) -> Value {
    let error = json!({"$ref": "#/components/schemas/IntegrationErrorBody"});
    let mut responses = if matches!(auth, Auth::Staff | Auth::App | Auth::Ingestion) {
        // the staff family: `{message[, errors]}`
        let staff = json!({"$ref": "#/components/schemas/StaffErrorBody"});
        json!({
            "200": {"description": "accepted", "content": {"application/json": {"schema": ok}}},
            "400": {"description": "{message: \"invalid request\", errors} (body not JSON, schema violation, bad field)", "content": {"application/json": {"schema": staff}}},
            "413": {"description": "{message: \"the body exceeds 1048576 bytes\"}", "content": {"application/json": {"schema": staff}}},
            "503": {"description": "{message: \"temporarily unavailable; retry\"}: the tenant's owner is unavailable", "content": {"application/json": {"schema": staff}}},
        })
    } else {
        json!({
            "200": {"description": "accepted", "content": {"application/json": {"schema": ok}}},
            "400": {"description": "xE_102 invalid request (body not JSON, schema violation, missing parentBusinessId)", "content": {"application/json": {"schema": error}}},
            "413": {"description": "xE_413 the body exceeds 1048576 bytes", "content": {"application/json": {"schema": error}}},
            "503": {"description": "xE_503 the queue or the tenant's owner is unavailable; retry", "content": {"application/json": {"schema": error}}},
        })
    };
    if auth == Auth::None {
        responses["401"] = json!({"description": "xE_101: the open routes are closed (ENGAGE_OPEN_ROUTES=closed, or the brand's /crm_api/open_routes/settings) and no integration token of the brand was sent", "content": {"application/json": {"schema": error}}});
        responses["403"] = json!({"description": "xE_103: the open routes are closed and the integration token is another brand's (or another outlet's)", "content": {"application/json": {"schema": error}}});
        responses["429"] = json!({"description": "xE_429 over the per-client limit of the open routes (ENGAGE_OPEN_ROUTES_RATE_LIMIT)", "content": {"application/json": {"schema": error}}});
    }
    match auth {
        Auth::Integration => {
            responses["401"] = json!({"description": "xE_101 Authentication Failed", "content": {"application/json": {"schema": error}}});
            responses["403"] = json!({"description": "xE_103 parentBusinessId differs from the token's", "content": {"application/json": {"schema": error}}});
        }
        Auth::Staff | Auth::Ingestion | Auth::App => {
            responses["403"] = json!({"description": "{message: \"invalid credentials\"}; {message: \"not allowed for this business\"} for a body naming another brand, or (outlet-limited tokens) another outlet or a brand-level route", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}});
            responses["500"] = json!({"description": "{message: \"authentication failed\"} (the check itself failed)"});
        }
        Auth::InternalJwt => responses["401"] = json!({"description": "{message: \"invalid token\"}"}),
        Auth::None => {}
    }
    let mut op = json!({
        "summary": summary,
        "tags": ["platform"],
        "requestBody": {"required": true, "content": {
            "application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}},
            "application/x-www-form-urlencoded": {"schema": {"$ref": format!("#/components/schemas/{schema}")}},
        }},
        "responses": responses,
    });
    op["security"] = match auth.scheme() {
        Some(scheme) => json!([{ scheme: [] }]),
        // open as the spec has it; an integration token once the operator or the brand closed it
        None => json!([{}, {"integrationToken": []}]),
    };
    if auth == Auth::None {
        op["x-engage-open"] = json!(true);
    }
    if let Some(scope) = requests::scope_of(schema) {
        op["x-engage-scope"] = json!(scope.as_str());
    }
    op
}

/// Path items and components of the platform routes, for `/openapi.json`.
pub fn openapi() -> (Map<String, Value>, Map<String, Value>, Map<String, Value>) {
    let ack = json!({"type": "object", "properties": {"status": {"const": 1}}, "required": ["status"]});
    let mut paths = Map::new();
    for route in ingestion::ENQUEUE_ROUTES {
        paths.insert(route.path.to_owned(), json!({"post": ingestion::enqueue_operation(route, ack.clone())}));
    }
    let customer = json!({"$ref": "#/components/schemas/CustomerDetails"});
    let instant = &ingestion::INSTANT_ORDER;
    paths.insert(
        instant.path.to_owned(),
        json!({"post": ingestion::enqueue_operation(instant,
            json!({"type": "object", "properties": {"status": {"const": 1}, "processed": {"type": "boolean"}, "customer": customer}}))}),
    );
    let mut details = operation(
        "Customer details (synchronous read from the tenant's actor); 404 xE_404 when unknown",
        Auth::None,
        "CustomerDetailsRequest",
        json!({"type": "object", "properties": {"status": {"const": 1}, "customer": customer}}),
    );
    details["responses"]["404"] = json!({"description": "xE_404 customer not found"});
    paths.insert("/crm_api/get/customer/details".to_owned(), json!({"post": details}));
    paths.insert(
        "/crm_api/update/customer/details".to_owned(),
        json!({"post": operation("Update a customer's name, email, gender or dob", Auth::Staff, "UpdateCustomerRequest",
            json!({"type": "object", "properties": {"status": {"const": 1}, "message": {"type": "string"}, "customer": customer}}))}),
    );
    paths.insert("/chat/send".to_owned(), json!({"post": operation("Publish a chat message to engage.chat.messages", Auth::InternalJwt, "ChatEvent", ack.clone())}));
    // the chat provider's webhook: open, and not closable (receipts are the provider's, for every brand)
    let mut receipts =
        operation("Publish a chat-provider receipt to engage.chat.receipts", Auth::None, "ChatEvent", ack);
    receipts["security"] = json!([]);
    if let Some(op) = receipts.as_object_mut() {
        op.remove("x-engage-open");
    }
    if let Some(responses) = receipts["responses"].as_object_mut() {
        for code in ["401", "403", "429"] {
            responses.remove(code);
        }
    }
    paths.insert("/chat/receipts".to_owned(), json!({"post": receipts}));

    let object = json!({"type": "object"});
    for (path, auth, schema, summary) in [
        ("/crm_api/add_edit_rules", Auth::Staff, "LoyaltyRulesRequest", "Add or edit the brand's loyalty rules (fields left out keep their value)"),
        ("/crm_api/add_edit_milestone", Auth::Staff, "MilestonesRequest", "Replace the brand's milestone bonuses"),
        ("/integration/v1/configure_points", Auth::Integration, "LoyaltyRulesRequest", "Configure the token's brand's loyalty rules"),
        ("/integration/v1/redeem_points", Auth::Integration, "RedeemPointsRequest", "Redeem points for an order: {status, redeemed, wallet_balance, txn_id}; xE_105 insufficient, xE_106 below minimum, xE_107 over the bill share"),
        ("/integration/v1/get_user_loyalty", Auth::Integration, "CustomerLoyaltyRequest", "A customer's points and redeemable points"),
        ("/api/checkLoyaltyRewards", Auth::Integration, "CustomerLoyaltyRequest", "A customer's points and redeemable points (POS)"),
        ("/integration/v1/get_wallet_ledger", Auth::Integration, "CustomerLoyaltyRequest", "A page of the customer's points ledger, oldest first"),
        ("/crm_api/configure_fraud_wallet_rules", Auth::Staff, "FraudWalletRulesRequest", "Set velocity limits (L allowed per IST period; the L+1-th is a breach)"),
        ("/crm_api/configure_fraud_alert_settings", Auth::Staff, "FraudAlertSettingsRequest", "Set fraud alert recipients, channel and template"),
        ("/crm_api/get_fraud_configuration", Auth::Staff, "FraudQueryRequest", "Read velocity limits and alert settings"),
        ("/crm_api/delete_blocklist_contacts", Auth::Staff, "FraudQueryRequest", "Delete blocklist entries (contacts[])"),
        ("/crm_api/block_unblock_resolve_contacts", Auth::Staff, "FraudQueryRequest", "status 2 blocks (flagged -> blocked), 3 unblocks (blocked -> unblocked); 409 when refused"),
        ("/crm_api/mark_resolve_contacts", Auth::Staff, "FraudQueryRequest", "Resolve flagged contacts (flagged -> resolved)"),
        ("/crm_api/get_blocklist_contacts", Auth::Staff, "FraudQueryRequest", "Paginated blocklist"),
        ("/crm_api/api/v1/fraud/evaluate-customer", Auth::Staff, "FraudQueryRequest", "Blocked state, open flags, velocity counts and limits of a contact"),
        ("/crm_api/view_fraud_customers", Auth::Staff, "FraudQueryRequest", "Paginated flags, newest first, optionally by status"),
        ("/crm_api/group_list_fraud_contacts", Auth::Staff, "FraudQueryRequest", "Flags grouped by contact"),
        ("/crm_api/get_fraud_list_mis", Auth::Staff, "FraudQueryRequest", "Flag counts by fraud type and status between start and end"),
        ("/crm_api/send_fraud_alert", Auth::Staff, "FraudQueryRequest", "Queue the fraud alert about `contact` to the alert recipients, debiting `business_id`'s wallet per message (skipped below the channel cost)"),
        ("/api/redeemLoyalty", Auth::Integration, "RedeemPointsRequest", "POS redemption: pending until its order arrives; the revoke job reverts it after ENGAGE_POS_REDEMPTION_TTL_MINUTES otherwise"),
        ("/api/revokeLoyalty", Auth::Integration, "CustomerLoyaltyRequest", "Revoke the redemption of order_id now: points restored, ledger row status 2"),
        ("/integration/v1/create_user", Auth::Integration, "IntegrationUserRequest", "Create or update a customer of the token's brand"),
        ("/integration/v1/get_user_profile", Auth::Integration, "IntegrationUserRequest", "A customer's profile and totals"),
        ("/integration/v1/update_user_profile", Auth::Integration, "IntegrationUserRequest", "Update name, email, gender or dob"),
        ("/integration/v1/fcm_token_ingestion", Auth::Integration, "IntegrationUserRequest", "Register a push token (fcm_token)"),
        ("/integration/v1/deduct_wallet_points", Auth::Integration, "IntegrationUserRequest", "Deduct points once per reference: {status, deducted, wallet_balance, txn_id}"),
        ("/api/generateOTP", Auth::Integration, "IntegrationUserRequest", "Send the customer a one-time password by SMS (business_id's wallet pays)"),
        ("/pos_e/v1/authenticate_points_redemption", Auth::None, "IntegrationUserRequest", "Check a one-time password: opens a 5-minute window for one POS redemption"),
        ("/pos_e/v1/get_loyalty_details", Auth::None, "IntegrationUserRequest", "A customer's points (brand in parent_business_id)"),
        ("/pos_e/v1/redeem_loyalty_points", Auth::None, "RedeemPointsRequest", "POS redemption, pending until the order arrives"),
        ("/pos_e/v1/revoke_loyalty_points", Auth::None, "CustomerLoyaltyRequest", "Revoke the redemption of order_id"),
        ("/pos_e/v1/update_pos_customer_details", Auth::None, "IntegrationUserRequest", "Create or update a customer (brand in parent_business_id)"),
        ("/crm_api/fetch_loyalty_details", Auth::Staff, "LoyaltyRulesRequest", "The brand's loyalty rules and active rewards"),
        ("/crm_api/loyalty/ledger", Auth::Staff, "IntegrationUserRequest", "A customer's points ledger (parent_business_id, customer_number, page, page_size)"),
        ("/crm_api/redeem_points", Auth::Staff, "IntegrationUserRequest", "Redeem points by staff (customer_number, points, order_id)"),
        ("/crm_api/day/wise/data", Auth::Staff, "DayWiseRequest", "Loyalty figures per IST day (earned, bonus, referral, redeemed, restored, expired, customers) and totals"),
        ("/crm_api/get/referal/rules", Auth::Staff, "LoyaltyRulesRequest", "The brand's refer-and-earn programme"),
        ("/crm_api/get/loyalty/rules/details", Auth::Integration, "LoyaltyRulesRequest", "The token's brand's loyalty rules"),
        ("/crm_api/get/customer/loyalty/details", Auth::App, "CouponRequest", "The app user's customer record and loyalty (no body needed)"),
        ("/crm_api/view/all/rewards", Auth::App, "CouponRequest", "The catalogue, with affordable for the app user (no body needed)"),
        ("/crm_api/view/expired/redeemed/rewards", Auth::App, "CouponRequest", "The app user's coupons that are redeemed, revoked or expired (no body needed)"),
        ("/crm_api/add_edit_reward", Auth::Staff, "RewardRequest", "Add or edit a reward of the brand's catalogue"),
        ("/integration/v1/get_rewards", Auth::Integration, "CouponRequest", "Active rewards (affordable for customer_number when given)"),
        ("/integration/v1/purchase_rewards", Auth::Integration, "CouponRequest", "Buy a reward with points: a coupon is issued"),
        ("/integration/v1/redeem_rewards", Auth::Integration, "CouponRequest", "Use a coupon on an order"),
        ("/integration/v1/revoke_reward", Auth::Integration, "CouponRequest", "Revoke an unused coupon: its points come back"),
        ("/pos_e/v1/get_coupon_details", Auth::None, "CouponRequest", "A coupon (brand in parent_business_id)"),
        ("/pos_e/v1/redeem_coupon_details", Auth::None, "CouponRequest", "Use a coupon on an order (brand in parent_business_id)"),
        ("/crm_api/wallet/recharge", Auth::Staff, "WalletRequest", "Credit a business wallet (a payment reference is applied once)"),
        ("/crm_api/wallet/balance", Auth::Staff, "WalletRequest", "A business wallet's balance (decimal string)"),
        ("/crm_api/wallet/transactions", Auth::Staff, "WalletRequest", "A page of a business wallet's transactions"),
        ("/crm_api/get/campaign/type/ids", Auth::Staff, "JourneyCatalogueRequest", "The journey types, with the brand's configured and enabled counts per type (roi)"),
        ("/crm_api/get/campaign/fields", Auth::Staff, "JourneyCatalogueRequest", "The form fields of a journey type (campaign_type_id)"),
        ("/crm_api/get/field/parameters", Auth::Staff, "JourneyCatalogueRequest", "One field of a journey type's form, with its options (campaign_type_id, ref_id)"),
        ("/crm_api/get/days/type/options", Auth::Staff, "JourneyCatalogueRequest", "The six send-timing options (send_days_type ids)"),
        ("/crm_api/autoCampaign", Auth::Staff, "AutoCampaignRequest", "Add a journey type (campaign_type must be new)"),
        ("/crm_api/save/campaign/journey", Auth::Staff, "SaveJourneyRequest", "Save the journey of (brand, outlet, type): {status, message, campaign_journey_id}; the same triple again updates it; an unknown campaign_type_id is 400"),
        ("/crm_api/enable/automated/campaign/", Auth::Staff, "JourneyRequest", "Turn a journey on or off: {status, campaign_journey_id, campaign_enabled}; 404 for an unknown journey"),
        ("/crm_api/view/campaign/journey", Auth::Staff, "JourneyRequest", "A journey configuration, for editing; 404 for an unknown journey"),
        ("/crm_api/get/campaign/mapped/business", Auth::Staff, "JourneyRequest", "The brand's journeys grouped by outlet, each with its ROI (per mode; sent vs holdout conversion and lift); child_business_id optional. auto_campaign (of the brand, and of each outlet) is the business_configs flag the daily 12:47 auto_campaign_sync job sets (null before its first run)"),
        ("/crm_api/get/auto_campaign_users", Auth::Staff, "JourneyReportRequest", "A page of a journey's audience: each customer's decision (sent, holdout, skipped with reason), messages and attributed orders and revenue: {status, data, total, page, page_size}"),
        ("/crm_api/view/sent/automated/campaigns", Auth::Staff, "JourneyReportRequest", "The journey send history, newest day first: {status, data: [{campaign_journey_id, businessId, parentBusinessId, run_day, sent_count, holdout_count, skipped, started_at, completed_at}]}"),
        ("/crm_api/automated/campaigns/report", Auth::Staff, "JourneyReportRequest", "The wallet transactions of a campaign (auto_id), of one outlet or all: {status, data, count, total_debited}"),
        ("/crm_api/create/campaign_tag", Auth::Staff, "CampaignTagRequest", "Add a campaign tag (tag_name unique per brand regardless of letter case; 400 at /tag_name otherwise): {status, message, data: {tag_id, tag_name, color, created_at}}"),
        ("/crm_api/get/campaign_tags", Auth::Staff, "CampaignTagRequest", "The brand's campaign tags by name: {status, data}"),
        ("/crm_api/journeys/settings", Auth::Staff, "JourneySettingsRequest", "Read or change the brand's quiet hours and frequency cap: {status, data: {quiet_hours, frequency_cap}}"),
        ("/crm_api/wallet/get_pricing", Auth::Staff, "WalletPricingRequest", "The brand's price table for paid messages: {status, pricing} (the spec's values until one is set)"),
        ("/crm_api/wallet/set_pricing", Auth::Staff, "WalletPricingRequest", "Change the brand's price table (fields left out keep their value): {status, message, pricing}"),
        ("/crm_api/links/getWidgetList", Auth::Staff, "BillRequest", "The widget catalogue: {status, data: [{id, name, kind, status}]} (six kinds)"),
        ("/crm_api/links/addBusinessConfig", Auth::Staff, "BillConfigRequest", "Create or replace a business's digital-bill configuration (business_id left out: the brand's own, parentId \"0\"): {status: 1, message, data: link_config}"),
        ("/crm_api/update/bill/status", Auth::Staff, "BillRequest", "Turn a business's bills on or off (status 0/1; also business_configs.digital_bill): {status: 1, message, data, digital_bill}; 404 when it has no configuration"),
        ("/crm_api/links/getBusinessConfig", Auth::Staff, "BillRequest", "A business's configuration, the brand's when it has none (inherited), and its widgets: {status, data: {config, inherited, widgets}}"),
        ("/crm_api/links/addWidget", Auth::Staff, "WidgetRequest", "Map a catalogue widget (widget_id) for a business: {status: 1, message, data: widget}; 400 when the business has that kind already"),
        ("/crm_api/links/editWidget", Auth::Staff, "WidgetRequest", "Change a widget mapping (id): {status: 1, message, data: widget}; 404 unknown"),
        ("/crm_api/get_digital_bill_customers", Auth::Staff, "BillRequest", "Bills sent, newest first, 10 a page (business_id, start, end optional): {status, data: [bill customer record], total, page, page_size}"),
        ("/crm_api/get_digital_bill_mis", Auth::Staff, "BillRequest", "The funnel between start and end (IST days): {status, data: {totals: {total_bill_sent, total_clicks, unique_clicks, total_sms_sent, total_chat_sent}, opening_percentage (unique_clicks / total_bill_sent, %), days: [per day and outlet]}}"),
        ("/crm_api/invoice/open", Auth::Ingestion, "BillEventRequest", "Count an open: clicked + 1; the day's total_clicks + 1, unique_clicks + 1 on the first open: {status: 1, counted, clicked}; an unknown bill_id changes nothing (counted false)"),
        ("/crm_api/feedback_invoice/open", Auth::Ingestion, "BillEventRequest", "Count an open of the bill's feedback link: {status: 1, counted, feedback_opens}"),
        ("/crm_api/update/widget/insight", Auth::Ingestion, "WidgetInsightRequest", "A widget click (clicks + 1) or watch time (watchTime set): {status: 1, counted}. Also accepts the bill page's own token (Authorization: Bearer), for its bill only"),
        ("/crm_api/invoice/download", Auth::Ingestion, "BillEventRequest", "Count a download: download_flag + 1: {status: 1, counted, download_flag}"),
        ("/crm_api/save/feedback/config", Auth::Staff, "FeedbackConfigRequest", "Create or replace a business's feedback configuration (engage's route; child_business_id \"0\" is the brand's): {status: 1, message, data}"),
        ("/crm_api/get/feedback/config", Auth::Staff, "FeedbackReadRequest", "A business's feedback configuration (child_business_id, \"0\" by default): {status, data}; 404 without one"),
        ("/crm_api/fetch_feedback_customers", Auth::Staff, "FeedbackReadRequest", "Feedback links sent, newest first, 20 a page: {status, data: [{child_business_id, order_id, mobile_number, name, channels, url, sent_at, scheduled_at, clicks, is_submitted, rating}], total, page, page_size}"),
        ("/crm_api/feedback_form_interaction_mis", Auth::Staff, "FeedbackReadRequest", "The feedback funnel between start and end (IST days): {status, data: {totals: {total_feedback_sent, total_clicks, unique_clicks, total_submitted}, days}}"),
        ("/crm_api/legacy/feedback_sms", Auth::Staff, "LegacySmsRequest", "Put a row of the legacy feedback SMS queue (engage's route, for rows left by the legacy system): a gateway URL the legacy_feedback_drain job calls by GET (processed 0 -> 2 -> 1): {status: 1, id}"),
        ("/crm_api/orders_summary", Auth::Staff, "FeedbackReadRequest", "Orders of start..end (IST days, at most 31), each once (its latest version), newest first, 20 a page, with whether the customer's number can be sent a link ([6-9] and 9 digits, not sequential, not one digit repeated): {status, data, total_orders, valid_numbers, invalid_numbers, page, page_size}"),
        ("/crm_api/get/rating_list", Auth::Staff, "FeedbackReadRequest", "Ratings, newest first, 20 a page: source 1 or 2 (or none) engage's own ratings; 3 (store A) and 4 (store B) the app-store reviews the review_sync job stored, each the store's own record ({reviewId, reviewer, comment, reply, starRating, createTime, lastModified, parent_business_id} / {id, parent_business_id, appId, attributes}): {status, data, total, page, page_size}"),
        ("/crm_api/get/rating_count_datewise", Auth::Staff, "FeedbackReadRequest", "Ratings per IST day: {status, data: [{date, rating_count, avg_rating}], ratings_done, avg_rating}"),
        ("/crm_api/get/hear_about_us_source", Auth::Staff, "FeedbackReadRequest", "How customers heard about the brand (the form's answers): {status, data: [{source, count}]}"),
        ("/crm_api/get/latest_rating", Auth::Staff, "FeedbackReadRequest", "The latest 5-star ratings with a comment of 100 characters or more (10, newest first): {status, data}"),
        ("/crm_api/npsList", Auth::Staff, "NpsRequest", "NPS responses, newest first, 20 a page (rating, mobile_number filter): {status: 1, data: [{mobileNo, rating, questions, businessId, order_id, insertedAt, validTill, nps_id, source}], total}; an empty page is data []"),
        ("/crm_api/npsData", Auth::Staff, "NpsRequest", "NPS between start and end (IST days): {status, data: {buckets: {promoter_from, passive_from}, brand: {total, promoters, passives, detractors, nps}, outlets: [same per businessId]}}; nps = % promoters - % detractors"),
    ] {
        let mut op = operation(summary, auth, schema, object.clone());
        // every tenant route can name a customer, coupon or reward the brand does not have
        let family =
            if matches!(auth, Auth::Staff | Auth::App | Auth::Ingestion) { "StaffErrorBody" } else { "IntegrationErrorBody" };
        let body = json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{family}")}}});
        op["responses"]["404"] = json!({"description": "not found (customer, coupon, reward or journey)", "content": body});
        if auth == Auth::None {
            // the open /pos_e/v1 routes: a fraud denial (fraud_detected) or a refused one-time password
            op["responses"]["403"] = json!({"description": "xE_108/xE_109 fraud_detected denial, xE_112 one-time password refused", "content": body});
        }
        if path == "/crm_api/update/widget/insight" {
            op["security"] = json!([{"ingestionToken": []}, {"billPageToken": []}]);
        }
        if FLAG_ROUTES.contains(&path) {
            op["responses"]["409"] = json!({"description": "the flag transition is refused in the contact's state", "content": body});
        }
        paths.insert(path.to_owned(), json!({"post": op}));
    }
    for (path, _, summary) in stats::METRICS {
        let mut op = operation(summary, Auth::Staff, "StatsRequest", object.clone());
        op["tags"] = json!(["stats"]);
        paths.insert(path.to_owned(), json!({"post": op}));
    }
    let mut special = operation(
        "Mark IST days special for /stats/metrics/special-days (weekends always are), or unmark them (remove): {status, data: {days: [{date, label}]}}",
        Auth::Staff,
        "SpecialDaysRequest",
        object.clone(),
    );
    special["tags"] = json!(["stats"]);
    paths.insert("/stats/special-days".to_owned(), json!({"post": special}));
    let integration_error =
        json!({"application/json": {"schema": {"$ref": "#/components/schemas/IntegrationErrorBody"}}});
    let refusal = |description: &str| json!({"description": description, "content": integration_error.clone()});
    let mut add_config = operation(
        "Set fields of a business's configuration record (business_id \"0\": the brand's own); fields left out keep their value, null removes one: {status: 1, message, data: record}",
        Auth::Staff,
        "BusinessConfigRequest",
        object.clone(),
    );
    add_config["responses"]["404"] = json!({"description": "not found"});
    paths.insert("/crm_api/add_b_config".to_owned(), json!({"post": add_config}));
    let mut add_config_open = operation(
        "The same as /crm_api/add_b_config without a token (the legacy PHP back-end's route; reach it only from that network): {status: 1, message, data: record}",
        Auth::None,
        "BusinessConfigRequest",
        object.clone(),
    );
    add_config_open["responses"]["429"] = refusal("xE_429 over the optional per-client rate limit");
    paths.insert("/crm_api/add_b_config/php".to_owned(), json!({"post": add_config_open}));
    let mut dashboard_data = operation(
        "The dashboard summary for the CRM. Without a token header only {parent_business_id, period, has_orders, active_outlets}; with a staff token of the brand (token:) the /stats/dashboard/summary answer: {status: 1, data}",
        Auth::None,
        "StatsRequest",
        object.clone(),
    );
    dashboard_data["responses"]["401"] = refusal("xE_101 a token header that is not a staff token of the brand");
    dashboard_data["responses"]["429"] = refusal("xE_429 over the optional per-client rate limit");
    paths.insert("/crm_api/v2/dashboarData".to_owned(), json!({"post": dashboard_data}));
    let partner = json!([{"name": "chat_partner", "in": "path", "required": true,
                          "schema": {"type": "string", "pattern": "^[a-z0-9_-]{1,32}$"}}]);
    for (path, schema, summary) in [
        ("/crm_api/v2/{chat_partner}/generatePartnerToken", "PartnerTokenRequest",
         "A chat partner's token for the brand (1 hour), given an integration token of the brand as api_key: {status: 1, partner, token, token_type, expires_in, expires_at}"),
        ("/crm_api/v2/{chat_partner}/getPartnerProfile", "PartnerProfileRequest",
         "What a partner token is for: {status: 1, data: {partner, parent_business_id, business_id, expires_at, business}}"),
    ] {
        let mut op = operation(summary, Auth::None, schema, object.clone());
        op["parameters"] = partner.clone();
        op["responses"]["401"] = refusal("xE_101 not the brand's integration token, or a token of another partner or brand, or expired");
        op["responses"]["429"] = refusal("xE_429 over the optional per-client rate limit");
        paths.insert(path.to_owned(), json!({"post": op}));
    }
    let mut rider = operation(
        "A delivery rider's chat login for one order of the outlet: {status: 1, token (12 hours), expires_at, chat: {parent_business_id, business_id, order_id, customer_name}}",
        Auth::None,
        "RiderLoginRequest",
        object.clone(),
    );
    rider["responses"]["404"] = refusal("xE_404 the outlet has no such order");
    rider["responses"]["429"] = refusal("xE_429 over the optional per-client rate limit");
    paths.insert("/crm_api/rider/chat/login".to_owned(), json!({"post": rider}));
    paths.insert(
        "/crm_api/check/chat/login".to_owned(),
        json!({"post": operation(
            "Is a chat token (a rider's or a chat partner's) valid: {status: 1, valid: true, role, parent_business_id, business_id, order_id, subject, expires_at} or {status: 1, valid: false, reason}",
            Auth::InternalJwt,
            "ChatCheckRequest",
            object.clone(),
        )}),
    );
    paths.insert(
        "/dashboard".to_owned(),
        json!({"get": {
            "summary": "The web dashboard: one HTML page (sign in with a staff token; it reads the /stats routes)",
            "tags": ["stats"],
            "security": [],
            "responses": {"200": {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}}}}}),
    );
    let mut upload = operation(
        "Upload blocklist contacts: multipart with parent_business_id and file (CSV with a Phone column; 10 digits not starting 0-5)",
        Auth::Staff,
        "FraudQueryRequest",
        object.clone(),
    );
    upload["requestBody"] = json!({"required": true, "content": {"multipart/form-data": {"schema": {"type": "object",
        "required": ["parent_business_id", "file"],
        "properties": {"parent_business_id": {"type": "string"}, "file": {"type": "string", "format": "binary"}}}}}});
    let upload_limit = json!({"description": "{message: \"the body exceeds N bytes\"}: N is ENGAGE_MAX_UPLOAD_BYTES (default 5242880)",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}});
    upload["responses"]["413"] = upload_limit.clone();
    paths.insert("/crm_api/upload_blocklist_contacts".to_owned(), json!({"post": upload}));
    let mut bulk = operation(
        "Create a bulk campaign: multipart with parent_business_id, business_id (the paying outlet), campaign_name, channel (sms or chat), template_id, an optional message (x_cust_name, x_cust_mobile, x_cust_eid replaced) and file (CSV with a Phone column and optionally Name). Each valid distinct number (10 digits from 6; +91/91/0 prefixes dropped) gets one message, paid by the outlet's wallet (campaign price, auto_id bulk-<campaign_id>), queued for today's drain; a wallet that runs short leaves the rest unpaid (not sent). Bad rows are listed with their line numbers; a file without one valid number is a 400.",
        Auth::Staff,
        "FraudQueryRequest",
        json!({"type": "object", "required": ["status", "campaign_id", "queued_recipients"], "properties": {
            "status": {"const": 1}, "campaign_id": {"type": "integer", "minimum": 1},
            "queued_recipients": {"type": "integer"}, "unpaid": {"type": "integer"},
            "auto_id": {"type": "string"}, "delivery_date": {"type": "string"},
            "invalid": {"type": "array", "items": {"type": "object"}},
            "duplicates": {"type": "array", "items": {"type": "object"}}}}),
    );
    bulk["requestBody"] = json!({"required": true, "content": {"multipart/form-data": {"schema": {"type": "object",
        "required": ["parent_business_id", "business_id", "campaign_name", "channel", "template_id", "file"],
        "properties": {"parent_business_id": {"type": "string"}, "business_id": {"type": "string"},
            "campaign_name": {"type": "string", "maxLength": 200}, "channel": {"enum": ["sms", "chat"]},
            "template_id": {"type": "string", "maxLength": 200}, "message": {"type": "string", "maxLength": 2000},
            "file": {"type": "string", "format": "binary"}}}}}});
    bulk["responses"]["413"] = upload_limit;
    bulk["x-engage-scope"] = json!(access::Scope::Outlet.as_str());
    paths.insert("/crm_api/create/bulk/campaign".to_owned(), json!({"post": bulk}));
    let refused = json!({"$ref": "#/components/schemas/StaffErrorBody"});
    paths.insert(
        "/track/chat/link/{token}".to_owned(),
        json!({"get": {
            "summary": "A chat button's tracking link: counts the click against the journey send and redirects to the button's target",
            "tags": ["platform"],
            "security": [],
            "parameters": [{"name": "token", "in": "path", "required": true,
                            "schema": {"type": "string", "minLength": 1}}],
            "responses": {
                "302": {"description": "counted; Location is the button's target",
                        "headers": {"Location": {"schema": {"type": "string"}}}},
                "400": {"description": "not a tracking link this service signed; nothing counted",
                        "content": {"application/json": {"schema": refused.clone()}}},
                "410": {"description": "the link has expired (30 days after delivery); nothing counted",
                        "content": {"application/json": {"schema": refused}}}}}}),
    );
    let html = |what: &str| json!({"description": what, "content": {"text/html": {"schema": {"type": "string"}}}});
    paths.insert(
        "/b/{bill_id}".to_owned(),
        json!({"get": {
            "summary": "A digital bill as a mobile web page (engage's own link service): counts an open as /invoice/open does",
            "tags": ["platform"],
            "security": [],
            "parameters": [{"name": "bill_id", "in": "path", "required": true, "schema": {"type": "string", "minLength": 1}}],
            "responses": {
                "200": html("the bill page"),
                "404": html("unknown bill: a page saying so"),
                "410": html("the bill link has expired (linkValidity days): a page saying so"),
                "503": html("the brand's owner is unavailable; retry")}}}),
    );
    let ack_nps = json!({"type": "object", "required": ["status", "nps_id"],
        "properties": {"status": {"const": 1}, "nps_id": {"type": "string"}}});
    let mut nps_data = operation(
        "Store one NPS answer (no auth): rating 0 to 10; the same outlet, customer and order_id again replaces it",
        Auth::None,
        "NpsDataRequest",
        ack_nps,
    );
    nps_data["responses"]["429"] = json!({"description": "xE_429 over the per-client rate limit (ENGAGE_RATE_LIMIT_PER_SECOND, off by default)",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/IntegrationErrorBody"}}}});
    paths.insert("/crm_api/nps/data".to_owned(), json!({"post": nps_data}));
    let mut download = operation(
        "The NPS responses between start and end (IST days) as an XLSX workbook (sheet nps)",
        Auth::Staff,
        "NpsRequest",
        object.clone(),
    );
    download["responses"]["200"] = json!({"description": "the workbook", "content": {
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": {"schema": {"type": "string", "format": "binary"}}}});
    paths.insert("/crm_api/download/nps/data".to_owned(), json!({"post": download}));
    let form_page = json!({
        "summary": "The feedback form of a signed link (engage's own form service): counts an open",
        "tags": ["platform"],
        "security": [],
        "parameters": [{"name": "token", "in": "path", "required": true, "schema": {"type": "string", "minLength": 1}}],
        "responses": {
            "200": html("the form"),
            "400": html("not a feedback link this service signed: a page saying so"),
            "410": html("the link has expired: a page saying so"),
            "503": html("the brand's owner is unavailable; retry")}});
    let mut form_post = form_page.clone();
    form_post["summary"] = json!("Submit the feedback form: stores a rating with source '3'");
    form_post["requestBody"] = json!({"required": true, "content": {"application/x-www-form-urlencoded": {"schema": {
        "type": "object", "required": ["rating"], "properties": {
            "rating": {"type": "string", "enum": ["1", "2", "3", "4", "5"]}, "comment": {"type": "string"},
            "hear_about_us": {"type": "string"}, "q1": {"type": "string"}}}}}});
    form_post["responses"]["200"] = html("a thank-you page");
    form_post["responses"]["400"] =
        html("not a feedback link, or no rating from 1 to 5 (a body that is not a form has none): a page saying so");
    paths.insert("/f/{token}".to_owned(), json!({"get": form_page, "post": form_post}));
    let mut blocked =
        operation("Is a contact blocked (blocklist or staff block)?", Auth::Staff, "FraudQueryRequest", object.clone());
    blocked.as_object_mut().map(|o| o.remove("requestBody"));
    blocked["parameters"] = json!([
        {"name": "contact", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1}},
        {"name": "parent_business_id", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": 128}}]);
    paths.insert("/crm_api/fraud/check-customer-blocked".to_owned(), json!({"get": blocked}));
    let mut schemas: Map<String, Value> =
        schemas::PlatformSchemas::documents().into_iter().map(|(n, v)| (n.to_owned(), v)).collect();
    schemas.insert(
        "IntegrationErrorBody".to_owned(),
        json!({"type": "object", "required": ["status", "error_code", "error_message"], "properties": {
            "status": {"const": 0}, "error_code": {"type": "string", "examples": ["xE_101", "xE_102"]},
            "error_message": {"type": "string"},
            "errors": {"type": "array", "items": {"$ref": "#/components/schemas/Issue"}}}}),
    );
    schemas.insert(
        "StaffErrorBody".to_owned(),
        json!({"type": "object", "required": ["message"], "properties": {
            "message": {"type": "string"},
            "errors": {"type": "array", "items": {"$ref": "#/components/schemas/Issue"}}}}),
    );
    schemas.insert(
        "CustomerDetails".to_owned(),
        json!({"type": "object", "properties": {
            "customer_number": {"type": "string"}, "name": {"type": "string"}, "total_orders": {"type": "integer"},
            "last_order": {"type": ["string", "null"], "format": "date"}, "loyalty_points": {"type": "integer"},
            "segment": {"type": "string", "enum": ["prospect", "new", "repeat", "loyal", "lapsed"]},
            "lifetime_value": {"type": "number"}, "average_order_value": {"type": "number"}}}),
    );
    let mut security = Map::new();
    security.insert("staffToken".to_owned(), json!({"type": "apiKey", "in": "header", "name": "token"}));
    security.insert(
        "ingestionToken".to_owned(),
        json!({"type": "apiKey", "in": "header", "name": "token", "description": "a token of kind ingestion"}),
    );
    security.insert(
        "integrationToken".to_owned(),
        json!({"type": "apiKey", "in": "header", "name": "Authorization", "description": "the raw token, no Bearer"}),
    );
    security.insert("appToken".to_owned(), json!({"type": "apiKey", "in": "header", "name": "token", "description": "an app token, with the header source: mobile"}));
    security.insert(
        "billPageToken".to_owned(),
        json!({"type": "http", "scheme": "bearer", "description": "the token a bill page carries (data-token), for its own bill"}),
    );
    security.insert("internalJwt".to_owned(), json!({"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}));
    security.insert(
        "adminKey".to_owned(),
        json!({"type": "apiKey", "in": "header", "name": "x-admin-key", "description": "the server's admin key (engage tokens finds it); loopback callers only"}),
    );
    admin::openapi(&mut paths);
    open_routes::openapi(&mut paths);
    dead_letters::openapi(&mut paths);
    (paths, schemas, security)
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use http_body_util::BodyExt;
    use serde_json::{json, Value};

    async fn body(route: &str, status: StatusCode) -> (u16, Value) {
        let response = super::refusal(route, status);
        let code = response.status().as_u16();
        let bytes = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    #[tokio::test]
    async fn refusals_answer_in_the_routes_family() {
        // 415 is answered by no route today; should one ever be, its body is the family's
        let (code, integration) = body("/injestion/platform", StatusCode::UNSUPPORTED_MEDIA_TYPE).await;
        assert_eq!((code, integration["error_code"].clone()), (415, json!("xE_415")), "{integration}");
        let (code, staff) = body("/crm_api/wallet/balance", StatusCode::UNSUPPORTED_MEDIA_TYPE).await;
        assert_eq!(code, 415);
        assert!(staff["message"].is_string() && staff.get("error_code").is_none(), "{staff}");
        let (code, logs) = body("/v1/logs", StatusCode::METHOD_NOT_ALLOWED).await;
        assert_eq!((code, logs["error"].clone()), (405, json!("METHOD_NOT_ALLOWED")), "{logs}");
    }
}
