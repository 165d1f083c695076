//! Bulk campaigns, chat tracking links, the `auto_campaign` flag sync and the Monday health
//! reports, end to end on the embedded engine: the real routes, the jobs run as at a chosen time,
//! a local HTTP provider receiving the drained sends and a local mail service receiving the
//! workbooks.

use std::sync::{Arc, Mutex};

use axum::extract::{Multipart, State};
use axum::Router;
use chrono::{Duration, Utc};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::jobs::provider;
use crate::journey_runs::{born_on_day_after, run, Brand};
use crate::platform::{create_token, wait_customer};

pub(crate) async fn brand<'a>(app: &'a TestApp, name: &'static str) -> Brand<'a> {
    Brand {
        app,
        name,
        staff: create_token(app, "staff", name).await,
        integration: create_token(app, "integration", name).await,
    }
}

/// Posts a bulk campaign with `csv` and the form `fields` (the brand's own added).
pub(crate) async fn bulk(brand: &Brand<'_>, fields: &[(&str, &str)], csv: &str) -> (u16, Value) {
    upload(brand, "/crm_api/create/bulk/campaign", fields, csv).await
}

/// Posts a multipart form to `path` with the staff token: the brand, `fields` and `csv` as its
/// `file`.
pub(crate) async fn upload(brand: &Brand<'_>, path: &str, fields: &[(&str, &str)], csv: &str) -> (u16, Value) {
    let mut form = reqwest::multipart::Form::new().text("parent_business_id", brand.name);
    for (name, value) in fields {
        form = form.text(name.to_string(), value.to_string());
    }
    let file = reqwest::multipart::Part::bytes(csv.as_bytes().to_vec()).file_name("list.csv").mime_str("text/csv");
    let form = form.part("file", file.unwrap());
    let request =
        brand.app.client.post(format!("{}{path}", brand.app.base)).header("token", &brand.staff).multipart(form);
    crate::helpers::read(request.send().await.unwrap()).await
}

const FIELDS: [(&str, &str); 5] = [
    ("business_id", "outlet-1"),
    ("campaign_name", "Diwali"),
    ("channel", "sms"),
    ("template_id", "dlt-1107"),
    ("message", "Hi x_cust_name, 20% off tonight"),
];

#[tokio::test]
async fn a_bulk_campaign_queues_each_valid_number_once_paid_and_reports_bad_lines() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let b = brand(&app, "brand-bulk").await;
    // three campaign SMS at 0.1711 each: the fourth valid number is unpaid
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 0.5133, "reference": "b1"})).await;
    let csv = "Phone,Name\n9811300001,Asha\n+91 98113 00002,\n12345,Bad\n9811300001,Again\n09811300003,Chitra\n\
               5811300004,Low\n9811300005,Dev\n";
    let (status, answer) = bulk(&b, &FIELDS, csv).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (&answer["status"], &answer["campaign_id"], &answer["queued_recipients"], &answer["unpaid"]),
        (&json!(1), &json!(1), &json!(3), &json!(1)),
        "{answer}"
    );
    let bad: Vec<(u64, &str)> = answer["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["line"].as_u64().unwrap(), i["value"].as_str().unwrap()))
        .collect();
    assert_eq!(bad, vec![(4, "12345"), (7, "5811300004")]);
    assert_eq!(answer["duplicates"], json!([{"line": 5, "phone": "9811300001"}]));
    assert_eq!(b.balance().await, "0", "never below zero");

    // the drain delivers the three paid messages, filled in, with the template id
    let drained = run(&app, "sms_drain", Utc::now()).await;
    assert_eq!(drained["outcome"]["sent"], 3, "{drained}");
    let mut got: Vec<(String, String, String)> = sms
        .received
        .lock()
        .unwrap()
        .iter()
        .map(|r| {
            let field = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (field("to"), field("message"), field("template_id"))
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            ("9811300001".into(), "Hi Asha, 20% off tonight".into(), "dlt-1107".into()),
            ("9811300002".into(), "Hi , 20% off tonight".into(), "dlt-1107".into()),
            ("9811300003".into(), "Hi Chitra, 20% off tonight".into(), "dlt-1107".into()),
        ]
    );
    // the report by auto_id lists the three debits; the next campaign gets the next id
    let report =
        b.staff("/crm_api/automated/campaigns/report", json!({"auto_id": "bulk-1", "business_id": "outlet-1"})).await;
    assert_eq!((&report["count"], &report["total_debited"]), (&json!(3), &json!("0.5133")), "{report}");
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 1, "reference": "b2"})).await;
    let (_, second) = bulk(&b, &FIELDS, "phone\n9811300009\n").await;
    assert_eq!((&second["campaign_id"], &second["queued_recipients"]), (&json!(2), &json!(1)), "{second}");

    // bad input: each a staff-family 400 naming the field, and nothing queued
    let missing: Vec<(&str, &str)> = FIELDS.iter().copied().filter(|(k, _)| *k != "template_id").collect();
    let push: Vec<(&str, &str)> =
        FIELDS.iter().map(|(k, v)| if *k == "channel" { (*k, "push") } else { (*k, *v) }).collect();
    for (fields, csv, pointer) in [
        (missing.as_slice(), "Phone\n9811300010\n", "/template_id"),
        (push.as_slice(), "Phone\n9811300010\n", "/channel"),
        (&FIELDS[..], "Mobile\n9811300010\n", "/file"),
        (&FIELDS[..], "Phone\n123\nabc\n", "/file/line/2"),
    ] {
        let (status, answer) = bulk(&b, fields, csv).await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(answer["errors"][0]["pointer"], pointer, "{answer}");
    }
    let not_multipart = app
        .client
        .post(format!("{}/crm_api/create/bulk/campaign", app.base))
        .header("token", &b.staff)
        .json(&json!({"parent_business_id": "brand-bulk"}))
        .send()
        .await
        .unwrap();
    assert_eq!(not_multipart.status(), 400);
    let (_, third) = bulk(&b, &FIELDS, "Phone\n9811300011\n").await;
    assert_eq!(third["campaign_id"], 3, "the refused uploads created no campaign: {third}");
}

/// Extracts the token of a tracking URL.
fn token_of(url: &str) -> &str {
    url.rsplit_once("/track/chat/link/").map(|(_, t)| t).unwrap()
}

#[tokio::test]
async fn a_chat_button_link_counts_its_click_and_redirects_and_bad_links_count_nothing() {
    let chat = provider(&[]).await;
    let secret = "a-test-link-secret";
    let app = spawn_app(&[
        ("ENGAGE_CHAT_PROVIDER_URL", &chat.url),
        ("ENGAGE_LINK_SECRET", secret),
        ("ENGAGE_PUBLIC_URL", "https://engage.example.test"),
    ])
    .await;
    let b = brand(&app, "brand-link").await;
    let now = Utc::now();
    b.order("l-1", "9811400001", "Asha", 300.0, now - Duration::days(1)).await;
    wait_customer(&app, "brand-link", "9811400001", |c| c["total_orders"] == 1).await;
    b.profile("9811400001", json!({"dob": born_on_day_after(now)})).await;
    let journey = b
        .journey(
            "birthday",
            json!({"channels": ["chat"], "chat_template": "Happy birthday x_cust_name",
                   "chat_button_text": "Claim", "chat_button_url": "https://shop.example.test/gift?c=1"}),
        )
        .await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 10, "reference": "l1"})).await;
    let ran = run(&app, "journeys", now + Duration::minutes(1)).await;
    assert_eq!(ran["outcome"]["sent"], 1, "{ran}");
    let drained = run(&app, "chat_drain", now + Duration::days(1)).await;
    assert_eq!(drained["outcome"]["sent"], 1, "{drained}");
    let sent = chat.received.lock().unwrap()[0].clone();
    assert_eq!(sent["message"], "Happy birthday Asha");
    let button = &sent["buttons"][0];
    assert_eq!(button["text"], "Claim");
    let url = button["url"].as_str().unwrap();
    assert!(url.starts_with("https://engage.example.test/track/chat/link/"), "{url}");
    let token = token_of(url).to_owned();

    let no_redirect = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let click = |token: String| {
        let client = no_redirect.clone();
        let base = app.base.clone();
        async move { client.get(format!("{base}/track/chat/link/{token}")).send().await.unwrap() }
    };
    let clicks = || async {
        let users = b.staff("/crm_api/get/auto_campaign_users", json!({"campaign_journey_id": journey})).await;
        users["data"][0]["clicks"].clone()
    };
    for expected in [1, 2] {
        let response = click(token.clone()).await;
        assert_eq!(response.status(), 302);
        assert_eq!(response.headers()["location"], "https://shop.example.test/gift?c=1");
        assert_eq!(clicks().await, json!(expected));
    }
    // a token signed with another secret, a tampered one and an expired one: 4xx, nothing counted
    let other = engage_actors::signed_links::Links::new(b"another-secret", "x");
    let forged = other.url("brand-link", &journey, "9811400001", "x", "https://evil.test", Utc::now()).unwrap();
    let mut tampered = token.clone();
    tampered.insert(tampered.len() - 2, 'x');
    let ours = engage_actors::signed_links::Links::new(secret.as_bytes(), "x");
    let expired = ours
        .url("brand-link", &journey, "9811400001", "x", "https://shop.example.test", Utc::now() - Duration::days(31))
        .unwrap();
    for (token, status) in [(token_of(&forged).to_owned(), 404), (tampered, 404), (token_of(&expired).to_owned(), 410)]
    {
        let response = click(token).await;
        assert_eq!(response.status().as_u16(), status);
        assert!(response.headers().get("location").is_none());
    }
    assert_eq!(clicks().await, json!(2));
}

/// A mail service on a loopback port: records each request's text fields and files.
pub(crate) async fn mail_service() -> (String, Arc<Mutex<Vec<(Vec<(String, String)>, Vec<(String, Vec<u8>)>)>>>) {
    type Got = Arc<Mutex<Vec<(Vec<(String, String)>, Vec<(String, Vec<u8>)>)>>>;
    async fn handle(State(got): State<Got>, mut form: Multipart) -> &'static str {
        let (mut fields, mut files) = (Vec::new(), Vec::new());
        while let Some(field) = form.next_field().await.unwrap() {
            let name = field.name().unwrap_or_default().to_owned();
            match field.file_name().map(str::to_owned) {
                Some(file) => files.push((file, field.bytes().await.unwrap().to_vec())),
                None => fields.push((name, field.text().await.unwrap())),
            }
        }
        got.lock().unwrap().push((fields, files));
        "ok"
    }
    let got: Got = Arc::default();
    let app = Router::new().route("/mail", axum::routing::post(handle)).with_state(got.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mail", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, got)
}

/// The text of every cell of an XLSX workbook (shared strings and numbers), read by Python's
/// zipfile: the file is a real workbook, not just bytes.
fn xlsx_text(bytes: &[u8]) -> String {
    xlsx_sheet(bytes, 1)
}

/// The text of every cell of sheet `sheet` (from 1) of an XLSX workbook, as [`xlsx_text`].
pub(crate) fn xlsx_sheet(bytes: &[u8], sheet: u32) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.xlsx");
    std::fs::write(&path, bytes).unwrap();
    let script = "import re, sys, zipfile\n\
                  z = zipfile.ZipFile(sys.argv[1])\n\
                  assert z.testzip() is None\n\
                  names = z.namelist()\n\
                  strings = re.findall(r'<t[^>]*>([^<]*)</t>', z.read('xl/sharedStrings.xml').decode()) if 'xl/sharedStrings.xml' in names else []\n\
                  sheet = z.read('xl/worksheets/sheet' + sys.argv[2] + '.xml').decode()\n\
                  numbers = re.findall(r'<c r=\"[A-Z]+[0-9]+\"(?![^>]*t=\"s\")[^>]*><v>([^<]*)</v>', sheet)\n\
                  print(' | '.join(strings + numbers))\n";
    let out =
        std::process::Command::new("python3").args(["-c", script]).arg(&path).arg(sheet.to_string()).output().unwrap();
    assert!(out.status.success(), "not a readable workbook: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn the_flag_sync_follows_the_journeys_and_the_health_reports_are_five_real_workbooks() {
    let sms = provider(&[]).await;
    let (mail_url, mailed) = mail_service().await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url), ("ENGAGE_MAIL_SERVICE_URL", &mail_url)]).await;
    let b = brand(&app, "brand-h").await;
    let now = Utc::now();
    for (n, phone) in ["9811500001", "9811500002", "9811500003"].iter().enumerate() {
        b.order(&format!("h-{n}"), phone, "Guest", 100.0, now - Duration::days(40)).await;
        wait_customer(&app, "brand-h", phone, |c| c["total_orders"] == 1).await;
    }
    // before the first sync the flag is unknown; the spec's badge lags until 12:47
    let mapped = b.staff("/crm_api/get/campaign/mapped/business", json!({})).await;
    assert_eq!(mapped["auto_campaign"], Value::Null, "{mapped}");
    let lost = b
        .journey(
            "lost_customers",
            json!({"channels": ["sms"], "sms_template": "We miss you", "days": 30, "daily_cap": 2}),
        )
        .await;
    // two SMS paid, the third over the daily cap
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 5, "reference": "h1"})).await;
    let ran = run(&app, "journeys", now + Duration::minutes(1)).await;
    assert_eq!((&ran["outcome"]["sent"], &ran["outcome"]["skipped"]), (&json!(2), &json!(1)), "{ran}");

    let synced = run(&app, "auto_campaign_sync", now).await;
    assert_eq!((&synced["outcome"]["records"], &synced["outcome"]["on"]), (&json!(2), &json!(2)), "{synced}");
    let mapped = b.staff("/crm_api/get/campaign/mapped/business", json!({})).await;
    assert_eq!((&mapped["auto_campaign"], &mapped["data"][0]["auto_campaign"]), (&json!(1), &json!(1)), "{mapped}");
    // turned off: the flag drops at the next sync, not before
    b.staff("/crm_api/enable/automated/campaign/", json!({"campaign_journey_id": lost, "campaign_enabled": 0})).await;
    assert_eq!(b.staff("/crm_api/get/campaign/mapped/business", json!({})).await["auto_campaign"], 1);
    run(&app, "auto_campaign_sync", now).await;
    assert_eq!(b.staff("/crm_api/get/campaign/mapped/business", json!({})).await["auto_campaign"], 0);

    // the reports of the 7 days before next week's run: five workbooks, written and mailed
    let outcome = run(&app, "health_reports", now + Duration::days(7)).await["outcome"].clone();
    assert_eq!((&outcome["journeys"], &outcome["mailed"]), (&json!(1), &json!(true)), "{outcome}");
    let files: Vec<String> =
        outcome["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_owned()).collect();
    assert_eq!(files.len(), 5);
    assert!(files.iter().all(|f| f.starts_with(&app.dir.path().join("reports").display().to_string())), "{files:?}");
    let mail = mailed.lock().unwrap().clone();
    assert_eq!(mail.len(), 1);
    let (fields, attached) = &mail[0];
    assert!(fields.iter().any(|(k, v)| k == "report" && v == "journey-health"), "{fields:?}");
    let names: Vec<&str> = attached.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["journey-sends.xlsx", "journey-skips.xlsx", "journey-roi.xlsx", "wallet-spend.xlsx", "top-journeys.xlsx"]
    );
    for (name, bytes) in attached {
        assert_eq!(bytes, &std::fs::read(files.iter().find(|f| f.ends_with(name.as_str())).unwrap()).unwrap());
    }
    let text = |name: &str| xlsx_text(&attached.iter().find(|(n, _)| n == name).unwrap().1);
    let sends = text("journey-sends.xlsx");
    assert!(sends.contains(&lost) && sends.contains("lost_customers") && sends.contains("off"), "{sends}");
    // the sheet's numbers: sent 2, holdout 0
    assert!(sends.ends_with("2 | 0\n"), "{sends}");
    let skips = text("journey-skips.xlsx");
    assert!(skips.contains("daily_cap") && skips.trim_end().ends_with('1'), "{skips}");
    let spend = text("wallet-spend.xlsx");
    // two messages at 0.1711
    assert!(spend.trim_end().ends_with("2 | 0.3422"), "{spend}");
    assert!(text("top-journeys.xlsx").contains(&lost));
}
