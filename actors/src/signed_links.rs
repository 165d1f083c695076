//! Chat tracking links (spec: "Chat buttons carry JWT-signed tracking URLs"). The chat drain turns
//! a queued send's button into `{public_url}/track/chat/link/<token>`, where the token is an HS256
//! JWT naming the brand, the journey (the send's `auto_id`), the customer, the journey occasion
//! and the target; `GET /track/chat/link/:token` verifies it, counts the click against that
//! journey send and redirects to the target. A link is valid for [`LINK_VALIDITY_DAYS`] after
//! its message was delivered.

use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use engage_storage::StoreError;

use crate::keys;
use crate::repo::Repo;

/// Days a tracking link stays valid after delivery.
pub const LINK_VALIDITY_DAYS: i64 = 30;

/// What a tracking token says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LinkClaims {
    /// The brand.
    pub tenant: String,
    /// The journey (`auto_id` of the send).
    pub journey: String,
    /// The customer.
    pub phone: String,
    /// The journey occasion of the send.
    pub occasion: String,
    /// Where the click lands.
    pub target: String,
    /// Expiry (seconds since the epoch).
    pub exp: i64,
}

/// A link could not be signed (the key cannot sign these claims).
#[derive(Debug, thiserror::Error)]
#[error("cannot sign a link: {0}")]
pub struct SignError(#[from] jsonwebtoken::errors::Error);

/// Why a token is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkRefusal {
    /// Well signed, but past its expiry.
    Expired,
    /// Not a token this service signed.
    Invalid,
}

/// What a feedback-form link of a bill says (`{public_url}/f/<token>`; the feedback capability
/// serves the form).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FormClaims {
    /// `feedback_form`.
    pub scope: String,
    /// The brand.
    pub tenant: String,
    /// The outlet.
    pub business_id: String,
    /// The customer.
    pub phone: String,
    /// The order.
    pub order_id: String,
    /// The bill it came with.
    pub bill_id: String,
    /// Expiry (seconds since the epoch).
    pub exp: i64,
}

/// What a bill page's own token says: it lets the page report its widgets' clicks and watch time
/// for that one bill (`Authorization: Bearer` on `/crm_api/update/widget/insight`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BillPageClaims {
    /// `bill_page`.
    pub scope: String,
    /// The brand.
    pub tenant: String,
    /// The bill.
    pub bill_id: String,
    /// Expiry (seconds since the epoch).
    pub exp: i64,
}

/// What a chat token says: a delivery rider's for one order (`rider_chat`, from
/// `/crm_api/rider/chat/login`) or a chat partner's for a brand (`chat_partner`, from
/// `/crm_api/v2/{chat_partner}/generatePartnerToken`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChatClaims {
    /// `rider_chat` or `chat_partner`.
    pub scope: String,
    /// The brand.
    pub tenant: String,
    /// The outlet (the brand's own for a partner token without one).
    pub business_id: Option<String>,
    /// The rider's phone, or the partner's name.
    pub subject: String,
    /// The order (riders).
    pub order_id: Option<String>,
    /// Expiry (seconds since the epoch).
    pub exp: i64,
}

/// Signs and verifies tracking links.
#[derive(Clone)]
pub struct Links {
    encoding: EncodingKey,
    decoding: DecodingKey,
    base_url: String,
    salt: String,
}

impl std::fmt::Debug for Links {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Links").field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

impl Links {
    /// Links under `base_url` (no trailing `/`), signed with `secret`.
    pub fn new(secret: &[u8], base_url: &str) -> Self {
        let text = String::from_utf8_lossy(secret);
        Self {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            base_url: base_url.trim_end_matches('/').to_owned(),
            salt: keys::digest(&["bill ids", &text]),
        }
    }

    /// A value derived from the secret: it keeps ids made from public facts (a bill's outlet and
    /// order) from being guessed.
    pub fn salt(&self) -> &str {
        &self.salt
    }

    /// The public base URL (no trailing `/`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The URL of engage's own page of bill `bill_id`.
    pub fn page_url(&self, bill_id: &str) -> String {
        format!("{}/b/{bill_id}", self.base_url)
    }

    /// The feedback-form link of a bill.
    pub fn form_url(&self, claims: &FormClaims) -> Result<String, SignError> {
        Ok(format!("{}/f/{}", self.base_url, self.sign(claims)?))
    }

    /// Signs `claims` (which must carry `exp`).
    pub fn sign<T: Serialize>(&self, claims: &T) -> Result<String, SignError> {
        Ok(encode(&Header::new(Algorithm::HS256), claims, &self.encoding)?)
    }

    /// What `token` says, if this service signed it, it has not expired and it decodes as `T`.
    pub fn verify_as<T: serde::de::DeserializeOwned>(&self, token: &str) -> Result<T, LinkRefusal> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 0;
        validation.validate_aud = false;
        decode::<T>(token, &self.decoding, &validation).map(|data| data.claims).map_err(|error| match error.kind() {
            ErrorKind::ExpiredSignature => LinkRefusal::Expired,
            _ => LinkRefusal::Invalid,
        })
    }

    /// The tracking URL of a button sent at `sent_at`.
    pub fn url(
        &self,
        tenant: &str,
        journey: &str,
        phone: &str,
        occasion: &str,
        target: &str,
        sent_at: DateTime<Utc>,
    ) -> Result<String, SignError> {
        let claims = LinkClaims {
            tenant: tenant.to_owned(),
            journey: journey.to_owned(),
            phone: phone.to_owned(),
            occasion: occasion.to_owned(),
            target: target.to_owned(),
            exp: (sent_at + Duration::days(LINK_VALIDITY_DAYS)).timestamp(),
        };
        Ok(format!("{}/track/chat/link/{}", self.base_url, self.sign(&claims)?))
    }

    /// What a tracking `token` says, if this service signed it and it has not expired.
    pub fn verify(&self, token: &str) -> Result<LinkClaims, LinkRefusal> {
        self.verify_as(token)
    }
}

/// The link-signing secret: `configured` when set, else the one kept in the store (made, at
/// random, by the first process that needed it).
pub async fn secret(
    store: std::sync::Arc<dyn engage_storage::Store>,
    configured: Option<&str>,
) -> Result<Vec<u8>, StoreError> {
    let repo = &Repo::new(store);
    if let Some(secret) = configured.filter(|s| !s.is_empty()) {
        return Ok(secret.as_bytes().to_vec());
    }
    let key = keys::service_secret("link_secret");
    if let Some(stored) = repo.get::<String>(&key).await? {
        return Ok(stored.into_bytes());
    }
    let made = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    repo.store().batch(vec![key.clone().put(&made)]).await?;
    // two processes starting at once may both have written: the stored one wins for both
    Ok(repo.get::<String>(&key).await?.unwrap_or(made).into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_verifies_with_its_secret_only_and_not_after_expiry() {
        let links = Links::new(b"secret-one", "http://example.test/");
        let url = links.url("b", "j", "9876543210", "2026-11-23", "https://shop.test/x", Utc::now()).unwrap();
        let token = url.strip_prefix("http://example.test/track/chat/link/").unwrap();
        let claims = links.verify(token).unwrap();
        assert_eq!((claims.tenant.as_str(), claims.target.as_str()), ("b", "https://shop.test/x"));
        assert_eq!(Links::new(b"secret-two", "x").verify(token), Err(LinkRefusal::Invalid));
        assert_eq!(links.verify("not.a.token"), Err(LinkRefusal::Invalid));
        let old = links.url("b", "j", "1", "o", "https://t", Utc::now() - Duration::days(31)).unwrap();
        let old = old.rsplit('/').next().unwrap();
        assert_eq!(links.verify(old), Err(LinkRefusal::Expired));
    }
}
