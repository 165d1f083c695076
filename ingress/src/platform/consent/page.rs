//! The page of the opt-out link every marketing message carries (`{public_url}/u/<code>`): it names
//! the brand, shows the customer's three channels as checkboxes (checked: marketing allowed) and
//! changes nothing until the form is sent: a link scanner that opens the link changes nothing, the
//! `POST` of the form is the customer's choice (source `link`). Works without script, by keyboard,
//! in the shared page style ([`crate::pages`]).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use chrono::Utc;
use serde_json::{json, Value};

use engage_actors::capabilities::business::GetConfig;
use engage_actors::capabilities::consent::{ConsentView, GetConsent, SetConsent};
use engage_actors::domain::consent::Source;

use crate::pages::{escape, message, shell};
use crate::platform::edge::routes::{html, Routes};
use crate::state::AppState;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new().route("/u/{code}", get(show).post(choose), operations())
}

fn operations() -> Value {
    let page = json!({
        "summary": "The opt-out page of a marketing message's link: the customer's marketing subscriptions as a form (opening it changes nothing)",
        "tags": ["platform"],
        "security": [],
        "parameters": [{"name": "code", "in": "path", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": 64}}],
        "responses": {
            "200": html("the form"),
            "404": html("not an opt-out link of this service: a page saying so"),
            "503": html("the brand's owner is unavailable; retry")}});
    let mut choose = page.clone();
    choose["summary"] = json!(
        "Confirm the opt-out page: each channel checked stays subscribed, each unchecked is unsubscribed (source link)"
    );
    choose["requestBody"] = json!({"required": true, "content": {"application/x-www-form-urlencoded": {"schema": {
        "type": "object", "properties": {
            "sms": {"type": "string", "enum": ["on"]}, "chat": {"type": "string", "enum": ["on"]},
            "push": {"type": "string", "enum": ["on"]}, "confirm": {"type": "string"}}}}}});
    choose["responses"]["200"] = html("a confirmation page");
    json!({"get": page, "post": choose})
}

/// The brand and customer of `code`, or the page to answer instead.
async fn owner(state: &AppState, code: &str) -> Result<(String, String), Response> {
    match state.platform.directory.consent_link_owner(code).await {
        Ok(Some(owner)) => Ok(owner),
        Ok(None) => Err((
            StatusCode::NOT_FOUND,
            Html(message(
                "Link not found",
                "This is not an opt-out link of ours. Check the address in the message.",
                None,
            )),
        )
            .into_response()),
        Err(error) => Err(unavailable(&error.to_string())),
    }
}

fn unavailable(error: &str) -> Response {
    tracing::warn!(%error, "opt-out page unavailable");
    (StatusCode::SERVICE_UNAVAILABLE, Html(message("Please try again", "We cannot show your choices right now.", None)))
        .into_response()
}

async fn brand_name(state: &AppState, tenant: &str) -> String {
    match state.platform.gateway.ask(tenant, GetConfig { business_id: "0".to_owned() }).await {
        Ok(config) => config.name().unwrap_or(tenant).to_owned(),
        Err(_) => tenant.to_owned(),
    }
}

fn form(code: &str, brand: &str, view: &ConsentView, note: Option<&str>) -> String {
    let boxes: String = [("sms", "Text messages (SMS)", &view.sms), ("chat", "Chat messages", &view.chat), ("push", "App notifications", &view.push)]
        .iter()
        .map(|(name, label, state)| {
            format!(
                "<p><input type=\"checkbox\" id=\"{name}\" name=\"{name}\"{checked}> <label for=\"{name}\">{label}</label></p>",
                checked = if state.subscribed { " checked" } else { "" }
            )
        })
        .collect();
    let note = note.map(|n| format!("<p role=\"status\"><strong>{}</strong></p>", escape(n))).unwrap_or_default();
    shell(
        &format!("Offers from {brand}"),
        "fieldset{border:0;padding:0;margin:0}button{font-size:16px;padding:10px 16px}",
        &format!(
            "<main><section><h1 style=\"font-size:20px;margin:0 0 8px\">Offers from {brand}</h1>{note}\
<form method=\"post\" action=\"/u/{code}\"><fieldset><legend>Send me offers by:</legend>{boxes}</fieldset>\
<p>Uncheck a channel to stop offers there. Bills and order updates still reach you.</p>\
<button type=\"submit\" name=\"confirm\" value=\"1\">Save my choices</button></form></section></main>",
            brand = escape(brand),
            code = escape(code),
        ),
    )
}

/// `GET /u/{code}`: the form; nothing changes.
async fn show(State(state): State<AppState>, Path(code): Path<String>) -> Response {
    let (tenant, phone) = match owner(&state, &code).await {
        Ok(owner) => owner,
        Err(page) => return page,
    };
    let view = match state.platform.gateway.ask(&tenant, GetConsent { phone }).await {
        Ok(view) => view,
        Err(error) => return unavailable(&error.to_string()),
    };
    Html(form(&code, &brand_name(&state, &tenant).await, &view, None)).into_response()
}

/// `POST /u/{code}`: the customer's choice: each checked channel subscribed, each unchecked not.
async fn choose(State(state): State<AppState>, Path(code): Path<String>, body: Bytes) -> Response {
    let (tenant, phone) = match owner(&state, &code).await {
        Ok(owner) => owner,
        Err(page) => return page,
    };
    let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let on = |name: &str| Some(fields.iter().any(|(k, _)| k == name));
    let query =
        SetConsent { phone, sms: on("sms"), chat: on("chat"), push: on("push"), source: Source::Link, now: Utc::now() };
    match state.platform.gateway.ask(&tenant, query).await {
        Ok(view) => {
            tracing::info!(tenant, "a customer set their marketing subscriptions by link");
            Html(form(&code, &brand_name(&state, &tenant).await, &view, Some("Your choices are saved.")))
                .into_response()
        }
        Err(error) => unavailable(&error.to_string()),
    }
}
