//! Bulk campaigns (`/crm_api/create/bulk/campaign`): a one-off message to an uploaded list of
//! phone numbers, paid per message by one outlet's wallet (campaign prices, `auto_id`
//! `bulk-<campaign_id>`) and delivered through the channel queues of the day it was created
//! (IST), so the next drain sends it; quiet hours hold it like any campaign send.
//!
//! The route creates the campaign ([`create`]: the brand's next integer id) and then hands the
//! recipients to the tenant actor 1,000 at a time ([`queue`]); each message is idempotent per
//! (campaign, phone), so a retried chunk pays nothing twice. A wallet that runs short stops the
//! queueing: the rest are counted `unpaid` and not sent.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::fill;
use crate::capabilities::wallet::{put_wallet, queue_send, wallet, SendRequest};
use crate::domain::customer::Customer;
use crate::domain::time::ist_day;
use crate::domain::wallet::{Channel, Purpose, TemplateType};
use crate::keys;
use crate::query::QueryError;
use crate::repo::BULK_CAMPAIGNS;
use crate::tenant_core::Tenant;

/// Recipients handed to the tenant actor at once.
pub const BULK_CHUNK: usize = 1000;

/// A bulk campaign (table `bulk_campaigns`, partition tenant, clustering the id).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BulkCampaign {
    /// The brand's campaign number (1, 2, …).
    pub campaign_id: u64,
    /// Its name.
    pub campaign_name: String,
    /// The outlet whose wallet pays.
    pub business_id: String,
    /// `sms` or `chat`.
    pub channel: Channel,
    /// The provider's template id.
    pub template_id: String,
    /// The text (`x_cust_name`, `x_cust_mobile`, `x_cust_eid` are replaced), when given.
    #[serde(default)]
    pub message: Option<String>,
    /// Valid recipients handed over.
    pub recipients: u32,
    /// Messages paid for and queued.
    pub queued: u32,
    /// Recipients not queued because the wallet ran short.
    pub unpaid: u32,
    /// Recipients not queued because they unsubscribed from marketing on the channel.
    #[serde(default)]
    pub unsubscribed: u32,
    /// Recipients not queued because the brand's own sender would refuse the message (an SMS
    /// template without its DLT id): `refused_reason` says why.
    #[serde(default)]
    pub refused: u32,
    /// Why the brand's sender refuses the campaign's messages, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_reason: Option<String>,
    /// The queue day, `YYYYMMDD`.
    pub delivery_date: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

impl BulkCampaign {
    /// The `auto_id` of its wallet transactions and queue rows.
    pub fn auto_id(&self) -> String {
        format!("bulk-{}", self.campaign_id)
    }
}

/// A recipient of a bulk campaign.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BulkRecipient {
    /// Ten digits.
    pub phone: String,
    /// The name from the file, when it has a `Name` column.
    #[serde(default)]
    pub name: Option<String>,
}

/// What a new campaign is.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BulkSpec {
    /// Its name.
    pub campaign_name: String,
    /// The outlet whose wallet pays.
    pub business_id: String,
    /// `sms` or `chat`.
    pub channel: Channel,
    /// The provider's template id.
    pub template_id: String,
    /// The text, when given.
    pub message: Option<String>,
}

/// Creates the brand's next campaign.
pub async fn create(tenant: &mut Tenant, spec: BulkSpec, now: DateTime<Utc>) -> Result<BulkCampaign, QueryError> {
    let last = tenant.repo().store().scan(BULK_CAMPAIGNS, &tenant.id, None, usize::MAX).await?.len() as u64;
    let campaign = BulkCampaign {
        campaign_id: last + 1,
        campaign_name: spec.campaign_name,
        business_id: spec.business_id,
        channel: spec.channel,
        template_id: spec.template_id,
        message: spec.message,
        recipients: 0,
        queued: 0,
        unpaid: 0,
        unsubscribed: 0,
        refused: 0,
        refused_reason: None,
        delivery_date: ist_day(now).replace('-', ""),
        created_at: now,
    };
    tenant.batch(vec![keys::bulk_campaign(&tenant.id, campaign.campaign_id).put(&campaign)]).await?;
    Ok(campaign)
}

/// Pays for and queues one message per recipient of campaign `campaign_id`, in one batch with the
/// campaign's counters and the wallet: the campaign after it.
pub async fn queue(
    tenant: &mut Tenant,
    campaign_id: u64,
    recipients: Vec<BulkRecipient>,
    now: DateTime<Utc>,
) -> Result<BulkCampaign, QueryError> {
    let key = keys::bulk_campaign(&tenant.id, campaign_id);
    let mut campaign: BulkCampaign = tenant.repo().get(&key).await?.ok_or(QueryError::NotFound)?;
    let mut purse = wallet(tenant, &campaign.business_id).await?;
    let before = purse.clone();
    let mut ops = Vec::new();
    for recipient in recipients {
        if campaign.unpaid > 0 {
            campaign.recipients += 1;
            campaign.unpaid += 1;
            continue;
        }
        let known = tenant.customer(&recipient.phone).await?;
        let customer = Customer {
            name: recipient.name.clone().or_else(|| known.as_ref().and_then(|c| c.name.clone())),
            email: known.as_ref().and_then(|c| c.email.clone()),
            phone: recipient.phone.clone(),
            ..Customer::default()
        };
        let send = SendRequest {
            business: campaign.business_id.clone(),
            channel: campaign.channel,
            template_type: TemplateType::Marketing,
            purpose: Purpose::Campaign,
            to: recipient.phone.clone(),
            message: campaign.message.as_deref().map(|m| fill(m, &customer)).unwrap_or_default(),
            send_id: format!("{}-{}", campaign.auto_id(), recipient.phone),
            delivery_date: campaign.delivery_date.clone(),
            auto_id: Some(campaign.auto_id()),
            template_id: Some(campaign.template_id.clone()),
            button: None,
            sender_id: None,
            not_before: None,
        };
        // a recipient already paid for (a retried chunk) is neither counted nor paid again
        match queue_send(tenant, &mut purse, &send, now, &mut ops).await {
            Ok(queued) if queued.replayed => continue,
            Ok(_) => campaign.queued += 1,
            Err(QueryError::Insufficient(_)) => campaign.unpaid += 1,
            Err(QueryError::NoConsent(_)) => {
                campaign.unsubscribed += 1;
                continue;
            }
            Err(QueryError::Unsendable(why)) => {
                campaign.refused += 1;
                campaign.refused_reason = Some(why);
            }
            Err(error) => return Err(error),
        }
        campaign.recipients += 1;
    }
    ops.push(key.put(&campaign));
    if purse != before {
        ops.push(put_wallet(tenant, &campaign.business_id, &purse));
    }
    tenant.batch(ops).await?;
    Ok(campaign)
}
