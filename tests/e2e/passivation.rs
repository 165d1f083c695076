//! A brand's actor stops when idle and costs nothing until it is needed (issue 57): a passivated
//! brand answers its next question and applies its next order exactly from the store (nothing was
//! lost with the actor), and the nightly jobs over brands with nothing due wake none of them.

use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::json;

use crate::cluster_kit::metric;
use crate::helpers::{spawn_app, TestApp};
use crate::journey_runs::{run, Brand};
use crate::platform::{create_token, wait_customer};

async fn live_actors(app: &TestApp) -> f64 {
    metric(&app.client, &app.base, "engage_tenant_actors ").await
}

async fn wait_all_passivated(app: &TestApp) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while live_actors(app).await > 0.0 {
        assert!(Instant::now() < deadline, "actors still live: {}", live_actors(app).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_passivated_brand_answers_from_the_store_and_idle_brands_are_not_woken_by_jobs() {
    let app = spawn_app(&[("ENGAGE_PASSIVATE_AFTER_SECS", "1")]).await;
    let mut brands = Vec::new();
    for name in ["brand-idle-1", "brand-idle-2", "brand-idle-3"] {
        let b = Brand {
            app: &app,
            name,
            staff: create_token(&app, "staff", name).await,
            integration: create_token(&app, "integration", name).await,
        };
        b.staff("/crm_api/add_edit_rules", json!({"earn_percent": 10, "point_value": 1})).await;
        b.order("P-1", "9811600001", "Idle Customer", 500.0, Utc::now()).await;
        wait_customer(&app, name, "9811600001", |c| c["total_orders"] == 1).await;
        brands.push(b);
    }
    wait_all_passivated(&app).await;
    let stopped = metric(&app.client, &app.base, "engage_actor_passivations_total").await;
    assert!(stopped >= 3.0, "every brand's actor stopped: {stopped}");

    // the nightly jobs find nothing due for these brands: no actor starts
    for job in ["journeys", "points_expiry", "abandoned_cart"] {
        let ran = run(&app, job, Utc::now()).await;
        assert!(ran["outcome"].is_object(), "{job}: {ran}");
        assert_eq!(live_actors(&app).await, 0.0, "{job} woke an idle brand: {ran}");
    }

    // the next question and the next order of a stopped brand are exact
    let b = &brands[0];
    let customer = wait_customer(&app, b.name, "9811600001", |c| c["total_orders"] == 1).await;
    assert_eq!(customer["loyalty_points"], 50, "{customer}");
    b.order("P-2", "9811600001", "Idle Customer", 200.0, Utc::now()).await;
    b.order("P-1", "9811600001", "Idle Customer", 500.0, Utc::now()).await; // a replay: nothing
    let customer = wait_customer(&app, b.name, "9811600001", |c| c["total_orders"] == 2).await;
    assert_eq!(customer["loyalty_points"], 70, "{customer}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again = wait_customer(&app, b.name, "9811600001", |c| c["total_orders"] == 2).await;
    assert_eq!((&again["total_orders"], &again["loyalty_points"]), (&json!(2), &json!(70)), "the replay counted");
}

/// A regular's orders past the ones their row keeps (16) stay exact: a cancelled old order takes
/// back what it added, a replay of an old one counts nothing, the last order and LTV hold; the
/// customer cache's size shows in `/metrics` and leaves with the actor.
#[tokio::test]
async fn a_regulars_old_orders_stay_exact_and_the_cache_bytes_leave_with_the_actor() {
    let app = spawn_app(&[("ENGAGE_PASSIVATE_AFTER_SECS", "2")]).await;
    let b = Brand::new(&app, "brand-regular").await;
    let phone = "9811600002";
    let at = |n: u32| Utc::now() - chrono::Duration::days(40) + chrono::Duration::hours(i64::from(n));
    for n in 1..=30 {
        b.order(&format!("R-{n}"), phone, "Regular", 100.0, at(n)).await;
    }
    let customer = wait_customer(&app, b.name, phone, |c| c["total_orders"] == 30).await;
    assert_eq!(customer["lifetime_value"], 3000.0, "{customer}");
    let cached = metric(&app.client, &app.base, "engage_cached_customer_bytes").await;
    assert!(cached > 0.0, "the cached customer's bytes show");
    assert_eq!(metric(&app.client, &app.base, "engage_cached_customers").await, 1.0);

    // the first order, long folded out of the row: cancelled, then its sale replayed
    let cancel = json!({"parentBusinessId": b.name, "businessId": "outlet-1", "orderId": "R-1",
        "customer": {"name": "Regular", "phone": phone}, "amount": 100.0, "status": 2,
        "orderTime": crate::journey_runs::ist(at(1))});
    assert_eq!(app.post_json("/injestion/platform", &cancel).await.0, 200);
    let customer = wait_customer(&app, b.name, phone, |c| c["total_orders"] == 29).await;
    assert_eq!(customer["lifetime_value"], 2900.0, "{customer}");
    b.order("R-2", phone, "Regular", 100.0, at(2)).await; // the same content again: nothing
    b.order("R-31", phone, "Regular", 50.0, at(31)).await;
    let customer = wait_customer(&app, b.name, phone, |c| c["total_orders"] == 30).await;
    assert_eq!(customer["lifetime_value"], 2950.0, "{customer}");

    // after the actor stops: its cache left the gauges, and the stored row answers the same
    wait_all_passivated(&app).await;
    assert_eq!(metric(&app.client, &app.base, "engage_cached_customers").await, 0.0);
    assert_eq!(metric(&app.client, &app.base, "engage_cached_customer_bytes").await, 0.0);
    let again = wait_customer(&app, b.name, phone, |c| c["total_orders"] == 30).await;
    assert_eq!(again["lifetime_value"], 2950.0, "{again}");
}

/// The node's bound on cached customers holds across brands (`ENGAGE_CACHED_CUSTOMERS_MAX`): with
/// room for 4, two brands' 12 customers leave at most 4 (plus one per live actor) cached, and the
/// customers dropped from the cache still get every order exactly (read back from the store).
#[tokio::test]
async fn the_nodes_bound_on_cached_customers_holds_and_dropped_customers_stay_exact() {
    let app = spawn_app(&[("ENGAGE_CACHED_CUSTOMERS_MAX", "4")]).await;
    let brands = [Brand::new(&app, "brand-bound-a").await, Brand::new(&app, "brand-bound-b").await];
    let phone = |n: u32| format!("98116{n:05}");
    for round in 1..=2 {
        for n in 0..6 {
            for b in &brands {
                b.order(&format!("B-{round}-{n}"), &phone(n), "Bounded", 100.0, Utc::now()).await;
            }
        }
        for b in &brands {
            for n in 0..6 {
                wait_customer(&app, b.name, &phone(n), |c| c["total_orders"] == round).await;
            }
        }
        let cached = metric(&app.client, &app.base, "engage_cached_customers").await;
        assert!((1.0..=6.0).contains(&cached), "round {round}: {cached} customers cached for a bound of 4");
    }
    for b in &brands {
        let customer = wait_customer(&app, b.name, &phone(0), |c| c["total_orders"] == 2).await;
        assert_eq!(customer["lifetime_value"], 200.0, "{customer}");
    }
}
