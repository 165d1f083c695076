//! The customer engagement platform's HTTP routes (`spec/engagement-platform.md`): one folder per
//! capability (its routes, answers and request bodies, mirroring `engage_actors::capabilities`),
//! the edge machinery in [`edge`], the pages engage serves in [`pages`].
//!
//! | spec area | module |
//! |---|---|
//! | Ingestion and POS routes (`/injestion/*`, `/api/ingestion/orderPush`, `/update/business/status`, `/insert/merchant/data`, `/sync/crm/token`, the `/crm_api/injestion/{pos}` serverless tier) | [`ingestion`] (one table, [`ingestion::ENQUEUE_ROUTES`]) |
//! | `/crm_api/get/customer/details`, `/crm_api/update/customer/details` | [`customers`] |
//! | `/chat/send`, `/chat/receipts`, chat login: `/crm_api/rider/chat/login`, `/crm_api/check/chat/login` | [`chat`] |
//! | `/crm_api/add_b_config`, `/crm_api/add_b_config/php` | [`business`] |
//! | `/crm_api/v2/dashboarData`, `/crm_api/v2/{chat_partner}/generatePartnerToken`, `/crm_api/v2/{chat_partner}/getPartnerProfile` | [`v2`] |
//! | loyalty: `/crm_api/add_edit_rules`, `/crm_api/add_edit_milestone`, `/crm_api/day/wise/data`, `/crm_api/get/referal/rules`, the legacy staff loyalty routes, `/integration/v1/configure_points`, `/integration/v1/redeem_points`, `/integration/v1/get_user_loyalty`, `/integration/v1/get_wallet_ledger`, `/api/*Loyalty*`, `/api/generateOTP` | [`loyalty`] |
//! | `/integration/v1` customer routes, `/pos_e/v1` loyalty routes | [`customers::integration`] |
//! | rewards catalogue and coupons (`/integration/v1/*reward*`, `/pos_e/v1/*coupon*`) | [`rewards`] |
//! | fraud prevention: `/crm_api/configure_fraud_*`, blocklist, flags, checks, MIS | [`fraud`] |
//! | business wallets: `/crm_api/wallet/*` | [`wallet`] |
//! | automated journeys: `/crm_api/autoCampaign`, `/crm_api/get/campaign/*`, `/crm_api/save/campaign/journey`, `/crm_api/enable/automated/campaign/`, `/crm_api/view/campaign/journey`, `/crm_api/get/field/parameters`, `/crm_api/get/days/type/options`, `/crm_api/get/auto_campaign_users`, `/crm_api/view/sent/automated/campaigns`, `/crm_api/automated/campaigns/report`, `/crm_api/journeys/settings`, `/crm_api/create/campaign_tag`, `/crm_api/get/campaign_tags`, `/crm_api/create/bulk/campaign`, `GET /track/chat/link/{token}` | [`journeys`] |
//! | digital bills: `/crm_api/links/*`, `/crm_api/update/bill/status`, `/crm_api/get_digital_bill_customers`, `/crm_api/get_digital_bill_mis`, `/crm_api/invoice/open`, `/crm_api/feedback_invoice/open`, `/crm_api/update/widget/insight`, `/crm_api/invoice/download`, `GET /b/{bill_id}` | [`bills`] (the page: [`pages::bill_page`]) |
//! | feedback, ratings and NPS: `/crm_api/{save,get}/feedback/config`, `/crm_api/{nps/data,npsList,npsData,download/nps/data,orders_summary,legacy/feedback_sms}`, `/crm_api/fetch_feedback_customers`, `/crm_api/feedback_form_interaction_mis`, `/crm_api/get/{rating_list,rating_count_datewise,hear_about_us_source,latest_rating}`, `GET`/`POST /f/{token}` | [`feedback`] (the form: [`pages::feedback_page`]) |
//! | dashboard metrics: `/stats/dashboard/summary`, `/stats/metrics/*`, `/stats/special-days` | [`stats`] (the rollups: `engage_actors::capabilities::stats`) |
//! | the web dashboard: `GET /dashboard` | [`pages::dashboard`] (`pages/dashboard.html`) |
//! | auth families | [`edge::auth`], stored tokens [`edge::tokens`], `/admin/tokens` [`admin`], who may touch what [`edge::access`], `/crm_api/open_routes/settings` [`business::open_routes`] |
//! | parked events: `/admin/dead-letters` | [`admin::dead_letters`] |
//! | a customer's data rights by mail: `/admin/customers/export\|erase` | [`admin::customers`] |
//! | error families | [`edge::errors`] |
//! | request bodies (JSON or url-encoded), their types and schemas | [`edge::body`], each capability's `requests` (listed in [`edge::requests`]), [`edge::schemas`] |
//! | the typed edge: auth-family extractors, answers | [`edge`] |
//! | staff CSV uploads (multipart form, `Phone` column) | [`edge::upload`] |

// Route helpers return `Result<_, Response>`: the refusal is the answer itself, built at most once
// per request, so boxing it would only add an allocation.
#![allow(clippy::result_large_err)]

pub mod admin;
pub mod bills;
pub mod business;
pub mod chat;
pub mod consent;
pub mod customers;
pub mod edge;
pub mod feedback;
pub mod fraud;
pub mod ingestion;
pub mod journeys;
pub mod loyalty;
pub mod pages;
pub mod rewards;
pub mod senders;
pub mod state;
pub mod stats;
pub mod v2;
pub mod wallet;

use axum::Router;
use serde_json::{json, Map, Value};

pub use state::PlatformState;

use crate::state::AppState;

/// Every platform route, each declared once in its module's `routes()`.
fn routes() -> edge::routes::Routes {
    edge::routes::Routes::new()
        .merge(ingestion::routes())
        .merge(customers::routes())
        .merge(chat::routes())
        .merge(loyalty::routes())
        .merge(customers::integration::routes())
        .merge(rewards::routes())
        .merge(fraud::routes())
        .merge(wallet::routes())
        .merge(journeys::routes())
        .merge(bills::routes())
        .merge(feedback::routes())
        .merge(stats::routes())
        .merge(pages::dashboard::routes())
        .merge(business::routes())
        .merge(v2::routes())
        .merge(admin::routes())
        .merge(business::open_routes::routes())
        .merge(admin::dead_letters::routes())
        .merge(admin::customers::routes())
        .merge(customers::refunds::routes())
        .merge(consent::routes())
        .merge(senders::routes())
}

/// Every platform route, mounted.
pub fn router() -> Router<AppState> {
    routes().router()
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

/// Middleware: axum's own 405 and 415 have no body; they are answered in the route's error family
/// ([`refusal`]), keeping axum's `Allow` header.
pub async fn family_refusals(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let route = request.extensions().get::<axum::extract::MatchedPath>().map(|p| p.as_str().to_owned());
    // kept (a cheap clone) for a refusal to read; looked at only when there is one
    let content_encoding = request.headers().get(axum::http::header::CONTENT_ENCODING).cloned();
    let content_type = request.headers().get(axum::http::header::CONTENT_TYPE).cloned();
    let response = next.run(request).await;
    let status = response.status();
    let json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !matches!(status.as_u16(), 405 | 415) || json {
        return response;
    }
    let allow = response.headers().get(axum::http::header::ALLOW).cloned();
    // a body in an encoding no route decodes: the decompression layer's bare 415 names it
    let encoding_refused = content_encoding
        .filter(|_| status == axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE)
        .and_then(|v| v.to_str().ok().map(|v| v.trim().to_ascii_lowercase()))
        .filter(|v| !v.is_empty() && v != "gzip" && v != "identity");
    let otlp = route.as_deref().is_some_and(|r| r.starts_with("/otlp/")).then(|| {
        content_type
            .as_ref()
            .and_then(crate::logs::otlp::Encoding::of_content_type)
            .unwrap_or(crate::logs::otlp::Encoding::Json)
    });
    let mut refused = match (otlp, encoding_refused) {
        (Some(otlp), Some(name)) => crate::logs::otlp::refusal(status, &unsupported_encoding(&name), otlp),
        (Some(otlp), None) => crate::logs::otlp::refusal(status, refusal_message(status), otlp),
        (None, Some(name)) => {
            let error = crate::error::ApiError::unsupported_media_type(unsupported_encoding(&name));
            axum::response::IntoResponse::into_response(error)
        }
        (None, None) => refusal(route.as_deref().unwrap_or("unmatched"), status),
    };
    if let Some(allow) = allow {
        refused.headers_mut().insert(axum::http::header::ALLOW, allow);
    }
    refused
}

/// What a refused `Content-Encoding` is told.
fn unsupported_encoding(name: &str) -> String {
    format!("Content-Encoding {name} is not accepted: send the body with Content-Encoding gzip, or uncompressed")
}

/// The message of axum's bare 405 or 415.
fn refusal_message(status: axum::http::StatusCode) -> &'static str {
    if status == axum::http::StatusCode::METHOD_NOT_ALLOWED {
        "this route does not take that method (the Allow header lists those it takes)"
    } else {
        "unsupported content-type: send the body as application/json"
    }
}

/// The JSON body of a 405 or 415 answer in the route's family (axum's own have none).
pub fn refusal(route: &str, status: axum::http::StatusCode) -> axum::response::Response {
    let message = refusal_message(status);
    let code = if status == axum::http::StatusCode::METHOD_NOT_ALLOWED {
        "METHOD_NOT_ALLOWED"
    } else {
        "UNSUPPORTED_MEDIA_TYPE"
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

/// Path items and components of the platform routes, for `/openapi.json`.
pub fn openapi() -> (Map<String, Value>, Map<String, Value>, Map<String, Value>) {
    let mut paths = routes().paths();
    let mut schemas: Map<String, Value> =
        edge::schemas::PlatformSchemas::documents().into_iter().map(|(n, v)| (n.to_owned(), v)).collect();
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
            "errors": {"type": "array", "items": {"$ref": "#/components/schemas/Issue"}},
            "hint": {"type": "string", "description": "what would work instead (e.g. the header a token goes in)"}}}),
    );
    schemas.insert(
        "CustomerDetails".to_owned(),
        // the type the routes answer with: every field it serializes is declared
        edge::contract::answer_schema::<engage_actors::capabilities::customers::CustomerView>(),
    );
    let mut security = Map::new();
    security.insert("staffToken".to_owned(), json!({"type": "apiKey", "in": "header", "name": "token"}));
    security.insert(
        "keywordWebhookSecret".to_owned(),
        json!({"type": "apiKey", "in": "header", "name": "x-engage-webhook-secret",
            "description": "the SMS or chat provider's secret (ENGAGE_KEYWORD_WEBHOOK_SECRETS)"}),
    );
    security.insert(
        "twilioSignature".to_owned(),
        json!({"type": "apiKey", "in": "header", "name": "X-Twilio-Signature",
            "description": "Twilio's signature of the request with the receiving brand's auth token (docs/senders.md)"}),
    );
    security.insert(
        "metaSignature".to_owned(),
        json!({"type": "apiKey", "in": "header", "name": "X-Hub-Signature-256",
            "description": "sha256=<hex>: HMAC-SHA256 of the body with the receiving brand's WhatsApp app secret (docs/senders.md)"}),
    );
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
    edge::examples::apply(&mut paths, &schemas);
    edge::form_view::apply(&mut paths, &mut schemas);
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
