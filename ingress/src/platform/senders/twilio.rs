//! `POST /webhooks/twilio`: messages customers send to a brand's Twilio number (SMS, or WhatsApp
//! through Twilio), and the status callbacks of the messages the brand sent (receipts), as Twilio
//! posts them: a form, signed with `X-Twilio-Signature`. The brand is the one whose sender is
//! `AccountSid` and the brand's number (`To` of a message, `From` of a status callback: the
//! sender directory), never a field the caller chooses; the brand's actor checks the signature
//! with the brand's own auth token (which never leaves it) before STOP, START or HELP changes
//! anything or a status moves a send (the one the callback URL's `queue` and `send` name, whose
//! message id must be `MessageSid`). The answer is TwiML: the reply to the customer, if any.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::Utc;
use serde_json::{json, Value};

use engage_actors::capabilities::receipts::Posted;
use engage_actors::capabilities::webhooks::{TwilioInbound, TwilioPost};
use engage_actors::domain::receipt::{Receipt, SendRef};

use crate::platform::edge::auth::Auth;
use crate::platform::edge::errors::StaffError;
use crate::platform::edge::routes::operation;
use crate::state::AppState;

fn refused(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"message": message}))).into_response()
}

/// The URL Twilio posted to, as it signed it: the scheme a proxy in front says
/// (`X-Forwarded-Proto`, else `http`), the `Host`, the path and query.
fn called_url(headers: &HeaderMap, uri: &axum::http::Uri) -> String {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    let scheme = text("x-forwarded-proto").and_then(|p| p.split(',').next()).unwrap_or("http");
    let host = text("x-forwarded-host").or(text("host")).unwrap_or("localhost");
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    format!("{scheme}://{host}{path}")
}

fn xml_escaped(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// `POST /webhooks/twilio`.
pub async fn twilio(State(state): State<AppState>, uri: axum::http::Uri, headers: HeaderMap, body: Bytes) -> Response {
    // unsigned: refused before the body is read
    let Some(signature) = headers.get("x-twilio-signature").and_then(|v| v.to_str().ok()).map(str::to_owned) else {
        return refused(StatusCode::UNAUTHORIZED, "X-Twilio-Signature is required");
    };
    let params: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let field = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let (Some(account), Some(to), Some(from)) = (field("AccountSid"), field("To"), field("From")) else {
        return refused(StatusCode::BAD_REQUEST, "Invalid request: AccountSid, To and From are required");
    };
    // a message has a Body; a status callback of a message the brand sent has MessageStatus
    let (number, post) =
        match (field("Body"), field("MessageStatus"), field("MessageSid")) {
            (Some(body), _, _) => (to, TwilioPost::Message { from, body }),
            (None, Some(status), Some(sid)) => {
                let Some(receipt) = Receipt::twilio(&status) else {
                    return refused(
                        StatusCode::BAD_REQUEST,
                        "Invalid request: MessageStatus is not a Twilio message status",
                    );
                };
                let query: Vec<(String, String)> =
                    form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes()).into_owned().collect();
                let named = |name: &str| query.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
                let send = match (named("queue"), named("send")) {
                    (Some(queue), Some(send_id)) => SendRef::parse(&format!("{queue}/{send_id}")),
                    _ => None,
                };
                let error = field("ErrorCode").map(|code| format!("Twilio error {code}"));
                (from, TwilioPost::Status(Posted { message_id: sid, send, receipt, error }))
            }
            _ => return refused(
                StatusCode::BAD_REQUEST,
                "Invalid request: Body (a message), or MessageStatus and MessageSid (a status callback), are required",
            ),
        };
    let owner = match state.platform.directory.sender_owner("twilio", &account, &number).await {
        Ok(Some(owner)) => owner,
        Ok(None) => return refused(StatusCode::NOT_FOUND, "no brand's Twilio sender is this account and number"),
        Err(error) => {
            tracing::warn!(%error, "the sender directory is unreadable");
            return refused(StatusCode::SERVICE_UNAVAILABLE, "try again shortly");
        }
    };
    let url = called_url(&headers, &uri);
    let message = TwilioInbound { account, number, post, url, params, signature, now: Utc::now() };
    match state.platform.gateway.ask(&owner, message).await {
        Ok(outcome) if !outcome.verified => {
            refused(StatusCode::UNAUTHORIZED, "the signature is not Twilio's for this brand's account")
        }
        Ok(outcome) => {
            let handled = outcome.handled;
            tracing::info!(tenant = owner, keyword = ?handled.as_ref().and_then(|h| h.keyword), receipts = outcome.receipts, "Twilio webhook");
            let reply = handled.and_then(|h| h.reply).map(|r| format!("<Message>{}</Message>", xml_escaped(&r)));
            let twiml =
                format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response>{}</Response>", reply.unwrap_or_default());
            ([(header::CONTENT_TYPE, "text/xml")], twiml).into_response()
        }
        Err(error) => StaffError::from(error).into_response(),
    }
}

/// The webhook's operation in `/openapi.json`.
pub fn operation_doc() -> Value {
    let mut op = operation(
        "Twilio's webhook (SMS, WhatsApp through Twilio): STOP/START/HELP from a customer to a brand's Twilio number (found by AccountSid and To), and the status callbacks of the brand's messages (MessageSid, MessageStatus; found by AccountSid and From; queue and send in the query, as engage set StatusCallback); X-Twilio-Signature must be Twilio's with that brand's auth token. Answers TwiML (the reply, if any)",
        Auth::None,
        None,
        json!({"type": "string"}),
    );
    op["requestBody"] = json!({"required": true, "content": {"application/x-www-form-urlencoded": {"schema": {
    "type": "object", "required": ["AccountSid", "To", "From"],
    "properties": {
        "AccountSid": {"type": "string", "minLength": 1, "maxLength": 64},
        "To": {"type": "string", "minLength": 1, "maxLength": 64},
        "From": {"type": "string", "minLength": 1, "maxLength": 64},
        "Body": {"type": "string", "maxLength": 1600},
        "MessageSid": {"type": "string", "maxLength": 64},
        "MessageStatus": {"type": "string", "enum": ["accepted", "scheduled", "queued", "sending", "sent",
            "delivered", "read", "undelivered", "failed", "canceled"]},
        "ErrorCode": {"type": "string", "maxLength": 16}
    }}}}});
    op["parameters"] = json!([
        {"name": "queue", "in": "query", "required": false, "description": "the send's queue (engage sets it in StatusCallback)",
         "schema": {"type": "string", "maxLength": 64}},
        {"name": "send", "in": "query", "required": false, "description": "the send's id (engage sets it in StatusCallback)",
         "schema": {"type": "string", "maxLength": 256}}]);
    op["security"] = json!([{"twilioSignature": []}]);
    if let Some(op) = op.as_object_mut() {
        op.remove("x-engage-open");
    }
    let error = json!({"content": {"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}});
    let answer = |description: &str| {
        let mut answer = error.clone();
        answer["description"] = json!(description);
        answer
    };
    op["responses"] = json!({
        "200": {"description": "TwiML: the reply to the customer, if any", "content": {"text/xml": {"schema": {"type": "string"}}}},
        "400": answer("{message}: AccountSid, To or From missing, neither Body nor MessageStatus and MessageSid, or From is no phone number"),
        "401": answer("{message}: no X-Twilio-Signature, or not Twilio's with the brand's auth token: nothing changed"),
        "404": answer("{message}: no brand's Twilio sender is this AccountSid and To (From for a status callback)"),
        "413": answer("{message}: the body exceeds 1048576 bytes"),
        "503": answer("{message}: the brand's owner or the sender directory is unavailable; Twilio retries"),
    });
    op
}
