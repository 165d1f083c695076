//! A bill's other name: the link service's id of a bill (`bill_aliases`, per brand). Whose bill a
//! public link `/b/<bill_id>` is, before any brand is known, is read through
//! [`crate::directory::Directory`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::keys;
use crate::query::{question, QueryError};
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
