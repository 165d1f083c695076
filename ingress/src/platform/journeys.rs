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
//!
//! An unknown `campaign_type_id` is a 400 naming `/campaign_type_id`; an unknown
//! `campaign_journey_id` is a 404.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use engage_actors::capabilities::journeys::{
    builtin_types, check, common_fields, Audience, CampaignData, CampaignTag, JourneyChannel, JourneyConfig,
    JourneySettings, JourneyType, Journeys, JourneysQuery, QuietHours, Report, RoiSummary, Runs, Saved, Tags,
    DAYS_TYPE_OPTIONS,
};
use engage_actors::keys;
use engage_actors::repo::JOURNEY_TYPES;

use super::edge::{staff_answer, Staff, StaffAnswer};
use super::errors::StaffError;
use super::requests::{
    AutoCampaignRequest, CampaignDataInput, CampaignTagRequest, JourneyCatalogueRequest, JourneyReportRequest,
    JourneyRequest, JourneySettingsRequest, SaveJourneyRequest,
};
use crate::AppState;

/// What the journey routes answer.
type Answered = Result<Json<StaffAnswer<Value>>, StaffError>;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/crm_api/get/campaign/type/ids", post(campaign_type_ids))
        .route("/crm_api/get/campaign/fields", post(campaign_fields))
        .route("/crm_api/get/field/parameters", post(field_parameters))
        .route("/crm_api/get/days/type/options", post(days_type_options))
        .route("/crm_api/autoCampaign", post(auto_campaign))
        .route("/crm_api/save/campaign/journey", post(save_journey))
        .route("/crm_api/enable/automated/campaign/", post(enable_journey))
        .route("/crm_api/view/campaign/journey", post(view_journey))
        .route("/crm_api/get/campaign/mapped/business", post(mapped_business))
        .route("/crm_api/get/auto_campaign_users", post(auto_campaign_users))
        .route("/crm_api/view/sent/automated/campaigns", post(sent_campaigns))
        .route("/crm_api/automated/campaigns/report", post(campaigns_report))
        .route("/crm_api/journeys/settings", post(journey_settings))
        .route("/crm_api/create/campaign_tag", post(create_campaign_tag))
        .route("/crm_api/get/campaign_tags", post(campaign_tags))
}

/// Every journey type: the eight built-in ones, then those `/crm_api/autoCampaign` added.
async fn all_types(state: &AppState) -> Result<Vec<JourneyType>, StaffError> {
    let mut types = builtin_types();
    let added: Vec<JourneyType> =
        state.platform.repo.all(JOURNEY_TYPES, "all").await.map_err(StaffError::unavailable)?;
    types.extend(added);
    Ok(types)
}

/// The type `id` names, or the 400 that names the field.
async fn journey_type(state: &AppState, id: Option<&str>) -> Result<JourneyType, StaffError> {
    let Some(id) = id else {
        return Err(StaffError::invalid_message("/campaign_type_id", "campaign_type_id is required"));
    };
    all_types(state)
        .await?
        .into_iter()
        .find(|t| t.id == id)
        .ok_or_else(|| StaffError::invalid_message("/campaign_type_id", format!("no journey type {id}")))
}

async fn brand_journeys(
    state: &AppState,
    brand: &str,
    child: Option<String>,
) -> Result<Vec<JourneyConfig>, StaffError> {
    let journeys: Journeys =
        state.platform.gateway.ask_as(brand, JourneysQuery::List { child_business_id: child }).await?;
    Ok(journeys.data)
}

/// `/crm_api/get/campaign/type/ids`.
async fn campaign_type_ids(State(state): State<AppState>, request: Staff<JourneyCatalogueRequest>) -> Answered {
    let journeys = brand_journeys(&state, &request.brand, None).await?;
    let data: Vec<Value> = all_types(&state)
        .await?
        .into_iter()
        .map(|t| {
            let mine = journeys.iter().filter(|j| j.campaign_type_id == t.id);
            let configured = mine.clone().count();
            let enabled = mine.filter(|j| j.campaign_enabled == 1).count();
            let mut entry = json!(t);
            entry["roi"] = json!({"configured": configured, "enabled": enabled});
            entry
        })
        .collect();
    Ok(staff_answer(json!({"data": data})))
}

/// `/crm_api/get/campaign/fields`.
async fn campaign_fields(State(state): State<AppState>, request: Staff<JourneyCatalogueRequest>) -> Answered {
    let t = journey_type(&state, request.body.campaign_type_id.as_deref()).await?;
    Ok(staff_answer(json!({"data": {"campaign_type_id": t.id, "campaign_type": t.campaign_type, "fields": t.fields}})))
}

/// `/crm_api/get/field/parameters`.
async fn field_parameters(State(state): State<AppState>, request: Staff<JourneyCatalogueRequest>) -> Answered {
    let t = journey_type(&state, request.body.campaign_type_id.as_deref()).await?;
    let Some(ref_id) = request.body.ref_id else {
        return Err(StaffError::invalid_message("/ref_id", "ref_id is required"));
    };
    let field = t.fields.into_iter().find(|f| f.ref_id == ref_id).ok_or_else(|| {
        StaffError::invalid_message("/ref_id", format!("a {} journey has no field {ref_id}", t.campaign_type))
    })?;
    Ok(staff_answer(json!({"data": field})))
}

/// `/crm_api/get/days/type/options`.
async fn days_type_options(_request: Staff<JourneyCatalogueRequest>) -> Answered {
    let data: Vec<Value> = DAYS_TYPE_OPTIONS
        .iter()
        .map(|(id, title, offset)| json!({"id": id, "title": title, "offset_days": offset}))
        .collect();
    Ok(staff_answer(json!({"data": data})))
}

/// `/crm_api/autoCampaign`: a new journey type, with the common form fields.
async fn auto_campaign(State(state): State<AppState>, request: Staff<AutoCampaignRequest>) -> Answered {
    let body = request.body;
    if all_types(&state).await?.iter().any(|t| t.campaign_type == body.campaign_type) {
        return Err(StaffError::invalid_message(
            "/campaign_type",
            format!("a journey type {} exists already", body.campaign_type),
        ));
    }
    let fields = common_fields();
    let id = engage_actors::capabilities::journeys::journey_id("type", "", &body.campaign_type);
    let new = JourneyType {
        id: id.clone(),
        title: body.title,
        description: body.description.unwrap_or_default(),
        campaign_type: body.campaign_type,
        icon_url: body.icon_url.unwrap_or_default(),
        execution_type: body.execution_type,
        fields,
    };
    let op = keys::journey_type(&id).put(&new);
    state.platform.repo.store().batch(vec![op]).await.map_err(StaffError::unavailable)?;
    Ok(staff_answer(json!({"message": "journey type added", "data": new})))
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
    })
}

/// `/crm_api/save/campaign/journey`.
async fn save_journey(State(state): State<AppState>, request: Staff<SaveJourneyRequest>) -> Answered {
    let Staff { brand, body, .. } = request;
    let t = journey_type(&state, Some(&body.campaign_type_id)).await?;
    let data = campaign_data(body.campaign_data)?;
    check(&t, &data)
        .map_err(|(field, reason)| StaffError::invalid_message(&format!("/campaign_data/{field}"), reason))?;
    let query = JourneysQuery::Save {
        child_business_id: body.child_business_id,
        campaign_type_id: t.id,
        campaign_type: t.campaign_type,
        campaign_data: Box::new(data),
    };
    let saved: Saved = state.platform.gateway.ask_as(&brand, query).await?;
    let message = if saved.created { "journey saved" } else { "journey updated" };
    Ok(staff_answer(json!({"message": message, "campaign_journey_id": saved.campaign_journey_id})))
}

fn journey_id(body: &JourneyRequest) -> Result<String, StaffError> {
    body.campaign_journey_id
        .clone()
        .ok_or_else(|| StaffError::invalid_message("/campaign_journey_id", "campaign_journey_id is required"))
}

/// `/crm_api/enable/automated/campaign/`.
async fn enable_journey(State(state): State<AppState>, request: Staff<JourneyRequest>) -> Answered {
    let id = journey_id(&request.body)?;
    let Some(enabled) = request.body.campaign_enabled else {
        return Err(StaffError::invalid_message("/campaign_enabled", "campaign_enabled (0 or 1) is required"));
    };
    let query = JourneysQuery::Enable { campaign_journey_id: id, enabled: enabled == 1 };
    let row: JourneyConfig = state.platform.gateway.ask_as(&request.brand, query).await.map_err(journey_refusal)?;
    Ok(staff_answer(json!({"campaign_journey_id": row.campaign_journey_id, "campaign_enabled": row.campaign_enabled})))
}

/// An unknown journey is a journey, not a customer, that was not found.
fn journey_refusal(error: engage_actors::QueryError) -> StaffError {
    match error {
        engage_actors::QueryError::NotFound => StaffError::not_found("journey"),
        other => StaffError::from(other),
    }
}

/// `/crm_api/view/campaign/journey`.
async fn view_journey(State(state): State<AppState>, request: Staff<JourneyRequest>) -> Answered {
    let query = JourneysQuery::View { campaign_journey_id: journey_id(&request.body)? };
    let row: JourneyConfig = state.platform.gateway.ask_as(&request.brand, query).await.map_err(journey_refusal)?;
    Ok(staff_answer(json!({"data": row})))
}

/// `/crm_api/get/campaign/mapped/business`: the configurations grouped by outlet, each with its
/// ROI.
async fn mapped_business(State(state): State<AppState>, request: Staff<JourneyRequest>) -> Answered {
    let mut by_outlet: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for journey in brand_journeys(&state, &request.brand, request.body.child_business_id).await? {
        let query = JourneysQuery::Roi { campaign_journey_id: journey.campaign_journey_id.clone() };
        let roi: RoiSummary = state.platform.gateway.ask_as(&request.brand, query).await?;
        let mut entry = json!(journey);
        entry["roi"] = json!(roi);
        by_outlet.entry(journey.child_business_id.clone()).or_default().push(entry);
    }
    let data: Vec<Value> = by_outlet
        .into_iter()
        .map(|(child, journeys)| json!({"child_business_id": child, "journeys": journeys}))
        .collect();
    Ok(staff_answer(json!({"data": data})))
}

/// `/crm_api/get/auto_campaign_users`: a page of a journey's audience.
async fn auto_campaign_users(State(state): State<AppState>, request: Staff<JourneyReportRequest>) -> Answered {
    let Some(id) = request.body.campaign_journey_id.clone() else {
        return Err(StaffError::invalid_message("/campaign_journey_id", "campaign_journey_id is required"));
    };
    let page = request.body.page.unwrap_or(1).max(1) as usize;
    let page_size = request.body.page_size.unwrap_or(20).clamp(1, 100) as usize;
    let query = JourneysQuery::Audience { campaign_journey_id: id, offset: (page - 1) * page_size, limit: page_size };
    let audience: Audience = state.platform.gateway.ask_as(&request.brand, query).await.map_err(journey_refusal)?;
    Ok(staff_answer(json!({"data": audience.data, "total": audience.total, "page": page, "page_size": page_size})))
}

/// `/crm_api/view/sent/automated/campaigns`: the send history.
async fn sent_campaigns(State(state): State<AppState>, request: Staff<JourneyReportRequest>) -> Answered {
    let query = JourneysQuery::Runs { campaign_journey_id: request.body.campaign_journey_id.clone() };
    let runs: Runs = state.platform.gateway.ask_as(&request.brand, query).await?;
    Ok(staff_answer(json!({"data": runs.data})))
}

/// `/crm_api/automated/campaigns/report`: a campaign's wallet transactions.
async fn campaigns_report(State(state): State<AppState>, request: Staff<JourneyReportRequest>) -> Answered {
    let Some(auto_id) = request.body.auto_id.clone() else {
        return Err(StaffError::invalid_message("/auto_id", "auto_id is required"));
    };
    let query = JourneysQuery::Report { auto_id, business_id: request.body.business_id.clone() };
    let report: Report = state.platform.gateway.ask_as(&request.brand, query).await?;
    Ok(staff_answer(json!(report)))
}

/// `/crm_api/journeys/settings`: read, or change the fields given.
async fn journey_settings(State(state): State<AppState>, request: Staff<JourneySettingsRequest>) -> Answered {
    let body = request.body;
    let set = if body.quiet_hours.is_some() || body.frequency_cap.is_some() {
        let query = JourneysQuery::Settings { set: None };
        let mut settings: JourneySettings = state.platform.gateway.ask_as(&request.brand, query).await?;
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
    let settings: JourneySettings =
        state.platform.gateway.ask_as(&request.brand, JourneysQuery::Settings { set }).await?;
    Ok(staff_answer(json!({"data": settings})))
}

/// `/crm_api/create/campaign_tag`.
async fn create_campaign_tag(State(state): State<AppState>, request: Staff<CampaignTagRequest>) -> Answered {
    let Some(tag_name) = request.body.tag_name.clone().filter(|n| !n.trim().is_empty()) else {
        return Err(StaffError::invalid_message("/tag_name", "tag_name is required"));
    };
    let query = JourneysQuery::CreateTag { tag_name, color: request.body.color.clone() };
    let tag: CampaignTag = state.platform.gateway.ask_as(&request.brand, query).await.map_err(|error| match error {
        engage_actors::QueryError::Invalid(message) => StaffError::invalid_message("/tag_name", message),
        other => StaffError::from(other),
    })?;
    Ok(staff_answer(json!({"message": "tag created", "data": tag})))
}

/// `/crm_api/get/campaign_tags`.
async fn campaign_tags(State(state): State<AppState>, request: Staff<CampaignTagRequest>) -> Answered {
    let tags: Tags = state.platform.gateway.ask_as(&request.brand, JourneysQuery::Tags).await?;
    Ok(staff_answer(json!({"data": tags.data})))
}
