//! Automated journeys through the routes: the type catalogue, and a brand's journey
//! configurations (save, update, enable, view, per outlet).

use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::platform::create_token;

async fn post(app: &TestApp, path: &str, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let mut request = app.client.post(format!("{}{path}", app.base)).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    crate::helpers::read(request.send().await.unwrap()).await
}

fn type_id(types: &Value, campaign_type: &str) -> String {
    types["data"].as_array().unwrap().iter().find(|t| t["campaign_type"] == campaign_type).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn journey_types_are_listed_with_fixed_ids_and_their_forms() {
    let app = spawn_app(&[]).await;
    let staff = create_token(&app, "staff", "brand-j").await;
    let s = [("token", staff.as_str())];
    let brand = json!({"parent_business_id": "brand-j"});
    let (status, types) = post(&app, "/crm_api/get/campaign/type/ids", &s, &brand).await;
    assert_eq!(status, 200, "{types}");
    let kinds: Vec<&str> =
        types["data"].as_array().unwrap().iter().map(|t| t["campaign_type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "welcome",
            "birthday",
            "anniversary",
            "wallet_expiry",
            "lost_customers",
            "abandoned_cart",
            "low_rating",
            "referral_boost"
        ]
    );
    for t in types["data"].as_array().unwrap() {
        let id = t["id"].as_str().unwrap();
        assert!(id.len() == 24 && id.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{id}");
        assert_eq!(t["roi"], json!({"configured": 0, "enabled": 0}));
    }
    // the ids are fixed: a second server lists the same ones
    let other = spawn_app(&[]).await;
    let other_staff = create_token(&other, "staff", "brand-j").await;
    let (_, again) = post(&other, "/crm_api/get/campaign/type/ids", &[("token", other_staff.as_str())], &brand).await;
    assert_eq!(type_id(&again, "birthday"), type_id(&types, "birthday"));

    let lost = type_id(&types, "lost_customers");
    let (status, fields) = post(
        &app,
        "/crm_api/get/campaign/fields",
        &s,
        &json!({"parent_business_id": "brand-j", "campaign_type_id": lost}),
    )
    .await;
    assert_eq!(status, 200, "{fields}");
    let days = fields["data"]["fields"].as_array().unwrap().iter().find(|f| f["ref_id"] == "days").unwrap();
    assert_eq!(days["required"], true);
    let (status, channels) = post(
        &app,
        "/crm_api/get/field/parameters",
        &s,
        &json!({"parent_business_id": "brand-j", "campaign_type_id": lost, "ref_id": "channels"}),
    )
    .await;
    assert_eq!(status, 200, "{channels}");
    let values: Vec<&str> =
        channels["data"]["options"].as_array().unwrap().iter().map(|o| o["value"].as_str().unwrap()).collect();
    assert_eq!(values, ["sms", "chat", "push"]);
    let (status, options) = post(&app, "/crm_api/get/days/type/options", &s, &brand).await;
    assert_eq!((status, options["data"].as_array().unwrap().len()), (200, 6), "{options}");

    let unknown = json!({"parent_business_id": "brand-j", "campaign_type_id": "0123456789abcdef01234567"});
    let (status, body) = post(&app, "/crm_api/get/campaign/fields", &s, &unknown).await;
    assert_eq!(status, 404, "an unknown journey type is not found: {body}");
    assert_eq!(post(&app, "/crm_api/get/campaign/type/ids", &[("token", "wrong")], &brand).await.0, 403);

    // autoCampaign adds a type, once
    let added = json!({"parent_business_id": "brand-j", "title": "Festival", "campaign_type": "festival", "execution_type": "2"});
    let (status, body) = post(&app, "/crm_api/autoCampaign", &s, &added).await;
    assert_eq!(status, 200, "{body}");
    let (_, types) = post(&app, "/crm_api/get/campaign/type/ids", &s, &brand).await;
    assert_eq!(type_id(&types, "festival"), body["data"]["id"].as_str().unwrap());
    // the same type again conflicts with the one the brand has
    let (status, body) = post(&app, "/crm_api/autoCampaign", &s, &added).await;
    assert_eq!((status, body["message"].clone()), (409, json!("a journey type festival exists already")), "{body}");
}

#[tokio::test]
async fn a_journey_is_saved_updated_enabled_viewed_and_mapped_per_outlet() {
    let app = spawn_app(&[]).await;
    let staff = create_token(&app, "staff", "brand-k").await;
    let s = [("token", staff.as_str())];
    let (_, types) = post(&app, "/crm_api/get/campaign/type/ids", &s, &json!({"parent_business_id": "brand-k"})).await;
    let (lost, birthday) = (type_id(&types, "lost_customers"), type_id(&types, "birthday"));
    let save = |child: &str, type_id: &str, data: Value| json!({"parent_business_id": "brand-k", "child_business_id": child, "campaign_type_id": type_id, "campaign_data": data});
    let lost_data =
        json!({"channels": ["sms"], "sms_template": "We miss you x_cust_name", "days": 30, "daily_cap": 500});
    let (status, saved) = post(&app, "/crm_api/save/campaign/journey", &s, &save("o1", &lost, lost_data.clone())).await;
    assert_eq!((status, saved["message"].clone()), (200, json!("journey saved")), "{saved}");
    let id = saved["campaign_journey_id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 24);
    // the same (brand, outlet, type) again updates it
    let mut changed = lost_data.clone();
    changed["days"] = json!(45);
    let (_, again) = post(&app, "/crm_api/save/campaign/journey", &s, &save("o1", &lost, changed)).await;
    assert_eq!(
        (again["campaign_journey_id"].as_str(), again["message"].clone()),
        (Some(id.as_str()), json!("journey updated"))
    );
    let view = json!({"parent_business_id": "brand-k", "campaign_journey_id": id});
    let (status, viewed) = post(&app, "/crm_api/view/campaign/journey", &s, &view).await;
    assert_eq!(status, 200, "{viewed}");
    assert_eq!(
        (viewed["data"]["campaign_data"]["days"].clone(), viewed["data"]["campaign_enabled"].clone()),
        (json!(45), json!(0)),
        "a new journey starts off: {viewed}"
    );
    let enable = json!({"parent_business_id": "brand-k", "campaign_journey_id": id, "campaign_enabled": 1});
    let (status, enabled) = post(&app, "/crm_api/enable/automated/campaign/", &s, &enable).await;
    assert_eq!((status, enabled["campaign_enabled"].clone()), (200, json!(1)), "{enabled}");
    let (_, viewed) = post(&app, "/crm_api/view/campaign/journey", &s, &view).await;
    assert_eq!(viewed["data"]["campaign_enabled"], 1);
    // saving again keeps it enabled
    post(&app, "/crm_api/save/campaign/journey", &s, &save("o1", &lost, lost_data)).await;
    let (_, viewed) = post(&app, "/crm_api/view/campaign/journey", &s, &view).await;
    assert_eq!(viewed["data"]["campaign_enabled"], 1);

    let birthday_data =
        json!({"channels": ["chat", "push"], "chat_template": "bday_offer", "push_template": "Happy birthday!"});
    assert_eq!(post(&app, "/crm_api/save/campaign/journey", &s, &save("o2", &birthday, birthday_data)).await.0, 200);
    let (_, mapped) =
        post(&app, "/crm_api/get/campaign/mapped/business", &s, &json!({"parent_business_id": "brand-k"})).await;
    let outlets: Vec<&str> =
        mapped["data"].as_array().unwrap().iter().map(|g| g["child_business_id"].as_str().unwrap()).collect();
    assert_eq!(outlets, ["o1", "o2"], "{mapped}");
    let (_, only) = post(
        &app,
        "/crm_api/get/campaign/mapped/business",
        &s,
        &json!({"parent_business_id": "brand-k", "child_business_id": "o2"}),
    )
    .await;
    assert_eq!(only["data"][0]["journeys"][0]["campaign_type"], "birthday", "{only}");
    let (_, types) = post(&app, "/crm_api/get/campaign/type/ids", &s, &json!({"parent_business_id": "brand-k"})).await;
    let lost_entry = types["data"].as_array().unwrap().iter().find(|t| t["campaign_type"] == "lost_customers").unwrap();
    assert_eq!(lost_entry["roi"], json!({"configured": 1, "enabled": 1}));

    // refusals
    let unknown_type = save("o1", "0123456789abcdef01234567", json!({"channels": ["sms"], "sms_template": "x"}));
    let (status, body) = post(&app, "/crm_api/save/campaign/journey", &s, &unknown_type).await;
    assert_eq!((status, body["message"].clone()), (404, json!("journey type 0123456789abcdef01234567 not found")));
    let no_template = save("o1", &lost, json!({"channels": ["sms"], "days": 30}));
    let (status, body) = post(&app, "/crm_api/save/campaign/journey", &s, &no_template).await;
    assert_eq!((status, body["errors"][0]["pointer"].clone()), (400, json!("/campaign_data/sms_template")), "{body}");
    let no_days = save("o1", &lost, json!({"channels": ["sms"], "sms_template": "x"}));
    let (status, body) = post(&app, "/crm_api/save/campaign/journey", &s, &no_days).await;
    assert_eq!((status, body["errors"][0]["pointer"].clone()), (400, json!("/campaign_data/days")), "{body}");
    let bad_channel = save("o1", &lost, json!({"channels": ["fax"], "days": 3}));
    assert_eq!(post(&app, "/crm_api/save/campaign/journey", &s, &bad_channel).await.0, 400);
    let missing = json!({"parent_business_id": "brand-k", "campaign_journey_id": "0123456789abcdef01234567", "campaign_enabled": 1});
    assert_eq!(post(&app, "/crm_api/enable/automated/campaign/", &s, &missing).await.0, 404);
    let other = create_token(&app, "staff", "brand-x").await;
    assert_eq!(post(&app, "/crm_api/view/campaign/journey", &[("token", other.as_str())], &view).await.0, 403);
}

#[tokio::test]
async fn customers_take_an_anniversary_wherever_they_take_a_dob() {
    let app = spawn_app(&[]).await;
    let integration = create_token(&app, "integration", "brand-n").await;
    let auth = [("authorization", integration.as_str())];
    let user = json!({"customer_number": "9876512345", "dob": "1990-04-02", "anniversary": "2015-12-01"});
    let (status, body) = post(&app, "/integration/v1/create_user", &auth, &user).await;
    assert_eq!(status, 200, "{body}");
    let bad = json!({"customer_number": "9876512345", "anniversary": "first of december"});
    let (status, body) = post(&app, "/integration/v1/update_user_profile", &auth, &bad).await;
    assert_eq!((status, body["errors"][0]["pointer"].clone()), (400, json!("/anniversary")), "{body}");
}

#[tokio::test]
async fn a_first_order_gets_the_welcome_journey_once_paid_by_the_outlet_wallet() {
    use crate::platform::{order, wait_customer};
    let app = spawn_app(&[]).await;
    let staff = create_token(&app, "staff", "brand-w").await;
    let s = [("token", staff.as_str())];
    let (_, types) = post(&app, "/crm_api/get/campaign/type/ids", &s, &json!({"parent_business_id": "brand-w"})).await;
    let welcome = json!({"parent_business_id": "brand-w", "child_business_id": "outlet-1",
        "campaign_type_id": type_id(&types, "welcome"),
        "campaign_data": {"channels": ["sms"], "sms_template": "Welcome x_cust_name (x_cust_mobile)"}});
    let (_, saved) = post(&app, "/crm_api/save/campaign/journey", &s, &welcome).await;
    let id = saved["campaign_journey_id"].as_str().unwrap().to_owned();
    let toggle = |on: u8| json!({"parent_business_id": "brand-w", "campaign_journey_id": id, "campaign_enabled": on});
    assert_eq!(post(&app, "/crm_api/enable/automated/campaign/", &s, &toggle(1)).await.0, 200);
    // 0.40 pays two campaign SMS at 0.145 + 18% = 0.1711
    let recharge =
        json!({"parent_business_id": "brand-w", "business_id": "outlet-1", "amount": 0.40, "reference": "w1"});
    assert_eq!(post(&app, "/crm_api/wallet/recharge", &s, &recharge).await.0, 200);
    let wallet = json!({"parent_business_id": "brand-w", "business_id": "outlet-1", "page_size": 100});
    let debits = || async {
        let (_, txns) = post(&app, "/crm_api/wallet/transactions", &s, &wallet).await;
        txns["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["transaction_type"] == "debit")
            .cloned()
            .collect::<Vec<_>>()
    };
    let app = &app;
    let place = |id: &str, phone: &str| {
        let body = order("brand-w", id, phone, 100.0);
        async move { assert_eq!(app.post_json("/injestion/platform", &body).await.0, 200) }
    };

    place("w-1", "9811100001").await;
    wait_customer(app, "brand-w", "9811100001", |c| c["total_orders"] == 1).await;
    let paid = debits().await;
    assert_eq!(paid.len(), 1, "{paid:?}");
    assert_eq!(
        (paid[0]["auto_id"].clone(), paid[0]["purpose"].clone(), paid[0]["amount"].clone()),
        (json!(id), json!("campaign"), json!("0.1711"))
    );
    // a second order, and a replay of the first, send nothing more
    place("w-2", "9811100001").await;
    place("w-1", "9811100001").await;
    wait_customer(app, "brand-w", "9811100001", |c| c["total_orders"] == 2).await;
    // a journey that is off sends nothing
    assert_eq!(post(app, "/crm_api/enable/automated/campaign/", &s, &toggle(0)).await.0, 200);
    place("w-3", "9811100002").await;
    wait_customer(app, "brand-w", "9811100002", |c| c["total_orders"] == 1).await;
    assert_eq!(debits().await.len(), 1);
    // on again: the wallet pays one more, then cannot pay the next, which is skipped
    assert_eq!(post(app, "/crm_api/enable/automated/campaign/", &s, &toggle(1)).await.0, 200);
    place("w-4", "9811100003").await;
    wait_customer(app, "brand-w", "9811100003", |c| c["total_orders"] == 1).await;
    place("w-5", "9811100004").await;
    wait_customer(app, "brand-w", "9811100004", |c| c["total_orders"] == 1).await;
    assert_eq!(debits().await.len(), 2);
    let (_, balance) = post(app, "/crm_api/wallet/balance", &s, &wallet).await;
    assert_eq!(balance["balance"], "0.0578", "never below zero: {balance}");
}
