//! The spec's open routes as an operator and a brand meet them: open by default, closed for one
//! brand by its own setting or for all by `ENGAGE_OPEN_ROUTES=closed`, a per-client limit, and
//! the tokens of the ingestion routes bound to their brand and outlet. Also the multipart upload
//! limit (413 naming it).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{read, spawn_app, token_for, TestApp};
use crate::platform::order;

async fn token(app: &TestApp, kind: &str, parent: &str, business: Option<&str>) -> String {
    token_for(app, kind, parent, business).await
}

async fn post(app: &TestApp, path: &str, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let mut request = app.client.post(format!("{}{path}", app.base)).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    read(request.send().await.unwrap()).await
}

async fn details(app: &TestApp, headers: &[(&str, &str)], brand: &str, phone: &str) -> (u16, Value) {
    post(app, "/crm_api/get/customer/details", headers, &json!({"parent_business_id": brand, "customer_number": phone}))
        .await
}

/// Waits until `brand`'s customer `phone` has `orders` orders (read with `headers`).
async fn wait_orders(app: &TestApp, headers: &[(&str, &str)], brand: &str, phone: &str, orders: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = details(app, headers, brand, phone).await;
        if status == 200 && body["customer"]["total_orders"] == orders {
            return body["customer"].clone();
        }
        assert!(Instant::now() < deadline, "{brand}/{phone}: {status} {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn an_ingestion_token_writes_only_into_its_own_brand_and_outlet() {
    let app = spawn_app(&[]).await;
    let a = token(&app, "ingestion", "brand-a", None).await;
    let a_outlet = token(&app, "ingestion", "brand-a", Some("outlet-1")).await;
    // brand B's customer, before
    assert_eq!(post(&app, "/injestion/platform", &[], &order("brand-b", "b-1", "9000000001", 80.0)).await.0, 200);
    let before = wait_orders(&app, &[], "brand-b", "9000000001", 1).await;

    for path in ["/injestion/pos_c", "/crm_api/injestion/pos_c", "/crm_api/api/injestion/pos_c"] {
        let mut body = order("brand-b", &format!("a{path}"), "9000000001", 5000.0);
        body["customer"]["name"] = json!("Mallory");
        let (status, answer) = post(&app, path, &[("token", &a)], &body).await;
        assert_eq!((status, &answer["error_code"]), (403, &json!("xE_103")), "{path}: {answer}");
    }
    let crm = json!({"parentBusinessId": "brand-b", "businessId": "outlet-1", "token": "crm-token-abcdef"});
    assert_eq!(post(&app, "/sync/crm/token", &[("token", &a)], &crm).await.0, 403);
    // its own brand, named or not, is fine; an outlet-limited token keeps to its outlet
    assert_eq!(
        post(&app, "/injestion/pos_c", &[("token", &a)], &order("brand-a", "a-1", "9000000002", 10.0)).await.0,
        200
    );
    let mut unnamed = order("brand-a", "a-2", "9000000002", 10.0);
    unnamed.as_object_mut().unwrap().remove("parentBusinessId");
    assert_eq!(post(&app, "/injestion/pos_c", &[("token", &a)], &unnamed).await.0, 200);
    assert_eq!(
        post(&app, "/injestion/pos_c", &[("token", &a_outlet)], &order("brand-a", "a-3", "9000000002", 10.0)).await.0,
        200
    );
    let mut elsewhere = order("brand-a", "a-4", "9000000002", 10.0);
    elsewhere["businessId"] = json!("outlet-2");
    let (status, answer) = post(&app, "/injestion/pos_c", &[("token", &a_outlet)], &elsewhere).await;
    assert_eq!((status, &answer["error_code"]), (403, &json!("xE_103")), "{answer}");
    assert!(answer["error_message"].as_str().unwrap().contains("outlet-1"), "{answer}");

    wait_orders(&app, &[], "brand-a", "9000000002", 3).await;
    let (_, after) = details(&app, &[], "brand-b", "9000000001").await;
    assert_eq!(after["customer"], before, "brand B's customer changed");
    app.stop().await;
}

#[tokio::test]
async fn a_brand_closes_its_open_routes_and_others_stay_open() {
    let app = spawn_app(&[]).await;
    let staff = token(&app, "staff", "brand-c", None).await;
    let integration = token(&app, "integration", "brand-c", None).await;
    let other = token(&app, "integration", "brand-d", None).await;
    let setting = |value: Option<&str>| {
        let mut body = json!({"parent_business_id": "brand-c"});
        if let Some(value) = value {
            body["open_routes"] = json!(value);
        }
        body
    };
    let (status, answer) = post(&app, "/crm_api/open_routes/settings", &[("token", &staff)], &setting(None)).await;
    assert_eq!((status, answer), (200, json!({"status": true, "open_routes": "open", "closed_for_all": false})));
    assert_eq!(post(&app, "/injestion/platform", &[], &order("brand-c", "c-1", "9000000003", 80.0)).await.0, 200);
    wait_orders(&app, &[], "brand-c", "9000000003", 1).await;

    let (status, answer) =
        post(&app, "/crm_api/open_routes/settings", &[("token", &staff)], &setting(Some("closed"))).await;
    assert_eq!((status, &answer["open_routes"]), (200, &json!("closed")), "{answer}");
    // closed for brand C: no credential is 401 xE_101, another brand's token 403 xE_103
    let (status, answer) = post(&app, "/injestion/platform", &[], &order("brand-c", "c-2", "9000000003", 80.0)).await;
    assert_eq!((status, &answer["error_code"]), (401, &json!("xE_101")), "{answer}");
    let (status, answer) = details(&app, &[], "brand-c", "9000000003").await;
    assert_eq!((status, &answer["error_code"]), (401, &json!("xE_101")), "{answer}");
    let (status, answer) = details(&app, &[("authorization", &other)], "brand-c", "9000000003").await;
    assert_eq!((status, &answer["error_code"]), (403, &json!("xE_103")), "{answer}");
    let rename = json!({"parent_business_id": "brand-c", "customer_number": "9000000003", "name": "Mallory"});
    assert_eq!(post(&app, "/pos_e/v1/update_pos_customer_details", &[], &rename).await.0, 401);
    // its own integration token passes
    let own = [("authorization", integration.as_str())];
    assert_eq!(post(&app, "/injestion/platform", &own, &order("brand-c", "c-3", "9000000003", 80.0)).await.0, 200);
    let customer = wait_orders(&app, &own, "brand-c", "9000000003", 2).await;
    assert_eq!(customer["name"], "Asha");
    // brand D's open routes are still open
    assert_eq!(post(&app, "/injestion/platform", &[], &order("brand-d", "d-1", "9000000004", 80.0)).await.0, 200);
    wait_orders(&app, &[], "brand-d", "9000000004", 1).await;
    // reopened
    assert_eq!(post(&app, "/crm_api/open_routes/settings", &[("token", &staff)], &setting(Some("open"))).await.0, 200);
    assert_eq!(details(&app, &[], "brand-c", "9000000003").await.0, 200);
    // another brand's staff cannot change it
    let d_staff = token(&app, "staff", "brand-d", None).await;
    assert_eq!(
        post(&app, "/crm_api/open_routes/settings", &[("token", &d_staff)], &setting(Some("closed"))).await.0,
        403
    );
    assert_eq!(details(&app, &[], "brand-c", "9000000003").await.0, 200);
    app.stop().await;
}

#[tokio::test]
async fn the_operator_closes_every_open_route_and_the_setting_says_so() {
    let app = spawn_app(&[("ENGAGE_OPEN_ROUTES", "closed")]).await;
    let staff = token(&app, "staff", "brand-e", None).await;
    let integration = token(&app, "integration", "brand-e", None).await;
    let (status, answer) = post(&app, "/injestion/platform", &[], &order("brand-e", "e-1", "9000000005", 80.0)).await;
    assert_eq!((status, &answer["error_code"]), (401, &json!("xE_101")), "{answer}");
    let own = [("authorization", integration.as_str())];
    assert_eq!(post(&app, "/injestion/platform", &own, &order("brand-e", "e-1", "9000000005", 80.0)).await.0, 200);
    wait_orders(&app, &own, "brand-e", "9000000005", 1).await;
    // a brand cannot reopen what the operator closed
    let body = json!({"parent_business_id": "brand-e", "open_routes": "open"});
    let (status, answer) = post(&app, "/crm_api/open_routes/settings", &[("token", &staff)], &body).await;
    assert_eq!((status, &answer["closed_for_all"]), (200, &json!(true)), "{answer}");
    assert_eq!(details(&app, &[], "brand-e", "9000000005").await.0, 401);
    app.stop().await;
}

#[tokio::test]
async fn the_open_routes_limit_each_client_and_leave_order_ingestion_alone() {
    let app = spawn_app(&[("ENGAGE_OPEN_ROUTES_RATE_LIMIT", "5")]).await;
    let mut statuses = Vec::new();
    for _ in 0..30 {
        statuses.push(details(&app, &[], "brand-f", "9000000006").await.0);
    }
    assert!(statuses.contains(&404) && statuses.contains(&429), "{statuses:?}");
    let (status, answer) = details(&app, &[], "brand-f", "9000000006").await;
    assert_eq!((status, &answer["error_code"]), (429, &json!("xE_429")), "{answer}");
    for i in 0..30 {
        let (status, answer) =
            post(&app, "/injestion/platform", &[], &order("brand-f", &format!("f-{i}"), "9000000006", 1.0)).await;
        assert_eq!(status, 200, "{answer}");
    }
    app.stop().await;
}

#[tokio::test]
async fn an_upload_over_the_limit_is_413_naming_it() {
    let app = spawn_app(&[("ENGAGE_MAX_UPLOAD_BYTES", "4096")]).await;
    let staff = token(&app, "staff", "brand-g", None).await;
    let big = format!("Phone\n{}", "9876543210\n".repeat(2000));
    for path in ["/crm_api/upload_blocklist_contacts", "/crm_api/create/bulk/campaign"] {
        let form = reqwest::multipart::Form::new()
            .text("parent_business_id", "brand-g")
            .part("file", reqwest::multipart::Part::bytes(big.clone().into_bytes()).file_name("list.csv"));
        let response = app
            .client
            .post(format!("{}{path}", app.base))
            .header("token", &staff)
            .multipart(form)
            .send()
            .await
            .unwrap();
        let (status, answer) = read(response).await;
        assert_eq!((status, answer), (413, json!({"message": "the body exceeds 4096 bytes"})), "{path}");
    }
    // under the limit the upload works
    let form = reqwest::multipart::Form::new()
        .text("parent_business_id", "brand-g")
        .part("file", reqwest::multipart::Part::bytes(b"Phone\n9876543210\n".to_vec()).file_name("list.csv"));
    let response = app
        .client
        .post(format!("{}/crm_api/upload_blocklist_contacts", app.base))
        .header("token", &staff)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    app.stop().await;
}

#[tokio::test]
async fn the_process_says_once_at_start_which_routes_are_open_and_how_to_close_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut open = crate::procs::Engage::start(&dir.path().join("open"), crate::procs::free_port(), &[]).await;
    let log = open.stderr();
    assert_eq!(log.matches("routes are open").count(), 1, "{log}");
    for route in ["/injestion/platform", "/pos_e/v1/redeem_loyalty_points", "/crm_api/get/customer/details"] {
        assert!(log.contains(route), "{route} not named:\n{log}");
    }
    assert!(log.contains("ENGAGE_OPEN_ROUTES=closed") && log.contains("/crm_api/open_routes/settings"), "{log}");
    open.kill9();
    let env = [("ENGAGE_OPEN_ROUTES", "closed")];
    let mut closed = crate::procs::Engage::start(&dir.path().join("closed"), crate::procs::free_port(), &env).await;
    let log = closed.stderr();
    assert!(!log.contains("routes are open") && log.contains("require an integration token"), "{log}");
    closed.kill9();
}

#[tokio::test]
async fn an_outlet_limited_token_acts_on_its_outlet_and_nowhere_else() {
    let app = spawn_app(&[]).await;
    let brand = token(&app, "staff", "brand-h", None).await;
    let outlet = token(&app, "staff", "brand-h", Some("o1")).await;
    let balance = |token: String, outlet: &'static str| {
        let app = &app;
        async move {
            let body = json!({"parent_business_id": "brand-h", "business_id": outlet});
            post(app, "/crm_api/wallet/balance", &[("token", &token)], &body).await
        }
    };
    // left out, the outlet is the token's
    let recharge = json!({"parent_business_id": "brand-h", "amount": 250, "reference": "h-1"});
    let (status, answer) = post(&app, "/crm_api/wallet/recharge", &[("token", &outlet)], &recharge).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(balance(brand.clone(), "o1").await.1["balance"], json!("250"));
    // another outlet, or a brand-level route, is refused and changes nothing
    let mut elsewhere = recharge.clone();
    elsewhere["business_id"] = json!("o2");
    elsewhere["reference"] = json!("h-2");
    let (status, answer) = post(&app, "/crm_api/wallet/recharge", &[("token", &outlet)], &elsewhere).await;
    assert_eq!(status, 403, "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("\"o1\""), "{answer}");
    assert_eq!(balance(brand.clone(), "o2").await.1["balance"], json!("0"));
    let rules = json!({"parent_business_id": "brand-h", "earn_percent": 50});
    let (status, answer) = post(&app, "/crm_api/add_edit_rules", &[("token", &outlet)], &rules).await;
    assert_eq!(status, 403, "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("whole brand"), "{answer}");
    // its outlet's figures, not the brand's
    let summary = json!({"parent_business_id": "brand-h"});
    assert_eq!(post(&app, "/stats/dashboard/summary", &[("token", &outlet)], &summary).await.0, 200);
    let other = json!({"parent_business_id": "brand-h", "business_id": "o2"});
    assert_eq!(post(&app, "/stats/dashboard/summary", &[("token", &outlet)], &other).await.0, 403);
    // an outlet-limited ingestion token's order lands at its outlet
    let pos = token(&app, "ingestion", "brand-h", Some("o1")).await;
    let mut order = order("brand-h", "h-1", "9000000008", 40.0);
    order.as_object_mut().unwrap().remove("businessId");
    assert_eq!(post(&app, "/injestion/pos_c", &[("token", &pos)], &order).await.0, 200);
    wait_orders(&app, &[], "brand-h", "9000000008", 1).await;
    app.stop().await;
}
