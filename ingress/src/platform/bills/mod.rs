//! Digital bills (spec "Digital bills", relative to `/crm_api`, POST), and the bill page engage
//! serves itself when no link service is set (`GET /b/{bill_id}`). The bills live in the brand's
//! tenant actor ([`engage_actors::capabilities::bills`]); the page is [`crate::platform::pages::bill_page`].
//!
//! | Route | Auth | Body | Answer |
//! |---|---|---|---|
//! | `/links/getWidgetList` | staff | BillRequest | `{status: true, data: [{id, name, kind, status}]}`: the six kinds |
//! | `/links/addBusinessConfig` | staff | BillConfigRequest | `{status: 1, message, data: <link_config>}` |
//! | `/update/bill/status` | staff | BillRequest + `status` | `{status: 1, message, data: <link_config>}`; 404 without a configuration |
//! | `/links/getBusinessConfig` | staff | BillRequest | `{status: true, data: {config, inherited, widgets}}` |
//! | `/links/addWidget` | staff | WidgetRequest + `widget_id` | `{status: 1, message, data: <widget>}` |
//! | `/links/editWidget` | staff | WidgetRequest + `id` | `{status: 1, message, data: <widget>}`; 404 unknown |
//! | `/get_digital_bill_customers` | staff | BillRequest (`page`, `start`, `end`) | `{status: true, data: [bill], total, page, page_size: 10}` |
//! | `/get_digital_bill_mis` | staff | BillRequest + `start`, `end` | `{status: true, data: {totals, opening_percentage, days}}` |
//! | `/invoice/open` | ingestion | BillEventRequest | `{status: 1, counted, clicked}` |
//! | `/feedback_invoice/open` | ingestion | BillEventRequest | `{status: 1, counted, feedback_opens}` |
//! | `/update/widget/insight` | ingestion, or the bill page's own token | WidgetInsightRequest | `{status: 1, counted}` |
//! | `/invoice/download` | ingestion | BillEventRequest | `{status: 1, counted, download_flag}` |
//! | `GET /b/{bill_id}` (no `/crm_api`, no token) | – | – | the bill page (HTML); counts an open; 404 / 410 pages |

pub mod requests;

use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Json;
use chrono::Utc;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use engage_actors::ask::Answer as Question;
use engage_actors::capabilities::bills::{
    self as bills, BillPage, ConfigView, Counted, InsightEvent, LinkConfig, Mis, WidgetFields, WidgetMapping, WIDGETS,
};
use engage_actors::signed_links::BillPageClaims;

use crate::platform::edge::auth::token;
use crate::platform::edge::errors::StaffError;
use crate::platform::edge::requests::{
    BillConfigRequest, BillEventRequest, BillRequest, WidgetInsightRequest, WidgetRequest,
};
use crate::platform::edge::routes::{html, Routes};
use crate::platform::edge::tokens::TokenKind;
use crate::platform::edge::{
    answer, checked_body, ordered, period_of, staff_answer, template_type, Answer, Data, Ingested, Saved, Staff,
    StaffAnswer,
};
use crate::platform::pages::bill_page;
use crate::state::AppState;

/// `/crm_api/update/widget/insight` reads its body after choosing between two credentials.
fn widget_insight_operation() -> Value {
    let mut op = crate::platform::edge::routes::operation(
        "A widget click (clicks + 1) or watch time (watchTime set): {status: 1, counted}. Also accepts the bill page's own token (Authorization: Bearer), for its bill only",
        crate::platform::edge::auth::Auth::Ingestion,
        Some("WidgetInsightRequest"),
        crate::platform::edge::contract::answer_schema::<Answer<InsightCounted>>(),
    );
    op["security"] = json!([{"ingestionToken": []}, {"billPageToken": []}]);
    op["x-engage-scope"] =
        json!(<WidgetInsightRequest as crate::platform::edge::contract::PlatformRequest>::SCOPE.as_str());
    op
}

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post("/crm_api/links/getWidgetList", "The widget catalogue: {status, data: [{id, name, kind, status}]} (six kinds)", widget_list)
        .post("/crm_api/links/addBusinessConfig", "Create or replace a business's digital-bill configuration (business_id left out: the brand's own, parentId \"0\"): {status: 1, message, data: link_config}", add_business_config)
        .post("/crm_api/update/bill/status", "Turn a business's bills on or off (status 0/1; also business_configs.digital_bill): {status: 1, message, data, digital_bill}; 404 when it has no configuration", update_bill_status)
        .requires(&["status"])
        .post("/crm_api/links/getBusinessConfig", "A business's configuration, the brand's when it has none (inherited), and its widgets: {status, data: {config, inherited, widgets}}", get_business_config)
        .post("/crm_api/links/addWidget", "Map a catalogue widget (widget_id) for a business: {status: 1, message, data: widget}; 400 when the business has that kind already", add_widget)
        .requires(&["widget_id"])
        .post("/crm_api/links/editWidget", "Change a widget mapping (id): {status: 1, message, data: widget}; 404 unknown", edit_widget)
        .requires(&["id"])
        .post("/crm_api/get_digital_bill_customers", "Bills sent, newest first, 10 a page (business_id, start, end optional): {status, data: [bill customer record], total, page, page_size}", bill_customers)
        .post("/crm_api/get_digital_bill_mis", "The funnel between start and end (IST days): {status, data: {totals: {total_bill_sent, total_clicks, unique_clicks, total_sms_sent, total_chat_sent}, opening_percentage (unique_clicks / total_bill_sent, %), days: [per day and outlet]}}", bill_mis)
        .post("/crm_api/invoice/open", "Count an open: clicked + 1; the day's total_clicks + 1, unique_clicks + 1 on the first open: {status: 1, counted, clicked}; an unknown bill_id changes nothing (counted false)", invoice_open)
        .post("/crm_api/feedback_invoice/open", "Count an open of the bill's feedback link: {status: 1, counted, feedback_opens}", feedback_invoice_open)
        .route(
            "/crm_api/update/widget/insight",
            post(widget_insight),
            json!({"post": widget_insight_operation()}),
        )
        .post("/crm_api/invoice/download", "Count a download: download_flag + 1: {status: 1, counted, download_flag}", invoice_download)
        .route(
            "/b/{bill_id}",
            get(bill_page_route),
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
        )
}

/// The business a body names: `business_id`, else the brand itself.
fn business(tenant: &str, business_id: Option<String>) -> String {
    business_id.filter(|b| !b.is_empty()).unwrap_or_else(|| tenant.to_owned())
}

/// `/crm_api/links/getWidgetList`.
async fn widget_list(Staff { .. }: Staff<BillRequest>) -> Json<StaffAnswer<Data<[bills::Widget; 6]>>> {
    staff_answer(Data { data: WIDGETS })
}

/// `/crm_api/links/addBusinessConfig`.
async fn add_business_config(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<BillConfigRequest>,
) -> Result<Json<Answer<Saved<LinkConfig>>>, StaffError> {
    let now = Utc::now();
    let business_id = business(&tenant, body.business_id);
    let parent_id = if business_id == tenant { "0".to_owned() } else { tenant.clone() };
    let config = LinkConfig {
        business_id,
        parent_id,
        mode: body.mode,
        bill_type: body.bill_type.unwrap_or(1),
        link_validity: body.link_validity.unwrap_or(0),
        brand_color: body.brand_color.unwrap_or_default(),
        enable_footer: body.enable_footer.unwrap_or(0),
        footer_button: body.footer_button.unwrap_or_default(),
        time: body.time.unwrap_or(0),
        status: body.status.unwrap_or(1),
        sms_template: body.sms_template,
        chat_template: body.chat_template,
        chat_template_type: template_type(body.chat_template_type.as_deref()),
        sender_id: body.sender_id,
        sms_variables: body.sms_variables,
        chat_variables: body.chat_variables,
        bill_platform: body.platform.unwrap_or_default(),
        inserted_at: now,
        updated_at: now,
    };
    let query = bills::SaveConfig { config: Box::new(config) };
    let saved: LinkConfig =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "configuration"))?;
    Ok(answer(Saved { message: "Digital bill configuration saved".into(), data: saved }))
}

/// `/crm_api/update/bill/status`.
async fn update_bill_status(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<BillRequest>,
) -> Result<Json<Answer<StatusSet>>, StaffError> {
    let Some(status) = body.status else {
        return Err(StaffError::invalid_message("/status", "status (0 or 1) is required"));
    };
    let query = bills::SetStatus { business_id: business(&tenant, body.business_id), status, now: Utc::now() };
    let config: LinkConfig = state
        .platform
        .gateway
        .ask(&tenant, query)
        .await
        .map_err(|e| StaffError::from_query(e, "digital bill configuration of this business"))?;
    let message = if status == 1 { "Digital bill turned on" } else { "Digital bill turned off" };
    Ok(answer(StatusSet { message, data: config, digital_bill: status }))
}

/// `/crm_api/links/getBusinessConfig`.
async fn get_business_config(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<BillRequest>,
) -> Result<Json<StaffAnswer<Data<ConfigView>>>, StaffError> {
    let query = bills::Config { business_id: business(&tenant, body.business_id) };
    let view: ConfigView =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "configuration"))?;
    Ok(staff_answer(Data { data: view }))
}

fn widget_fields(body: &WidgetRequest) -> WidgetFields {
    WidgetFields {
        sequence: body.sequence,
        title: body.title.clone(),
        value: body.value.clone(),
        static_banner_link: body.static_banner_link.clone(),
        status: body.status,
    }
}

/// `/crm_api/links/addWidget`.
async fn add_widget(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<WidgetRequest>,
) -> Result<Json<Answer<Saved<WidgetMapping>>>, StaffError> {
    let Some(widget_id) = body.widget_id else {
        return Err(StaffError::invalid_message("/widget_id", "widget_id (the catalogue id, 1 to 6) is required"));
    };
    let fields = widget_fields(&body);
    let query =
        bills::AddWidget { business_id: business(&tenant, body.business_id), widget_id, fields, now: Utc::now() };
    let widget: WidgetMapping =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "widget"))?;
    Ok(answer(Saved { message: "Widget added".into(), data: widget }))
}

/// `/crm_api/links/editWidget`.
async fn edit_widget(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<WidgetRequest>,
) -> Result<Json<Answer<Saved<WidgetMapping>>>, StaffError> {
    let Some(id) = body.id else {
        return Err(StaffError::invalid_message("/id", "id (the widget mapping's id) is required"));
    };
    let query = bills::EditWidget { id, fields: widget_fields(&body) };
    let widget: WidgetMapping =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "widget"))?;
    Ok(answer(Saved { message: "Widget updated".into(), data: widget }))
}

/// `/crm_api/get_digital_bill_customers`.
async fn bill_customers(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<BillRequest>,
) -> Result<Json<StaffAnswer<BillPage>>, StaffError> {
    let (start, end) = ordered(&body.start, &body.end);
    let query = bills::Customers { business_id: body.business_id.clone(), page: body.page.unwrap_or(1), start, end };
    Ok(staff_answer(state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "bill"))?))
}

/// `/crm_api/get_digital_bill_mis`.
async fn bill_mis(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<BillRequest>,
) -> Result<Json<StaffAnswer<Data<Mis>>>, StaffError> {
    let (start, end) = period_of(&body.start, &body.end, &body.date)?;
    let query = bills::GetMis { business_id: body.business_id, start, end };
    let mis: Mis = state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "bill"))?;
    Ok(staff_answer(Data { data: mis }))
}

/// Asks the bill's brand `query`; the answer's `counted` and one figure of the bill.
async fn count(
    state: &AppState,
    tenant: &str,
    query: impl Question<Reply = Counted> + Into<engage_actors::TenantQuery>,
    figure: Figure,
) -> Result<Json<Answer<BillCounted>>, StaffError> {
    let counted: Counted =
        state.platform.gateway.ask(tenant, query).await.map_err(|e| StaffError::from_query(e, "bill"))?;
    let mut body = BillCounted { counted: counted.counted, ..Default::default() };
    if let Some(bill) = &counted.bill {
        match figure {
            Figure::Clicked => body.clicked = Some(bill.clicked),
            Figure::FeedbackOpens => body.feedback_opens = Some(bill.feedback_opens),
            Figure::Downloads => body.download_flag = Some(bill.download_flag),
        }
    }
    Ok(answer(body))
}

/// The figure of the bill a count answers with.
enum Figure {
    Clicked,
    FeedbackOpens,
    Downloads,
}

/// `{counted[, clicked | feedback_opens | download_flag]}`: whether the bill counted the event, and
/// the bill's figure after it (the one the route counts).
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct BillCounted {
    /// False for an unknown bill (nothing changed).
    counted: bool,
    /// Opens of the bill (`/crm_api/invoice/open`).
    #[serde(skip_serializing_if = "Option::is_none")]
    clicked: Option<u64>,
    /// Opens of its feedback form (`/crm_api/feedback_invoice/open`).
    #[serde(skip_serializing_if = "Option::is_none")]
    feedback_opens: Option<u64>,
    /// Downloads (`/crm_api/invoice/download`).
    #[serde(skip_serializing_if = "Option::is_none")]
    download_flag: Option<u64>,
}

/// `{message, data, digital_bill}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StatusSet {
    /// "Digital bill turned on" or "… off".
    message: &'static str,
    /// The configuration now.
    data: LinkConfig,
    /// 1 on, 0 off.
    digital_bill: u8,
}

/// `{counted}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InsightCounted {
    /// False for an unknown bill or widget (nothing changed).
    counted: bool,
}

/// `/crm_api/invoice/open`.
async fn invoice_open(
    State(state): State<AppState>,
    Ingested { tenant, body }: Ingested<BillEventRequest>,
) -> Result<Json<Answer<BillCounted>>, StaffError> {
    let bill_id = bill_id(&state, &tenant, body.bill_id).await?;
    count(&state, &tenant, bills::Open { bill_id, now: Utc::now() }, Figure::Clicked).await
}

/// `/crm_api/feedback_invoice/open`.
async fn feedback_invoice_open(
    State(state): State<AppState>,
    Ingested { tenant, body }: Ingested<BillEventRequest>,
) -> Result<Json<Answer<BillCounted>>, StaffError> {
    let bill_id = bill_id(&state, &tenant, body.bill_id).await?;
    count(&state, &tenant, bills::FeedbackOpen { bill_id }, Figure::FeedbackOpens).await
}

/// `/crm_api/invoice/download`.
async fn invoice_download(
    State(state): State<AppState>,
    Ingested { tenant, body }: Ingested<BillEventRequest>,
) -> Result<Json<Answer<BillCounted>>, StaffError> {
    let bill_id = bill_id(&state, &tenant, body.bill_id).await?;
    count(&state, &tenant, bills::Download { bill_id }, Figure::Downloads).await
}

/// A bill id as sent: engage's own, or the link service's (its alias).
async fn bill_id(state: &AppState, tenant: &str, sent: String) -> Result<String, StaffError> {
    Ok(state.platform.gateway.ask(tenant, bills::ResolveBill { sent }).await?.bill_id)
}

/// `/crm_api/update/widget/insight`: an ingestion token (`token:`), or the bill page's own token
/// (`Authorization: Bearer`), which is good for its one bill only.
async fn widget_insight(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<Answer<InsightCounted>>, StaffError> {
    let headers: HeaderMap = request.headers().clone();
    let page = page_token(&state, &headers);
    let tenant = match page {
        Some(Ok(claims)) => Some(claims),
        Some(Err(())) => return Err(StaffError::invalid_credentials()),
        None => None,
    };
    let (tenant, only_bill, grant) = match tenant {
        Some(claims) => (claims.tenant, Some(claims.bill_id), None),
        None => {
            let grant = token(&state, TokenKind::Ingestion, &headers).await?;
            (grant.parent.clone(), None, Some(grant))
        }
    };
    let body: WidgetInsightRequest = checked_body(request, &state, grant.as_ref()).await?;
    if only_bill.as_ref().is_some_and(|only| *only != body.bill_id) {
        return Err(StaffError::invalid_credentials());
    }
    let event = if body.event_type == "watch" { InsightEvent::Watch } else { InsightEvent::Click };
    let bill_id = bill_id(&state, &tenant, body.bill_id).await?;
    let query = bills::Insight { bill_id, widget_id: body.widget_id, event, watch_time: body.watch_time.unwrap_or(0) };
    let counted: Counted =
        state.platform.gateway.ask(&tenant, query).await.map_err(|e| StaffError::from_query(e, "bill"))?;
    Ok(answer(InsightCounted { counted: counted.counted }))
}

/// The bill page token of `Authorization: Bearer`, when one is sent: its claims, or `Err` when it
/// is not one this service signed for a bill page (or has expired).
fn page_token(state: &AppState, headers: &HeaderMap) -> Option<Result<BillPageClaims, ()>> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    Some(state.platform.links.verify_as::<BillPageClaims>(token.trim()).map_err(|_| ()).and_then(|c| {
        if c.scope == "bill_page" {
            Ok(c)
        } else {
            Err(())
        }
    }))
}

/// `GET /b/{bill_id}`: the bill as a page; the open is counted as `/invoice/open` counts it.
async fn bill_page_route(State(state): State<AppState>, Path(bill_id): Path<String>) -> Response {
    let now = Utc::now();
    let not_found = || {
        (
            StatusCode::NOT_FOUND,
            Html(bill_page::message_page(
                "Bill not found",
                "This bill link is not known. Check the link in your message.",
            )),
        )
            .into_response()
    };
    if bill_id.len() > 64 || !bill_id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return not_found();
    }
    let owner = match state.platform.directory.bill_owner(&bill_id).await {
        Ok(owner) => owner,
        Err(error) => return unavailable(error),
    };
    let Some(tenant) = owner else { return not_found() };
    let counted: Counted = match state.platform.gateway.ask(&tenant, bills::Open { bill_id, now }).await {
        Ok(counted) => counted,
        Err(error) => return unavailable(error),
    };
    let Some(bill) = counted.bill else { return not_found() };
    if bill.expires_at.is_some_and(|at| at <= now) {
        let page = bill_page::message_page("This bill link has expired", "Ask the outlet for a copy of your bill.");
        return (StatusCode::GONE, Html(page)).into_response();
    }
    let claims = BillPageClaims {
        scope: "bill_page".to_owned(),
        tenant,
        bill_id: bill.bill_id.clone(),
        exp: (now + chrono::Duration::days(1)).timestamp(),
    };
    let token = state.platform.links.sign(&claims).unwrap_or_default();
    ([(header::CACHE_CONTROL, "no-store")], Html(bill_page::render(&bill, &counted.branding, &token))).into_response()
}

fn unavailable(error: impl std::fmt::Display) -> Response {
    tracing::warn!(%error, "bill page unavailable");
    let page = bill_page::message_page("Temporarily unavailable", "Please try again in a moment.");
    (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "1")], Html(page)).into_response()
}
