//! The reads the edge makes without asking a brand's actor, each of one table and typed; the
//! edge holds no store and no key builder, only this.
//!
//! - Whose bill a public link `/b/<bill_id>` is (`bill_codes`): no brand is known before it.
//! - Whose sender a provider's number is (`sender_directory`): a provider's webhook names the
//!   number that received a message; the brand's actor then checks the signature with its
//!   credential, which never leaves it.
//! - Whether a brand closed the spec's open routes (`access_settings`): the gate of every open
//!   request reads it (cached for seconds), and must not depend on the brand's owner node being
//!   reachable: an order on an open route is accepted onto the bus while its owner fails over, as
//!   on any other route. The setting is written only by the brand's actor
//!   ([`crate::capabilities::business::OpenRoutes`]).

use std::sync::Arc;

use serde_json::Value;

use engage_storage::{Store, StoreError};

use crate::capabilities::business::OpenRoutesSetting;
use crate::keys;
use crate::repo::Repo;

/// The edge's two reads without a brand's actor.
#[derive(Clone)]
pub struct Directory {
    repo: Repo,
}

impl Directory {
    /// The directory over `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { repo: Repo::new(store) }
    }

    /// The brand of bill `bill_id`, when it is one.
    pub async fn bill_owner(&self, bill_id: &str) -> Result<Option<String>, StoreError> {
        let owner: Option<Value> = self.repo.get(&keys::bill_code(bill_id)).await?;
        Ok(owner.and_then(|o| o["tenant"].as_str().map(str::to_owned)))
    }

    /// Whose sender `number` of `account` at `provider` is (a webhook names the number that
    /// received a message, never the brand): the brand, written by its actor when it set the
    /// sender ([`crate::capabilities::senders`]).
    pub async fn sender_owner(
        &self,
        provider: &str,
        account: &str,
        number: &str,
    ) -> Result<Option<String>, StoreError> {
        let owner: Option<Value> = self.repo.get(&keys::sender_directory(provider, account, number)).await?;
        Ok(owner.and_then(|o| o["tenant"].as_str().map(str::to_owned)))
    }

    /// Whose opt-out link `/u/<code>` is: the brand and the customer's phone.
    pub async fn consent_link_owner(&self, code: &str) -> Result<Option<(String, String)>, StoreError> {
        let owner: Option<Value> = self.repo.get(&keys::consent_link(code)).await?;
        Ok(owner.and_then(|o| Some((o["tenant"].as_str()?.to_owned(), o["phone"].as_str()?.to_owned()))))
    }

    /// Whether `tenant` closed the spec's open routes for itself.
    pub async fn open_routes_closed(&self, tenant: &str) -> Result<bool, StoreError> {
        let setting: Option<OpenRoutesSetting> = self.repo.get(&keys::open_routes_setting(tenant)).await?;
        Ok(setting.is_some_and(|s| s.closed))
    }
}
