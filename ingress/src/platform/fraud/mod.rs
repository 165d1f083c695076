//! Fraud prevention routes (spec "Fraud prevention", relative to `/crm_api`, staff token; the
//! brand is `parentBusinessId` or `parent_business_id`, a string or an integer, and must be the
//! staff token's). Velocity checks and the flag state machine live in the tenant actor
//! (`engage_actors::domain::fraud`); blocklist and alert settings are plain tables.
//!
//! | Route | Answer |
//! |---|---|
//! | `/configure_fraud_wallet_rules` | `{status: true, message, rules}` |
//! | `/configure_fraud_alert_settings` | `{status: true, message, settings}` |
//! | `/get_fraud_configuration` | `{status: true, data: {wallet_rules, alert_settings}}` |
//! | `/upload_blocklist_contacts` (multipart: `parent_business_id`, `file` CSV with a `Phone` column) | `{status: true, inserted, duplicates[{line, contact}], invalid[{line, value, reason}], batches}` |
//! | `/delete_blocklist_contacts` (`contacts[]`) | `{status: true, deleted}` |
//! | `/block_unblock_resolve_contacts` (`contact`/`contacts`, `status` 2 block or 3 unblock, `comment`) | `{status: true, results[{contact, ok, flags?, error?}]}`; 409 when every contact was refused |
//! | `/mark_resolve_contacts` (`contact`/`contacts`, `comment`) | same |
//! | `/get_blocklist_contacts` (`page`, `page_size`) | `{status: true, data, total}` |
//! | `GET /fraud/check-customer-blocked?contact=…&parent_business_id=…` | `{status: true, contact, blocked, blocklisted, is_blocked}` |
//! | `/api/v1/fraud/evaluate-customer` (`contact`) | `{status: true, data: {blocked, open_flags, counts, limits}}` |
//! | `/view_fraud_customers` (`status`, `page`, `page_size`) | `{status: true, data: flags, total}` |
//! | `/group_list_fraud_contacts` | `{status: true, data: [{contact, name, flags, fraud_types, latest}]}` |
//! | `/get_fraud_list_mis` (`start`, `end` dates) | `{status: true, data: {total, by_type: {type: {pending, resolved}}}}` |
//!
//! CSV rules: the header must have a `Phone` column (case and surrounding spaces ignored); a value
//! is valid when it is 10 digits not starting with 0–5; rows are stored in batches of 1000 with
//! source `csv`; invalid rows are reported with their line numbers (the header is line 1); a
//! number already on the blocklist or repeated in the file is a duplicate.
//!
//! Every write (velocity limits, flag actions, alert settings, blocklist additions and removals,
//! alert sends) is a [`FraudQuery`](engage_actors::capabilities::fraud::FraudQuery) answered by the brand's tenant actor
//! ([`engage_actors::capabilities::fraud`]); these handlers parse and answer.
//!
//! `/send_fraud_alert` (`contact`, `business_id`): one message per alert recipient, on the
//! configured channel, into today's (IST) channel queue; each debits `business_id`'s wallet the
//! channel cost plus GST (digital-bill prices); a recipient the wallet cannot pay for is skipped.
//! One alert per contact, recipient and day: sending again the same day charges nothing.
//! Answer: `{status: true, queued, skipped[{recipient, reason}], charged}`.

pub mod answers;
pub mod requests;

use std::collections::BTreeMap;

use axum::extract::{Multipart, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::Json;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use engage_actors::capabilities::fraud::{
    self as fraud, AlertSent, AlertSettings, BlocklistEntry, Blocklisted, Evaluation, Unblocklisted,
};
use engage_actors::domain::fraud::{FlagAction, FraudFlag, VelocityRules};
use engage_actors::QueryError;

use crate::platform::edge::access::{self};
use crate::platform::edge::auth::{token, Auth};
use crate::platform::edge::contract::answer_schema;
use crate::platform::edge::contract::Scope;
use crate::platform::edge::errors::StaffError;
use crate::platform::edge::requests::{FraudAlertSettingsRequest, FraudQueryRequest, FraudWalletRulesRequest};
use crate::platform::edge::routes::Routes;
use crate::platform::edge::tokens::TokenKind;
use crate::platform::edge::upload::Form;
use crate::platform::edge::{staff_answer, staff_tenant, Data, Staff, StaffAnswer};
use crate::state::AppState;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post("/crm_api/configure_fraud_wallet_rules", "Set velocity limits (L allowed per IST period; the L+1-th is a breach)", configure_wallet_rules)
        .post("/crm_api/configure_fraud_alert_settings", "Set fraud alert recipients, channel and template", configure_alert_settings)
        .post("/crm_api/get_fraud_configuration", "Read velocity limits and alert settings", get_configuration)
        .route(
            "/crm_api/upload_blocklist_contacts",
            post(upload_blocklist).layer(axum::extract::DefaultBodyLimit::disable()),
            json!({"post": upload_operation()}),
        )
        .post("/crm_api/delete_blocklist_contacts", "Delete blocklist entries (contacts[])", delete_blocklist)
        .post("/crm_api/block_unblock_resolve_contacts", "status 2 blocks (flagged -> blocked), 3 unblocks (blocked -> unblocked); 409 when refused", block_unblock_resolve)
        .requires(&["status"])
        .rule(json!({"properties": {"status": {"enum": [2, 3]}}}))
        .rule(json!({"anyOf": [{"required": ["contact"]}, {"required": ["contacts"]}]}))
        .tweak(flag_conflict)
        .post("/crm_api/mark_resolve_contacts", "Resolve flagged contacts (flagged -> resolved)", mark_resolve)
        .rule(json!({"anyOf": [{"required": ["contact"]}, {"required": ["contacts"]}]}))
        .tweak(flag_conflict)
        .post("/crm_api/get_blocklist_contacts", "Paginated blocklist", get_blocklist)
        .route("/crm_api/fraud/check-customer-blocked", get(check_blocked), json!({"get": check_blocked_operation()}))
        .post("/crm_api/api/v1/fraud/evaluate-customer", "Blocked state, open flags, velocity counts and limits of a contact", evaluate_customer)
        .requires(&["contact"])
        .post("/crm_api/view_fraud_customers", "Paginated flags, newest first, optionally by status", view_fraud_customers)
        .post("/crm_api/group_list_fraud_contacts", "Flags grouped by contact", group_list)
        .post("/crm_api/get_fraud_list_mis", "Flag counts by fraud type and status between start and end", fraud_mis)
        .post("/crm_api/send_fraud_alert", "Queue the fraud alert about `contact` to the alert recipients, debiting `business_id`'s wallet per message (skipped below the channel cost)", send_fraud_alert)
        .requires(&["contact", "business_id"])
}

/// The 409 of the flag routes: every contact's transition was refused; the body says why, per contact.
fn flag_conflict(op: &mut Value) {
    op["responses"]["409"] = json!({"description": "every contact's flag transition is refused in its state: {status: true, results: [{contact, ok: false, error}]}",
        "content": {"application/json": {"schema": answer_schema::<answers::FlagResults>()}}});
}

/// The blocklist upload's multipart operation.
fn upload_operation() -> Value {
    let mut upload = crate::platform::edge::routes::operation(
        "Upload blocklist contacts: multipart with parent_business_id and file (CSV with a Phone column; 10 digits not starting 0-5)",
        Auth::Staff,
        None,
        answer_schema::<StaffAnswer<answers::Uploaded>>(),
    );
    upload["requestBody"] = json!({"required": true, "content": {"multipart/form-data": {"schema": {"type": "object",
        "required": ["parent_business_id", "file"],
        "propertyNames": crate::platform::edge::upload::field_name(),
        "properties": {"parent_business_id": {"type": "string", "minLength": 1, "maxLength": 128},
            "file": {"type": "string", "format": "binary"}}}}}});
    upload["responses"]["413"] = crate::platform::edge::upload::limit_answer();
    upload["x-engage-scope"] = json!(Scope::Tenant.as_str());
    upload
}

/// `/crm_api/fraud/check-customer-blocked`: a query string, no body.
fn check_blocked_operation() -> Value {
    let mut blocked = crate::platform::edge::routes::operation(
        "Is a contact blocked (blocklist or staff block)?",
        Auth::Staff,
        None,
        answer_schema::<StaffAnswer<answers::Blocked>>(),
    );
    blocked["parameters"] = json!([
        {"name": "contact", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1}},
        {"name": "parent_business_id", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": 128}}]);
    blocked["x-engage-scope"] = json!(Scope::Tenant.as_str());
    blocked
}

fn limit(given: Option<u32>) -> Option<u32> {
    given.filter(|v| *v > 0)
}

async fn configure_wallet_rules(
    State(state): State<AppState>,
    request: Staff<FraudWalletRulesRequest>,
) -> Result<Json<StaffAnswer<answers::RulesSaved>>, StaffError> {
    let Staff { tenant, body, .. } = request;
    let rules = VelocityRules {
        redemption_limit_value: limit(body.redemption_limit_value),
        redemption_limit_period: body.redemption_limit_period.unwrap_or_default(),
        points_earning_limit_value: limit(body.points_earning_limit_value),
        points_earning_limit_period: body.points_earning_limit_period.unwrap_or_default(),
    };
    let rules: VelocityRules = state.platform.gateway.ask(&tenant, fraud::SetVelocity { rules }).await?;
    Ok(staff_answer(answers::RulesSaved { message: "fraud wallet rules saved", rules }))
}

async fn configure_alert_settings(
    State(state): State<AppState>,
    request: Staff<FraudAlertSettingsRequest>,
) -> Result<Json<StaffAnswer<answers::SettingsSaved>>, StaffError> {
    let Staff { tenant, body, .. } = request;
    let settings = AlertSettings {
        parent_business_id: tenant.clone(),
        alert_recipients: body.alert_recipients,
        channel_type: read("channel_type", &body.channel_type)?,
        template: body.template,
        sender_id: body.sender_id,
        template_type: read("template_type", body.template_type.as_deref().unwrap_or("UTILITY"))?,
    };
    let settings: AlertSettings = state.platform.gateway.ask(&tenant, fraud::SaveAlerts { settings }).await?;
    Ok(staff_answer(answers::SettingsSaved { message: "fraud alert settings saved", settings }))
}

/// A text field's value as the enum it names.
fn read<T: serde::de::DeserializeOwned>(field: &str, value: &str) -> Result<T, StaffError> {
    serde_json::from_value(json!(value)).map_err(|_| {
        StaffError::invalid_message(&format!("/{field}"), format!("{field}: not one of the allowed values"))
    })
}

async fn get_configuration(
    State(state): State<AppState>,
    request: Staff<FraudQueryRequest>,
) -> Result<Json<StaffAnswer<Data<answers::Configuration>>>, StaffError> {
    let tenant = request.tenant;
    let rules: VelocityRules = state.platform.gateway.ask(&tenant, fraud::GetVelocity {}).await?;
    let alerts: Option<AlertSettings> = state.platform.gateway.ask(&tenant, fraud::Alerts {}).await?;
    Ok(staff_answer(Data { data: answers::Configuration { wallet_rules: rules, alert_settings: alerts } }))
}

/// Whether a blocklist number is valid: 10 digits, not starting with 0–5.
pub fn valid_blocklist_number(value: &str) -> bool {
    value.len() == 10 && value.bytes().all(|b| b.is_ascii_digit()) && value.as_bytes()[0] >= b'6'
}

async fn upload_blocklist(
    State(state): State<AppState>,
    headers: HeaderMap,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Json<StaffAnswer<answers::Uploaded>>, StaffError> {
    let grant = token(&state, TokenKind::Staff, &headers).await?;
    let limit = state.settings.max_upload_bytes;
    let form = Form::read(&headers, multipart, "parent_business_id and file", limit).await?;
    let tenant = staff_tenant(&grant, form.field(&["parent_business_id", "parentBusinessId"]))?;
    access::admit_outlet(&grant, Scope::Tenant, None)?;
    let csv_rows = form.phone_rows()?;
    let (mut invalid, mut candidates) = (Vec::new(), Vec::new());
    for row in csv_rows {
        let line = row.line;
        match row.phone {
            Err(reason) => invalid.push(answers::InvalidLine { line, value: None, reason: reason.to_string() }),
            Ok(value) if !valid_blocklist_number(&value) => invalid.push(answers::InvalidLine {
                line,
                value: Some(value),
                reason: "must be 10 digits not starting with 0-5".to_owned(),
            }),
            Ok(value) => candidates.push((line, value)),
        }
    }
    // the brand's actor adds them: a number on the list already, or given twice, is a duplicate
    let contacts = candidates.iter().map(|(_, value)| value.clone()).collect();
    let query = fraud::Blocklist { contacts, source: "csv".to_owned(), now: chrono::Utc::now() };
    let done: Blocklisted = state.platform.gateway.ask(&tenant, query).await?;
    let duplicates = done
        .duplicates
        .iter()
        .filter_map(|position| candidates.get(*position))
        .map(|(line, value)| answers::DuplicateLine { line: *line, contact: value.clone() })
        .collect();
    Ok(staff_answer(answers::Uploaded { inserted: done.inserted.len(), duplicates, invalid, batches: done.batches }))
}

/// The contacts a body names: `contacts[]` and `contact`.
fn contacts(body: &FraudQueryRequest) -> Vec<String> {
    let mut out = body.contacts.clone().unwrap_or_default();
    out.extend(body.contact.clone());
    out
}

async fn delete_blocklist(
    State(state): State<AppState>,
    request: Staff<FraudQueryRequest>,
) -> Result<Json<StaffAnswer<answers::Deleted>>, StaffError> {
    let Staff { tenant, body, .. } = request;
    let query = fraud::Unblocklist { contacts: contacts(&body) };
    let done: Unblocklisted = state.platform.gateway.ask(&tenant, query).await?;
    Ok(staff_answer(answers::Deleted { deleted: done.deleted }))
}

/// One staff action on each contact's flags: `{status, results[{contact, ok, flags?, error?}]}`,
/// 409 when every contact was refused.
async fn flag_actions(
    state: &AppState,
    request: Staff<FraudQueryRequest>,
    action: FlagAction,
    comment: Option<String>,
) -> Result<(StatusCode, Json<answers::FlagResults>), StaffError> {
    let Staff { tenant, grant, body } = request;
    let list = contacts(&body);
    if list.is_empty() {
        return Err(StaffError::invalid_message("/contact", "contact or contacts is required"));
    }
    let mut results = Vec::new();
    let mut ok = 0;
    for contact in list {
        let query =
            fraud::Flag { contact: contact.clone(), action, comment: comment.clone(), submitted_by: grant.id.clone() };
        match state.platform.gateway.ask(&tenant, query).await {
            Ok(outcome) => {
                ok += 1;
                results.push(answers::FlagResult {
                    contact,
                    ok: true,
                    flags: Some(outcome.flags),
                    is_blocked: Some(outcome.is_blocked),
                    error: None,
                });
            }
            Err(error @ (QueryError::Unavailable(_) | QueryError::Failed(_))) => {
                return Err(StaffError::unavailable(error))
            }
            Err(error) => results.push(answers::FlagResult {
                contact,
                ok: false,
                flags: None,
                is_blocked: None,
                error: Some(error.to_string()),
            }),
        }
    }
    let status = if ok == 0 { StatusCode::CONFLICT } else { StatusCode::OK };
    Ok((status, Json(answers::FlagResults { status: ok > 0, results })))
}

async fn block_unblock_resolve(
    State(state): State<AppState>,
    request: Staff<FraudQueryRequest>,
) -> Result<(StatusCode, Json<answers::FlagResults>), StaffError> {
    let action = match request.body.status {
        Some(2) => FlagAction::Block,
        Some(3) => FlagAction::Unblock,
        _ => return Err(StaffError::invalid_message("/status", "status must be 2 (block) or 3 (unblock)")),
    };
    let comment = request.body.comment.clone();
    flag_actions(&state, request, action, comment).await
}

async fn mark_resolve(
    State(state): State<AppState>,
    request: Staff<FraudQueryRequest>,
) -> Result<(StatusCode, Json<answers::FlagResults>), StaffError> {
    let comment = request.body.resolved_comment.clone().or_else(|| request.body.comment.clone());
    flag_actions(&state, request, FlagAction::Resolve, comment).await
}

/// The page a body asks for: `page` from 1, `page_size` ≤ 100 (20 by default).
fn page_of(body: &FraudQueryRequest) -> fraud::PageOf {
    fraud::PageOf { page: body.page.unwrap_or(1) as usize, page_size: body.page_size.unwrap_or(20) as usize }
}

/// `/crm_api/get_blocklist_contacts`: `{status, data, total, page, page_size}`, by number.
async fn get_blocklist(
    State(state): State<AppState>,
    request: Staff<FraudQueryRequest>,
) -> Result<Json<StaffAnswer<fraud::Page<BlocklistEntry>>>, StaffError> {
    let query = fraud::BlocklistPage { page: page_of(&request.body) };
    Ok(staff_answer(state.platform.gateway.ask(&request.tenant, query).await?))
}

async fn check_blocked(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<BTreeMap<String, String>>,
) -> Result<Json<StaffAnswer<answers::Blocked>>, StaffError> {
    let grant = token(&state, TokenKind::Staff, &headers).await?;
    let tenant = query.get("parent_business_id").or_else(|| query.get("parentBusinessId")).cloned();
    let tenant = staff_tenant(&grant, tenant)?;
    access::admit_outlet(&grant, Scope::Tenant, None)?;
    let Some(contact) = query.get("contact").filter(|c| !c.is_empty()).cloned() else {
        return Err(StaffError::invalid_message("contact", "the contact query parameter is required"));
    };
    let data: Evaluation = state.platform.gateway.ask(&tenant, fraud::Evaluate { contact: contact.clone() }).await?;
    Ok(staff_answer(answers::Blocked {
        contact,
        blocked: data.blocked,
        blocklisted: data.blocklisted,
        is_blocked: data.is_blocked,
    }))
}

async fn evaluate_customer(
    State(state): State<AppState>,
    request: Staff<FraudQueryRequest>,
) -> Result<Json<StaffAnswer<Data<Evaluation>>>, StaffError> {
    let Staff { tenant, body, .. } = request;
    let Some(contact) = body.contact else {
        return Err(StaffError::invalid_message("/contact", "contact is required"));
    };
    let data: Evaluation = state.platform.gateway.ask(&tenant, fraud::Evaluate { contact }).await?;
    Ok(staff_answer(Data { data }))
}

/// `/crm_api/view_fraud_customers`: a page of the flags, newest first.
async fn view_fraud_customers(
    State(state): State<AppState>,
    request: Staff<FraudQueryRequest>,
) -> Result<Json<StaffAnswer<fraud::Page<FraudFlag>>>, StaffError> {
    let query = fraud::FlagPage { status: request.body.status, page: page_of(&request.body) };
    Ok(staff_answer(state.platform.gateway.ask(&request.tenant, query).await?))
}

/// `/crm_api/group_list_fraud_contacts`: the flags grouped by contact.
async fn group_list(
    State(state): State<AppState>,
    request: Staff<FraudQueryRequest>,
) -> Result<Json<StaffAnswer<fraud::FlagGroups>>, StaffError> {
    Ok(staff_answer(state.platform.gateway.ask(&request.tenant, fraud::GroupFlags {}).await?))
}

/// `{data: {total, by_type}}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlagCountsAnswer {
    /// The flags of the period counted.
    data: fraud::FlagCounts,
}

/// `/crm_api/get_fraud_list_mis`: the flags of the period counted by type and state.
async fn fraud_mis(
    State(state): State<AppState>,
    request: Staff<FraudQueryRequest>,
) -> Result<Json<StaffAnswer<FlagCountsAnswer>>, StaffError> {
    let start = request.body.start.clone().unwrap_or_else(|| "0000-00-00".to_owned());
    let end = request.body.end.clone().unwrap_or_else(|| "9999-12-31".to_owned());
    let data = state.platform.gateway.ask(&request.tenant, fraud::CountFlags { start, end }).await?;
    Ok(staff_answer(FlagCountsAnswer { data }))
}

async fn send_fraud_alert(
    State(state): State<AppState>,
    request: Staff<FraudQueryRequest>,
) -> Result<Json<StaffAnswer<answers::AlertQueued>>, StaffError> {
    let Staff { tenant, body, .. } = request;
    let (Some(contact), Some(business)) = (body.contact, body.business_id) else {
        return Err(StaffError::invalid_message("/contact", "contact and business_id are required"));
    };
    let query = fraud::SendAlert { contact, business, now: chrono::Utc::now() };
    let sent: AlertSent = match state.platform.gateway.ask(&tenant, query).await {
        Ok(sent) => sent,
        Err(QueryError::Invalid(message)) => return Err(StaffError::invalid_message("", &message)),
        Err(error) => return Err(error.into()),
    };
    let skipped =
        sent.skipped.into_iter().map(|(recipient, reason)| answers::SkippedRecipient { recipient, reason }).collect();
    Ok(staff_answer(answers::AlertQueued { queued: sent.queued, skipped, charged: sent.charged.to_string() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocklist_numbers_are_ten_digits_from_six() {
        assert!(valid_blocklist_number("6000000000"));
        assert!(valid_blocklist_number("9876543210"));
        for bad in ["5999999999", "0987654321", "987654321", "98765432100", "98765x3210", ""] {
            assert!(!valid_blocklist_number(bad), "{bad}");
        }
    }
}
