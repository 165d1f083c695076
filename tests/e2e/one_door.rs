//! The brand's actor is the only door to its rows (issue 52): changes that read and write a row are
//! applied inside the actor in one turn, so concurrent changes never lose one another.
//!
//! - 21 concurrent `/crm_api/wallet/set_pricing` patches, each of a different field: all 21 land
//!   (the edge used to read the table in one ask and write it in another: 12 to 19 were lost).
//! - concurrent `/crm_api/add_edit_rules` patches, each of a different field: all land.
//! - 20 concurrent `/crm_api/autoCampaign` adds of one type: one 200, nineteen 409, one type kept.
//!
//! Each runs on the embedded default and on a NATS server (the questions cross the bus).

use futures::future::join_all;
use serde_json::{json, Value};

use crate::helpers::{read, spawn_app, token_for, TestApp};

async fn post(app: &TestApp, path: &str, token: &str, body: Value) -> (u16, Value) {
    let response =
        app.client.post(format!("{}{path}", app.base)).header("token", token).json(&body).send().await.unwrap();
    read(response).await
}

/// The 21 fields of the price table, as (pointer, patch), each patch a value of its own.
fn pricing_patches() -> Vec<(String, Value)> {
    let mut patches = Vec::new();
    for (n, field) in ["digital_bill_sms", "digital_chat_cost", "digital_chat_cost_utility", "sms_gst", "chat_gst"]
        .into_iter()
        .enumerate()
    {
        patches.push((format!("/{field}"), json!({ field: 3 + n })));
    }
    for (p, purpose) in ["feedback", "fraud_alert", "campaign", "otp"].into_iter().enumerate() {
        for (c, channel) in ["sms", "chat", "chat_utility", "push"].into_iter().enumerate() {
            patches.push((format!("/{purpose}/{channel}"), json!({ purpose: { channel: 10 + p * 4 + c } })));
        }
    }
    patches
}

async fn concurrent_changes_all_land(app: &TestApp) {
    let brand = "brand-door";
    let staff = token_for(app, "staff", brand, None).await;
    // on NATS the node takes its partitions in the first seconds: wait until the brand answers
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while post(app, "/crm_api/wallet/get_pricing", &staff, json!({"parent_business_id": brand})).await.0 != 200 {
        assert!(std::time::Instant::now() < deadline, "the brand's actor never answered");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }

    // prices: 21 fields, 21 patches at once
    let patches = pricing_patches();
    assert_eq!(patches.len(), 21);
    let sent = patches.iter().map(|(_, patch)| {
        post(app, "/crm_api/wallet/set_pricing", &staff, json!({"parent_business_id": brand, "pricing": patch}))
    });
    for (status, body) in join_all(sent).await {
        assert_eq!(status, 200, "{body}");
    }
    let (_, table) = post(app, "/crm_api/wallet/get_pricing", &staff, json!({"parent_business_id": brand})).await;
    let lost: Vec<String> = patches
        .iter()
        .filter(|(pointer, patch)| {
            let wanted = patch.pointer(pointer).and_then(Value::as_u64).unwrap();
            let kept = table["pricing"].pointer(pointer).and_then(Value::as_str).unwrap_or_default();
            kept.parse::<f64>().ok() != Some(wanted as f64)
        })
        .map(|(pointer, _)| pointer.clone())
        .collect();
    assert!(lost.is_empty(), "patches lost: {lost:?} in {table}");

    // loyalty rules: one field each
    let rules = [
        ("/earn_percent", json!({"earn_percent": 7})),
        ("/min_bill", json!({"min_bill": 120})),
        ("/point_value", json!({"point_value": 2})),
        ("/points_expiry_days", json!({"points_expiry_days": 90})),
        ("/max_redeem_percent", json!({"max_redeem_percent": 40})),
        ("/min_redeem_points", json!({"min_redeem_points": 25})),
        ("/otp_required", json!({"otp_required": true})),
        ("/referral/referrer_points", json!({"referral": {"referrer_points": 70}})),
        ("/referral/referee_points", json!({"referral": {"referee_points": 30}})),
        ("/referral/enabled", json!({"referral": {"enabled": true}})),
    ];
    let sent = rules.iter().map(|(_, patch)| {
        let mut body = patch.clone();
        body["parent_business_id"] = json!(brand);
        post(app, "/crm_api/add_edit_rules", &staff, body)
    });
    for (status, body) in join_all(sent).await {
        assert_eq!(status, 200, "{body}");
    }
    let (_, last) = post(app, "/crm_api/add_edit_rules", &staff, json!({"parent_business_id": brand})).await;
    for (pointer, patch) in &rules {
        let wanted = patch.pointer(pointer).unwrap();
        let kept = last["rules"].pointer(pointer).unwrap();
        let same = kept == wanted || kept.as_str().and_then(|k| k.parse::<f64>().ok()) == wanted.as_f64();
        assert!(same, "{pointer}: {kept} kept, {wanted} sent ({last})");
    }

    // journey types: 20 adds of one type at once
    let add = json!({"parent_business_id": brand, "campaign_type": "monsoon_offer", "title": "Monsoon",
                     "execution_type": "2"});
    let answers = join_all((0..20).map(|_| post(app, "/crm_api/autoCampaign", &staff, add.clone()))).await;
    let mut statuses: Vec<u16> = answers.iter().map(|(status, _)| *status).collect();
    statuses.sort_unstable();
    let mut expected = vec![200];
    expected.extend([409; 19]);
    assert_eq!(statuses, expected, "{answers:?}");
    let (_, types) = post(app, "/crm_api/get/campaign/type/ids", &staff, json!({"parent_business_id": brand})).await;
    let kept = types["data"].as_array().unwrap().iter().filter(|t| t["campaign_type"] == "monsoon_offer").count();
    assert_eq!(kept, 1, "{types}");
}

#[tokio::test]
async fn concurrent_changes_all_land_on_the_embedded_default() {
    let app = spawn_app(&[]).await;
    concurrent_changes_all_land(&app).await;
}

#[tokio::test]
async fn concurrent_changes_all_land_on_nats() {
    let nats = crate::procs::NatsServer::start().await;
    let app = spawn_app(&[("ENGAGE_NATS_URL", &nats.url)]).await;
    concurrent_changes_all_land(&app).await;
}
