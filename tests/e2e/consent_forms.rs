//! Consent is one customer's whatever form their number was written in, at every door: an opt-out
//! recorded by staff, by the brand's systems, by a keyword reply or by a CSV upload, with the
//! number written `+91…`, `91…`, `0…` or spaced, is honoured by a campaign to the ten digits (not
//! queued, not paid) and read back in any form; the routes refuse what they cannot honour.

use serde_json::{json, Value};

use crate::campaigns::brand;
use crate::helpers::{spawn_app, TestApp};
use crate::jobs::provider;
use crate::journey_runs::Brand;
use crate::loyalty::post;

/// The forms a number is written in, for the ten digits `national`.
fn forms(national: &str) -> [String; 4] {
    [
        format!("+91{national}"),
        format!("91{national}"),
        format!("0{national}"),
        format!("+91 {}-{}", &national[..5], &national[5..]),
    ]
}

/// Uploads `csv` as opt-outs on `channels`; (status, answer).
async fn upload(brand: &Brand<'_>, channels: &str, csv: &str) -> (u16, Value) {
    crate::campaigns::upload(brand, "/crm_api/consent/upload", &[("channels", channels)], csv).await
}

async fn keyword(app: &TestApp, brand: &str, from: &str, text: &str) -> (u16, Value) {
    let body = json!({"parent_business_id": brand, "from": from, "text": text, "channel": "sms"});
    post(app, "/webhooks/keywords/acme-sms", &[("x-engage-webhook-secret", "s3cret")], &body).await
}

fn money(text: &str) -> f64 {
    text.parse().unwrap()
}

#[tokio::test]
async fn an_opt_out_through_any_door_in_any_form_holds_for_the_campaign_and_costs_nothing() {
    let sms = provider(&[]).await;
    let app =
        spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url), ("ENGAGE_KEYWORD_WEBHOOK_SECRETS", "acme-sms=s3cret")])
            .await;
    let b = brand(&app, "brand-forms").await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "f1"})).await;

    // four doors × four forms: sixteen customers, each opted out of SMS once
    let stop_words = ["STOP", "revoke", "Opt-Out", "stop all"];
    let mut opted = Vec::new();
    for (door, source) in ["staff", "api", "keyword", "import"].into_iter().enumerate() {
        for (form, stop_word) in stop_words.iter().enumerate() {
            let national = format!("98118{:05}", door * 4 + form + 1);
            let given = forms(&national)[form].clone();
            match source {
                "staff" => {
                    let set = b.staff("/crm_api/consent/customer", json!({"mobile_number": given, "sms": false})).await;
                    assert_eq!(set["mobile_number"], national.as_str(), "the kept form: {set}");
                }
                "api" => {
                    let body = json!({"mobile_number": given, "sms": false});
                    let (status, set) =
                        post(&app, "/integration/v1/consent", &[("authorization", &b.integration)], &body).await;
                    assert_eq!(status, 200, "{given}: {set}");
                }
                "keyword" => {
                    let (status, stopped) = keyword(&app, b.name, &given, stop_word).await;
                    assert_eq!(status, 200, "{given}: {stopped}");
                    assert_eq!((&stopped["keyword"], &stopped["changed"]), (&json!("stop"), &json!(true)), "{stopped}");
                }
                _ => {
                    let (status, imported) = upload(&b, "sms", &format!("Phone\n{given}\n")).await;
                    assert_eq!(status, 200, "{imported}");
                    assert_eq!((&imported["changed"], &imported["invalid"]), (&json!(1), &json!([])), "{imported}");
                }
            }
            opted.push((national, source));
        }
    }

    // read back in every form, the choice is there, with the door that recorded it
    for (national, source) in &opted {
        for written in forms(national) {
            let read = b.staff("/crm_api/consent/customer", json!({"mobile_number": written})).await;
            assert_eq!(
                (&read["sms"]["subscribed"], &read["sms"]["source"], &read["mobile_number"]),
                (&json!(false), &json!(source), &json!(national)),
                "{written}: {read}"
            );
        }
    }

    // a campaign to the ten digits leaves all sixteen out and pays for the one subscribed customer
    let before = money(&b.balance().await);
    let mut csv = String::from("Phone\n9811899999\n");
    for (national, _) in &opted {
        csv.push_str(&format!("{national}\n"));
    }
    let campaign = crate::consent::bulk(&b, &csv).await;
    assert_eq!((&campaign["queued_recipients"], &campaign["unsubscribed"]), (&json!(1), &json!(16)), "{campaign}");
    let one = before - money(&b.balance().await);
    assert!(one > 0.0, "the subscribed customer's message is paid");

    // a campaign whose file writes the numbers in the other forms: the same customers, nothing paid
    let before = money(&b.balance().await);
    let mut csv = String::from("Phone\n");
    for (n, (national, _)) in opted.iter().enumerate() {
        csv.push_str(&format!("\"{}\"\n", forms(national)[n % 4]));
    }
    let campaign = crate::consent::bulk(&b, &csv).await;
    assert_eq!((&campaign["queued_recipients"], &campaign["unsubscribed"]), (&json!(0), &json!(16)), "{campaign}");
    assert_eq!(money(&b.balance().await), before, "nothing was paid for them");

    // an order in one form, the customer's details and export in others: one customer
    let (first, _) = &opted[0];
    b.order("F-1", &forms(first)[0], "Farah", 320.0, chrono::Utc::now()).await;
    let details = crate::platform::wait_customer(&app, b.name, &forms(first)[2], |c| c["total_orders"] == 1).await;
    assert_eq!(details["name"], "Farah", "{details}");
    let export = b.staff("/crm_api/customer/export", json!({"mobile_number": forms(first)[3]})).await;
    assert_eq!(
        (
            &export["profile"]["name"],
            &export["subscriptions"]["sms"]["subscribed"],
            &export["orders"].as_array().map(Vec::len)
        ),
        (&json!("Farah"), &json!(false), &Some(1)),
        "{export}"
    );
}

#[tokio::test]
async fn the_consent_routes_refuse_what_they_cannot_honour_and_take_every_number_the_orders_take() {
    let app = spawn_app(&[("ENGAGE_KEYWORD_WEBHOOK_SECRETS", "acme-sms=s3cret")]).await;
    let b = brand(&app, "brand-strict").await;
    let staff = [("token", b.staff.as_str())];
    let integration = [("authorization", b.integration.as_str())];
    let refused = |answer: &Value, naming: &str| {
        assert!(answer.to_string().contains(naming), "the refusal names {naming}: {answer}");
    };

    // an unknown channel is refused (400 naming it), and nothing changes
    let body = json!({"parent_business_id": b.name, "mobile_number": "9811900001", "fax": false});
    let (status, answer) = post(&app, "/crm_api/consent/customer", &staff, &body).await;
    assert_eq!(status, 400, "{answer}");
    refused(&answer, "fax");
    let (status, answer) =
        post(&app, "/integration/v1/consent", &integration, &json!({"mobile_number": "9811900001", "mms": true})).await;
    assert_eq!(status, 400, "{answer}");
    refused(&answer, "mms");
    let read = b.staff("/crm_api/consent/customer", json!({"mobile_number": "9811900001"})).await;
    assert_eq!(read["sms"]["default"], true, "{read}");

    // the orders' rule: 7 to 15 digits; fewer, more or letters are refused naming the field
    for bad in ["12345", "123456", "1234567890123456", "98119abc01", "+", "9811900001 ext 2"] {
        let body = json!({"parent_business_id": b.name, "mobile_number": bad, "sms": false});
        let (status, answer) = post(&app, "/crm_api/consent/customer", &staff, &body).await;
        assert_eq!(status, 400, "{bad}: {answer}");
        refused(&answer, "mobile_number");
        let (status, answer) =
            post(&app, "/integration/v1/consent", &integration, &json!({"mobile_number": bad, "sms": false})).await;
        assert_eq!(status, 400, "{bad}: {answer}");
    }
    for good in ["1234567", "12345678", "+14155550123", "123456789012345"] {
        let set = b.staff("/crm_api/consent/customer", json!({"mobile_number": good, "sms": false})).await;
        assert_eq!(set["sms"]["subscribed"], false, "{good}: {set}");
    }
    // the same numbers order (the edge's rule is the same)
    let order = json!({"parentBusinessId": b.name, "businessId": "outlet-1", "orderId": "S-1",
        "customer": {"name": "Lee", "phone": "+1 415 555 0123"}, "amount": 10});
    assert_eq!(app.post_json("/injestion/platform", &order).await.0, 200);
    let short = json!({"parentBusinessId": b.name, "businessId": "outlet-1", "orderId": "S-2",
        "customer": {"name": "Lee", "phone": "12345"}, "amount": 10});
    assert_eq!(app.post_json("/injestion/platform", &short).await.0, 400);
    let lee = crate::platform::wait_customer(&app, b.name, "14155550123", |c| c["total_orders"] == 1).await;
    assert_eq!(lee["name"], "Lee");
    let read = b.staff("/crm_api/consent/customer", json!({"mobile_number": "+1 (415) 555-0123"})).await;
    assert_eq!((&read["mobile_number"], &read["sms"]["subscribed"]), (&json!("14155550123"), &json!(false)), "{read}");

    // the settings, the export and the keyword webhook refuse unknown fields too
    let body = json!({"parent_business_id": b.name, "sms": true, "mms": false});
    let (status, answer) = post(&app, "/crm_api/consent/settings", &staff, &body).await;
    assert_eq!(status, 400, "{answer}");
    refused(&answer, "mms");
    let body = json!({"parent_business_id": b.name, "mobile_number": "9811900001", "everything": true});
    assert_eq!(post(&app, "/crm_api/customer/export", &staff, &body).await.0, 400);
    let body = json!({"parent_business_id": b.name, "from": "9811900002", "text": "STOP", "channel": "sms", "to": "x"});
    let (status, answer) =
        post(&app, "/webhooks/keywords/acme-sms", &[("x-engage-webhook-secret", "s3cret")], &body).await;
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = keyword(&app, b.name, "12345", "STOP").await;
    assert_eq!(status, 400, "{answer}");
    refused(&answer, "from");

    // a CSV of opt-outs: good rows recorded, each bad row named with its line and why
    let (status, imported) = upload(&b, "sms,chat", "Phone\n98119 00003\n12345\nnot a phone\n+91-98119-00004\n").await;
    assert_eq!(status, 200, "{imported}");
    assert_eq!((&imported["phones"], &imported["changed"]), (&json!(2), &json!(4)), "{imported}");
    let lines: Vec<&Value> = imported["invalid"].as_array().unwrap().iter().map(|row| &row["line"]).collect();
    assert_eq!(lines, [&json!(3), &json!(4)], "{imported}");
    let read = b.staff("/crm_api/consent/customer", json!({"mobile_number": "09811900004"})).await;
    assert_eq!((&read["sms"]["source"], &read["chat"]["subscribed"]), (&json!("import"), &json!(false)), "{read}");
    let (status, answer) = upload(&b, "sms,fax", "Phone\n9811900005\n").await;
    assert_eq!(status, 400, "{answer}");
    refused(&answer, "fax");
}

#[tokio::test]
async fn revoke_and_opt_out_with_a_hyphen_unsubscribe_and_opt_in_comes_back() {
    let app = spawn_app(&[("ENGAGE_KEYWORD_WEBHOOK_SECRETS", "acme-sms=s3cret")]).await;
    let b = brand(&app, "brand-words").await;
    for (text, keyword_is, subscribed) in [
        ("REVOKE", "stop", false),
        ("start", "start", true),
        ("opt-out", "stop", false),
        ("Opt-In", "start", true),
        ("  OPT-OUT. ", "stop", false),
    ] {
        let (status, handled) = keyword(&app, b.name, "+91 98119 10001", text).await;
        assert_eq!(status, 200, "{handled}");
        assert_eq!(
            (&handled["keyword"], &handled["subscribed"]),
            (&json!(keyword_is), &json!(subscribed)),
            "{text}: {handled}"
        );
    }
    let read = b.staff("/crm_api/consent/customer", json!({"mobile_number": "9811910001"})).await;
    assert_eq!((&read["sms"]["subscribed"], &read["sms"]["source"]), (&json!(false), &json!("keyword")), "{read}");
}
