//! The engagement platform's ingestion routes on the embedded store and bus: every route's happy
//! path and bad input, each auth family's failure body, processing (LTV/LTO/AOV, idempotency,
//! updates), the queue record, url-encoded bodies and the serverless tier.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};

/// Creates a token through the loopback admin route, with the app's admin key.
pub async fn create_token(app: &TestApp, kind: &str, parent: &str) -> String {
    crate::helpers::token_for(app, kind, parent, None).await
}

pub fn order(tenant: &str, id: &str, phone: &str, amount: f64) -> Value {
    json!({"parentBusinessId": tenant, "businessId": "outlet-1", "orderId": id,
           "customer": {"name": "Asha", "phone": phone}, "items": [{"name": "tea", "qty": 1, "price": amount}],
           "amount": amount, "orderTime": "2026-11-21 10:00:00"})
}

async fn post(app: &TestApp, path: &str, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let mut request = app.client.post(format!("{}{path}", app.base)).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    crate::helpers::read(request.send().await.unwrap()).await
}

/// Customer details, waiting (with a deadline) until `check` holds.
pub async fn wait_customer(app: &TestApp, tenant: &str, phone: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = post(
            app,
            "/crm_api/get/customer/details",
            &[],
            &json!({"parent_business_id": tenant, "customer_number": phone}),
        )
        .await;
        if status == 200 && check(&body["customer"]) {
            return body["customer"].clone();
        }
        assert!(Instant::now() < deadline, "customer {tenant}/{phone} never matched; last answer {status} {body}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn integration_failure() -> Value {
    json!({"status": 0, "error_code": "xE_101", "error_message": "Authentication Failed"})
}

#[tokio::test]
async fn every_route_accepts_its_body_and_refuses_bad_input() {
    let app = spawn_app(&[("ENGAGE_INTERNAL_JWT_SECRET", "internal-secret-for-tests")]).await;
    let integration = create_token(&app, "integration", "brand-r").await;
    let ingestion = create_token(&app, "ingestion", "brand-r").await;
    let internal = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "monolith", "exp": chrono::Utc::now().timestamp() + 300}),
        &jsonwebtoken::EncodingKey::from_secret(b"internal-secret-for-tests"),
    )
    .unwrap();
    let bearer = format!("Bearer {internal}");
    let t = "brand-r";
    let none: &[(&str, &str)] = &[];
    let int: &[(&str, &str)] = &[("authorization", integration.as_str())];
    let ing: &[(&str, &str)] = &[("token", ingestion.as_str())];
    let jwt: &[(&str, &str)] = &[("authorization", bearer.as_str())];
    let mut n = 0;
    let mut next_order = || {
        n += 1;
        order(t, &format!("r{n}"), "9876500001", 10.0)
    };
    type Headers<'a> = &'a [(&'a str, &'a str)];
    let routes: Vec<(&str, Headers, Value)> = vec![
        ("/injestion/platform", none, next_order()),
        ("/injestion/pos_a", none, next_order()),
        ("/injestion/pos_d", int, next_order()),
        ("/injestion/pos_e", none, next_order()),
        ("/injestion/pos_c", ing, next_order()),
        ("/injestion/salon/order", none, next_order()),
        ("/api/ingestion/orderPush", int, next_order()),
        ("/crm_api/injestion/platform", none, next_order()),
        ("/crm_api/injestion/pos_a", none, next_order()),
        ("/crm_api/injestion/pos_c", ing, next_order()),
        ("/crm_api/injestion/orderPush", int, next_order()),
        ("/crm_api/injestion/pos_d", int, next_order()),
        ("/crm_api/injestion/pos_e", none, next_order()),
        ("/crm_api/api/injestion/platform", none, next_order()),
        ("/crm_api/api/injestion/pos_a", none, next_order()),
        ("/crm_api/api/injestion/pos_c", ing, next_order()),
        ("/crm_api/api/injestion/orderPush", int, next_order()),
        ("/crm_api/api/injestion/pos_d", int, next_order()),
        ("/crm_api/api/injestion/pos_e", none, next_order()),
        (
            "/injestion/createCustomer",
            none,
            json!({"parentBusinessId": t, "businessId": "outlet-1", "phone": "9876500002", "name": "Ravi", "email": "ravi@example.com"}),
        ),
        (
            "/injestion/fcms",
            none,
            json!({"parentBusinessId": t, "phone": "9876500002", "fcm_token": "fcm-token-123456", "platform": "android"}),
        ),
        ("/injestion/checkin", none, json!({"parentBusinessId": t, "businessId": "outlet-1", "phone": "9876500002"})),
        ("/update/business/status", none, json!({"parentBusinessId": t, "businessId": "outlet-1", "status": 1})),
        ("/insert/merchant/data", none, json!({"parentBusinessId": t, "businessId": "outlet-1", "name": "Outlet One"})),
        ("/sync/crm/token", ing, json!({"parentBusinessId": t, "businessId": "outlet-1", "token": "crm-token-abcdef"})),
        ("/chat/send", jwt, json!({"to": "9876500001", "text": "hello"})),
        ("/chat/receipts", none, json!({"message_id": "m1", "status": "delivered"})),
    ];
    let order_routes = routes.iter().filter(|(_, _, body)| body.get("orderId").is_some()).count() as u64;
    for (path, headers, body) in &routes {
        let (status, answer) = post(&app, path, headers, body).await;
        assert_eq!((status, answer.clone()), (200, json!({"status": 1})), "{path}");
        // bad input: the route's error family, xE_102 with pointers
        let (status, answer) = post(&app, path, headers, &json!({"parentBusinessId": t, "unexpected": true})).await;
        if *path != "/chat/send" && *path != "/chat/receipts" {
            assert_eq!(status, 400, "{path}: {answer}");
            assert_eq!(answer["error_code"], "xE_102", "{path}");
            assert!(!answer["errors"].as_array().unwrap().is_empty(), "{path}");
        }
        let response = app
            .client
            .post(format!("{}{path}", app.base))
            .header("content-type", "application/json")
            .headers(headers.iter().map(|(k, v)| (k.parse().unwrap(), v.parse().unwrap())).collect())
            .body("{broken")
            .send()
            .await
            .unwrap();
        let (status, answer) = crate::helpers::read(response).await;
        assert_eq!((status, answer["error_code"].clone()), (400, json!("xE_102")), "{path}");
    }
    // every order reached the customer, once
    let customer = wait_customer(&app, t, "9876500001", |c| c["total_orders"] == order_routes).await;
    assert_eq!(customer["lifetime_value"], json!(10.0 * order_routes as f64));
    let ravi = wait_customer(&app, t, "9876500002", |c| c["name"] == "Ravi").await;
    assert_eq!(ravi["segment"], "prospect");
    assert_eq!(ravi["total_orders"], 0);
}

#[tokio::test]
async fn each_auth_family_fails_with_its_own_body() {
    let app = spawn_app(&[("ENGAGE_INTERNAL_JWT_SECRET", "internal-secret-for-tests")]).await;
    let integration = create_token(&app, "integration", "brand-a").await;
    let staff = create_token(&app, "staff", "brand-a").await;
    let ingestion = create_token(&app, "ingestion", "brand-a").await;
    let body = order("brand-a", "x1", "9876500003", 5.0);

    // integration family: 401 {status 0, xE_101, Authentication Failed}
    for headers in [
        vec![],
        vec![("authorization", "nope")],
        vec![("authorization", staff.as_str())],
        vec![("authorization", "Bearer x")],
    ] {
        assert_eq!(
            post(&app, "/api/ingestion/orderPush", &headers, &body).await,
            (401, integration_failure()),
            "{headers:?}"
        );
        assert_eq!(post(&app, "/injestion/pos_d", &headers, &body).await, (401, integration_failure()));
    }
    // an integration token sets the brand: another brand in the body is refused
    let (status, answer) = post(
        &app,
        "/api/ingestion/orderPush",
        &[("authorization", &integration)],
        &order("brand-b", "x2", "9876500003", 5.0),
    )
    .await;
    assert_eq!((status, answer["error_code"].clone()), (403, json!("xE_103")));
    // ... and a body without parentBusinessId takes the token's
    let mut no_parent = order("brand-a", "x3", "9876500003", 5.0);
    no_parent.as_object_mut().unwrap().remove("parentBusinessId");
    assert_eq!(post(&app, "/api/ingestion/orderPush", &[("authorization", &integration)], &no_parent).await.0, 200);

    // staff family (ingestion tokens too): 403 {message: "invalid credentials"}
    let invalid = json!({"message": "invalid credentials"});
    for headers in
        [vec![], vec![("token", "nope")], vec![("token", integration.as_str())], vec![("token", staff.as_str())]]
    {
        assert_eq!(post(&app, "/injestion/pos_c", &headers, &body).await, (403, invalid.clone()), "{headers:?}");
        assert_eq!(post(&app, "/sync/crm/token", &headers, &json!({})).await, (403, invalid.clone()));
    }
    assert_eq!(post(&app, "/injestion/pos_c", &[("token", &ingestion)], &body).await.0, 200);
    for headers in [vec![], vec![("token", ingestion.as_str())]] {
        let update = json!({"parent_business_id": "brand-a", "customer_number": "9876500003", "name": "New"});
        assert_eq!(post(&app, "/crm_api/update/customer/details", &headers, &update).await, (403, invalid.clone()));
    }
    // a staff token of another brand may not update this brand's customers
    let other_staff = create_token(&app, "staff", "brand-z").await;
    wait_customer(&app, "brand-a", "9876500003", |c| c["total_orders"] == 2).await;
    let update = json!({"parent_business_id": "brand-a", "customer_number": "9876500003", "name": "Renamed"});
    let (status, answer) = post(&app, "/crm_api/update/customer/details", &[("token", &other_staff)], &update).await;
    assert_eq!((status, answer["message"].clone()), (403, json!("not allowed for this business")));
    let (status, answer) = post(&app, "/crm_api/update/customer/details", &[("token", &staff)], &update).await;
    assert_eq!((status, answer["customer"]["name"].clone()), (200, json!("Renamed")), "{answer}");

    // internal JWT: 401 {message: "invalid token"}
    let wrong = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "x", "exp": chrono::Utc::now().timestamp() + 300}),
        &jsonwebtoken::EncodingKey::from_secret(b"another-secret"),
    )
    .unwrap();
    for headers in
        [vec![], vec![("authorization", format!("Bearer {wrong}"))], vec![("authorization", integration.clone())]]
    {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            post(&app, "/chat/send", &headers, &json!({"a": 1})).await,
            (401, json!({"message": "invalid token"}))
        );
    }

    // a revoked token stops working
    let key = std::fs::read_to_string(app.dir.path().join("admin.key")).unwrap();
    let list = app.admin_get("/admin/tokens").await;
    let id = list["tokens"].as_array().unwrap().iter().find(|t| t["kind"] == "ingestion").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let response = app
        .client
        .delete(format!("{}/admin/tokens/{id}", app.base))
        .header("x-admin-key", key.trim())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(post(&app, "/injestion/pos_c", &[("token", &ingestion)], &body).await, (403, invalid));
    // the admin routes need the key
    let response =
        app.client.get(format!("{}/admin/tokens", app.base)).header("x-admin-key", "wrong").send().await.unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn totals_are_exact_idempotent_and_updated() {
    let app = spawn_app(&[]).await;
    let t = "brand-t";
    for (id, amount) in [("o1", 100.25), ("o2", 49.75), ("o3", 150.0)] {
        assert_eq!(post(&app, "/injestion/platform", &[], &order(t, id, "9876500010", amount)).await.0, 200);
    }
    // the same order again (a POS retry), twice
    for _ in 0..2 {
        assert_eq!(post(&app, "/injestion/pos_a", &[], &order(t, "o2", "9876500010", 49.75)).await.0, 200);
    }
    let customer = wait_customer(&app, t, "9876500010", |c| c["total_orders"] == 3).await;
    assert_eq!(customer["lifetime_value"], json!(300.0));
    assert_eq!(customer["average_order_value"], json!(100.0));
    assert_eq!(customer["last_order"], "2026-11-21");
    assert_eq!(customer["segment"], "repeat");
    assert_eq!(customer["loyalty_points"], 0);
    // an updated order replaces its amount
    assert_eq!(post(&app, "/injestion/platform", &[], &order(t, "o3", "9876500010", 90.0)).await.0, 200);
    let customer = wait_customer(&app, t, "9876500010", |c| c["lifetime_value"] == json!(240.0)).await;
    assert_eq!(customer["total_orders"], 3);
    assert_eq!(customer["average_order_value"], json!(80.0));
    // unknown customer and bad body
    let (status, answer) = post(
        &app,
        "/crm_api/get/customer/details",
        &[],
        &json!({"parent_business_id": t, "customer_number": "9999999999"}),
    )
    .await;
    assert_eq!((status, answer["error_code"].clone()), (404, json!("xE_404")));
    let (status, answer) = post(&app, "/crm_api/get/customer/details", &[], &json!({"customer_number": "x"})).await;
    assert_eq!((status, answer["error_code"].clone()), (400, json!("xE_102")));
}

#[tokio::test]
async fn url_encoded_bodies_and_instant_orders() {
    let app = spawn_app(&[]).await;
    let response = app
        .client
        .post(format!("{}/injestion/pos_e", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("parentBusinessId=brand-f&businessId=o1&orderId=f1&customer%5Bphone%5D=9876500020&customer%5Bname%5D=Meera&amount=12.5")
        .send()
        .await
        .unwrap();
    assert_eq!(crate::helpers::read(response).await, (200, json!({"status": 1})));
    let mut instant = order("brand-f", "f2", "9876500020", 7.5);
    instant["customer"]["name"] = json!("Meera");
    let (status, answer) = post(&app, "/injestion/instant/order", &[], &instant).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["processed"], true);
    // the instant answer already counts its own order
    assert!(answer["customer"]["total_orders"].as_u64().unwrap() >= 1);
    let customer = wait_customer(&app, "brand-f", "9876500020", |c| c["total_orders"] == 2).await;
    assert_eq!(customer["lifetime_value"], json!(20.0));
    assert_eq!(customer["name"], "Meera");
}

#[tokio::test]
async fn queue_records_follow_the_spec_table() {
    let app = spawn_app(&[]).await;
    let t = "brand-q";
    assert_eq!(post(&app, "/crm_api/injestion/pos_a", &[], &order(t, "q1", "9876500030", 1.0)).await.0, 200);
    assert_eq!(post(&app, "/injestion/platform", &[], &order(t, "q2", "9876500030", 1.0)).await.0, 200);
    wait_customer(&app, t, "9876500030", |c| c["total_orders"] == 2).await;
    let dir = app.stop().await;
    let store: std::sync::Arc<dyn engage_storage::Store> =
        std::sync::Arc::new(engage_storage::EmbeddedStore::open(dir.path()).unwrap());
    let repo = engage_actors::inspect::repo::Repo::new(store);
    let day = engage_actors::domain::time::ist_day(chrono::Utc::now());
    let records = repo.queue_records(t, &day, 10).await.unwrap();
    assert_eq!(records.len(), 2);
    let lambda = records.iter().find(|r| r.api_source.is_some()).expect("the serverless record");
    assert_eq!(lambda.source, 2, "pos_a is source 2");
    assert_eq!(lambda.api_source.as_deref(), Some("lambda"));
    assert_eq!(lambda.status, engage_actors::inspect::repo::STATUS_PROCESSED);
    assert!(
        chrono::NaiveDateTime::parse_from_str(&lambda.inserted_at, "%Y-%m-%d %H:%M:%S").is_ok(),
        "{}",
        lambda.inserted_at
    );
    let direct = records.iter().find(|r| r.api_source.is_none()).unwrap();
    assert_eq!(direct.source, 1);
    assert_eq!(direct.data["orderId"], "q2");
    let outlet =
        repo.json(engage_actors::inspect::repo::BUSINESSES, t, b"outlet-1").await.unwrap().expect("business row");
    assert!(outlet["last_order_hit"].is_string(), "the serverless tier updates the last-order-hit marker: {outlet}");
}

/// Found by schemathesis: `orderTime` "0000-00-00 00:00:00" matched the pattern, was accepted, and
/// the customer's `last_order` became "0000-00-00" (not a date). Now a 400 at the edge.
#[tokio::test]
async fn an_order_time_that_is_no_real_time_is_refused() {
    let app = spawn_app(&[]).await;
    for time in ["0000-00-00 00:00:00", "2026-02-30 10:00:00", "2026-11-21 25:00:00"] {
        let order = json!({"parentBusinessId": "brand-t", "businessId": "o-1", "orderId": "t-1",
                           "customer": {"phone": "9876543210"}, "amount": 10, "orderTime": time});
        let (status, body) = post(&app, "/injestion/platform", &[], &order).await;
        assert_eq!(status, 400, "{time}: {body}");
        assert_eq!(body["error_code"], "xE_102");
        assert_eq!(body["errors"][0]["pointer"], "/orderTime");
    }
    let good = json!({"parentBusinessId": "brand-t", "businessId": "o-1", "orderId": "t-1",
                      "customer": {"phone": "9876543210"}, "amount": 10, "orderTime": "2026-11-21 10:00:00"});
    assert_eq!(post(&app, "/injestion/platform", &[], &good).await.0, 200);
}
