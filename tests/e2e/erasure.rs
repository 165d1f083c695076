//! Erasure, randomized, on the embedded engine: customers with orders, points, a redemption, a
//! profile, subscriptions, feedback requests and queued campaign messages; some are erased; then
//! every row of every table of the store (the bus's tables and dead letters included) is read and
//! must name neither their number nor their name, while the brand's totals stay and the customers
//! kept are still there.

use chrono::Utc;
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::helpers::spawn_app;
use crate::jobs::provider;
use crate::journey_runs::Brand;
use crate::loyalty::post;
use crate::platform::{create_token, wait_customer};

const FIRST: [&str; 6] = ["Zoya", "Arjun", "Meher", "Kabir", "Ishita", "Rohan"];
const LAST: [&str; 5] = ["Qureshi", "Menon", "Bhatt", "Dsouza", "Grewal"];

/// Whether `haystack` holds `needle`.
fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn erased_customers_are_in_no_table_while_the_brand_totals_stay() {
    let seed: u64 = std::env::var("ENGAGE_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    println!("seed {seed} (ENGAGE_TEST_SEED={seed} repeats this run)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let b = Brand {
        app: &app,
        name: "brand-scan",
        staff: create_token(&app, "staff", "brand-scan").await,
        integration: create_token(&app, "integration", "brand-scan").await,
    };
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 50, "reference": "s1"})).await;
    b.staff(
        "/crm_api/add_edit_rules",
        json!({"earn_percent": 10, "point_value": 1, "min_redeem_points": 1,
        "max_redeem_percent": 100, "points_expiry_days": 30}),
    )
    .await;
    b.staff(
        "/crm_api/save/feedback/config",
        json!({"feedback_flow": 1, "feedback_sms": "true",
        "sms_template": "Hi x_cust_name, rate x_order_id: x_feedback_url", "sender_id": "ENGAGE"}),
    )
    .await;

    // 6 to 9 customers, each with 1 to 4 orders (the first, always erased, a regular of 20: more
    // than their row keeps), a random name, some with a profile, a redemption or an opt-out
    let count = rng.gen_range(6..10);
    let mut customers = Vec::new();
    for n in 0..count {
        let phone = format!("98117{:04}{n}", rng.gen_range(0..10_000));
        let name = format!("{} {}{n}", FIRST[rng.gen_range(0..FIRST.len())], LAST[rng.gen_range(0..LAST.len())]);
        let orders = if n == 0 { 20 } else { rng.gen_range(1..5) };
        for o in 0..orders {
            b.order(&format!("S-{n}-{o}"), &phone, &name, f64::from(rng.gen_range(100..900)), Utc::now()).await;
        }
        customers.push((phone, name, orders));
    }
    for (phone, _, orders) in &customers {
        wait_customer(&app, b.name, phone, |c| c["total_orders"] == *orders).await;
    }
    let auth = [("authorization", b.integration.as_str())];
    for (n, (phone, name, _)) in customers.iter().enumerate() {
        if rng.gen_bool(0.5) {
            let email = format!("{}@mail.test", name.replace(' ', "."));
            b.profile(phone, json!({"email": email, "dob": "1990-04-12"})).await;
        }
        if rng.gen_bool(0.5) {
            let body =
                json!({"customer_number": phone, "points": 1, "order_id": format!("R-{n}"), "outlet_id": "outlet-1"});
            let (status, answer) = post(&app, "/integration/v1/redeem_points", &auth, &body).await;
            assert_eq!(status, 200, "{answer}");
        }
        if rng.gen_bool(0.3) {
            b.staff("/crm_api/consent/customer", json!({"mobile_number": phone, "chat": false})).await;
        }
    }
    let csv: String = customers.iter().map(|(phone, name, _)| format!("{phone},{name}\n")).collect();
    crate::consent::bulk(&b, &format!("Phone,Name\n{csv}")).await;

    let ist = chrono::FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
    let today = Utc::now().with_timezone(&ist).format("%Y-%m-%d").to_string();
    let period = json!({"start": today, "end": today});
    let totals_before = b.staff("/stats/dashboard/summary", period.clone()).await;

    // erase at least one and keep at least one
    let erase_count = rng.gen_range(1..customers.len());
    let (erased, kept) = customers.split_at(erase_count);
    let amount = |text: String| text.parse::<f64>().unwrap();
    let (regular, _, _) = &customers[0];
    let export = b.staff("/crm_api/customer/export", json!({"mobile_number": regular})).await;
    assert_eq!(export["orders"].as_array().map(Vec::len), Some(20), "every order of a regular is exported");
    for (phone, _, _) in erased {
        let paid = amount(b.balance().await);
        let done = b.staff("/crm_api/customer/erase", json!({"mobile_number": phone})).await;
        assert!(done["deleted"].as_u64().unwrap_or(0) >= 1, "{done}");
        // their messages not yet sent (feedback, the campaign) are cancelled and paid back
        let credited = amount(b.balance().await) - paid;
        assert_eq!(done["cancelled"].as_u64().unwrap_or(0) > 0, credited > 0.0, "{done} credited {credited}");
        let again = b.staff("/crm_api/customer/erase", json!({"mobile_number": phone})).await;
        assert_eq!((&again["deleted"], &again["anonymised"], &again["cancelled"]), (&json!(0), &json!(0), &json!(0)));
        assert_eq!(amount(b.balance().await), paid + credited, "credited once");
        let export = b.staff("/crm_api/customer/export", json!({"mobile_number": phone})).await;
        assert!(export["profile"].is_null() && export["orders"] == json!([]), "{export}");
        let body = json!({"parent_business_id": b.name, "customer_number": phone});
        assert_eq!(post(&app, "/crm_api/get/customer/details", &[], &body).await.0, 404);
    }
    assert_eq!(b.staff("/stats/dashboard/summary", period).await, totals_before, "the brand's totals stay");

    // the bound docs/consent.md states: the erasure's answer comes once the journal that held the
    // bytes is gone; the tables' compaction follows at once (its marker file goes when it is done)
    let files = files_once_purged(&app).await;
    let bytes: usize = files.iter().map(|(_, content)| content.len()).sum();
    for (phone, name, _) in erased {
        for (path, content) in &files {
            for needle in [phone.as_str(), name.as_str()] {
                if let Some(at) = content.windows(needle.len()).position(|w| w == needle.as_bytes()) {
                    let around = &content[at.saturating_sub(200)..(at + 200).min(content.len())];
                    let listing: Vec<String> =
                        files.iter().map(|(p, c)| format!("{} {}", p.display(), c.len())).collect();
                    panic!(
                        "{} still holds the erased {needle}: {}\n{listing:#?}",
                        path.display(),
                        String::from_utf8_lossy(around)
                    );
                }
            }
        }
    }
    let on_disk = |needle: &str| files.iter().any(|(_, content)| holds(content, needle));
    assert!(kept.iter().any(|(phone, _, _)| on_disk(phone)), "the scan can find a number: {bytes} bytes");
    println!("scanned {} files, {bytes} bytes, under the data dir", files.len());
    let metrics = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    assert!(
        metrics.lines().any(|l| l.starts_with("engage_store_purges_total{step=\"compaction\"}")),
        "the purge is on /metrics"
    );

    let dir = app.stop().await;
    let store = engage_storage::EmbeddedStore::open(dir.path()).expect("the store reopens");
    let rows = store.every_row().expect("every row");
    assert!(rows.len() > 50, "the scan reads the store: {} rows", rows.len());
    let mut tables: Vec<&str> = rows.iter().map(|(table, _, _)| table.as_str()).collect();
    tables.sort_unstable();
    tables.dedup();
    for (phone, name, _) in erased {
        for (table, key, value) in &rows {
            for needle in [phone.as_str(), name.as_str()] {
                assert!(
                    !holds(key, needle) && !holds(value, needle),
                    "{table} still names {needle}: key {:?} value {}",
                    String::from_utf8_lossy(key),
                    String::from_utf8_lossy(value)
                );
            }
        }
    }
    for (phone, name, _) in kept {
        let found = |needle: &str| rows.iter().any(|(_, key, value)| holds(key, needle) || holds(value, needle));
        assert!(found(phone) && found(name), "a kept customer is still there: {phone} {name}");
    }
    println!("scanned {} rows of {} tables: {tables:?}", rows.len(), tables.len());
}

/// Every file under the app's data directory with its bytes, once the compaction that follows
/// an erasure is done (its `purge-pending` marker gone; at most 60 s).
async fn files_once_purged(app: &crate::helpers::TestApp) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let marker = app.dir.path().join("purge-pending");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while marker.exists() {
        assert!(std::time::Instant::now() < deadline, "the compaction after the erasure did not end in 60 s");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // the old table files go once no read holds them (fjall's retire thread): let it run
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let mut files = Vec::new();
    let mut folders = vec![app.dir.path().to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(content) = std::fs::read(&path) {
                files.push((path, content));
            }
        }
    }
    files
}
