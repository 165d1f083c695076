//! The providers' webhooks as they call them (issue 66, `docs/senders.md`, "Webhooks" and
//! "Receipts"): Twilio's forms signed with `X-Twilio-Signature` (signed here by the `twilio`
//! package's `RequestValidator`), WhatsApp Cloud's JSON signed with `X-Hub-Signature-256` (signed
//! by Python's `hmac`) and its verify-token handshake. A customer's STOP changes only the brand
//! whose number received it; a receipt moves only the send it names in the brand that signed it;
//! forged or unsigned posts change nothing.

use chrono::Utc;
use serde_json::{json, Value};

use crate::campaigns::brand;
use crate::helpers::spawn_app;
use crate::journey_runs::{run, Brand};
use crate::senders::{campaign, twilio, whatsapp};

/// Twilio's signature for a POST of `params` to `url` with `token`, made by Twilio's own Python
/// library (`twilio.request_validator.RequestValidator`, installed by scripts/test.sh).
fn twilio_signature(token: &str, url: &str, params: &[(&str, &str)]) -> String {
    let params: serde_json::Map<String, Value> = params.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
    let script = "import json, sys\nfrom twilio.request_validator import RequestValidator\n\
                  token, url, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])\n\
                  print(RequestValidator(token).compute_signature(url, params))";
    let out = std::process::Command::new("python3")
        .args(["-c", script, token, url, &Value::Object(params).to_string()])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "the twilio package signs (scripts/test.sh installs it): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Posts `params` to `/webhooks/twilio` as Twilio does (a form), with `signature`.
async fn post_twilio(app: &crate::helpers::TestApp, params: &[(&str, &str)], signature: Option<&str>) -> (u16, String) {
    post_twilio_to(app, &format!("{}/webhooks/twilio", app.base), params, signature).await
}

/// Posts `params` to `url` as Twilio does (a form), with `signature`.
async fn post_twilio_to(
    app: &crate::helpers::TestApp,
    url: &str,
    params: &[(&str, &str)],
    signature: Option<&str>,
) -> (u16, String) {
    let body: String = params
        .iter()
        .map(|(k, v)| format!("{}={}", k, v.replace('+', "%2B").replace(':', "%3A").replace(' ', "+")))
        .collect::<Vec<_>>()
        .join("&");
    let mut request = app.client.post(url).header("content-type", "application/x-www-form-urlencoded").body(body);
    if let Some(signature) = signature {
        request = request.header("x-twilio-signature", signature);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn a_stop_signed_for_a_brands_twilio_number_unsubscribes_its_customer_there_only() {
    let app = spawn_app(&[]).await;
    let (a, b) = (brand(&app, "brand-wa-a").await, brand(&app, "brand-wa-b").await);
    for (brand, account, token, number) in
        [(&a, "AC_WA", "tok-wa", "+15005550011"), (&b, "AC_WB", "tok-wb", "+15005550012")]
    {
        brand
            .staff(
                "/crm_api/senders",
                json!({"channel": "sms", "provider": "twilio", "sender": number, "account": account, "credential": token}),
            )
            .await;
    }
    // another brand cannot take a number that is already a brand's sender
    let (status, taken) = crate::loyalty::post(
        &app,
        "/crm_api/senders",
        &[("token", &b.staff)],
        &json!({"parent_business_id": "brand-wa-b", "channel": "sms", "provider": "twilio",
                "sender": "+15005550011", "account": "AC_WA", "credential": "tok-wb"}),
    )
    .await;
    assert_eq!(status, 409, "{taken}");
    let url = format!("{}/webhooks/twilio", app.base);
    let customer = "+919811900001";
    let stop =
        [("AccountSid", "AC_WA"), ("To", "+15005550011"), ("From", customer), ("Body", "STOP"), ("MessageSid", "SM1")];
    // forged: a signature made with another token changes nothing
    let (status, _) = post_twilio(&app, &stop, Some(&twilio_signature("tok-wb", &url, &stop))).await;
    assert_eq!(status, 401);
    let (status, _) = post_twilio(&app, &stop, None).await;
    assert_eq!(status, 401);
    assert_eq!(subscribed(&a).await, true, "a forged STOP changed nothing");
    // signed by Twilio with A's token: A's customer is unsubscribed, B's is not
    let (status, twiml) = post_twilio(&app, &stop, Some(&twilio_signature("tok-wa", &url, &stop))).await;
    assert_eq!(status, 200, "{twiml}");
    assert!(twiml.starts_with("<?xml") && twiml.contains("<Message>You will get no more offers"), "{twiml}");
    assert_eq!(subscribed(&a).await, false);
    assert_eq!(subscribed(&b).await, true, "another brand's customer of the same number is untouched");
    // a STOP signed for A's account but naming B's number: B's token does not verify it
    let at_b = [("AccountSid", "AC_WB"), ("To", "+15005550012"), ("From", customer), ("Body", "STOP")];
    let (status, _) = post_twilio(&app, &at_b, Some(&twilio_signature("tok-wa", &url, &at_b))).await;
    assert_eq!(status, 401);
    assert_eq!(subscribed(&b).await, true);
    // a number no brand sends from
    let nobody = [("AccountSid", "AC_X"), ("To", "+15005550099"), ("From", customer), ("Body", "STOP")];
    let (status, _) = post_twilio(&app, &nobody, Some(&twilio_signature("tok-x", &url, &nobody))).await;
    assert_eq!(status, 404);
    // START, signed, resubscribes
    let start = [("AccountSid", "AC_WA"), ("To", "+15005550011"), ("From", customer), ("Body", "start")];
    let (status, _) = post_twilio(&app, &start, Some(&twilio_signature("tok-wa", &url, &start))).await;
    assert_eq!(status, 200);
    assert_eq!(subscribed(&a).await, true);
}

/// Whether customer 9811900001 of `brand` gets marketing SMS.
async fn subscribed(brand: &Brand<'_>) -> Value {
    brand.staff("/crm_api/consent/customer", json!({"mobile_number": "9811900001"})).await["sms"]["subscribed"].clone()
}

/// Meta's `X-Hub-Signature-256` for `body` with `secret`, made by Python's own `hmac` module.
fn meta_signature(secret: &str, body: &str) -> String {
    let script = "import hashlib, hmac, sys\n\
                  print('sha256=' + hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha256).hexdigest())";
    let out = std::process::Command::new("python3").args(["-c", script, secret, body]).output().expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn whatsapps_webhook_is_verified_with_the_brands_app_secret_and_handshake_token() {
    let app = spawn_app(&[]).await;
    let (c, d) = (brand(&app, "brand-meta-c").await, brand(&app, "brand-meta-d").await);
    for (brand, number, secret, token) in
        [(&c, "1065550101", "app-secret-c", "verify-c"), (&d, "1065550102", "app-secret-d", "verify-d")]
    {
        let set = brand
            .staff(
                "/crm_api/senders",
                json!({"channel": "chat", "provider": "whatsapp_cloud", "sender": number, "credential": "wa-access",
                       "app_secret": secret, "verify_token": token}),
            )
            .await;
        let text = set.to_string();
        assert!(!text.contains(secret) && !text.contains(token) && !text.contains("wa-access"), "{text}");
        assert_eq!(
            (&set["senders"][0]["app_secret_set"], &set["senders"][0]["verify_token_set"]),
            (&json!(true), &json!(true))
        );
    }
    // the subscription handshake: a brand's token gets its challenge back, another is 403
    let handshake = |token: &str| {
        let url = format!(
            "{}/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token={token}&hub.challenge=1158201444",
            app.base
        );
        let client = app.client.clone();
        async move {
            let response = client.get(url).send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    assert_eq!(handshake("verify-c").await, (200, "1158201444".to_owned()));
    assert_eq!(handshake("guess").await.0, 403);
    let stop = json!({"object": "whatsapp_business_account", "entry": [{"id": "WABA", "changes": [{"field": "messages",
        "value": {"messaging_product": "whatsapp", "metadata": {"display_phone_number": "15550101", "phone_number_id": "1065550101"},
                  "messages": [{"from": "919811950001", "id": "wamid.A", "timestamp": "1764400000", "type": "text", "text": {"body": "STOP"}}]}}]}]})
    .to_string();
    let post = |body: String, signature: Option<String>| {
        let mut request = app
            .client
            .post(format!("{}/webhooks/whatsapp", app.base))
            .header("content-type", "application/json")
            .body(body);
        if let Some(signature) = signature {
            request = request.header("x-hub-signature-256", signature);
        }
        async move {
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    let chat = |brand: &'static str| {
        let token = if brand == "brand-meta-c" { c.staff.clone() } else { d.staff.clone() };
        let app = &app;
        async move {
            let (_, read) = crate::loyalty::post(
                app,
                "/crm_api/consent/customer",
                &[("token", &token)],
                &json!({"parent_business_id": brand, "mobile_number": "9811950001"}),
            )
            .await;
            read["chat"]["subscribed"].clone()
        }
    };
    // unsigned, or signed with another brand's app secret: nothing changes
    assert_eq!(post(stop.clone(), None).await.0, 401);
    assert_eq!(post(stop.clone(), Some(meta_signature("app-secret-d", &stop))).await.0, 401);
    assert_eq!(chat("brand-meta-c").await, true);
    // signed with C's app secret: C's customer leaves chat marketing, D's does not
    let (status, answer) = post(stop.clone(), Some(meta_signature("app-secret-c", &stop))).await;
    assert_eq!((status, answer.as_str()), (200, "{\"handled\":1,\"receipts\":0}"));
    assert_eq!(chat("brand-meta-c").await, false);
    assert_eq!(chat("brand-meta-d").await, true);
    // a body changed after signing is refused
    let changed = stop.replace("STOP", "START");
    assert_eq!(post(changed, Some(meta_signature("app-secret-c", &stop))).await.0, 401);
    assert_eq!(chat("brand-meta-c").await, false);
}

/// Today's receipts of `brand` in `/stats/metrics/campaigns`.
async fn receipts(brand: &Brand<'_>) -> Value {
    let ist = chrono::FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
    let today = Utc::now().with_timezone(&ist).format("%Y-%m-%d").to_string();
    let campaigns = brand.staff("/stats/metrics/campaigns", json!({"start": today, "end": today})).await;
    campaigns["data"]["receipts"].clone()
}

#[tokio::test]
async fn receipts_signed_by_the_brands_provider_move_its_sends_and_count_in_stats() {
    let twilio = twilio(&[("AC_RA", "tok-ra")], &[], 0).await;
    let cloud = whatsapp("wa-token-r").await;
    let app = spawn_app(&[]).await;
    let (a, w) = (brand(&app, "brand-rcpt-a").await, brand(&app, "brand-rcpt-w").await);
    a.staff(
        "/crm_api/senders",
        json!({"channel": "sms", "provider": "twilio", "base_url": twilio.base, "sender": "+15005550021",
               "account": "AC_RA", "credential": "tok-ra"}),
    )
    .await;
    w.staff(
        "/crm_api/senders",
        json!({"channel": "chat", "provider": "whatsapp_cloud", "base_url": cloud.base, "sender": "1065550201",
               "credential": "wa-token-r", "app_secret": "app-secret-w"}),
    )
    .await;
    for brand in [&a, &w] {
        brand
            .staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "r1"}))
            .await;
    }
    campaign(&a, "sms", "promo", &["9811810001", "9811810002"]).await;
    campaign(&w, "chat", "promo", &["9811810003"]).await;
    run(&app, "sms_drain", Utc::now()).await;
    run(&app, "chat_drain", Utc::now()).await;
    // Twilio was asked to post each message's statuses back to engage, naming its send
    let sent = twilio.received.lock().unwrap().clone();
    assert_eq!(sent.len(), 2, "{sent:?}");
    let message = |to: &str| {
        let (_, _, fields) = sent.iter().find(|(_, _, f)| f["To"] == to).unwrap().clone();
        let callback = fields["StatusCallback"].as_str().unwrap_or_default().to_owned();
        assert!(callback.contains("/webhooks/twilio?queue=sms_queue_") && callback.contains("&send="), "{fields}");
        // Twilio posts to that URL; here it is reached at the test's address
        let path = &callback[callback.find("/webhooks/").unwrap()..];
        (format!("{}{path}", app.base), fields["_sid"].as_str().unwrap().to_owned())
    };
    let (url_1, sid_1) = message("+919811810001");
    let (url_2, sid_2) = message("+919811810002");
    let status = |sid: &'static str, status: &'static str| {
        vec![
            ("AccountSid", "AC_RA"),
            ("From", "+15005550021"),
            ("To", "+919811810001"),
            ("MessageSid", sid),
            ("MessageStatus", status),
        ]
    };
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let (sid_1, sid_2) = (leak(sid_1), leak(sid_2));
    // forged (another token) or unsigned: nothing moves
    let delivered = status(sid_1, "delivered");
    let (code, _) =
        post_twilio_to(&app, &url_1, &delivered, Some(&twilio_signature("tok-other", &url_1, &delivered))).await;
    assert_eq!(code, 401);
    assert_eq!(post_twilio_to(&app, &url_1, &delivered, None).await.0, 401);
    assert_eq!(receipts(&a).await["sms"]["delivered"], 0);
    // signed with the brand's token: delivered, once however often Twilio posts it
    for _ in 0..2 {
        let (code, twiml) =
            post_twilio_to(&app, &url_1, &delivered, Some(&twilio_signature("tok-ra", &url_1, &delivered))).await;
        assert_eq!(code, 200, "{twiml}");
    }
    // a status naming one send with another message's sid changes nothing
    let crossed = status(sid_2, "undelivered");
    post_twilio_to(&app, &url_1, &crossed, Some(&twilio_signature("tok-ra", &url_1, &crossed))).await;
    assert_eq!(receipts(&a).await["sms"], json!({"delivered": 1, "read": 0, "failed": 0}));
    // undelivered: failed, and its debit credited back once
    let before = a.balance().await.parse::<f64>().unwrap();
    let mut failed = status(sid_2, "undelivered");
    failed.push(("ErrorCode", "30003"));
    for _ in 0..2 {
        let (code, _) = post_twilio_to(&app, &url_2, &failed, Some(&twilio_signature("tok-ra", &url_2, &failed))).await;
        assert_eq!(code, 200);
    }
    let after = a.balance().await.parse::<f64>().unwrap();
    assert!(after > before, "the undelivered send was credited back: {before} -> {after}");
    let credits = a.staff("/crm_api/wallet/transactions", json!({"business_id": "outlet-1"})).await;
    let refunds = credits["data"].as_array().unwrap().iter().filter(|t| t["purpose"] == "refund").count();
    assert_eq!(refunds, 1, "credited once: {credits}");
    let counted = receipts(&a).await;
    assert_eq!((&counted["delivered"], &counted["failed"]), (&json!(1), &json!(1)), "{counted}");
    // a delivered after the failure changes nothing
    let late = status(sid_2, "delivered");
    post_twilio_to(&app, &url_2, &late, Some(&twilio_signature("tok-ra", &url_2, &late))).await;
    assert_eq!(receipts(&a).await["sms"]["delivered"], 1);

    // WhatsApp: the status names the send through biz_opaque_callback_data
    let posted = cloud.received.lock().unwrap().clone();
    assert_eq!(posted.len(), 1);
    let data = posted[0].2["biz_opaque_callback_data"].as_str().unwrap().to_owned();
    assert!(data.starts_with("chat_queue_"), "{data}");
    let read = json!({"object": "whatsapp_business_account", "entry": [{"id": "WABA", "changes": [{"field": "messages",
        "value": {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "1065550201"},
                  "statuses": [{"id": "wamid.1", "status": "read", "timestamp": "1764400000",
                                "recipient_id": "919811810003", "biz_opaque_callback_data": data}]}}]}]})
    .to_string();
    let post = |body: String, signature: String| {
        let request = app
            .client
            .post(format!("{}/webhooks/whatsapp", app.base))
            .header("content-type", "application/json")
            .header("x-hub-signature-256", signature)
            .body(body);
        async move {
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    assert_eq!(post(read.clone(), meta_signature("app-secret-a", &read)).await.0, 401);
    let (code, answer) = post(read.clone(), meta_signature("app-secret-w", &read)).await;
    assert_eq!((code, answer.as_str()), (200, "{\"handled\":0,\"receipts\":1}"));
    // read without a delivered receipt before: counted delivered and read
    assert_eq!(receipts(&w).await["chat"], json!({"delivered": 1, "read": 1, "failed": 0}));
    // brand A's figures are A's only
    assert_eq!(receipts(&a).await["chat"], json!({"delivered": 0, "read": 0, "failed": 0}));
}
