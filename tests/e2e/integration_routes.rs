//! `/integration/v1` customer routes and `/pos_e/v1` loyalty routes.

use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::platform::{create_token, order, wait_customer};

async fn post(app: &TestApp, path: &str, auth: Option<&str>, body: &Value) -> (u16, Value) {
    let mut request = app.client.post(format!("{}{path}", app.base)).json(body);
    if let Some(token) = auth {
        request = request.header("authorization", token);
    }
    crate::helpers::read(request.send().await.unwrap()).await
}

#[tokio::test]
async fn integration_customer_routes() {
    let app = spawn_app(&[]).await;
    let token = create_token(&app, "integration", "brand-i").await;
    let auth = Some(token.as_str());
    let phone = "9876560001";
    let (status, body) = post(
        &app,
        "/integration/v1/create_user",
        auth,
        &json!({"customer_number": phone, "name": "Isha", "email": "isha@example.com"}),
    )
    .await;
    assert_eq!(
        (status, body["customer"]["name"].clone(), body["customer"]["segment"].clone()),
        (200, json!("Isha"), json!("prospect")),
        "{body}"
    );
    let (status, body) =
        post(&app, "/integration/v1/update_user_profile", auth, &json!({"customer_number": phone, "name": "Isha K"}))
            .await;
    assert_eq!((status, body["customer"]["name"].clone()), (200, json!("Isha K")));
    let (status, body) = post(&app, "/integration/v1/get_user_profile", auth, &json!({"customer_number": phone})).await;
    assert_eq!((status, body["customer"]["customer_number"].clone()), (200, json!(phone)));
    let (status, body) = post(
        &app,
        "/integration/v1/fcm_token_ingestion",
        auth,
        &json!({"customer_number": phone, "fcm_token": "fcm-abcdefgh"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) =
        post(&app, "/integration/v1/fcm_token_ingestion", auth, &json!({"customer_number": phone})).await;
    assert_eq!((status, body["error_code"].clone()), (400, json!("xE_102")));
    let (status, body) =
        post(&app, "/integration/v1/get_user_profile", auth, &json!({"customer_number": "9000000001"})).await;
    assert_eq!((status, body["error_code"].clone()), (404, json!("xE_404")));
    let (status, body) = post(&app, "/integration/v1/get_user_profile", None, &json!({"customer_number": phone})).await;
    assert_eq!((status, body["error_code"].clone()), (401, json!("xE_101")));
    let (status, _) = post(&app, "/integration/v1/create_user", auth, &json!({"customer_number": "12"})).await;
    assert_eq!(status, 400);

    // deduct: once per reference
    let staff = create_token(&app, "staff", "brand-i").await;
    let rules = json!({"parent_business_id": "brand-i", "earn_percent": 10, "min_bill": 0, "min_redeem_points": 1});
    let response = app
        .client
        .post(format!("{}/crm_api/add_edit_rules", app.base))
        .header("token", &staff)
        .json(&rules)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        app.client
            .post(format!("{}/injestion/platform", app.base))
            .json(&order("brand-i", "i1", phone, 500.0))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    wait_customer(&app, "brand-i", phone, |c| c["loyalty_points"] == 50).await;
    let deduct = json!({"customer_number": phone, "points": 20, "reference": "adj-1", "reason": "goodwill reversal"});
    let (status, first) = post(&app, "/integration/v1/deduct_wallet_points", auth, &deduct).await;
    assert_eq!(
        (status, first["deducted"].clone(), first["wallet_balance"].clone()),
        (200, json!(20), json!(30)),
        "{first}"
    );
    let (_, again) = post(&app, "/integration/v1/deduct_wallet_points", auth, &deduct).await;
    assert_eq!((again["txn_id"].clone(), again["wallet_balance"].clone()), (first["txn_id"].clone(), json!(30)));
    let (status, _) =
        post(&app, "/integration/v1/deduct_wallet_points", auth, &json!({"customer_number": phone, "points": 5})).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn pos_e_loyalty_routes() {
    let app = spawn_app(&[]).await;
    let staff = create_token(&app, "staff", "brand-e").await;
    let rules = json!({"parent_business_id": "brand-e", "earn_percent": 10, "min_bill": 0, "min_redeem_points": 1});
    assert_eq!(
        app.client
            .post(format!("{}/crm_api/add_edit_rules", app.base))
            .header("token", &staff)
            .json(&rules)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let phone = "9876560002";
    let (status, body) = post(
        &app,
        "/pos_e/v1/update_pos_customer_details",
        None,
        &json!({"parent_business_id": "brand-e", "customer_number": phone, "name": "Esha"}),
    )
    .await;
    assert_eq!((status, body["customer"]["name"].clone()), (200, json!("Esha")));
    assert_eq!(
        app.client
            .post(format!("{}/injestion/platform", app.base))
            .json(&order("brand-e", "e1", phone, 300.0))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    wait_customer(&app, "brand-e", phone, |c| c["loyalty_points"] == 30).await;
    let (status, body) = post(
        &app,
        "/pos_e/v1/get_loyalty_details",
        None,
        &json!({"parent_business_id": "brand-e", "customer_number": phone}),
    )
    .await;
    assert_eq!((status, body["loyalty_points"].clone()), (200, json!(30)));
    let (status, body) = post(&app, "/pos_e/v1/get_loyalty_details", None, &json!({"customer_number": phone})).await;
    assert_eq!(
        (status, body["error_code"].clone()),
        (400, json!("xE_102")),
        "the brand is required on the open routes"
    );
    let (status, body) = post(
        &app,
        "/pos_e/v1/redeem_loyalty_points",
        None,
        &json!({"parent_business_id": "brand-e", "customer_number": phone, "points": 10, "order_id": "pos-9"}),
    )
    .await;
    assert_eq!((status, body["wallet_balance"].clone()), (200, json!(20)), "{body}");
    assert!(body["expires_at"].is_string());
    let (status, body) = post(
        &app,
        "/pos_e/v1/revoke_loyalty_points",
        None,
        &json!({"parent_business_id": "brand-e", "customer_number": phone, "order_id": "pos-9"}),
    )
    .await;
    assert_eq!((status, body["reverted"].clone(), body["wallet_balance"].clone()), (200, json!(true), json!(30)));
}

#[tokio::test]
async fn rewards_are_bought_with_points_and_coupons_used_or_revoked() {
    let app = spawn_app(&[]).await;
    let staff = create_token(&app, "staff", "brand-r").await;
    let token = create_token(&app, "integration", "brand-r").await;
    let auth = Some(token.as_str());
    let staff_post = |path: &'static str, body: Value| {
        let request = app.client.post(format!("{}{path}", app.base)).header("token", staff.as_str()).json(&body);
        async move { crate::helpers::read(request.send().await.unwrap()).await }
    };
    assert_eq!(
        staff_post(
            "/crm_api/add_edit_rules",
            json!({"parent_business_id": "brand-r", "earn_percent": 10, "min_bill": 0})
        )
        .await
        .0,
        200
    );
    let (status, body) = staff_post(
        "/crm_api/add_edit_reward",
        json!({"parent_business_id": "brand-r", "name": "Free coffee", "points_cost": 40, "valid_days": 7}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let reward_id = body["reward"]["reward_id"].as_str().unwrap().to_owned();
    let (status, _) =
        staff_post("/crm_api/add_edit_reward", json!({"parent_business_id": "brand-r", "name": "x", "points_cost": 0}))
            .await;
    assert_eq!(status, 400);
    let phone = "9876560003";
    assert_eq!(
        app.client
            .post(format!("{}/injestion/platform", app.base))
            .json(&order("brand-r", "r1", phone, 1000.0))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    wait_customer(&app, "brand-r", phone, |c| c["loyalty_points"] == 100).await;

    let (_, rewards) = post(&app, "/integration/v1/get_rewards", auth, &json!({"customer_number": phone})).await;
    assert_eq!(
        (rewards["rewards"][0]["affordable"].clone(), rewards["loyalty_points"].clone()),
        (json!(true), json!(100))
    );
    let buy = json!({"customer_number": phone, "reward_id": reward_id, "reference": "buy-1"});
    let (status, first) = post(&app, "/integration/v1/purchase_rewards", auth, &buy).await;
    assert_eq!(
        (status, first["loyalty_points"].clone(), first["coupon"]["status"].clone()),
        (200, json!(60), json!("issued")),
        "{first}"
    );
    let code = first["coupon"]["coupon_code"].as_str().unwrap().to_owned();
    let (_, again) = post(&app, "/integration/v1/purchase_rewards", auth, &buy).await;
    assert_eq!(
        (again["coupon"]["coupon_code"].clone(), again["loyalty_points"].clone()),
        (json!(code), json!(60)),
        "a retried purchase issues nothing new"
    );
    // use it at the POS (open route), then it cannot be used or revoked again
    let (status, used) = post(
        &app,
        "/pos_e/v1/redeem_coupon_details",
        None,
        &json!({"parent_business_id": "brand-r", "coupon_code": code, "order_id": "pos-1"}),
    )
    .await;
    assert_eq!((status, used["coupon"]["status"].clone()), (200, json!("pending")), "{used}");
    // the POS order arrives: the coupon is redeemed for good
    assert_eq!(
        app.client
            .post(format!("{}/injestion/platform", app.base))
            .json(&order("brand-r", "pos-1", phone, 1.0))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (_, details) = post(
            &app,
            "/pos_e/v1/get_coupon_details",
            None,
            &json!({"parent_business_id": "brand-r", "coupon_code": code}),
        )
        .await;
        if details["coupon"]["status"] == "redeemed" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the POS order never confirmed the coupon: {details}");
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let (status, body) =
        post(&app, "/integration/v1/redeem_rewards", auth, &json!({"coupon_code": code, "order_id": "pos-2"})).await;
    assert_eq!((status, body["error_code"].clone()), (400, json!("xE_102")));
    assert_eq!(
        post(&app, "/integration/v1/revoke_reward", auth, &json!({"customer_number": phone, "coupon_code": code}))
            .await
            .0,
        400
    );
    // a second coupon, revoked: points back
    let (_, second) = post(
        &app,
        "/integration/v1/purchase_rewards",
        auth,
        &json!({"customer_number": phone, "reward_id": reward_id}),
    )
    .await;
    let code2 = second["coupon"]["coupon_code"].as_str().unwrap().to_owned();
    assert_eq!(second["loyalty_points"], 20);
    let (status, revoked) =
        post(&app, "/integration/v1/revoke_reward", auth, &json!({"customer_number": phone, "coupon_code": code2}))
            .await;
    assert_eq!(
        (status, revoked["coupon"]["status"].clone(), revoked["loyalty_points"].clone()),
        (200, json!("revoked"), json!(60))
    );
    let (status, details) = post(
        &app,
        "/pos_e/v1/get_coupon_details",
        None,
        &json!({"parent_business_id": "brand-r", "coupon_code": code2}),
    )
    .await;
    assert_eq!((status, details["coupon"]["status"].clone()), (200, json!("revoked")));
    // a third coupon used at the POS whose order never comes goes back to issued (the revoke job)
    let (status, third) = post(
        &app,
        "/integration/v1/purchase_rewards",
        auth,
        &json!({"customer_number": phone, "reward_id": reward_id}),
    )
    .await;
    assert_eq!(status, 200);
    let code3 = third["coupon"]["coupon_code"].as_str().unwrap().to_owned();
    let (_, pending) = post(
        &app,
        "/pos_e/v1/redeem_coupon_details",
        None,
        &json!({"parent_business_id": "brand-r", "coupon_code": code3, "order_id": "pos-never"}),
    )
    .await;
    assert_eq!(pending["coupon"]["status"], "pending");
    let key = std::fs::read_to_string(app.dir.path().join("admin.key")).unwrap();
    let run_revoke = |minutes: i64| {
        let now = (chrono::Utc::now() + chrono::Duration::minutes(minutes)).to_rfc3339();
        let request = app
            .client
            .post(format!("{}/admin/jobs/run", app.base))
            .header("x-admin-key", key.trim())
            .json(&json!({"name": "pos_revoke", "now": now}));
        async move { request.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    assert_eq!(run_revoke(5).await["outcome"]["reverted"], 0);
    assert_eq!(run_revoke(31).await["outcome"]["reverted"], 1);
    let (_, back) = post(
        &app,
        "/pos_e/v1/get_coupon_details",
        None,
        &json!({"parent_business_id": "brand-r", "coupon_code": code3}),
    )
    .await;
    assert_eq!(back["coupon"]["status"], "issued");
    // 20 points left: not enough for a fourth
    let (status, body) = post(
        &app,
        "/integration/v1/purchase_rewards",
        auth,
        &json!({"customer_number": phone, "reward_id": reward_id}),
    )
    .await;
    assert_eq!((status, body["error_code"].clone()), (409, json!("xE_105")));
    let (status, _) = post(
        &app,
        "/pos_e/v1/get_coupon_details",
        None,
        &json!({"parent_business_id": "brand-r", "coupon_code": "ZZZZZZZZ"}),
    )
    .await;
    assert_eq!(status, 404);
}
