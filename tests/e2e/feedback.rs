//! Feedback end to end on the embedded engine: the configuration routes, the feedback link sent
//! after an order (outlet vs brand configuration, price, delay), the form opened in headless
//! Chromium and submitted with the fields its DOM carries, the rating record, the funnel and the
//! rating reads.

use chrono::{Duration, Utc};
use serde_json::{json, Value};

use crate::helpers::{required_env, spawn_app, TestApp};
use crate::jobs::provider;
use crate::journey_runs::{ist, run, Brand};
use crate::loyalty::post;
use crate::platform::{create_token, wait_customer};

pub(crate) async fn brand<'a>(app: &'a TestApp, name: &'static str) -> Brand<'a> {
    Brand {
        app,
        name,
        staff: create_token(app, "staff", name).await,
        integration: create_token(app, "integration", name).await,
    }
}

pub(crate) async fn order(b: &Brand<'_>, outlet: &str, id: &str, phone: &str) {
    let body = json!({"parentBusinessId": b.name, "businessId": outlet, "orderId": id,
        "customer": {"name": "Meera", "phone": phone}, "amount": 400});
    assert_eq!(b.app.post_json("/injestion/platform", &body).await.0, 200);
}

pub(crate) async fn staff_status(b: &Brand<'_>, path: &str, mut body: Value) -> (u16, Value) {
    body["parent_business_id"] = json!(b.name);
    post(b.app, path, &[("token", &b.staff)], &body).await
}

pub(crate) async fn balance(b: &Brand<'_>, outlet: &str) -> String {
    let wallet = b.staff("/crm_api/wallet/balance", json!({"business_id": outlet})).await;
    wallet["balance"].as_str().unwrap().to_owned()
}

/// Headless Chromium's DOM of `url` after its scripts ran.
pub(crate) async fn dom(url: String) -> String {
    let chromium = required_env("ENGAGE_TEST_CHROMIUM");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
            .arg(url)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Opens `url` in headless Chromium, fills `fields` (`{selector: value}`; `true` clicks) and
/// submits the form through the DevTools protocol; the text of the page it led to.
async fn fill_and_submit(url: &str, fields: &Value) -> String {
    let chromium = required_env("ENGAGE_TEST_CHROMIUM");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/browser/fill_and_submit.py");
    let (url, fields) = (url.to_owned(), fields.to_string());
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3").arg(script).arg(chromium).arg(url).arg(fields).output().unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "the browser did not submit: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The `name` attributes of the form controls in `dom` (after `<form`), in order, once each.
fn field_names(dom: &str) -> Vec<String> {
    let mut names = Vec::new();
    let form = &dom[dom.find("<form").expect("a form")..];
    for part in form.split(" name=\"").skip(1) {
        let name = part.split('"').next().unwrap().to_owned();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// POSTs `fields` to `url` as `application/x-www-form-urlencoded`, as a browser submits a form.
pub(crate) async fn submit(app: &TestApp, url: &str, fields: &[(&str, &str)]) -> reqwest::Response {
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => (b as char).to_string(),
                b' ' => "+".to_owned(),
                other => format!("%{other:02X}"),
            })
            .collect()
    };
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect();
    app.client
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.join("&"))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn feedback_configuration_routes_answer_and_refuse_as_documented() {
    let app = spawn_app(&[]).await;
    let b = brand(&app, "brand-fb-cfg").await;
    let saved = b
        .staff(
            "/crm_api/save/feedback/config",
            json!({"feedback_flow": 1, "feedback_sms": "true", "feedback_time": 30, "questions": ["Food?"],
                      "alert_contacts": ["9811900001"], "alert_emails": ["owner@brand.test"]}),
        )
        .await;
    assert_eq!((&saved["status"], &saved["data"]["child_business_id"]), (&json!(1), &json!("0")), "{saved}");
    let read = b.staff("/crm_api/get/feedback/config", json!({})).await;
    assert_eq!((&read["data"]["feedback_sms"], &read["data"]["questions"]), (&json!("true"), &json!(["Food?"])));
    let (status, _) = staff_status(&b, "/crm_api/get/feedback/config", json!({"child_business_id": "outlet-9"})).await;
    assert_eq!(status, 404);
    for (body, pointer) in [
        (json!({}), ""),
        (json!({"feedback_flow": 2}), "/feedback_flow"),
        (json!({"feedback_flow": 1, "feedback_sms": "yes"}), "/feedback_sms"),
        (json!({"feedback_flow": 1, "alert_contacts": ["12345"]}), "/alert_contacts/0"),
        (json!({"feedback_flow": 1, "feedback_time": -1}), "/feedback_time"),
    ] {
        let (status, answer) = staff_status(&b, "/crm_api/save/feedback/config", body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        if !pointer.is_empty() {
            assert_eq!(answer["errors"][0]["pointer"], pointer, "{body}: {answer}");
        }
    }
    let (status, answer) =
        staff_status(&b, "/crm_api/feedback_form_interaction_mis", json!({"start": "2026-11-01"})).await;
    assert_eq!(status, 200, "start alone is the 7 days from it: {answer}");
    // every read takes a period in either order (the days between), and refuses a day that is no date
    let backwards = json!({"start": "2026-11-02", "end": "2026-11-01"});
    let forwards = json!({"start": "2026-11-01", "end": "2026-11-02"});
    for path in [
        "/crm_api/fetch_feedback_customers",
        "/crm_api/feedback_form_interaction_mis",
        "/crm_api/get/rating_list",
        "/crm_api/get/rating_count_datewise",
        "/crm_api/get/hear_about_us_source",
        "/crm_api/get/latest_rating",
        "/crm_api/orders_summary",
        "/crm_api/npsData",
        "/crm_api/download/nps/data",
    ] {
        let (status, answer) = staff_status(&b, path, backwards.clone()).await;
        let (again, same) = staff_status(&b, path, forwards.clone()).await;
        assert_eq!((status, again), (200, 200), "{path}: {answer}");
        if path != "/crm_api/download/nps/data" {
            assert_eq!(answer, same, "{path}: the same days either way");
        }
        let (status, answer) = staff_status(&b, path, json!({"start": "2026-02-30", "end": "2026-03-01"})).await;
        if !path.ends_with("fetch_feedback_customers") && !path.ends_with("rating_list") {
            assert_eq!((status, &answer["errors"][0]["pointer"]), (400, &json!("/start")), "{path}: {answer}");
        }
    }
    for (path, body, pointer) in [
        ("/crm_api/get/rating_list", json!({"source": 5}), "/source"),
        ("/crm_api/npsList", json!({"rating": 11}), "/rating"),
        ("/crm_api/npsList", json!({"page": 0}), "/page"),
        (
            "/crm_api/npsData",
            json!({"start": "2026-11-01", "end": "2026-11-02", "promoter_from": 11}),
            "/promoter_from",
        ),
    ] {
        let (status, answer) = staff_status(&b, path, body).await;
        assert_eq!((status, &answer["errors"][0]["pointer"]), (400, &json!(pointer)), "{path}: {answer}");
    }
    // the reads of a brand with nothing yet: empty, not errors
    for path in
        ["/crm_api/get/rating_count_datewise", "/crm_api/get/hear_about_us_source", "/crm_api/get/latest_rating"]
    {
        assert_eq!(b.staff(path, json!({})).await["data"], json!([]), "{path}");
    }
}

#[tokio::test]
async fn an_order_gets_the_form_link_and_the_submitted_form_is_a_rating() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url), ("ENGAGE_CHAT_PROVIDER_URL", &sms.url)]).await;
    let b = brand(&app, "brand-fb").await;
    // the brand: SMS at once; outlet-2's own record is off (the brand's applies); outlet-3's own
    // is on, by chat only, 20 minutes later
    b.staff("/crm_api/save/feedback/config",
            json!({"feedback_flow": 1, "feedback_sms": "true", "sms_template": "Hi x_cust_name, rate x_order_id: x_feedback_url",
                   "questions": ["What did you order?", "Would you come again?"], "sender_id": "ENGAGE"}))
        .await;
    b.staff("/crm_api/save/feedback/config", json!({"child_business_id": "outlet-2", "feedback_flow": 0})).await;
    b.staff(
        "/crm_api/save/feedback/config",
        json!({"child_business_id": "outlet-3", "feedback_flow": 1, "feedback_chat": "true", "feedback_time": 20}),
    )
    .await;
    for outlet in ["outlet-1", "outlet-2", "outlet-3"] {
        b.staff("/crm_api/wallet/recharge", json!({"business_id": outlet, "amount": 1, "reference": outlet})).await;
    }
    order(&b, "outlet-1", "F-1", "9811900011").await;
    order(&b, "outlet-1", "F-1", "9811900011").await; // a replay sends nothing
    order(&b, "outlet-1", "F-bad", "9876543210").await; // sequential: no link
    order(&b, "outlet-2", "F-2", "9811900012").await;
    order(&b, "outlet-3", "F-3", "9811900013").await;
    wait_customer(&app, b.name, "9811900013", |c| c["total_orders"] == 1).await;
    wait_customer(&app, b.name, "9876543210", |c| c["total_orders"] == 1).await;
    // feedback prices: SMS 0.14 + 18% = 0.1652; utility chat 0.17 + 18% = 0.2006
    assert_eq!(balance(&b, "outlet-1").await, "0.8348");
    assert_eq!(balance(&b, "outlet-2").await, "0.8348");
    assert_eq!(balance(&b, "outlet-3").await, "0.7994");
    let sent = b.staff("/crm_api/fetch_feedback_customers", json!({})).await;
    assert_eq!(sent["total"], 3, "{sent}");

    // delivered now (outlet-3's chat waits for its 20 minutes)
    let drained = run(&app, "sms_drain", Utc::now()).await["outcome"].clone();
    assert_eq!(drained["sent"], 2, "{drained}");
    let messages = sms.received.lock().unwrap().clone();
    let mine = messages.iter().find(|m| m["to"] == "9811900011").unwrap();
    let text = mine["message"].as_str().unwrap();
    assert!(text.starts_with("Hi Meera, rate F-1: "), "{text}");
    assert_eq!(mine["sender_id"], "ENGAGE");
    let waiting = usize::from(crate::helpers::due_today_ist(Duration::minutes(20)));
    let chat = run(&app, "chat_drain", Utc::now()).await["outcome"].clone();
    assert_eq!((&chat["scheduled"], &chat["sent"]), (&json!(waiting), &json!(0)), "{chat}");
    let chat = run(&app, "chat_drain", Utc::now() + Duration::minutes(21)).await["outcome"].clone();
    assert_eq!(chat["sent"], 1, "{chat}");
    let path = &text[text.find("/f/").unwrap()..];
    let url = format!("{}{path}", app.base);

    // the form in headless Chromium: stars, comment, the brand's questions, hear about us
    let page = dom(url.clone()).await;
    for expected in [
        "How was your order, Meera?",
        "What did you order?",
        "Would you come again?",
        "How did you hear about us?",
        "Send feedback",
    ] {
        assert!(page.contains(expected), "{expected:?} is not in the form: {page}");
    }
    assert_eq!(field_names(&page), ["rating", "comment", "q1", "q2", "hear_about_us"]);
    // filled and submitted in headless Chromium, as a person would (tests/e2e/browser)
    let comment = "Lovely dosa and the coffee was just right. The staff were quick and kind; we will come back soon with friends.";
    let fields = json!({"label[for=\"s5\"]": true, "#comment": comment, "#q1": "Dosa", "#q2": "Yes",
                        "#hear_about_us": "Social media"});
    let thanks = fill_and_submit(&url, &fields).await;
    assert!(thanks.contains("Thank you!"), "{thanks}");
    let form =
        [("rating", "5"), ("comment", comment), ("q1", "Dosa"), ("q2", "Yes"), ("hear_about_us", "Social media")];
    // a rating outside 1-5 is refused with a page; a link this service did not sign names no form
    let bad = submit(&app, &url, &[("rating", "9")]).await;
    assert_eq!(bad.status(), 400);
    let forged = app.client.get(format!("{}/f/not.a.token", app.base)).send().await.unwrap();
    assert_eq!(forged.status(), 404);
    // submitted again: replaces the rating, counted once
    let again = submit(&app, &url, &[("rating", "4"), ("comment", "Good")]).await;
    assert_eq!(again.status(), 200);
    let response = submit(&app, &url, &form).await;
    assert_eq!(response.status(), 200);

    // the funnel: 3 sent; two opens (Chromium twice) of one link; one submission (the later ones
    // replace it)
    let today = ist(Utc::now())[..10].to_owned();
    let mis = b.staff("/crm_api/feedback_form_interaction_mis", json!({"start": today, "end": today})).await;
    let totals = &mis["data"]["totals"];
    assert_eq!(
        (&totals["total_feedback_sent"], &totals["total_clicks"], &totals["unique_clicks"], &totals["total_submitted"]),
        (&json!(3), &json!(2), &json!(1), &json!(1)),
        "{mis}"
    );
    let sent = b.staff("/crm_api/fetch_feedback_customers", json!({"business_id": "outlet-1"})).await;
    assert_eq!((&sent["data"][0]["is_submitted"], &sent["data"][0]["rating"]), (&json!(true), &json!(5)), "{sent}");

    // the rating record and the reads
    let list = b.staff("/crm_api/get/rating_list", json!({"source": 1})).await;
    let rating = &list["data"][0];
    assert_eq!(
        (&list["total"], &rating["source"], &rating["rating"], &rating["order_id"], &rating["mobile_number"]),
        (&json!(1), &json!("3"), &json!(5), &json!("F-1"), &json!("9811900011")),
        "{list}"
    );
    assert_eq!(
        rating["questions"],
        json!([{"question": "What did you order?", "answer": "Dosa"},
                                           {"question": "Would you come again?", "answer": "Yes"}])
    );
    assert_eq!(rating["other_params"]["Hear About Us From"], "Social media");
    let stores = b.staff("/crm_api/get/rating_list", json!({"source": 3})).await;
    assert_eq!(stores["total"], 0);
    let days = b.staff("/crm_api/get/rating_count_datewise", json!({})).await;
    assert_eq!(days["data"], json!([{"date": today, "rating_count": 1, "avg_rating": 5.0}]));
    let heard = b.staff("/crm_api/get/hear_about_us_source", json!({})).await;
    assert_eq!(heard["data"], json!([{"source": "Social media", "count": 1}]));
    let latest = b.staff("/crm_api/get/latest_rating", json!({})).await;
    assert_eq!(latest["data"][0]["rating_comments"], comment);
    let later = b
        .staff(
            "/crm_api/get/rating_count_datewise",
            json!({"start": ist(Utc::now() + Duration::days(1))[..10].to_owned()}),
        )
        .await;
    assert_eq!(later["ratings_done"], 0);
}

#[tokio::test]
async fn nps_answers_are_validated_listed_aggregated_exported_and_converted_from_the_form() {
    let app = spawn_app(&[]).await;
    let b = brand(&app, "brand-nps").await;
    // a known set: outlet-1 10 9 9 8 7, outlet-2 6 0 10 3 9
    for (n, (outlet, rating)) in [
        ("outlet-1", 10),
        ("outlet-1", 9),
        ("outlet-1", 9),
        ("outlet-1", 8),
        ("outlet-1", 7),
        ("outlet-2", 6),
        ("outlet-2", 0),
        ("outlet-2", 10),
        ("outlet-2", 3),
        ("outlet-2", 9),
    ]
    .into_iter()
    .enumerate()
    {
        let body = json!({"parentBusinessId": b.name, "businessId": outlet, "mobileNo": format!("98120000{n:02}"),
                          "rating": rating, "order_id": format!("N-{n}"), "questions": [{"q": "Why?", "a": "Food"}]});
        let (status, answer) = post(&app, "/crm_api/nps/data", &[], &body).await;
        assert_eq!((status, &answer["status"]), (200, &json!(1)), "{answer}");
    }
    // the same answer again replaces it
    let again = json!({"parentBusinessId": b.name, "businessId": "outlet-1", "mobileNo": "9812000000", "rating": 10,
                       "order_id": "N-0"});
    assert_eq!(post(&app, "/crm_api/nps/data", &[], &again).await.0, 200);
    for (body, pointer) in [
        (json!({"parentBusinessId": b.name, "businessId": "o", "mobileNo": "9812000001", "rating": 11}), "/rating"),
        (json!({"parentBusinessId": b.name, "businessId": "o", "mobileNo": "1234", "rating": 5}), "/mobileNo"),
        (json!({"parentBusinessId": b.name, "businessId": "o", "mobileNo": "9812000001"}), ""),
    ] {
        let (status, answer) = post(&app, "/crm_api/nps/data", &[], &body).await;
        assert_eq!((status, &answer["error_code"]), (400, &json!("xE_102")), "{body}: {answer}");
        if pointer.is_empty() {
            assert!(answer["error_message"].as_str().unwrap().contains("rating"), "{answer}");
        } else {
            assert_eq!(answer["errors"][0]["pointer"], pointer, "{answer}");
        }
    }

    let list = b.staff("/crm_api/npsList", json!({})).await;
    assert_eq!((&list["status"], &list["total"]), (&json!(1), &json!(10)), "{list}");
    let nines = b.staff("/crm_api/npsList", json!({"rating": 9})).await;
    assert_eq!(nines["total"], 3);
    let one = b.staff("/crm_api/npsList", json!({"mobile_number": "9812000007"})).await;
    assert_eq!(
        (&one["data"][0]["rating"], &one["data"][0]["questions"]),
        (&json!(10), &json!([{"q": "Why?", "a": "Food"}]))
    );
    let empty = b.staff("/crm_api/npsList", json!({"page": 2})).await;
    assert_eq!((&empty["data"], &empty["total"]), (&json!([]), &json!(10)));

    // 5 promoters, 2 passives, 3 detractors: 50 - 30 = 20; outlet-1 3/2/0: 60; outlet-2 2/0/3: -20
    let today = ist(Utc::now())[..10].to_owned();
    let report = b.staff("/crm_api/npsData", json!({"start": today, "end": today})).await;
    let brand_figures = &report["data"]["brand"];
    assert_eq!(
        (&brand_figures["promoters"], &brand_figures["passives"], &brand_figures["detractors"], &brand_figures["nps"]),
        (&json!(5), &json!(2), &json!(3), &json!(20.0)),
        "{report}"
    );
    let outlets: Vec<f64> =
        report["data"]["outlets"].as_array().unwrap().iter().map(|o| o["nps"].as_f64().unwrap()).collect();
    assert_eq!(outlets, [60.0, -20.0]);
    // the buckets are the report's: promoters from 10, passives from 8 give 20 - 40 = -20
    let strict = b
        .staff("/crm_api/npsData", json!({"start": today, "end": today, "promoter_from": 10, "passive_from": 8}))
        .await;
    assert_eq!(strict["data"]["brand"]["nps"], -20.0, "{strict}");
    // the thresholds in either order are the same buckets; start alone is the week from it
    let swapped = b
        .staff("/crm_api/npsData", json!({"start": today, "end": today, "promoter_from": 8, "passive_from": 10}))
        .await;
    assert_eq!(swapped["data"], strict["data"], "{swapped}");
    let (status, _) = staff_status(&b, "/crm_api/npsData", json!({"start": today})).await;
    assert_eq!(status, 200);

    // the export: a real workbook, one row per response
    let response = app
        .client
        .post(format!("{}/crm_api/download/nps/data", app.base))
        .header("token", &b.staff)
        .json(&json!({"parent_business_id": b.name, "start": today, "end": today}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().contains("spreadsheetml"));
    let sheet = crate::campaigns::xlsx_sheet(&response.bytes().await.unwrap(), 1);
    for phone in ["9812000000", "9812000009"] {
        assert!(sheet.contains(phone), "{phone} missing: {sheet}");
    }
    let mut numbers: Vec<u32> = sheet.trim_end().rsplit(" | ").take(10).map(|n| n.parse().unwrap()).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, [0, 3, 6, 7, 8, 9, 9, 9, 10, 10], "{sheet}");
}

#[tokio::test]
async fn a_low_rating_gets_a_coupon_a_promo_and_a_merchant_alert_within_the_frequency() {
    let sms = provider(&[]).await;
    let (mail_url, mailed) = crate::campaigns::mail_service().await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url), ("ENGAGE_MAIL_SERVICE_URL", &mail_url)]).await;
    let b = brand(&app, "brand-low").await;
    b.staff(
        "/crm_api/save/feedback/config",
        json!({"feedback_flow": 1, "feedback_sms": "true", "sms_template": "Rate us: x_feedback_url",
                   "alert_contacts": ["9811999999"], "alert_emails": ["owner@brand.test"]}),
    )
    .await;
    let journey = b
        .journey(
            "low_rating",
            json!({"channels": ["sms"], "sms_template": "Sorry x_cust_name! Show x_dynamic_coupon at the counter",
                                      "rating": 2, "frequency_rating": 1,
                                      "promo_details": {"name": "Free dessert", "valid_days": 10}}),
        )
        .await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 2, "reference": "low"})).await;
    let form_of = |phone: &'static str| {
        let sms = sms.clone();
        async move {
            let received = sms.received.lock().unwrap().clone();
            let text =
                received.iter().rev().find(|m| m["to"] == phone).unwrap()["message"].as_str().unwrap().to_owned();
            text[text.find("/f/").unwrap()..].to_owned()
        }
    };
    for (id, phone) in [("L-1", "9811900021"), ("L-2", "9811900021"), ("L-3", "9811900022")] {
        order(&b, "outlet-1", id, phone).await;
        wait_customer(&app, b.name, phone, |c| c["total_orders"].as_u64().unwrap() >= 1).await;
    }
    wait_customer(&app, b.name, "9811900021", |c| c["total_orders"] == 2).await;
    run(&app, "sms_drain", Utc::now()).await;
    // three feedback links delivered (0.1652 each)
    assert_eq!(sms.received.lock().unwrap().len(), 3);

    // a 2-star rating: coupon, promo, alert
    let first = form_of("9811900021").await;
    let url = format!("{}{first}", app.base);
    assert_eq!(submit(&app, &url, &[("rating", "2"), ("comment", "Cold food")]).await.status(), 200);
    run(&app, "sms_drain", Utc::now()).await;
    let received = sms.received.lock().unwrap().clone();
    let promo = received.iter().find(|m| m["message"].as_str().unwrap().starts_with("Sorry Meera!")).unwrap();
    let text = promo["message"].as_str().unwrap();
    let code = text.split_whitespace().nth(3).unwrap().to_owned();
    assert_eq!(code.len(), 8, "{text}");
    let alert = received.iter().find(|m| m["to"] == "9811999999").unwrap();
    assert!(alert["message"].as_str().unwrap().contains("rated 2/5"), "{alert}");
    let mail = mailed.lock().unwrap().clone();
    assert_eq!(mail.len(), 1, "one alert e-mail");
    let field = |name: &str| mail[0].0.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_default();
    assert_eq!((field("report"), field("to")), ("low-rating-alert".to_owned(), "owner@brand.test".to_owned()));
    assert!(field("text").contains("rated 2/5") && field("text").contains("Cold food"), "{mail:?}");
    // feedback 3 x 0.1652, promo 0.1711 (campaign SMS), alert 0.1652
    assert_eq!(b.balance().await, "1.1681");
    // the coupon is real: redeemable at the POS
    let (status, coupon) =
        post(&app, "/pos_e/v1/get_coupon_details", &[], &json!({"parent_business_id": b.name, "coupon_code": code}))
            .await;
    assert_eq!(
        (status, &coupon["coupon"]["name"], &coupon["coupon"]["status"]),
        (200, &json!("Free dessert"), &json!("issued")),
        "{coupon}"
    );
    let (status, used) = post(
        &app,
        "/pos_e/v1/redeem_coupon_details",
        &[],
        &json!({"parent_business_id": b.name, "coupon_code": code, "order_id": "L-9"}),
    )
    .await;
    assert_eq!(status, 200, "{used}");
    // the journey's send is the recovery's ROI row
    let users = b.staff("/crm_api/get/auto_campaign_users", json!({"campaign_journey_id": journey})).await;
    assert_eq!((&users["total"], &users["data"][0]["outcome"]), (&json!(1), &json!("sent")), "{users}");

    // the same customer's next low rating: over frequency_rating 1, nothing; a 4 from another: nothing
    let second = b.staff("/crm_api/fetch_feedback_customers", json!({})).await;
    let link_of = |order: &str| {
        let data = second["data"].as_array().unwrap();
        let url = data.iter().find(|r| r["order_id"] == order).unwrap()["url"].as_str().unwrap().to_owned();
        format!("{}{}", app.base, &url[url.find("/f/").unwrap()..])
    };
    assert_eq!(submit(&app, &link_of("L-2"), &[("rating", "1")]).await.status(), 200);
    assert_eq!(submit(&app, &link_of("L-3"), &[("rating", "4")]).await.status(), 200);
    let before = sms.received.lock().unwrap().len();
    run(&app, "sms_drain", Utc::now()).await;
    assert_eq!(sms.received.lock().unwrap().len(), before, "no more promos or alerts");
    assert_eq!(mailed.lock().unwrap().len(), 1, "no more alert e-mails");
    assert_eq!(b.balance().await, "1.1681");
}
