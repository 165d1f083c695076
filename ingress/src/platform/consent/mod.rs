//! Marketing consent (engage's routes; `docs/consent.md`): a customer's subscriptions per channel
//! (`/crm_api/consent/customer`, staff; `/integration/v1/consent`, integration token), the
//! brand's defaults (`/crm_api/consent/settings`), a CSV of opt-outs
//! (`/crm_api/consent/upload`), the providers' inbound keyword webhook
//! (`/webhooks/keywords/{provider}`) and the page of the opt-out link every marketing message
//! carries (`GET`/`POST /u/{code}`: [`page`]). The state is the brand's actor's
//! (`engage_actors::capabilities::consent`).

pub mod page;
pub mod requests;

use axum::body::Bytes;
use axum::extract::{Multipart, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Json;
use chrono::Utc;
use serde_json::{json, Value};

use engage_actors::capabilities::consent::{
    ConsentView, GetConsent, GetDefaults, ImportOptOuts, Imported, Inbound, InboundHandled, SetConsent, SetDefaults,
};
use engage_actors::capabilities::rights::{CustomerExport, Erase, Erased, Export, PurgeErased};
use engage_actors::domain::consent::{ConsentDefaults, Source};
use engage_actors::domain::wallet::Channel;

use crate::platform::edge::auth::{token, Auth};
use crate::platform::edge::contract::{answer_schema, Scope};
use crate::platform::edge::errors::{IntegrationError, StaffError};
use crate::platform::edge::requests::{ConsentRequest, ConsentSettingsRequest, CustomerExportRequest, KeywordRequest};
use crate::platform::edge::routes::operation;
use crate::platform::edge::routes::Routes;
use crate::platform::edge::tokens::TokenKind;
use crate::platform::edge::upload::{field_name, limit_answer, Form, InvalidLine};
use crate::platform::edge::{access, answer, staff_answer, staff_tenant, Answer, Integration, Staff, StaffAnswer};
use crate::state::AppState;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post(
            "/crm_api/consent/customer",
            "Read a customer's marketing subscriptions (sms, chat, push), or with any channel given, set it (source staff): {status, data}",
            staff_consent,
        )
        .post(
            "/integration/v1/consent",
            "Read a customer's marketing subscriptions, or with any channel given, set it (source api): {status: 1, data}",
            integration_consent,
        )
        .post(
            "/crm_api/customer/export",
            "Everything the brand holds about one customer (profile, orders, ledger, redemptions, coupons, bills, feedback, NPS, recoveries, subscriptions, journey decisions, messages of the last 35 days) as one document: {status, …}",
            export,
        )
        .post(
            "/crm_api/customer/erase",
            "Erase a customer's personal data in the brand: their customer row, ledger, redemptions and subscriptions deleted, every other row naming them (orders, coupons, bills, feedback, NPS, queued messages) anonymised and unsent messages cancelled; the brand's totals kept; an audit row without personal data; idempotent: {status, deleted, anonymised, cancelled}",
            erase,
        )
        .post(
            "/crm_api/consent/settings",
            "Read the brand's consent defaults (whether a customer with no recorded choice gets marketing on each channel, the HELP answer), or with any part given, change them: {status, data}",
            settings,
        )
        .route(
            "/crm_api/consent/upload",
            post(upload).layer(axum::extract::DefaultBodyLimit::disable()),
            json!({"post": upload_operation()}),
        )
        .route("/webhooks/keywords/{provider}", post(keyword), json!({"post": keyword_operation()}))
        .merge(page::routes())
}

async fn consent(
    state: &AppState,
    tenant: &str,
    body: ConsentRequest,
    source: Source,
) -> Result<ConsentView, engage_actors::QueryError> {
    // the edge gave the number in its kept form (`engage_actors::domain::phone`)
    let phone = body.mobile_number;
    if !(body.sms.is_some() || body.chat.is_some() || body.push.is_some()) {
        return state.platform.gateway.ask(tenant, GetConsent { phone }).await;
    }
    let query = SetConsent { phone, sms: body.sms, chat: body.chat, push: body.push, source, now: Utc::now() };
    let view = state.platform.gateway.ask(tenant, query).await?;
    tracing::info!(tenant, source = ?source, "a customer's marketing subscriptions were set");
    Ok(view)
}

async fn staff_consent(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<ConsentRequest>,
) -> Result<Json<StaffAnswer<ConsentView>>, StaffError> {
    Ok(staff_answer(consent(&state, &tenant, body, Source::Staff).await?))
}

async fn integration_consent(
    State(state): State<AppState>,
    Integration { tenant, body }: Integration<ConsentRequest>,
) -> Result<Json<Answer<ConsentView>>, IntegrationError> {
    Ok(answer(consent(&state, &tenant, body, Source::Api).await?))
}

/// Erases `phone` in `tenant`: the brand's rows, in its actor; then what the bus keeps of its
/// events that name them (parked events, the orders stream's retained messages).
pub(crate) async fn erase_customer(
    state: &AppState,
    tenant: &str,
    phone: &str,
    by: String,
) -> Result<Erased, StaffError> {
    let query = Erase { phone: phone.to_owned(), by, now: Utc::now() };
    let mut erased = state.platform.gateway.ask(tenant, query).await?;
    erased.bus_messages = state.platform.bus.erase_customer(tenant, phone).await.map_err(StaffError::unavailable)?;
    // the erased bytes leave the store's files (docs/consent.md, "When erased bytes are gone")
    state.platform.gateway.ask(tenant, PurgeErased {}).await?;
    tracing::info!(
        tenant,
        deleted = erased.deleted,
        anonymised = erased.anonymised,
        bus_messages = erased.bus_messages,
        "a customer's data was erased"
    );
    Ok(erased)
}

/// Everything `tenant` holds about `phone`.
pub(crate) async fn export_customer(state: &AppState, tenant: &str, phone: &str) -> Result<CustomerExport, StaffError> {
    let export = state.platform.gateway.ask(tenant, Export { phone: phone.to_owned() }).await?;
    tracing::info!(tenant, "a customer's data was exported");
    Ok(export)
}

async fn export(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<CustomerExportRequest>,
) -> Result<Json<StaffAnswer<CustomerExport>>, StaffError> {
    Ok(staff_answer(export_customer(&state, &tenant, &body.mobile_number).await?))
}

async fn erase(
    State(state): State<AppState>,
    Staff { tenant, body, grant }: Staff<CustomerExportRequest>,
) -> Result<Json<StaffAnswer<Erased>>, StaffError> {
    Ok(staff_answer(erase_customer(&state, &tenant, &body.mobile_number, format!("staff token {}", grant.id)).await?))
}

async fn settings(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<ConsentSettingsRequest>,
) -> Result<Json<StaffAnswer<ConsentDefaults>>, StaffError> {
    let ConsentSettingsRequest { sms, chat, push, help_text, .. } = body;
    let defaults = if sms.is_none() && chat.is_none() && push.is_none() && help_text.is_none() {
        state.platform.gateway.ask(&tenant, GetDefaults {}).await?
    } else {
        state.platform.gateway.ask(&tenant, SetDefaults { sms, chat, push, help_text }).await?
    };
    Ok(staff_answer(defaults))
}

/// The opt-out upload's multipart operation.
fn upload_operation() -> Value {
    let mut upload = operation(
        "Unsubscribe every number of a CSV's Phone column from marketing (source import): multipart with parent_business_id, channels (sms,chat,push; default all) and file",
        Auth::Staff,
        None,
        answer_schema::<StaffAnswer<OptOutsImported>>(),
    );
    upload["requestBody"] = json!({"required": true, "content": {"multipart/form-data": {"schema": {"type": "object",
        "required": ["parent_business_id", "file"],
        "propertyNames": field_name(),
        "properties": {"parent_business_id": {"type": "string", "minLength": 1, "maxLength": 128},
            "channels": {"type": "string", "pattern": "^\\s*(sms|chat|push)\\s*(,\\s*(sms|chat|push)\\s*)*$"},
            "file": {"type": "string", "format": "binary"}}}}}});
    upload["responses"]["413"] = limit_answer();
    upload["x-engage-scope"] = json!(Scope::Tenant.as_str());
    upload
}

async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Json<StaffAnswer<OptOutsImported>>, StaffError> {
    let grant = token(&state, TokenKind::Staff, &headers).await?;
    let form = Form::read(&headers, multipart, "parent_business_id and file", state.settings.max_upload_bytes).await?;
    let tenant = staff_tenant(&grant, form.field(&["parent_business_id", "parentBusinessId"]))?;
    access::admit_outlet(&grant, Scope::Tenant, None)?;
    let channels = match form.field(&["channels"]) {
        None => vec![Channel::Sms, Channel::Chat, Channel::Push],
        Some(list) => list
            .split(',')
            .map(|name| match name.trim() {
                "sms" => Ok(Channel::Sms),
                "chat" => Ok(Channel::Chat),
                "push" => Ok(Channel::Push),
                other => Err(StaffError::invalid_message("/channels", format!("{other:?} is not sms, chat or push"))),
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let (mut phones, mut invalid) = (Vec::new(), Vec::new());
    for row in form.phone_rows()? {
        let refused = match row.phone {
            Ok(given) => match engage_actors::domain::phone::parse(&given) {
                Ok(phone) => {
                    phones.push(phone);
                    continue;
                }
                Err(reason) => InvalidLine { line: row.line, value: Some(given), reason },
            },
            Err(reason) => InvalidLine { line: row.line, value: None, reason },
        };
        invalid.push(refused);
    }
    let imported = state.platform.gateway.ask(&tenant, ImportOptOuts { phones, channels, now: Utc::now() }).await?;
    tracing::info!(
        tenant,
        phones = imported.phones,
        changed = imported.changed,
        invalid = invalid.len(),
        "opt-outs imported"
    );
    Ok(staff_answer(OptOutsImported { imported, invalid }))
}

/// What `/crm_api/consent/upload` did: the numbers read and changed, and each row refused.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct OptOutsImported {
    /// Numbers read and subscriptions changed.
    #[serde(flatten)]
    pub imported: Imported,
    /// Rows whose value is not a phone number (nothing recorded for them).
    pub invalid: Vec<InvalidLine>,
}

/// The keyword webhook's operation.
fn keyword_operation() -> Value {
    let mut op = operation(
        "An SMS or chat provider's inbound message: STOP (UNSUBSCRIBE, OPT OUT, …) unsubscribes the customer from marketing on that channel, START resubscribes, HELP is answered with the brand's help text; case and spacing forgiven, idempotent. Header x-engage-webhook-secret: the provider's secret (ENGAGE_KEYWORD_WEBHOOK_SECRETS)",
        Auth::None,
        None,
        answer_schema::<StaffAnswer<InboundHandled>>(),
    );
    op["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": crate::platform::edge::contract::schema_of::<KeywordRequest>()}}});
    op["parameters"] = json!([
        {"name": "provider", "in": "path", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": 64}}]);
    op["security"] = json!([{"keywordWebhookSecret": []}]);
    if let Some(op) = op.as_object_mut() {
        op.remove("x-engage-open");
    }
    op["responses"]["401"] = json!({"description": "unknown provider or wrong secret: {message}", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}});
    op
}

/// Whether `headers` carry `provider`'s secret (`ENGAGE_KEYWORD_WEBHOOK_SECRETS`), compared in
/// constant time.
fn provider_admitted(state: &AppState, provider: &str, headers: &HeaderMap) -> bool {
    let Some(secrets) = state.settings.keyword_webhook_secrets.as_ref() else { return false };
    let Some(sent) = headers.get("x-engage-webhook-secret").and_then(|v| v.to_str().ok()) else { return false };
    secrets.expose().split(',').filter_map(|pair| pair.split_once('=')).any(|(name, secret)| {
        name.trim() == provider
            && !secret.trim().is_empty()
            && crate::platform::edge::auth::same_secret(sent.as_bytes(), secret.trim().as_bytes())
    })
}

/// `POST /webhooks/keywords/{provider}`: STOP / START / HELP from a customer.
pub async fn keyword(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !provider_admitted(&state, &provider, &headers) {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"message": "unknown provider or wrong x-engage-webhook-secret"})),
        )
            .into_response();
    }
    let request: KeywordRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(error) => {
            return (StatusCode::BAD_REQUEST, Json(json!({"message": format!("Invalid request: {error}")})))
                .into_response()
        }
    };
    let channel = match request.channel.as_str() {
        "sms" => Channel::Sms,
        "chat" => Channel::Chat,
        _ => {
            return (StatusCode::BAD_REQUEST, Json(json!({"message": "Invalid request: channel must be sms or chat"})))
                .into_response()
        }
    };
    // providers write numbers as +91…, 91… or 0…: one customer (`engage_actors::domain::phone`)
    let phone = match engage_actors::domain::phone::parse(&request.from) {
        Ok(phone) => phone,
        Err(why) => {
            return (StatusCode::BAD_REQUEST, Json(json!({"message": format!("Invalid request: from: {why}")})))
                .into_response()
        }
    };
    let query = Inbound { phone, channel, text: request.text, now: Utc::now() };
    match state.platform.gateway.ask(&request.parent_business_id, query).await {
        Ok(handled) => {
            tracing::info!(tenant = request.parent_business_id, provider, keyword = ?handled.keyword, changed = handled.changed, "inbound keyword");
            staff_answer(handled).into_response()
        }
        Err(error) => StaffError::from(error).into_response(),
    }
}
