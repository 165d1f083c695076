//! One order that triggers every paid reaction at once (a digital bill, a feedback link and the
//! welcome journey, all paid by the outlet's wallet): each is debited with its own transaction,
//! delivered and counted exactly once. Before one wallet view per order batch, each reaction read
//! the stored wallet, all took one transaction number, and the last write won: the bill's SMS was
//! neither paid nor sent while its record said it went out.

use chrono::Utc;
use serde_json::{json, Value};

use crate::helpers::spawn_app;
use crate::jobs::provider;
use crate::journey_runs::{ist, run, Brand};
use crate::platform::wait_customer;

#[tokio::test]
async fn one_order_pays_each_of_its_reactions_once_from_one_wallet() {
    let sms = provider(&[]).await;
    let app = spawn_app(&[("ENGAGE_SMS_PROVIDER_URL", &sms.url)]).await;
    let b = Brand::new(&app, "brand-paid").await;
    b.staff(
        "/crm_api/links/addBusinessConfig",
        json!({"business_id": "outlet-1", "mode": 1, "time": 0, "status": 1, "sms_template": "Your bill: x_short_url",
               "sender_id": "ENGAGE"}),
    )
    .await;
    b.staff(
        "/crm_api/save/feedback/config",
        json!({"feedback_flow": 1, "feedback_sms": "true", "sms_template": "Rate x_order_id: x_feedback_url"}),
    )
    .await;
    let types = b.staff("/crm_api/get/campaign/type/ids", json!({})).await;
    let welcome =
        types["data"].as_array().unwrap().iter().find(|t| t["campaign_type"] == "welcome").unwrap()["id"].clone();
    let saved = b
        .staff(
            "/crm_api/save/campaign/journey",
            json!({"child_business_id": "outlet-1", "campaign_type_id": welcome,
                   "campaign_data": {"channels": ["sms"], "sms_template": "Welcome x_cust_name"}}),
        )
        .await;
    let journey = saved["campaign_journey_id"].clone();
    b.staff("/crm_api/enable/automated/campaign/", json!({"campaign_journey_id": journey, "campaign_enabled": 1}))
        .await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 1, "reference": "r1"})).await;

    let order = json!({"parentBusinessId": "brand-paid", "businessId": "outlet-1", "orderId": "P-1",
        "customer": {"name": "Asha", "phone": "9811700001"}, "items": [{"name": "Dosa", "qty": 1, "price": 120}],
        "amount": 120, "orderTime": ist(Utc::now())});
    assert_eq!(app.post_json("/injestion/pos_a", &order).await.0, 200);
    wait_customer(&app, "brand-paid", "9811700001", |c| c["total_orders"] == 1).await;

    // three debits, three transaction ids, and the balance is what the three prices leave:
    // bill SMS 0.145, feedback SMS 0.14, campaign SMS 0.145, each + 18% GST
    let txns = b.staff("/crm_api/wallet/transactions", json!({"business_id": "outlet-1", "page_size": 100})).await;
    let debits: Vec<Value> =
        txns["data"].as_array().unwrap().iter().filter(|t| t["transaction_type"] == "debit").cloned().collect();
    let mut purposes: Vec<&str> = debits.iter().map(|d| d["purpose"].as_str().unwrap()).collect();
    purposes.sort_unstable();
    assert_eq!(purposes, ["campaign", "digital_bill", "feedback"], "{txns}");
    let ids: std::collections::BTreeSet<&str> = debits.iter().map(|d| d["txn_id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 3, "{txns}");
    let balance = b.staff("/crm_api/wallet/balance", json!({"business_id": "outlet-1"})).await;
    assert_eq!(balance["balance"], "0.4926", "1 - 0.1711 - 0.1652 - 0.1711: {balance}");

    // each is delivered once, and the bill counted once
    let drained = run(&app, "sms_drain", Utc::now()).await["outcome"].clone();
    assert_eq!(drained["sent"], 3, "{drained}");
    let texts: Vec<String> =
        sms.received.lock().unwrap().iter().map(|m| m["message"].as_str().unwrap().to_owned()).collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(texts.iter().any(|t| t.starts_with("Your bill: ")), "{texts:?}");
    assert!(texts.iter().any(|t| t.starts_with("Rate P-1: ")), "{texts:?}");
    assert!(texts.iter().any(|t| t == "Welcome Asha"), "{texts:?}");
    let mis = b.staff("/crm_api/get_digital_bill_mis", json!({"business_id": "outlet-1"})).await;
    assert_eq!(mis["data"]["totals"]["total_bill_sent"], 1, "{mis}");
    // the order again changes nothing
    assert_eq!(app.post_json("/injestion/pos_a", &order).await.0, 200);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let again = b.staff("/crm_api/wallet/balance", json!({"business_id": "outlet-1"})).await;
    assert_eq!(again["balance"], "0.4926");
}
