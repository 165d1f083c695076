//! The WhatsApp Cloud API's webhook, as Meta calls it (`docs/senders.md`, "Webhooks"):
//! `GET /webhooks/whatsapp` is the subscription handshake (`hub.mode=subscribe`,
//! `hub.verify_token`, `hub.challenge`: the challenge is echoed when the token is a brand's), and
//! `POST /webhooks/whatsapp` carries `entry[].changes[].value.messages` and `.statuses` signed
//! with `X-Hub-Signature-256` (HMAC-SHA256 of the raw body with the app secret). The brand is the
//! one whose sender is `metadata.phone_number_id`; its actor checks the signature with its own app
//! secret before STOP / START / HELP change anything or a status moves a send (a receipt: the
//! send is the one `biz_opaque_callback_data` names, and its message id must be the status's).

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::Utc;
use serde_json::{json, Value};

use engage_actors::capabilities::receipts::Posted;
use engage_actors::capabilities::webhooks::WhatsappInbound;
use engage_actors::domain::receipt::{Receipt, SendRef};

use crate::platform::edge::auth::Auth;
use crate::platform::edge::errors::StaffError;
use crate::platform::edge::routes::operation;
use crate::state::AppState;

fn refused(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"message": message}))).into_response()
}

/// `GET /webhooks/whatsapp`: the subscription handshake.
pub async fn verify(State(state): State<AppState>, Query(query): Query<BTreeMap<String, String>>) -> Response {
    let (Some(mode), Some(token), Some(challenge)) =
        (query.get("hub.mode"), query.get("hub.verify_token"), query.get("hub.challenge"))
    else {
        return refused(
            StatusCode::BAD_REQUEST,
            "Invalid request: hub.mode, hub.verify_token and hub.challenge are required",
        );
    };
    if mode != "subscribe" {
        return refused(StatusCode::BAD_REQUEST, "Invalid request: hub.mode must be subscribe");
    }
    let key = engage_actors::domain::webhook::verify_token_key(token);
    match state.platform.directory.sender_owner("whatsapp_verify", "", &key).await {
        Ok(Some(owner)) => {
            tracing::info!(tenant = owner, "WhatsApp webhook subscription verified");
            ([(header::CONTENT_TYPE, "text/plain")], challenge.clone()).into_response()
        }
        Ok(None) => refused(StatusCode::FORBIDDEN, "the verify token is no brand's"),
        Err(error) => {
            tracing::warn!(%error, "the sender directory is unreadable");
            refused(StatusCode::SERVICE_UNAVAILABLE, "try again shortly")
        }
    }
}

/// What one phone-number id was posted: customers' messages (number, text) and statuses.
type Posts = (Vec<(String, String)>, Vec<Posted>);

/// `POST /webhooks/whatsapp`: messages and statuses, signed.
pub async fn receive(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    // unsigned: refused before the body is read
    let Some(signature) = headers.get("x-hub-signature-256").and_then(|v| v.to_str().ok()).map(str::to_owned) else {
        return refused(StatusCode::UNAUTHORIZED, "X-Hub-Signature-256 is required");
    };
    let Ok(raw) = String::from_utf8(body.to_vec()) else {
        return refused(StatusCode::BAD_REQUEST, "Invalid request: the body is not UTF-8 JSON");
    };
    let Ok(posted) = serde_json::from_str::<Value>(&raw) else {
        return refused(StatusCode::BAD_REQUEST, "Invalid request: the body is not JSON");
    };
    // each phone-number id's text messages and statuses (other message types change nothing)
    let mut by_number: BTreeMap<String, Posts> = BTreeMap::new();
    let changes =
        posted["entry"].as_array().into_iter().flatten().flat_map(|e| e["changes"].as_array().into_iter().flatten());
    for change in changes {
        let value = &change["value"];
        let Some(number) = value["metadata"]["phone_number_id"].as_str() else { continue };
        let (messages, statuses) = by_number.entry(number.to_owned()).or_default();
        for message in value["messages"].as_array().into_iter().flatten() {
            let text = message["text"]["body"].as_str().or(message["button"]["text"].as_str());
            if let (Some(from), Some(text)) = (message["from"].as_str(), text) {
                messages.push((from.to_owned(), text.to_owned()));
            }
        }
        for status in value["statuses"].as_array().into_iter().flatten() {
            let receipt = status["status"].as_str().and_then(Receipt::whatsapp);
            if let (Some(id), Some(receipt)) = (status["id"].as_str(), receipt) {
                let error = status["errors"][0]["title"].as_str().or(status["errors"][0]["message"].as_str());
                statuses.push(Posted {
                    message_id: id.to_owned(),
                    send: status["biz_opaque_callback_data"].as_str().and_then(SendRef::parse),
                    receipt,
                    error: error.map(|e| e.chars().take(300).collect()),
                });
            }
        }
    }
    if by_number.is_empty() {
        return refused(
            StatusCode::BAD_REQUEST,
            "Invalid request: no entry[].changes[].value.metadata.phone_number_id",
        );
    }
    let (mut handled, mut receipts) = (0usize, 0u32);
    for (number, (messages, statuses)) in by_number {
        let owner = match state.platform.directory.sender_owner("whatsapp_cloud", "", &number).await {
            Ok(Some(owner)) => owner,
            Ok(None) => return refused(StatusCode::NOT_FOUND, "no brand's WhatsApp sender is this phone-number id"),
            Err(error) => {
                tracing::warn!(%error, "the sender directory is unreadable");
                return refused(StatusCode::SERVICE_UNAVAILABLE, "try again shortly");
            }
        };
        let count = messages.len();
        let inbound = WhatsappInbound {
            phone_number_id: number,
            body: raw.clone(),
            signature: signature.clone(),
            messages,
            statuses,
            now: Utc::now(),
        };
        match state.platform.gateway.ask(&owner, inbound).await {
            Ok(outcome) if !outcome.verified => {
                return refused(StatusCode::UNAUTHORIZED, "the signature is not Meta's with this brand's app secret")
            }
            Ok(outcome) => {
                handled += count;
                receipts += outcome.receipts;
            }
            Err(error) => return StaffError::from(error).into_response(),
        }
    }
    Json(json!({"handled": handled, "receipts": receipts})).into_response()
}

fn error(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}})
}

/// The handshake's operation in `/openapi.json`.
pub fn verify_doc() -> Value {
    let mut op = operation(
        "The WhatsApp Cloud API's webhook subscription handshake: hub.challenge echoed when hub.verify_token is a brand's WhatsApp verify token",
        Auth::None,
        None,
        json!({"type": "string"}),
    );
    if let Some(op) = op.as_object_mut() {
        op.remove("x-engage-open");
        op.remove("requestBody");
    }
    op["security"] = json!([]);
    op["parameters"] = json!([
        {"name": "hub.mode", "in": "query", "required": true, "schema": {"type": "string", "enum": ["subscribe"]}},
        {"name": "hub.verify_token", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": 256}},
        {"name": "hub.challenge", "in": "query", "required": true, "schema": {"type": "string", "maxLength": 256}}]);
    op["responses"] = json!({
        "200": {"description": "the challenge", "content": {"text/plain": {"schema": {"type": "string"}}}},
        "400": error("{message}: a parameter missing, or hub.mode not subscribe"),
        "403": error("{message}: the verify token is no brand's"),
        "503": error("{message}: the sender directory is unavailable"),
    });
    op
}

/// The messages' operation in `/openapi.json`.
pub fn receive_doc() -> Value {
    let mut op = operation(
        "The WhatsApp Cloud API's webhook: entry[].changes[].value.messages (STOP/START/HELP from customers) and .statuses (receipts of the brand's messages: delivered, read, failed) for a brand's phone-number id, signed with X-Hub-Signature-256 (HMAC-SHA256 of the body with that brand's app secret): {handled, receipts}",
        Auth::None,
        None,
        json!({"type": "object", "required": ["handled", "receipts"], "properties": {"handled": {"type": "integer", "minimum": 0}, "receipts": {"type": "integer", "minimum": 0}}, "additionalProperties": false}),
    );
    if let Some(op) = op.as_object_mut() {
        op.remove("x-engage-open");
    }
    let message = json!({"type": "object", "required": ["from"], "properties": {
        "from": {"type": "string", "minLength": 1, "maxLength": 32},
        "type": {"type": "string"},
        "text": {"type": "object", "properties": {"body": {"type": "string", "maxLength": 4096}}},
        "button": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 256}}}}});
    let value = json!({"type": "object", "required": ["metadata"], "properties": {
        "messaging_product": {"type": "string"},
        "metadata": {"type": "object", "required": ["phone_number_id"],
            "properties": {"phone_number_id": {"type": "string", "minLength": 1, "maxLength": 64}}},
        "messages": {"type": "array", "items": message},
        "statuses": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "string", "maxLength": 256},
            "status": {"type": "string"},
            "recipient_id": {"type": "string"},
            "timestamp": {"type": "string"},
            "biz_opaque_callback_data": {"type": "string", "maxLength": 512},
            "errors": {"type": "array", "items": {"type": "object"}}}}}}});
    op["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": {"type": "object",
        "required": ["entry"], "properties": {"object": {"type": "string"}, "entry": {"type": "array", "minItems": 1,
            "items": {"type": "object", "required": ["changes"], "properties": {"id": {"type": "string"},
                "changes": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["value"],
                    "properties": {"field": {"type": "string"}, "value": value}}}}}}}}}}});
    op["security"] = json!([{"metaSignature": []}]);
    op["responses"] = json!({
        "200": op["responses"]["200"].clone(),
        "400": error("{message}: not JSON, or no phone_number_id"),
        "401": error("{message}: no X-Hub-Signature-256, or not Meta's with the brand's app secret: nothing changed"),
        "404": error("{message}: no brand's WhatsApp sender is this phone-number id"),
        "413": error("{message}: the body exceeds 1048576 bytes"),
        "503": error("{message}: the brand's owner or the sender directory is unavailable; Meta retries"),
    });
    op
}
