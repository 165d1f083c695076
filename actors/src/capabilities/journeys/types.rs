//! The journey types a brand sees: the eight built-in ones, those added before types belonged to a
//! brand (read-only, for every brand), then those the brand added with `/crm_api/autoCampaign`.
//! Another brand's types are never among them. Adding a type checks and writes in one turn of the
//! brand's actor, so concurrent adds of one `campaign_type` keep one type and answer one success.

use crate::keys;
use crate::query::QueryError;
use crate::repo::JOURNEY_TYPES;
use crate::tenant_core::Tenant;

use super::{builtin_types, common_fields, journey_id, AddType, JourneyType, JourneyTypes};

/// Every type the brand sees.
pub(super) async fn all(tenant: &Tenant) -> Result<JourneyTypes, QueryError> {
    let mut data = builtin_types();
    let legacy: Vec<JourneyType> = tenant.repo().all(JOURNEY_TYPES, keys::LEGACY_JOURNEY_TYPES).await?;
    let own: Vec<JourneyType> = tenant.repo().all(JOURNEY_TYPES, &keys::journey_types_partition(&tenant.id)).await?;
    data.extend(legacy);
    data.extend(own);
    Ok(JourneyTypes { data })
}

/// Adds the brand's type `add.campaign_type` with the common form fields; a `campaign_type` the
/// brand sees already is [`QueryError::Duplicate`].
pub(super) async fn add(tenant: &mut Tenant, add: AddType) -> Result<JourneyType, QueryError> {
    if all(tenant).await?.data.iter().any(|t| t.campaign_type == add.campaign_type) {
        return Err(QueryError::Duplicate(format!("a journey type {} exists already", add.campaign_type)));
    }
    // the brand is part of the id: two brands adding the same campaign_type get two types
    let id = journey_id("type", &tenant.id, &add.campaign_type);
    let new = JourneyType {
        id: id.clone(),
        title: add.title,
        description: add.description,
        campaign_type: add.campaign_type,
        icon_url: add.icon_url,
        execution_type: add.execution_type,
        fields: common_fields(),
    };
    tenant.batch(vec![keys::journey_type(&tenant.id, &id).put(&new)]).await?;
    Ok(new)
}
