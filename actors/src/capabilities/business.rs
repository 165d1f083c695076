//! Business configuration records (`business_configs`, one per outlet and `0` for the brand's
//! own): the flags other capabilities keep there (`auto_campaign` from the journeys' daily sync,
//! `digital_bill` from the bill status route) and what `/crm_api/add_b_config` sets. Every writer
//! merges into the record, so none loses another's fields.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use engage_storage::{StoreError, WriteOp};

use crate::keys;
use crate::query::{question, QueryError};
use crate::tenant_core::Tenant;

/// A business's configuration record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BusinessConfig {
    /// The outlet, or `0` for the brand.
    #[serde(default)]
    pub business_id: String,
    /// 1 when a journey of the brand (for `0`) or of the outlet or the whole brand (for an
    /// outlet) has `campaign_enabled` 1 and `config_enabled` 1 (the journeys' daily sync).
    #[serde(default)]
    pub auto_campaign: u8,
    /// When the daily sync last set `auto_campaign`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synced_at: Option<DateTime<Utc>>,
    /// Digital bills on (1) or off (0), as `/crm_api/update/bill/status` set them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digital_bill: Option<u8>,
    /// When `/crm_api/add_b_config` last changed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<DateTime<Utc>>,
    /// The other fields `/crm_api/add_b_config` set (kept as sent, `null` included; their
    /// shape: [`ConfigFields`]).
    #[serde(flatten)]
    #[schemars(with = "ConfigFields")]
    pub fields: Map<String, Value>,
}

/// The fields `/crm_api/add_b_config` sets, as answers declare them: each present only once set,
/// `null` when it was set to null.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConfigFields {
    /// The business's name (shown on bills and pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub business_name: Option<Option<String>>,
    /// Its city.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<Option<String>>,
    /// The 6-letter SMS header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sms_sender_id: Option<Option<String>>,
    /// The business's chat (WhatsApp) number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_number: Option<Option<String>>,
    /// Feedback on (1) or off (0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<Option<u8>>,
    /// Loyalty on (1) or off (0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loyalty: Option<Option<u8>>,
    /// Chat on (1) or off (0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat: Option<Option<u8>>,
}

impl BusinessConfig {
    /// Its `business_name` (trimmed), when one is set.
    pub fn name(&self) -> Option<&str> {
        self.fields.get("business_name").and_then(Value::as_str).map(str::trim).filter(|n| !n.is_empty())
    }
}

/// A business's record, or an empty one.
pub async fn config(tenant: &Tenant, business_id: &str) -> Result<BusinessConfig, StoreError> {
    let stored: Option<BusinessConfig> = tenant.repo().get(&keys::business_config(&tenant.id, business_id)).await?;
    Ok(BusinessConfig { business_id: business_id.to_owned(), ..stored.unwrap_or_default() })
}

/// Every outlet of the brand that has a name (`business_name`), by outlet id.
pub async fn outlet_names(repo: &crate::repo::Repo, tenant: &str) -> Result<BTreeMap<String, String>, StoreError> {
    let configs: Vec<BusinessConfig> = repo.all(crate::tables::BUSINESS_CONFIGS, tenant).await?;
    Ok(configs
        .iter()
        .filter(|config| config.business_id != "0" && !config.business_id.is_empty())
        .filter_map(|config| config.name().map(|name| (config.business_id.clone(), name.to_owned())))
        .collect())
}

/// The write of a record.
pub fn put(tenant: &Tenant, config: &BusinessConfig) -> WriteOp {
    keys::business_config(&tenant.id, &config.business_id).put(config)
}

/// Questions about business configuration records.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum BusinessQuery {
    /// See [`SaveConfig`].
    SaveConfig(SaveConfig),
    /// See [`GetConfig`].
    GetConfig(GetConfig),
    /// See [`OpenRoutes`].
    OpenRoutes(OpenRoutes),
    /// See [`OutletNames`].
    OutletNames(OutletNames),
}

question! {
    /// The brand's outlets that have a name (`business_name`), by outlet id: [`NamedOutlets`].
    pub struct OutletNames {} -> NamedOutlets;
}

/// Outlet id → its configured name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NamedOutlets {
    /// By outlet id.
    pub names: BTreeMap<String, String>,
}

question! {
    /// The record of `business_id` (`0`: the brand's), empty when none is kept: [`BusinessConfig`].
    pub struct GetConfig {
        /// The outlet, or `0`.
        pub business_id: String,
    } -> BusinessConfig;
}

question! {
    /// Whether the brand closed the spec's open routes for itself, after setting it to `closed`
    /// when given: [`OpenRoutesSetting`].
    pub struct OpenRoutes {
        /// The new setting.
        pub closed: Option<bool>,
        /// The clock.
        pub now: DateTime<Utc>,
    } -> OpenRoutesSetting;
}

/// The brand's setting of the open routes (table `access_settings`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OpenRoutesSetting {
    /// Whether the brand closed the open routes.
    pub closed: bool,
    /// When it was last changed (RFC 3339; empty when never).
    #[serde(default)]
    pub updated_at: String,
}

question! {
    /// Merges `fields` into the record of `business_id`: [`BusinessConfig`].
    pub struct SaveConfig {
        /// The outlet, or `0`.
        pub business_id: String,
        /// The fields to set (`null` removes one).
        pub fields: Map<String, Value>,
        /// The clock.
        pub now: DateTime<Utc>,
    } -> BusinessConfig;
}

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _)
    SaveConfig: SaveConfig { business_id, fields, now } => {
        save(tenant, business_id, fields, now).await
    },
    GetConfig: GetConfig { business_id } => Ok(config(tenant, &business_id).await?),
    OutletNames: OutletNames {} => Ok(NamedOutlets { names: outlet_names(tenant.repo(), &tenant.id).await? }),
    OpenRoutes: OpenRoutes { closed, now } => {
        let key = keys::open_routes_setting(&tenant.id);
        let setting = match closed {
            Some(closed) => {
                let setting = OpenRoutesSetting { closed, updated_at: now.to_rfc3339() };
                tenant.batch(vec![key.put(&setting)]).await?;
                setting
            }
            None => tenant.repo().get(&key).await?.unwrap_or_default(),
        };
        Ok(setting)
    },
}

async fn save(
    tenant: &mut Tenant,
    business_id: String,
    fields: Map<String, Value>,
    now: DateTime<Utc>,
) -> Result<BusinessConfig, QueryError> {
    let current = config(tenant, &business_id).await?;
    let mut merged = match serde_json::to_value(&current) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    for (name, value) in fields {
        if value.is_null() {
            merged.remove(&name);
        } else {
            merged.insert(name, value);
        }
    }
    let mut saved: BusinessConfig = serde_json::from_value(Value::Object(merged))
        .map_err(|e| QueryError::Invalid(format!("/: not a business configuration: {e}")))?;
    saved.business_id = business_id;
    saved.updated_at = Some(now);
    tenant.batch(vec![put(tenant, &saved)]).await?;
    Ok(saved)
}
