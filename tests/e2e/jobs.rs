//! Scheduled jobs: drains against a local HTTP provider that fails some sends, the failed-chat
//! refund, the POS redemption revoke job with a controllable clock, and the scheduler running a
//! drain by itself.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::{Json, Router};
use chrono::Utc;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::platform::{create_token, order, wait_customer};

/// A provider on a loopback port: records every request; answers 500 for recipients in `failing`.
#[derive(Clone)]
pub(crate) struct Provider {
    pub(crate) url: String,
    pub(crate) received: Arc<Mutex<Vec<Value>>>,
}

impl Provider {
    /// How many requests it received, and for how many distinct recipients (`to`).
    pub(crate) fn deliveries(&self) -> (usize, usize) {
        let received = self.received.lock().unwrap();
        let recipients: std::collections::BTreeSet<&str> =
            received.iter().map(|r| r["to"].as_str().unwrap_or_default()).collect();
        (received.len(), recipients.len())
    }
}

pub(crate) async fn provider(failing: &[&str]) -> Provider {
    slow_provider(failing, Duration::ZERO).await
}

/// Like [`provider`], answering each request only after `delay` (it records the request first).
pub(crate) async fn slow_provider(failing: &[&str], delay: Duration) -> Provider {
    let received = Arc::new(Mutex::new(Vec::new()));
    let failing: Arc<Vec<String>> = Arc::new(failing.iter().map(|s| s.to_string()).collect());
    type S = (Arc<Mutex<Vec<Value>>>, Arc<Vec<String>>, Duration);
    async fn handle(State((received, failing, delay)): State<S>, Json(body): Json<Value>) -> axum::response::Response {
        // a marketing message ends with its opt-out link (tests/e2e/consent.rs reads it in
        // `opt_out`); the tests of what a message says compare the text before it
        let mut recorded = body.clone();
        if let Some((text, link)) = body["message"].as_str().and_then(|m| m.split_once("\nOpt out: ")) {
            recorded["message"] = json!(text);
            recorded["opt_out"] = json!(link);
        }
        received.lock().unwrap().push(recorded);
        tokio::time::sleep(delay).await;
        if failing.iter().any(|f| body["to"] == f.as_str()) {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
        Json(json!({"id": format!("prov-{}", body["send_id"].as_str().unwrap_or_default())})).into_response()
    }
    let app = Router::new().route("/send", axum::routing::post(handle)).with_state((received.clone(), failing, delay));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/send", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Provider { url, received }
}

pub(crate) async fn admin(app: &TestApp, path: &str, body: Value) -> Value {
    let key = std::fs::read_to_string(app.dir.path().join("admin.key")).unwrap();
    let response = app
        .client
        .post(format!("{}{path}", app.base))
        .header("x-admin-key", key.trim())
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

async fn staff_post(app: &TestApp, token: &str, path: &str, body: Value) -> Value {
    let response =
        app.client.post(format!("{}{path}", app.base)).header("token", token).json(&body).send().await.unwrap();
    let (status, body) = crate::helpers::read(response).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

/// Queues fraud alerts to three recipients on `channel`, paid by outlet-1's wallet.
async fn queue_alerts(app: &TestApp, staff: &str, brand: &str, channel: &str) {
    staff_post(app, staff, "/crm_api/configure_fraud_alert_settings", json!({"parent_business_id": brand,
        "alert_recipients": ["9876500001", "9876500002", "9876500003"], "channel_type": channel, "template": "Check {contact}"})).await;
    staff_post(
        app,
        staff,
        "/crm_api/wallet/recharge",
        json!({"parent_business_id": brand, "business_id": "outlet-1", "amount": 10}),
    )
    .await;
    let sent = staff_post(
        app,
        staff,
        "/crm_api/send_fraud_alert",
        json!({"parent_business_id": brand, "business_id": "outlet-1", "contact": "9000000000"}),
    )
    .await;
    assert_eq!(sent["queued"], 3);
}

/// Two runs of a drain at once (an operator's and the schedule's): the second waits for the
/// first and finds its rows sent, so each message goes out once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_drains_at_once_send_each_message_once() {
    let sms = slow_provider(&[], Duration::from_millis(300)).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let staff = create_token(&app, "staff", "brand-x").await;
    queue_alerts(&app, &staff, "brand-x", "sms").await;
    let drain = || admin(&app, "/admin/jobs/run", json!({"name": "sms_drain"}));
    let (first, second) = tokio::join!(drain(), drain());
    let sent = first["outcome"]["sent"].as_u64().unwrap() + second["outcome"]["sent"].as_u64().unwrap();
    let received = sms.received.lock().unwrap().clone();
    assert_eq!((received.len(), sent), (3, 3), "{first} {second}");
}

#[tokio::test]
async fn drains_deliver_back_off_and_fail_for_good_at_the_end_of_the_retry_window_credited_once() {
    let sms = provider(&["9876500002"]).await;
    let chat = provider(&["9876500003"]).await;
    let app = spawn_app(&[
        ("ENGAGE_SMS_PROVIDER_URL", &sms.url),
        ("ENGAGE_CHAT_PROVIDER_URL", &chat.url),
        ("ENGAGE_PROVIDER_TOKEN", "provider-secret"),
    ])
    .await;
    let staff = create_token(&app, "staff", "brand-d").await;
    queue_alerts(&app, &staff, "brand-d", "sms").await;
    async fn sms_balance(app: &TestApp, staff: &str) -> String {
        let body = json!({"parent_business_id": "brand-d", "business_id": "outlet-1"});
        staff_post(app, staff, "/crm_api/wallet/balance", body).await["balance"].as_str().unwrap().to_owned()
    }
    let paid = sms_balance(&app, &staff).await;
    let now = Utc::now();
    let drain = |job: &'static str, at: chrono::DateTime<Utc>| {
        let app = &app;
        async move { admin(app, "/admin/jobs/run", json!({"name": job, "now": at.to_rfc3339()})).await["outcome"].clone() }
    };
    let first = drain("sms_drain", now).await;
    assert_eq!(
        first,
        json!({"sent": 2, "failed": 0, "retrying": 1, "waiting": 0, "unpaid": 0, "quiet": 0, "scheduled": 0,
               "unsubscribed": 0})
    );
    // the failing send was tried four times (three quick retries), then waits out its backoff
    // (15-30 s after that run): no call
    assert_eq!(sms.received.lock().unwrap().len(), 2 + 4);
    assert_eq!((drain("sms_drain", now).await["waiting"].clone(), sms.received.lock().unwrap().len()), (json!(1), 6));
    // a provider down for hours loses nothing: tried again later, and again
    assert_eq!(drain("sms_drain", now + chrono::Duration::minutes(10)).await["retrying"], 1);
    assert_eq!(sms_balance(&app, &staff).await, paid, "nothing credited while it may still pass");
    // still failing at the end of the retry window (24 h from its queueing): failed for good,
    // credited back once, by a drain two IST days after the send's delivery day, when the window
    // of a send queued at that day's last minute has just ended (a drain that read yesterday's
    // queue only never read it again, whatever the hour this test runs at)
    let ist = chrono::FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
    let delivery_day = now.with_timezone(&ist).date_naive();
    let second_day_after = (delivery_day + chrono::Duration::days(2))
        .and_hms_opt(0, 1, 0)
        .unwrap()
        .and_local_timezone(ist)
        .unwrap()
        .with_timezone(&Utc);
    assert!(second_day_after >= now + chrono::Duration::hours(24));
    assert_eq!(drain("sms_drain", second_day_after).await["failed"], 1);
    assert!(sms_balance(&app, &staff).await.parse::<f64>().unwrap() > paid.parse::<f64>().unwrap());
    // nothing left: delivered rows are not sent twice
    assert_eq!(
        drain("sms_drain", second_day_after + chrono::Duration::hours(1)).await,
        json!({"sent": 0, "failed": 0, "retrying": 0, "waiting": 0, "unpaid": 0, "quiet": 0, "scheduled": 0,
               "unsubscribed": 0})
    );
    let received = sms.received.lock().unwrap().clone();
    assert_eq!(received.len(), 2 + 3 * 4, "two delivered once, the failing one tried in three runs, four calls each");
    assert_eq!(received[0]["message"], "Check 9000000000");

    // chat: one fails for good, the refund job pays its cost back once
    let staff_c = create_token(&app, "staff", "brand-c").await;
    queue_alerts(&app, &staff_c, "brand-c", "chat").await;
    async fn balance(app: &TestApp, staff: &str) -> String {
        staff_post(
            app,
            staff,
            "/crm_api/wallet/balance",
            json!({"parent_business_id": "brand-c", "business_id": "outlet-1"}),
        )
        .await["balance"]
            .as_str()
            .unwrap()
            .to_owned()
    }
    assert_eq!(balance(&app, &staff_c).await, "9.115", "10 - 3 x (0.25 + 18%)");
    let now = Utc::now();
    for at in [now, now + chrono::Duration::minutes(10), now + chrono::Duration::hours(25)] {
        drain("chat_drain", at).await;
    }
    // the chat send that failed for good was credited by the drain; the refund job finds it done
    assert_eq!(balance(&app, &staff_c).await, "9.41");
    let refund = admin(&app, "/admin/jobs/run", json!({"name": "chat_refund"})).await;
    assert_eq!(refund["outcome"], json!({"refunded": 0, "amount": "0"}));
    assert_eq!(
        admin(&app, "/admin/jobs/run", json!({"name": "chat_refund"})).await["outcome"]["refunded"],
        0,
        "refunded once"
    );
    let jobs = app
        .client
        .get(format!("{}/admin/jobs", app.base))
        .header("x-admin-key", std::fs::read_to_string(app.dir.path().join("admin.key")).unwrap().trim())
        .send()
        .await
        .unwrap();
    let jobs: Value = jobs.json().await.unwrap();
    assert_eq!(
        jobs["jobs"].as_array().unwrap().len(),
        21,
        "drains, revoke, refund, expiry, journeys, carts, five ROI jobs, flag sync, health reports, bill \
         generation and report, NPS conversion, feedback config sync, review sync, legacy feedback drain"
    );
}

#[tokio::test]
async fn the_scheduler_runs_a_drain_by_itself() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url), ("ENGAGE_JOB_SMS_DRAIN", "* * * * * *")]).await;
    let staff = create_token(&app, "staff", "brand-s").await;
    queue_alerts(&app, &staff, "brand-s", "sms").await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while sms.received.lock().unwrap().len() < 3 {
        assert!(Instant::now() < deadline, "the scheduled drain never delivered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // the run is counted once it has finished (after the deliveries it made)
    loop {
        let metrics = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
        if metrics.contains("engage_job_runs_total{job=\"sms_drain\",outcome=\"ok\"}") {
            break;
        }
        assert!(Instant::now() < deadline, "the scheduled run was never counted:\n{metrics}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn pos_redemptions_are_revoked_when_their_order_never_arrives() {
    let app = spawn_app(&[("ENGAGE_POS_REDEMPTION_TTL_MINUTES", "30")]).await;
    let staff = create_token(&app, "staff", "brand-p").await;
    let integration = create_token(&app, "integration", "brand-p").await;
    staff_post(
        &app,
        &staff,
        "/crm_api/add_edit_rules",
        json!({"parent_business_id": "brand-p", "earn_percent": 10, "min_bill": 0, "min_redeem_points": 1}),
    )
    .await;
    let phone = "9876550000";
    let post = |path: &'static str, body: Value| {
        let request =
            app.client.post(format!("{}{path}", app.base)).header("authorization", integration.as_str()).json(&body);
        async move { crate::helpers::read(request.send().await.unwrap()).await }
    };
    assert_eq!(
        app.client
            .post(format!("{}/injestion/platform", app.base))
            .json(&order("brand-p", "seed", phone, 1000.0))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    wait_customer(&app, "brand-p", phone, |c| c["loyalty_points"] == 100).await;
    // two POS redemptions: the order of pos-1 never comes, the order of pos-2 does
    for id in ["pos-1", "pos-2"] {
        let (status, body) =
            post("/api/redeemLoyalty", json!({"customer_number": phone, "points": 30, "order_id": id})).await;
        assert_eq!(status, 200, "{body}");
        assert!(body["expires_at"].is_string());
    }
    assert_eq!(
        app.client
            .post(format!("{}/injestion/platform", app.base))
            .json(&order("brand-p", "pos-2", phone, 10.0))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let after_orders = wait_customer(&app, "brand-p", phone, |c| c["total_orders"] == 2).await;
    assert_eq!(after_orders["loyalty_points"], 100 - 60 + 1);
    let at = |minutes: i64| (chrono::Utc::now() + chrono::Duration::minutes(minutes)).to_rfc3339();
    // 10 minutes later nothing is due
    let early = admin(&app, "/admin/jobs/run", json!({"name": "pos_revoke", "now": at(10)})).await;
    assert_eq!(early["outcome"]["reverted"], 0);
    // 31 minutes later pos-1 is reverted; pos-2 stays (its order arrived)
    let late = admin(&app, "/admin/jobs/run", json!({"name": "pos_revoke", "now": at(31)})).await;
    assert_eq!(late["outcome"]["reverted"], 1, "{late}");
    let customer = wait_customer(&app, "brand-p", phone, |_| true).await;
    assert_eq!(customer["loyalty_points"], 100 - 30 + 1);
    let (_, ledger) =
        post("/integration/v1/get_wallet_ledger", json!({"customer_number": phone, "page_size": 100})).await;
    let entries = ledger["data"].as_array().unwrap();
    let redeem_1 = entries.iter().find(|e| e["kind"] == "redeem" && e["order_id"] == "pos-1").unwrap();
    assert_eq!(redeem_1["status"], 2, "the reverted redemption's history row has status 2");
    assert!(entries.iter().any(|e| e["kind"] == "revoke" && e["points"] == 30));
    let sum: i64 = entries.iter().map(|e| e["points"].as_i64().unwrap()).sum();
    assert_eq!(sum, 71, "the ledger sums to the balance");
    // a manual revoke of pos-2 through /api/revokeLoyalty
    let (status, body) = post("/api/revokeLoyalty", json!({"customer_number": phone, "order_id": "pos-2"})).await;
    assert_eq!((status, body["reverted"].clone(), body["wallet_balance"].clone()), (200, json!(true), json!(101)));
}

#[tokio::test]
async fn otp_confirmed_pos_redemptions() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let staff = create_token(&app, "staff", "brand-o").await;
    let integration = create_token(&app, "integration", "brand-o").await;
    staff_post(&app, &staff, "/crm_api/add_edit_rules",
               json!({"parent_business_id": "brand-o", "earn_percent": 10, "min_bill": 0, "min_redeem_points": 1, "otp_required": true})).await;
    staff_post(
        &app,
        &staff,
        "/crm_api/wallet/recharge",
        json!({"parent_business_id": "brand-o", "business_id": "outlet-1", "amount": 1}),
    )
    .await;
    let phone = "9876570000";
    assert_eq!(
        app.client
            .post(format!("{}/injestion/platform", app.base))
            .json(&order("brand-o", "o-seed", phone, 1000.0))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    wait_customer(&app, "brand-o", phone, |c| c["loyalty_points"] == 100).await;
    let call = |path: &'static str, body: Value| {
        let request =
            app.client.post(format!("{}{path}", app.base)).header("authorization", integration.as_str()).json(&body);
        async move { crate::helpers::read(request.send().await.unwrap()).await }
    };
    let redeem = |order_id: &str, otp: Option<&str>| {
        let mut body = json!({"customer_number": phone, "points": 5, "order_id": order_id});
        if let Some(otp) = otp {
            body["otp"] = json!(otp);
        }
        body
    };
    let (status, body) = call("/api/redeemLoyalty", redeem("o1", None)).await;
    assert_eq!((status, body["error_code"].clone()), (403, json!("xE_112")), "{body}");
    // generate: the code travels only by SMS
    let (status, body) = call("/api/generateOTP", json!({"customer_number": phone, "business_id": "outlet-1"})).await;
    assert_eq!(status, 200, "{body}");
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["expires_at", "message", "status"], "the code is never in the answer");
    admin(&app, "/admin/jobs/run", json!({"name": "sms_drain"})).await;
    let message = sms.received.lock().unwrap().last().cloned().expect("the OTP SMS was delivered");
    assert_eq!(message["to"], phone);
    let code: String = message["message"].as_str().unwrap().chars().filter(char::is_ascii_digit).take(6).collect();
    let wrong = if code == "000000" { "111111" } else { "000000" };
    assert_eq!(call("/api/redeemLoyalty", redeem("o1", Some(wrong))).await.0, 403);
    let (status, body) = call("/api/redeemLoyalty", redeem("o1", Some(&code))).await;
    assert_eq!((status, body["wallet_balance"].clone()), (200, json!(95)), "{body}");
    assert_eq!(call("/api/redeemLoyalty", redeem("o2", Some(&code))).await.0, 403, "a code is used once");
    // POS flow: authenticate first, then one redemption without the code
    call("/api/generateOTP", json!({"customer_number": phone, "business_id": "outlet-1"})).await;
    admin(&app, "/admin/jobs/run", json!({"name": "sms_drain"})).await;
    let message = sms.received.lock().unwrap().last().cloned().unwrap();
    let code: String = message["message"].as_str().unwrap().chars().filter(char::is_ascii_digit).take(6).collect();
    let pos = |body: Value| {
        let request = app.client.post(format!("{}/pos_e/v1/{}", app.base, body["route"].as_str().unwrap())).json(&body);
        async move { crate::helpers::read(request.send().await.unwrap()).await }
    };
    let (status, body) = pos(json!({"route": "authenticate_points_redemption", "parent_business_id": "brand-o", "customer_number": phone, "otp": code})).await;
    assert_eq!((status, body["verified"].clone()), (200, json!(true)), "{body}");
    let (status, _) = pos(json!({"route": "redeem_loyalty_points", "parent_business_id": "brand-o", "customer_number": phone, "points": 5, "order_id": "o3"})).await;
    assert_eq!(status, 200);
    let (status, body) = pos(json!({"route": "redeem_loyalty_points", "parent_business_id": "brand-o", "customer_number": phone, "points": 5, "order_id": "o4"})).await;
    assert_eq!((status, body["error_code"].clone()), (403, json!("xE_112")), "the window admits one redemption");
    // two OTP SMS debited the wallet: 1 - 2 x 0.1711
    let balance = staff_post(
        &app,
        &staff,
        "/crm_api/wallet/balance",
        json!({"parent_business_id": "brand-o", "business_id": "outlet-1"}),
    )
    .await;
    assert_eq!(balance["balance"], "0.6578");
}
