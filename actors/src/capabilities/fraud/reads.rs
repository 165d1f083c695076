//! The staff's reads of a brand's fraud rows, answered by its actor: pages of the blocklist and of
//! the flags (newest first), the flags grouped by contact, and the flags counted by type and state.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::domain::fraud::FraudFlag;
use crate::query::{question, QueryError};
use crate::repo::{BLOCKLIST, FRAUD_FLAGS};
use crate::tenant_core::Tenant;

use super::BlocklistEntry;

/// Which page: `page` from 1, `page_size` rows (1 to 100).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct PageOf {
    /// From 1.
    pub page: usize,
    /// Rows per page.
    pub page_size: usize,
}

impl PageOf {
    fn cut<T>(self, rows: Vec<T>) -> Page<T> {
        let page = self.page.max(1);
        let page_size = self.page_size.clamp(1, 100);
        let total = rows.len();
        let data = rows.into_iter().skip((page - 1) * page_size).take(page_size).collect();
        Page { data, total, page, page_size }
    }
}

/// A page of rows.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Page<T> {
    /// The rows.
    pub data: Vec<T>,
    /// Rows in all.
    pub total: usize,
    /// This page, from 1.
    pub page: usize,
    /// Rows per page.
    pub page_size: usize,
}

question! {
    /// A page of the brand's blocklist, by number.
    pub struct BlocklistPage {
        /// Which page.
        pub page: PageOf,
    } -> Page<BlocklistEntry>;
}

question! {
    /// A page of the brand's fraud flags, newest first, of one `status` (1 pending, 2 resolved)
    /// or all.
    pub struct FlagPage {
        /// Only this status.
        pub status: Option<u8>,
        /// Which page.
        pub page: PageOf,
    } -> Page<FraudFlag>;
}

question! {
    /// The brand's fraud flags grouped by contact: [`FlagGroups`].
    pub struct GroupFlags {} -> FlagGroups;
}

question! {
    /// The brand's fraud flags created on the days `start..=end` (`YYYY-MM-DD`), counted by type
    /// and state: [`FlagCounts`].
    pub struct CountFlags {
        /// First day.
        pub start: String,
        /// Last day.
        pub end: String,
    } -> FlagCounts;
}

/// One contact's flags.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FlagGroup {
    /// The customer's phone.
    pub contact: String,
    /// The name on its first flag.
    pub name: Option<String>,
    /// How many flags.
    pub flags: usize,
    /// Their fraud types.
    pub fraud_types: BTreeSet<String>,
    /// When the latest was raised.
    pub latest: chrono::DateTime<chrono::Utc>,
}

/// The flags grouped by contact.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FlagGroups {
    /// By contact.
    pub data: Vec<FlagGroup>,
}

/// Flags of one type, by state.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StateCounts {
    /// Status 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<u64>,
    /// Status 2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<u64>,
}

/// The flags counted.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FlagCounts {
    /// Flags in the period.
    pub total: u64,
    /// By fraud type.
    pub by_type: BTreeMap<String, StateCounts>,
}

async fn flags(tenant: &Tenant) -> Result<Vec<FraudFlag>, QueryError> {
    Ok(tenant.repo().all(FRAUD_FLAGS, &tenant.id).await?)
}

pub(super) async fn blocklist_page(tenant: &Tenant, page: PageOf) -> Result<Page<BlocklistEntry>, QueryError> {
    let rows: Vec<BlocklistEntry> = tenant.repo().all(BLOCKLIST, &tenant.id).await?;
    Ok(page.cut(rows))
}

pub(super) async fn flag_page(
    tenant: &Tenant,
    status: Option<u8>,
    page: PageOf,
) -> Result<Page<FraudFlag>, QueryError> {
    let mut rows = flags(tenant).await?;
    rows.retain(|flag| status.is_none_or(|status| flag.status == status));
    rows.reverse(); // newest first
    Ok(page.cut(rows))
}

pub(super) async fn groups(tenant: &Tenant) -> Result<FlagGroups, QueryError> {
    let mut groups: BTreeMap<String, FlagGroup> = BTreeMap::new();
    for flag in flags(tenant).await? {
        let group = groups.entry(flag.contact.clone()).or_insert_with(|| FlagGroup {
            contact: flag.contact.clone(),
            name: flag.name.clone(),
            flags: 0,
            fraud_types: BTreeSet::new(),
            latest: flag.created_at,
        });
        group.flags += 1;
        group.fraud_types.insert(flag.fraud_type.clone());
        group.latest = group.latest.max(flag.created_at);
    }
    Ok(FlagGroups { data: groups.into_values().collect() })
}

pub(super) async fn counts(tenant: &Tenant, start: &str, end: &str) -> Result<FlagCounts, QueryError> {
    let mut by_type: BTreeMap<String, StateCounts> = BTreeMap::new();
    let mut total = 0;
    for flag in flags(tenant).await? {
        let day = flag.created_at.format("%Y-%m-%d").to_string();
        if day.as_str() < start || day.as_str() > end {
            continue;
        }
        total += 1;
        let counts = by_type.entry(flag.fraud_type.clone()).or_default();
        let slot = if flag.status == 1 { &mut counts.pending } else { &mut counts.resolved };
        *slot.get_or_insert(0) += 1;
    }
    Ok(FlagCounts { total, by_type })
}
