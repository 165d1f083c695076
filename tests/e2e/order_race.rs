//! The order engine ranks copies of one order by the position at which the bus accepted them,
//! never by the clock (issue 56, `docs/refunds.md` "Which copy wins"): a POS that voids a sale
//! the moment it was answered, or flushes a backlog, gets exactly the last copy it sent, on the
//! embedded bus and on JetStream, from one connection and from eight at once.

use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::loyalty::post;
use crate::platform::create_token;

const DAY: &str = "2026-11-21";

fn sale(brand: &str, id: &str, phone: &str) -> Value {
    json!({"parentBusinessId": brand, "businessId": "o1", "orderId": id, "customer": {"phone": phone},
           "items": [{"name": "tea", "qty": 1, "price": 80}], "amount": 80, "orderTime": format!("{DAY} 10:00:00")})
}

/// The same order, cancelled (`status` 2).
fn void(brand: &str, id: &str, phone: &str) -> Value {
    let mut body = sale(brand, id, phone);
    body["status"] = json!(2);
    body
}

async fn send(client: &reqwest::Client, base: &str, path: &str, headers: &[(&str, &str)], body: &Value) {
    let mut request = client.post(format!("{base}{path}")).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    assert_eq!(status, 200, "{path} {body}: {}", response.text().await.unwrap_or_default());
}

/// Waits until the brand's last event (one sentinel order per phone, sent after everything
/// else) is applied: a partition applies a brand's events in the order it accepted them.
async fn settled(app: &TestApp, brand: &str, phones: &[String]) -> Vec<Value> {
    let mut customers = Vec::new();
    for phone in phones {
        // the sentinel is the only amount with paise
        let customer = crate::platform::wait_customer(app, brand, phone, |c| {
            c["lifetime_value"].as_f64().is_some_and(|v| ((v * 100.0).round() as i64) % 100 == 1)
        })
        .await;
        customers.push(customer);
    }
    customers
}

async fn sentinels(app: &TestApp, brand: &str, phones: &[String]) {
    for phone in phones {
        let mut body = sale(brand, &format!("S-{phone}"), phone);
        body["amount"] = json!(0.01);
        body["items"] = json!([{"name": "sentinel", "qty": 1, "price": 0.01}]);
        body["orderTime"] = json!(format!("{DAY} 23:59:59"));
        send(&app.client, &app.base, "/injestion/platform", &[], &body).await;
    }
}

/// 200 sales each voided at once on one keep-alive connection, then 200 more from 8 connections
/// at once (each voids its own sales): every customer ends with their sentinel order alone, and
/// `/stats` counts the sentinels alone.
async fn voids_right_after_their_sale_always_win(env: &[(&str, &str)]) {
    let app = spawn_app(env).await;
    let brand = "race-brand";
    let staff = create_token(&app, "staff", brand).await;
    let phones: Vec<String> = (0..8).map(|n| format!("98000000{n:02}")).collect();
    // one connection, each request answered before the next
    for n in 0..200 {
        let (id, phone) = (format!("A-{n}"), &phones[n % phones.len()]);
        send(&app.client, &app.base, "/injestion/platform", &[], &sale(brand, &id, phone)).await;
        send(&app.client, &app.base, "/injestion/platform", &[], &void(brand, &id, phone)).await;
    }
    // eight connections at once
    let mut tasks = Vec::new();
    for thread in 0..8usize {
        let (base, phones) = (app.base.clone(), phones.clone());
        tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            for n in 0..25 {
                let (id, phone) = (format!("B-{thread}-{n}"), &phones[(thread + n) % phones.len()]);
                send(&client, &base, "/injestion/platform", &[], &sale(brand, &id, phone)).await;
                send(&client, &base, "/injestion/platform", &[], &void(brand, &id, phone)).await;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    sentinels(&app, brand, &phones).await;
    for customer in settled(&app, brand, &phones).await {
        assert_eq!(customer["total_orders"], json!(1), "only the sentinel counts: {customer}");
        assert_eq!(customer["lifetime_value"].as_f64(), Some(0.01), "{customer}");
    }
    let period = json!({"parent_business_id": brand, "start": DAY, "end": DAY});
    let (status, answer) = post(&app, "/stats/dashboard/summary", &[("token", &staff)], &period).await;
    assert_eq!(status, 200, "{answer}");
    let totals = &answer["data"]["totals"];
    assert_eq!(totals["orders"], json!(phones.len()), "{totals}");
    assert_eq!(totals["refunded_orders"], json!(400), "{totals}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn voids_right_after_their_sale_always_win_on_the_embedded_bus() {
    voids_right_after_their_sale_always_win(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn voids_right_after_their_sale_always_win_on_jetstream() {
    let nats = crate::procs::NatsServer::start().await;
    voids_right_after_their_sale_always_win(&[("ENGAGE_NATS_URL", &nats.url)]).await;
}

/// An orderPush sale, then at once a whole refund on the refund route, 100 times; and ten
/// refunds of one order with distinct ids fired at once from eight connections: every refund
/// counts exactly once.
async fn refunds_right_after_their_sale_always_count(env: &[(&str, &str)]) {
    let app = spawn_app(env).await;
    let brand = "race-refunds";
    let integration = create_token(&app, "integration", brand).await;
    let auth = [("authorization", integration.as_str())];
    let phones: Vec<String> = (0..4).map(|n| format!("97000000{n:02}")).collect();
    for n in 0..100 {
        let (id, phone) = (format!("P-{n}"), &phones[n % phones.len()]);
        let mut body = sale(brand, &id, phone);
        body.as_object_mut().unwrap().remove("parentBusinessId");
        send(&app.client, &app.base, "/api/ingestion/orderPush", &auth, &body).await;
        let refund = json!({"businessId": "o1", "orderId": id, "refundId": format!("RF-{n}")});
        send(&app.client, &app.base, "/integration/v1/order/refund", &auth, &refund).await;
    }
    // one big order, ten partial refunds at once
    let big = phones[0].clone();
    let mut body = sale(brand, "BIG", &big);
    body["amount"] = json!(1000);
    body["items"] = json!([{"name": "feast", "qty": 1, "price": 1000}]);
    send(&app.client, &app.base, "/injestion/platform", &[], &body).await;
    let mut tasks = Vec::new();
    for n in 0..10 {
        let (base, integration) = (app.base.clone(), integration.clone());
        tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            let refund = json!({"businessId": "o1", "orderId": "BIG", "refundId": format!("BIG-{n}"), "amount": 7});
            send(&client, &base, "/integration/v1/order/refund", &[("authorization", &integration)], &refund).await;
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    sentinels(&app, brand, &phones).await;
    let customers = settled(&app, brand, &phones).await;
    for (phone, customer) in phones.iter().zip(&customers) {
        let (orders, ltv) = if *phone == big { (2, 930.01) } else { (1, 0.01) };
        assert_eq!(customer["total_orders"], json!(orders), "{phone}: {customer}");
        assert_eq!(customer["lifetime_value"].as_f64(), Some(ltv), "{phone}: {customer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refunds_right_after_their_sale_always_count_on_the_embedded_bus() {
    refunds_right_after_their_sale_always_count(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refunds_right_after_their_sale_always_count_on_jetstream() {
    let nats = crate::procs::NatsServer::start().await;
    refunds_right_after_their_sale_always_count(&[("ENGAGE_NATS_URL", &nats.url)]).await;
}

/// A redelivery: the sale's first delivery fails (an injected panic) and comes again after its
/// void was applied; the older copy is recognised as older and changes nothing (on both buses).
/// Beside it, an order updated twice in a row counts its last amount.
async fn a_copy_delivered_again_after_a_newer_one_changes_nothing(env: &[(&str, &str)]) {
    let mut settings = vec![("ENGAGE_FAULT_PANIC_ORDER_ID", "RD-1")];
    settings.extend_from_slice(env);
    let app = spawn_app(&settings).await;
    let brand = "redelivery-brand";
    let phones = vec!["9812000001".to_owned()];
    send(&app.client, &app.base, "/injestion/platform", &[], &sale(brand, "RD-1", &phones[0])).await;
    send(&app.client, &app.base, "/injestion/platform", &[], &void(brand, "RD-1", &phones[0])).await;
    // a second order, updated twice in the same breath: the last amount counts
    let mut first = sale(brand, "RD-2", &phones[0]);
    first["amount"] = json!(30);
    let mut second = first.clone();
    second["amount"] = json!(20);
    send(&app.client, &app.base, "/injestion/platform", &[], &first).await;
    send(&app.client, &app.base, "/injestion/platform", &[], &second).await;
    // the panicked sale comes back after 0.5 s: wait past it, then the sentinel
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    sentinels(&app, brand, &phones).await;
    let customer = settled(&app, brand, &phones).await.remove(0);
    assert_eq!(customer["total_orders"], json!(2), "RD-2 and the sentinel: {customer}");
    assert_eq!(customer["lifetime_value"].as_f64(), Some(20.01), "{customer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_delivered_again_after_a_newer_one_changes_nothing_on_the_embedded_bus() {
    a_copy_delivered_again_after_a_newer_one_changes_nothing(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_delivered_again_after_a_newer_one_changes_nothing_on_jetstream() {
    let nats = crate::procs::NatsServer::start().await;
    a_copy_delivered_again_after_a_newer_one_changes_nothing(&[("ENGAGE_NATS_URL", &nats.url)]).await;
}
