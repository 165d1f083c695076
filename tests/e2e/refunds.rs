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
