//! The shapes legacy clients send (forms with every numeric field, numbers written as strings,
//! `1.0` for an integer, ids as numbers) are accepted and understood: each value is read back
//! where it shows (an order's discount in `/stats`, fraud limits, a page number).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{read, spawn_app, token_for, TestApp};

async fn form(app: &TestApp, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, Value) {
    let mut request = app
        .client
        .post(format!("{}{path}", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_owned());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    read(request.send().await.unwrap()).await
}

async fn json_post(app: &TestApp, path: &str, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let mut request = app.client.post(format!("{}{path}", app.base)).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    read(request.send().await.unwrap()).await
}

#[tokio::test]
async fn legacy_forms_and_numbers_as_strings_are_accepted_and_understood() {
    let app = spawn_app(&[]).await;
    let integration = token_for(&app, "integration", "brand-l", None).await;
    let staff = token_for(&app, "staff", "brand-l", None).await;
    let auth = [("authorization", integration.as_str())];
    let staff_auth = [("token", staff.as_str())];
    // a form whose numbers are all text, the discount among them (refused before: "10" is not a number)
    let body = "businessId=outlet-1&orderId=L-1&customer%5Bphone%5D=09811500001&customer%5Bname%5D=Asha\
                &amount=120&discount=10&prepMinutes=12&deliveryMinutes=20&orderTime=2026-11-21%2010%3A00%3A00";
    let (status, answer) = form(&app, "/api/ingestion/orderPush", &auth, body).await;
    assert_eq!(status, 200, "{answer}");
    // JSON with numbers as strings and an integer written 1.0
    let order = json!({"parentBusinessId": "brand-l", "businessId": "outlet-1", "orderId": 2,
        "customer": {"phone": "9811500002"}, "amount": "80.50", "discount": "5",
        "items": [{"name": "tea", "qty": "2", "price": "40.25"}], "status": 1.0, "orderTime": "2026-11-21 11:00:00"});
    let (status, answer) = json_post(&app, "/injestion/platform", &[], &order).await;
    assert_eq!(status, 200, "{answer}");

    // understood: the discounts and revenue show in /stats, the phone kept its leading zero
    let summary = json!({"parent_business_id": "brand-l", "start": "2026-11-21", "end": "2026-11-21"});
    let deadline = Instant::now() + Duration::from_secs(20);
    let totals = loop {
        let (status, answer) = json_post(&app, "/stats/dashboard/summary", &staff_auth, &summary).await;
        assert_eq!(status, 200, "{answer}");
        if answer["data"]["totals"]["orders"] == 2 {
            break answer["data"]["totals"].clone();
        }
        assert!(Instant::now() < deadline, "{answer}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!((totals["revenue"].clone(), totals["discounts"].clone()), (json!(200.5), json!(15.0)), "{totals}");
    let (status, customer) =
        json_post(&app, "/integration/v1/get_user_profile", &auth, &json!({"customer_number": "09811500001"})).await;
    assert_eq!(status, 200, "the phone kept its zero: {customer}");

    // fraud limits as a form, read back as numbers
    let (status, answer) = form(
        &app,
        "/crm_api/configure_fraud_wallet_rules",
        &staff_auth,
        "parentBusinessId=brand-l&redemption_limit_value=3&redemption_limit_period=day",
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let (_, config) =
        json_post(&app, "/crm_api/get_fraud_configuration", &staff_auth, &json!({"parent_business_id": "brand-l"}))
            .await;
    assert!(config.to_string().contains("\"redemption_limit_value\":3"), "{config}");

    // a page as a string and as 1.0, an id as a number
    for page in [json!("1"), json!(1.0)] {
        let body = json!({"parent_business_id": "brand-l", "business_id": "outlet-1", "page": page, "page_size": "10"});
        let (status, answer) = json_post(&app, "/crm_api/wallet/transactions", &staff_auth, &body).await;
        assert_eq!((status, &answer["page"]), (200, &json!(1)), "{answer}");
    }
    // one period rule: start and end, or date, or neither (the 7 IST days up to today)
    for path in [
        "/crm_api/npsData",
        "/crm_api/download/nps/data",
        "/crm_api/get_digital_bill_mis",
        "/crm_api/feedback_form_interaction_mis",
        "/stats/dashboard/summary",
    ] {
        for extra in [json!({}), json!({"date": "2026-11-21"}), json!({"start": "2026-11-01", "end": "2026-11-21"})] {
            let mut body = json!({"parent_business_id": "brand-l"});
            body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let response = app
                .client
                .post(format!("{}{path}", app.base))
                .header("token", &staff)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200, "{path} {body}");
        }
        let (status, answer) =
            json_post(&app, path, &staff_auth, &json!({"parent_business_id": "brand-l", "start": "2026-11-01"})).await;
        assert_eq!(status, 200, "{path}: start alone is the 7 days from it: {answer}");
        let (status, answer) =
            json_post(&app, path, &staff_auth, &json!({"parent_business_id": "brand-l", "end": "2026-11-00"})).await;
        assert_eq!((status, &answer["errors"][0]["pointer"]), (400, &json!("/end")), "{path}: {answer}");
    }

    // what still does not fit is a 400 naming its pointer
    let (status, answer) = json_post(
        &app,
        "/injestion/platform",
        &[],
        &json!({"parentBusinessId": "brand-l",
        "businessId": "outlet-1", "orderId": "L-3", "customer": {"phone": "9811500003"}, "amount": "lots"}),
    )
    .await;
    assert_eq!((status, &answer["errors"][0]["pointer"]), (400, &json!("/amount")), "{answer}");
    app.stop().await;
}

/// Forms as Express's `qs` writes them: `items[0][name]=…` lists of objects, a key sent twice
/// (`contacts=a&contacts=b`) a list, and the text `null` in a field that may be null removing it.
/// Each is read back where it shows.
#[tokio::test]
async fn qs_style_forms_nest_list_and_say_null() {
    let app = spawn_app(&[]).await;
    let staff = token_for(&app, "staff", "brand-q", None).await;
    let staff_auth = [("token", staff.as_str())];
    let body = "parentBusinessId=brand-q&businessId=o1&orderId=Q-1&customer%5Bphone%5D=9811500009\
                &amount=100&items%5B0%5D%5Bname%5D=dosa&items%5B0%5D%5Bqty%5D=2&items%5B0%5D%5Bprice%5D=30\
                &items%5B1%5D%5Bname%5D=tea&items%5B1%5D%5Bqty%5D=1&items%5B1%5D%5Bprice%5D=40\
                &orderTime=2026-11-22%2009%3A00%3A00";
    let (status, answer) = form(&app, "/injestion/platform", &[], body).await;
    assert_eq!(status, 200, "{answer}");
    let period = json!({"parent_business_id": "brand-q", "date": "2026-11-22"});
    let deadline = Instant::now() + Duration::from_secs(20);
    let items = loop {
        let (status, answer) = json_post(&app, "/stats/metrics/items", &staff_auth, &period).await;
        assert_eq!(status, 200, "{answer}");
        if answer["data"]["items"].as_array().is_some_and(|i| i.len() == 2) {
            break answer["data"]["items"].clone();
        }
        assert!(Instant::now() < deadline, "{answer}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let dosa = items.as_array().unwrap().iter().find(|i| i["name"] == "dosa").unwrap();
    assert_eq!((&dosa["quantity"], &dosa["revenue"]), (&json!(2), &json!(60.0)), "{items}");

    // a key sent twice is a list: both contacts are answered for (neither has a flag to resolve)
    let (status, answer) = form(
        &app,
        "/crm_api/mark_resolve_contacts",
        &staff_auth,
        "parent_business_id=brand-q&contacts=9811500011&contacts=9811500012",
    )
    .await;
    let contacts: Vec<&Value> = answer["results"].as_array().into_iter().flatten().map(|r| &r["contact"]).collect();
    assert_eq!((status, contacts), (409, vec![&json!("9811500011"), &json!("9811500012")]), "{answer}");

    // `null` removes a field that may be null: the business's SMS header is set, then removed
    let set = "parent_business_id=brand-q&business_id=0&sms_sender_id=ENGAGE";
    let (status, answer) = form(&app, "/crm_api/add_b_config", &staff_auth, set).await;
    assert_eq!((status, &answer["data"]["sms_sender_id"]), (200, &json!("ENGAGE")), "{answer}");
    let unset = "parent_business_id=brand-q&business_id=0&sms_sender_id=null";
    let (status, answer) = form(&app, "/crm_api/add_b_config", &staff_auth, unset).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer["data"].get("sms_sender_id").is_none_or(Value::is_null), "{answer}");
}
