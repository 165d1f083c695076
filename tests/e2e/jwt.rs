//! Bearer JWT auth on the log routes, against a real local HTTP server serving a JWKS built from
//! RSA keys this test generates.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use rsa::pkcs1::EncodeRsaPrivateKey;
use rsa::pkcs8::{EncodePublicKey, LineEnding};
use rsa::traits::PublicKeyParts;
use rsa::RsaPrivateKey;
use serde_json::{json, Value};

use crate::helpers::{event, spawn_app, TestApp};

/// An RSA key pair with its kid.
struct Key {
    kid: String,
    private: RsaPrivateKey,
}

impl Key {
    fn generate(kid: &str) -> Self {
        let private = RsaPrivateKey::new(&mut rand::thread_rng(), 2048).expect("rsa key");
        Self { kid: kid.to_owned(), private }
    }

    fn jwk(&self) -> Value {
        let public = self.private.to_public_key();
        json!({
            "kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.kid,
            "n": URL_SAFE_NO_PAD.encode(public.n().to_bytes_be()),
            "e": URL_SAFE_NO_PAD.encode(public.e().to_bytes_be()),
        })
    }

    fn public_pem(&self) -> String {
        self.private.to_public_key().to_public_key_pem(LineEnding::LF).expect("pem")
    }

    fn sign(&self, claims: &Value) -> String {
        self.sign_with_header(claims, Header { kid: Some(self.kid.clone()), ..Header::new(Algorithm::RS256) })
    }

    fn sign_with_header(&self, claims: &Value, header: Header) -> String {
        let pem = self.private.to_pkcs1_pem(LineEnding::LF).expect("pem");
        encode(&header, claims, &EncodingKey::from_rsa_pem(pem.as_bytes()).expect("encoding key")).expect("token")
    }
}

/// A JWKS server: its document can be swapped (rotation) or made to fail; fetches are counted.
#[derive(Clone)]
struct Jwks {
    document: Arc<RwLock<Option<Value>>>,
    fetches: Arc<AtomicUsize>,
    url: String,
}

impl Jwks {
    async fn serve(keys: &[&Key]) -> Self {
        let document = Arc::new(RwLock::new(Some(json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()}))));
        let fetches = Arc::new(AtomicUsize::new(0));
        let state = (document.clone(), fetches.clone());
        let app = Router::new().route("/auth/business/jwks.json", get(jwks_handler)).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/auth/business/jwks.json", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { document, fetches, url }
    }

    fn publish(&self, keys: &[&Key]) {
        *self.document.write().unwrap() = Some(json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()}));
    }

    fn fail(&self) {
        *self.document.write().unwrap() = None;
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

type JwksState = (Arc<RwLock<Option<Value>>>, Arc<AtomicUsize>);

async fn jwks_handler(State((document, fetches)): State<JwksState>) -> Response {
    fetches.fetch_add(1, Ordering::SeqCst);
    let current = document.read().unwrap().clone();
    match current {
        Some(doc) => Json(doc).into_response(),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

fn claims(exp_offset_secs: i64) -> Value {
    let now = chrono::Utc::now().timestamp();
    json!({"sub": "producer-1", "iss": "https://auth.test", "aud": "engage-logs", "iat": now, "exp": now + exp_offset_secs})
}

async fn app_with(jwks: &Jwks, extra: &[(&str, &str)]) -> TestApp {
    let mut env = vec![("ENGAGE_JWKS_URL", jwks.url.as_str()), ("ENGAGE_JWKS_MIN_REFETCH_SECS", "0")];
    env.extend_from_slice(extra);
    spawn_app(&env).await
}

async fn post_with(app: &TestApp, token: Option<&str>) -> (u16, Value, Option<String>) {
    let mut request = app.client.post(format!("{}/v1/logs", app.base)).json(&event("auth"));
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = request.send().await.unwrap();
    let challenge = response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = crate::helpers::read(response).await;
    (status, body, challenge)
}

fn assert_unauthorized(answer: (u16, Value, Option<String>), what: &str) {
    let (status, body, challenge) = answer;
    assert_eq!(status, 401, "{what}: {body}");
    assert_eq!(body["error"], "UNAUTHORIZED", "{what}");
    assert_eq!(challenge.as_deref(), Some("Bearer"), "{what}");
}

#[tokio::test]
async fn valid_tokens_pass_and_bad_ones_are_401() {
    let key = Key::generate("k1");
    let other = Key::generate("k1"); // same kid, different key
    let jwks = Jwks::serve(&[&key]).await;
    let app = app_with(&jwks, &[]).await;

    let (status, body, _) = post_with(&app, Some(&key.sign(&claims(300)))).await;
    assert_eq!((status, body), (200, json!({"accepted": 1})));
    // within the 60 s leeway
    assert_eq!(post_with(&app, Some(&key.sign(&claims(-30)))).await.0, 200);

    assert_unauthorized(post_with(&app, None).await, "missing token");
    assert_unauthorized(post_with(&app, Some("not.a.jwt")).await, "malformed");
    assert_unauthorized(post_with(&app, Some(&key.sign(&claims(-120)))).await, "expired");
    assert_unauthorized(post_with(&app, Some(&other.sign(&claims(300)))).await, "wrong key");
    let no_exp = json!({"sub": "x"});
    assert_unauthorized(post_with(&app, Some(&key.sign(&no_exp))).await, "no exp");

    // alg none: header and claims, empty signature
    let none_header = URL_SAFE_NO_PAD.encode(json!({"alg": "none", "typ": "JWT", "kid": "k1"}).to_string());
    let payload = URL_SAFE_NO_PAD.encode(claims(300).to_string());
    assert_unauthorized(post_with(&app, Some(&format!("{none_header}.{payload}."))).await, "alg none");

    // HS256 "signed" with the RSA public key as the HMAC secret
    let hs = encode(
        &Header { kid: Some("k1".into()), ..Header::new(Algorithm::HS256) },
        &claims(300),
        &EncodingKey::from_secret(key.public_pem().as_bytes()),
    )
    .unwrap();
    assert_unauthorized(post_with(&app, Some(&hs)).await, "HS256 with the public key");

    // a token pointing at the attacker's own JWKS (jku) is judged against ours only
    let attacker = Key::generate("evil");
    let attacker_jwks = Jwks::serve(&[&attacker]).await;
    let header =
        Header { kid: Some("evil".into()), jku: Some(attacker_jwks.url.clone()), ..Header::new(Algorithm::RS256) };
    assert_unauthorized(post_with(&app, Some(&attacker.sign_with_header(&claims(300), header))).await, "jku");
    assert_eq!(attacker_jwks.fetches(), 0, "the attacker's JWKS is never fetched");
}

#[tokio::test]
async fn issuer_and_audience_are_checked_when_configured() {
    let key = Key::generate("k1");
    let jwks = Jwks::serve(&[&key]).await;
    let app =
        app_with(&jwks, &[("ENGAGE_JWT_ISSUER", "https://auth.test"), ("ENGAGE_JWT_AUDIENCE", "engage-logs")]).await;
    assert_eq!(post_with(&app, Some(&key.sign(&claims(300)))).await.0, 200);
    let mut wrong_iss = claims(300);
    wrong_iss["iss"] = json!("https://evil.test");
    assert_unauthorized(post_with(&app, Some(&key.sign(&wrong_iss))).await, "wrong iss");
    let mut wrong_aud = claims(300);
    wrong_aud["aud"] = json!("someone-else");
    assert_unauthorized(post_with(&app, Some(&key.sign(&wrong_aud))).await, "wrong aud");
}

#[tokio::test]
async fn an_unknown_kid_after_rotation_refetches_once_for_concurrent_callers() {
    let old = Key::generate("2026-01");
    let jwks = Jwks::serve(&[&old]).await;
    let app = app_with(&jwks, &[]).await;
    assert_eq!(post_with(&app, Some(&old.sign(&claims(300)))).await.0, 200);
    let before = jwks.fetches();

    let new = Key::generate("2026-02");
    jwks.publish(&[&old, &new]);
    let token = new.sign(&claims(300));
    let answers = futures::future::join_all((0..16).map(|_| post_with(&app, Some(&token)))).await;
    assert!(answers.iter().all(|(status, _, _)| *status == 200), "{answers:?}");
    assert_eq!(jwks.fetches() - before, 1, "concurrent misses share one fetch");

    // a kid that exists nowhere is refused
    let stranger = Key::generate("2099-01");
    assert_unauthorized(post_with(&app, Some(&stranger.sign(&claims(300)))).await, "unknown kid");
}

#[tokio::test]
async fn unknown_kid_refetches_are_rate_limited() {
    let key = Key::generate("k1");
    let jwks = Jwks::serve(&[&key]).await;
    let app = spawn_app(&[("ENGAGE_JWKS_URL", jwks.url.as_str()), ("ENGAGE_JWKS_MIN_REFETCH_SECS", "3600")]).await;
    assert_eq!(post_with(&app, Some(&key.sign(&claims(300)))).await.0, 200);
    let stranger = Key::generate("nope");
    for _ in 0..5 {
        assert_unauthorized(post_with(&app, Some(&stranger.sign(&claims(300)))).await, "unknown kid");
    }
    // the start-up fetch plus at most one caused by the misses
    assert!(jwks.fetches() <= 2, "{} fetches", jwks.fetches());
}

#[tokio::test]
async fn the_last_good_keys_stay_when_the_jwks_fails() {
    let key = Key::generate("k1");
    let jwks = Jwks::serve(&[&key]).await;
    // refresh on every request: each one tries the (failing) JWKS
    let app = app_with(&jwks, &[("ENGAGE_JWKS_REFRESH_SECS", "0")]).await;
    assert_eq!(post_with(&app, Some(&key.sign(&claims(300)))).await.0, 200);
    jwks.fail();
    let before = jwks.fetches();
    assert_eq!(post_with(&app, Some(&key.sign(&claims(300)))).await.0, 200);
    assert!(jwks.fetches() > before, "the failing JWKS was tried");
}

#[tokio::test]
async fn the_rate_limit_is_per_token_subject() {
    let key = Key::generate("k1");
    let jwks = Jwks::serve(&[&key]).await;
    let app = app_with(&jwks, &[("ENGAGE_RATE_LIMIT_PER_SECOND", "1")]).await;
    let mut a = claims(300);
    a["sub"] = json!("producer-a");
    let mut b = claims(300);
    b["sub"] = json!("producer-b");
    let (token_a, token_b) = (key.sign(&a), key.sign(&b));
    assert_eq!(post_with(&app, Some(&token_a)).await.0, 200);
    assert_eq!(post_with(&app, Some(&token_a)).await.0, 429);
    assert_eq!(post_with(&app, Some(&token_b)).await.0, 200);
}

#[tokio::test]
async fn otlp_exports_and_tail_reads_follow_the_same_jwt_rules() {
    let key = Key::generate("k1");
    let jwks = Jwks::serve(&[&key]).await;
    let org = crate::helpers::unique_org();
    let app = app_with(&jwks, &[("ENGAGE_LOG_ORG", &org)]).await;
    let endpoint = format!("{}/otlp/v1/logs", app.base);
    let spec = json!({"resource": {"service.name": "checkout", "product": "edge", "version": "1", "environment": "prod"},
                      "records": [{"message": "signed"}]});
    // no token: the unmodified exporter gets a 401 and reports a failed export
    let answer = crate::otlp::emit(&[("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", &endpoint)], &spec).await;
    assert_eq!(answer["results"], json!(["FAILURE"]), "{answer}");
    assert_eq!(answer["responses"][0]["status"], 401, "{answer}");
    // the token in OTEL_EXPORTER_OTLP_HEADERS
    let headers = format!("Authorization=Bearer%20{}", key.sign(&claims(300)));
    let env = [("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", endpoint.as_str()), ("OTEL_EXPORTER_OTLP_HEADERS", &headers)];
    let answer = crate::otlp::emit(&env, &spec).await;
    assert_eq!(answer["results"], json!(["SUCCESS"]), "{answer}");
    // an OTLP/JSON export without a token: 401 with a Status body and the challenge
    let response =
        app.client.post(&endpoint).header("content-type", "application/json").body("{}").send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    let body: Value = response.json().await.unwrap();
    assert_eq!((body["code"].clone(), body["error"].clone()), (json!(16), json!("UNAUTHORIZED")), "{body}");
    // the tail read too
    let tail = format!("{}/v1/logs/tail?log_group=/logs/{org}/edge/checkout", app.base);
    assert_eq!(app.client.get(&tail).send().await.unwrap().status(), 401);
    let token = key.sign(&claims(300));
    let page: Value = app.client.get(&tail).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
    let messages: Vec<&str> =
        page["events"].as_array().unwrap().iter().filter_map(|e| e["event"]["message"].as_str()).collect();
    assert_eq!(messages, vec!["signed"], "{page}");
}

/// `ENGAGE_LOGS_TOKEN` really set in the environment of the CLI (issue 54): `engage logs tail` and
/// `engage logs usage` send it, and no command refuses it as an unknown setting.
#[tokio::test]
async fn the_logs_token_variable_is_sent_by_the_logs_commands_and_refused_by_none() {
    let key = Key::generate("k1");
    let jwks = Jwks::serve(&[&key]).await;
    let org = crate::helpers::unique_org();
    let app = app_with(&jwks, &[("ENGAGE_LOG_ORG", &org)]).await;
    let token = key.sign(&claims(600));
    let message = format!("token-variable-{}", uuid::Uuid::new_v4());
    let response = app
        .client
        .post(format!("{}/v1/logs", app.base))
        .bearer_auth(&token)
        .json(&crate::helpers::event(&message))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let group = format!("/logs/{org}/edge/checkout");
    let cwd = tempfile::tempdir().unwrap();
    let with_token = [("ENGAGE_LOGS_TOKEN", token.as_str())];
    let tail = crate::procs::cli_async(cwd.path(), &with_token, &["logs", "tail", &group, "--url", &app.base]).await;
    let (stdout, stderr) = (String::from_utf8_lossy(&tail.stdout), String::from_utf8_lossy(&tail.stderr));
    assert!(tail.status.success(), "tail with ENGAGE_LOGS_TOKEN: {stdout}\n{stderr}");
    assert!(stdout.contains(&message), "{stdout}\n{stderr}");
    let usage = crate::procs::cli_async(cwd.path(), &with_token, &["logs", "usage", "--url", &app.base]).await;
    assert!(usage.status.success(), "usage: {}", String::from_utf8_lossy(&usage.stderr));
    assert!(String::from_utf8_lossy(&usage.stdout).contains("sink: embedded"));
    let config = crate::procs::cli_async(cwd.path(), &with_token, &["config"]).await;
    let printed = String::from_utf8_lossy(&config.stdout);
    assert!(config.status.success(), "engage config: {}", String::from_utf8_lossy(&config.stderr));
    assert!(!printed.contains(&token), "the token is not a setting and is never printed");
    // without it the server refuses, and the command says why
    let refused = crate::procs::cli_async(cwd.path(), &[], &["logs", "tail", &group, "--url", &app.base]).await;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("401"), "{}", String::from_utf8_lossy(&refused.stderr));
}
