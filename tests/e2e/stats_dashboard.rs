//! The dashboard page (`/stats/dashboard`) in headless Chromium: signed in, it shows what the
//! stats routes answer, by keyboard, with axe-core clean; and [`drive`], the browser step runner
//! the other page tests share.

use serde_json::{json, Value};

use crate::helpers::spawn_app;
use crate::loyalty::post;
use crate::platform::create_token;
use crate::stats::stats;

/// Runs `steps` on `url` in headless Chromium (`browser/drive.py`): the values of the `eval` steps.
pub(crate) async fn drive(url: String, steps: Value) -> Vec<Value> {
    let chromium = crate::helpers::required_env("ENGAGE_TEST_CHROMIUM");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/browser/drive.py");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .arg(script)
            .arg(chromium)
            .arg(url)
            .arg(steps.to_string())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "the browser failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `value` with every number as a float (the page's numbers and the answers' compare equal).
fn floats(value: &Value) -> Value {
    match value {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(items) => Value::Array(items.iter().map(floats).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), floats(v))).collect()),
        other => other.clone(),
    }
}

/// What the dashboard shows, read from its DOM.
const SHOWN: &str = r#"(function(){const q=(s)=>[...document.querySelectorAll(s)];return {
 cards: Object.fromEntries(q('#cards [data-figure]').map(e=>[e.dataset.figure, Number(e.dataset.value)])),
 series: q('#series-chart rect').map(e=>[e.dataset.date, Number(e.dataset.orders), Number(e.dataset.revenue)]),
 heat: q('#heatmap-chart rect').filter(e=>e.dataset.orders!=='0').map(e=>[Number(e.dataset.weekday), Number(e.dataset.hour), Number(e.dataset.orders)]),
 cells: q('#heatmap-chart rect').length,
 bands: q('#meal-bars [data-band]').map(e=>[e.dataset.band, Number(e.dataset.orders)]),
 top: q('#top-list [data-name]').map(e=>[e.dataset.name, Number(e.dataset.quantity)]),
 outlets: q('#outlet-rows tr').map(e=>[e.dataset.outlet, Number(e.dataset.revenue), e.dataset.underperforming==='true']),
 loyalty: Object.fromEntries(q('#loyalty-cards [data-figure]').map(e=>[e.dataset.figure, e.dataset.value])),
 funnels: Object.fromEntries(q('[data-funnel]').map(f=>[f.dataset.funnel, Object.fromEntries([...f.querySelectorAll('[data-step]')].map(s=>[s.dataset.step, Number(s.dataset.value)]))])),
 error: document.querySelector('#error').textContent,
 outlet_names: q('#outlet-rows tr').map(e=>[e.dataset.outlet, (e.querySelector('[data-name]')||{dataset:{}}).dataset.name]),
 choices: q('#outlet option').map(e=>[e.value, e.textContent]),
 nps_said: (document.querySelector('[data-step="nps"] .muted')||{}).textContent||'',
 help: document.querySelector('#token-help').textContent.replace(/\s+/g,' '),
 width: document.documentElement.scrollWidth }})()"#;

#[tokio::test]
async fn the_dashboard_signs_in_and_shows_what_the_stats_routes_answer() {
    let app = spawn_app(&[]).await;
    let brand = "dash-brand";
    let staff = create_token(&app, "staff", brand).await;
    let rules = json!({"parent_business_id": brand, "earn_percent": 10, "min_bill": 0});
    assert_eq!(post(&app, "/crm_api/add_edit_rules", &[("token", &staff)], &rules).await.0, 200);
    // o1 and o2 have names; o3 is known by its id alone
    for (outlet, name) in [("o1", "Indiranagar"), ("o2", "Koramangala")] {
        let config = json!({"parent_business_id": brand, "business_id": outlet, "business_name": name});
        assert_eq!(post(&app, "/crm_api/add_b_config", &[("token", &staff)], &config).await.0, 200);
    }
    // three outlets over a week: o3 sells far less than the others
    let mut n = 0;
    for day in 5..=11 {
        for (outlet, orders, price) in [("o1", 4, 250.0), ("o2", 3, 300.0), ("o3", 1, 90.0)] {
            for k in 0..orders {
                n += 1;
                let item = ["dosa", "coffee", "thali"][(n % 3) as usize];
                let body = json!({"parentBusinessId": brand, "businessId": outlet, "orderId": format!("D-{n}"),
                    "customer": {"name": "Ravi", "phone": format!("97{:08}", n % 9)},
                    "items": [{"name": item, "qty": 1 + k % 2, "price": price}], "amount": price * f64::from(1 + k % 2),
                    "orderTime": format!("2026-10-{day:02} {:02}:05:00", 8 + 3 * k), "channel": "dine-in"});
                assert_eq!(post(&app, "/injestion/platform", &[], &body).await.0, 200);
            }
        }
    }
    let period = json!({"parent_business_id": brand, "start": "2026-10-05", "end": "2026-10-11", "limit": 10});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let summary = loop {
        let summary = stats(&app, &staff, "/stats/dashboard/summary", period.clone()).await;
        if summary["totals"]["orders"] == json!(n) {
            break summary;
        }
        assert!(std::time::Instant::now() < deadline, "orders never all counted: {summary}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let orders = stats(&app, &staff, "/stats/metrics/orders", period.clone()).await;
    let heatmap = stats(&app, &staff, "/stats/metrics/hour-heatmap", period.clone()).await;
    let meals = stats(&app, &staff, "/stats/metrics/meal-breakdown", period.clone()).await;
    let top = stats(&app, &staff, "/stats/metrics/top-items", period.clone()).await;
    let outlets = stats(&app, &staff, "/stats/metrics/outlets", period.clone()).await;
    let campaigns = stats(&app, &staff, "/stats/metrics/campaigns", period.clone()).await;

    let shots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = |name: &str| shots.join(name).to_string_lossy().into_owned();
    let sign_in = |token: &str| {
        json!([
            {"fill": "#token", "value": token},
            {"fill": "#start", "value": "2026-10-05"}, {"fill": "#end", "value": "2026-10-11"},
            {"click": "#show"},
            {"wait": "document.body.dataset.ready === '1' || document.body.dataset.ready === 'error'"},
        ])
    };
    let mut steps = sign_in(&staff);
    for step in [
        json!({"viewport": [1280, 900]}),
        json!({"screenshot": shot("dashboard.png")}),
        json!({"eval": SHOWN}),
        json!({"viewport": [390, 844]}),
        json!({"wait": "document.documentElement.clientWidth <= 390"}),
        json!({"screenshot": shot("dashboard-phone.png")}),
        json!({"eval": SHOWN}),
    ] {
        steps.as_array_mut().unwrap().push(step);
    }
    let shown = floats(&Value::Array(drive(format!("{}/dashboard", app.base), steps).await));
    let (desktop, phone) = (&shown[0], &shown[1]);
    assert_eq!(desktop["error"], "", "{desktop}");

    let totals = &summary["totals"];
    for figure in ["orders", "revenue", "average_order_value", "new_customers", "returning_orders", "discounts"] {
        assert_eq!(desktop["cards"][figure].as_f64(), totals[figure].as_f64(), "{figure}: {desktop}");
    }
    let series: Vec<Value> =
        orders["series"].as_array().unwrap().iter().map(|s| json!([s["date"], s["orders"], s["revenue"]])).collect();
    assert_eq!(desktop["series"], floats(&json!(series)));
    assert_eq!(desktop["cells"], 168.0);
    let heat: Vec<Value> = heatmap["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["orders"] != 0)
        .map(|c| json!([c["weekday"], c["hour"], c["orders"]]))
        .collect();
    assert_eq!(desktop["heat"], floats(&json!(heat)));
    let bands: Vec<Value> =
        meals["bands"].as_array().unwrap().iter().map(|b| json!([b["band"], b["orders"]])).collect();
    assert_eq!(desktop["bands"], floats(&json!(bands)));
    let items: Vec<Value> =
        top["by_revenue"].as_array().unwrap().iter().map(|i| json!([i["name"], i["quantity"]])).collect();
    assert_eq!(desktop["top"], floats(&json!(items)));
    let ranked: Vec<Value> = outlets["outlets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| json!([o["business_id"], o["revenue"], o["underperforming"]]))
        .collect();
    assert_eq!(desktop["outlets"], floats(&json!(ranked)));
    assert_eq!(desktop["outlets"][2], json!(["o3", 630.0, true]), "o3 is marked: {desktop}");
    // outlets by name (the id on a second line), the list offers them by name too
    assert_eq!(outlets["outlets"][0]["name"], "Indiranagar", "{outlets}");
    assert_eq!(desktop["outlet_names"], json!([["o1", "Indiranagar"], ["o2", "Koramangala"], ["o3", ""]]));
    assert_eq!(
        desktop["choices"],
        json!([["", "Every outlet"], ["o1", "Indiranagar (o1)"], ["o2", "Koramangala (o2)"], ["o3", "o3"]])
    );
    // no NPS answers in the period: said so, not a score of 0
    assert_eq!(desktop["nps_said"], "No NPS answers yet", "{desktop}");
    assert!(desktop["help"].as_str().unwrap().contains("engage tokens create --kind staff"), "{desktop}");
    assert_eq!(desktop["loyalty"]["points_earned"], json!(totals["points_earned"].to_string()));
    assert_eq!(desktop["loyalty"]["fraud_flags"], "0");
    assert_eq!(desktop["funnels"]["journeys"]["customers"], floats(&campaigns["journeys"]["customers"]));
    assert_eq!(desktop["funnels"]["bills"]["sent"], floats(&campaigns["bills"]["sent"]));
    // the same figures at phone width, with nothing wider than the screen
    assert_eq!(phone["cards"], desktop["cards"]);
    assert!(phone["width"].as_f64().unwrap() <= 390.0, "wider than a phone: {phone}");
    for name in ["dashboard.png", "dashboard-phone.png"] {
        assert!(std::fs::metadata(shots.join(name)).unwrap().len() > 10_000, "{name} is a real screenshot");
    }

    // NPS: one answer today (a promoter) is an NPS of 100 on a period that holds today
    let nps = json!({"parentBusinessId": brand, "businessId": "o1", "mobileNo": "9876512345", "rating": 10});
    assert_eq!(post(&app, "/crm_api/nps/data", &[], &nps).await.0, 200);
    let today =
        chrono::Utc::now().with_timezone(&chrono::FixedOffset::east_opt(19_800).unwrap()).date_naive().to_string();
    let (_, report) = post(
        &app,
        "/crm_api/npsData",
        &[("token", &staff)],
        &json!({"parent_business_id": brand, "start": today, "end": today}),
    )
    .await;
    let mut steps = sign_in(&staff);
    for (n, value) in [(1, &today), (2, &today)] {
        steps[n]["value"] = json!(value);
    }
    steps.as_array_mut().unwrap().push(json!({"eval": SHOWN}));
    let shown = floats(&drive(format!("{}/dashboard", app.base), steps).await[0]);
    assert_eq!(shown["funnels"]["feedback"]["nps"], floats(&report["data"]["brand"]["nps"]), "{shown}");
    assert_eq!(shown["funnels"]["feedback"]["nps"], json!(100.0));
    assert_eq!(shown["funnels"]["feedback"]["nps_responses"], json!(1.0));

    // a wrong token: nothing shown, and the page says why in words (no API path)
    let mut steps = sign_in("not-a-token");
    steps.as_array_mut().unwrap().push(json!({"screenshot": shot("dashboard-wrong-token.png")}));
    steps.as_array_mut().unwrap().push(json!({"eval": SHOWN}));
    let refused = &drive(format!("{}/dashboard", app.base), steps).await[0];
    let said = refused["error"].as_str().unwrap();
    assert!(said.contains("token was not accepted") && !said.contains('/'), "{refused}");
    assert_eq!(refused["cards"], json!({}));

    // one outlet chosen: its figures, and every outlet still ranked with it marked
    let o2 = stats(
        &app,
        &staff,
        "/stats/dashboard/summary",
        json!({"parent_business_id": brand, "business_id": "o2",
        "start": "2026-10-05", "end": "2026-10-11"}),
    )
    .await;
    // signed in, the outlet is picked from the list: the board follows at once
    let mut steps = sign_in(&staff);
    for step in [
        json!({"fill": "#outlet", "value": "o2"}),
        json!({"wait": "document.body.dataset.ready === '1' && document.getElementById('period').textContent.startsWith('Outlet Koramangala')"}),
        json!({"screenshot": shot("dashboard-outlet.png")}),
        json!({"eval": SHOWN}),
        json!({"eval": "[...document.querySelectorAll('#outlet-rows tr')].map(e=>[e.dataset.outlet, e.dataset.selected])"}),
    ] {
        steps.as_array_mut().unwrap().push(step);
    }
    let values = drive(format!("{}/dashboard", app.base), steps).await;
    let shown = floats(&values[0]);
    assert_eq!(shown["cards"]["orders"].as_f64(), o2["totals"]["orders"].as_f64(), "{shown}");
    assert_eq!(shown["outlets"].as_array().unwrap().len(), 3, "every outlet ranked: {shown}");
    assert_eq!(values[1], json!([["o1", "false"], ["o2", "true"], ["o3", "false"]]));
    let ranked = stats(
        &app,
        &staff,
        "/stats/metrics/outlets",
        json!({"parent_business_id": brand, "business_id": "o2",
        "start": "2026-10-05", "end": "2026-10-11"}),
    )
    .await;
    assert_eq!(ranked["outlets"].as_array().unwrap().len(), 3, "{ranked}");
    assert_eq!((&ranked["outlets"][1]["selected"], &ranked["selected_business_id"]), (&json!(true), &json!("o2")));
    assert_eq!(o2["active_outlets"], 1, "{o2}");
    // by keyboard: Tab from the token to the outlet list, ArrowDown picks the first outlet by name
    let mut steps = sign_in(&staff);
    for step in [
        json!({"eval": "document.getElementById('token').focus()"}),
        json!({"key": "Tab"}),
        json!({"eval": "document.activeElement.id"}),
        json!({"key": "ArrowDown"}),
        json!({"wait": "document.body.dataset.ready === '1' && document.getElementById('period').textContent.startsWith('Outlet Indiranagar')"}),
        json!({"eval": "[document.getElementById('outlet').value, document.querySelector('#outlet-rows tr.chosen').dataset.outlet]"}),
    ] {
        steps.as_array_mut().unwrap().push(step);
    }
    let values = drive(format!("{}/dashboard", app.base), steps).await;
    assert_eq!(values[1], json!("outlet"), "Tab from the token reaches the outlet list: {values:?}");
    assert_eq!(values[2], json!(["o1", "o1"]), "{values:?}");
    // an outlet-limited token signs in alone and sees its outlet
    let limited = crate::helpers::token_for(&app, "staff", brand, Some("o3")).await;
    let mut steps = sign_in(&limited);
    steps.as_array_mut().unwrap().push(json!({"eval": "[document.getElementById('outlet').value, document.getElementById('outlet').disabled, document.getElementById('who').textContent]"}));
    steps.as_array_mut().unwrap().push(json!({"eval": SHOWN}));
    let values = drive(format!("{}/dashboard", app.base), steps).await;
    assert_eq!((&values[0][0], &values[0][1]), (&json!("o3"), &json!(true)), "{values:?}");
    let own = floats(&values[1]);
    assert_eq!(own["cards"]["orders"], json!(7.0), "o3 sold once a day: {own}");
    assert_eq!(own["outlets"].as_array().unwrap().len(), 1, "not the other outlets' figures: {own}");

    // an empty period says so once, with no board of zeros; a reload shows the board again
    let mut steps = sign_in(&staff);
    steps[1]["value"] = json!("2025-01-01");
    steps[2]["value"] = json!("2025-01-07");
    for step in [
        json!({"eval": "[document.body.innerText.split('No orders in this period').length - 1, document.getElementById('figures').hidden]"}),
        json!({"screenshot": shot("dashboard-empty.png")}),
        json!({"reload": true}),
        json!({"wait": "document.body.dataset.ready === '1'"}),
        json!({"eval": "[document.getElementById('board').hidden, document.getElementById('period').textContent]"}),
    ] {
        steps.as_array_mut().unwrap().push(step);
    }
    let values = drive(format!("{}/dashboard", app.base), steps).await;
    assert_eq!(values[0], json!([1, true]), "{values:?}");
    assert_eq!(values[1][0], json!(false), "the board is back after a reload: {values:?}");
    assert!(values[1][1].as_str().unwrap().contains("1 Jan 2025"), "{values:?}");

    // on a phone: chart text at least 10 px, the outlets table scrolls instead of being clipped;
    // axe-core finds nothing critical or serious, signed in, at both widths
    let text_sizes = "(function(){let least=99;document.querySelectorAll('svg').forEach(s=>{const scale=s.getBoundingClientRect().width/s.viewBox.baseVal.width;\
        s.querySelectorAll('text').forEach(t=>{least=Math.min(least, parseFloat(t.getAttribute('font-size'))*scale)})});\
        const box=document.querySelector('#outlets .scroll');return [least, getComputedStyle(box).overflowX, document.documentElement.scrollWidth]})()";
    let mut steps = sign_in(&staff);
    // the phone's screen from the start, as a phone opens the page
    steps.as_array_mut().unwrap().insert(0, json!({"viewport": [390, 844]}));
    steps.as_array_mut().unwrap().push(json!({"eval": text_sizes}));
    steps.as_array_mut().unwrap().extend(crate::pages::audited("dashboard-signed-in"));
    let values = drive(format!("{}/dashboard", app.base), steps).await;
    assert!(values[0][0].as_f64().unwrap() >= 10.0, "chart text under 10 px on a phone: {values:?}");
    assert_eq!((&values[0][1], values[0][2].as_f64().unwrap() <= 390.0), (&json!("auto"), true), "{values:?}");
    crate::pages::no_violations(&values[1..], 2, "the dashboard");
    let values = drive(format!("{}/dashboard", app.base), json!(crate::pages::audited("dashboard-sign-in"))).await;
    crate::pages::no_violations(&values, 2, "the dashboard's sign-in");
}
