//! Digital bills end to end on the embedded engine: the configuration and widget routes with bad
//! input, a pos_a order billed by the order reaction and delivered to a local SMS provider, the
//! open / click / download funnel, the bill page in headless Chromium, each skip reason, exact
//! prices, the delay, the catch-up job and the XLSX report read back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use chrono::{Duration, Utc};
use serde_json::{json, Value};

use crate::campaigns::{mail_service, xlsx_sheet};
use crate::helpers::{required_env, spawn_app, TestApp};
use crate::jobs::provider;
use crate::journey_runs::{ist, run, Brand};
use crate::loyalty::post;
use crate::platform::{create_token, wait_customer};

pub(crate) async fn brand<'a>(app: &'a TestApp, name: &'static str) -> (Brand<'a>, String) {
    let brand = Brand {
        app,
        name,
        staff: create_token(app, "staff", name).await,
        integration: create_token(app, "integration", name).await,
    };
    let ingestion = create_token(app, "ingestion", name).await;
    (brand, ingestion)
}

/// A pos_a order of `outlet`; `extra` fields are merged in.
pub(crate) async fn pos_order(b: &Brand<'_>, outlet: &str, id: &str, phone: &str, extra: Value) {
    let mut body = json!({"parentBusinessId": b.name, "businessId": outlet, "orderId": id,
        "customer": {"name": "Asha", "phone": phone},
        "items": [{"name": "Masala dosa", "qty": 2, "price": 120}, {"name": "Filter coffee", "qty": 1, "price": 60}],
        "subtotal": 300, "discount": 30, "tax": 13.5, "amount": 283.5, "orderTime": ist(Utc::now())});
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    let (status, answer) = b.app.post_json("/injestion/pos_a", &body).await;
    assert_eq!(status, 200, "{answer}");
}

async fn staff_status(b: &Brand<'_>, path: &str, mut body: Value) -> (u16, Value) {
    body["parent_business_id"] = json!(b.name);
    post(b.app, path, &[("token", &b.staff)], &body).await
}

async fn ingest(app: &TestApp, token: &str, path: &str, body: Value) -> (u16, Value) {
    post(app, path, &[("token", token)], &body).await
}

async fn bills(b: &Brand<'_>, body: Value) -> Value {
    b.staff("/crm_api/get_digital_bill_customers", body).await
}

/// Waits until outlet `outlet` has `n` bills; they, newest first.
pub(crate) async fn wait_bills(b: &Brand<'_>, outlet: &str, n: u64) -> Vec<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let page = bills(b, json!({"business_id": outlet})).await;
        if page["total"] == n {
            return page["data"].as_array().unwrap().clone();
        }
        assert!(std::time::Instant::now() < deadline, "{outlet} never had {n} bills: {page}");
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

async fn balance(b: &Brand<'_>, outlet: &str) -> String {
    let wallet = b.staff("/crm_api/wallet/balance", json!({"business_id": outlet})).await;
    wallet["balance"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn configuration_and_widget_routes_answer_and_refuse_as_documented() {
    let app = spawn_app(&[]).await;
    let (b, _) = brand(&app, "brand-bill-cfg").await;
    let list = b.staff("/crm_api/links/getWidgetList", json!({})).await;
    let kinds: Vec<&str> = list["data"].as_array().unwrap().iter().map(|w| w["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["itemized_receipt", "loyalty_info", "upsell", "static_banner", "feedback_link", "profile_completion"]
    );

    // the brand's own record (parentId "0") applies to an outlet without one
    let saved = b
        .staff(
            "/crm_api/links/addBusinessConfig",
            json!({"mode": 1, "type": 1, "linkValidity": 30, "brandColor": "#aa3300", "enableFooter": 1,
                   "footerButton": "Save", "time": 15, "status": 1, "sms_template": "Bill x_short_url",
                   "sender_id": "ENGAGE", "platform": ["pos", "app"]}),
        )
        .await;
    assert_eq!(saved["status"], 1, "{saved}");
    assert_eq!(
        (&saved["data"]["businessId"], &saved["data"]["parentId"], &saved["data"]["bill_platform"]),
        (&json!("brand-bill-cfg"), &json!("0"), &json!(["pos", "app"]))
    );
    let view = b.staff("/crm_api/links/getBusinessConfig", json!({"business_id": "outlet-9"})).await;
    assert_eq!((&view["data"]["config"], &view["data"]["inherited"]["parentId"]), (&Value::Null, &json!("0")));

    // widgets: added, refused twice for one kind, edited, listed in sequence
    let receipt = b.staff("/crm_api/links/addWidget", json!({"widget_id": 1, "sequence": 2})).await;
    let upsell = b
        .staff(
            "/crm_api/links/addWidget",
            json!({"widget_id": 3, "sequence": 1, "title": "Try our thali",
                                                  "value": "https://shop.test/thali"}),
        )
        .await;
    let (status, again) = staff_status(&b, "/crm_api/links/addWidget", json!({"widget_id": 1})).await;
    // the same kind again conflicts with the one the business has (409, saying to edit it)
    assert_eq!(status, 409, "{again}");
    assert!(again["message"].as_str().unwrap_or_default().contains("editWidget"), "{again}");
    let id = receipt["data"]["id"].as_u64().unwrap();
    let edited = b.staff("/crm_api/links/editWidget", json!({"id": id, "sequence": 0, "title": "Receipt"})).await;
    assert_eq!((&edited["data"]["sequence"], &edited["data"]["title"]), (&json!(0), &json!("Receipt")));
    let view = b.staff("/crm_api/links/getBusinessConfig", json!({})).await;
    let order: Vec<u64> =
        view["data"]["widgets"].as_array().unwrap().iter().map(|w| w["widgetId"].as_u64().unwrap()).collect();
    assert_eq!(order, [1, 3], "{view}");
    assert_eq!(upsell["data"]["widgetId"], 3);

    // on/off, also in business_configs
    let off = b.staff("/crm_api/update/bill/status", json!({"status": 0})).await;
    assert_eq!((&off["data"]["status"], &off["digital_bill"]), (&json!(0), &json!(0)));

    for (path, body, status, pointer) in [
        ("/crm_api/links/addBusinessConfig", json!({"mode": 3}), 400, "/mode"),
        ("/crm_api/links/addBusinessConfig", json!({"mode": 1, "time": 5}), 400, "/time"),
        ("/crm_api/links/addBusinessConfig", json!({"mode": 1, "platform": ["fax"]}), 400, "/platform/0"),
        ("/crm_api/links/addBusinessConfig", json!({"time": 0}), 400, ""),
        ("/crm_api/update/bill/status", json!({}), 400, "/status"),
        ("/crm_api/links/addWidget", json!({}), 400, "/widget_id"),
        ("/crm_api/links/addWidget", json!({"widget_id": 7}), 400, "/widget_id"),
        ("/crm_api/links/editWidget", json!({}), 400, "/id"),
        // a period is read liberally (one end, either order): only a day that is no date is refused
        ("/crm_api/get_digital_bill_mis", json!({"start": "2026-11-01"}), 200, ""),
        ("/crm_api/get_digital_bill_customers", json!({"start": "2026-11-02", "end": "2026-11-01"}), 200, ""),
        ("/crm_api/get_digital_bill_mis", json!({"start": "2026-11-31"}), 400, "/start"),
    ] {
        let (got, answer) = staff_status(&b, path, body.clone()).await;
        assert_eq!(got, status, "{path} {body}: {answer}");
        if !pointer.is_empty() {
            assert_eq!(answer["errors"][0]["pointer"], pointer, "{path} {body}: {answer}");
        }
    }
    for (path, body) in [
        ("/crm_api/links/editWidget", json!({"id": 999})),
        ("/crm_api/update/bill/status", json!({"business_id": "outlet-unknown", "status": 1})),
    ] {
        let (got, answer) = staff_status(&b, path, body).await;
        assert_eq!(got, 404, "{path}: {answer}");
    }
    // another brand's staff token is refused
    let other = create_token(&app, "staff", "someone-else").await;
    let (status, _) = post(
        &app,
        "/crm_api/links/getWidgetList",
        &[("token", &other)],
        &json!({"parent_business_id": "brand-bill-cfg"}),
    )
    .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_pos_a_order_is_billed_delivered_opened_and_shown_as_a_page() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let (b, ingestion) = brand(&app, "brand-bill").await;
    b.staff("/crm_api/add_edit_rules", json!({"earn_percent": 10, "min_bill": 0, "point_value": 1})).await;
    b.staff(
        "/crm_api/links/addBusinessConfig",
        json!({"business_id": "outlet-1", "mode": 1, "time": 0, "status": 1, "brandColor": "#0a7d4f",
               "sms_template": "Hi x_cust_name, your bill for x_order_id (Rs x_amount): x_short_url",
               "sender_id": "ENGAGE", "enableFooter": 1, "footerButton": "Save bill"}),
    )
    .await;
    for (widget, sequence, title, value) in [
        (1, 1, "Your order", ""),
        (2, 2, "Loyalty", ""),
        (3, 3, "Try our thali", "https://shop.test/thali"),
        (5, 4, "Tell us how we did", ""),
    ] {
        b.staff(
            "/crm_api/links/addWidget",
            json!({"business_id": "outlet-1", "widget_id": widget, "sequence": sequence, "title": title,
                       "value": value}),
        )
        .await;
    }
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 1, "reference": "r1"})).await;

    pos_order(&b, "outlet-1", "B-1", "9811400001", json!({})).await;
    let billed = wait_bills(&b, "outlet-1", 1).await;
    let bill = &billed[0];
    let bill_id = bill["bill_id"].as_str().unwrap().to_owned();
    assert_eq!(
        (&bill["number"], &bill["order_id"], &bill["mode"], &bill["clicked"], &bill["order_source"]),
        (&json!("9811400001"), &json!("B-1"), &json!(1), &json!(0), &json!("pos"))
    );
    assert_eq!(
        (&bill["order"]["subtotal"], &bill["order"]["discount"], &bill["order"]["tax"], &bill["order"]["amount"]),
        (&json!("300"), &json!("30"), &json!("13.5"), &json!("283.5")),
        "{bill}"
    );
    assert_eq!(bill["order"]["loyalty_points"], 28, "10% of 283.5, whole points: {bill}");
    let short_url = bill["short_url"].as_str().unwrap().to_owned();
    assert!(short_url.ends_with(&format!("/b/{bill_id}")), "{short_url}");
    assert!(bill["feedback_url"].as_str().unwrap().contains("/f/"), "{bill}");
    // SMS price 0.145 + 18% GST = 0.1711, exactly
    assert_eq!(balance(&b, "outlet-1").await, "0.8289");
    let txns = b.staff("/crm_api/wallet/transactions", json!({"business_id": "outlet-1"})).await;
    let debit = txns["data"].as_array().unwrap().iter().find(|t| t["transaction_type"] == "debit").unwrap().clone();
    assert_eq!(
        (&debit["amount"], &debit["cost"], &debit["gst"], &debit["purpose"]),
        (&json!("0.1711"), &json!("0.145"), &json!("0.0261"), &json!("digital_bill")),
        "{debit}"
    );

    // the order again (a replay) and the catch-up job make no second bill; the record is status 3
    pos_order(&b, "outlet-1", "B-1", "9811400001", json!({})).await;
    let generated = run(&app, "bill_generation", Utc::now()).await["outcome"].clone();
    assert_eq!(generated["generated"], 0, "{generated}");
    assert_eq!(generated["skipped"]["exists"], 1, "only the replay's record is looked at: {generated}");
    assert_eq!(wait_bills(&b, "outlet-1", 1).await.len(), 1);
    assert_eq!(balance(&b, "outlet-1").await, "0.8289");

    // delivered: the SMS provider gets the template with the short link and the sender
    let drained = run(&app, "sms_drain", Utc::now()).await["outcome"].clone();
    assert_eq!(drained["sent"], 1, "{drained}");
    let got = sms.received.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["message"], format!("Hi Asha, your bill for B-1 (Rs 283.5): {short_url}"));
    assert_eq!((&got[0]["to"], &got[0]["sender_id"]), (&json!("9811400001"), &json!("ENGAGE")));

    // opens counted exactly: two opens give clicked 2, total_clicks 2, unique_clicks 1
    for expected in [1, 2] {
        let (status, opened) = ingest(&app, &ingestion, "/crm_api/invoice/open", json!({"bill_id": bill_id})).await;
        assert_eq!((status, &opened["counted"], &opened["clicked"]), (200, &json!(true), &json!(expected)));
    }
    let today = ist(Utc::now())[..10].to_owned();
    let mis = b.staff("/crm_api/get_digital_bill_mis", json!({"start": today, "end": today})).await;
    let totals = &mis["data"]["totals"];
    assert_eq!(
        (&totals["total_bill_sent"], &totals["total_sms_sent"], &totals["total_clicks"], &totals["unique_clicks"]),
        (&json!(1), &json!(1), &json!(2), &json!(1)),
        "{mis}"
    );
    assert_eq!(mis["data"]["opening_percentage"], 100.0);
    // bad and unknown bill ids; the wrong token family
    let (status, missing) = ingest(&app, &ingestion, "/crm_api/invoice/open", json!({})).await;
    assert_eq!((status, &missing["errors"][0]["message"]), (400, &json!("\"bill_id\" is a required property")));
    let (status, unknown) = ingest(&app, &ingestion, "/crm_api/invoice/open", json!({"bill_id": "nope"})).await;
    assert_eq!((status, &unknown["counted"]), (200, &json!(false)));
    let (status, _) = ingest(&app, &b.staff, "/crm_api/invoice/open", json!({"bill_id": bill_id})).await;
    assert_eq!(status, 403, "a staff token is not an ingestion token");
    // downloads, feedback-link opens, widget clicks and watch time
    let (_, downloaded) = ingest(&app, &ingestion, "/crm_api/invoice/download", json!({"bill_id": bill_id})).await;
    assert_eq!(downloaded["download_flag"], 1);
    let (_, feedback) = ingest(&app, &ingestion, "/crm_api/feedback_invoice/open", json!({"bill_id": bill_id})).await;
    assert_eq!(feedback["feedback_opens"], 1);
    for body in [
        json!({"bill_id": bill_id, "widget_id": 3, "event_type": "click"}),
        json!({"bill_id": bill_id, "widget_id": 3, "event_type": "click"}),
        json!({"bill_id": bill_id, "widget_id": 2, "event_type": "watch", "watch_time": 12}),
    ] {
        let (status, answer) = ingest(&app, &ingestion, "/crm_api/update/widget/insight", body).await;
        assert_eq!((status, &answer["counted"]), (200, &json!(true)), "{answer}");
    }
    let (status, answer) = ingest(
        &app,
        &ingestion,
        "/crm_api/update/widget/insight",
        json!({"bill_id": bill_id, "widget_id": 6, "event_type": "click"}),
    )
    .await;
    assert_eq!((status, &answer["counted"]), (200, &json!(false)), "a widget the bill does not show");
    let (status, _) = ingest(
        &app,
        &ingestion,
        "/crm_api/update/widget/insight",
        json!({"bill_id": bill_id, "widget_id": 2, "event_type": "watch"}),
    )
    .await;
    assert_eq!(status, 400, "watch needs watch_time");
    let stored = &wait_bills(&b, "outlet-1", 1).await[0];
    let widget = |id: u64| stored["widgets"].as_array().unwrap().iter().find(|w| w["widgetId"] == id).unwrap().clone();
    assert_eq!((&widget(3)["clicks"], &widget(2)["watchTime"]), (&json!(2), &json!(12)), "{stored}");

    // the page: served by engage, counts an open, reports widgets with its own token
    let path = format!("/b/{bill_id}");
    let page = app.client.get(format!("{}{path}", app.base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let html = page.text().await.unwrap();
    let token = html.split("data-token=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let (status, answer) = post(
        &app,
        "/crm_api/update/widget/insight",
        &[("authorization", &format!("Bearer {token}"))],
        &json!({"bill_id": bill_id, "widget_id": 3, "event_type": "click"}),
    )
    .await;
    assert_eq!((status, &answer["counted"]), (200, &json!(true)), "{answer}");
    let (status, _) = post(
        &app,
        "/crm_api/update/widget/insight",
        &[("authorization", &format!("Bearer {token}"))],
        &json!({"bill_id": "another-bill", "widget_id": 3, "event_type": "click"}),
    )
    .await;
    assert_eq!(status, 403, "a page's token is good for its own bill only");
    let missing = app.client.get(format!("{}/b/unknownbill1", app.base)).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    assert!(missing.text().await.unwrap().contains("Bill not found"));

    // in headless Chromium: the DOM after its script ran holds the items, totals and widgets
    let chromium = required_env("ENGAGE_TEST_CHROMIUM");
    let shots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let url = format!("{}{path}", app.base);
    let shot = shots.join("bill-page.png");
    let browse = |args: Vec<String>| {
        let chromium = chromium.clone();
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(&chromium)
                .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=390,1400"])
                .args(args)
                .output()
                .unwrap()
        })
    };
    let dom = browse(vec!["--dump-dom".into(), url.clone()]).await.unwrap();
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let dom = String::from_utf8(dom.stdout).unwrap();
    for expected in [
        "Masala dosa",
        "Filter coffee",
        "id=\"subtotal\">\u{20b9}300.00",
        "id=\"discount\">-\u{20b9}30.00",
        "id=\"tax\">\u{20b9}13.50",
        "id=\"total\">\u{20b9}283.50",
        "Try our thali",
        "https://shop.test/thali",
        "Tell us how we did",
        "id=\"loyalty\"",
        ">28<",
        "Save bill",
        "Thank you, Asha",
    ] {
        assert!(dom.contains(expected), "{expected:?} is not in the page: {dom}");
    }
    let sequence = ["id=\"receipt\"", "id=\"loyalty\"", "id=\"upsell\"", "id=\"feedback\""]
        .map(|id| dom.find(id).unwrap_or_else(|| panic!("{id} missing")));
    assert!(sequence.windows(2).all(|w| w[0] < w[1]), "widgets out of sequence: {sequence:?}");
    let out = browse(vec![format!("--screenshot={}", shot.display()), url]).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "the screenshot is a PNG");
    // the page's two loads (curl-like and two Chromium) were opens: 2 + 3
    let stored = &wait_bills(&b, "outlet-1", 1).await[0];
    assert_eq!(stored["clicked"], 5, "{stored}");

    // a person taps the loyalty card, then switches away: the page's own script reports the
    // click and the seconds the card was on screen (tests/e2e/browser drives Chromium)
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/browser/fill_and_submit.py");
    let page_url = format!("{}{path}", app.base);
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .arg(script)
            .arg(chromium)
            .arg(page_url)
            .args(["--click", "#loyalty"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("order B-1"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let stored = wait_bills(&b, "outlet-1", 1).await[0].clone();
        let loyalty = stored["widgets"].as_array().unwrap().iter().find(|w| w["widgetId"] == 2).unwrap().clone();
        let watched = loyalty["watchTime"].as_u64().unwrap();
        if loyalty["clicks"] == 1 && watched != 12 {
            assert!((1..=10).contains(&watched), "{loyalty}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the page reported no click or watch time: {loyalty}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn skips_are_counted_by_reason_prices_are_exact_and_the_job_and_report_catch_up() {
    let sms = provider(&[]).await;
    let (mail_url, mailed) = mail_service().await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url), ("ENGAGE_MAIL_SERVICE_URL", &mail_url)]).await;
    let (b, _) = brand(&app, "brand-bill-skip").await;
    // outlet-1: SMS for pos and app orders, 15 minutes after; outlet-2: utility chat; outlet-3:
    // marketing chat; outlet-4 has no configuration and the brand none either
    b.staff(
        "/crm_api/links/addBusinessConfig",
        json!({"business_id": "outlet-1", "mode": 1, "time": 15, "status": 1, "platform": ["pos", "app"]}),
    )
    .await;
    b.staff("/crm_api/links/addBusinessConfig", json!({"business_id": "outlet-2", "mode": 2, "status": 1})).await;
    b.staff(
        "/crm_api/links/addBusinessConfig",
        json!({"business_id": "outlet-3", "mode": 2, "status": 1, "chat_template_type": "MARKETING"}),
    )
    .await;
    for outlet in ["outlet-1", "outlet-2", "outlet-3"] {
        b.staff("/crm_api/wallet/recharge", json!({"business_id": outlet, "amount": 2, "reference": outlet})).await;
    }
    pos_order(&b, "outlet-1", "S-ok", "9811500001", json!({})).await;
    pos_order(&b, "outlet-1", "S-seq", "9876543210", json!({})).await;
    pos_order(&b, "outlet-1", "S-rep", "7777777777", json!({})).await;
    pos_order(&b, "outlet-1", "S-low", "5811500001", json!({})).await;
    pos_order(&b, "outlet-1", "S-web", "9811500002", json!({"platform": "website"})).await;
    pos_order(&b, "outlet-1", "S-agg", "9811500003", json!({"platform": "aggregator"})).await;
    pos_order(&b, "outlet-2", "S-util", "9811500004", json!({})).await;
    pos_order(&b, "outlet-3", "S-mkt", "9811500005", json!({})).await;
    pos_order(&b, "outlet-4", "S-none", "9811500006", json!({})).await;
    // the other sources are not billed: a platform order of outlet-1
    let body = json!({"parentBusinessId": b.name, "businessId": "outlet-1", "orderId": "S-platform",
        "customer": {"name": "Ravi", "phone": "9811500007"}, "amount": 100});
    assert_eq!(app.post_json("/injestion/platform", &body).await.0, 200);
    wait_customer(&app, b.name, "9811500007", |c| c["total_orders"] == 1).await;
    wait_customer(&app, b.name, "9811500006", |c| c["total_orders"] == 1).await;
    assert_eq!(wait_bills(&b, "outlet-1", 1).await[0]["order_id"], "S-ok");
    wait_bills(&b, "outlet-2", 1).await;
    wait_bills(&b, "outlet-3", 1).await;
    // SMS 0.1711; utility chat 0.25 + 18% = 0.295; marketing chat 0.92 + 18% = 1.0856
    assert_eq!(balance(&b, "outlet-1").await, "1.8289");
    assert_eq!(balance(&b, "outlet-2").await, "1.705");
    assert_eq!(balance(&b, "outlet-3").await, "0.9144");

    // a wallet that cannot pay: skipped, then billed by the job once recharged
    b.staff("/crm_api/links/addBusinessConfig", json!({"business_id": "outlet-5", "mode": 1, "status": 1})).await;
    pos_order(&b, "outlet-5", "S-poor", "9811500008", json!({})).await;
    wait_customer(&app, b.name, "9811500008", |c| c["total_orders"] == 1).await;
    assert_eq!(bills(&b, json!({"business_id": "outlet-5"})).await["total"], 0);
    let now = Utc::now();
    let first = run(&app, "bill_generation", now).await["outcome"].clone();
    assert_eq!(first["generated"], 0, "{first}");
    let skipped = &first["skipped"];
    assert_eq!(
        (
            &skipped["invalid_mobile"],
            &skipped["platform"],
            &skipped["aggregator"],
            &skipped["no_config"],
            &skipped["wallet"]
        ),
        (&json!(3), &json!(1), &json!(1), &json!(1), &json!(1)),
        "{first}"
    );
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-5", "amount": 1, "reference": "o5"})).await;
    let second = run(&app, "bill_generation", now).await["outcome"].clone();
    assert_eq!(second["generated"], 1, "{second}");
    assert_eq!(wait_bills(&b, "outlet-5", 1).await[0]["order_id"], "S-poor");
    let third = run(&app, "bill_generation", now).await["outcome"].clone();
    assert_eq!(third["generated"], 0, "none twice: {third}");

    // the 15-minute delay: outlet-1's SMS waits for its time; outlet-5's goes at once
    let waiting = usize::from(crate::helpers::due_today_ist(Duration::minutes(15)));
    let early = run(&app, "sms_drain", now).await["outcome"].clone();
    assert_eq!((&early["sent"], &early["scheduled"]), (&json!(1), &json!(waiting)), "{early}");
    let later = run(&app, "sms_drain", now + Duration::minutes(16)).await["outcome"].clone();
    assert_eq!(later["sent"], 1, "{later}");

    // the report of today (run as of tomorrow 11:32): funnel, skips and unsent, read back
    let report = run(&app, "bill_report", now + Duration::days(1)).await["outcome"].clone();
    assert_eq!((&report["brands"], &report["mailed"]), (&json!(1), &json!(true)), "{report}");
    let file = report["file"].as_str().unwrap();
    let bytes = std::fs::read(file).unwrap();
    let funnel = xlsx_sheet(&bytes, 1);
    for outlet in ["outlet-1", "outlet-2", "outlet-3", "outlet-5"] {
        assert!(funnel.contains(outlet), "{outlet} missing: {funnel}");
    }
    // per outlet: sent 1, sms 1 or chat 1, no opens, 0 %, then 0 and 0 % for both earlier weeks
    assert!(funnel.contains("1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0"), "{funnel}");
    let skips = xlsx_sheet(&bytes, 2);
    for reason in ["invalid_mobile", "platform", "aggregator", "no_config"] {
        assert!(skips.contains(reason), "{reason} missing: {skips}");
    }
    // outlet-1: invalid_mobile 3, aggregator 1, platform 1; outlet-4: no_config 1 (the wallet
    // skip of outlet-5 was billed later: no row)
    assert!(skips.trim_end().ends_with("3 | 1 | 1 | 1"), "{skips}");
    let unsent = xlsx_sheet(&bytes, 3);
    assert!(unsent.contains("outlet-4") && unsent.contains("no bill configuration"), "{unsent}");
    assert!(!unsent.contains("wallet balance"), "{unsent}");
    let mail = mailed.lock().unwrap().clone();
    assert_eq!(mail.len(), 1);
    assert!(mail[0].0.iter().any(|(k, v)| k == "report" && v == "digital-bills"), "{:?}", mail[0].0);
    assert_eq!(mail[0].1[0].1, bytes);
}

/// A link service on a loopback port: answers `{shortened_url, bill_id}` (numbered from 700), or
/// 503 while `down`; records each request.
async fn link_service() -> (String, Arc<AtomicBool>, Arc<Mutex<Vec<Value>>>) {
    type S = (Arc<AtomicBool>, Arc<Mutex<Vec<Value>>>);
    async fn handle(State((down, got)): State<S>, Json(body): Json<Value>) -> axum::response::Response {
        if down.load(Ordering::SeqCst) {
            return axum::http::StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
        let mut got = got.lock().unwrap();
        got.push(body);
        let n = 700 + got.len();
        Json(json!({"shortened_url": format!("https://s.test/{n}"), "bill_id": n})).into_response()
    }
    let state: S = (Arc::new(AtomicBool::new(true)), Arc::default());
    let app = axum::Router::new().route("/links", axum::routing::post(handle)).with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/links", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, state.0, state.1)
}

#[tokio::test]
async fn a_link_service_makes_the_short_link_and_its_bill_id_counts_opens() {
    let sms = provider(&[]).await;
    let (links, down, asked) = link_service().await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url), ("ENGAGE_LINK_SERVICE_URL", &links)]).await;
    let (b, ingestion) = brand(&app, "brand-bill-link").await;
    b.staff("/crm_api/links/addBusinessConfig", json!({"mode": 1, "sms_template": "Bill: x_short_url"})).await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 1, "reference": "l1"})).await;

    // the service is down: no bill, nothing paid, the skip counted; the job bills it once it is up
    pos_order(&b, "outlet-1", "L-1", "9811600001", json!({})).await;
    wait_customer(&app, b.name, "9811600001", |c| c["total_orders"] == 1).await;
    let first = run(&app, "bill_generation", Utc::now()).await["outcome"].clone();
    assert_eq!((&first["generated"], &first["skipped"]["link_service"]), (&json!(0), &json!(1)), "{first}");
    assert_eq!(balance(&b, "outlet-1").await, "1");
    down.store(false, Ordering::SeqCst);
    let second = run(&app, "bill_generation", Utc::now()).await["outcome"].clone();
    assert_eq!(second["generated"], 1, "{second}");
    let bill = wait_bills(&b, "outlet-1", 1).await[0].clone();
    assert_eq!((&bill["short_url"], &bill["link_service_bill_id"]), (&json!("https://s.test/701"), &json!("701")));
    let request = asked.lock().unwrap()[0].clone();
    assert_eq!((&request["order_id"], &request["bill_id"]), (&json!("L-1"), &bill["bill_id"]), "{request}");
    assert!(request["long_url"].as_str().unwrap().ends_with(&format!("/b/{}", bill["bill_id"].as_str().unwrap())));

    // the message carries the service's link; an open reported with the service's id counts
    run(&app, "sms_drain", Utc::now()).await;
    assert_eq!(sms.received.lock().unwrap()[0]["message"], "Bill: https://s.test/701");
    let (status, opened) =
        post(&app, "/crm_api/invoice/open", &[("token", &ingestion)], &json!({"bill_id": "701"})).await;
    assert_eq!((status, &opened["counted"], &opened["clicked"]), (200, &json!(true), &json!(1)), "{opened}");
}
