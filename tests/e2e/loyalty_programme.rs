//! The rest of the loyalty programme on the embedded engine: points expiry (the `points_expiry`
//! job with a controllable clock), day-wise figures (`/crm_api/day/wise/data`) and refer-and-earn
//! (`/crm_api/get/referal/rules`, `referrer_number`).

use chrono::{DateTime, Duration, FixedOffset, Timelike, Utc};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::jobs::admin;
use crate::loyalty::{configure, ledger_sum, post};
use crate::platform::{order, wait_customer};

fn ist() -> FixedOffset {
    FixedOffset::east_opt(5 * 3600 + 30 * 60).unwrap()
}

async fn loyalty(app: &TestApp, integration: &str, phone: &str) -> Value {
    let (status, body) = post(
        app,
        "/integration/v1/get_user_loyalty",
        &[("authorization", integration)],
        &json!({"customer_number": phone}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn run_expiry(app: &TestApp, now: DateTime<Utc>) -> Value {
    let answer = admin(app, "/admin/jobs/run", json!({"name": "points_expiry", "now": now.to_rfc3339()})).await;
    answer["outcome"].clone()
}

async fn day_wise(app: &TestApp, staff: &str, body: Value) -> (u16, Value) {
    post(app, "/crm_api/day/wise/data", &[("token", staff)], &body).await
}

#[tokio::test]
async fn earned_points_expire_after_their_last_day_and_restored_points_keep_their_expiry() {
    let app = spawn_app(&[]).await;
    let brand = "brand-x";
    let (staff, integration) = configure(&app, brand).await;
    let (status, body) = post(
        &app,
        "/crm_api/add_edit_rules",
        &[("token", &staff)],
        &json!({"parent_business_id": brand, "points_expiry_days": 1}),
    )
    .await;
    assert_eq!((status, body["rules"]["points_expiry_days"].clone()), (200, json!(1)), "{body}");

    // 500 earns 50; 20 redeemed (taken from that lot): 30 left, expiring together
    let phone = "9876520001";
    assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, "x1", phone, 500.0)).await.0, 200);
    wait_customer(&app, brand, phone, |c| c["loyalty_points"] == 50).await;
    let auth = [("authorization", integration.as_str())];
    let redeem = json!({"customer_number": phone, "points": 20, "order_id": "x-redeem"});
    assert_eq!(post(&app, "/integration/v1/redeem_points", &auth, &redeem).await.0, 200);
    let body = loyalty(&app, &integration, phone).await;
    assert_eq!(body["next_expiry"]["points"], 30, "{body}");
    let expires_at = DateTime::parse_from_rfc3339(body["next_expiry"]["expires_at"].as_str().unwrap()).unwrap();
    // usable through tomorrow (IST): they expire at an IST midnight between 1 and 2 days from now
    let local = expires_at.with_timezone(&ist());
    assert_eq!((local.hour(), local.minute(), local.second()), (0, 0, 0), "{expires_at}");
    let until = expires_at.with_timezone(&Utc) - Utc::now();
    assert!(until > Duration::days(1) && until <= Duration::days(2), "{until}");
    let expires_at = expires_at.with_timezone(&Utc);

    // one second before: nothing expires
    let early = run_expiry(&app, expires_at - Duration::seconds(1)).await;
    assert_eq!((early["customers"].clone(), early["points"].clone()), (json!(0), json!(0)), "{early}");
    assert_eq!(loyalty(&app, &integration, phone).await["loyalty_points"], 30);

    // a second customer redeems 30 of 50 at the POS (pending): 20 are left in the lot
    let other = "9876520002";
    assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, "x2", other, 500.0)).await.0, 200);
    wait_customer(&app, brand, other, |c| c["loyalty_points"] == 50).await;
    let pos = json!({"customer_number": other, "points": 30, "order_id": "x-pos"});
    assert_eq!(post(&app, "/api/redeemLoyalty", &auth, &pos).await.0, 200);

    // at the expiry instant: 30 + 20 expire
    let due = run_expiry(&app, expires_at).await;
    assert_eq!((due["customers"].clone(), due["points"].clone()), (json!(2), json!(50)), "{due}");
    assert_eq!(loyalty(&app, &integration, phone).await["loyalty_points"], 0);
    assert_eq!(loyalty(&app, &integration, other).await["loyalty_points"], 0);
    let (sum, balance, _) = ledger_sum(&app, &integration, phone).await;
    assert_eq!((sum, balance), (0, 0), "the ledger sums to the balance");
    let (_, ledger) = post(&app, "/integration/v1/get_wallet_ledger", &auth, &json!({"customer_number": phone})).await;
    let last = ledger["data"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((last["kind"].clone(), last["points"].clone()), (json!("expire"), json!(-30)), "{last}");
    // a second run finds nothing left
    let again = run_expiry(&app, expires_at).await;
    assert_eq!(again["points"], 0, "{again}");

    // revoking the POS redemption gives the 30 points back into their (expired) lot: they do
    // not escape the expiry, the next run takes them
    let (status, body) =
        post(&app, "/api/revokeLoyalty", &auth, &json!({"customer_number": other, "order_id": "x-pos"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(loyalty(&app, &integration, other).await["loyalty_points"], 30);
    let restored = run_expiry(&app, expires_at).await;
    assert_eq!((restored["customers"].clone(), restored["points"].clone()), (json!(1), json!(30)), "{restored}");
    let (sum, balance, _) = ledger_sum(&app, &integration, other).await;
    assert_eq!((sum, balance), (0, 0));

    // the expiry day's figures show the expired points
    let day = expires_at.with_timezone(&ist()).format("%Y-%m-%d").to_string();
    let (status, body) =
        day_wise(&app, &staff, json!({"parent_business_id": brand, "start_date": day, "end_date": day})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"][0]["points_expired"], 80, "{body}");
    assert_eq!(body["data"][0]["net_points"], -80, "{body}");
}

#[tokio::test]
async fn day_wise_figures_sum_the_ledger_per_ist_day_and_refuse_bad_ranges() {
    let app = spawn_app(&[]).await;
    let brand = "brand-dw";
    let (staff, integration) = configure(&app, brand).await;
    let (a, b) = ("9876530001", "9876530002");
    for (id, phone, amount) in [("d1", a, 500.0), ("d2", a, 200.0), ("d3", b, 300.0)] {
        assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, id, phone, amount)).await.0, 200);
    }
    wait_customer(&app, brand, a, |c| c["loyalty_points"] == 70).await;
    wait_customer(&app, brand, b, |c| c["loyalty_points"] == 30).await;
    let redeem = json!({"customer_number": a, "points": 25, "order_id": "d-redeem"});
    assert_eq!(post(&app, "/integration/v1/redeem_points", &[("authorization", &integration)], &redeem).await.0, 200);

    // default range: the 7 IST days up to today, today last
    let (status, body) = day_wise(&app, &staff, json!({"parent_business_id": brand})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], true);
    let days = body["data"].as_array().unwrap();
    assert_eq!(days.len(), 7);
    let today = Utc::now().with_timezone(&ist()).format("%Y-%m-%d").to_string();
    let last = &days[6];
    assert_eq!(last["date"], today.as_str(), "{body}");
    for (field, value) in [
        ("points_earned", 100),
        ("points_redeemed", 25),
        ("net_points", 75),
        ("transactions", 4),
        ("customers_earned", 2),
        ("customers_redeemed", 1),
        ("points_expired", 0),
    ] {
        assert_eq!(last[field], value, "{field} in {last}");
    }
    assert!(days[..6].iter().all(|d| d["transactions"] == 0), "{body}");
    assert_eq!(body["totals"]["net_points"], 75);

    // a range in either order is the days between; a longer one keeps its last 92 days
    let (_, backwards) = day_wise(
        &app,
        &staff,
        json!({"parent_business_id": brand, "start_date": "2026-11-10", "end_date": "2026-11-01"}),
    )
    .await;
    assert_eq!((&backwards["from"], &backwards["to"]), (&json!("2026-11-01"), &json!("2026-11-10")), "{backwards}");
    let (_, long) = day_wise(
        &app,
        &staff,
        json!({"parent_business_id": brand, "start_date": "2026-01-01", "end_date": "2026-04-03"}),
    )
    .await;
    assert_eq!((&long["from"], long["data"].as_array().map(Vec::len)), (&json!("2026-01-02"), Some(92)), "{long}");
    // a day that is no date is refused in the staff family; another brand's token is refused
    let refused = [json!({"parent_business_id": brand, "start_date": "21-11-2026"})];
    for body in refused {
        let (status, answer) = day_wise(&app, &staff, body.clone()).await;
        assert_eq!(status, 400, "{body} → {answer}");
        assert_eq!(answer["message"], "invalid request", "the staff family: {answer}");
        assert!(answer["errors"][0]["pointer"].as_str().is_some_and(|p| p.ends_with("_date")), "{answer}");
    }
    // exactly 92 days is allowed
    let (status, _) = day_wise(
        &app,
        &staff,
        json!({"parent_business_id": brand, "start_date": "2026-01-01", "end_date": "2026-04-02"}),
    )
    .await;
    assert_eq!(status, 200);
    let other = crate::platform::create_token(&app, "staff", "brand-other").await;
    assert_eq!(day_wise(&app, &other, json!({"parent_business_id": brand})).await.0, 403);

    // both new routes are in /openapi.json with their body schema and the staff error family
    let (status, doc) = app.get_json("/openapi.json").await;
    assert_eq!(status, 200);
    for (path, schema) in
        [("/crm_api/day/wise/data", "DayWiseRequest"), ("/crm_api/get/referal/rules", "LoyaltyRulesRequest")]
    {
        let op = &doc["paths"][path]["post"];
        let body = &op["requestBody"]["content"]["application/json"]["schema"]["allOf"][0]["$ref"];
        assert_eq!(body, &json!(format!("#/components/schemas/{schema}")), "{path}");
        assert_eq!(
            op["responses"]["400"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/StaffErrorBody"
        );
        assert!(doc["components"]["schemas"][schema].is_object(), "{schema}");
    }
}

#[tokio::test]
async fn referrals_reward_both_customers_once_on_the_first_qualifying_order() {
    let app = spawn_app(&[]).await;
    let brand = "brand-rf";
    let (staff, integration) = configure(&app, brand).await;
    let referral = json!({"enabled": true, "referrer_points": 100, "referee_points": 50, "min_order_amount": 200, "max_referrals": 1});
    let (status, body) = post(
        &app,
        "/crm_api/add_edit_rules",
        &[("token", &staff)],
        &json!({"parent_business_id": brand, "referral": referral}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) =
        post(&app, "/crm_api/get/referal/rules", &[("token", &staff)], &json!({"parent_business_id": brand})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["referral"]["enabled"], true);
    assert_eq!(
        (body["referral"]["referrer_points"].clone(), body["referral"]["max_referrals"].clone()),
        (json!(100), json!(1))
    );
    assert_eq!(body["referral"]["min_order_amount"], "200");
    let (status, _) = post(
        &app,
        "/crm_api/add_edit_rules",
        &[("token", &staff)],
        &json!({"parent_business_id": brand, "referral": {"referrer_points": -1}}),
    )
    .await;
    assert_eq!(status, 400, "negative referral points are refused");
    let (status, body) = post(&app, "/crm_api/get/referal/rules", &[("token", &staff)], &json!({})).await;
    assert_eq!((status, body["message"].clone()), (400, json!("invalid request")), "an empty body: {body}");

    let auth = [("authorization", integration.as_str())];
    let create = |phone: &str, referrer: &str| json!({"customer_number": phone, "referrer_number": referrer});
    let (referrer, referee, late) = ("9876540001", "9876540002", "9876540003");
    // the referrer is a customer with an order (100 earns 10)
    assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, "r1", referrer, 100.0)).await.0, 200);
    wait_customer(&app, brand, referrer, |c| c["loyalty_points"] == 10).await;
    // refused referrals are ignored: self, unknown referrer, an existing customer
    let (_, body) = post(&app, "/integration/v1/create_user", &auth, &create("9876540009", "9876540009")).await;
    assert_eq!(body["customer"]["referred_by"], Value::Null, "{body}");
    let (_, body) = post(&app, "/integration/v1/create_user", &auth, &create("9876540008", "9876549999")).await;
    assert_eq!(body["customer"]["referred_by"], Value::Null, "{body}");
    let (_, body) = post(&app, "/integration/v1/create_user", &auth, &create(referrer, "9876540008")).await;
    assert_eq!(body["customer"]["referred_by"], Value::Null, "{body}");
    // a new customer names the referrer
    let (status, body) = post(&app, "/integration/v1/create_user", &auth, &create(referee, referrer)).await;
    assert_eq!((status, body["customer"]["referred_by"].clone()), (200, json!(referrer)), "{body}");

    // a first order below the minimum rewards nothing; the first of 200 or more rewards both
    assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, "r2", referee, 150.0)).await.0, 200);
    wait_customer(&app, brand, referee, |c| c["loyalty_points"] == 15).await;
    assert_eq!(loyalty(&app, &integration, referrer).await["loyalty_points"], 10);
    assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, "r3", referee, 250.0)).await.0, 200);
    wait_customer(&app, brand, referee, |c| c["loyalty_points"] == 15 + 25 + 50).await;
    assert_eq!(loyalty(&app, &integration, referrer).await["loyalty_points"], 10 + 100);
    // later orders (and a replay) reward nothing more; the third order is the +50 milestone
    for id in ["r4", "r4"] {
        assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, id, referee, 300.0)).await.0, 200);
    }
    wait_customer(&app, brand, referee, |c| c["total_orders"] == 3).await;
    assert_eq!(loyalty(&app, &integration, referee).await["loyalty_points"], 90 + 30 + 50);
    assert_eq!(loyalty(&app, &integration, referrer).await["loyalty_points"], 110);

    // a second referral of the same referrer: over max_referrals, only the new customer earns
    let (_, body) = post(&app, "/integration/v1/create_user", &auth, &create(late, referrer)).await;
    assert_eq!(body["customer"]["referred_by"], referrer);
    assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, "r5", late, 500.0)).await.0, 200);
    wait_customer(&app, brand, late, |c| c["loyalty_points"] == 50 + 50).await;
    assert_eq!(loyalty(&app, &integration, referrer).await["loyalty_points"], 110);

    for phone in [referrer, referee, late] {
        let (sum, balance, _) = ledger_sum(&app, &integration, phone).await;
        assert_eq!(sum, balance, "{phone}: the ledger sums to the balance");
    }
    let (status, body) = day_wise(&app, &staff, json!({"parent_business_id": brand})).await;
    assert_eq!(status, 200);
    assert_eq!(body["totals"]["referral_points"], 100 + 50 + 50, "{body}");
    assert_eq!(body["totals"]["bonus_points"], 50, "{body}");
}
