//! Refunds, cancellations and returns against a recomputation (issue 42, `docs/refunds.md`):
//! random orders, updates, partial returns (`refundedAmount`, `returnedItems`), whole refunds
//! (`status` 3, a status word, the refund route) and replays (of orders and of refund ids), then
//! every customer's totals, points and ledger, and the `/stats` figures, compared with what the
//! test computes itself from the final state of each order. Plus what a whole refund does to the
//! bill page, the feedback request and a pending POS redemption.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::loyalty::{ledger_sum, post};
use crate::platform::create_token;

const DAY: &str = "2026-10-07";

/// The final state of one order, money in paise.
#[derive(Clone, Debug, Default)]
struct Order {
    phone: String,
    amount: i64,
    /// Given back on copies of the order (the latest copy's figure).
    returned: i64,
    /// Refunds sent on their own, by refund id (`None`: the whole order).
    route: BTreeMap<String, Option<i64>>,
    /// `status` 3 or a status word on the latest copy.
    void_copy: bool,
}

impl Order {
    fn void(&self) -> bool {
        self.void_copy
            || self.route.values().any(Option::is_none)
            || self.returned.max(self.route.values().flatten().sum()) >= self.amount && self.refunded_any()
    }

    fn refunded_any(&self) -> bool {
        self.returned > 0 || !self.route.is_empty()
    }

    /// What was given back.
    fn refunded(&self) -> i64 {
        if self.void() {
            return self.amount;
        }
        self.returned.max(self.route.values().flatten().sum()).min(self.amount)
    }

    fn net(&self) -> i64 {
        if self.void() {
            0
        } else {
            self.amount - self.refunded()
        }
    }
}

fn rupees(paise: i64) -> f64 {
    paise as f64 / 100.0
}

fn copy(id: &str, o: &Order, rng: &mut StdRng) -> Value {
    let mut body = json!({"parentBusinessId": "refund-brand", "businessId": "o1", "orderId": id,
        "customer": {"phone": o.phone}, "amount": rupees(o.amount), "orderTime": format!("{DAY} 12:00:00")});
    if o.void_copy {
        // the ways a POS says the whole order is gone
        match rng.gen_range(0..3) {
            0 => body["status"] = json!(3),
            1 => body["status"] = json!("Cancelled"),
            _ => body["orderStatus"] = json!("REFUNDED"),
        }
    } else if o.returned > 0 {
        if rng.gen_bool(0.5) {
            body["refundedAmount"] = json!(rupees(o.returned));
        } else {
            body["returnedItems"] = json!([{"name": "returned", "qty": 1, "price": rupees(o.returned)}]);
        }
    }
    body
}

async fn send(app: &TestApp, body: &Value) {
    let (status, answer) = post(app, "/injestion/platform", &[], body).await;
    assert_eq!(status, 200, "{body}: {answer}");
}

async fn refund(app: &TestApp, integration: &str, id: &str, refund_id: &str, amount: Option<i64>) {
    let mut body = json!({"businessId": "o1", "orderId": id, "refundId": refund_id});
    if let Some(amount) = amount {
        body["amount"] = json!(rupees(amount));
    }
    let (status, answer) = post(app, "/integration/v1/order/refund", &[("authorization", integration)], &body).await;
    assert_eq!(status, 200, "{body}: {answer}");
}

async fn details(app: &TestApp, phone: &str) -> Value {
    let body = json!({"parent_business_id": "refund-brand", "customer_number": phone});
    let (status, answer) = post(app, "/crm_api/get/customer/details", &[], &body).await;
    assert_eq!(status, 200, "{answer}");
    answer["customer"].clone()
}

#[tokio::test]
async fn every_total_point_and_rollup_equals_a_recomputation_from_the_final_orders() {
    let seed: u64 =
        std::env::var("ENGAGE_TEST_REFUND_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    let mut rng = StdRng::seed_from_u64(seed);
    let app = spawn_app(&[]).await;
    let brand = "refund-brand";
    let staff = create_token(&app, "staff", brand).await;
    let integration = create_token(&app, "integration", brand).await;
    let rules = json!({"parent_business_id": brand, "earn_percent": 10, "min_bill": 0, "min_redeem_points": 1,
                       "max_redeem_percent": 100, "points_expiry_days": 365});
    assert_eq!(post(&app, "/crm_api/add_edit_rules", &[("token", &staff)], &rules).await.0, 200);
    let milestones = json!({"parent_business_id": brand, "milestones": [{"orders": 3, "bonus_points": 50}]});
    assert_eq!(post(&app, "/crm_api/add_edit_milestone", &[("token", &staff)], &milestones).await.0, 200);

    let mut orders: BTreeMap<String, Order> = BTreeMap::new();
    let mut refund_ids = 0;
    for n in 0..160 {
        let op = if orders.is_empty() { 0 } else { rng.gen_range(0..10) };
        let ids: Vec<String> = orders.keys().cloned().collect();
        let pick = |rng: &mut StdRng| ids[rng.gen_range(0..ids.len().max(1))].clone();
        match op {
            // a new order
            0..=3 => {
                let id = format!("R-{n}");
                let o = Order {
                    phone: format!("97{:08}", rng.gen_range(0..12)),
                    amount: rng.gen_range(1..=400) * 100 + rng.gen_range(0..100),
                    ..Order::default()
                };
                send(&app, &copy(&id, &o, &mut rng)).await;
                orders.insert(id, o);
            }
            // an update of the amount
            4 => {
                let id = pick(&mut rng);
                let o = orders.get_mut(&id).unwrap();
                o.amount = rng.gen_range(1..=400) * 100;
                let body = copy(&id, o, &mut rng);
                send(&app, &body).await;
            }
            // a partial return on a copy
            5 => {
                let id = pick(&mut rng);
                let o = orders.get_mut(&id).unwrap();
                o.returned = rng.gen_range(1..=o.amount.max(1));
                let body = copy(&id, o, &mut rng);
                send(&app, &body).await;
            }
            // the whole order cancelled or refunded on a copy
            6 => {
                let id = pick(&mut rng);
                let o = orders.get_mut(&id).unwrap();
                o.void_copy = true;
                let body = copy(&id, o, &mut rng);
                send(&app, &body).await;
            }
            // a refund sent on its own: part of it, or the whole
            7 | 8 => {
                let id = pick(&mut rng);
                refund_ids += 1;
                let refund_id = format!("rf-{refund_ids}");
                let amount = rng.gen_bool(0.7).then(|| rng.gen_range(1..=3000));
                refund(&app, &integration, &id, &refund_id, amount).await;
                orders.get_mut(&id).unwrap().route.insert(refund_id, amount);
            }
            // a replay: of an order's latest copy, or of a refund id with another amount (ignored)
            _ => {
                let id = pick(&mut rng);
                let o = orders[&id].clone();
                if let (true, Some(refund_id)) = (rng.gen_bool(0.5), o.route.keys().next()) {
                    refund(&app, &integration, &id, refund_id, Some(99_99)).await;
                } else {
                    // the replayed copy states the same refund the same way
                    let mut same = StdRng::seed_from_u64(0);
                    let body = copy(&id, &o, &mut same);
                    send(&app, &body).await;
                }
            }
        }
    }

    // the truth, per customer and in sum
    let mut by_phone: BTreeMap<String, (i64, i64, i64)> = BTreeMap::new(); // orders, net, points
    let (mut counted, mut revenue, mut void, mut refunded) = (0, 0, 0, 0);
    for o in orders.values() {
        let entry = by_phone.entry(o.phone.clone()).or_default();
        if !o.void() {
            entry.0 += 1;
            counted += 1;
        } else {
            void += 1;
        }
        entry.1 += o.net();
        entry.2 += o.net() / 1000; // 10% of the net amount in rupees, floored
        revenue += o.net();
        refunded += o.refunded();
    }

    // processing is asynchronous: wait until the day adds up
    let period = json!({"parent_business_id": brand, "start": DAY, "end": DAY});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    let totals = loop {
        let (status, answer) = post(&app, "/stats/dashboard/summary", &[("token", &staff)], &period).await;
        assert_eq!(status, 200, "{answer}");
        let totals = answer["data"]["totals"].clone();
        if totals["orders"] == json!(counted)
            && totals["refunded_orders"] == json!(void)
            && (totals["revenue"].as_f64().unwrap_or(-1.0) - rupees(revenue)).abs() < 1e-6
            && (totals["refunded_amount"].as_f64().unwrap_or(-1.0) - rupees(refunded)).abs() < 1e-6
        {
            break totals;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never added up (seed {seed}): {totals} vs orders {counted}, void {void}, revenue {revenue}, refunded {refunded}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert!((totals["gross_revenue"].as_f64().unwrap() - rupees(revenue + refunded)).abs() < 1e-6, "{totals}");

    for (phone, (count, net, points)) in &by_phone {
        let customer = details(&app, phone).await;
        assert_eq!(customer["total_orders"], json!(count), "{phone} (seed {seed}): {customer}");
        let ltv = customer["lifetime_value"].as_f64().unwrap();
        assert!((ltv - rupees(*net)).abs() < 1e-6, "{phone} (seed {seed}): LTV {ltv} vs {net}");
        // points: 10% of each order's net amount, and the 3rd-order bonus while 3 orders count
        let bonus = if *count >= 3 { 50 } else { 0 };
        assert_eq!(customer["loyalty_points"], json!(points + bonus), "{phone} (seed {seed}): {customer}");
        // the ledger adds up to the balance
        let (sum, balance, _) = ledger_sum(&app, &integration, phone).await;
        assert_eq!((sum, balance), (points + bonus, points + bonus), "{phone} (seed {seed})");
    }
}

/// A whole refund of the order that earned a referral takes both rewards back (the next
/// qualifying order earns them again); an order that arrives cancelled reverts the POS redemption
/// waiting for it instead of confirming it; the refund route's replays change nothing.
#[tokio::test]
async fn a_refund_takes_back_the_referral_it_earned_and_a_cancelled_order_reverts_its_pos_redemption() {
    use crate::platform::{order, wait_customer};
    let app = spawn_app(&[("ENGAGE_POS_REDEMPTION_TTL_MINUTES", "30")]).await;
    let brand = "refund-side";
    let staff = create_token(&app, "staff", brand).await;
    let integration = create_token(&app, "integration", brand).await;
    let auth = [("authorization", integration.as_str())];
    let rules = json!({"parent_business_id": brand, "earn_percent": 10, "min_bill": 0, "min_redeem_points": 1,
                       "max_redeem_percent": 100,
                       "referral": {"enabled": true, "referrer_points": 100, "referee_points": 50, "min_order_amount": 200}});
    assert_eq!(post(&app, "/crm_api/add_edit_rules", &[("token", &staff)], &rules).await.0, 200);
    let (referrer, referee) = ("9876541001", "9876541002");
    assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, "a1", referrer, 100.0)).await.0, 200);
    wait_customer(&app, brand, referrer, |c| c["loyalty_points"] == 10).await;
    let create = json!({"customer_number": referee, "referrer_number": referrer});
    assert_eq!(post(&app, "/integration/v1/create_user", &auth, &create).await.0, 200);
    // the referee's first order of 300 earns 30 + 50, the referrer 100
    assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, "b1", referee, 300.0)).await.0, 200);
    wait_customer(&app, brand, referee, |c| c["loyalty_points"] == 80).await;
    wait_customer(&app, brand, referrer, |c| c["loyalty_points"] == 110).await;
    // refunded as a whole (twice: the same refund id): everything it caused goes back
    for _ in 0..2 {
        let body = json!({"businessId": "outlet-1", "orderId": "b1", "refundId": "rf-b1"});
        assert_eq!(post(&app, "/integration/v1/order/refund", &auth, &body).await.0, 200);
    }
    let customer = wait_customer(&app, brand, referee, |c| c["loyalty_points"] == 0 && c["total_orders"] == 0).await;
    assert_eq!(customer["lifetime_value"], json!(0.0), "{customer}");
    wait_customer(&app, brand, referrer, |c| c["loyalty_points"] == 10).await;
    // the next qualifying order earns the referral again
    assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, "b2", referee, 200.0)).await.0, 200);
    wait_customer(&app, brand, referee, |c| c["loyalty_points"] == 20 + 50).await;
    wait_customer(&app, brand, referrer, |c| c["loyalty_points"] == 110).await;
    for phone in [referrer, referee] {
        let (sum, balance, _) = ledger_sum(&app, &integration, phone).await;
        assert_eq!(sum, balance, "{phone}: the ledger sums to the balance");
    }

    // a POS redemption waiting for order p1, which then arrives cancelled: the points come back
    let (status, body) =
        post(&app, "/api/redeemLoyalty", &auth, &json!({"customer_number": referrer, "points": 60, "order_id": "p1"}))
            .await;
    assert_eq!(status, 200, "{body}");
    wait_customer(&app, brand, referrer, |c| c["loyalty_points"] == 50).await;
    let mut cancelled = order(brand, "p1", referrer, 600.0);
    cancelled["status"] = json!("cancelled");
    assert_eq!(post(&app, "/injestion/platform", &[], &cancelled).await.0, 200);
    let customer = wait_customer(&app, brand, referrer, |c| c["loyalty_points"] == 110).await;
    assert_eq!(customer["total_orders"], 1, "a cancelled order is no order: {customer}");
    let (_, ledger) =
        post(&app, "/integration/v1/get_wallet_ledger", &auth, &json!({"customer_number": referrer, "page_size": 100}))
            .await;
    let entries = ledger["data"].as_array().unwrap();
    assert!(entries.iter().any(|e| e["kind"] == "revoke" && e["points"] == 60), "{ledger}");
    assert!(entries.iter().any(|e| e["kind"] == "clawback" && e["points"] == -100), "{ledger}");

    // a refund that arrives before its order is kept and applied when the order comes
    let early = json!({"businessId": "outlet-1", "orderId": "late-1", "refundId": "rf-late", "amount": 40});
    assert_eq!(post(&app, "/integration/v1/order/refund", &auth, &early).await.0, 200);
    let late = "9876541003";
    assert_eq!(post(&app, "/injestion/platform", &[], &order(brand, "late-1", late, 100.0)).await.0, 200);
    let customer = wait_customer(&app, brand, late, |c| c["total_orders"] == 1).await;
    assert_eq!((customer["lifetime_value"].clone(), customer["loyalty_points"].clone()), (json!(60.0), json!(6)));
}

/// A billed order refunded in part shows the refund on its bill page; an order that arrives
/// cancelled gets no bill (and pays for none).
#[tokio::test]
async fn a_refunded_bill_says_so_and_a_cancelled_order_is_not_billed() {
    use crate::bills::{brand, pos_order, wait_bills};
    let sms = crate::jobs::provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let (b, _) = brand(&app, "brand-refund-bill").await;
    b.staff(
        "/crm_api/links/addBusinessConfig",
        json!({"business_id": "outlet-1", "mode": 1, "time": 0, "status": 1,
               "sms_template": "Your bill: x_short_url", "sender_id": "ENGAGE"}),
    )
    .await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 1, "reference": "r1"})).await;
    pos_order(&b, "outlet-1", "RB-1", "9811400011", json!({})).await;
    let bill = wait_bills(&b, "outlet-1", 1).await[0].clone();
    let page_of = |bill: &Value| {
        let url = format!("{}/b/{}", app.base, bill["bill_id"].as_str().unwrap());
        let client = app.client.clone();
        async move { client.get(url).send().await.unwrap().text().await.unwrap() }
    };
    assert!(!page_of(&bill).await.contains("id=\"refund\""));
    // 83.50 of 283.50 given back, sent on its own
    let body = json!({"businessId": "outlet-1", "orderId": "RB-1", "refundId": "ret-1", "amount": 83.5});
    assert_eq!(
        post(&app, "/integration/v1/order/refund", &[("authorization", b.integration.as_str())], &body).await.0,
        200
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let page = loop {
        let page = page_of(&bill).await;
        if page.contains("id=\"refund\"") {
            break page;
        }
        assert!(std::time::Instant::now() < deadline, "the bill page never showed the refund: {page}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(page.contains("Refunded (items returned)") && page.contains("-₹83.50"), "{page}");
    assert!(page.contains("id=\"net\">₹200.00"), "{page}");
    // an order that arrives cancelled: no second bill, no second SMS paid
    pos_order(&b, "outlet-1", "RB-2", "9811400012", json!({"status": 2})).await;
    pos_order(&b, "outlet-1", "RB-3", "9811400013", json!({})).await;
    let billed = wait_bills(&b, "outlet-1", 2).await;
    assert!(billed.iter().all(|bill| bill["order_id"] != "RB-2"), "{billed:?}");
}

/// Bills delayed 15 minutes and "rate us" links delayed 30: an order billed, then refunded as a
/// whole before the drain runs, gets neither (its sends are cancelled, paid when queued and kept
/// paid); an order skipped for an empty wallet and cancelled meanwhile is not billed when the
/// generation job catches up after a recharge, while a live one is.
#[tokio::test]
async fn a_cancelled_order_gets_no_delayed_bill_or_feedback_and_the_job_bills_only_live_orders() {
    use crate::bills::{brand, pos_order, wait_bills};
    use crate::jobs::admin;
    let sms = crate::jobs::provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let (b, _) = brand(&app, "brand-cancel-sends").await;
    b.staff(
        "/crm_api/links/addBusinessConfig",
        json!({"business_id": "outlet-1", "mode": 1, "time": 15, "status": 1,
               "sms_template": "Your bill: x_short_url", "sender_id": "ENGAGE"}),
    )
    .await;
    b.staff("/crm_api/save/feedback/config", json!({"feedback_flow": 1, "feedback_sms": "true", "feedback_time": 30}))
        .await;
    // enough for the first order's bill and feedback SMS (0.16815 each, GST included), no more
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 0.34, "reference": "r1"})).await;
    pos_order(&b, "outlet-1", "CS-1", "9811400021", json!({})).await;
    wait_bills(&b, "outlet-1", 1).await;
    let auth = [("authorization", b.integration.as_str())];
    let whole = json!({"businessId": "outlet-1", "orderId": "CS-1", "refundId": "all"});
    assert_eq!(post(&app, "/integration/v1/order/refund", &auth, &whole).await.0, 200);
    crate::platform::wait_customer(&app, b.name, "9811400021", |c| c["total_orders"] == 0).await;
    // the drain an hour later: both delays have passed
    let later = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    let drained = admin(&app, "/admin/jobs/run", json!({"name": "sms_drain", "now": later})).await;
    assert_eq!(sms.deliveries().0, 0, "nothing is sent for a cancelled order: {drained}");

    // an empty wallet: the next order is skipped, then cancelled; another one stays live
    let spent = b.staff("/crm_api/wallet/balance", json!({"business_id": "outlet-1"})).await;
    let left: f64 = spent["balance"].as_str().unwrap().parse().unwrap();
    assert!(left < 0.16, "{spent}");
    pos_order(&b, "outlet-1", "CS-2", "9811400022", json!({})).await;
    pos_order(&b, "outlet-1", "CS-3", "9811400023", json!({})).await;
    pos_order(&b, "outlet-1", "CS-2", "9811400022", json!({"isCancelled": "true"})).await;
    // refunded whole on the refund route, then sent again by the POS, which knows nothing of it
    pos_order(&b, "outlet-1", "CS-4", "9811400024", json!({})).await;
    let whole = json!({"businessId": "outlet-1", "orderId": "CS-4", "refundId": "all-4"});
    assert_eq!(post(&app, "/integration/v1/order/refund", &auth, &whole).await.0, 200);
    pos_order(&b, "outlet-1", "CS-4", "9811400024", json!({"subtotal": 301})).await;
    crate::platform::wait_customer(&app, b.name, "9811400023", |c| c["total_orders"] == 1).await;
    crate::platform::wait_customer(&app, b.name, "9811400022", |c| c["total_orders"] == 0).await;
    crate::platform::wait_customer(&app, b.name, "9811400024", |c| c["total_orders"] == 0).await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 5, "reference": "r2"})).await;
    admin(&app, "/admin/jobs/run", json!({"name": "bill_generation"})).await;
    let billed = wait_bills(&b, "outlet-1", 2).await;
    let ids: Vec<&str> = billed.iter().filter_map(|bill| bill["order_id"].as_str()).collect();
    assert!(ids.contains(&"CS-3") && !ids.contains(&"CS-2") && !ids.contains(&"CS-4"), "only the live order: {ids:?}");
}

/// Cancellation flags come in the forms POS systems send them, and a status word engage does not
/// know is refused with the words it does.
#[tokio::test]
async fn cancellation_flags_are_read_in_every_form_and_unknown_status_words_are_refused() {
    let app = spawn_app(&[]).await;
    let brand = "flags-brand";
    let order = |id: &str, phone: &str, extra: Value| {
        let mut body = json!({"parentBusinessId": brand, "businessId": "o1", "orderId": id,
            "customer": {"phone": phone}, "amount": 50, "orderTime": format!("{DAY} 12:00:00")});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body
    };
    let cases = [
        ("9811500001", json!({"isCancelled": "true"})),
        ("9811500002", json!({"cancelled": 1})),
        ("9811500003", json!({"isRefunded": "1"})),
        ("9811500004", json!({"status": " CANCELLED "})),
        ("9811500005", json!({"status": "3"})),
    ];
    for (phone, extra) in &cases {
        send(&app, &order("F-1", phone, json!({}))).await;
        send(&app, &order("F-1", phone, extra.clone())).await;
    }
    // a paid word and a false flag keep the order
    send(&app, &order("F-2", "9811500006", json!({"status": "Completed", "isCancelled": "false"}))).await;
    for (phone, extra) in &cases {
        let customer = crate::platform::wait_customer(&app, brand, phone, |c| c["total_orders"] == 0).await;
        assert_eq!(customer["lifetime_value"].as_f64(), Some(0.0), "{extra}: {customer}");
    }
    crate::platform::wait_customer(&app, brand, "9811500006", |c| c["total_orders"] == 1).await;
    let (status, answer) =
        post(&app, "/injestion/platform", &[], &order("F-3", "9811500007", json!({"status": "shipped"}))).await;
    assert_eq!(status, 400, "{answer}");
    let text = answer.to_string();
    assert!(text.contains("shipped") && text.contains("cancelled") && text.contains("paid"), "{text}");
    let (status, answer) =
        post(&app, "/injestion/platform", &[], &order("F-3", "9811500007", json!({"isCancelled": "maybe"}))).await;
    assert_eq!(status, 400, "{answer}");
}

/// Refunds sent before their order are listed for staff until the order comes; then they apply.
#[tokio::test]
async fn refunds_waiting_for_their_order_are_listed_until_it_arrives() {
    let app = spawn_app(&[]).await;
    let brand = "waiting-brand";
    let staff = create_token(&app, "staff", brand).await;
    let integration = create_token(&app, "integration", brand).await;
    refund(&app, &integration, "W-1", "rf-a", Some(1000)).await;
    refund(&app, &integration, "W-2", "rf-b", None).await;
    let list = |body: Value| {
        let (app, staff) = (&app, staff.clone());
        async move {
            let (status, answer) = post(app, "/crm_api/get/waiting_refunds", &[("token", &staff)], &body).await;
            assert_eq!(status, 200, "{answer}");
            answer
        }
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let page = loop {
        let page = list(json!({"parent_business_id": brand})).await;
        if page["data"].as_array().map_or(0, Vec::len) == 2 {
            break page;
        }
        assert!(std::time::Instant::now() < deadline, "{page}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let first = &page["data"][0];
    assert_eq!((&first["business_id"], &first["order_id"]), (&json!("o1"), &json!("W-1")), "{page}");
    let amount: f64 = first["refunds"]["rf-a"].as_str().unwrap().parse().unwrap();
    assert_eq!(amount, 10.0, "{page}");
    assert_eq!(page["data"][1]["refunds"], json!({"rf-b": "whole"}), "{page}");
    assert_eq!(page["next"], Value::Null);
    // one a page: the cursor goes on
    let first = list(json!({"parent_business_id": brand, "limit": 1})).await;
    assert_eq!(first["data"].as_array().unwrap().len(), 1, "{first}");
    let after = first["next"].as_str().unwrap().to_owned();
    let second = list(json!({"parent_business_id": brand, "limit": 1, "after": after})).await;
    assert_eq!(second["data"][0]["order_id"], json!("W-2"), "{second}");
    // the order arrives: its refund applies and it leaves the list
    let order = json!({"parentBusinessId": brand, "businessId": "o1", "orderId": "W-1",
        "customer": {"phone": "9811700001"}, "amount": 50, "orderTime": format!("{DAY} 12:00:00")});
    send(&app, &order).await;
    let customer =
        crate::platform::wait_customer(&app, brand, "9811700001", |c| c["lifetime_value"].as_f64() == Some(40.0)).await;
    assert_eq!(customer["total_orders"], json!(1));
    let page = list(json!({"parent_business_id": brand})).await;
    assert_eq!(page["data"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["data"][0]["order_id"], json!("W-2"));
    // another outlet's filter sees none
    let none = list(json!({"parent_business_id": brand, "business_id": "o2"})).await;
    assert_eq!(none["data"], json!([]));
}

/// A regular with 600 orders (more than the 500 a customer row keeps one by one) refunds the
/// oldest: it is taken out of the totals and `/stats` as it was counted, not added as a new one.
#[tokio::test]
async fn a_refund_of_an_order_older_than_the_kept_history_takes_back_what_it_added() {
    let app = spawn_app(&[]).await;
    let brand = "history-brand";
    let staff = create_token(&app, "staff", brand).await;
    let integration = create_token(&app, "integration", brand).await;
    let phone = "9811800001";
    for n in 0..600 {
        let body = json!({"parentBusinessId": brand, "businessId": "o1", "orderId": format!("H-{n:03}"),
            "customer": {"phone": phone}, "amount": 10,
            "orderTime": format!("{DAY} {:02}:{:02}:00", n / 60, n % 60)});
        send(&app, &body).await;
    }
    crate::platform::wait_customer(&app, brand, phone, |c| c["total_orders"] == 600).await;
    refund(&app, &integration, "H-000", "rf-old", None).await;
    let customer = crate::platform::wait_customer(&app, brand, phone, |c| c["total_orders"] == 599).await;
    assert_eq!(customer["lifetime_value"].as_f64(), Some(5990.0), "{customer}");
    let period = json!({"parent_business_id": brand, "start": DAY, "end": DAY});
    let (status, answer) = post(&app, "/stats/dashboard/summary", &[("token", &staff)], &period).await;
    assert_eq!(status, 200, "{answer}");
    let totals = &answer["data"]["totals"];
    assert_eq!((&totals["orders"], &totals["refunded_orders"]), (&json!(599), &json!(1)), "{totals}");
    assert_eq!(totals["revenue"].as_f64(), Some(5990.0), "{totals}");
    assert_eq!(totals["gross_revenue"].as_f64(), Some(6000.0), "{totals}");
}
