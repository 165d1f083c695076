//! `POST /webhooks/twilio`: messages customers send to a brand's Twilio number (SMS, or WhatsApp
//! through Twilio), as Twilio posts them: a form, signed with `X-Twilio-Signature`. The brand is
//! the one whose sender is `AccountSid`/`To` (the sender directory), never a field the caller
//! chooses; the brand's actor checks the signature with the brand's own auth token (which never
//! leaves it) before STOP, START or HELP changes anything. The answer is TwiML: the reply to the
//! customer, if any.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::Utc;
use serde_json::{json, Value};

use engage_actors::capabilities::senders::TwilioInbound;

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
    let (Some(account), Some(to), Some(from), Some(text)) =
        (field("AccountSid"), field("To"), field("From"), field("Body"))
    else {
        return refused(StatusCode::BAD_REQUEST, "Invalid request: AccountSid, To, From and Body are required");
    };
    let owner = match state.platform.directory.sender_owner("twilio", &account, &to).await {
        Ok(Some(owner)) => owner,
        Ok(None) => return refused(StatusCode::NOT_FOUND, "no brand's Twilio sender is this account and number"),
        Err(error) => {
            tracing::warn!(%error, "the sender directory is unreadable");
            return refused(StatusCode::SERVICE_UNAVAILABLE, "try again shortly");
        }
    };
    let url = called_url(&headers, &uri);
    let message = TwilioInbound { account, to, from, body: text, url, params, signature, now: Utc::now() };
    match state.platform.gateway.ask(&owner, message).await {
        Ok(outcome) if !outcome.verified => {
            refused(StatusCode::UNAUTHORIZED, "the signature is not Twilio's for this brand's account")
        }
        Ok(outcome) => {
            let handled = outcome.handled;
            tracing::info!(tenant = owner, keyword = ?handled.as_ref().and_then(|h| h.keyword), "Twilio inbound message");
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
        "Twilio's inbound-message webhook (SMS, WhatsApp through Twilio): STOP/START/HELP from a customer to a brand's Twilio number, found by AccountSid and To; X-Twilio-Signature must be Twilio's with that brand's auth token. Answers TwiML (the reply, if any)",
        Auth::None,
        None,
        json!({"type": "string"}),
    );
    op["requestBody"] = json!({"required": true, "content": {"application/x-www-form-urlencoded": {"schema": {
    "type": "object", "required": ["AccountSid", "To", "From", "Body"],
    "properties": {
        "AccountSid": {"type": "string", "minLength": 1, "maxLength": 64},
        "To": {"type": "string", "minLength": 1, "maxLength": 64},
        "From": {"type": "string", "minLength": 1, "maxLength": 64},
        "Body": {"type": "string", "maxLength": 1600},
        "MessageSid": {"type": "string", "maxLength": 64}
    }}}}});
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
        "400": answer("{message}: AccountSid, To, From or Body missing, or From is no phone number"),
        "401": answer("{message}: no X-Twilio-Signature, or not Twilio's with the brand's auth token: nothing changed"),
        "404": answer("{message}: no brand's Twilio sender is this AccountSid and To"),
        "413": answer("{message}: the body exceeds 1048576 bytes"),
        "503": answer("{message}: the brand's owner or the sender directory is unavailable; Twilio retries"),
    });
    op
}
