//! The remaining legacy routes: business configuration records (`/crm_api/add_b_config`, staff,
//! and `/php`, open), `/crm_api/v2` (dashboard data, chat-partner tokens and profiles) and the
//! chat logins (riders, and the internal check).

use serde_json::{json, Value};

use crate::helpers::spawn_app;
use crate::loyalty::post;
use crate::platform::{create_token, wait_customer};

const INTERNAL_SECRET: &str = "internal-secret-for-legacy-tests";

fn internal_jwt() -> String {
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "chat-service", "exp": chrono::Utc::now().timestamp() + 300}),
        &jsonwebtoken::EncodingKey::from_secret(INTERNAL_SECRET.as_bytes()),
    )
    .unwrap();
    format!("Bearer {token}")
}

#[tokio::test]
async fn business_configuration_records_merge_whoever_writes_them() {
    let app = spawn_app(&[]).await;
    let staff = create_token(&app, "staff", "cfg-brand").await;
    let set = |body: Value| {
        let (app, staff) = (&app, staff.clone());
        async move { post(app, "/crm_api/add_b_config", &[("token", &staff)], &body).await }
    };
    let (status, saved) = set(json!({"parent_business_id": "cfg-brand", "business_id": "o1",
        "business_name": "Dosa Corner", "sms_sender_id": "DOSACO", "feedback": 1}))
    .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["status"], 1);
    assert_eq!(saved["data"]["business_name"], "Dosa Corner");
    // the open route changes the same record: a field left out stays, null removes one
    let body = json!({"parent_business_id": "cfg-brand", "business_id": "o1", "city": "Pune", "feedback": null});
    let (status, open) = post(&app, "/crm_api/add_b_config/php", &[], &body).await;
    assert_eq!(status, 200, "{open}");
    let data = &open["data"];
    assert_eq!((data["business_name"].as_str(), data["city"].as_str()), (Some("Dosa Corner"), Some("Pune")));
    assert!(data.get("feedback").is_none(), "{data}");
    assert_eq!(data["sms_sender_id"], "DOSACO");
    // the bill status route writes digital_bill into the same record and keeps the rest
    let config = json!({"parent_business_id": "cfg-brand", "business_id": "o1", "mode": 1, "type": 1,
        "linkValidity": 30, "time": 15, "status": 1, "sms_template": "Bill x_short_url", "sender_id": "ENGAGE"});
    let (status, answer) = post(&app, "/crm_api/links/addBusinessConfig", &[("token", &staff)], &config).await;
    assert_eq!(status, 200, "{answer}");
    let off = json!({"parent_business_id": "cfg-brand", "business_id": "o1", "status": 0});
    assert_eq!(post(&app, "/crm_api/update/bill/status", &[("token", &staff)], &off).await.0, 200);
    let (_, again) = set(json!({"parent_business_id": "cfg-brand", "business_id": "o1", "chat": 1})).await;
    assert_eq!(again["data"]["digital_bill"], 0, "{again}");
    assert_eq!(again["data"]["business_name"], "Dosa Corner");
    // refusals: a field the record does not take, a bad sender id, no token, another brand's token
    for (body, pointer) in [
        (json!({"parent_business_id": "cfg-brand", "business_id": "o1", "auto_campaign": 1}), ""),
        (json!({"parent_business_id": "cfg-brand", "business_id": "o1", "sms_sender_id": "dosa"}), "/sms_sender_id"),
        (json!({"parent_business_id": "cfg-brand"}), "/business_id"),
    ] {
        let (status, answer) = set(body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["errors"][0]["pointer"], pointer, "{answer}");
        let (status, answer) = post(&app, "/crm_api/add_b_config/php", &[], &body).await;
        assert_eq!((status, answer["error_code"].as_str()), (400, Some("xE_102")), "{answer}");
    }
    let other = create_token(&app, "staff", "other-brand").await;
    let body = json!({"parent_business_id": "cfg-brand", "business_id": "o1", "city": "Goa"});
    assert_eq!(post(&app, "/crm_api/add_b_config", &[("token", &other)], &body).await.0, 403);
    assert_eq!(post(&app, "/crm_api/add_b_config", &[], &body).await.0, 403);
}

#[tokio::test]
async fn v2_dashboard_data_shows_figures_only_to_the_brand_and_partners_get_scoped_tokens() {
    let app = spawn_app(&[]).await;
    let brand = "v2-brand";
    let staff = create_token(&app, "staff", brand).await;
    let integration = create_token(&app, "integration", brand).await;
    let stranger = create_token(&app, "integration", "someone-else").await;
    let order = json!({"parentBusinessId": brand, "businessId": "o1", "orderId": "V-1",
        "customer": {"name": "Asha", "phone": "9876501234"}, "amount": 420.5, "orderTime": "2026-10-02 13:00:00"});
    assert_eq!(post(&app, "/injestion/platform", &[], &order).await.0, 200);
    wait_customer(&app, brand, "9876501234", |c| c["total_orders"] == 1).await;

    let period = json!({"parent_business_id": brand, "start": "2026-10-01", "end": "2026-10-07"});
    let (status, open) = post(&app, "/crm_api/v2/dashboarData", &[], &period).await;
    assert_eq!(status, 200, "{open}");
    assert_eq!(open["data"]["has_orders"], true);
    assert_eq!(open["data"]["active_outlets"], 1);
    assert!(open["data"].get("totals").is_none(), "no figures without a token: {open}");
    assert!(!open.to_string().contains("420.5"), "{open}");
    let (status, full) = post(&app, "/crm_api/v2/dashboarData", &[("token", &staff)], &period).await;
    assert_eq!(status, 200, "{full}");
    assert_eq!(full["data"]["totals"]["revenue"], 420.5);
    let (status, refused) = post(&app, "/crm_api/v2/dashboarData", &[("token", "nope")], &period).await;
    assert_eq!((status, refused["error_code"].as_str()), (401, Some("xE_101")));
    let bad = json!({"parent_business_id": brand, "start": "2026-10-07", "end": "2026-10-32"});
    let (status, refused) = post(&app, "/crm_api/v2/dashboarData", &[], &bad).await;
    assert_eq!((status, refused["errors"][0]["pointer"].as_str()), (400, Some("/end")), "{refused}");

    // a chat partner proves itself with the brand's integration token
    let ask = json!({"parent_business_id": brand, "business_id": "o1", "api_key": integration});
    let (status, issued) = post(&app, "/crm_api/v2/gupshup/generatePartnerToken", &[], &ask).await;
    assert_eq!(status, 200, "{issued}");
    assert_eq!((issued["partner"].as_str(), issued["expires_in"].as_i64()), (Some("gupshup"), Some(3600)));
    let token = issued["token"].as_str().unwrap().to_owned();
    let profile = json!({"parent_business_id": brand, "token": token});
    let (status, answer) = post(&app, "/crm_api/v2/gupshup/getPartnerProfile", &[], &profile).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (answer["data"]["partner"].as_str(), answer["data"]["business_id"].as_str()),
        (Some("gupshup"), Some("o1"))
    );
    // the token is this partner's and this brand's only; keys of another brand are refused
    let (status, _) = post(&app, "/crm_api/v2/interakt/getPartnerProfile", &[], &profile).await;
    assert_eq!(status, 401);
    let elsewhere = json!({"parent_business_id": "someone-else", "token": token});
    assert_eq!(post(&app, "/crm_api/v2/gupshup/getPartnerProfile", &[], &elsewhere).await.0, 401);
    let stolen = json!({"parent_business_id": brand, "api_key": stranger});
    let (status, refused) = post(&app, "/crm_api/v2/gupshup/generatePartnerToken", &[], &stolen).await;
    assert_eq!((status, refused["error_code"].as_str()), (401, Some("xE_101")));
    let (status, _) = post(&app, "/crm_api/v2/Not%20a%20partner/generatePartnerToken", &[], &ask).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_rider_signs_in_to_one_orders_chat_and_the_chat_service_checks_the_token() {
    let app = spawn_app(&[("ENGAGE_INTERNAL_JWT_SECRET", INTERNAL_SECRET)]).await;
    let brand = "rider-brand";
    let order = json!({"parentBusinessId": brand, "businessId": "o9", "orderId": "R-77",
        "customer": {"name": "Kiran", "phone": "9876505555"}, "amount": 99, "orderTime": "2026-10-02 20:00:00"});
    assert_eq!(post(&app, "/injestion/platform", &[], &order).await.0, 200);
    wait_customer(&app, brand, "9876505555", |c| c["total_orders"] == 1).await;

    let login =
        json!({"parent_business_id": brand, "business_id": "o9", "order_id": "R-77", "rider_phone": "9123456789"});
    let (status, signed) = post(&app, "/crm_api/rider/chat/login", &[], &login).await;
    assert_eq!(status, 200, "{signed}");
    assert_eq!(signed["chat"]["customer_name"], "Kiran");
    assert!(!signed.to_string().contains("9876505555"), "the rider never sees the customer's number");
    let token = signed["token"].as_str().unwrap();
    let jwt = internal_jwt();
    let (status, verdict) =
        post(&app, "/crm_api/check/chat/login", &[("authorization", &jwt)], &json!({"token": token})).await;
    assert_eq!(status, 200, "{verdict}");
    assert_eq!(verdict["valid"], true);
    assert_eq!(
        (verdict["role"].as_str(), verdict["order_id"].as_str(), verdict["subject"].as_str()),
        (Some("rider"), Some("R-77"), Some("9123456789"))
    );
    // a changed token is invalid; the check itself needs the internal JWT
    let tampered = format!("{}x", token);
    let (_, verdict) =
        post(&app, "/crm_api/check/chat/login", &[("authorization", &jwt)], &json!({"token": tampered})).await;
    assert_eq!((verdict["valid"].as_bool(), verdict["reason"].as_str()), (Some(false), Some("invalid")));
    assert_eq!(post(&app, "/crm_api/check/chat/login", &[], &json!({"token": token})).await.0, 401);
    // no chat for an order the outlet does not have, and a rider number is a mobile number
    let unknown =
        json!({"parent_business_id": brand, "business_id": "o9", "order_id": "R-78", "rider_phone": "9123456789"});
    let (status, refused) = post(&app, "/crm_api/rider/chat/login", &[], &unknown).await;
    assert_eq!((status, refused["error_code"].as_str()), (404, Some("xE_404")), "{refused}");
    let bad = json!({"parent_business_id": brand, "business_id": "o9", "order_id": "R-77", "rider_phone": "12345"});
    let (status, refused) = post(&app, "/crm_api/rider/chat/login", &[], &bad).await;
    assert_eq!((status, refused["errors"][0]["pointer"].as_str()), (400, Some("/rider_phone")), "{refused}");
}
