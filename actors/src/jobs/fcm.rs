//! Firebase Cloud Messaging HTTP v1 (`docs/providers/fcm.md`): a brand's push sender holds its
//! Firebase project id (`sender`) and a service-account key (`credential`, the JSON file Google
//! gives). Each send needs an OAuth2 access token: engage signs a JWT (RS256, the key's
//! `private_key`, `iss` its `client_email`, `aud` its `token_uri`, scope `firebase.messaging`),
//! trades it at `token_uri` for a token (`grant_type`
//! `urn:ietf:params:oauth:grant-type:jwt-bearer`), and keeps the token until a minute before it
//! expires, one per key, for every drain of the node.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;

use crate::domain::delivery::DeliveryError;
use crate::domain::sender::ServiceAccount;

/// The OAuth2 scope FCM sends need.
pub const SCOPE: &str = "https://www.googleapis.com/auth/firebase.messaging";

#[derive(serde::Serialize)]
struct Claims<'a> {
    iss: &'a str,
    scope: &'a str,
    aud: &'a str,
    iat: i64,
    exp: i64,
}

#[derive(Deserialize)]
struct Minted {
    access_token: String,
    #[serde(default)]
    expires_in: Option<i64>,
}

/// A service account's token and until when it serves; one lock per account, so that the sends
/// of a drain that find no token wait for one mint instead of each minting their own.
type Slot = Arc<tokio::sync::Mutex<Option<(String, DateTime<Utc>)>>>;

/// Access tokens by service account (`client_email`), each until a minute before it expires.
#[derive(Default)]
pub struct Tokens {
    kept: Mutex<HashMap<String, Slot>>,
}

impl Tokens {
    fn slot(&self, key: &ServiceAccount) -> Slot {
        match self.kept.lock() {
            Ok(mut kept) => kept.entry(key.client_email.clone()).or_default().clone(),
            Err(_) => Slot::default(),
        }
    }

    /// A token for `key`: the kept one, or a new one minted at its `token_uri`.
    pub async fn token(&self, client: &reqwest::Client, key: &ServiceAccount) -> Result<String, DeliveryError> {
        let slot = self.slot(key);
        let mut kept = slot.lock().await;
        let now = Utc::now();
        if let Some((token, until)) = kept.as_ref() {
            if *until > now {
                return Ok(token.clone());
            }
        }
        let (token, until) = mint(client, key, now).await?;
        *kept = Some((token.clone(), until));
        Ok(token)
    }

    /// Drops `key`'s token (FCM answered 401: it was revoked or has expired early).
    pub async fn forget(&self, key: &ServiceAccount) {
        *self.slot(key).lock().await = None;
    }
}

/// Mints a token for `key`: the signed JWT traded at its `token_uri`.
async fn mint(
    client: &reqwest::Client,
    key: &ServiceAccount,
    now: DateTime<Utc>,
) -> Result<(String, DateTime<Utc>), DeliveryError> {
    const WHAT: &str = "fcm token endpoint";
    let claims = Claims {
        iss: &key.client_email,
        scope: SCOPE,
        aud: &key.token_uri,
        iat: now.timestamp(),
        exp: (now + Duration::hours(1)).timestamp(),
    };
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = key.private_key_id.clone();
    let signing = jsonwebtoken::EncodingKey::from_rsa_pem(key.private_key.as_bytes())
        .map_err(|e| DeliveryError::Rejected { what: WHAT, reason: format!("the service-account key: {e}") })?;
    let assertion = jsonwebtoken::encode(&header, &claims, &signing)
        .map_err(|e| DeliveryError::Rejected { what: WHAT, reason: format!("signing: {e}") })?;
    let form = [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion.as_str())];
    let response = client
        .post(&key.token_uri)
        .form(&form)
        .send()
        .await
        .map_err(|e| DeliveryError::Unreachable { what: WHAT, error: e.to_string() })?;
    let status = response.status();
    if !status.is_success() {
        let said: String = response.text().await.unwrap_or_default().chars().take(300).collect();
        // a key refused (revoked, deleted) leaves the brand's pushes waiting, retried within
        // the retry window, while the brand sets a new one
        tracing::warn!(%status, said, client_email = key.client_email, "the FCM token endpoint refused the brand's key");
        return Err(DeliveryError::Refused { what: WHAT, status: status.to_string() });
    }
    let minted: Minted =
        response.json().await.map_err(|e| DeliveryError::BadAnswer { what: WHAT, error: e.to_string() })?;
    let lifetime = minted.expires_in.unwrap_or(3600).max(120);
    Ok((minted.access_token, now + Duration::seconds(lifetime - 60)))
}
