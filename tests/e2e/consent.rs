//! Marketing consent end to end on the embedded engine: a customer unsubscribed by the staff API,
//! by the providers' keyword webhook and by the opt-out link's page; a bulk campaign leaves them out
//! and debits nothing; START brings marketing back; a customer who unsubscribes between queueing
//! and the drain gets nothing and the debit comes back; transactional sends are not affected.

use chrono::Utc;
use serde_json::{json, Value};

use crate::campaigns::brand;
use crate::helpers::{spawn_app, TestApp};
use crate::jobs::provider;
use crate::journey_runs::{run, Brand};
use crate::loyalty::post;

/// A bulk SMS campaign to the `Phone` column of `csv`; its answer.
pub(crate) async fn bulk(brand: &Brand<'_>, csv: &str) -> Value {
    let fields = [
        ("business_id", "outlet-1"),
        ("campaign_name", "Offers"),
        ("channel", "sms"),
        ("template_id", "dlt-1"),
        ("message", "Hi x_cust_name, 20% off"),
    ];
    let (status, answer) = crate::campaigns::bulk(brand, &fields, csv).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

async fn keyword(app: &TestApp, secret: &str, brand: &str, from: &str, text: &str) -> (u16, Value) {
    let body = json!({"parent_business_id": brand, "from": from, "text": text, "channel": "sms"});
    post(app, "/webhooks/keywords/acme-sms", &[("x-engage-webhook-secret", secret)], &body).await
}

#[tokio::test]
async fn unsubscribed_customers_get_no_marketing_and_pay_nothing_until_they_come_back() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[
        ("ENGAGE_SMS_PROVIDER_URL", &sms.url),
        ("ENGAGE_KEYWORD_WEBHOOK_SECRETS", "acme-sms=s3cret,other=x"),
    ])
    .await;
    let b = brand(&app, "brand-consent").await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "c1"})).await;
    let start = b.balance().await;

    // unsubscribed by staff: the campaign leaves them out and debits nothing for them
    let set = b.staff("/crm_api/consent/customer", json!({"mobile_number": "9811400001", "sms": false})).await;
    assert_eq!((&set["sms"]["subscribed"], &set["sms"]["source"]), (&json!(false), &json!("staff")), "{set}");
    assert_eq!(set["chat"]["subscribed"], true, "other channels keep the default: {set}");
    let first = bulk(&b, "Phone\n9811400001\n9811400002\n").await;
    assert_eq!((&first["queued_recipients"], &first["unsubscribed"]), (&json!(1), &json!(1)), "{first}");
    let one_sms = b.balance().await;
    assert_ne!(one_sms, start);

    // STOP by the keyword webhook (any case and spacing), idempotent; a wrong secret changes nothing
    let (status, _) = keyword(&app, "wrong", "brand-consent", "9811400002", "STOP").await;
    assert_eq!(status, 401);
    let (status, other) = keyword(&app, "x", "brand-consent", "9811400002", "STOP").await;
    assert_eq!(status, 401, "another provider's secret: {other}");
    let (status, bad) = keyword(&app, "s3cret", "brand-consent", "12345", "STOP").await;
    assert_eq!(status, 400, "{bad}");
    // the provider writes the number with the country code: it is the same customer
    let (status, stopped) = keyword(&app, "s3cret", "brand-consent", "+919811400002", "  stop! ").await;
    assert_eq!(status, 200, "{stopped}");
    assert_eq!((&stopped["keyword"], &stopped["changed"]), (&json!("stop"), &json!(true)), "{stopped}");
    let (_, again) = keyword(&app, "s3cret", "brand-consent", "9811400002", "STOP").await;
    assert_eq!(again["changed"], false, "{again}");
    let (_, help) = keyword(&app, "s3cret", "brand-consent", "9811400002", "help").await;
    assert!(help["reply"].as_str().unwrap_or_default().contains("STOP"), "{help}");

    // the message queued before STOP is not delivered at the drain, and its debit comes back
    let drained = run(&app, "sms_drain", Utc::now()).await;
    assert_eq!((&drained["outcome"]["sent"], &drained["outcome"]["unsubscribed"]), (&json!(0), &json!(1)), "{drained}");
    assert!(sms.received.lock().unwrap().is_empty());
    assert_eq!(b.balance().await, start, "the withdrawn send was credited back");
    let rerun = run(&app, "sms_drain", Utc::now()).await;
    assert_eq!(rerun["outcome"]["unsubscribed"], 0, "credited once: {rerun}");
    assert_eq!(b.balance().await, start);
    // /stats counts both: the one left out when queued, the one withdrawn at the drain
    let ist = chrono::FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
    let today = Utc::now().with_timezone(&ist).format("%Y-%m-%d").to_string();
    let campaigns = b.staff("/stats/metrics/campaigns", json!({"start": today, "end": today})).await;
    let skipped = &campaigns["data"]["skipped_for_consent"];
    assert_eq!(
        (&skipped["total"], &skipped["sms"], &skipped["chat"]),
        (&json!(2), &json!(2), &json!(0)),
        "{campaigns}"
    );

    // nobody subscribed: nothing queued, nothing paid
    let none = bulk(&b, "Phone\n9811400001\n9811400002\n").await;
    assert_eq!((&none["queued_recipients"], &none["unsubscribed"]), (&json!(0), &json!(2)), "{none}");
    assert_eq!(b.balance().await, start);

    // START brings marketing back; the message carries its opt-out link
    let (_, started) = keyword(&app, "s3cret", "brand-consent", "9811400002", "Start").await;
    assert_eq!(started["subscribed"], true, "{started}");
    let back = bulk(&b, "Phone\n9811400002\n").await;
    assert_eq!(back["queued_recipients"], 1, "{back}");
    let drained = run(&app, "sms_drain", Utc::now()).await;
    assert_eq!(drained["outcome"]["sent"], 1, "{drained}");
    let sent = sms.received.lock().unwrap()[0].clone();
    assert_eq!(sent["message"], "Hi , 20% off", "{sent}");
    let link = sent["opt_out"].as_str().unwrap_or_default().to_owned();
    assert!(link.contains("/u/"), "every marketing message carries its opt-out link: {sent}");
    // the test's public URL names port 0 (ENGAGE_PUBLIC_URL unset): the same path on the test server
    let link = format!("{}/u/{}", app.base, link.rsplit("/u/").next().unwrap_or_default());

    // the link's page changes nothing when opened; its form unsubscribes
    let page = app.client.get(&link).header("accept", "text/html").send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("name=\"sms\" checked") || html.contains("id=\"sms\" name=\"sms\" checked"), "{html}");
    let read_back = b.staff("/crm_api/consent/customer", json!({"mobile_number": "9811400002"})).await;
    assert_eq!(read_back["sms"]["subscribed"], true, "opening the link changed nothing: {read_back}");
    let confirmed = app
        .client
        .post(&link)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("chat=on&confirm=1")
        .send()
        .await
        .unwrap();
    assert_eq!(confirmed.status(), 200);
    let by_link = b.staff("/crm_api/consent/customer", json!({"mobile_number": "9811400002"})).await;
    assert_eq!(
        (&by_link["sms"]["subscribed"], &by_link["sms"]["source"], &by_link["chat"]["subscribed"]),
        (&json!(false), &json!("link"), &json!(true)),
        "{by_link}"
    );
    let unknown = app.client.get(format!("{}/u/nosuchcode", app.base)).send().await.unwrap();
    assert_eq!(unknown.status(), 404);

    // the integration route and another brand's credential
    let (status, api) = post(
        &app,
        "/integration/v1/consent",
        &[("authorization", &b.integration)],
        &json!({"mobile_number": "9811400003", "sms": false}),
    )
    .await;
    assert_eq!((status, &api["sms"]["source"]), (200, &json!("api")), "{api}");
    let other = brand(&app, "brand-other").await;
    let (status, refused) = post(
        &app,
        "/crm_api/consent/customer",
        &[("token", &other.staff)],
        &json!({"parent_business_id": "brand-consent", "mobile_number": "9811400003", "sms": true}),
    )
    .await;
    assert_eq!(status, 403, "{refused}");
    let (status, bad) = post(
        &app,
        "/crm_api/consent/customer",
        &[("token", &b.staff)],
        &json!({"parent_business_id": "brand-consent", "mobile_number": "not a phone"}),
    )
    .await;
    assert_eq!(status, 400, "{bad}");
    let still = b.staff("/crm_api/consent/customer", json!({"mobile_number": "9811400003"})).await;
    assert_eq!(still["sms"]["subscribed"], false, "{still}");

    // the brand's default: closed for chat
    let defaults = b.staff("/crm_api/consent/settings", json!({"chat": false, "help_text": "Call 1800"})).await;
    assert_eq!((&defaults["chat"], &defaults["sms"]), (&json!(false), &json!(true)), "{defaults}");
    let (_, help) = keyword(&app, "s3cret", "brand-consent", "9811400009", "HELP").await;
    assert_eq!(help["reply"], "Call 1800", "{help}");
}

/// The opt-out page in headless Chromium: axe-clean at both widths, and the keyboard alone
/// unsubscribes SMS (Tab to the SMS box, Space, Tab to the button, Enter).
#[tokio::test]
async fn the_opt_out_page_works_by_keyboard_and_reads_well() {
    use crate::pages::{audited, no_violations, tab_to};
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let b = brand(&app, "brand-optout").await;
    b.staff("/crm_api/add_b_config", json!({"business_id": "0", "business_name": "Dosa Corner"})).await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "o1"})).await;
    assert_eq!(bulk(&b, "Phone\n9811500001\n").await["queued_recipients"], 1);
    run(&app, "sms_drain", Utc::now()).await;
    let sent = sms.received.lock().unwrap()[0].clone();
    let link = sent["opt_out"].as_str().unwrap_or_default().to_owned();
    let url = format!("{}/u/{}", app.base, link.rsplit("/u/").next().unwrap_or_default());

    let mut steps = audited("opt-out");
    steps.push(json!({"viewport": [390, 844]}));
    steps.extend(tab_to("#sms"));
    steps.push(json!({"key": " "}));
    steps.push(json!({"eval": "[document.getElementById('sms').checked, document.getElementById('chat').checked, document.querySelector('h1').textContent]"}));
    steps.extend(tab_to("button[type=submit]"));
    steps.push(json!({"key": "Enter"}));
    steps.push(json!({"wait": "document.body.innerText.includes('Your choices are saved')"}));
    steps.push(json!({"eval": "[document.getElementById('sms').checked, document.getElementById('chat').checked]"}));
    steps.extend(audited("opt-out-saved"));
    let values = crate::stats_dashboard::drive(url, json!(steps)).await;
    no_violations(&values, 2, "the opt-out page");
    assert_eq!(values[2], json!([false, true, "Offers from Dosa Corner"]), "{values:?}");
    assert_eq!(values[3], json!([false, true]), "{values:?}");
    no_violations(&values[4..], 2, "the saved opt-out page");
    let now = b.staff("/crm_api/consent/customer", json!({"mobile_number": "9811500001"})).await;
    assert_eq!(
        (&now["sms"]["subscribed"], &now["sms"]["source"], &now["chat"]["subscribed"]),
        (&json!(false), &json!("link"), &json!(true)),
        "{now}"
    );
}

/// The export holds what the routes show about the customer, and only that customer's, in this
/// brand; another brand's credential gets nothing.
#[tokio::test]
async fn a_customers_export_holds_their_profile_orders_points_subscriptions_and_messages() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let b = brand(&app, "brand-export").await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "e1"})).await;
    b.staff("/crm_api/add_edit_rules", json!({"earn_percent": 10, "point_value": 1})).await;
    b.order("E-1", "9811600001", "Meera", 250.0, Utc::now()).await;
    b.order("E-2", "9811600002", "Someone Else", 100.0, Utc::now()).await;
    crate::platform::wait_customer(&app, "brand-export", "9811600001", |c| c["total_orders"] == 1).await;
    b.staff("/crm_api/consent/customer", json!({"mobile_number": "9811600001", "chat": false})).await;
    assert_eq!(bulk(&b, "Phone,Name\n9811600001,Meera\n9811600002,Else\n").await["queued_recipients"], 2);

    let export = b.staff("/crm_api/customer/export", json!({"mobile_number": "9811600001"})).await;
    assert_eq!(
        (&export["mobile_number"], &export["parent_business_id"]),
        (&json!("9811600001"), &json!("brand-export"))
    );
    assert_eq!(export["profile"]["name"], "Meera", "{export}");
    let orders = export["orders"].as_array().unwrap();
    assert_eq!(orders.len(), 1, "{export}");
    assert_eq!(orders[0]["order"], "outlet-1/E-1", "{export}");
    assert_eq!(
        (&export["subscriptions"]["chat"]["subscribed"], &export["subscriptions"]["sms"]["subscribed"]),
        (&json!(false), &json!(true))
    );
    let sends = export["sends"].as_array().unwrap();
    assert_eq!(sends.len(), 1, "only their own message: {export}");
    assert_eq!(sends[0]["to"], "9811600001");
    let text = export.to_string();
    assert!(!text.contains("9811600002") && !text.contains("Someone Else"), "another customer's data: {text}");

    let unknown = b.staff("/crm_api/customer/export", json!({"mobile_number": "9811600099"})).await;
    assert!(unknown["profile"].is_null() && unknown["orders"] == json!([]), "{unknown}");
    let other = brand(&app, "brand-nosy").await;
    let (status, refused) = post(
        &app,
        "/crm_api/customer/export",
        &[("token", &other.staff)],
        &json!({"parent_business_id": "brand-export", "mobile_number": "9811600001"}),
    )
    .await;
    assert_eq!(status, 403, "{refused}");
}

/// A nightly journey skips a customer who unsubscribed on its channel (reason `consent`, nothing
/// debited), and reaches one who did not.
#[tokio::test]
async fn the_nightly_journey_skips_the_unsubscribed_and_debits_nothing_for_them() {
    use chrono::Duration;

    use crate::journey_runs::born_on_day_after;
    use crate::platform::wait_customer;
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let b = brand(&app, "brand-nightly").await;
    let now = Utc::now();
    for (id, phone, name) in [("n-1", "9811700001", "Asha"), ("n-2", "9811700002", "Bela")] {
        b.order(id, phone, name, 300.0, now - Duration::days(1)).await;
        wait_customer(&app, "brand-nightly", phone, |c| c["total_orders"] == 1).await;
        b.profile(phone, json!({"dob": born_on_day_after(now)})).await;
    }
    b.journey("birthday", json!({"channels": ["sms"], "sms_template": "Happy birthday x_cust_name"})).await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "n1"})).await;
    b.staff("/crm_api/consent/customer", json!({"mobile_number": "9811700001", "sms": false})).await;
    let before = b.balance().await;
    let ran = run(&app, "journeys", now + Duration::minutes(1)).await;
    assert_eq!(ran["outcome"]["sent"], 1, "only the subscribed customer: {ran}");
    let after_one = b.balance().await;
    let drained = run(&app, "sms_drain", now + Duration::days(1)).await;
    assert_eq!(drained["outcome"]["sent"], 1, "{drained}");
    let received = sms.received.lock().unwrap().clone();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0]["to"], "9811700002", "{received:?}");
    // the unsubscribed customer's decision is recorded as skipped for consent
    let export = b.staff("/crm_api/customer/export", json!({"mobile_number": "9811700001"})).await;
    let decisions = export["journey_sends"].as_array().unwrap();
    assert!(decisions.iter().any(|d| d["reason"] == "consent"), "{export}");
    // one message paid, not two: the price of one SMS left the wallet
    assert_ne!(before, after_one);
    let second = run(&app, "journeys", now + Duration::minutes(2)).await;
    assert_eq!(second["outcome"]["sent"], 0, "{second}");
    assert_eq!(b.balance().await, after_one, "nothing more was debited");
}

/// Erasure: the customer's rows go, the rows the brand keeps for its totals no longer name them,
/// their unsent message is cancelled, `/stats` totals do not move, every route that names them
/// answers as for an unknown customer, and erasing twice changes nothing.
#[tokio::test]
async fn an_erased_customer_is_gone_everywhere_while_the_brand_totals_stay() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let b = brand(&app, "brand-erase").await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "x1"})).await;
    b.staff("/crm_api/add_edit_rules", json!({"earn_percent": 10, "point_value": 1})).await;
    b.order("X-1", "9811800001", "Zoya Qureshi", 400.0, Utc::now()).await;
    b.order("X-2", "9811800002", "Kept Customer", 100.0, Utc::now()).await;
    crate::platform::wait_customer(&app, "brand-erase", "9811800001", |c| c["total_orders"] == 1).await;
    crate::platform::wait_customer(&app, "brand-erase", "9811800002", |c| c["total_orders"] == 1).await;
    b.staff("/crm_api/consent/customer", json!({"mobile_number": "9811800001", "chat": false})).await;
    assert_eq!(bulk(&b, "Phone,Name\n9811800001,Zoya\n9811800002,Kept\n").await["queued_recipients"], 2);
    let ist = chrono::FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
    let today = chrono::Utc::now().with_timezone(&ist).format("%Y-%m-%d").to_string();
    let period = json!({"start": today, "end": today});
    let stats_before = b.staff("/stats/dashboard/summary", period.clone()).await;

    let erased = b.staff("/crm_api/customer/erase", json!({"mobile_number": "9811800001"})).await;
    assert!(erased["deleted"].as_u64().unwrap_or(0) >= 2, "{erased}");
    assert_eq!(erased["cancelled"], 1, "their queued message: {erased}");
    let export = b.staff("/crm_api/customer/export", json!({"mobile_number": "9811800001"})).await;
    let text = export.to_string();
    assert!(export["profile"].is_null() && export["orders"] == json!([]) && export["sends"] == json!([]), "{export}");
    assert!(!text.contains("Zoya"), "{text}");
    let (status, _) = post(
        &app,
        "/crm_api/get/customer/details",
        &[],
        &json!({"parent_business_id": "brand-erase", "customer_number": "9811800001"}),
    )
    .await;
    assert_eq!(status, 404, "the customer is unknown now");
    // the brand's totals stay; the other customer is untouched and their message goes out
    let stats_after = b.staff("/stats/dashboard/summary", period).await;
    assert_eq!(stats_before, stats_after);
    let kept = b.staff("/crm_api/customer/export", json!({"mobile_number": "9811800002"})).await;
    assert_eq!(kept["profile"]["name"], "Kept Customer", "{kept}");
    let drained = run(&app, "sms_drain", Utc::now()).await;
    assert_eq!(drained["outcome"]["sent"], 1, "only the kept customer's: {drained}");
    assert_eq!(sms.received.lock().unwrap()[0]["to"], "9811800002");
    // twice: nothing more
    let again = b.staff("/crm_api/customer/erase", json!({"mobile_number": "9811800001"})).await;
    assert_eq!(
        (&again["deleted"], &again["anonymised"], &again["cancelled"]),
        (&json!(0), &json!(0), &json!(0)),
        "{again}"
    );
    // ordering again starts fresh
    b.order("X-3", "9811800001", "Zoya Q", 50.0, Utc::now()).await;
    let fresh = crate::platform::wait_customer(&app, "brand-erase", "9811800001", |c| c["total_orders"] == 1).await;
    assert_eq!(fresh["total_orders"], 1, "{fresh}");
}
