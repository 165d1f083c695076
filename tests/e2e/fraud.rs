//! Fraud prevention end to end: velocity limits at exactly the limit and one past it (redemption
//! and allocation), the flag state machine's every transition and refusal through the routes, the
//! blocked check on earn and redeem, and the CSV blocklist upload.

use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::platform::{create_token, order, wait_customer};

async fn post(app: &TestApp, path: &str, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let mut request = app.client.post(format!("{}{path}", app.base)).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    crate::helpers::read(request.send().await.unwrap()).await
}

struct Brand {
    name: &'static str,
    staff: String,
    integration: String,
}

/// A brand earning 10% on any bill, redemptions of at least 1 point, with the given velocity limits.
async fn brand(app: &TestApp, name: &'static str, limits: Value) -> Brand {
    let staff = create_token(app, "staff", name).await;
    let integration = create_token(app, "integration", name).await;
    let rules = json!({"parent_business_id": name, "earn_percent": 10, "min_bill": 0, "min_redeem_points": 1, "max_redeem_percent": 100});
    assert_eq!(post(app, "/crm_api/add_edit_rules", &[("token", &staff)], &rules).await.0, 200);
    let mut limits = limits;
    limits["parentBusinessId"] = json!(name);
    let (status, body) = post(app, "/crm_api/configure_fraud_wallet_rules", &[("token", &staff)], &limits).await;
    assert_eq!((status, body["status"].clone()), (200, json!(true)), "{body}");
    Brand { name, staff, integration }
}

async fn redeem(app: &TestApp, b: &Brand, phone: &str, order_id: &str) -> (u16, Value) {
    post(
        app,
        "/integration/v1/redeem_points",
        &[("authorization", &b.integration)],
        &json!({"customer_number": phone, "points": 1, "order_id": order_id}),
    )
    .await
}

#[tokio::test]
async fn redemptions_at_the_limit_pass_and_one_past_it_is_flagged() {
    let app = spawn_app(&[]).await;
    let b = brand(&app, "brand-v", json!({"redemption_limit_value": 3, "redemption_limit_period": "day"})).await;
    let phone = "9876540001";
    assert_eq!(post(&app, "/injestion/platform", &[], &order(b.name, "v1", phone, 1000.0)).await.0, 200);
    wait_customer(&app, b.name, phone, |c| c["loyalty_points"] == 100).await;
    for i in 0..3 {
        let (status, body) = redeem(&app, &b, phone, &format!("r{i}")).await;
        assert_eq!(status, 200, "redemption {} of a limit of 3 is allowed: {body}", i + 1);
    }
    let (status, body) = redeem(&app, &b, phone, "r3").await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["fraud_detected"], true);
    assert_eq!(body["status_code"], 403);
    assert_eq!(body["error_code"], "xE_109");
    assert_eq!(body["fraud_type"], "Redemption Frequency Limit");
    assert!(body["action_taken"].as_str().unwrap().contains("denied"));
    let flag_id = body["flag_id"].as_str().unwrap().to_owned();
    // another attempt keeps the one open flag
    assert_eq!(redeem(&app, &b, phone, "r4").await.1["flag_id"], json!(flag_id));
    let (_, flags) =
        post(&app, "/crm_api/view_fraud_customers", &[("token", &b.staff)], &json!({"parent_business_id": b.name}))
            .await;
    let data = flags["data"].as_array().unwrap();
    assert_eq!(data.len(), 1);
    assert_eq!(
        (data[0]["status"].clone(), data[0]["blocked_by"].clone(), data[0]["state"].clone()),
        (json!(1), json!("System"), json!("flagged"))
    );
    let (_, eval) = post(
        &app,
        "/crm_api/api/v1/fraud/evaluate-customer",
        &[("token", &b.staff)],
        &json!({"parent_business_id": b.name, "contact": phone}),
    )
    .await;
    assert_eq!(eval["data"]["redemptions_in_period"], 3);
    // the points were not taken by the refused attempts
    let (_, loyalty) = post(
        &app,
        "/integration/v1/get_user_loyalty",
        &[("authorization", &b.integration)],
        &json!({"customer_number": phone}),
    )
    .await;
    assert_eq!(loyalty["loyalty_points"], 97);
}

#[tokio::test]
async fn allocations_past_the_limit_earn_nothing_and_raise_a_flag() {
    let app = spawn_app(&[]).await;
    let b =
        brand(&app, "brand-e", json!({"points_earning_limit_value": 2, "points_earning_limit_period": "week"})).await;
    let phone = "9876540002";
    for (i, amount) in [100.0, 200.0, 300.0].iter().enumerate() {
        assert_eq!(
            post(&app, "/injestion/platform", &[], &order(b.name, &format!("e{i}"), phone, *amount)).await.0,
            200
        );
    }
    let customer = wait_customer(&app, b.name, phone, |c| c["total_orders"] == 3).await;
    assert_eq!(customer["loyalty_points"], 10 + 20, "the third allocation of a limit of 2 earns nothing");
    let (_, flags) = post(
        &app,
        "/crm_api/view_fraud_customers",
        &[("token", &b.staff)],
        &json!({"parent_business_id": b.name, "status": 1}),
    )
    .await;
    assert_eq!(flags["data"][0]["fraud_type"], "Points Earning Limit");
    let (_, mis) =
        post(&app, "/crm_api/get_fraud_list_mis", &[("token", &b.staff)], &json!({"parent_business_id": b.name})).await;
    assert_eq!(mis["data"]["by_type"]["Points Earning Limit"]["pending"], 1);
}

#[tokio::test]
async fn the_flag_state_machine_through_the_routes() {
    let app = spawn_app(&[]).await;
    let b = brand(&app, "brand-s", json!({"redemption_limit_value": 1, "redemption_limit_period": "week"})).await;
    let staff = [("token", b.staff.as_str())];
    let phone = "9876540003";
    let act = |path: &'static str, status: Option<u64>| {
        let mut body = json!({"parent_business_id": b.name, "contact": phone, "comment": "checked"});
        if let Some(status) = status {
            body["status"] = json!(status);
        }
        (path, body)
    };
    assert_eq!(post(&app, "/injestion/platform", &[], &order(b.name, "s1", phone, 1000.0)).await.0, 200);
    wait_customer(&app, b.name, phone, |c| c["loyalty_points"] == 100).await;
    // nothing flagged yet: block, unblock and resolve are all refused
    for (path, body) in [
        act("/crm_api/block_unblock_resolve_contacts", Some(2)),
        act("/crm_api/block_unblock_resolve_contacts", Some(3)),
        act("/crm_api/mark_resolve_contacts", None),
    ] {
        assert_eq!(post(&app, path, &staff, &body).await.0, 409, "{path} {body}");
    }
    assert_eq!(redeem(&app, &b, phone, "s-r1").await.0, 200);
    assert_eq!(redeem(&app, &b, phone, "s-r2").await.0, 403, "flagged");
    // flagged -> unblock is refused; flagged -> blocked
    let (path, body) = act("/crm_api/block_unblock_resolve_contacts", Some(3));
    assert_eq!(post(&app, path, &staff, &body).await.0, 409);
    let (path, body) = act("/crm_api/block_unblock_resolve_contacts", Some(2));
    let (status, answer) = post(&app, path, &staff, &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["flags"][0]["state"], "blocked");
    assert_eq!(answer["results"][0]["flags"][0]["status"], 2);
    assert_eq!(answer["results"][0]["is_blocked"], true);
    // blocked: redeem denied, earning skipped; blocked -> block and blocked -> resolve refused
    let (status, denied) = redeem(&app, &b, phone, "s-r3").await;
    assert_eq!(
        (status, denied["error_code"].clone(), denied["fraud_detected"].clone()),
        (403, json!("xE_108"), json!(true))
    );
    for (path, body) in
        [act("/crm_api/block_unblock_resolve_contacts", Some(2)), act("/crm_api/mark_resolve_contacts", None)]
    {
        assert_eq!(post(&app, path, &staff, &body).await.0, 409, "{path}");
    }
    let check = app
        .client
        .get(format!("{}/crm_api/fraud/check-customer-blocked?contact={phone}&parent_business_id={}", app.base, b.name))
        .header("token", &b.staff)
        .send()
        .await
        .unwrap();
    assert_eq!(crate::helpers::read(check).await.1["blocked"], true);
    // blocked -> unblocked: clean again
    let (path, body) = act("/crm_api/block_unblock_resolve_contacts", Some(3));
    let (status, answer) = post(&app, path, &staff, &body).await;
    assert_eq!((status, answer["results"][0]["flags"][0]["state"].clone()), (200, json!("unblocked")));
    assert_eq!(answer["results"][0]["is_blocked"], false);
    // a new breach (the next redemption in the same week), then flagged -> resolved
    assert_eq!(redeem(&app, &b, phone, "s-r4").await.0, 403);
    let (path, body) = act("/crm_api/mark_resolve_contacts", None);
    let (status, answer) = post(&app, path, &staff, &body).await;
    assert_eq!((status, answer["results"][0]["flags"][0]["state"].clone()), (200, json!("resolved")));
    assert_eq!(answer["results"][0]["flags"][0]["resolved_comment"], "checked");
    assert!(answer["results"][0]["flags"][0]["submitted_by"].is_string());
    let (_, groups) =
        post(&app, "/crm_api/group_list_fraud_contacts", &staff, &json!({"parent_business_id": b.name})).await;
    assert_eq!(groups["data"][0]["flags"], 2);
    // another brand's staff token cannot act here
    let other = create_token(&app, "staff", "brand-other").await;
    let (path, body) = act("/crm_api/mark_resolve_contacts", None);
    assert_eq!(
        post(&app, path, &[("token", &other)], &body).await,
        (403, json!({"message": "not allowed for this business"}))
    );
}

#[tokio::test]
async fn csv_blocklist_upload_reports_rows_and_blocks_loyalty() {
    let app = spawn_app(&[]).await;
    let b = brand(&app, "brand-b", json!({})).await;
    // line 1 header; 2 good; 3 starts with 5; 4 too short; 5 letters; 6 duplicate of 2; 7 good; 8 good (already listed after first upload)
    let csv = "Name,Phone\nA,9876540010\nB,5876540010\nC,98765\nD,98765abcde\nE,9876540010\nF,6000000001\n";
    let upload = |csv: String| {
        let form = reqwest::multipart::Form::new().text("parent_business_id", b.name).part(
            "file",
            reqwest::multipart::Part::bytes(csv.into_bytes()).file_name("blocklist.csv").mime_str("text/csv").unwrap(),
        );
        let request = app
            .client
            .post(format!("{}/crm_api/upload_blocklist_contacts", app.base))
            .header("token", &b.staff)
            .multipart(form);
        async move { crate::helpers::read(request.send().await.unwrap()).await }
    };
    let (status, body) = upload(csv.to_owned()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["inserted"], 2);
    let invalid_lines: Vec<u64> =
        body["invalid"].as_array().unwrap().iter().map(|i| i["line"].as_u64().unwrap()).collect();
    assert_eq!(invalid_lines, vec![3, 4, 5]);
    assert_eq!(body["duplicates"], json!([{"line": 6, "contact": "9876540010"}]));
    // uploading again: everything valid is a duplicate now
    let (_, again) = upload("Phone\n6000000001\n7000000002\n".to_owned()).await;
    assert_eq!((again["inserted"].clone(), again["duplicates"][0]["line"].clone()), (json!(1), json!(2)));
    // a file without a Phone column
    let (status, _) = upload("Mobile\n9876540010\n".to_owned()).await;
    assert_eq!(status, 400);
    // a body that is not multipart at all (found by schemathesis): the staff family's JSON 400
    let (status, body) = post(
        &app,
        "/crm_api/upload_blocklist_contacts",
        &[("token", &b.staff)],
        &json!({"parent_business_id": b.name}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["message"], "invalid request");
    let (_, list) = post(
        &app,
        "/crm_api/get_blocklist_contacts",
        &[("token", &b.staff)],
        &json!({"parent_business_id": b.name, "page_size": 2}),
    )
    .await;
    assert_eq!((list["total"].clone(), list["data"].as_array().unwrap().len()), (json!(3), 2));
    assert_eq!(list["data"][0]["source"], "csv");

    // a blocklisted customer earns nothing and cannot redeem
    let phone = "9876540010";
    assert_eq!(post(&app, "/injestion/platform", &[], &order(b.name, "b1", phone, 500.0)).await.0, 200);
    let customer = wait_customer(&app, b.name, phone, |c| c["total_orders"] == 1).await;
    assert_eq!(customer["loyalty_points"], 0);
    let (status, denied) = redeem(&app, &b, phone, "b-r1").await;
    assert_eq!((status, denied["error_code"].clone()), (403, json!("xE_108")));
    // removed from the blocklist: earning works again
    let (_, deleted) = post(
        &app,
        "/crm_api/delete_blocklist_contacts",
        &[("token", &b.staff)],
        &json!({"parent_business_id": b.name, "contacts": [phone]}),
    )
    .await;
    assert_eq!(deleted["deleted"], 1);
    assert_eq!(post(&app, "/injestion/platform", &[], &order(b.name, "b2", phone, 500.0)).await.0, 200);
    wait_customer(&app, b.name, phone, |c| c["loyalty_points"] == 50).await;

    // alert settings round trip through get_fraud_configuration
    let alerts = json!({"parent_business_id": b.name, "alert_recipients": ["9876500000"], "channel_type": "sms", "template": "Fraud: {contact}", "template_type": "UTILITY"});
    assert_eq!(post(&app, "/crm_api/configure_fraud_alert_settings", &[("token", &b.staff)], &alerts).await.0, 200);
    let bad =
        json!({"parent_business_id": b.name, "alert_recipients": ["12345"], "channel_type": "fax", "template": ""});
    let (status, answer) = post(&app, "/crm_api/configure_fraud_alert_settings", &[("token", &b.staff)], &bad).await;
    assert_eq!((status, answer["message"].clone()), (400, json!("invalid request")));
    let (_, config) =
        post(&app, "/crm_api/get_fraud_configuration", &[("token", &b.staff)], &json!({"parent_business_id": b.name}))
            .await;
    assert_eq!(config["data"]["alert_settings"]["channel_type"], "sms");
    assert!(config["data"]["wallet_rules"].is_object());
}
