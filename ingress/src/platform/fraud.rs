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
//! `/send_fraud_alert` (`contact`, `business_id`): one message per alert recipient, on the
//! configured channel, into today's (IST) channel queue; each debits `business_id`'s wallet the
//! channel cost plus GST (digital-bill prices); a recipient the wallet cannot pay for is skipped.
//! One alert per contact, recipient and day: sending again the same day charges nothing.
//! Answer: `{status: true, queued, skipped[{recipient, reason}], charged}`.

use std::collections::{BTreeMap, BTreeSet};

use axum::extract::{Multipart, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use engage_actors::capabilities::fraud::FraudQuery;
use engage_actors::capabilities::wallet::{SendRequest, WalletQuery};
use engage_actors::domain::fraud::{FlagAction, Period, VelocityRules};
use engage_actors::repo::{BLOCKLIST, FRAUD_CONFIG, FRAUD_FLAGS};
use engage_actors::QueryError;
use engage_storage::WriteOp;

use super::auth::{check, Auth};
use super::body::PlatformBody;
use super::errors::{IntegrationError, StaffError};
use super::staff::{authorize_brand, staff_request};
use crate::AppState;

/// CSV rows stored per batch.
pub const CSV_BATCH: usize = 1000;
/// Largest CSV upload.
pub const MAX_UPLOAD: usize = 5 * 1024 * 1024;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/crm_api/configure_fraud_wallet_rules", post(configure_wallet_rules))
        .route("/crm_api/configure_fraud_alert_settings", post(configure_alert_settings))
        .route("/crm_api/get_fraud_configuration", post(get_configuration))
        .route(
            "/crm_api/upload_blocklist_contacts",
            post(upload_blocklist).layer(axum::extract::DefaultBodyLimit::max(MAX_UPLOAD)),
        )
        .route("/crm_api/delete_blocklist_contacts", post(delete_blocklist))
        .route("/crm_api/block_unblock_resolve_contacts", post(block_unblock_resolve))
        .route("/crm_api/mark_resolve_contacts", post(mark_resolve))
        .route("/crm_api/get_blocklist_contacts", post(get_blocklist))
        .route("/crm_api/fraud/check-customer-blocked", get(check_blocked))
        .route("/crm_api/api/v1/fraud/evaluate-customer", post(evaluate_customer))
        .route("/crm_api/view_fraud_customers", post(view_fraud_customers))
        .route("/crm_api/group_list_fraud_contacts", post(group_list))
        .route("/crm_api/get_fraud_list_mis", post(fraud_mis))
        .route("/crm_api/send_fraud_alert", post(send_fraud_alert))
}

fn staff_failure(error: QueryError) -> Response {
    match error {
        QueryError::NotFound => StaffError::not_found("customer").into_response(),
        QueryError::Transition(refused) => {
            (StatusCode::CONFLICT, Json(json!({"message": refused.to_string()}))).into_response()
        }
        QueryError::Invalid(message) => StaffError::invalid_message("", message).into_response(),
        other => StaffError::unavailable(other).into_response(),
    }
}

fn period(body: &Value, name: &str) -> Period {
    serde_json::from_value(body.get(name).cloned().unwrap_or(Value::Null)).unwrap_or_default()
}

fn limit(body: &Value, name: &str) -> Option<u32> {
    body.get(name).and_then(Value::as_u64).and_then(|v| u32::try_from(v).ok()).filter(|v| *v > 0)
}

async fn configure_wallet_rules(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (brand, _, body) = match staff_request(&state, &headers, body, "FraudWalletRulesRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let rules = VelocityRules {
        redemption_limit_value: limit(&body, "redemption_limit_value"),
        redemption_limit_period: period(&body, "redemption_limit_period"),
        points_earning_limit_value: limit(&body, "points_earning_limit_value"),
        points_earning_limit_period: period(&body, "points_earning_limit_period"),
    };
    match state.platform.gateway.ask(&brand, FraudQuery::SetVelocity { rules }).await {
        Ok(rules) => {
            Json(json!({"status": true, "message": "fraud wallet rules saved", "rules": rules})).into_response()
        }
        Err(error) => staff_failure(error),
    }
}

async fn configure_alert_settings(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (brand, _, body) = match staff_request(&state, &headers, body, "FraudAlertSettingsRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let settings = json!({
        "parent_business_id": brand,
        "alert_recipients": body["alert_recipients"],
        "channel_type": body["channel_type"],
        "template": body["template"],
        "sender_id": body.get("sender_id"),
        "template_type": body.get("template_type").cloned().unwrap_or(json!("UTILITY")),
    });
    let op = engage_actors::repo::Repo::put_json(FRAUD_CONFIG, brand, b"alerts", &settings);
    match state.platform.repo.store().batch(vec![op]).await {
        Ok(()) => {
            Json(json!({"status": true, "message": "fraud alert settings saved", "settings": settings})).into_response()
        }
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

async fn get_configuration(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (brand, _, _) = match staff_request(&state, &headers, body, "FraudQueryRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let rules = match state.platform.gateway.ask(&brand, FraudQuery::GetVelocity).await {
        Ok(rules) => rules,
        Err(error) => return staff_failure(error),
    };
    match state.platform.repo.json(FRAUD_CONFIG, &brand, b"alerts").await {
        Ok(alerts) => {
            Json(json!({"status": true, "data": {"wallet_rules": rules, "alert_settings": alerts}})).into_response()
        }
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

/// Whether a blocklist number is valid: 10 digits, not starting with 0–5.
pub fn valid_blocklist_number(value: &str) -> bool {
    value.len() == 10 && value.bytes().all(|b| b.is_ascii_digit()) && value.as_bytes()[0] >= b'6'
}

async fn upload_blocklist(
    State(state): State<AppState>,
    headers: HeaderMap,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Response {
    let caller = match check(&state, Auth::Staff, &headers).await {
        Ok(caller) => caller,
        Err(refusal) => return refusal,
    };
    let invalid_request = |message: &str| StaffError::invalid_message("", message).into_response();
    // a body that is not multipart gets the staff family's 400, not axum's text answer
    let Ok(mut multipart) = multipart else {
        return invalid_request("the body is not multipart/form-data with parent_business_id and file");
    };
    let mut brand = None;
    let mut file: Option<Vec<u8>> = None;
    loop {
        match multipart.next_field().await {
            Ok(Some(field)) => {
                let name = field.name().unwrap_or_default().to_owned();
                let Ok(bytes) = field.bytes().await else {
                    return invalid_request("a multipart field could not be read");
                };
                match name.as_str() {
                    "parent_business_id" | "parentBusinessId" => {
                        brand = Some(String::from_utf8_lossy(&bytes).trim().to_owned())
                    }
                    "file" => file = Some(bytes.to_vec()),
                    _ => {}
                }
            }
            Ok(None) => break,
            Err(_) => return invalid_request("the body is not multipart/form-data with parent_business_id and file"),
        }
    }
    let (brand, _) = match authorize_brand(&caller, brand.filter(|b| !b.is_empty())) {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let Some(file) = file else { return invalid_request("the CSV file field \"file\" is missing") };
    let mut reader = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(file.as_slice());
    let Ok(headers_row) = reader.headers().cloned() else { return invalid_request("the file is not CSV") };
    let Some(column) = headers_row.iter().position(|h| h.trim_start_matches('\u{feff}').eq_ignore_ascii_case("phone"))
    else {
        return invalid_request("the CSV needs a column named Phone");
    };
    let existing: BTreeSet<String> = match state.platform.repo.all_json(BLOCKLIST, &brand).await {
        Ok(rows) => rows.iter().filter_map(|r| r["contact_number"].as_str().map(str::to_owned)).collect(),
        Err(error) => return StaffError::unavailable(error).into_response(),
    };
    let mut seen = BTreeSet::new();
    let (mut invalid, mut duplicates, mut fresh) = (Vec::new(), Vec::new(), Vec::new());
    for (index, record) in reader.records().enumerate() {
        let line = index + 2;
        let value = match record {
            Ok(record) => record.get(column).unwrap_or_default().to_owned(),
            Err(error) => {
                invalid.push(json!({"line": line, "value": null, "reason": format!("unreadable row: {error}")}));
                continue;
            }
        };
        if !valid_blocklist_number(&value) {
            invalid.push(json!({"line": line, "value": value, "reason": "must be 10 digits not starting with 0-5"}));
        } else if existing.contains(&value) || !seen.insert(value.clone()) {
            duplicates.push(json!({"line": line, "contact": value}));
        } else {
            fresh.push(value);
        }
    }
    let now = chrono::Utc::now().to_rfc3339();
    let mut batches = 0;
    for chunk in fresh.chunks(CSV_BATCH) {
        let ops: Vec<WriteOp> = chunk
            .iter()
            .map(|contact| {
                engage_actors::repo::Repo::put_json(
                    BLOCKLIST,
                    brand.clone(),
                    contact.as_bytes(),
                    &json!({"parent_business_id": brand, "contact_number": contact, "source": "csv", "created_at": now, "updated_at": now}),
                )
            })
            .collect();
        if let Err(error) = state.platform.repo.store().batch(ops).await {
            return StaffError::unavailable(error).into_response();
        }
        batches += 1;
    }
    metrics::counter!("engage_blocklist_uploaded_total").increment(fresh.len() as u64);
    Json(json!({"status": true, "inserted": fresh.len(), "duplicates": duplicates, "invalid": invalid, "batches": batches})).into_response()
}

fn contacts(body: &Value) -> Vec<String> {
    let mut out: Vec<String> = body["contacts"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    if let Some(one) = body["contact"].as_str() {
        out.push(one.to_owned());
    }
    out
}

async fn delete_blocklist(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (brand, _, body) = match staff_request(&state, &headers, body, "FraudQueryRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let list = contacts(&body);
    let mut deleted = 0;
    let mut ops = Vec::new();
    for contact in &list {
        match state.platform.repo.store().get(BLOCKLIST, &brand, contact.as_bytes()).await {
            Ok(Some(_)) => {
                deleted += 1;
                ops.push(WriteOp::Delete {
                    table: BLOCKLIST,
                    partition: brand.clone(),
                    clustering: contact.as_bytes().to_vec(),
                });
            }
            Ok(None) => {}
            Err(error) => return StaffError::unavailable(error).into_response(),
        }
    }
    match state.platform.repo.store().batch(ops).await {
        Ok(()) => Json(json!({"status": true, "deleted": deleted})).into_response(),
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

async fn flag_actions(
    state: &AppState,
    brand: &str,
    who: &str,
    list: Vec<String>,
    action: FlagAction,
    comment: Option<String>,
) -> Response {
    if list.is_empty() {
        return StaffError::invalid_message("/contact", "contact or contacts is required").into_response();
    }
    let mut results = Vec::new();
    let mut ok = 0;
    for contact in list {
        let query = FraudQuery::Flag {
            contact: contact.clone(),
            action,
            comment: comment.clone(),
            submitted_by: who.to_owned(),
        };
        match state.platform.gateway.ask(brand, query).await {
            Ok(answer) => {
                ok += 1;
                results.push(json!({"contact": contact, "ok": true, "flags": answer["flags"], "is_blocked": answer["is_blocked"]}));
            }
            Err(QueryError::Unavailable(reason)) | Err(QueryError::Failed(reason)) => {
                return StaffError::unavailable(reason).into_response()
            }
            Err(error) => results.push(json!({"contact": contact, "ok": false, "error": error.to_string()})),
        }
    }
    let status = if ok == 0 { StatusCode::CONFLICT } else { StatusCode::OK };
    (status, Json(json!({"status": ok > 0, "results": results}))).into_response()
}

async fn block_unblock_resolve(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (brand, who, body) = match staff_request(&state, &headers, body, "FraudQueryRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let action = match body.get("status").and_then(Value::as_u64) {
        Some(2) => FlagAction::Block,
        Some(3) => FlagAction::Unblock,
        _ => return StaffError::invalid_message("/status", "status must be 2 (block) or 3 (unblock)").into_response(),
    };
    let comment = body.get("comment").and_then(Value::as_str).map(str::to_owned);
    flag_actions(&state, &brand, &who, contacts(&body), action, comment).await
}

async fn mark_resolve(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (brand, who, body) = match staff_request(&state, &headers, body, "FraudQueryRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let comment =
        body.get("resolved_comment").or_else(|| body.get("comment")).and_then(Value::as_str).map(str::to_owned);
    flag_actions(&state, &brand, &who, contacts(&body), FlagAction::Resolve, comment).await
}

fn page(body: &Value, rows: Vec<Value>) -> Value {
    let page = body.get("page").and_then(Value::as_u64).unwrap_or(1).max(1) as usize;
    let size = body.get("page_size").and_then(Value::as_u64).unwrap_or(20).clamp(1, 100) as usize;
    let total = rows.len();
    let data: Vec<Value> = rows.into_iter().skip((page - 1) * size).take(size).collect();
    json!({"status": true, "data": data, "total": total, "page": page, "page_size": size})
}

async fn get_blocklist(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (brand, _, body) = match staff_request(&state, &headers, body, "FraudQueryRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    match state.platform.repo.all_json(BLOCKLIST, &brand).await {
        Ok(rows) => Json(page(&body, rows)).into_response(),
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}

async fn evaluate(state: &AppState, brand: &str, contact: String) -> Result<Value, Response> {
    state.platform.gateway.ask(brand, FraudQuery::Evaluate { contact }).await.map_err(staff_failure)
}

async fn check_blocked(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let caller = match check(&state, Auth::Staff, &headers).await {
        Ok(caller) => caller,
        Err(refusal) => return refusal,
    };
    let brand = query.get("parent_business_id").or_else(|| query.get("parentBusinessId")).cloned();
    let (brand, _) = match authorize_brand(&caller, brand) {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let Some(contact) = query.get("contact").filter(|c| !c.is_empty()).cloned() else {
        return StaffError::invalid_message("contact", "the contact query parameter is required").into_response();
    };
    match evaluate(&state, &brand, contact.clone()).await {
        Ok(data) => Json(json!({"status": true, "contact": contact, "blocked": data["blocked"], "blocklisted": data["blocklisted"], "is_blocked": data["is_blocked"]}))
            .into_response(),
        Err(refusal) => refusal,
    }
}

async fn evaluate_customer(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    let (brand, _, body) = match staff_request(&state, &headers, body, "FraudQueryRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let Some(contact) = body.get("contact").and_then(Value::as_str).map(str::to_owned) else {
        return StaffError::invalid_message("/contact", "contact is required").into_response();
    };
    match evaluate(&state, &brand, contact).await {
        Ok(data) => Json(json!({"status": true, "data": data})).into_response(),
        Err(refusal) => refusal,
    }
}

async fn flags(state: &AppState, brand: &str) -> Result<Vec<Value>, Response> {
    state.platform.repo.all_json(FRAUD_FLAGS, brand).await.map_err(|e| StaffError::unavailable(e).into_response())
}

/// A report over the brand's flags: staff auth and body, then `report(body, flags)`.
async fn flag_report(
    state: &AppState,
    headers: &HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    report: impl FnOnce(&Value, Vec<Value>) -> Value,
) -> Response {
    let (brand, _, body) = match staff_request(state, headers, body, "FraudQueryRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    match flags(state, &brand).await {
        Ok(rows) => Json(report(&body, rows)).into_response(),
        Err(refusal) => refusal,
    }
}

async fn view_fraud_customers(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    flag_report(&state, &headers, body, |body, mut rows| {
        if let Some(status) = body.get("status").and_then(Value::as_u64) {
            rows.retain(|f| f["status"].as_u64() == Some(status));
        }
        rows.reverse(); // newest first
        page(body, rows)
    })
    .await
}

async fn group_list(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    flag_report(&state, &headers, body, |_, rows| {
        let mut groups: BTreeMap<String, (Value, usize, BTreeSet<String>, String)> = BTreeMap::new();
        for flag in rows {
            let contact = flag["contact"].as_str().unwrap_or_default().to_owned();
            let entry = groups.entry(contact).or_insert((flag["name"].clone(), 0, BTreeSet::new(), String::new()));
            entry.1 += 1;
            entry.2.insert(flag["fraud_type"].as_str().unwrap_or_default().to_owned());
            entry.3 = entry.3.clone().max(flag["created_at"].as_str().unwrap_or_default().to_owned());
        }
        let data: Vec<Value> = groups
            .into_iter()
            .map(|(contact, (name, count, types, latest))| {
                json!({"contact": contact, "name": name, "flags": count, "fraud_types": types, "latest": latest})
            })
            .collect();
        json!({"status": true, "data": data})
    })
    .await
}

async fn fraud_mis(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    flag_report(&state, &headers, body, |body, rows| {
        let start = body.get("start").and_then(Value::as_str).unwrap_or("0000-00-00").to_owned();
        let end = body.get("end").and_then(Value::as_str).unwrap_or("9999-12-31").to_owned();
        let mut by_type: BTreeMap<String, BTreeMap<&str, u64>> = BTreeMap::new();
        let mut total = 0;
        for flag in rows {
            let day = flag["created_at"].as_str().unwrap_or_default().get(..10).unwrap_or_default().to_owned();
            if day < start || day > end {
                continue;
            }
            total += 1;
            let status = if flag["status"] == 1 { "pending" } else { "resolved" };
            *by_type
                .entry(flag["fraud_type"].as_str().unwrap_or_default().to_owned())
                .or_default()
                .entry(status)
                .or_default() += 1;
        }
        json!({"status": true, "data": {"total": total, "by_type": by_type}})
    })
    .await
}

async fn send_fraud_alert(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
) -> Response {
    use engage_actors::domain::wallet::{Channel, Purpose, TemplateType};
    let (brand, _, body) = match staff_request(&state, &headers, body, "FraudQueryRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let (Some(contact), Some(business)) = (body["contact"].as_str(), body["business_id"].as_str()) else {
        return StaffError::invalid_message("/contact", "contact and business_id are required").into_response();
    };
    let settings = match state.platform.repo.json(FRAUD_CONFIG, &brand, b"alerts").await {
        Ok(Some(settings)) => settings,
        Ok(None) => {
            return StaffError::invalid_message("", "no fraud alert settings: configure them first").into_response()
        }
        Err(error) => return StaffError::unavailable(error).into_response(),
    };
    let channel: Channel = serde_json::from_value(settings["channel_type"].clone()).unwrap_or(Channel::Sms);
    let template_type: TemplateType = serde_json::from_value(settings["template_type"].clone()).unwrap_or_default();
    let message = settings["template"].as_str().unwrap_or_default().replace("{contact}", contact);
    let today = engage_actors::domain::time::ist_day(chrono::Utc::now()).replace('-', "");
    let (mut queued, mut skipped, mut charged) = (0, Vec::new(), rust_decimal::Decimal::ZERO);
    for recipient in settings["alert_recipients"].as_array().cloned().unwrap_or_default() {
        let recipient = recipient.as_str().unwrap_or_default().to_owned();
        let query = WalletQuery::Send(SendRequest {
            business: business.to_owned(),
            channel,
            template_type,
            purpose: Purpose::FraudAlert,
            to: recipient.clone(),
            message: message.clone(),
            send_id: format!("fraud-alert-{contact}-{recipient}-{today}"),
            delivery_date: today.clone(),
            auto_id: None,
        });
        match state.platform.gateway.ask(&brand, query).await {
            Ok(answer) => {
                queued += 1;
                if let Some(amount) = answer["charged"].as_str().and_then(|a| a.parse::<rust_decimal::Decimal>().ok()) {
                    charged += amount;
                }
            }
            Err(QueryError::Insufficient(short)) => {
                skipped.push(json!({"recipient": recipient, "reason": short.to_string()}))
            }
            Err(error) => return staff_failure(error),
        }
    }
    Json(json!({"status": true, "queued": queued, "skipped": skipped, "charged": charged.to_string()})).into_response()
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
