//! Business wallets through the routes: recharge (idempotent per reference), balance,
//! transactions with exact GST, and fraud alerts that debit the wallet per message and are
//! skipped below the channel cost.

use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::platform::create_token;

async fn post(app: &TestApp, path: &str, token: &str, body: &Value) -> (u16, Value) {
    let response =
        app.client.post(format!("{}{path}", app.base)).header("token", token).json(body).send().await.unwrap();
    crate::helpers::read(response).await
}

#[tokio::test]
async fn recharge_balance_and_transactions() {
    let app = spawn_app(&[]).await;
    let staff = create_token(&app, "staff", "brand-w").await;
    let wallet = |extra: Value| {
        let mut body = json!({"parent_business_id": "brand-w", "business_id": "outlet-1"});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body
    };
    let (status, body) =
        post(&app, "/crm_api/wallet/recharge", &staff, &wallet(json!({"amount": 100.25, "reference": "upi-1"}))).await;
    assert_eq!((status, body["balance"].clone()), (200, json!("100.25")), "{body}");
    let (_, again) =
        post(&app, "/crm_api/wallet/recharge", &staff, &wallet(json!({"amount": 100.25, "reference": "upi-1"}))).await;
    assert_eq!((again["balance"].clone(), again["replayed"].clone()), (json!("100.25"), json!(true)));
    assert_eq!(
        post(&app, "/crm_api/wallet/recharge", &staff, &wallet(json!({"amount": 0.5}))).await.1["balance"],
        "100.75"
    );
    for bad in [json!({"amount": -1}), json!({"amount": 0}), json!({"amount": "ten"})] {
        let (status, body) = post(&app, "/crm_api/wallet/recharge", &staff, &wallet(bad.clone())).await;
        assert_eq!((status, body["message"].clone()), (400, json!("invalid request")), "{bad}");
    }
    let (status, body) = post(&app, "/crm_api/wallet/balance", &staff, &wallet(json!({}))).await;
    assert_eq!((status, body["balance"].clone()), (200, json!("100.75")));
    let (_, txns) =
        post(&app, "/crm_api/wallet/transactions", &staff, &wallet(json!({"page_size": 1, "page": 2}))).await;
    assert_eq!(txns["total"], 2);
    assert_eq!(txns["data"][0]["amount"], "0.5");
    let other = create_token(&app, "staff", "brand-x").await;
    assert_eq!(post(&app, "/crm_api/wallet/balance", &other, &wallet(json!({}))).await.0, 403);
}

#[tokio::test]
async fn fraud_alerts_debit_per_message_and_skip_below_the_channel_cost() {
    let app = spawn_app(&[]).await;
    let staff = create_token(&app, "staff", "brand-a").await;
    let settings = json!({"parent_business_id": "brand-a", "alert_recipients": ["9876500001", "9876500002", "9876500003"],
                          "channel_type": "sms", "template": "Suspicious activity on {contact}", "template_type": "UTILITY"});
    assert_eq!(post(&app, "/crm_api/configure_fraud_alert_settings", &staff, &settings).await.0, 200);
    // 0.40 pays for two SMS at 0.145 + 18% = 0.1711, not three
    let recharge =
        json!({"parent_business_id": "brand-a", "business_id": "outlet-1", "amount": 0.40, "reference": "r1"});
    assert_eq!(post(&app, "/crm_api/wallet/recharge", &staff, &recharge).await.0, 200);
    let alert = json!({"parent_business_id": "brand-a", "business_id": "outlet-1", "contact": "9123456789"});
    let (status, body) = post(&app, "/crm_api/send_fraud_alert", &staff, &alert).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!((body["queued"].clone(), body["charged"].clone()), (json!(2), json!("0.3422")));
    assert_eq!(body["skipped"].as_array().unwrap().len(), 1);
    let balance = json!({"parent_business_id": "brand-a", "business_id": "outlet-1"});
    assert_eq!(post(&app, "/crm_api/wallet/balance", &staff, &balance).await.1["balance"], "0.0578");
    // the same alert again today charges nothing more
    let (_, again) = post(&app, "/crm_api/send_fraud_alert", &staff, &alert).await;
    assert_eq!(again["charged"], "0");
    assert_eq!(post(&app, "/crm_api/wallet/balance", &staff, &balance).await.1["balance"], "0.0578");
    let (_, txns) = post(&app, "/crm_api/wallet/transactions", &staff, &balance).await;
    let debit = &txns["data"][1];
    assert_eq!(
        (debit["transaction_type"].clone(), debit["amount"].clone(), debit["gst"].clone()),
        (json!("debit"), json!("0.1711"), json!("0.0261"))
    );
    assert_eq!(debit["purpose"], "fraud_alert");
}

#[tokio::test]
async fn a_brand_sets_its_prices_and_later_sends_pay_them() {
    let app = spawn_app(&[]).await;
    let staff = create_token(&app, "staff", "brand-p").await;
    let brand = json!({"parent_business_id": "brand-p"});
    let (status, body) = post(&app, "/crm_api/wallet/get_pricing", &staff, &brand).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["pricing"]["digital_bill_sms"].clone(), body["pricing"]["sms_gst"].clone()),
        (json!("0.145"), json!("18")),
        "the spec's values until a table is set: {body}"
    );
    let change = json!({"parent_business_id": "brand-p", "pricing": {"sms_gst": 10, "fraud_alert": {"sms": 0.2}}});
    let (status, body) = post(&app, "/crm_api/wallet/set_pricing", &staff, &change).await;
    assert_eq!(status, 200, "{body}");
    let (_, read) = post(&app, "/crm_api/wallet/get_pricing", &staff, &brand).await;
    assert_eq!(read["pricing"]["fraud_alert"]["sms"], "0.2");
    assert_eq!(read["pricing"]["sms_gst"], "10");
    assert_eq!(read["pricing"]["digital_bill_sms"], "0.145", "a field left out keeps its value");
    assert_eq!(read["pricing"]["fraud_alert"]["chat"], "0.92", "a field left out keeps its value");
    for bad in [
        json!({"parent_business_id": "brand-p", "pricing": {"sms_gst": 101}}),
        json!({"parent_business_id": "brand-p", "pricing": {"campaign": {"sms": -1}}}),
        json!({"parent_business_id": "brand-p", "pricing": {"unknown_price": 1}}),
        json!({"parent_business_id": "brand-p"}),
    ] {
        let (status, body) = post(&app, "/crm_api/wallet/set_pricing", &staff, &bad).await;
        assert_eq!((status, body["message"].clone()), (400, json!("invalid request")), "{bad}: {body}");
    }
    let other = create_token(&app, "staff", "brand-q").await;
    assert_eq!(post(&app, "/crm_api/wallet/set_pricing", &other, &change).await.0, 403);
    // a fraud alert now costs 0.2 + 10% = 0.22 a message
    let settings = json!({"parent_business_id": "brand-p", "alert_recipients": ["9876500001"],
                          "channel_type": "sms", "template": "Check {contact}", "template_type": "UTILITY"});
    assert_eq!(post(&app, "/crm_api/configure_fraud_alert_settings", &staff, &settings).await.0, 200);
    let recharge = json!({"parent_business_id": "brand-p", "business_id": "outlet-1", "amount": 1, "reference": "r1"});
    assert_eq!(post(&app, "/crm_api/wallet/recharge", &staff, &recharge).await.0, 200);
    let alert = json!({"parent_business_id": "brand-p", "business_id": "outlet-1", "contact": "9123456789"});
    let (status, body) = post(&app, "/crm_api/send_fraud_alert", &staff, &alert).await;
    assert_eq!((status, body["charged"].clone()), (200, json!("0.22")), "{body}");
}
