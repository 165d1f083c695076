//! Automated journeys (spec "Automated journeys"): the journey types and each brand's journey
//! configurations (`campaign_journey` records), kept by the brand's tenant actor beside its
//! wallet and fraud counters.
//!
//! Types: the eight built-in types have fixed ids (24 lower-case hex characters, like the spec's
//! ObjectId strings) and live in code ([`builtin_types`]); `/crm_api/autoCampaign` adds more, each
//! the brand's own (table `journey_types`, partition `brand|<tenant>`; see `crate::keys::journey_type`).
//!
//! A configuration is keyed by (brand, outlet, type): saving the same triple again updates it,
//! keeping its id, its `campaign_enabled` and its creation time. A new configuration starts with
//! `campaign_enabled` 0 (the spec's state table: the enable operation turns it on) and
//! `config_enabled` 1.

mod answers;
mod query;
mod reaction;
mod rows;
mod types;

use answers::*;
pub use query::*;
pub use reaction::*;
pub use rows::*;

use chrono::Utc;

use crate::keys::{self, digest};
use crate::query::QueryError;
use crate::repo::{CAMPAIGN_TAGS, JOURNEY_RUNS, JOURNEY_SENDS};

mod bulk;
mod carts;
mod health;
mod occasions;
mod roi;
mod runs;

pub use crate::capabilities::business::BusinessConfig;
pub use bulk::{BulkCampaign, BulkRecipient, BulkSpec, BULK_CHUNK};
pub use carts::{abandoned, CartsHandled, OpenCart, CART_SOURCES, DEFAULT_TRIGGER_MINUTES};
pub use health::{FlagsSynced, Health, JourneyHealth};
pub use occasions::{backtracking, occasion};
pub use roi::{attribute, Attributed, RoiRow, RoiSummary, ATTRIBUTION_DAYS, ROI_LOOKBACK_DAYS};
pub use runs::{
    reach, reach_one, reach_one_with, run_page, JourneyRun, JourneySend, Outcome, Reach, RunPage, SentMessage,
    AUDIENCE_PAGE, BACKTRACK_LIMIT, NIGHTLY,
};

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _) let now = Utc::now();
    Save: Save { child_business_id, campaign_type_id, campaign_type, campaign_data } => {
        let id = journey_id(&tenant.id, &child_business_id, &campaign_type_id);
        let existing: Option<JourneyConfig> = tenant.repo().get(&keys::campaign_journey(&tenant.id, &id)).await?;
        let created = existing.is_none();
        let row = JourneyConfig {
            campaign_journey_id: id.clone(),
            parent_business_id: tenant.id.clone(),
            child_business_id,
            campaign_type_id,
            campaign_type,
            campaign_data: *campaign_data,
            campaign_enabled: existing.as_ref().map_or(0, |e| e.campaign_enabled),
            config_enabled: existing.as_ref().map_or(1, |e| e.config_enabled),
            activated_at: existing.as_ref().and_then(|e| e.activated_at),
            created_at: existing.as_ref().map_or(now, |e| e.created_at),
            updated_at: now,
        };
        let index = keys::journey_tenant(&tenant.id).put(&serde_json::json!({}));
        tenant.batch(vec![keys::campaign_journey(&tenant.id, &id).put(&row), index]).await?;
        tenant.cache.forget::<Vec<JourneyConfig>>();
        Ok(Saved { campaign_journey_id: id, created })
    },
    Enable: Enable { campaign_journey_id, enabled } => {
        let mut row = config(tenant, &campaign_journey_id).await?;
        if enabled && row.campaign_enabled == 0 {
            row.activated_at = Some(now);
        }
        row.campaign_enabled = u8::from(enabled);
        row.updated_at = now;
        tenant.batch(vec![keys::campaign_journey(&tenant.id, &campaign_journey_id).put(&row)]).await?;
        tenant.cache.forget::<Vec<JourneyConfig>>();
        Ok(row)
    },
    View: View { campaign_journey_id } => config(tenant, &campaign_journey_id).await,
    List: List { child_business_id } => {
        let mut data = journeys(tenant).await?;
        if let Some(child) = child_business_id {
            data.retain(|c| c.child_business_id == child);
        }
        Ok(Journeys { data })
    },
    Settings: Settings { set } => {
        if let Some(set) = set {
            tenant.batch(vec![keys::journey_settings(&tenant.id).put(&set)]).await?;
            tenant.cache.set::<JourneySettings>(set);
        }
        settings(tenant).await.map_err(QueryError::from)
    },
    GetRunPage: GetRunPage { now, after } => run_page(tenant, now, after).await,
    Attribute: Attribute { now, campaign_types } => {
        attribute(tenant, now, &campaign_types).await
    },
    GetRuns: GetRuns { campaign_journey_id } => {
        let mut data: Vec<JourneyRun> = tenant.repo().all(JOURNEY_RUNS, &tenant.id).await?;
        if let Some(id) = campaign_journey_id {
            data.retain(|run| run.campaign_journey_id == id);
        }
        data.sort_by(|a, b| b.run_day.cmp(&a.run_day).then(a.campaign_journey_id.cmp(&b.campaign_journey_id)));
        Ok(Runs { data })
    },
    GetAudience: GetAudience { campaign_journey_id, offset, limit } => {
        config(tenant, &campaign_journey_id).await?;
        let partition = keys::journey_sends_partition(&tenant.id, &campaign_journey_id);
        let (mut data, mut total) = (Vec::new(), 0usize);
        tenant
            .repo()
            .visit(JOURNEY_SENDS, &partition, |decision: JourneySend| {
                if total >= offset && data.len() < limit {
                    data.push(decision);
                }
                total += 1;
            })
            .await?;
        Ok(Audience { data, total })
    },
    Carts: Carts { now, carts } => abandoned(tenant, now, carts).await,
    CreateTag: CreateTag { tag_name, color } => {
        let tag_id = digest(&["campaign-tag", &tenant.id, &tag_name.trim().to_lowercase()]);
        let key = keys::campaign_tag(&tenant.id, &tag_id);
        if tenant.repo().get::<CampaignTag>(&key).await?.is_some() {
            return Err(QueryError::Duplicate(format!("a tag named {tag_name} exists already")));
        }
        let tag = CampaignTag { tag_id, tag_name: tag_name.trim().to_owned(), color, created_at: now };
        tenant.batch(vec![key.put(&tag)]).await?;
        Ok(tag)
    },
    GetTags: _ => {
        let mut data: Vec<CampaignTag> = tenant.repo().all(CAMPAIGN_TAGS, &tenant.id).await?;
        data.sort_by_key(|tag| tag.tag_name.to_lowercase());
        Ok(Tags { data })
    },
    GetReport: GetReport { auto_id, business_id } => report(tenant, &auto_id, business_id).await,
    BulkCreate: BulkCreate { spec, now } => bulk::create(tenant, spec, now).await,
    BulkQueue: BulkQueue { campaign_id, recipients, now } => {
        bulk::queue(tenant, campaign_id, recipients, now).await
    },
    Click: Click { campaign_journey_id, phone, occasion, now } => {
        click(tenant, &campaign_journey_id, &phone, &occasion, now).await
    },
    SyncFlags: SyncFlags { now } => health::sync_flags(tenant, now).await,
    GetHealth: GetHealth { from, to } => health::health(tenant, &from, &to).await,
    GetTypes: _ => types::all(tenant).await,
    AddType: add => types::add(tenant, add).await,
    GetFlags: _ => {
        Ok(Flags { data: tenant.repo().all(crate::repo::BUSINESS_CONFIGS, &tenant.id).await? })
    },
    Roi: Roi { campaign_journey_id } => {
        let journey = config(tenant, &campaign_journey_id).await?;
        let first = journey.campaign_data.channels.first().copied();
        roi::summary(tenant, &campaign_journey_id, first).await
    },
}

#[cfg(test)]
mod tests;
