//! The providers' own wire formats (`docs/senders.md`): how a queued send goes out through a
//! brand's own sender ([`crate::domain::sender::Sender`]), and what the provider's answer means.
//!
//! | provider | request | success | refused for good |
//! |---|---|---|---|
//! | `twilio` | `POST {base}/2010-04-01/Accounts/{account}/Messages.json`, form `To`, `From`, `Body`, `StatusCallback`, basic auth `account:credential`; chat: `whatsapp:` numbers | 2xx, `sid` kept | 400, 404 (an invalid number, a sender not the account's) |
//! | `msg91` | `POST {base}/api/v5/flow/`, header `authkey`, JSON `{template_id, sender, DLT_TE_ID, short_url, recipients: [{mobiles, var}]}`; the template's DLT id is required | 2xx with `type` `success`, `message` kept | `type` `error`, 400; a template without a DLT id is refused without a call |
//! | `whatsapp_cloud` | `POST {base}/v21.0/{phone-number id}/messages`, bearer credential, JSON template message (`name` = the send's template id, `language`, one body parameter: the message), `biz_opaque_callback_data` = `<queue>/<send id>` (echoed in its statuses) | 2xx, `messages[0].id` kept | 400 (template unknown or not approved, number not on WhatsApp) |
//! | `fcm` | `POST {base}/v1/projects/{project id}/messages:send`, bearer access token minted from the service-account key ([`super::fcm`]), JSON `{message: {token, notification: {body}, data: {send_id}}}` | 2xx, `name` kept | 400, 403, 404 (invalid message, another project's token, `UNREGISTERED` device) |
//! | `generic` | `POST {base}` with engage's JSON, bearer credential | 2xx, `id` kept | 400, 404, 422 |
//!
//! Everything else (401, 403, 408, 429, 5xx, no answer) may pass: the send is tried again after
//! a backoff with jitter ([`crate::domain::delivery::retry_delay`], at least a 429's
//! `Retry-After`), for [`crate::domain::delivery::RETRY_WINDOW`]. A rejected send, or one still
//! failing at the end of the window, is settled failed and its debit credited back once
//! (`refund-<send id>`). Every request carries `Idempotency-Key: <send id>`.

use serde_json::{json, Value};

use crate::capabilities::wallet::QueuedSend;
use crate::domain::delivery::DeliveryError;
use crate::domain::sender::{ProviderKind, Sender, ServiceAccount};
use crate::domain::wallet::Channel;

/// The number in E.164 (`+` and digits): an Indian mobile's ten digits get `+91`.
pub(super) fn e164(to: &str) -> String {
    match crate::domain::phone::indian_mobile(to) {
        Some(national) => format!("+91{national}"),
        None => format!("+{}", crate::domain::phone::canonical(to).trim_start_matches('+')),
    }
}

/// A 429's `Retry-After`, in seconds (the delta-seconds form; a date counts as none).
pub(super) fn retry_after(response: &reqwest::Response) -> Option<u64> {
    response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()
}

/// What the provider's answer status means: `Ok` for a success, the error otherwise.
pub(super) fn judge(
    what: &'static str,
    status: reqwest::StatusCode,
    body: &str,
    permanent: &[u16],
    retry_after: Option<u64>,
) -> Result<(), DeliveryError> {
    if status.is_success() {
        return Ok(());
    }
    if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        return Err(DeliveryError::Throttled { what, retry_after });
    }
    let said: String = body.chars().take(300).collect();
    match permanent.contains(&status.as_u16()) {
        true => Err(DeliveryError::Rejected { what, reason: format!("{status}: {said}") }),
        false => Err(DeliveryError::Refused { what, status: status.to_string() }),
    }
}

/// What a delivery goes out with: the node's HTTP client, its FCM access tokens, and this
/// service's public URL (`ENGAGE_PUBLIC_URL`), with which Twilio is asked to post each message's
/// statuses to `{public_url}/webhooks/twilio?queue=…&send=…` (its receipts).
pub(super) struct Via<'a> {
    /// The HTTP client.
    pub client: &'a reqwest::Client,
    /// FCM access tokens, kept across drains.
    pub tokens: &'a super::fcm::Tokens,
    /// This service's public URL.
    pub public_url: Option<&'a str>,
}

/// Sends `row` through the brand's `sender`; the provider's message id when it gave one.
/// `message` is the text to send (the chat button's link already added, for providers without
/// buttons).
pub(super) async fn deliver(
    via: &Via<'_>,
    sender: &Sender,
    row: &QueuedSend,
    message: &str,
) -> Result<Option<String>, DeliveryError> {
    let (client, public_url) = (via.client, via.public_url);
    let what = sender.provider.name();
    let unreachable = |e: reqwest::Error| DeliveryError::Unreachable { what: "provider", error: e.to_string() };
    let base = sender.base_url().unwrap_or_default();
    let credential = sender.credential.as_ref().map(|c| c.expose()).unwrap_or_default();
    let mut fcm_key = None;
    let (request, permanent): (reqwest::RequestBuilder, &[u16]) = match sender.provider {
        ProviderKind::Twilio => {
            let account = sender.account.as_deref().unwrap_or_default();
            let (to, from) = match row.channel {
                Channel::Chat => (
                    format!("whatsapp:{}", e164(&row.to)),
                    match sender.sender.starts_with("whatsapp:") {
                        true => sender.sender.clone(),
                        false => format!("whatsapp:{}", sender.sender),
                    },
                ),
                _ => (e164(&row.to), sender.sender.clone()),
            };
            let mut form = vec![("To", to), ("From", from), ("Body", message.to_owned())];
            if let Some(public) = public_url {
                let send = row.send_ref();
                let query: String = form_urlencoded::Serializer::new(String::new())
                    .append_pair("queue", &send.queue)
                    .append_pair("send", &send.send_id)
                    .finish();
                form.push(("StatusCallback", format!("{}/webhooks/twilio?{query}", public.trim_end_matches('/'))));
            }
            let url = format!("{base}/2010-04-01/Accounts/{account}/Messages.json");
            (client.post(url).basic_auth(account, Some(credential)).form(&form), &[400, 404])
        }
        ProviderKind::Msg91 => {
            // refused when queued; again here if the sender changed since
            let Some(dlt) = sender.dlt_template(row.template_id.as_deref(), row.purpose) else {
                let reason = sender.refuses(row.template_id.as_deref(), row.purpose).unwrap_or_default();
                return Err(DeliveryError::Rejected { what, reason });
            };
            let body = json!({
                "template_id": dlt,
                "sender": sender.sender,
                "DLT_TE_ID": dlt,
                "short_url": "0",
                "recipients": [{"mobiles": e164(&row.to).trim_start_matches('+'), "var": message}],
            });
            let url = format!("{base}/api/v5/flow/");
            (client.post(url).header("authkey", credential).json(&body), &[400])
        }
        ProviderKind::WhatsappCloud => {
            let Some(template) = row.template_id.as_deref() else {
                return Err(DeliveryError::Rejected {
                    what,
                    reason: "a WhatsApp message to a customer needs an approved template: the send names none".into(),
                });
            };
            let body = json!({
                "messaging_product": "whatsapp",
                "recipient_type": "individual",
                "to": e164(&row.to).trim_start_matches('+'),
                "type": "template",
                "biz_opaque_callback_data": row.send_ref().callback_data(),
                "template": {
                    "name": template,
                    "language": {"code": sender.language.as_deref().unwrap_or("en")},
                    "components": [{"type": "body", "parameters": [{"type": "text", "text": message}]}],
                },
            });
            let url = format!("{base}/v21.0/{}/messages", sender.sender);
            (client.post(url).bearer_auth(credential).json(&body), &[400])
        }
        ProviderKind::Fcm => {
            let key = ServiceAccount::parse(credential).map_err(|reason| DeliveryError::Rejected { what, reason })?;
            let token = via.tokens.token(client, &key).await?;
            fcm_key = Some(key);
            let body = json!({"message": {
                "token": row.to,
                "notification": {"body": message},
                "data": {"send_id": row.send_id},
            }});
            let url = format!("{base}/v1/projects/{}/messages:send", sender.sender);
            // 400 INVALID_ARGUMENT, 403 SENDER_ID_MISMATCH, 404 UNREGISTERED (a stale device token)
            (client.post(url).bearer_auth(token).json(&body), &[400, 403, 404])
        }
        ProviderKind::Generic => {
            let body = json!({"send_id": row.send_id, "to": row.to, "message": message, "channel": row.channel,
                "template_type": row.template_type, "business_id": row.business_id,
                "template_id": row.template_id, "sender_id": sender.sender});
            let mut request = client.post(base).json(&body);
            if !credential.is_empty() {
                request = request.bearer_auth(credential);
            }
            (request, &[400, 404, 422])
        }
    };
    // engage's send id as the idempotency key: a provider that honours one sends a retried call
    // once (the generic JSON also carries it as send_id)
    let response = request.header("Idempotency-Key", &row.send_id).send().await.map_err(unreachable)?;
    let status = response.status();
    if let (Some(key), reqwest::StatusCode::UNAUTHORIZED) = (&fcm_key, status) {
        // the access token was revoked or expired early: the next attempt mints another
        via.tokens.forget(key).await;
    }
    let after = retry_after(&response);
    let body = response.text().await.unwrap_or_default();
    judge(what, status, &body, permanent, after)?;
    let answer: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let id = match sender.provider {
        ProviderKind::Twilio => answer["sid"].as_str(),
        ProviderKind::Msg91 => {
            if answer["type"] == "error" {
                return Err(DeliveryError::Rejected { what, reason: answer["message"].to_string() });
            }
            answer["message"].as_str()
        }
        ProviderKind::WhatsappCloud => answer["messages"][0]["id"].as_str(),
        ProviderKind::Fcm => answer["name"].as_str(),
        ProviderKind::Generic => answer["id"].as_str(),
    };
    Ok(id.map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_go_out_in_e164() {
        assert_eq!(e164("9811100001"), "+919811100001");
        assert_eq!(e164("+1 415 555 0100"), "+14155550100");
    }

    #[test]
    fn only_the_listed_statuses_are_refusals_for_good() {
        let rejected = judge("twilio", reqwest::StatusCode::BAD_REQUEST, "{\"code\":21211}", &[400], None);
        assert!(rejected.is_err_and(|e| e.is_permanent()));
        for status in [401, 403, 429, 500, 503] {
            let status = reqwest::StatusCode::from_u16(status).unwrap();
            assert!(judge("twilio", status, "", &[400], None).is_err_and(|e| !e.is_permanent()), "{status}");
        }
        assert!(judge("twilio", reqwest::StatusCode::CREATED, "", &[400], None).is_ok());
    }
}
