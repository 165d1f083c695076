//! Feedback and ratings (spec "Feedback, ratings and NPS", relative to `/crm_api`, POST, staff
//! token), and the feedback form engage serves itself when no feedback service is set
//! (`GET`/`POST /f/{token}`). The state lives in the brand's tenant actor
//! ([`engage_actors::capabilities::feedback`]); the form page is [`crate::platform::pages::feedback_page`].
//!
//! | Route | Body | Answer |
//! |---|---|---|
//! | `/save/feedback/config` (engage's) | FeedbackConfigRequest | `{status: 1, message, data: <config>}` |
//! | `/get/feedback/config` (engage's) | FeedbackReadRequest (`child_business_id`, `"0"` by default) | `{status: true, data: <config>}`; 404 without one |
//! | `/fetch_feedback_customers` | FeedbackReadRequest (`page`, `start`, `end`) | `{status: true, data: [request], total, page, page_size: 20}` |
//! | `/feedback_form_interaction_mis` | FeedbackReadRequest + `start`, `end` | `{status: true, data: {totals, days}}` |
//! | `/orders_summary` | FeedbackReadRequest + the period (its last 32 days at most), `page` | `{status: true, data: [order], total_orders, valid_numbers, invalid_numbers, page, page_size: 20}` |
//! | `/legacy/feedback_sms` (engage's) | LegacySmsRequest (`url`, `business_id`) | `{status: 1, id}`: a row of the legacy feedback SMS queue |
//! | `/get/rating_list` | FeedbackReadRequest (`source`, `page`) | `{status: true, data: [rating, or the store's review record for sources 3 and 4], total, page, page_size: 20}` |
//! | `/get/rating_count_datewise` | FeedbackReadRequest | `{status: true, data: [{date, rating_count, avg_rating}], ratings_done, avg_rating}` |
//! | `/get/hear_about_us_source` | FeedbackReadRequest | `{status: true, data: [{source, count}]}` |
//! | `/get/latest_rating` | FeedbackReadRequest | `{status: true, data: [rating]}`: 5 stars, a comment of 100 characters or more, newest first, 10 |
//! | `/nps/data` (no auth) | NpsDataRequest | `{status: 1, nps_id}`; 400 `xE_102` naming a missing or out-of-range field; 429 `xE_429` over the optional rate limit |
//! | `/npsList` | NpsRequest (`page`, `rating`, `mobile_number`) | `{status: 1, data: [{mobileNo, rating, questions, …}], total}` (an empty page: `data: []`) |
//! | `/npsData` | NpsRequest + `start`, `end` (`promoter_from`, `passive_from`) | `{status: true, data: {buckets, brand: {total, promoters, passives, detractors, nps}, outlets: […]}}` |
//! | `/download/nps/data` | NpsRequest + `start`, `end` | the responses as an XLSX workbook |
//! | `GET /f/{token}` (no `/crm_api`, no token) | – | the form (HTML); counts an open; 400 / 410 pages |
//! | `POST /f/{token}` | form: `rating` (1–5), `comment`, `q1`…, `hear_about_us` | a thank-you page; 400 page for a bad rating |

pub mod requests;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Json;
use chrono::Utc;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use engage_actors::capabilities::feedback::legacy::{LegacyQueued, QueueLegacySms};

use engage_actors::capabilities::feedback::nps::{Buckets, NpsAnswer, NpsPage, NpsReport, NpsResponse};
use engage_actors::capabilities::feedback::{
    self as feedback, FeedbackConfig, FeedbackMis, OrdersSummary, Rating, RatingDays, RatingPage, RequestPage,
    ReviewPage, Submission,
};
use engage_actors::signed_links::{FormClaims, LinkRefusal};

use crate::platform::edge::auth::Auth;
use crate::platform::edge::errors::{IntegrationError, StaffError};
use crate::platform::edge::requests::{
    FeedbackConfigRequest, FeedbackReadRequest, LegacySmsRequest, NpsDataRequest, NpsRequest,
};
use crate::platform::edge::routes::{html, Routes};
use crate::platform::edge::{
    answer, open_rate_limit, ordered, period_of, staff_answer, template_type, Answer, Data, Open, Saved, Staff,
    StaffAnswer,
};
use crate::platform::pages::feedback_page;
use crate::state::AppState;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post("/crm_api/save/feedback/config", "Create or replace a business's feedback configuration (engage's route; child_business_id \"0\" is the brand's): {status: 1, message, data}", save_config)
        .post("/crm_api/get/feedback/config", "A business's feedback configuration (child_business_id, \"0\" by default): {status, data}; 404 without one", get_config)
        .post("/crm_api/fetch_feedback_customers", "Feedback links sent, newest first, 20 a page: {status, data: [{child_business_id, order_id, mobile_number, name, channels, url, sent_at, scheduled_at, clicks, is_submitted, rating}], total, page, page_size}", feedback_customers)
        .post("/crm_api/feedback_form_interaction_mis", "The feedback funnel between start and end (IST days): {status, data: {totals: {total_feedback_sent, total_clicks, unique_clicks, total_submitted}, days}}", interaction_mis)
        .post("/crm_api/orders_summary", "Orders of the period (IST days; a longer one keeps its last 32), each once (its latest version), newest first, 20 a page, with whether the customer's number can be sent a link ([6-9] and 9 digits, not sequential, not one digit repeated): {status, data, total_orders, valid_numbers, invalid_numbers, page, page_size}", orders_summary)
        .post("/crm_api/legacy/feedback_sms", "Put a row of the legacy feedback SMS queue (engage's route, for rows left by the legacy system): a gateway URL the legacy_feedback_drain job calls by GET (processed 0 -> 2 -> 1): {status: 1, id}", legacy_feedback_sms)
        .post("/crm_api/get/rating_list", "Ratings, newest first, 20 a page: source 1 or 2 (or none) engage's own ratings; 3 (store A) and 4 (store B) the app-store reviews the review_sync job stored, each the store's own record ({reviewId, reviewer, comment, reply, starRating, createTime, lastModified, parent_business_id} / {id, parent_business_id, appId, attributes}): {status, data, total, page, page_size}", rating_list)
        .post("/crm_api/get/rating_count_datewise", "Ratings per IST day: {status, data: [{date, rating_count, avg_rating}], ratings_done, avg_rating}", rating_count_datewise)
        .post("/crm_api/get/hear_about_us_source", "How customers heard about the brand (the form's answers): {status, data: [{source, count}]}", hear_about_us_source)
        .post("/crm_api/get/latest_rating", "The latest 5-star ratings with a comment of 100 characters or more (10, newest first): {status, data}", latest_rating)
        .route("/crm_api/nps/data", post(nps_data), json!({"post": nps_data_operation()}))
        .post("/crm_api/npsList", "NPS responses, newest first, 20 a page (rating, mobile_number filter): {status: 1, data: [{mobileNo, rating, questions, businessId, order_id, insertedAt, validTill, nps_id, source}], total}; an empty page is data []", nps_list)
        .post("/crm_api/npsData", "NPS between start and end (IST days): {status, data: {buckets: {promoter_from, passive_from}, brand: {total, promoters, passives, detractors, nps}, outlets: [same per businessId]}}; nps = % promoters - % detractors", nps_report)
        .post("/crm_api/download/nps/data", "The NPS responses of the period (IST days) as an XLSX workbook (sheet nps)", nps_download)
        .tweak(|op| {
            op["responses"]["200"] = json!({"description": "the workbook", "content": {
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": {"schema": {"type": "string", "format": "binary"}}}});
        })
        .route("/f/{token}", get(form).post(submit), form_operations())
}

/// `/crm_api/nps/data`: open, and limited per client when the operator sets a rate.
fn nps_data_operation() -> Value {
    let ack = crate::platform::edge::contract::answer_schema::<Answer<NpsStored>>();
    let mut op = crate::platform::edge::routes::operation(
        "Store one NPS answer (no auth): rating 0 to 10; the same outlet, customer and order_id again replaces it",
        Auth::None,
        Some("NpsDataRequest"),
        ack,
    );
    op["responses"]["429"] = json!({"description": "xE_429 over the per-client rate limit (ENGAGE_RATE_LIMIT_PER_SECOND, off by default)",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/IntegrationErrorBody"}}}});
    op["x-engage-scope"] = json!(<NpsDataRequest as crate::platform::edge::contract::PlatformRequest>::SCOPE.as_str());
    op
}

/// The feedback form of a signed link: the page, and its submission.
fn form_operations() -> Value {
    let page = json!({
        "summary": "The feedback form of a signed link (engage's own form service): counts an open",
        "tags": ["platform"],
        "security": [],
        "parameters": [{"name": "token", "in": "path", "required": true, "schema": {"type": "string", "minLength": 1}}],
        "responses": {
            "200": html("the form"),
            "404": html("not a feedback link this service signed: a page saying so"),
            "410": html("the link has expired: a page saying so"),
            "503": html("the brand's owner is unavailable; retry")}});
    let mut submit = page.clone();
    submit["summary"] = json!("Submit the feedback form: stores a rating with source '3'");
    submit["requestBody"] = json!({"required": true, "content": {"application/x-www-form-urlencoded": {"schema": {
        "type": "object", "required": ["rating"], "properties": {
            "rating": {"type": "string", "enum": ["1", "2", "3", "4", "5"]}, "comment": {"type": "string"},
            "hear_about_us": {"type": "string"}, "q1": {"type": "string"}}}}}});
    submit["responses"]["200"] = html("a thank-you page");
    submit["responses"]["400"] = html("no rating from 1 to 5 (a body that is not a form has none): a page saying so");
    json!({"get": page, "post": submit})
}

/// `/crm_api/save/feedback/config`.
async fn save_config(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<FeedbackConfigRequest>,
) -> Result<Json<Answer<Saved<FeedbackConfig>>>, StaffError> {
    let config = FeedbackConfig {
        parent_business_id: tenant.clone(),
        child_business_id: body.child_business_id.filter(|c| *c != tenant).unwrap_or_else(|| "0".to_owned()),
        feedback_flow: body.feedback_flow,
        feedback_sms: body.feedback_sms.unwrap_or_else(|| "false".to_owned()),
        feedback_chat: body.feedback_chat.unwrap_or_else(|| "false".to_owned()),
        feedback_time: body.feedback_time.unwrap_or(0),
        sms_template: body.sms_template,
        chat_template: body.chat_template,
        chat_template_type: template_type(body.chat_template_type.as_deref()),
        sender_id: body.sender_id,
        questions: body.questions.unwrap_or_default(),
        alert_contacts: body.alert_contacts.unwrap_or_default(),
        alert_emails: body.alert_emails.unwrap_or_default(),
        updated_at: Some(Utc::now()),
        copied_from_brand_at: None,
        store_a_app_id: body.store_a_app_id,
        store_b_app_id: body.store_b_app_id,
    };
    let query = feedback::SaveConfig { config: Box::new(config) };
    let saved: FeedbackConfig =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "config"))?;
    Ok(answer(Saved { message: "Feedback configuration saved".into(), data: saved }))
}

/// `/crm_api/get/feedback/config`.
async fn get_config(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<FeedbackReadRequest>,
) -> Result<Json<StaffAnswer<Data<FeedbackConfig>>>, StaffError> {
    let child = body.child_business_id.or(body.business_id).filter(|c| *c != tenant).unwrap_or_else(|| "0".to_owned());
    let query = feedback::Config { child_business_id: child };
    let config: FeedbackConfig = state
        .platform
        .gateway
        .ask(&tenant, query)
        .await
        .map_err(|e| StaffError::from_query(e, "feedback configuration"))?;
    Ok(staff_answer(Data { data: config }))
}

/// `/crm_api/fetch_feedback_customers`.
async fn feedback_customers(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<FeedbackReadRequest>,
) -> Result<Json<StaffAnswer<RequestPage>>, StaffError> {
    let (start, end) = ordered(&body.start, &body.end);
    let query = feedback::Requests { business_id: body.business_id, page: body.page.unwrap_or(1), start, end };
    Ok(staff_answer(
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "feedback"))?,
    ))
}

/// `/crm_api/feedback_form_interaction_mis`.
async fn interaction_mis(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<FeedbackReadRequest>,
) -> Result<Json<StaffAnswer<Data<FeedbackMis>>>, StaffError> {
    let (start, end) = period_of(&body.start, &body.end, &body.date)?;
    let query = feedback::Mis { business_id: body.business_id, start, end };
    let mis: FeedbackMis =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "feedback"))?;
    Ok(staff_answer(Data { data: mis }))
}

/// `/crm_api/legacy/feedback_sms`: a row of the legacy feedback SMS queue (processed 0).
async fn legacy_feedback_sms(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<LegacySmsRequest>,
) -> Result<Json<Answer<LegacyQueued>>, StaffError> {
    let query = QueueLegacySms { business_id: body.business_id, url: body.url, now: Utc::now() };
    Ok(answer(state.platform.gateway.ask(&tenant, query).await?))
}

/// `/crm_api/orders_summary`.
async fn orders_summary(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<FeedbackReadRequest>,
) -> Result<Json<StaffAnswer<OrdersSummary>>, StaffError> {
    let (start, end) = period_of(&body.start, &body.end, &body.date)?;
    let query = feedback::GetOrdersSummary { business_id: body.business_id, start, end, page: body.page.unwrap_or(1) };
    let summary = state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "orders"))?;
    Ok(staff_answer(summary))
}

/// `/crm_api/get/rating_list`: sources 1 and 2 are engage's own ratings (every record source);
/// 3 and 4 the app stores' reviews, as each store sent them.
async fn rating_list(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<FeedbackReadRequest>,
) -> Result<Json<StaffAnswer<Ratings>>, StaffError> {
    let (start, end) = ordered(&body.start, &body.end);
    let page = body.page.unwrap_or(1);
    if let Some(source @ (3 | 4)) = body.source {
        let store = if source == 3 { "a" } else { "b" };
        let query = feedback::StoreReviews { store: store.to_owned(), page };
        let reviews: ReviewPage =
            state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "rating"))?;
        return Ok(staff_answer(Ratings::Store(reviews)));
    }
    let query = feedback::Ratings { business_id: body.business_id, sources: Vec::new(), page, start, end };
    let ratings: RatingPage =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "rating"))?;
    Ok(staff_answer(Ratings::Own(ratings)))
}

/// A page of ratings: engage's own (sources 1 and 2) or an app store's reviews (3 and 4).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Ratings {
    /// engage's own ratings.
    Own(RatingPage),
    /// An app store's reviews, as the store sent them.
    Store(ReviewPage),
}

/// `{data, ratings_done, avg_rating}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RatingCounts {
    /// Per IST day.
    data: Vec<engage_actors::capabilities::feedback::RatingDay>,
    /// Ratings in the period.
    ratings_done: u64,
    /// Their average.
    avg_rating: f64,
}

/// One "how did you hear about us" answer, counted.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SourceCount {
    /// The answer.
    source: String,
    /// How many gave it.
    count: u64,
}

/// `{nps_id}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NpsStored {
    /// The stored answer's id.
    nps_id: String,
}

async fn rating_days(state: &AppState, tenant: &str, body: FeedbackReadRequest) -> Result<RatingDays, StaffError> {
    let (start, end) = ordered(&body.start, &body.end);
    let query = feedback::GetRatingDays { business_id: body.business_id, start, end };
    state.platform.gateway.ask(tenant, query).await.map_err(|e| StaffError::from_query(e, "rating"))
}

/// `/crm_api/get/rating_count_datewise`.
async fn rating_count_datewise(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<FeedbackReadRequest>,
) -> Result<Json<StaffAnswer<RatingCounts>>, StaffError> {
    let days = rating_days(&state, &tenant, body).await?;
    Ok(staff_answer(RatingCounts { data: days.days, ratings_done: days.ratings_done, avg_rating: days.avg_rating }))
}

/// `/crm_api/get/hear_about_us_source`.
async fn hear_about_us_source(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<FeedbackReadRequest>,
) -> Result<Json<StaffAnswer<Data<Vec<SourceCount>>>>, StaffError> {
    let days = rating_days(&state, &tenant, body).await?;
    let data: Vec<SourceCount> =
        days.hear_about_us.into_iter().map(|(source, count)| SourceCount { source, count }).collect();
    Ok(staff_answer(Data { data }))
}

/// `/crm_api/get/latest_rating`.
async fn latest_rating(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<FeedbackReadRequest>,
) -> Result<Json<StaffAnswer<Data<Vec<Rating>>>>, StaffError> {
    let days = rating_days(&state, &tenant, body).await?;
    Ok(staff_answer(Data { data: days.latest }))
}

/// `/crm_api/nps/data` (no auth).
async fn nps_data(
    State(state): State<AppState>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>,
    Open { tenant, body }: Open<NpsDataRequest>,
) -> Result<Json<Answer<NpsStored>>, IntegrationError> {
    open_rate_limit(&state, "nps", peer)?;
    let given = NpsAnswer {
        business_id: body.business_id,
        mobile_no: body.mobile_no,
        rating: body.rating,
        order_id: body.order_id.unwrap_or_default(),
        questions: body.questions.unwrap_or_default().into_iter().map(Value::Object).collect(),
    };
    let query = feedback::NpsRecord { answer: given, now: Utc::now() };
    let stored: NpsResponse = state.platform.gateway.ask(&tenant, query).await?;
    Ok(answer(NpsStored { nps_id: stored.nps_id }))
}

/// `/crm_api/npsList`.
async fn nps_list(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<NpsRequest>,
) -> Result<Json<Answer<NpsPage>>, StaffError> {
    let query = feedback::NpsList {
        business_id: body.business_id,
        rating: body.rating,
        mobile_number: body.mobile_number,
        page: body.page.unwrap_or(1),
    };
    Ok(answer(state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "NPS"))?))
}

/// `/crm_api/npsData`.
async fn nps_report(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<NpsRequest>,
) -> Result<Json<StaffAnswer<Data<NpsReport>>>, StaffError> {
    let (start, end) = period_of(&body.start, &body.end, &body.date)?;
    let defaults = Buckets::default();
    let (promoter_from, passive_from) =
        (body.promoter_from.unwrap_or(defaults.promoter_from), body.passive_from.unwrap_or(defaults.passive_from));
    // the two thresholds in either order: the higher one starts the promoters
    let buckets =
        Buckets { promoter_from: promoter_from.max(passive_from), passive_from: promoter_from.min(passive_from) };
    let query = feedback::GetNpsReport { business_id: body.business_id, start, end, buckets };
    let report: NpsReport =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "NPS"))?;
    Ok(staff_answer(Data { data: report }))
}

/// `/crm_api/download/nps/data`: the responses of the period as an XLSX workbook.
async fn nps_download(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<NpsRequest>,
) -> Result<Response, StaffError> {
    let (start, end) = period_of(&body.start, &body.end, &body.date)?;
    let query = feedback::NpsExport { business_id: body.business_id, start: start.clone(), end: end.clone() };
    let page: NpsPage =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "NPS"))?;
    let bytes = engage_actors::reports::nps_workbook(&page.data).map_err(StaffError::unavailable)?;
    let name = format!("attachment; filename=\"nps-{start}_{end}.xlsx\"");
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet".to_owned(),
            ),
            (axum::http::header::CONTENT_DISPOSITION, name),
        ],
        bytes,
    )
        .into_response())
}

/// The claims of a form link, or the page that refuses it.
fn claims(state: &AppState, token: &str) -> Result<FormClaims, Response> {
    match state.platform.links.verify_as::<FormClaims>(token) {
        Ok(claims) if claims.scope == "feedback_form" => Ok(claims),
        Err(LinkRefusal::Expired) => Err((
            StatusCode::GONE,
            Html(feedback_page::message_page("This feedback link has expired", "Thank you all the same.")),
        )
            .into_response()),
        // a link this service did not sign names no form: not found, like an unknown bill
        _ => Err((
            StatusCode::NOT_FOUND,
            Html(feedback_page::message_page("Not a feedback link", "Check the link in your message.")),
        )
            .into_response()),
    }
}

fn unavailable(error: impl std::fmt::Display) -> Response {
    tracing::warn!(%error, "feedback form unavailable");
    let page = feedback_page::message_page("Temporarily unavailable", "Please try again in a moment.");
    (StatusCode::SERVICE_UNAVAILABLE, [(axum::http::header::RETRY_AFTER, "1")], Html(page)).into_response()
}

/// `GET /f/{token}`: the form; the open is counted against the feedback request.
async fn form(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    let claims = match claims(&state, &token) {
        Ok(claims) => claims,
        Err(page) => return page,
    };
    let tenant = claims.tenant.clone();
    match state.platform.gateway.ask(&tenant, feedback::Open { claims }).await {
        Ok(view) => Html(feedback_page::form(&view, &token)).into_response(),
        Err(error) => unavailable(error),
    }
}

/// `POST /f/{token}`: stores the rating (source `'3'`).
async fn submit(State(state): State<AppState>, Path(token): Path<String>, body: Bytes) -> Response {
    let claims = match claims(&state, &token) {
        Ok(claims) => claims,
        Err(page) => return page,
    };
    // a body that is no form reads as an empty one (and so lacks its rating)
    let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.trim().to_owned());
    let Some(rating) = field("rating").and_then(|r| r.parse::<u8>().ok()).filter(|r| (1..=5).contains(r)) else {
        return (StatusCode::BAD_REQUEST, Html(feedback_page::rating_missing(&token))).into_response();
    };
    let mut answers = Vec::new();
    for n in 1..=10 {
        match field(&format!("q{n}")) {
            Some(answer) => answers.push(answer.chars().take(1000).collect()),
            None => break,
        }
    }
    let submission = Submission {
        rating,
        comment: field("comment").unwrap_or_default().chars().take(2000).collect(),
        answers,
        hear_about_us: field("hear_about_us").map(|h| h.chars().take(100).collect()),
    };
    let tenant = claims.tenant.clone();
    let query = feedback::Submit { claims, token: token.clone(), submission, now: Utc::now() };
    match state.platform.gateway.ask(&tenant, query).await {
        Ok(submitted) => Html(feedback_page::thanks(&submitted, &token)).into_response(),
        Err(error) => unavailable(error),
    }
}
