//! A bill's other names: the link service's id of a bill (`bill_aliases`, per brand), and the
//! directory of bill codes (`bill_codes`), which says whose bill a public link `/b/<bill_id>` is
//! before any brand is known. The directory is the one read the edge does without a brand: it
//! reads that one table through [`BillDirectory`], never the store itself.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::{Store, StoreError};

use crate::keys;
use crate::query::{question, QueryError};
use crate::repo::Repo;
use crate::tenant_core::Tenant;

question! {
    /// A bill id as sent (engage's own, or the link service's alias of one) as engage's own:
    /// [`BillRef`].
    pub struct ResolveBill {
        /// The id sent.
        pub sent: String,
    } -> BillRef;
}

/// A bill's own id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BillRef {
    /// engage's id of the bill.
    pub bill_id: String,
}

pub(super) async fn resolve(tenant: &Tenant, sent: String) -> Result<BillRef, QueryError> {
    let alias: Option<Value> = tenant.repo().get(&keys::bill_alias(&tenant.id, &sent)).await?;
    let bill_id = alias.and_then(|a| a["bill_id"].as_str().map(str::to_owned)).unwrap_or(sent);
    Ok(BillRef { bill_id })
}

/// Whose bill a public bill link is.
#[derive(Clone)]
pub struct BillDirectory {
    repo: Repo,
}

impl BillDirectory {
    /// The directory over `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { repo: Repo::new(store) }
    }

    /// The brand of bill `bill_id`, when it is one.
    pub async fn owner(&self, bill_id: &str) -> Result<Option<String>, StoreError> {
        let owner: Option<Value> = self.repo.get(&keys::bill_code(bill_id)).await?;
        Ok(owner.and_then(|o| o["tenant"].as_str().map(str::to_owned)))
    }
}
