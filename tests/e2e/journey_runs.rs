//! The nightly journey run end to end on the embedded engine: orders and profiles in, the
//! `journeys` job run as at a chosen time, the SMS drain delivering to a local HTTP provider,
//! the reports, ROI attribution after an order update, holdout, frequency cap and quiet hours.

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::jobs::{admin, provider};
use crate::loyalty::post;
use crate::platform::{create_token, wait_customer};

/// `YYYY-MM-DD HH:mm:ss` in IST.
pub(crate) fn ist(at: DateTime<Utc>) -> String {
    at.with_timezone(&chrono::FixedOffset::east_opt(19_800).unwrap()).format("%Y-%m-%d %H:%M:%S").to_string()
}

/// `1990-MM-DD` of the IST day after `at` (a date of birth whose day is tomorrow).
pub(crate) fn born_on_day_after(at: DateTime<Utc>) -> String {
    format!("1990{}", &ist(at + Duration::days(1))[4..10])
}

pub(crate) struct Brand<'a> {
    pub(crate) app: &'a TestApp,
    pub(crate) name: &'static str,
    pub(crate) staff: String,
    pub(crate) integration: String,
}

impl<'a> Brand<'a> {
    pub(crate) async fn staff(&self, path: &str, mut body: Value) -> Value {
        body["parent_business_id"] = json!(self.name);
        let (status, answer) = post(self.app, path, &[("token", &self.staff)], &body).await;
        assert_eq!(status, 200, "{path}: {answer}");
        answer
    }

    pub(crate) async fn order(&self, id: &str, phone: &str, name: &str, amount: f64, at: DateTime<Utc>) {
        let body = json!({"parentBusinessId": self.name, "businessId": "outlet-1", "orderId": id,
            "customer": {"name": name, "phone": phone}, "amount": amount, "orderTime": ist(at)});
        assert_eq!(self.app.post_json("/injestion/platform", &body).await.0, 200);
    }

    /// Posts order `id` with `status` and `os`.
    pub(crate) async fn cart(&self, id: &str, phone: &str, amount: f64, status: u8, os: &str) {
        let body = json!({"parentBusinessId": self.name, "businessId": "outlet-1", "orderId": id,
            "customer": {"name": "Gita", "phone": phone}, "amount": amount, "status": status, "os": os});
        assert_eq!(self.app.post_json("/injestion/platform", &body).await.0, 200);
    }

    pub(crate) async fn profile(&self, phone: &str, fields: Value) {
        let mut body = fields;
        body["customer_number"] = json!(phone);
        let auth = [("authorization", self.integration.as_str())];
        let (status, answer) = post(self.app, "/integration/v1/update_user_profile", &auth, &body).await;
        assert_eq!(status, 200, "{answer}");
    }

    /// A brand with a staff and an integration token.
    pub(crate) async fn new(app: &'a TestApp, name: &'static str) -> Brand<'a> {
        let staff = create_token(app, "staff", name).await;
        let integration = create_token(app, "integration", name).await;
        Brand { app, name, staff, integration }
    }

    /// Saves and turns on a brand-level journey of `campaign_type`; its id.
    pub(crate) async fn journey(&self, campaign_type: &str, data: Value) -> String {
        self.outlet_journey("0", campaign_type, data).await
    }

    /// Saves and turns on `outlet`'s journey of `campaign_type`; its id.
    pub(crate) async fn outlet_journey(&self, outlet: &str, campaign_type: &str, data: Value) -> String {
        let types = self.staff("/crm_api/get/campaign/type/ids", json!({})).await;
        let type_id = types["data"].as_array().unwrap().iter().find(|t| t["campaign_type"] == campaign_type).unwrap()
            ["id"]
            .clone();
        let saved = self
            .staff(
                "/crm_api/save/campaign/journey",
                json!({"child_business_id": outlet, "campaign_type_id": type_id, "campaign_data": data}),
            )
            .await;
        let id = saved["campaign_journey_id"].as_str().unwrap().to_owned();
        self.staff("/crm_api/enable/automated/campaign/", json!({"campaign_journey_id": id, "campaign_enabled": 1}))
            .await;
        id
    }

    pub(crate) async fn balance(&self) -> String {
        let wallet = self.staff("/crm_api/wallet/balance", json!({"business_id": "outlet-1"})).await;
        wallet["balance"].as_str().unwrap().to_owned()
    }
}

/// Runs the ROI job two days after `now`; the birthday journey's ROI as the mapped-business
/// route shows it.
async fn birthday_roi(brand: &Brand<'_>, birthday: &str, now: DateTime<Utc>) -> Value {
    run(brand.app, "roi_journeys", now + Duration::days(2)).await;
    let mapped = brand.staff("/crm_api/get/campaign/mapped/business", json!({})).await;
    let journeys = mapped["data"][0]["journeys"].as_array().unwrap().clone();
    journeys.into_iter().find(|j| j["campaign_journey_id"] == birthday).unwrap()["roi"].clone()
}

pub(crate) async fn run(app: &TestApp, job: &str, now: DateTime<Utc>) -> Value {
    admin(app, "/admin/jobs/run", json!({"name": job, "now": now.to_rfc3339()})).await
}

#[tokio::test]
async fn the_nightly_run_reaches_each_type_once_within_cap_and_balance_and_roi_follows_orders() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let brand = Brand::new(&app, "brand-n").await;
    // points only on bills of 500 or more, expiring 3 days on: only Chitra holds an expiring lot
    brand
        .staff(
            "/crm_api/add_edit_rules",
            json!({"earn_percent": 10, "min_bill": 500, "point_value": 0.5, "points_expiry_days": 3,
                   "max_redeem_percent": 50, "min_redeem_points": 20}),
        )
        .await;
    let now = Utc::now();
    let tomorrow = born_on_day_after(now);
    // Asha: birthday tomorrow, lapsed 3 days ago; Bala: lapsed 70 days ago (the activation
    // backtrack); Chitra: anniversary tomorrow and 60 points expiring; Dev and Esha: birthdays
    let people = [
        ("9811200001", "Asha", 200.0, now - Duration::days(33)),
        ("9811200002", "Bala", 200.0, now - Duration::days(100)),
        ("9811200003", "Chitra", 600.0, now - Duration::days(1)),
        ("9811200004", "Dev", 200.0, now - Duration::days(1)),
        ("9811200005", "Esha", 200.0, now - Duration::days(1)),
    ];
    for (n, (phone, name, amount, at)) in people.iter().enumerate() {
        brand.order(&format!("n-{n}"), phone, name, *amount, *at).await;
        wait_customer(&app, "brand-n", phone, |c| c["total_orders"] == 1).await;
    }
    for phone in ["9811200001", "9811200004", "9811200005"] {
        brand.profile(phone, json!({"dob": tomorrow})).await;
    }
    brand.profile("9811200003", json!({"anniversary": format!("2015{}", &tomorrow[4..])})).await;

    let birthday = brand
        .journey(
            "birthday",
            json!({"channels": ["sms"], "sms_template": "Happy birthday x_cust_name (x_cust_mobile)", "daily_cap": 2}),
        )
        .await;
    let anniversary = brand
        .journey("anniversary", json!({"channels": ["sms"], "sms_template": "Happy anniversary x_cust_name"}))
        .await;
    let lost = brand
        .journey("lost_customers", json!({"channels": ["sms"], "sms_template": "We miss you x_cust_name", "days": 30}))
        .await;
    let expiry = brand
        .journey(
            "wallet_expiry",
            json!({"channels": ["sms"], "sms_template": "Points expiring, x_cust_name", "days": 10}),
        )
        .await;

    // the run is the first after activation (which backtracks lost customers of any age)
    let now = now + Duration::minutes(2);
    // five campaign SMS at 0.145 + 18% = 0.1711 each: the wallet runs out on the sixth
    brand
        .staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 0.8555, "reference": "n1"}))
        .await;
    let first = run(&app, "journeys", now).await;
    assert_eq!(
        (first["outcome"]["sent"].clone(), first["outcome"]["skipped"].clone()),
        (json!(5), json!(2)),
        "{first}"
    );
    assert_eq!(brand.balance().await, "0", "never below zero");
    // the same run again sends nothing twice (the two skipped for balance are skipped again)
    let again = run(&app, "journeys", now).await;
    assert_eq!(
        (again["outcome"]["sent"].clone(), again["outcome"]["skipped"].clone()),
        (json!(0), json!(2)),
        "{again}"
    );
    // money comes: Dev's birthday goes out, Esha's is over the daily cap of 2
    brand.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 1, "reference": "n2"})).await;
    let third = run(&app, "journeys", now).await;
    assert_eq!(
        (third["outcome"]["sent"].clone(), third["outcome"]["skipped"].clone()),
        (json!(1), json!(1)),
        "{third}"
    );
    assert_eq!(brand.balance().await, "0.8289");

    // the rows wait in tomorrow's SMS queue: the drain of tomorrow delivers them, filled in
    let drained = run(&app, "sms_drain", now + Duration::days(1)).await;
    assert_eq!(drained["outcome"]["sent"], 6, "{drained}");
    let mut received: Vec<(String, String)> = sms
        .received
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r["to"].as_str().unwrap().to_owned(), r["message"].as_str().unwrap().to_owned()))
        .collect();
    received.sort();
    assert_eq!(
        received,
        vec![
            ("9811200001".into(), "Happy birthday Asha (9811200001)".into()),
            ("9811200001".into(), "We miss you Asha".into()),
            ("9811200002".into(), "We miss you Bala".into()),
            ("9811200003".into(), "Happy anniversary Chitra".into()),
            ("9811200003".into(), "Points expiring, Chitra".into()),
            ("9811200004".into(), "Happy birthday Dev (9811200004)".into()),
        ]
    );

    // the send history, the audience and the wallet audit of the birthday journey
    let history = brand.staff("/crm_api/view/sent/automated/campaigns", json!({"campaign_journey_id": birthday})).await;
    let day = &history["data"][0];
    assert_eq!((day["sent_count"].clone(), day["skipped"]["daily_cap"].clone()), (json!(2), json!(1)), "{history}");
    assert_eq!(day["skipped"]["balance"], 0, "a retried skip leaves its reason: {history}");
    assert!(day["completed_at"].is_string(), "{history}");
    let users = brand
        .staff("/crm_api/get/auto_campaign_users", json!({"campaign_journey_id": birthday, "page_size": 1, "page": 2}))
        .await;
    // Asha, Dev, and Esha, whose skip for balance became one for the daily cap
    assert_eq!((users["total"].clone(), users["data"].as_array().unwrap().len()), (json!(3), 1), "{users}");
    assert_eq!(users["data"][0]["phone"], "9811200004", "page 2 of size 1: {users}");
    let last = brand
        .staff("/crm_api/get/auto_campaign_users", json!({"campaign_journey_id": birthday, "page_size": 1, "page": 3}))
        .await;
    assert_eq!(
        (last["data"][0]["phone"].clone(), last["data"][0]["reason"].clone()),
        (json!("9811200005"), json!("daily_cap"))
    );
    let report = brand.staff("/crm_api/automated/campaigns/report", json!({"auto_id": birthday})).await;
    assert_eq!((report["count"].clone(), report["total_debited"].clone()), (json!(2), json!("0.3422")), "{report}");
    for id in [&anniversary, &lost, &expiry] {
        let report = brand.staff("/crm_api/automated/campaigns/report", json!({"auto_id": id})).await;
        assert!(report["count"].as_u64().unwrap() >= 1, "{report}");
    }

    // Asha orders within the attribution window; then the order is updated to 300
    brand.order("n-roi", "9811200001", "Asha", 250.0, now + Duration::hours(1)).await;
    wait_customer(&app, "brand-n", "9811200001", |c| c["total_orders"] == 2).await;
    let figures = birthday_roi(&brand, &birthday, now).await;
    let sms_roi = &figures["modes"]["sms"];
    assert_eq!(
        (
            sms_roi["customers"].clone(),
            sms_roi["delivered"].clone(),
            sms_roi["orders"].clone(),
            sms_roi["revenue"].clone()
        ),
        (json!(2), json!(2), json!(1), json!("250")),
        "{figures}"
    );
    assert_eq!(figures["sent_conversion"], 0.5);
    brand.order("n-roi", "9811200001", "Asha", 300.0, now + Duration::hours(1)).await;
    wait_customer(&app, "brand-n", "9811200001", |c| c["lifetime_value"] == 500.0).await;
    let figures = birthday_roi(&brand, &birthday, now).await;
    assert_eq!(
        (figures["modes"]["sms"]["orders"].clone(), figures["modes"]["sms"]["revenue"].clone()),
        (json!(1), json!("300")),
        "exact after the update: {figures}"
    );
}

#[tokio::test]
async fn holdout_is_never_sent_the_frequency_cap_holds_and_quiet_hours_delay_delivery() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let brand = Brand::new(&app, "brand-h").await;
    let now = Utc::now();
    let tomorrow = born_on_day_after(now);
    brand.order("h-1", "9811300001", "Farah", 200.0, now - Duration::days(33)).await;
    wait_customer(&app, "brand-h", "9811300001", |c| c["total_orders"] == 1).await;
    brand.profile("9811300001", json!({"dob": tomorrow, "anniversary": format!("2015{}", &tomorrow[4..])})).await;
    let settings = brand.staff("/crm_api/journeys/settings", json!({"frequency_cap": 1})).await;
    assert_eq!(settings["data"]["frequency_cap"], 1, "{settings}");
    let birthday = brand
        .journey("birthday", json!({"channels": ["sms"], "sms_template": "Happy birthday", "holdout_percent": 100}))
        .await;
    brand.journey("anniversary", json!({"channels": ["sms"], "sms_template": "Happy anniversary"})).await;
    brand.journey("lost_customers", json!({"channels": ["sms"], "sms_template": "We miss you", "days": 30})).await;
    brand.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 5})).await;

    // birthday: held out; anniversary: sent; lost customers: over the frequency cap of 1
    let result = run(&app, "journeys", now).await;
    assert_eq!(
        (result["outcome"]["sent"].clone(), result["outcome"]["holdout"].clone(), result["outcome"]["skipped"].clone()),
        (json!(1), json!(1), json!(1)),
        "{result}"
    );
    let users = brand.staff("/crm_api/get/auto_campaign_users", json!({"campaign_journey_id": birthday})).await;
    assert_eq!(users["data"][0]["outcome"], "holdout", "{users}");

    // quiet hours around tomorrow's drain: nothing goes out until they end
    let drain_at = now + Duration::days(1);
    let hhmm = |at: DateTime<Utc>| ist(at)[11..16].to_owned();
    let quiet = json!({"quiet_hours": {"start": hhmm(drain_at - Duration::hours(1)), "end": hhmm(drain_at + Duration::hours(1))}});
    brand.staff("/crm_api/journeys/settings", quiet).await;
    let held = run(&app, "sms_drain", drain_at).await;
    assert_eq!((held["outcome"]["sent"].clone(), held["outcome"]["quiet"].clone()), (json!(0), json!(1)), "{held}");
    assert!(sms.received.lock().unwrap().is_empty());
    let after = run(&app, "sms_drain", drain_at + Duration::hours(2)).await;
    assert_eq!(after["outcome"]["sent"], 1, "{after}");
    assert_eq!(sms.received.lock().unwrap()[0]["message"], "Happy anniversary");

    // bad settings are 400s naming the field
    for bad in [json!({"quiet_hours": {"start": "25:00", "end": "07:00"}}), json!({"frequency_cap": -1})] {
        let mut body = bad;
        body["parent_business_id"] = json!("brand-h");
        let (status, answer) = post(&app, "/crm_api/journeys/settings", &[("token", &brand.staff)], &body).await;
        assert_eq!(status, 400, "{answer}");
    }
    // campaign tags: unique per brand regardless of letter case, listed by name
    brand.staff("/crm_api/create/campaign_tag", json!({"tag_name": "Weekend", "color": "#ff8800"})).await;
    brand.staff("/crm_api/create/campaign_tag", json!({"tag_name": "diwali"})).await;
    let again = json!({"parent_business_id": "brand-h", "tag_name": "WEEKEND"});
    let (status, answer) = post(&app, "/crm_api/create/campaign_tag", &[("token", &brand.staff)], &again).await;
    // the same name in another case conflicts with the tag the brand has
    assert_eq!(status, 409, "{answer}");
    assert!(answer["message"].as_str().unwrap_or_default().contains("exists already"), "{answer}");
    let tags = brand.staff("/crm_api/get/campaign_tags", json!({})).await;
    let names: Vec<&str> = tags["data"].as_array().unwrap().iter().map(|t| t["tag_name"].as_str().unwrap()).collect();
    assert_eq!(names, ["diwali", "Weekend"], "{tags}");
    // the reports name their required fields
    for (path, field) in [
        ("/crm_api/get/auto_campaign_users", "/campaign_journey_id"),
        ("/crm_api/automated/campaigns/report", "/auto_id"),
    ] {
        let (status, answer) =
            post(&app, path, &[("token", &brand.staff)], &json!({"parent_business_id": "brand-h"})).await;
        assert_eq!((status, answer["errors"][0]["pointer"].clone()), (400, json!(field)), "{path}: {answer}");
    }
}

#[tokio::test]
async fn abandoned_carts_are_reminded_after_their_trigger_once_a_day_unless_paid() {
    let app = spawn_app(&[]).await;
    let brand = Brand::new(&app, "brand-c").await;
    let cart = brand
        .journey(
            "abandoned_cart",
            json!({"channels": ["sms"], "sms_template": "Your cart misses you, x_cust_name", "trigger_minutes": 30}),
        )
        .await;
    brand.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 5})).await;
    // Gita leaves two carts in the app; Hari leaves one and pays it; Ila's carts do not qualify
    brand.cart("c-1", "9811400001", 500.0, 0, "A").await;
    brand.cart("c-2", "9811400001", 300.0, 0, "website").await;
    brand.cart("c-3", "9811400002", 400.0, 0, "I").await;
    brand.cart("c-3", "9811400002", 400.0, 1, "I").await;
    brand.cart("c-4", "9811400003", 400.0, 0, "POS").await;
    brand.cart("c-5", "9811400003", 1.0, 0, "A").await;
    wait_customer(&app, "brand-c", "9811400002", |c| c["total_orders"] == 1).await;
    wait_customer(&app, "brand-c", "9811400003", |c| c["name"] == "Gita").await;
    let gita = wait_customer(&app, "brand-c", "9811400001", |c| c["name"] == "Gita").await;
    assert_eq!(gita["total_orders"], 0, "a cart is not an order: {gita}");

    let now = Utc::now();
    let early = run(&app, "abandoned_cart", now + Duration::minutes(10)).await;
    // the paid cart leaves at once; Gita's two wait
    let figures =
        |r: &Value| (r["outcome"]["sent"].clone(), r["outcome"]["waiting"].clone(), r["outcome"]["dropped"].clone());
    assert_eq!(figures(&early), (json!(0), json!(2), json!(1)), "{early}");
    let due = run(&app, "abandoned_cart", now + Duration::minutes(31)).await;
    // one reminder a day: the second cart is dropped
    assert_eq!(figures(&due), (json!(1), json!(0), json!(1)), "{due}");
    let later = run(&app, "abandoned_cart", now + Duration::minutes(40)).await;
    assert_eq!(figures(&later), (json!(0), json!(0), json!(0)), "{later}");

    let users = brand.staff("/crm_api/get/auto_campaign_users", json!({"campaign_journey_id": cart})).await;
    assert_eq!(users["total"], 1, "{users}");
    assert_eq!(
        (users["data"][0]["phone"].clone(), users["data"][0]["outcome"].clone()),
        (json!("9811400001"), json!("sent"))
    );
    let report = brand.staff("/crm_api/automated/campaigns/report", json!({"auto_id": cart})).await;
    assert_eq!((report["count"].clone(), report["total_debited"].clone()), (json!(1), json!("0.1711")), "{report}");
    // a bad status is a 400 naming it
    let bad = json!({"parentBusinessId": "brand-c", "businessId": "outlet-1", "orderId": "c-9",
        "customer": {"phone": "9811400009"}, "amount": 10, "status": 7});
    let (status, answer) = app.post_json("/injestion/platform", &bad).await;
    assert_eq!(status, 400, "{answer}");
}

/// A customer created at an outlet (`/injestion/createCustomer` with its `businessId`) belongs
/// to that outlet until they order: the outlet's birthday journey reaches them, paid by its wallet.
#[tokio::test]
async fn an_outlet_journey_reaches_the_customers_it_created_before_they_order() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let brand = Brand::new(&app, "brand-created").await;
    let now = Utc::now();
    let created = json!({"parentBusinessId": "brand-created", "businessId": "outlet-2", "phone": "9811300001",
        "name": "Farah", "dob": born_on_day_after(now)});
    assert_eq!(app.post_json("/injestion/createCustomer", &created).await.0, 200);
    wait_customer(&app, "brand-created", "9811300001", |c| c["name"] == "Farah").await;
    let template = json!({"channels": ["sms"], "sms_template": "Happy birthday x_cust_name"});
    brand.outlet_journey("outlet-2", "birthday", template).await;
    brand.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-2", "amount": 1, "reference": "c1"})).await;
    let ran = run(&app, "journeys", now + Duration::minutes(2)).await;
    assert_eq!(ran["outcome"]["sent"], 1, "{ran}");
    let wallet = brand.staff("/crm_api/wallet/balance", json!({"business_id": "outlet-2"})).await;
    assert_eq!(wallet["balance"], "0.8289", "outlet-2 paid: {wallet}");
    let drained = run(&app, "sms_drain", now + Duration::days(1)).await;
    assert_eq!(drained["outcome"]["sent"], 1, "{drained}");
    let received = sms.received.lock().unwrap().clone();
    assert_eq!(
        (received[0]["to"].clone(), received[0]["message"].clone()),
        (json!("9811300001"), json!("Happy birthday Farah"))
    );
}
