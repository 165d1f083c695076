//! A brand's own senders (issue 66, `docs/senders.md`): each brand's messages go through its own
//! provider account, in that provider's wire format, checked here by local servers that read the
//! requests as Twilio, MSG91 and the WhatsApp Cloud API document them; credentials are never
//! answered; a refusal for good fails the send at once and credits it back once; a provider that
//! fails for a while delivers once and is paid once; a throttled send waits what it is asked. The
//! providers' webhooks (messages and receipts): `sender_webhooks.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use chrono::Utc;
use serde_json::{json, Value};

use crate::campaigns::{brand, upload};
use crate::helpers::spawn_app;
use crate::journey_runs::{run, Brand};

/// What a fake provider received: (path, authorization header or authkey, body fields).
pub(crate) type Received = Arc<Mutex<Vec<(String, String, Value)>>>;

pub(crate) struct Fake {
    pub(crate) base: String,
    pub(crate) received: Received,
}

/// Decodes an `application/x-www-form-urlencoded` body.
pub(crate) fn form(body: &[u8]) -> Value {
    let decode = |text: &str| {
        let bytes = text.replace('+', " ").into_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' && i + 2 < bytes.len() {
                if let Ok(byte) = u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    out.push(byte);
                    i += 3;
                    continue;
                }
            }
            out.push(bytes[i]);
            i += 1;
        }
        String::from_utf8(out).unwrap()
    };
    let text = std::str::from_utf8(body).unwrap();
    let fields: serde_json::Map<String, Value> = text
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), json!(decode(v)))
        })
        .collect();
    Value::Object(fields)
}

/// A Twilio Messages API: checks the basic auth against `accounts` (sid → token), needs `To`,
/// `From` and `Body`; answers 400 (code 21211) for a `To` in `invalid`, 500 for the first
/// `fail_first` requests, else 201 with a `sid`.
pub(crate) async fn twilio(accounts: &[(&str, &str)], invalid: &[&str], fail_first: usize) -> Fake {
    let received: Received = Arc::default();
    let accounts: HashMap<String, String> = accounts.iter().map(|(a, t)| (a.to_string(), t.to_string())).collect();
    let invalid: Vec<String> = invalid.iter().map(|s| s.to_string()).collect();
    type S = (Received, HashMap<String, String>, Vec<String>, Arc<Mutex<usize>>);
    async fn handle(
        State((received, accounts, invalid, failures)): State<S>,
        Path(account): Path<String>,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        use base64::Engine as _;
        let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        let expected = accounts.get(&account).map(|token| {
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{account}:{token}")))
        });
        if expected.as_deref() != Some(auth.as_str()) {
            return (StatusCode::UNAUTHORIZED, Json(json!({"code": 20003, "message": "Authenticate"}))).into_response();
        }
        let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
        assert_eq!(content_type, "application/x-www-form-urlencoded", "Twilio takes a form");
        let mut fields = form(&body);
        for field in ["To", "From", "Body"] {
            if fields[field].as_str().is_none_or(str::is_empty) {
                return (StatusCode::BAD_REQUEST, Json(json!({"code": 21604, "message": format!("{field} required")})))
                    .into_response();
            }
        }
        let sid = {
            let mut received = received.lock().unwrap();
            // the message's sid, kept beside what was posted (the test names it in receipts)
            let sid = format!("SM{:032}", received.len() + 1);
            fields["_sid"] = json!(sid);
            received.push((account.clone(), auth, fields.clone()));
            sid
        };
        {
            let mut left = failures.lock().unwrap();
            if *left > 0 {
                *left -= 1;
                return StatusCode::INTERNAL_SERVER_ERROR.into_response();
            }
        }
        if invalid.iter().any(|n| fields["To"] == n.as_str()) {
            return (StatusCode::BAD_REQUEST, Json(json!({"code": 21211, "message": "Invalid 'To' Phone Number"})))
                .into_response();
        }
        (StatusCode::CREATED, Json(json!({"sid": sid, "status": "queued"}))).into_response()
    }
    let app = Router::new()
        .route("/2010-04-01/Accounts/{account}/Messages.json", axum::routing::post(handle))
        .with_state((received.clone(), accounts, invalid, Arc::new(Mutex::new(fail_first))));
    serve(app, received).await
}

/// The WhatsApp Cloud API's messages endpoint: bearer `token`, a template message.
pub(crate) async fn whatsapp(token: &'static str) -> Fake {
    let received: Received = Arc::default();
    type S = (Received, &'static str);
    async fn handle(
        State((received, token)): State<S>,
        Path(phone_number_id): Path<String>,
        headers: HeaderMap,
        Json(body): Json<Value>,
    ) -> Response {
        let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        if auth != format!("Bearer {token}") {
            return (StatusCode::UNAUTHORIZED, Json(json!({"error": {"code": 190}}))).into_response();
        }
        if body["messaging_product"] != "whatsapp" || body["type"] != "template" || body["template"]["name"].is_null() {
            return (StatusCode::BAD_REQUEST, Json(json!({"error": {"code": 100}}))).into_response();
        }
        let id = {
            let mut received = received.lock().unwrap();
            received.push((phone_number_id, auth, body));
            format!("wamid.{}", received.len())
        };
        Json(json!({"messaging_product": "whatsapp", "messages": [{"id": id}]})).into_response()
    }
    let app =
        Router::new().route("/v21.0/{id}/messages", axum::routing::post(handle)).with_state((received.clone(), token));
    serve(app, received).await
}

/// An MSG91-style flow endpoint: `authkey` header, a DLT template id and recipients.
async fn msg91(authkey: &'static str) -> Fake {
    let received: Received = Arc::default();
    type S = (Received, &'static str);
    async fn handle(State((received, authkey)): State<S>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
        let key = headers.get("authkey").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        if key != authkey {
            return (StatusCode::UNAUTHORIZED, Json(json!({"type": "error", "message": "Authentication failure"})))
                .into_response();
        }
        received.lock().unwrap().push(("flow".into(), key, body));
        Json(json!({"type": "success", "message": "req-1"})).into_response()
    }
    let app = Router::new().route("/api/v5/flow/", axum::routing::post(handle)).with_state((received.clone(), authkey));
    serve(app, received).await
}

async fn serve(app: Router, received: Received) -> Fake {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Fake { base, received }
}

/// Queues a marketing campaign on `channel` to `phones` (template `template`), paid by outlet-1.
pub(crate) async fn campaign(b: &Brand<'_>, channel: &str, template: &str, phones: &[&str]) {
    let answer = campaign_answer(b, channel, template, phones).await;
    assert_eq!(answer["queued_recipients"], json!(phones.len()), "{answer}");
}

/// Uploads a bulk campaign of `phones` and answers what the upload said.
pub(crate) async fn campaign_answer(b: &Brand<'_>, channel: &str, template: &str, phones: &[&str]) -> Value {
    let csv = format!("Phone,Name\n{}\n", phones.iter().map(|p| format!("{p},Guest")).collect::<Vec<_>>().join("\n"));
    let fields = [
        ("business_id", "outlet-1"),
        ("campaign_name", "Senders"),
        ("channel", channel),
        ("template_id", template),
        ("message", "Hi x_cust_name, 20% off tonight"),
    ];
    let (status, answer) = upload(b, "/crm_api/create/bulk/campaign", &fields, &csv).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

#[tokio::test]
async fn each_brand_sends_through_its_own_account_and_pays_for_its_own_sends() {
    let accounts = [("AC_A", "token-a-secret"), ("AC_B", "token-b-secret")];
    let twilio = twilio(&accounts, &["+919811700009"], 0).await;
    let cloud = whatsapp("wa-token-secret").await;
    // no node-wide provider at all: only brands with a sender send
    let app = spawn_app(&[]).await;
    let (a, b, c, d) = (
        brand(&app, "brand-ta").await,
        brand(&app, "brand-tb").await,
        brand(&app, "brand-wa").await,
        brand(&app, "brand-none").await,
    );
    for (brand, account, token, from) in
        [(&a, "AC_A", "token-a-secret", "+15005550001"), (&b, "AC_B", "token-b-secret", "+15005550002")]
    {
        let set = brand
            .staff(
                "/crm_api/senders",
                json!({"channel": "sms", "provider": "twilio", "base_url": twilio.base, "sender": from,
                       "account": account, "credential": token}),
            )
            .await;
        let text = set.to_string();
        assert!(!text.contains(token), "a credential is never answered: {text}");
        assert_eq!(set["senders"][0]["credential_set"], true, "{set}");
        assert_eq!(set["senders"][0]["provider"], "twilio", "{set}");
    }
    c.staff(
        "/crm_api/senders",
        json!({"channel": "chat", "provider": "whatsapp_cloud", "base_url": cloud.base, "sender": "1065550001",
               "credential": "wa-token-secret", "language": "en_US"}),
    )
    .await;
    // read back by another request: still no credential
    let read = a.staff("/crm_api/senders", json!({})).await;
    assert!(!read.to_string().contains("token-a-secret") && read["senders"][0]["account"] == "AC_A", "{read}");
    // another brand's token cannot read or change brand A's senders
    let (status, _) = crate::loyalty::post(
        &app,
        "/crm_api/senders",
        &[("token", &b.staff)],
        &json!({"parent_business_id": "brand-ta"}),
    )
    .await;
    assert_eq!(status, 403);

    for brand in [&a, &b, &c, &d] {
        brand
            .staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "s1"}))
            .await;
    }
    campaign(&a, "sms", "dlt-1", &["9811700001", "9811700002", "9811700009"]).await;
    campaign(&b, "sms", "dlt-1", &["9811700003"]).await;
    campaign(&c, "chat", "offer_v1", &["9811700004"]).await;
    campaign(&d, "sms", "dlt-1", &["9811700005"]).await;
    let balances_before: Vec<String> = futures::future::join_all([&a, &b, &c, &d].map(|x| x.balance())).await;

    let drained = run(&app, "sms_drain", Utc::now()).await;
    // A's two good numbers and B's one; A's invalid number refused for good; D waits
    assert_eq!((&drained["outcome"]["sent"], &drained["outcome"]["failed"]), (&json!(3), &json!(1)), "{drained}");
    let got = twilio.received.lock().unwrap().clone();
    let by_account =
        |acc: &str| got.iter().filter(|(account, _, _)| account == acc).map(|(_, _, f)| f.clone()).collect::<Vec<_>>();
    let tos = |fields: Vec<Value>| {
        let mut tos: Vec<String> = fields.iter().map(|f| f["To"].as_str().unwrap().to_owned()).collect();
        tos.sort();
        tos
    };
    assert_eq!(tos(by_account("AC_A")), ["+919811700001", "+919811700002", "+919811700009"]);
    assert_eq!(tos(by_account("AC_B")), ["+919811700003"]);
    assert!(by_account("AC_A")
        .iter()
        .all(|f| f["From"] == "+15005550001" && f["Body"].as_str().unwrap().starts_with("Hi Guest")));
    assert!(by_account("AC_B").iter().all(|f| f["From"] == "+15005550002"));
    let chat = run(&app, "chat_drain", Utc::now()).await;
    assert_eq!(chat["outcome"]["sent"], 1, "{chat}");
    let wa = cloud.received.lock().unwrap().clone();
    assert_eq!(wa.len(), 1);
    let (phone_number_id, _, body) = &wa[0];
    assert_eq!(phone_number_id, "1065550001");
    assert_eq!(
        (&body["to"], &body["template"]["name"], &body["template"]["language"]["code"]),
        (&json!("919811700004"), &json!("offer_v1"), &json!("en_US")),
        "{body}"
    );
    // the refused send was credited back once to A; nobody else's wallet moved
    let balances_after: Vec<String> = futures::future::join_all([&a, &b, &c, &d].map(|x| x.balance())).await;
    let gained = balances_after[0].parse::<f64>().unwrap() - balances_before[0].parse::<f64>().unwrap();
    assert!(gained > 0.0, "A's refused send was not credited: {balances_before:?} → {balances_after:?}");
    assert_eq!(&balances_after[1..], &balances_before[1..]);
    run(&app, "sms_drain", Utc::now()).await;
    assert_eq!(a.balance().await, balances_after[0], "credited once, not on every drain");
    assert_eq!(twilio.received.lock().unwrap().len(), 4, "nothing sent twice");
    // D has no sender and the node none: its send waits, unsent and unrefunded
    assert_eq!(d.balance().await, balances_before[3]);
}

#[tokio::test]
async fn a_provider_failing_a_while_delivers_once_and_a_dlt_gateway_needs_each_templates_id() {
    let twilio = twilio(&[("AC_R", "tok-r")], &[], 3).await;
    let gateway = msg91("auth-key-secret").await;
    let app = spawn_app(&[]).await;
    let (r, m) = (brand(&app, "brand-retry").await, brand(&app, "brand-dlt").await);
    r.staff(
        "/crm_api/senders",
        json!({"channel": "sms", "provider": "twilio", "base_url": twilio.base,
        "sender": "+15005550003", "account": "AC_R", "credential": "tok-r"}),
    )
    .await;
    // a DLT gateway without its entity id is kept, saying what it lacks (its sends wait)
    let partial = m
        .staff(
            "/crm_api/senders",
            json!({"channel": "sms", "provider": "msg91", "sender": "ENGAGE", "credential": "auth-key-secret"}),
        )
        .await;
    assert!(partial["senders"][0]["incomplete"].as_str().unwrap().contains("dlt_entity_id"), "{partial}");
    assert_eq!(partial["senders"][0]["credential_set"], true, "{partial}");
    m.staff("/crm_api/senders", json!({"channel": "sms", "provider": "msg91", "base_url": gateway.base, "sender": "ENGAGE",
        "credential": "auth-key-secret", "dlt_entity_id": "1101000000000001", "dlt_templates": {"dlt-1": "1107000000000001"}})).await;
    for brand in [&r, &m] {
        brand
            .staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "s1"}))
            .await;
    }
    campaign(&r, "sms", "dlt-1", &["9811800001"]).await;
    campaign(&m, "sms", "dlt-1", &["9811800002"]).await;
    // a template without a DLT id is refused when queued: nothing queued, nothing paid
    let before = m.balance().await;
    let refused = campaign_answer(&m, "sms", "no-dlt", &["9811800003", "9811800004"]).await;
    assert_eq!((&refused["queued_recipients"], &refused["refused"]), (&json!(0), &json!(2)), "{refused}");
    let reason = refused["refused_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("no-dlt") && reason.contains("DLT template id"), "{refused}");
    assert_eq!(m.balance().await, before, "a refused send costs nothing");
    // a template whose DLT id the brand removes after queueing is refused at the drain, without
    // a call, and credited back
    m.staff(
        "/crm_api/senders",
        json!({"channel": "sms", "provider": "msg91", "dlt_templates": {"dlt-2": "1107000000000002"}}),
    )
    .await;
    campaign(&m, "sms", "dlt-2", &["9811800003"]).await;
    m.staff("/crm_api/senders", json!({"channel": "sms", "provider": "msg91", "dlt_templates": {"dlt-2": ""}})).await;
    let (r_paid, m_paid) = (r.balance().await, m.balance().await);
    // 500 three times, then 201: retried at once with a short backoff, one delivery, one debit
    let now = Utc::now();
    let first = run(&app, "sms_drain", now).await;
    assert_eq!((&first["outcome"]["retrying"], &first["outcome"]["sent"]), (&json!(0), &json!(2)), "{first}");
    for minutes in [5, 15, 30] {
        let later = run(&app, "sms_drain", now + chrono::Duration::minutes(minutes)).await;
        assert_eq!(later["outcome"]["sent"].as_u64().unwrap_or(0), 0, "{later}");
    }
    let delivered = twilio.received.lock().unwrap().iter().filter(|(_, _, f)| f["To"] == "+919811800001").count();
    assert_eq!(delivered, 4, "three failed attempts and one delivery, none after");
    assert_eq!(r.balance().await, r_paid, "paid once, when queued");
    // the DLT gateway got the template's DLT id and the auth key; the template without one was
    // refused without a call and credited back
    let calls = gateway.received.lock().unwrap().clone();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let (_, key, body) = &calls[0];
    assert_eq!(key, "auth-key-secret");
    assert_eq!(
        (&body["template_id"], &body["recipients"][0]["mobiles"]),
        (&json!("1107000000000001"), &json!("919811800002")),
        "{body}"
    );
    assert!(
        m.balance().await.parse::<f64>().unwrap() > m_paid.parse::<f64>().unwrap(),
        "the refused send was not credited"
    );
}

#[tokio::test]
async fn a_throttled_send_waits_what_retry_after_asks_and_carries_one_idempotency_key() {
    // a generic provider that answers the first call 429 with Retry-After: 120, then 200
    let calls: Arc<Mutex<Vec<String>>> = Arc::default();
    async fn handle(State(calls): State<Arc<Mutex<Vec<String>>>>, headers: HeaderMap) -> Response {
        let key = headers.get("idempotency-key").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        let first = {
            let mut calls = calls.lock().unwrap();
            calls.push(key);
            calls.len() == 1
        };
        match first {
            true => (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "120")], "slow down").into_response(),
            false => Json(json!({"id": "gen-1"})).into_response(),
        }
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/send", listener.local_addr().unwrap());
    let router = Router::new().route("/send", axum::routing::post(handle)).with_state(calls.clone());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let app = spawn_app(&[]).await;
    let g = brand(&app, "brand-throttled").await;
    g.staff("/crm_api/senders", json!({"channel": "sms", "provider": "generic", "base_url": base, "sender": "ENGAGE"}))
        .await;
    g.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "t1"})).await;
    campaign(&g, "sms", "promo", &["9811830001"]).await;
    let paid = g.balance().await;
    let now = Utc::now();
    // asked to wait two minutes: no quick retries, and the drains leave it until then
    let first = run(&app, "sms_drain", now).await;
    assert_eq!((&first["outcome"]["retrying"], calls.lock().unwrap().len()), (&json!(1), 1), "{first}");
    let early = run(&app, "sms_drain", now + chrono::Duration::seconds(90)).await;
    assert_eq!((&early["outcome"]["waiting"], calls.lock().unwrap().len()), (&json!(1), 1), "{early}");
    let later = run(&app, "sms_drain", now + chrono::Duration::seconds(150)).await;
    assert_eq!(later["outcome"]["sent"], 1, "{later}");
    let keys = calls.lock().unwrap().clone();
    assert_eq!(keys.len(), 2);
    assert!(!keys[0].is_empty() && keys[0] == keys[1], "one idempotency key for both calls: {keys:?}");
    assert_eq!(g.balance().await, paid, "paid once");
}
