//! RS256 bearer JWT verification against a JWKS.
//!
//! - Only `RS256` is accepted; `none`, HS256 (even "signed" with the public key) and every other
//!   algorithm are refused before any key is looked at.
//! - Keys come only from the configured JWKS; `jku`, `x5u` and an embedded `jwk` in a token header
//!   are ignored.
//! - `exp` is required (60 s leeway); `iss` and `aud` are checked when configured.
//! - The JWKS is cached. A token with an unknown `kid` triggers one refetch: concurrent misses share
//!   it (a mutex, re-checked after waiting), and fetches caused by misses are at least
//!   `min_refetch` apart. The cache is also refreshed once older than `refresh_after`. When a fetch
//!   fails, the last good keys stay in use.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;

/// Claims read from a verified token.
#[derive(Debug, Clone, Deserialize)]
pub struct Claims {
    /// Subject: who the token was issued to.
    pub sub: Option<String>,
}

/// Why a token was refused (logged and sent as the 401 message; never contains the token).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AuthError {
    /// No `Authorization: Bearer` header.
    #[error("missing bearer token")]
    Missing,
    /// Not a JWT.
    #[error("malformed token")]
    Malformed,
    /// `alg` other than RS256.
    #[error("algorithm not allowed; only RS256 is accepted")]
    Algorithm,
    /// No key in the JWKS for the token's `kid`.
    #[error("unknown signing key")]
    UnknownKey,
    /// Signature, expiry, issuer or audience check failed.
    #[error("token rejected: {0}")]
    Invalid(String),
}

/// Verifies tokens; shared by every request.
pub struct JwksVerifier {
    url: String,
    client: reqwest::Client,
    validation: Validation,
    keys: RwLock<Arc<KeySet>>,
    /// Time of the last fetch; the mutex makes concurrent refetches one.
    last_fetch: tokio::sync::Mutex<Option<Instant>>,
    refresh_after: Duration,
    min_refetch: Duration,
}

#[derive(Default)]
struct KeySet {
    by_kid: HashMap<String, DecodingKey>,
    /// Keys without a `kid`.
    anonymous: Vec<DecodingKey>,
    fetched_at: Option<Instant>,
}

/// Settings of a [`JwksVerifier`].
pub struct JwksOptions {
    /// The JWKS URL.
    pub url: String,
    /// Required issuer.
    pub issuer: Option<String>,
    /// Required audience.
    pub audience: Option<String>,
    /// Refresh the cache when older than this.
    pub refresh_after: Duration,
    /// Least time between refetches caused by unknown key ids.
    pub min_refetch: Duration,
}

impl JwksVerifier {
    /// A verifier; keys are fetched on first use (or by [`JwksVerifier::refresh`]).
    pub fn new(options: JwksOptions) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| format!("cannot build the JWKS HTTP client: {e}"))?;
        let mut validation = Validation::new(Algorithm::RS256);
        validation.leeway = 60;
        validation.validate_exp = true;
        match &options.issuer {
            Some(issuer) => validation.set_issuer(&[issuer]),
            None => validation.iss = None,
        }
        match &options.audience {
            Some(audience) => validation.set_audience(&[audience]),
            None => validation.validate_aud = false,
        }
        Ok(Self {
            url: options.url,
            client,
            validation,
            keys: RwLock::new(Arc::new(KeySet::default())),
            last_fetch: tokio::sync::Mutex::new(None),
            refresh_after: options.refresh_after,
            min_refetch: options.min_refetch,
        })
    }

    /// Verifies `token` and returns its claims.
    pub async fn verify(&self, token: &str) -> Result<Claims, AuthError> {
        let header = decode_header(token).map_err(|_| AuthError::Malformed)?;
        if header.alg != Algorithm::RS256 {
            return Err(AuthError::Algorithm);
        }
        let kid = header.kid.as_deref();
        let key = match self.lookup(kid) {
            Some(key) if !self.is_stale() => key,
            _ => {
                self.refetch(kid).await;
                self.lookup(kid).ok_or(AuthError::UnknownKey)?
            }
        };
        decode::<Claims>(token, &key, &self.validation)
            .map(|data| data.claims)
            .map_err(|e| AuthError::Invalid(e.to_string()))
    }

    fn current(&self) -> Arc<KeySet> {
        self.keys.read().map(|k| k.clone()).unwrap_or_default()
    }

    fn lookup(&self, kid: Option<&str>) -> Option<DecodingKey> {
        let keys = self.current();
        match kid {
            Some(kid) => keys.by_kid.get(kid).cloned(),
            // A token without `kid` is accepted only when the JWKS holds exactly one key.
            None if keys.by_kid.len() + keys.anonymous.len() == 1 => {
                keys.anonymous.first().or_else(|| keys.by_kid.values().next()).cloned()
            }
            None => None,
        }
    }

    fn is_stale(&self) -> bool {
        self.current().fetched_at.is_none_or(|at| at.elapsed() > self.refresh_after)
    }

    /// Fetches the JWKS unless another caller just did (see module docs).
    async fn refetch(&self, wanted: Option<&str>) {
        let mut last = self.last_fetch.lock().await;
        if wanted.is_some() && self.lookup(wanted).is_some() && !self.is_stale() {
            return; // fetched by whoever held the lock before us
        }
        if last.is_some_and(|at| at.elapsed() < self.min_refetch) {
            return;
        }
        *last = Some(Instant::now());
        let _ = self.refresh().await;
    }

    /// Fetches the JWKS now; on failure keeps the last good keys and returns why it failed.
    pub async fn refresh(&self) -> Result<(), String> {
        match self.fetch().await {
            Ok(set) => {
                metrics::counter!("engage_jwks_fetches_total", "outcome" => "ok").increment(1);
                tracing::info!(keys = set.by_kid.len() + set.anonymous.len(), "JWKS fetched");
                if let Ok(mut keys) = self.keys.write() {
                    *keys = Arc::new(set);
                }
                Ok(())
            }
            Err(error) => {
                metrics::counter!("engage_jwks_fetches_total", "outcome" => "error").increment(1);
                let url = engage_config::redact_url(&self.url);
                tracing::warn!(%error, %url, "JWKS fetch failed; keeping the last good keys");
                Err(format!("cannot fetch the JWKS from {url}: {error}"))
            }
        }
    }

    async fn fetch(&self) -> Result<KeySet, String> {
        let response = self.client.get(&self.url).send().await.map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("HTTP {}", response.status()));
        }
        let document: Value = response.json().await.map_err(|e| e.to_string())?;
        let keys = document.get("keys").and_then(Value::as_array).ok_or("no \"keys\" array")?;
        let mut set = KeySet { fetched_at: Some(Instant::now()), ..KeySet::default() };
        for jwk in keys {
            let field = |name: &str| jwk.get(name).and_then(Value::as_str);
            let usable = field("kty") == Some("RSA")
                && field("alg").is_none_or(|alg| alg == "RS256")
                && field("use").is_none_or(|u| u == "sig");
            let (Some(n), Some(e)) = (field("n"), field("e")) else { continue };
            if !usable {
                continue;
            }
            let Ok(key) = DecodingKey::from_rsa_components(n, e) else { continue };
            match field("kid") {
                Some(kid) => {
                    set.by_kid.insert(kid.to_owned(), key);
                }
                None => set.anonymous.push(key),
            }
        }
        if set.by_kid.is_empty() && set.anonymous.is_empty() {
            return Err("the JWKS holds no usable RS256 key".to_owned());
        }
        Ok(set)
    }
}
