//! Push through a brand's own Firebase project (issue 66, `docs/providers/fcm.md`): a local
//! server plays Google's token endpoint (it verifies the RS256 assertion with the service
//! account's public key, using `jsonwebtoken`, and mints access tokens) and FCM HTTP v1 (it takes
//! only the token it minted, and answers `UNREGISTERED` for a stale device token). The key is
//! written once and never answered; one token serves every send until it expires; a stale device
//! token fails its send at once and credits it back.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use chrono::Utc;
use jsonwebtoken::{decode, Algorithm, DecodingKey, Validation};
use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
use rsa::RsaPrivateKey;
use serde_json::{json, Value};

use crate::helpers::spawn_app;
use crate::journey_runs::{run, Brand};
use crate::platform::wait_customer;

const PROJECT: &str = "engage-push-test";
const CLIENT_EMAIL: &str = "engage@engage-push-test.iam.gserviceaccount.com";
const STALE: &str = "stale-device-token-0001";

/// What the fake Google saw: tokens minted, and each FCM send (project, bearer, body).
#[derive(Default)]
struct Seen {
    minted: Vec<String>,
    sends: Vec<(String, String, Value)>,
    refused_assertions: usize,
}

type Shared = (Arc<Mutex<Seen>>, String, String);

async fn token(State((seen, public_pem, token_uri)): State<Shared>, body: Bytes) -> Response {
    let form = crate::senders::form(&body);
    let field = |name: &str| form[name].as_str().unwrap_or_default().to_owned();
    if field("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "unsupported_grant_type"}))).into_response();
    }
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_audience(&[token_uri.as_str()]);
    validation.set_issuer(&[CLIENT_EMAIL]);
    let key = DecodingKey::from_rsa_pem(public_pem.as_bytes()).unwrap();
    let claims = match decode::<Value>(&field("assertion"), &key, &validation) {
        Ok(data) => data.claims,
        Err(_) => {
            seen.lock().unwrap().refused_assertions += 1;
            return (StatusCode::BAD_REQUEST, Json(json!({"error": "invalid_grant"}))).into_response();
        }
    };
    if claims["scope"] != "https://www.googleapis.com/auth/firebase.messaging" {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "invalid_scope"}))).into_response();
    }
    let mut seen = seen.lock().unwrap();
    let minted = format!("ya29.test-{}", seen.minted.len() + 1);
    seen.minted.push(minted.clone());
    Json(json!({"access_token": minted, "expires_in": 3599, "token_type": "Bearer"})).into_response()
}

async fn send(
    State((seen, _, _)): State<Shared>,
    Path(project): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let mut seen = seen.lock().unwrap();
    if !seen.minted.iter().any(|t| auth == format!("Bearer {t}")) {
        return (StatusCode::UNAUTHORIZED, Json(json!({"error": {"code": 401, "status": "UNAUTHENTICATED"}})))
            .into_response();
    }
    let project = project.trim_end_matches(":send").to_owned();
    seen.sends.push((project.clone(), auth, body.clone()));
    if body["message"]["token"] == STALE {
        let error = json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "Requested entity was not found.",
            "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}});
        return (StatusCode::NOT_FOUND, Json(error)).into_response();
    }
    Json(json!({"name": format!("projects/{project}/messages/0:{}", seen.sends.len())})).into_response()
}

#[tokio::test]
async fn a_brands_firebase_project_sends_its_pushes_with_one_cached_token_and_stale_devices_cost_nothing() {
    let private = RsaPrivateKey::new(&mut rand::thread_rng(), 2048).unwrap();
    let private_pem = private.to_pkcs8_pem(LineEnding::LF).unwrap().to_string();
    let public_pem = private.to_public_key().to_public_key_pem(LineEnding::LF).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let google = format!("http://{}", listener.local_addr().unwrap());
    let token_uri = format!("{google}/token");
    let seen = Arc::new(Mutex::new(Seen::default()));
    let router = Router::new()
        .route("/token", axum::routing::post(token))
        .route("/v1/projects/{project}/messages:send", axum::routing::post(send))
        .with_state((seen.clone(), public_pem, token_uri.clone()));
    tokio::spawn(async move { axum::serve(listener, router).await });
    // the service-account key as Google gives it
    let key = json!({"type": "service_account", "project_id": PROJECT, "private_key_id": "k1",
        "private_key": private_pem, "client_email": CLIENT_EMAIL, "token_uri": token_uri});

    let app = spawn_app(&[]).await;
    let b = Brand::new(&app, "brand-fcm").await;
    // a credential that is no service-account key is kept, and the sender says what it lacks
    let wrong = b
        .staff(
            "/crm_api/senders",
            json!({"channel": "push", "provider": "fcm", "base_url": google, "sender": PROJECT, "credential": "AIza-legacy-server-key"}),
        )
        .await;
    assert!(wrong["senders"][0]["incomplete"].as_str().unwrap_or_default().contains("service-account key"), "{wrong}");
    // the key file's text is taken, and so is its JSON object (set last here)
    let text = b
        .staff(
            "/crm_api/senders",
            json!({"channel": "push", "provider": "fcm", "base_url": google, "sender": PROJECT, "credential": key.to_string()}),
        )
        .await;
    assert_eq!(text["senders"][0]["incomplete"], Value::Null, "{text}");
    let set = b
        .staff(
            "/crm_api/senders",
            json!({"channel": "push", "provider": "fcm", "base_url": google, "sender": PROJECT, "credential": key}),
        )
        .await;
    let text = set.to_string();
    assert!(!text.contains("PRIVATE KEY") && !text.contains("\"k1\""), "the key is never answered: {text}");
    assert_eq!((&set["senders"][0]["credential_set"], &set["senders"][0]["incomplete"]), (&json!(true), &Value::Null));

    b.journey("welcome", json!({"channels": ["push"], "push_template": "Welcome x_cust_name"})).await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 5, "reference": "f1"})).await;
    // pushes are free unless priced: priced here, so that a refused one has something to credit
    b.staff("/crm_api/wallet/set_pricing", json!({"pricing": {"campaign": {"push": 0.05}}})).await;
    let customers =
        [("9811820001", "device-token-aaaa-0001"), ("9811820002", STALE), ("9811820003", "device-token-cccc-0003")];
    for (phone, device) in &customers[..2] {
        let token =
            json!({"parentBusinessId": "brand-fcm", "phone": phone, "fcm_token": device, "platform": "android"});
        assert_eq!(app.post_json("/injestion/fcms", &token).await.0, 200);
        b.order(&format!("F-{phone}"), phone, "Ravi", 300.0, Utc::now()).await;
        wait_customer(&app, "brand-fcm", phone, |c| c["total_orders"] == 1).await;
    }
    let paid = b.balance().await.parse::<f64>().unwrap();
    let first = run(&app, "push_drain", Utc::now()).await;
    assert_eq!((&first["outcome"]["sent"], &first["outcome"]["failed"]), (&json!(1), &json!(1)), "{first}");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.refused_assertions, 0);
        assert_eq!(seen.minted.len(), 1, "one token for both sends");
        let delivered = seen.sends.iter().find(|(_, _, body)| body["message"]["token"] == "device-token-aaaa-0001");
        let (project, auth, body) = delivered.expect("the push went to the device");
        assert_eq!((project.as_str(), auth.as_str()), (PROJECT, "Bearer ya29.test-1"));
        assert!(
            body["message"]["notification"]["body"].as_str().unwrap_or_default().starts_with("Welcome Ravi"),
            "{body}"
        );
    }
    // the stale device's send was refused for good and credited back
    assert!(b.balance().await.parse::<f64>().unwrap() > paid, "the UNREGISTERED send was credited back");
    // a later drain uses the same token
    let (phone, device) = customers[2];
    let token = json!({"parentBusinessId": "brand-fcm", "phone": phone, "fcm_token": device});
    assert_eq!(app.post_json("/injestion/fcms", &token).await.0, 200);
    b.order("F-3", phone, "Meera", 300.0, Utc::now()).await;
    wait_customer(&app, "brand-fcm", phone, |c| c["total_orders"] == 1).await;
    let second = run(&app, "push_drain", Utc::now()).await;
    assert_eq!(second["outcome"]["sent"], 1, "{second}");
    let seen = seen.lock().unwrap();
    assert_eq!((seen.minted.len(), seen.sends.len()), (1, 3), "the token was kept between drains");
}
