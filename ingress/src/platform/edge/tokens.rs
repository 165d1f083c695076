//! Stored tokens of the platform's auth families (staff, integration, ingestion).
//!
//! A token is `eng_<kind>_<64 hex>` (256 random bits), shown once at creation. Only its SHA-256
//! is stored: table `auth_tokens` (partition the kind, clustering the hash) holds
//! `{id, kind, parent, business, created_at}`; table `auth_token_ids` (partition `all`,
//! clustering the id) lists tokens for `engage tokens list|revoke`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use engage_storage::{Store, StoreError, WriteOp};

use super::grant_cache::GrantCache;

const TOKENS: &str = "auth_tokens";
const IDS: &str = "auth_token_ids";

/// The token families kept here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TokenKind {
    /// `token:` header on staff routes.
    Staff,
    /// Raw `Authorization:` header on integration routes; sets the parent business.
    Integration,
    /// `token:` header on the ingestion-token routes.
    Ingestion,
    /// `token:` header with `source: mobile`: a customer's app session (the token's `business`
    /// field holds the customer's number).
    App,
}

impl TokenKind {
    /// The kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Staff => "staff",
            TokenKind::Integration => "integration",
            TokenKind::Ingestion => "ingestion",
            TokenKind::App => "app",
        }
    }
}

/// What a token grants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TokenGrant {
    /// Token id (not secret).
    pub id: String,
    /// Its family.
    pub kind: TokenKind,
    /// The parent business (brand) it acts for.
    pub parent: String,
    /// The outlet it is limited to, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub business: Option<String>,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// Revocation time, when revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct IdRow {
    grant: TokenGrant,
    hash: String,
}

/// Token storage over the Store.
#[derive(Clone)]
pub struct TokenStore {
    store: Arc<dyn Store>,
    /// Verified grants, when the store can say when a token changes ([`TokenStore::cached`]).
    cache: Option<Arc<GrantCache<TokenGrant>>>,
}

/// SHA-256 of a token, hex.
pub fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

impl TokenStore {
    /// Over `store`, every check read from it.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store, cache: None }
    }

    /// Over `store`, keeping verified grants while a watch of the tokens runs (a server's:
    /// [`GrantCache`]).
    pub fn cached(store: Arc<dyn Store>) -> Self {
        let cache = GrantCache::watching(Arc::clone(&store), TOKENS);
        Self { store, cache: Some(cache) }
    }

    /// Creates a token; returns it (the only time it is visible) and its grant.
    pub async fn create(
        &self,
        kind: TokenKind,
        parent: &str,
        business: Option<&str>,
    ) -> Result<(String, TokenGrant), StoreError> {
        let secret = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
        let token = format!("eng_{}_{secret}", kind.as_str());
        let hash = hash(&token);
        let grant = TokenGrant {
            id: hash[..12].to_owned(),
            kind,
            parent: parent.to_owned(),
            business: business.map(str::to_owned),
            created_at: chrono::Utc::now().to_rfc3339(),
            revoked_at: None,
        };
        let row = serde_json::to_vec(&grant).map_err(|e| StoreError::Backend(e.to_string()))?;
        let id_row = serde_json::to_vec(&IdRow { grant: grant.clone(), hash: hash.clone() })
            .map_err(|e| StoreError::Backend(e.to_string()))?;
        self.store
            .batch(vec![
                WriteOp::Put {
                    table: TOKENS,
                    partition: kind.as_str().to_owned(),
                    clustering: hash.into_bytes(),
                    value: row,
                },
                WriteOp::Put {
                    table: IDS,
                    partition: "all".to_owned(),
                    clustering: grant.id.clone().into_bytes(),
                    value: id_row,
                },
            ])
            .await?;
        Ok((token, grant))
    }

    /// The grant of a presented token of `kind`, if it is valid.
    pub async fn verify(&self, kind: TokenKind, token: &str) -> Result<Option<TokenGrant>, StoreError> {
        if token.is_empty() || token.len() > 256 {
            return Ok(None);
        }
        let hash = hash(token);
        // kept by kind and hash: a token is checked for one kind
        let key = format!("{}:{hash}", kind.as_str());
        let epoch = match &self.cache {
            Some(cache) => match cache.get(&key) {
                Some(grant) => {
                    metrics::counter!("engage_token_checks_total", "answered" => "memory").increment(1);
                    return Ok(Some(grant));
                }
                None => Some(cache.epoch()),
            },
            None => None,
        };
        metrics::counter!("engage_token_checks_total", "answered" => "store").increment(1);
        let Some(bytes) = self.store.get(TOKENS, kind.as_str(), hash.as_bytes()).await? else { return Ok(None) };
        let grant: TokenGrant = serde_json::from_slice(&bytes).map_err(|e| StoreError::Backend(e.to_string()))?;
        if grant.revoked_at.is_some() || grant.kind != kind {
            return Ok(None);
        }
        if let (Some(cache), Some(epoch)) = (&self.cache, epoch) {
            cache.keep(key, &grant, epoch);
        }
        Ok(Some(grant))
    }

    /// Every token ever created (revoked ones marked).
    pub async fn list(&self) -> Result<Vec<TokenGrant>, StoreError> {
        let mut out = Vec::new();
        let mut after: Option<Vec<u8>> = None;
        loop {
            let rows = self.store.scan(IDS, "all", after.as_deref(), 500).await?;
            let Some(last) = rows.last() else { break };
            after = Some(last.clustering.clone());
            out.extend(rows.iter().filter_map(|r| serde_json::from_slice::<IdRow>(&r.value).ok()).map(|r| r.grant));
        }
        Ok(out)
    }

    /// Revokes token `id`; `false` when there is no such token.
    pub async fn revoke(&self, id: &str) -> Result<bool, StoreError> {
        let Some(bytes) = self.store.get(IDS, "all", id.as_bytes()).await? else { return Ok(false) };
        let mut row: IdRow = serde_json::from_slice(&bytes).map_err(|e| StoreError::Backend(e.to_string()))?;
        row.grant.revoked_at = Some(chrono::Utc::now().to_rfc3339());
        let value = serde_json::to_vec(&row).map_err(|e| StoreError::Backend(e.to_string()))?;
        self.store
            .batch(vec![
                WriteOp::Delete {
                    table: TOKENS,
                    partition: row.grant.kind.as_str().to_owned(),
                    clustering: row.hash.clone().into_bytes(),
                },
                WriteOp::Put { table: IDS, partition: "all".to_owned(), clustering: id.as_bytes().to_vec(), value },
            ])
            .await?;
        // refused here from this moment (other processes: when their watch reports the change)
        if let Some(cache) = &self.cache {
            cache.forget_all();
        }
        Ok(true)
    }
}
