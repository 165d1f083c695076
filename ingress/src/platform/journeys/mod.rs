//! Automated journeys: the journey-type catalogue and each brand's journey configurations (spec
//! "Automated journeys", relative to `/crm_api`, POST, staff token, staff error family). The
//! configurations live in the brand's tenant actor ([`engage_actors::capabilities::journeys`]).
//!
//! | Route | Body | Answer |
//! |---|---|---|
//! | `/get/campaign/type/ids` | JourneyCatalogueRequest | `{status: true, data: [{id, title, description, campaign_type, icon_url, execution_type, fields, roi: {configured, enabled}}]}` |
//! | `/get/campaign/fields` | JourneyCatalogueRequest + `campaign_type_id` | `{status: true, data: {campaign_type_id, campaign_type, fields}}` |
//! | `/get/field/parameters` | JourneyCatalogueRequest + `campaign_type_id`, `ref_id` | `{status: true, data: {ref_id, input, required, options}}` |
//! | `/get/days/type/options` | JourneyCatalogueRequest | `{status: true, data: [{id, title, offset_days}]}`: the six send-timing ids |
//! | `/autoCampaign` | AutoCampaignRequest | `{status: true, message, data: <the new type>}` |
//! | `/save/campaign/journey` | SaveJourneyRequest | `{status: true, message, campaign_journey_id}` |
//! | `/enable/automated/campaign/` | JourneyRequest + `campaign_journey_id`, `campaign_enabled` | `{status: true, campaign_journey_id, campaign_enabled}` |
//! | `/view/campaign/journey` | JourneyRequest + `campaign_journey_id` | `{status: true, data: <the configuration>}` |
//! | `/get/campaign/mapped/business` | JourneyRequest (`child_business_id` optional) | `{status: true, data: [{child_business_id, journeys: [{…configuration, roi}]}]}` |
//! | `/get/auto_campaign_users` | JourneyReportRequest (`campaign_journey_id`, `page`, `page_size`) | `{status: true, data: [decision], total, page, page_size}` |
//! | `/view/sent/automated/campaigns` | JourneyReportRequest (`campaign_journey_id` optional) | `{status: true, data: [history row]}` |
//! | `/automated/campaigns/report` | JourneyReportRequest (`auto_id`, `business_id` optional) | `{status: true, data: [wallet transaction], count, total_debited}` |
//! | `/create/campaign_tag` | CampaignTagRequest (`tag_name`, `color`) | `{status: true, message, data: <the tag>}` |
//! | `/get/campaign_tags` | CampaignTagRequest | `{status: true, data: [tag]}` |
//! | `/journeys/settings` | JourneySettingsRequest | `{status: true, data: {quiet_hours, frequency_cap}}` |
//! | `/create/bulk/campaign` | multipart (CSV `file` with a `Phone` column, `business_id`, `campaign_name`, `channel`, `template_id`, `message`) | `{status: 1, campaign_id, queued_recipients, unpaid, unsubscribed, refused, refused_reason, invalid, duplicates}` |
//! | `GET /track/chat/link/{token}` (no `/crm_api`, no token) | – | 302 to the button's target; 400 bad token; 410 expired |
//!
//! `/get/campaign/mapped/business` also carries the `business_configs.auto_campaign` flags the
//! daily `auto_campaign_sync` job sets (`auto_campaign` of the brand, and of each outlet listed;
//! `null` before the first sync: the flag lags, as the spec says).
//!
//! An unknown `campaign_type_id` is a 400 naming `/campaign_type_id`; an unknown
//! `campaign_journey_id` is a 404.

pub mod answers;
pub mod requests;

use std::collections::BTreeMap;

use axum::extract::multipart::MultipartRejection;
use axum::extract::{Multipart, Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Json;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use engage_actors::capabilities::journeys::{
    self as journeys, check, Audience, BulkCampaign, BulkRecipient, BulkSpec, BusinessConfig, CampaignData,
    CampaignTag, JourneyChannel, JourneyConfig, JourneyField, JourneyRun, JourneySettings, JourneyType, Journeys,
    QuietHours, Report, RoiSummary, Runs, Tags, BULK_CHUNK, DAYS_TYPE_OPTIONS,
};
use engage_actors::domain::wallet::Channel;
use engage_actors::signed_links::LinkRefusal;

use crate::platform::edge::access::{self};
use crate::platform::edge::auth::{token, Auth};
use crate::platform::edge::contract::Scope;
use crate::platform::edge::errors::StaffError;
use crate::platform::edge::requests::{
    AutoCampaignRequest, CampaignDataInput, CampaignTagRequest, JourneyCatalogueRequest, JourneyReportRequest,
    JourneyRequest, JourneySettingsRequest, SaveJourneyRequest,
};
use crate::platform::edge::routes::Routes;
use crate::platform::edge::tokens::TokenKind;
use crate::platform::edge::upload::Form;
use crate::platform::edge::{answer, staff_answer, staff_tenant, Answer, Data, Saved, Staff, StaffAnswer};
use crate::state::AppState;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post("/crm_api/get/campaign/type/ids", "The journey types, with the brand's configured and enabled counts per type (roi)", campaign_type_ids)
        .post("/crm_api/get/campaign/fields", "The form fields of a journey type (campaign_type_id)", campaign_fields)
        .requires(&["campaign_type_id"])
        .post("/crm_api/get/field/parameters", "One field of a journey type's form, with its options (campaign_type_id, ref_id)", field_parameters)
        .requires(&["campaign_type_id", "ref_id"])
        .post("/crm_api/get/days/type/options", "The six send-timing options (send_days_type ids)", days_type_options)
        .post("/crm_api/autoCampaign", "Add a journey type (campaign_type must be new)", auto_campaign)
        .post("/crm_api/save/campaign/journey", "Save the journey of (brand, outlet, type): {status, message, campaign_journey_id}; the same triple again updates it; an unknown campaign_type_id is 400", save_journey)
        .post("/crm_api/enable/automated/campaign/", "Turn a journey on or off: {status, campaign_journey_id, campaign_enabled}; 404 for an unknown journey", enable_journey)
        .requires(&["campaign_journey_id", "campaign_enabled"])
        .post("/crm_api/view/campaign/journey", "A journey configuration, for editing; 404 for an unknown journey", view_journey)
        .requires(&["campaign_journey_id"])
        .post("/crm_api/get/campaign/mapped/business", "The brand's journeys grouped by outlet, each with its ROI (per mode; sent vs holdout conversion and lift); child_business_id optional. auto_campaign (of the brand, and of each outlet) is the business_configs flag the daily 12:47 auto_campaign_sync job sets (null before its first run)", mapped_business)
        .post("/crm_api/get/auto_campaign_users", "A page of a journey's audience: each customer's decision (sent, holdout, skipped with reason), messages and attributed orders and revenue: {status, data, total, page, page_size}", auto_campaign_users)
        .requires(&["campaign_journey_id"])
        .post("/crm_api/view/sent/automated/campaigns", "The journey send history, newest day first: {status, data: [{campaign_journey_id, businessId, parentBusinessId, run_day, sent_count, holdout_count, skipped, started_at, completed_at}]}", sent_campaigns)
        .post("/crm_api/automated/campaigns/report", "The wallet transactions of a campaign (auto_id), of one outlet or all: {status, data, count, total_debited}", campaigns_report)
        .requires(&["auto_id"])
        .post("/crm_api/journeys/settings", "Read or change the brand's quiet hours and frequency cap: {status, data: {quiet_hours, frequency_cap}}", journey_settings)
        .post("/crm_api/create/campaign_tag", "Add a campaign tag (tag_name unique per brand regardless of letter case; 400 at /tag_name otherwise): {status, message, data: {tag_id, tag_name, color, created_at}}", create_campaign_tag)
        .requires(&["tag_name"])
        .post("/crm_api/get/campaign_tags", "The brand's campaign tags by name: {status, data}", campaign_tags)
        .route(
            "/crm_api/create/bulk/campaign",
            post(create_bulk_campaign).layer(axum::extract::DefaultBodyLimit::disable()),
            json!({"post": bulk_campaign_operation()}),
        )
        .route(
            "/track/chat/link/{token}",
            get(track_chat_link),
            json!({"get": {
                "summary": "A chat button's tracking link: counts the click against the journey send and redirects to the button's target",
                "tags": ["platform"],
                "security": [],
                "parameters": [{"name": "token", "in": "path", "required": true, "schema": {"type": "string", "minLength": 1}}],
                "responses": {
                    "302": {"description": "counted; Location is the button's target",
                            "headers": {"Location": {"schema": {"type": "string"}}}},
                    "404": {"description": "not a tracking link this service signed; nothing counted",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}},
                    "410": {"description": "the link has expired (30 days after delivery); nothing counted",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}}}}}),
        )
}

/// The bulk campaign's multipart operation.
fn bulk_campaign_operation() -> Value {
    let mut bulk = crate::platform::edge::routes::operation(
        "Create a bulk campaign: multipart with parent_business_id, business_id (the paying outlet), campaign_name, channel (sms or chat), template_id, an optional message (x_cust_name, x_cust_mobile, x_cust_eid replaced) and file (CSV with a Phone column and optionally Name). Each valid distinct number (10 digits from 6; +91/91/0 prefixes dropped) gets one message, paid by the outlet's wallet (campaign price, auto_id bulk-<campaign_id>), queued for today's drain; a wallet that runs short leaves the rest unpaid (not sent). Bad rows are listed with their line numbers; a file without one valid number is a 400.",
        Auth::Staff,
        None,
        crate::platform::edge::contract::answer_schema::<Answer<answers::BulkQueued>>(),
    );
    bulk["requestBody"] = json!({"required": true, "content": {"multipart/form-data": {"schema": {"type": "object",
        "required": ["parent_business_id", "business_id", "campaign_name", "channel", "template_id", "file"],
        "propertyNames": crate::platform::edge::upload::field_name(),
        "properties": {"parent_business_id": {"type": "string", "minLength": 1, "maxLength": 128},
            "business_id": {"type": "string", "minLength": 1, "maxLength": 200},
            "campaign_name": {"type": "string", "minLength": 1, "maxLength": 200}, "channel": {"enum": ["sms", "chat"]},
            "template_id": {"type": "string", "minLength": 1, "maxLength": 200}, "message": {"type": "string", "maxLength": 2000},
            "file": {"type": "string", "format": "binary"}}}}}});
    bulk["responses"]["413"] = crate::platform::edge::upload::limit_answer();
    bulk["x-engage-scope"] = json!(crate::platform::edge::contract::Scope::Outlet.as_str());
    bulk
}

/// Every journey type `tenant` sees ([`journeys::GetTypes`]).
async fn all_types(state: &AppState, tenant: &str) -> Result<Vec<JourneyType>, StaffError> {
    Ok(state.platform.gateway.ask(tenant, journeys::GetTypes {}).await?.data)
}

/// The type `id` names among those `tenant` sees, or the 400 that names the field.
async fn journey_type(state: &AppState, tenant: &str, id: Option<&str>) -> Result<JourneyType, StaffError> {
    let Some(id) = id else {
        return Err(StaffError::invalid_message("/campaign_type_id", "campaign_type_id is required"));
    };
    all_types(state, tenant)
        .await?
        .into_iter()
        .find(|t| t.id == id)
        .ok_or_else(|| StaffError::not_found(&format!("journey type {id}")))
}

async fn tenant_journeys(
    state: &AppState,
    tenant: &str,
    child: Option<String>,
) -> Result<Vec<JourneyConfig>, StaffError> {
    let journeys: Journeys = state.platform.gateway.ask(tenant, journeys::List { child_business_id: child }).await?;
    Ok(journeys.data)
}

/// `/crm_api/get/campaign/type/ids`.
async fn campaign_type_ids(
    State(state): State<AppState>,
    request: Staff<JourneyCatalogueRequest>,
) -> Result<Json<StaffAnswer<Data<Vec<answers::TypeInUse>>>>, StaffError> {
    let journeys = tenant_journeys(&state, &request.tenant, None).await?;
    let data = all_types(&state, &request.tenant)
        .await?
        .into_iter()
        .map(|t| {
            let mine = journeys.iter().filter(|j| j.campaign_type_id == t.id);
            let configured = mine.clone().count();
            let enabled = mine.filter(|j| j.campaign_enabled == 1).count();
            answers::TypeInUse { journey_type: t, roi: answers::TypeUse { configured, enabled } }
        })
        .collect();
    Ok(staff_answer(Data { data }))
}

/// `/crm_api/get/campaign/fields`.
async fn campaign_fields(
    State(state): State<AppState>,
    request: Staff<JourneyCatalogueRequest>,
) -> Result<Json<StaffAnswer<Data<answers::TypeFields>>>, StaffError> {
    let t = journey_type(&state, &request.tenant, request.body.campaign_type_id.as_deref()).await?;
    let data = answers::TypeFields { campaign_type_id: t.id, campaign_type: t.campaign_type, fields: t.fields };
    Ok(staff_answer(Data { data }))
}

/// `/crm_api/get/field/parameters`.
async fn field_parameters(
    State(state): State<AppState>,
    request: Staff<JourneyCatalogueRequest>,
) -> Result<Json<StaffAnswer<Data<JourneyField>>>, StaffError> {
    let t = journey_type(&state, &request.tenant, request.body.campaign_type_id.as_deref()).await?;
    let Some(ref_id) = request.body.ref_id else {
        return Err(StaffError::invalid_message("/ref_id", "ref_id is required"));
    };
    let field = t.fields.into_iter().find(|f| f.ref_id == ref_id).ok_or_else(|| {
        StaffError::invalid_message("/ref_id", format!("a {} journey has no field {ref_id}", t.campaign_type))
    })?;
    Ok(staff_answer(Data { data: field }))
}

/// `/crm_api/get/days/type/options`.
async fn days_type_options(
    _request: Staff<JourneyCatalogueRequest>,
) -> Result<Json<StaffAnswer<Data<Vec<answers::DayOption>>>>, StaffError> {
    let data = DAYS_TYPE_OPTIONS
        .iter()
        .map(|(id, title, offset)| answers::DayOption { id, title, offset_days: *offset })
        .collect();
    Ok(staff_answer(Data { data }))
}

/// `{message, data}`: the type added.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TypeAdded {
    /// "journey type added".
    message: &'static str,
    /// The new type.
    data: JourneyType,
}

/// `/crm_api/autoCampaign`: a new journey type of the brand's, with the common form fields,
/// checked and added in one turn of the brand's actor (409 when the brand sees the
/// `campaign_type` already).
async fn auto_campaign(
    State(state): State<AppState>,
    request: Staff<AutoCampaignRequest>,
) -> Result<Json<StaffAnswer<TypeAdded>>, StaffError> {
    let body = request.body;
    let query = journeys::AddType {
        campaign_type: body.campaign_type,
        title: body.title,
        description: body.description.unwrap_or_default(),
        icon_url: body.icon_url.unwrap_or_default(),
        execution_type: body.execution_type,
    };
    let data = state.platform.gateway.ask(&request.tenant, query).await?;
    Ok(staff_answer(TypeAdded { message: "journey type added", data }))
}

/// The body's `campaign_data` as the actor stores it.
fn campaign_data(input: CampaignDataInput) -> Result<CampaignData, StaffError> {
    let channels = input
        .channels
        .iter()
        .map(|c| match c.as_str() {
            "sms" => Ok(JourneyChannel::Sms),
            "chat" => Ok(JourneyChannel::Chat),
            "push" => Ok(JourneyChannel::Push),
            other => Err(StaffError::invalid_message("/campaign_data/channels", format!("no channel {other}"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CampaignData {
        channels,
        sms_template: input.sms_template,
        chat_template: input.chat_template,
        push_template: input.push_template,
        daily_cap: input.daily_cap,
        send_days_type: input.send_days_type,
        days: input.days,
        trigger_minutes: input.trigger_minutes,
        rating: input.rating,
        frequency_rating: input.frequency_rating,
        promo_details: input.promo_details,
        orders: input.orders,
        holdout_percent: input.holdout_percent,
        chat_button_text: input.chat_button_text,
        chat_button_url: input.chat_button_url,
    })
}

/// `/crm_api/save/campaign/journey`.
async fn save_journey(
    State(state): State<AppState>,
    request: Staff<SaveJourneyRequest>,
) -> Result<Json<StaffAnswer<answers::JourneySaved>>, StaffError> {
    let Staff { tenant, body, .. } = request;
    let t = journey_type(&state, &tenant, Some(&body.campaign_type_id)).await?;
    let data = campaign_data(body.campaign_data)?;
    check(&t, &data)
        .map_err(|(field, reason)| StaffError::invalid_message(&format!("/campaign_data/{field}"), reason))?;
    let query = journeys::Save {
        child_business_id: body.child_business_id,
        campaign_type_id: t.id,
        campaign_type: t.campaign_type,
        campaign_data: Box::new(data),
    };
    let saved = state.platform.gateway.ask(&tenant, query).await?;
    let message = if saved.created { "journey saved" } else { "journey updated" };
    Ok(staff_answer(answers::JourneySaved { message, campaign_journey_id: saved.campaign_journey_id }))
}

fn journey_id(body: &JourneyRequest) -> Result<String, StaffError> {
    body.campaign_journey_id
        .clone()
        .ok_or_else(|| StaffError::invalid_message("/campaign_journey_id", "campaign_journey_id is required"))
}

/// `/crm_api/enable/automated/campaign/`.
async fn enable_journey(
    State(state): State<AppState>,
    request: Staff<JourneyRequest>,
) -> Result<Json<StaffAnswer<answers::Enabled>>, StaffError> {
    let id = journey_id(&request.body)?;
    let Some(enabled) = request.body.campaign_enabled else {
        return Err(StaffError::invalid_message("/campaign_enabled", "campaign_enabled (0 or 1) is required"));
    };
    let query = journeys::Enable { campaign_journey_id: id, enabled: enabled == 1 };
    let row: JourneyConfig = state.platform.gateway.ask(&request.tenant, query).await.map_err(journey_refusal)?;
    Ok(staff_answer(answers::Enabled {
        campaign_journey_id: row.campaign_journey_id,
        campaign_enabled: row.campaign_enabled,
    }))
}

/// An unknown journey is a journey, not a customer, that was not found.
fn journey_refusal(error: engage_actors::QueryError) -> StaffError {
    match error {
        engage_actors::QueryError::NotFound => StaffError::not_found("journey"),
        other => StaffError::from(other),
    }
}

/// `/crm_api/view/campaign/journey`.
async fn view_journey(
    State(state): State<AppState>,
    request: Staff<JourneyRequest>,
) -> Result<Json<StaffAnswer<Data<JourneyConfig>>>, StaffError> {
    let query = journeys::View { campaign_journey_id: journey_id(&request.body)? };
    let row: JourneyConfig = state.platform.gateway.ask(&request.tenant, query).await.map_err(journey_refusal)?;
    Ok(staff_answer(Data { data: row }))
}

/// `/crm_api/get/campaign/mapped/business`: the configurations grouped by outlet, each with its
/// ROI.
async fn mapped_business(
    State(state): State<AppState>,
    request: Staff<JourneyRequest>,
) -> Result<Json<StaffAnswer<answers::Mapped>>, StaffError> {
    let mut by_outlet: BTreeMap<String, Vec<answers::JourneyRoi>> = BTreeMap::new();
    for journey in tenant_journeys(&state, &request.tenant, request.body.child_business_id).await? {
        let query = journeys::Roi { campaign_journey_id: journey.campaign_journey_id.clone() };
        let roi: RoiSummary = state.platform.gateway.ask(&request.tenant, query).await?;
        by_outlet.entry(journey.child_business_id.clone()).or_default().push(answers::JourneyRoi { journey, roi });
    }
    let flags: Vec<BusinessConfig> = state.platform.gateway.ask(&request.tenant, journeys::GetFlags {}).await?.data;
    let flag = |business: &str| flags.iter().find(|f| f.business_id == business).map(|f| f.auto_campaign);
    let data = by_outlet
        .into_iter()
        .map(|(child, journeys)| {
            let auto_campaign = if child == "0" || child == request.tenant { flag("0") } else { flag(&child) };
            answers::OutletJourneys { child_business_id: child, auto_campaign, journeys }
        })
        .collect();
    Ok(staff_answer(answers::Mapped { auto_campaign: flag("0"), data }))
}

/// `/crm_api/get/auto_campaign_users`: a page of a journey's audience.
async fn auto_campaign_users(
    State(state): State<AppState>,
    request: Staff<JourneyReportRequest>,
) -> Result<Json<StaffAnswer<answers::AudiencePage>>, StaffError> {
    let Some(id) = request.body.campaign_journey_id.clone() else {
        return Err(StaffError::invalid_message("/campaign_journey_id", "campaign_journey_id is required"));
    };
    let page = request.body.page.unwrap_or(1).max(1) as usize;
    let page_size = request.body.page_size.unwrap_or(20).clamp(1, 100) as usize;
    let query = journeys::GetAudience { campaign_journey_id: id, offset: (page - 1) * page_size, limit: page_size };
    let audience: Audience = state.platform.gateway.ask(&request.tenant, query).await.map_err(journey_refusal)?;
    Ok(staff_answer(answers::AudiencePage { data: audience.data, total: audience.total, page, page_size }))
}

/// `/crm_api/view/sent/automated/campaigns`: the send history.
async fn sent_campaigns(
    State(state): State<AppState>,
    request: Staff<JourneyReportRequest>,
) -> Result<Json<StaffAnswer<Data<Vec<JourneyRun>>>>, StaffError> {
    let query = journeys::GetRuns { campaign_journey_id: request.body.campaign_journey_id.clone() };
    let runs: Runs = state.platform.gateway.ask(&request.tenant, query).await?;
    Ok(staff_answer(Data { data: runs.data }))
}

/// `/crm_api/automated/campaigns/report`: a campaign's wallet transactions.
async fn campaigns_report(
    State(state): State<AppState>,
    request: Staff<JourneyReportRequest>,
) -> Result<Json<StaffAnswer<Report>>, StaffError> {
    let Some(auto_id) = request.body.auto_id.clone() else {
        return Err(StaffError::invalid_message("/auto_id", "auto_id is required"));
    };
    let query = journeys::GetReport { auto_id, business_id: request.body.business_id.clone() };
    let report: Report = state.platform.gateway.ask(&request.tenant, query).await?;
    Ok(staff_answer(report))
}

/// `/crm_api/journeys/settings`: read, or change the fields given.
async fn journey_settings(
    State(state): State<AppState>,
    request: Staff<JourneySettingsRequest>,
) -> Result<Json<StaffAnswer<Data<JourneySettings>>>, StaffError> {
    let body = request.body;
    let set = if body.quiet_hours.is_some() || body.frequency_cap.is_some() {
        let query = journeys::Settings { set: None };
        let mut settings: JourneySettings = state.platform.gateway.ask(&request.tenant, query).await?;
        if let Some(hours) = body.quiet_hours {
            let hours = QuietHours { start: hours.start, end: hours.end };
            if !hours.valid() {
                return Err(StaffError::invalid_message("/quiet_hours", "start and end are HH:MM times"));
            }
            settings.quiet_hours = (hours.start != hours.end).then_some(hours);
        }
        if let Some(cap) = body.frequency_cap {
            settings.frequency_cap = (cap > 0).then_some(cap);
        }
        Some(settings)
    } else {
        None
    };
    let settings: JourneySettings = state.platform.gateway.ask(&request.tenant, journeys::Settings { set }).await?;
    Ok(staff_answer(Data { data: settings }))
}

/// `/crm_api/create/campaign_tag`.
async fn create_campaign_tag(
    State(state): State<AppState>,
    request: Staff<CampaignTagRequest>,
) -> Result<Json<StaffAnswer<Saved<CampaignTag>>>, StaffError> {
    let Some(tag_name) = request.body.tag_name.clone().filter(|n| !n.trim().is_empty()) else {
        return Err(StaffError::invalid_message("/tag_name", "tag_name is required"));
    };
    let query = journeys::CreateTag { tag_name, color: request.body.color.clone() };
    let tag: CampaignTag = state.platform.gateway.ask(&request.tenant, query).await.map_err(|error| match error {
        engage_actors::QueryError::Invalid(message) => StaffError::invalid_message("/tag_name", message),
        other => StaffError::from(other),
    })?;
    Ok(staff_answer(Saved { message: "tag created".into(), data: tag }))
}

/// `/crm_api/get/campaign_tags`.
async fn campaign_tags(
    State(state): State<AppState>,
    request: Staff<CampaignTagRequest>,
) -> Result<Json<StaffAnswer<Data<Vec<CampaignTag>>>>, StaffError> {
    let tags: Tags = state.platform.gateway.ask(&request.tenant, journeys::GetTags {}).await?;
    Ok(staff_answer(Data { data: tags.data }))
}

/// `/crm_api/create/bulk/campaign`: multipart with `parent_business_id`, `business_id` (the
/// paying outlet), `campaign_name`, `channel` (`sms` or `chat`), `template_id`, an optional
/// `message` and `file`, a CSV with a `Phone` column (and optionally `Name`). Each valid, distinct
/// number gets one message, paid by the outlet's wallet, queued for today's drain. Answers
/// `{status: 1, campaign_id, queued_recipients, unpaid, invalid: [{line, value, reason}],
/// duplicates: [{line, phone}]}`; a file without one valid number is a 400 listing the lines.
async fn create_bulk_campaign(
    State(state): State<AppState>,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Json<Answer<answers::BulkQueued>>, StaffError> {
    let grant = token(&state, TokenKind::Staff, &headers).await?;
    let form = Form::read(
        &headers,
        multipart,
        "parent_business_id, business_id, campaign_name, channel, template_id and file (a CSV with a Phone column)",
        state.settings.max_upload_bytes,
    )
    .await?;
    let tenant = staff_tenant(&grant, form.field(&["parent_business_id", "parentBusinessId"]))?;
    let required = |name: &str, longest: usize| match form.field(&[name]) {
        None => Err(StaffError::invalid_message(&format!("/{name}"), format!("{name} is required"))),
        Some(value) if value.chars().count() > longest => {
            Err(StaffError::invalid_message(&format!("/{name}"), format!("{name} is longer than {longest} characters")))
        }
        Some(value) => Ok(value),
    };
    let business_id = required("business_id", 200)?;
    if let Err(denied) = access::admit_outlet(&grant, Scope::Outlet, Some(&business_id)) {
        return Err(denied.into());
    }
    let campaign_name = required("campaign_name", 200)?;
    let channel = match required("channel", 10)?.as_str() {
        "sms" => Channel::Sms,
        "chat" => Channel::Chat,
        _ => return Err(StaffError::invalid_message("/channel", "channel is sms or chat")),
    };
    let template_id = required("template_id", 200)?;
    let message = form.field(&["message"]);
    if message.as_ref().is_some_and(|m| m.chars().count() > 2000) {
        return Err(StaffError::invalid_message("/message", "message is longer than 2000 characters"));
    }
    let (mut recipients, mut invalid, mut duplicates) = (Vec::new(), Vec::new(), Vec::new());
    let mut seen = std::collections::BTreeSet::new();
    for row in form.phone_rows()? {
        let value = match row.phone {
            Ok(value) => value,
            Err(reason) => {
                invalid.push(answers::InvalidLine { line: row.line, value: None, reason: reason.to_string() });
                continue;
            }
        };
        match engage_actors::domain::phone::indian_mobile(&value) {
            None => invalid.push(answers::InvalidLine {
                line: row.line,
                value: Some(value),
                reason: "not a 10-digit mobile number starting 6-9".to_owned(),
            }),
            Some(phone) if !seen.insert(phone.clone()) => {
                duplicates.push(answers::DuplicatePhone { line: row.line, phone })
            }
            Some(phone) => {
                let name = row.columns.get("name").filter(|n| !n.is_empty()).cloned();
                recipients.push(BulkRecipient { phone, name });
            }
        }
    }
    if recipients.is_empty() {
        let issues = invalid
            .iter()
            .take(100)
            .map(|bad| crate::error::Issue { pointer: format!("/file/line/{}", bad.line), message: bad.reason.clone() })
            .collect::<Vec<_>>();
        return Err(if issues.is_empty() {
            StaffError::invalid_message("/file", "the file has no recipient")
        } else {
            StaffError::invalid(issues)
        });
    }
    let now = chrono::Utc::now();
    let spec = BulkSpec { campaign_name, business_id, channel, template_id, message };
    let mut campaign: BulkCampaign = state.platform.gateway.ask(&tenant, journeys::BulkCreate { spec, now }).await?;
    for chunk in recipients.chunks(BULK_CHUNK) {
        let query = journeys::BulkQueue { campaign_id: campaign.campaign_id, recipients: chunk.to_vec(), now };
        campaign = state.platform.gateway.ask(&tenant, query).await?;
    }
    tracing::info!(
        tenant,
        campaign_id = campaign.campaign_id,
        queued = campaign.queued,
        unpaid = campaign.unpaid,
        invalid = invalid.len(),
        duplicates = duplicates.len(),
        "bulk campaign queued"
    );
    Ok(answer(answers::BulkQueued {
        campaign_id: campaign.campaign_id,
        queued_recipients: campaign.queued,
        unpaid: campaign.unpaid,
        unsubscribed: campaign.unsubscribed,
        refused: campaign.refused,
        refused_reason: campaign.refused_reason.clone(),
        auto_id: campaign.auto_id(),
        delivery_date: campaign.delivery_date,
        invalid,
        duplicates,
    }))
}

/// `GET /track/chat/link/{token}`: a chat button's tracking link. A token this service signed
/// and not expired counts the click against its journey send and redirects (302) to the target;
/// a token it did not sign names no link (404), an expired one is a 410, and nothing is counted.
async fn track_chat_link(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    let claims = match state.platform.links.verify(&token) {
        Ok(claims) => claims,
        Err(LinkRefusal::Expired) => return StaffError::gone("this link has expired").into_response(),
        Err(LinkRefusal::Invalid) => return StaffError::not_found("tracking link").into_response(),
    };
    let query = journeys::Click {
        campaign_journey_id: claims.journey.clone(),
        phone: claims.phone.clone(),
        occasion: claims.occasion.clone(),
        now: chrono::Utc::now(),
    };
    // the customer is sent on even when the count fails: the click is logged, not lost silently
    match state.platform.gateway.ask(&claims.tenant, query).await {
        Ok(clicked) => tracing::info!(
            tenant = claims.tenant,
            journey = claims.journey,
            counted = clicked.counted,
            "chat link clicked"
        ),
        Err(error) => tracing::warn!(tenant = claims.tenant, journey = claims.journey, %error,
                                     "chat link click not counted"),
    }
    (StatusCode::FOUND, [(header::LOCATION, claims.target)]).into_response()
}
