//! What processing cannot hold is refused at the edge (issue 37's poisons as regression tests):
//! amounts, prices and quantities past their documented bounds get 400 with a pointer, and an
//! event too large for the rows that hold it gets 413; the largest accepted orders are processed.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{spawn_app, token_for, TestApp};

fn order(id: &str, phone: &str, amount: Value) -> Value {
    json!({"parentBusinessId": "brand-b", "businessId": "o1", "orderId": id, "customer": {"phone": phone},
           "items": [{"name": "tea", "qty": 1, "price": 70}], "amount": amount, "orderTime": "2026-11-21 10:00:00"})
}

async fn customer(app: &TestApp, phone: &str, orders: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = app
            .post_json(
                "/crm_api/get/customer/details",
                &json!({"parent_business_id": "brand-b", "customer_number": phone}),
            )
            .await;
        if status == 200 && body["customer"]["total_orders"] == orders {
            return body["customer"].clone();
        }
        assert!(Instant::now() < deadline, "{phone}: {status} {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn orders_past_the_bounds_are_refused_and_the_largest_accepted_are_processed() {
    let app = spawn_app(&[]).await;
    let refused = |pointer: &'static str| {
        move |(status, body): (u16, Value)| {
            assert_eq!((status, &body["error_code"]), (400, &json!("xE_102")), "{body}");
            assert!(body["errors"].as_array().unwrap().iter().any(|e| e["pointer"] == pointer), "{pointer}: {body}");
        }
    };
    // the reported poisons: 4e28 twice for one phone, 1e28 for a brand earning points, 1e28 × 10
    refused("/amount")(app.post_json("/injestion/platform", &order("p1", "9200000001", json!(4e28))).await);
    let mut item = order("p2", "9200000001", json!(70));
    item["items"] = json!([{"name": "tea", "qty": 10, "price": 1e28}]);
    refused("/items/0/price")(app.post_json("/injestion/platform", &item).await);
    item["items"] = json!([{"name": "tea", "qty": 1_000_000_000u64, "price": 1}]);
    refused("/items/0/qty")(app.post_json("/injestion/platform", &item).await);
    // 7,000 distinct items: past the 500 an order may list
    item["items"] =
        Value::Array((0..7000).map(|i| json!({"name": format!("dish {i}"), "qty": 1, "price": 1})).collect());
    refused("/items")(app.post_json("/injestion/platform", &item).await);
    // an event too large for its order row: 413 naming the bound
    let mut large = order("p3", "9200000001", json!(70));
    large["notes"] = json!("x".repeat(300_000));
    let (status, body) = app.post_json("/injestion/platform", &large).await;
    assert_eq!((status, &body["error_code"]), (413, &json!("xE_413")), "{body}");
    assert!(body["error_message"].as_str().unwrap().contains("262144"), "{body}");
    let integration = token_for(&app, "integration", "brand-b", None).await;
    let response = app
        .client
        .post(format!("{}/integration/v1/redeem_points", app.base))
        .header("authorization", &integration)
        .json(&json!({"customer_number": "9200000001", "points": 1e15 as u64, "order_id": "r1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);

    // the largest orders accepted are processed, twice for one phone, with points earned on them
    let staff = token_for(&app, "staff", "brand-b", None).await;
    let rules = app
        .client
        .post(format!("{}/crm_api/add_edit_rules", app.base))
        .header("token", &staff)
        .json(&json!({"parent_business_id": "brand-b", "earn_percent": 100}))
        .send()
        .await
        .unwrap();
    assert_eq!(rules.status(), 200);
    for id in ["big-1", "big-2"] {
        let mut big = order(id, "9200000002", json!(100_000_000));
        big["items"] = json!([{"name": "feast", "qty": 100_000, "price": 100_000_000}]);
        assert_eq!(app.post_json("/injestion/platform", &big).await.0, 200);
    }
    let customer = customer(&app, "9200000002", 2).await;
    assert_eq!(customer["lifetime_value"], json!(200_000_000.0), "{customer}");
    assert!(customer["loyalty_points"].as_i64().unwrap() > 0, "{customer}");
    app.stop().await;
}
