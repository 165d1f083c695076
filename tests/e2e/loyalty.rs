//! Loyalty on the embedded engine: rules, earning on processed orders, milestones, redemption
//! limits at their edges, idempotent retries, the ledger, and 200 concurrent redemptions against
//! one customer's balance.

use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::platform::{create_token, order, wait_customer};

pub(crate) async fn post(app: &TestApp, path: &str, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let mut request = app.client.post(format!("{}{path}", app.base)).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    crate::helpers::read(request.send().await.unwrap()).await
}

/// Sets rules (10% earned on bills of 100 or more, a point worth 0.5, at most 50% of a bill, at
/// least 20 points per redemption) and milestones (3rd order +50, 5th +100) for `brand`.
pub(crate) async fn configure(app: &TestApp, brand: &str) -> (String, String) {
    let staff = create_token(app, "staff", brand).await;
    let integration = create_token(app, "integration", brand).await;
    let rules = json!({"parent_business_id": brand, "earn_percent": 10, "min_bill": 100, "point_value": 0.5,
                       "points_expiry_days": 365, "max_redeem_percent": 50, "min_redeem_points": 20});
    let (status, body) = post(app, "/crm_api/add_edit_rules", &[("token", &staff)], &rules).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], true);
    let milestones = json!({"parent_business_id": brand, "milestones": [{"orders": 3, "bonus_points": 50}, {"orders": 5, "bonus_points": 100}]});
    let (status, body) = post(app, "/crm_api/add_edit_milestone", &[("token", &staff)], &milestones).await;
    assert_eq!(status, 200, "{body}");
    (staff, integration)
}

pub(crate) async fn ledger_sum(app: &TestApp, integration: &str, phone: &str) -> (i64, i64, u64) {
    let mut page = 1;
    let mut sum = 0;
    let mut seen = 0;
    loop {
        let (status, body) = post(
            app,
            "/integration/v1/get_wallet_ledger",
            &[("authorization", integration)],
            &json!({"customer_number": phone, "page": page, "page_size": 100}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let data = body["data"].as_array().unwrap();
        sum += data.iter().map(|e| e["points"].as_i64().unwrap()).sum::<i64>();
        seen += data.len() as u64;
        if data.is_empty() || seen >= body["total"].as_u64().unwrap() {
            return (sum, body["loyalty_points"].as_i64().unwrap(), body["total"].as_u64().unwrap());
        }
        page += 1;
    }
}

#[tokio::test]
async fn points_are_earned_on_processed_orders_with_milestones() {
    let app = spawn_app(&[]).await;
    let (_, integration) = configure(&app, "brand-l").await;
    let phone = "9876511111";
    // 99.99 earns nothing (below the minimum bill), 259.90 earns 25, 100 earns 10
    for (id, amount) in [("l1", 99.99), ("l2", 259.90), ("l3", 100.0)] {
        assert_eq!(post(&app, "/injestion/platform", &[], &order("brand-l", id, phone, amount)).await.0, 200);
    }
    // third order: +50 milestone
    let customer = wait_customer(&app, "brand-l", phone, |c| c["total_orders"] == 3).await;
    assert_eq!(customer["loyalty_points"], 25 + 10 + 50);
    // an update of l2 to 300 adjusts its points (+5); a replay changes nothing
    assert_eq!(post(&app, "/injestion/platform", &[], &order("brand-l", "l2", phone, 300.0)).await.0, 200);
    assert_eq!(post(&app, "/injestion/platform", &[], &order("brand-l", "l2", phone, 300.0)).await.0, 200);
    wait_customer(&app, "brand-l", phone, |c| c["loyalty_points"] == 90).await;
    let (sum, balance, total) = ledger_sum(&app, &integration, phone).await;
    assert_eq!((sum, balance), (90, 90), "the ledger sums to the balance");
    assert_eq!(total, 4, "earn, earn, bonus, adjust");
    let (status, body) = post(
        &app,
        "/api/checkLoyaltyRewards",
        &[("authorization", &integration)],
        &json!({"customer_number": phone, "bill_amount": 100}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!((body["loyalty_points"].clone(), body["redeemable_points"].clone()), (json!(90), json!(90)));
    // a bill of 60: at most 50% = 30 currency = 60 points
    let (_, body) = post(
        &app,
        "/integration/v1/get_user_loyalty",
        &[("authorization", &integration)],
        &json!({"customer_number": phone, "bill_amount": 60}),
    )
    .await;
    assert_eq!(body["redeemable_points"], 60);
}

#[tokio::test]
async fn redemption_limits_hold_at_their_edges_and_retries_are_idempotent() {
    let app = spawn_app(&[]).await;
    let (_, integration) = configure(&app, "brand-m").await;
    let phone = "9876522222";
    assert_eq!(post(&app, "/injestion/platform", &[], &order("brand-m", "m1", phone, 1000.0)).await.0, 200);
    wait_customer(&app, "brand-m", phone, |c| c["loyalty_points"] == 100).await;
    let auth = [("authorization", integration.as_str())];
    let redeem = |points: i64, order_id: &str, bill: Option<f64>| {
        let mut body =
            json!({"customer_number": phone, "points": points, "order_id": order_id, "outlet_id": "outlet-1"});
        if let Some(bill) = bill {
            body["bill_amount"] = json!(bill);
        }
        body
    };
    let code = |answer: &(u16, Value)| (answer.0, answer.1["error_code"].as_str().unwrap_or_default().to_owned());
    assert_eq!(
        code(&post(&app, "/integration/v1/redeem_points", &auth, &redeem(19, "p1", None)).await),
        (409, "xE_106".into())
    );
    // a bill of 5e-324 (schema-valid, below what a decimal holds) is a bill of 0: refused by the
    // rules (no share of it may be paid with points), not as a malformed number
    let (status, tiny) = post(&app, "/api/redeemLoyalty", &auth, &redeem(20, "p0", Some(5e-324))).await;
    assert_eq!((status, tiny["error_code"].clone()), (409, json!("xE_107")), "{tiny}");
    // bill 60 allows 60 points, not 61
    assert_eq!(
        code(&post(&app, "/integration/v1/redeem_points", &auth, &redeem(61, "p1", Some(60.0))).await),
        (409, "xE_107".into())
    );
    let (status, first) = post(&app, "/integration/v1/redeem_points", &auth, &redeem(60, "p1", Some(60.0))).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(
        (first["status"].clone(), first["redeemed"].clone(), first["wallet_balance"].clone()),
        (json!(1), json!(60), json!(40))
    );
    assert!(first["txn_id"].as_str().unwrap().starts_with("R-"));
    // the same order again: the first redemption's answer, nothing taken twice
    let (status, again) = post(&app, "/integration/v1/redeem_points", &auth, &redeem(60, "p1", Some(60.0))).await;
    assert_eq!(
        (status, again["txn_id"].clone(), again["wallet_balance"].clone()),
        (200, first["txn_id"].clone(), json!(40))
    );
    assert_eq!(
        code(&post(&app, "/integration/v1/redeem_points", &auth, &redeem(41, "p2", None)).await),
        (409, "xE_105".into())
    );
    let (status, last) = post(&app, "/integration/v1/redeem_points", &auth, &redeem(40, "p2", None)).await;
    assert_eq!((status, last["wallet_balance"].clone()), (200, json!(0)));
    // bad input, unknown customer, wrong token
    assert_eq!(
        code(&post(&app, "/integration/v1/redeem_points", &auth, &json!({"customer_number": phone})).await),
        (400, "xE_102".into())
    );
    let unknown = json!({"customer_number": "9000000999", "points": 20, "order_id": "x"});
    assert_eq!(code(&post(&app, "/integration/v1/redeem_points", &auth, &unknown).await), (404, "xE_404".into()));
    assert_eq!(
        code(&post(&app, "/integration/v1/redeem_points", &[("authorization", "nope")], &redeem(20, "p3", None)).await),
        (401, "xE_101".into())
    );
    let (sum, balance, _) = ledger_sum(&app, &integration, phone).await;
    assert_eq!((sum, balance), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_redemptions_never_overspend() {
    let app = spawn_app(&[]).await;
    let (_, integration) = configure(&app, "brand-c").await;
    let phone = "9876533333";
    // 10,000 spent: 1000 points
    assert_eq!(post(&app, "/injestion/platform", &[], &order("brand-c", "c1", phone, 10000.0)).await.0, 200);
    wait_customer(&app, "brand-c", phone, |c| c["loyalty_points"] == 1000).await;
    let attempts = (0..200).map(|i| {
        let app = &app;
        let integration = integration.clone();
        async move {
            let body = json!({"customer_number": phone, "points": 23, "order_id": format!("pos-{i}"), "outlet_id": "outlet-1"});
            post(app, "/integration/v1/redeem_points", &[("authorization", integration.as_str())], &body).await
        }
    });
    let answers = futures::future::join_all(attempts).await;
    let succeeded = answers.iter().filter(|(status, _)| *status == 200).count() as i64;
    let refused =
        answers.iter().filter(|(status, body)| *status == 409 && body["error_code"] == "xE_105").count() as i64;
    assert_eq!(succeeded + refused, 200, "every attempt either succeeds or is refused for insufficient points");
    assert_eq!(succeeded, 1000 / 23, "exactly as many as the balance allows");
    let lowest = answers.iter().filter_map(|(_, b)| b["wallet_balance"].as_i64()).min().unwrap();
    assert_eq!(lowest, 1000 - 23 * (1000 / 23));
    let (sum, balance, total) = ledger_sum(&app, &integration, phone).await;
    assert_eq!(balance, 1000 - 23 * succeeded);
    assert_eq!(sum, balance, "the ledger sums to the balance");
    assert_eq!(total as i64, 1 + succeeded);
}

#[tokio::test]
async fn legacy_staff_loyalty_routes() {
    let app = spawn_app(&[]).await;
    let (staff, integration) = configure(&app, "brand-g").await;
    let phone = "9876544444";
    assert_eq!(post(&app, "/injestion/platform", &[], &order("brand-g", "g1", phone, 500.0)).await.0, 200);
    wait_customer(&app, "brand-g", phone, |c| c["loyalty_points"] == 50).await;
    let s = [("token", staff.as_str())];
    let (status, body) =
        post(&app, "/crm_api/fetch_loyalty_details", &s, &json!({"parent_business_id": "brand-g"})).await;
    assert_eq!((status, body["rules"]["min_redeem_points"].clone()), (200, json!(20)), "{body}");
    let (status, body) = post(
        &app,
        "/crm_api/redeem_points",
        &s,
        &json!({"parent_business_id": "brand-g", "customer_number": phone, "points": 25, "order_id": "staff-1"}),
    )
    .await;
    assert_eq!((status, body["wallet_balance"].clone()), (200, json!(25)), "{body}");
    let (status, body) = post(
        &app,
        "/crm_api/redeem_points",
        &s,
        &json!({"parent_business_id": "brand-g", "customer_number": phone, "points": 10, "order_id": "staff-2"}),
    )
    .await;
    assert_eq!((status, body["message"].as_str().unwrap().contains("at least 20")), (409, true), "{body}");
    let (status, body) =
        post(&app, "/crm_api/loyalty/ledger", &s, &json!({"parent_business_id": "brand-g", "customer_number": phone}))
            .await;
    assert_eq!((status, body["total"].clone()), (200, json!(2)));
    let (status, body) =
        post(&app, "/crm_api/get/loyalty/rules/details", &[("authorization", integration.as_str())], &json!({})).await;
    assert_eq!(status, 400, "an empty body is refused: {body}");
    let (status, body) = post(
        &app,
        "/crm_api/get/loyalty/rules/details",
        &[("authorization", integration.as_str())],
        &json!({"parent_business_id": "brand-g"}),
    )
    .await;
    assert_eq!((status, body["rules"]["earn_percent"].clone()), (200, json!("10")), "{body}");
    let other = create_token(&app, "staff", "brand-h").await;
    assert_eq!(
        post(
            &app,
            "/crm_api/loyalty/ledger",
            &[("token", other.as_str())],
            &json!({"parent_business_id": "brand-g", "customer_number": phone})
        )
        .await
        .0,
        403
    );
}

/// An order older than every one of the 16 a customer's row keeps one by one (a POS sending its
/// backlog) earns its points, and a later update or cancellation of it adjusts or takes back
/// exactly those, and the dashboard counts them: its own row records what it earned although the
/// customer's row folds it into its totals at once. (Before: its points were recorded nowhere, so
/// an update earned them a second time, a cancellation took nothing back, and the dashboard
/// counted 0 for it.)
#[tokio::test]
async fn an_order_older_than_every_kept_one_earns_and_gives_back_exactly_its_points() {
    let app = spawn_app(&[]).await;
    let brand = "brand-backlog";
    let (staff, integration) = configure(&app, brand).await;
    let phone = "9876533333";
    let dated = |id: &str, amount: f64, day: &str| {
        let mut body = order(brand, id, phone, amount);
        body["orderTime"] = json!(format!("{day} 10:00:00"));
        body
    };
    // 16 orders of 100 (10 points each) from 10 to 25 November, the 3rd and 5th with their bonuses
    for n in 0..16 {
        let body = dated(&format!("k{n}"), 100.0, &format!("2026-11-{:02}", 10 + n));
        assert_eq!(post(&app, "/injestion/platform", &[], &body).await.0, 200);
    }
    wait_customer(&app, brand, phone, |c| c["total_orders"] == 16 && c["loyalty_points"] == 160 + 50 + 100).await;
    // a backlog order of 1 October, older than all of them: +50
    let old = |amount: f64| dated("old", amount, "2026-10-01");
    assert_eq!(post(&app, "/injestion/platform", &[], &old(500.0)).await.0, 200);
    wait_customer(&app, brand, phone, |c| c["total_orders"] == 17 && c["loyalty_points"] == 360).await;
    let day = json!({"parent_business_id": brand, "start": "2026-10-01", "end": "2026-10-01"});
    let summary = crate::stats::stats(&app, &staff, "/stats/dashboard/summary", day.clone()).await;
    assert_eq!(summary["totals"]["points_earned"], 50, "{summary}");
    // updated to 800: +30, not +80 again
    assert_eq!(post(&app, "/injestion/platform", &[], &old(800.0)).await.0, 200);
    let customer = wait_customer(&app, brand, phone, |c| c["lifetime_value"] == json!(2400.0)).await;
    assert_eq!(customer["loyalty_points"], 390, "{customer}");
    let summary = crate::stats::stats(&app, &staff, "/stats/dashboard/summary", day).await;
    assert_eq!(summary["totals"]["points_earned"], 80, "{summary}");
    // cancelled: its 80 points go back
    let mut cancelled = old(800.0);
    cancelled["status"] = json!("cancelled");
    assert_eq!(post(&app, "/injestion/platform", &[], &cancelled).await.0, 200);
    let customer = wait_customer(&app, brand, phone, |c| c["total_orders"] == 16).await;
    assert_eq!(customer["loyalty_points"], 310, "{customer}");
    let (sum, balance, _) = ledger_sum(&app, &integration, phone).await;
    assert_eq!((sum, balance), (310, 310), "the ledger sums to the balance");
}
