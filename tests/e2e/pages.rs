//! The pages people meet, as they meet them (issue 40): the bill and the feedback form of a brand
//! with a light colour, in headless Chromium at 390 and 1280 px, checked by axe-core (0 critical,
//! 0 serious), the rating chosen and sent with the keyboard alone, the missing-rating message, the
//! thank-you page; HTML error pages for browsers and JSON for API callers; compression; the
//! favicon. Screenshots of every page and state go to `target/screenshots/`.

use serde_json::{json, Value};

use crate::helpers::{required_env, spawn_app};
use crate::jobs::provider;
use crate::journey_runs::Brand;
use crate::platform::create_token;
use crate::stats_dashboard::drive;

/// `target/screenshots/<name>`.
pub(crate) fn shot(name: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).to_string_lossy().into_owned()
}

/// Steps that check the page with axe-core at both widths, with a screenshot of each: two values
/// (the violations at 390 px, then at 1280 px).
pub(crate) fn audited(name: &str) -> Vec<Value> {
    let axe = required_env("ENGAGE_TEST_AXE");
    let mut steps = Vec::new();
    for (width, height) in [(390, 844), (1280, 900)] {
        steps.push(json!({"viewport": [width, height]}));
        steps.push(json!({"wait": format!("document.documentElement.clientWidth <= {width}")}));
        steps.push(json!({"screenshot": shot(&format!("{name}-{width}.png"))}));
        steps.push(json!({"axe": axe}));
    }
    steps
}

/// Asserts that each of the first `n` values (axe runs) found nothing critical or serious.
pub(crate) fn no_violations(values: &[Value], n: usize, page: &str) {
    for (i, found) in values.iter().take(n).enumerate() {
        assert_eq!(found, &json!([]), "{page} (run {i}): axe-core found critical or serious violations");
    }
}

/// Presses Tab until the focused element matches `selector` (at most 30 times).
pub(crate) fn tab_to(selector: &str) -> Vec<Value> {
    let mut steps = Vec::new();
    let focused = format!("document.activeElement && document.activeElement.matches({selector:?})");
    for _ in 0..30 {
        steps.push(json!({"key": "Tab", "unless": focused}));
    }
    steps.push(json!({"wait": focused, "seconds": 2}));
    steps
}

#[tokio::test]
async fn the_bill_and_the_feedback_form_name_the_brand_read_well_and_work_by_keyboard() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let name = "brand-pages";
    let b = Brand {
        app: &app,
        name,
        staff: create_token(&app, "staff", name).await,
        integration: create_token(&app, "integration", name).await,
    };
    b.staff("/crm_api/add_b_config", json!({"business_id": "0", "business_name": "Dosa Corner"})).await;
    b.staff("/crm_api/add_b_config", json!({"business_id": "outlet-1", "business_name": "Dosa Corner Indiranagar"}))
        .await;
    b.staff("/crm_api/add_edit_rules", json!({"earn_percent": 10, "min_bill": 0, "point_value": 1})).await;
    // a light brand colour: the header text must turn dark to stay readable
    b.staff(
        "/crm_api/links/addBusinessConfig",
        json!({"business_id": "outlet-1", "mode": 1, "time": 0, "status": 1, "brandColor": "#facc15",
               "sms_template": "Your bill x_short_url", "sender_id": "ENGAGE", "enableFooter": 1, "footerButton": "Save bill"}),
    )
    .await;
    for (widget, sequence, title, value) in [
        (1, 1, "Your order", ""),
        (2, 2, "Loyalty", ""),
        (3, 3, "Try our thali", "https://shop.test/thali"),
        (5, 4, "Rate your meal", ""),
        (6, 5, "Complete your profile", "https://shop.test/profile"),
    ] {
        b.staff(
            "/crm_api/links/addWidget",
            json!({"business_id": "outlet-1", "widget_id": widget, "sequence": sequence, "title": title, "value": value}),
        )
        .await;
    }
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 1, "reference": "r1"})).await;
    let order = json!({"parentBusinessId": name, "businessId": "outlet-1", "orderId": "P-1",
        "customer": {"name": "Asha", "phone": "9811400021"},
        "items": [{"name": "Masala dosa", "qty": 2, "price": 120}, {"name": "Filter coffee", "qty": 1, "price": 60}],
        "subtotal": 300, "discount": 30, "tax": 13.5, "amount": 283.5, "orderTime": "2026-11-25 17:11:12"});
    assert_eq!(app.post_json("/injestion/pos_a", &order).await.0, 200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let bill = loop {
        let page = b.staff("/crm_api/get_digital_bill_customers", json!({"business_id": "outlet-1"})).await;
        if page["total"] == 1 {
            break page["data"][0].clone();
        }
        assert!(std::time::Instant::now() < deadline, "no bill: {page}");
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    let bill_url = format!("{}/b/{}", app.base, bill["bill_id"].as_str().unwrap());
    let feedback = bill["feedback_url"].as_str().unwrap();
    let form_url = format!("{}{}", app.base, &feedback[feedback.find("/f/").unwrap()..]);

    // the bill: the restaurant's names, ₹ with two decimals, a human IST time, labelled buttons
    let html = app.client.get(&bill_url).send().await.unwrap().text().await.unwrap();
    for expected in [
        "Dosa Corner</h1>",
        "Dosa Corner Indiranagar",
        "id=\"subtotal\">\u{20b9}300.00",
        "id=\"discount\">-\u{20b9}30.00",
        "id=\"tax\">\u{20b9}13.50",
        "id=\"total\">\u{20b9}283.50",
        "25 Nov 2026, 5:11 pm IST",
        ">Try our thali</a>",
        ">Complete your profile</a>",
        ">Rate your meal</a>",
        "color:#111827",
    ] {
        assert!(html.contains(expected), "{expected:?} is not in the bill page: {html}");
    }
    assert!(!html.contains(">Open</a>"), "no button says only Open");
    let mut steps = audited("bill-light");
    steps.push(json!({"eval": "(function(){const h=document.querySelector('header');const s=getComputedStyle(h);return [s.color, s.backgroundColor]})()"}));
    let values = drive(bill_url.clone(), json!(steps)).await;
    no_violations(&values, 2, "the bill page");
    assert_eq!(values[2], json!(["rgb(17, 24, 39)", "rgb(250, 204, 21)"]), "dark text on the light brand colour");

    // the form: the brand's name, a real radio group, accessible at both widths
    let form = app.client.get(&form_url).send().await.unwrap().text().await.unwrap();
    for expected in ["Dosa Corner", "Dosa Corner Indiranagar", "<fieldset", "<legend>Your rating", "1 star", "5 stars"]
    {
        assert!(form.contains(expected), "{expected:?} is not in the form: {form}");
    }
    assert!(!form.contains("display:none"), "no control is hidden from the keyboard");
    let values = drive(form_url.clone(), json!(audited("feedback-form"))).await;
    no_violations(&values, 2, "the feedback form");

    // sent without a rating: a visible message, focus on the rating, nothing sent
    let mut steps = vec![json!({"viewport": [390, 844]})];
    steps.extend(tab_to("button[type=submit]"));
    steps.push(json!({"key": "Enter"}));
    steps.push(json!({"wait": "!document.getElementById('rating-error').hidden"}));
    steps.push(json!({"screenshot": shot("feedback-missing-rating-390.png")}));
    steps.push(json!({"eval": "[document.getElementById('rating-error').textContent, document.activeElement.id, location.pathname.startsWith('/f/'), getComputedStyle(document.getElementById('rating-error')).display]"}));
    steps.push(json!({"axe": required_env("ENGAGE_TEST_AXE")}));
    let values = drive(form_url.clone(), json!(steps)).await;
    assert_eq!(values[0], json!(["Choose a rating from 1 to 5 stars.", "s1", true, "block"]), "{values:?}");
    no_violations(&values[1..], 1, "the form with its missing-rating message");

    // the keyboard alone: Tab to the rating, arrows to four stars, Tab to send, Enter
    let mut steps = vec![json!({"viewport": [390, 844]})];
    steps.extend(tab_to("input[name=rating]"));
    for _ in 0..3 {
        steps.push(json!({"key": "ArrowRight"}));
    }
    steps.push(json!({"eval": "[document.querySelector('input[name=rating]:checked').value, document.getElementById('rating-chosen').textContent]"}));
    steps.push(json!({"screenshot": shot("feedback-four-stars-390.png")}));
    steps.extend(tab_to("button[type=submit]"));
    steps.push(json!({"key": "Enter"}));
    steps.push(json!({"wait": "!document.querySelector('form') && document.body.innerText.includes('Thank you')"}));
    steps.push(json!({"eval": "document.body.innerText"}));
    steps.extend(audited("feedback-thanks"));
    let values = drive(form_url.clone(), json!(steps)).await;
    assert_eq!(values[0], json!(["4", "4 of 5 stars"]), "{values:?}");
    let thanks = values[1].as_str().unwrap();
    for expected in ["Thank you!", "4 of 5 stars", "Dosa Corner Indiranagar", "Change your answer"] {
        assert!(thanks.contains(expected), "{expected:?} is not on the thank-you page: {thanks}");
    }
    no_violations(&values[2..], 2, "the thank-you page");
    let ratings = b.staff("/crm_api/get/rating_list", json!({})).await;
    assert_eq!(ratings["data"][0]["rating"], 4, "the keyboard's rating was stored: {ratings}");
}

#[tokio::test]
async fn browsers_get_pages_api_callers_json_and_answers_are_compressed() {
    let app = spawn_app(&[]).await;
    // a person who mistypes an address sees a page; a program sees its JSON
    for path in ["/b/", "/b/abc/extra", "/no/such/page", "/f/", "/dashboard/extra"] {
        let page = app
            .client
            .get(format!("{}{path}", app.base))
            .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
            .send()
            .await
            .unwrap();
        let status = page.status().as_u16();
        assert!((400..500).contains(&status), "{path}: {status}");
        assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"), "{path}");
        let text = page.text().await.unwrap();
        assert!(text.contains("<h1") && !text.contains("{\""), "{path}: {text}");
        let api = app.client.get(format!("{}{path}", app.base)).send().await.unwrap();
        assert_eq!(api.status().as_u16(), status, "{path}");
        assert!(api.headers()["content-type"].to_str().unwrap().starts_with("application/json"), "{path}");
        assert!(api.json::<Value>().await.is_ok(), "{path}");
    }
    let page = app.client.get(format!("{}/b/", app.base)).header("accept", "text/html").send().await.unwrap();
    assert!(page.text().await.unwrap().contains("Page not found"));

    // the favicon is an icon, not a JSON 404
    let icon = app.client.get(format!("{}/favicon.ico", app.base)).send().await.unwrap();
    assert_eq!(icon.status(), 200);
    assert_eq!(icon.headers()["content-type"], "image/svg+xml");
    assert!(icon.text().await.unwrap().starts_with("<svg"));

    // compression when asked for it (a client that does not decode, to see the wire)
    let raw = reqwest::Client::builder().no_gzip().build().unwrap();
    let plain = raw.get(format!("{}/dashboard", app.base)).send().await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none(), "nothing compressed unless asked");
    let plain = plain.bytes().await.unwrap();
    for (encoding, path) in [("gzip", "/dashboard"), ("br", "/dashboard"), ("gzip", "/openapi.json")] {
        let answer = raw.get(format!("{}{path}", app.base)).header("accept-encoding", encoding).send().await.unwrap();
        assert_eq!(answer.headers()["content-encoding"], encoding, "{path}");
        let body = answer.bytes().await.unwrap();
        if encoding == "gzip" {
            let mut decoded = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&body[..]), &mut decoded).unwrap();
            if path == "/dashboard" {
                assert_eq!(decoded, plain.to_vec());
                assert!(body.len() * 3 < plain.len(), "{} of {}", body.len(), plain.len());
            } else {
                assert!(serde_json::from_slice::<Value>(&decoded).is_ok());
            }
        } else {
            assert!(body.len() * 3 < plain.len(), "br: {} of {}", body.len(), plain.len());
        }
    }
}
