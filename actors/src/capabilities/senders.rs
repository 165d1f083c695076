//! A brand's own senders (`docs/senders.md`): per channel, the provider its messages go through,
//! with the brand's credential and sender. The drains read them ([`sender_of`]); a brand without
//! one on a channel keeps the node-wide provider.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::sender::{Credential, ProviderKind, Sender, Senders};
use crate::domain::wallet::Channel;
use crate::keys;
use crate::query::{question, QueryError};
use crate::repo::Repo;
use crate::tenant_core::Tenant;

pub use super::webhooks::{TwilioInbound, WhatsappInbound};

/// A question of the senders capability.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum SendersQuery {
    /// See [`GetSenders`].
    GetSenders(GetSenders),
    /// See [`SetSender`].
    SetSender(SetSender),
    /// See [`TwilioInbound`] (answered by [`super::webhooks`]).
    TwilioInbound(TwilioInbound),
    /// See [`WhatsappInbound`] (answered by [`super::webhooks`]).
    WhatsappInbound(WhatsappInbound),
}

question! {
    /// The brand's senders: [`Senders`].
    pub struct GetSenders {} -> Senders;
}

question! {
    /// Sets the brand's sender on `channel` (`provider` `None`: removes it, back to the node-wide
    /// provider). A part not given keeps its value, the credential included: it is written, never
    /// read back. Answers the brand's senders.
    pub struct SetSender {
        /// The channel.
        pub channel: Channel,
        /// The provider (`None`: the node-wide one).
        pub provider: Option<ProviderKind>,
        /// The API base URL.
        pub base_url: Option<String>,
        /// Who messages come from.
        pub sender: Option<String>,
        /// The Twilio account SID.
        pub account: Option<String>,
        /// The credential (never answered).
        pub credential: Option<Credential>,
        /// The DLT entity id.
        pub dlt_entity_id: Option<String>,
        /// DLT template ids to add or change (`""` removes one), by engage's template id.
        pub dlt_templates: Option<BTreeMap<String, String>>,
        /// The WhatsApp template language.
        pub language: Option<String>,
        /// The WhatsApp app secret (never answered).
        pub app_secret: Option<Credential>,
        /// The WhatsApp webhook's verify token (never answered).
        pub verify_token: Option<Credential>,
        /// When.
        pub now: DateTime<Utc>,
    } -> Senders;
}

const CHANNELS: [Channel; 3] = [Channel::Sms, Channel::Chat, Channel::Push];

/// The brand's sender on `channel`, if it set one (read by the drains, outside the actor).
pub async fn sender_of(
    repo: &Repo,
    tenant: &str,
    channel: Channel,
) -> Result<Option<Sender>, engage_storage::StoreError> {
    repo.get(&keys::brand_sender(tenant, channel)).await
}

async fn all(tenant: &Tenant) -> Result<Senders, QueryError> {
    let mut senders = Vec::new();
    for channel in CHANNELS {
        if let Some(sender) = tenant.get::<Sender>(&keys::brand_sender(&tenant.id, channel)).await? {
            senders.push(sender.view());
        }
    }
    Ok(Senders { senders })
}

fn given(value: Option<String>) -> Option<Option<String>> {
    value.map(|v| Some(v.trim().to_owned()).filter(|v| !v.is_empty()))
}

async fn set(tenant: &mut Tenant, change: SetSender) -> Result<Senders, QueryError> {
    let key = keys::brand_sender(&tenant.id, change.channel);
    let current: Option<Sender> = tenant.get(&key).await?;
    // the directory entry of the sender being replaced, when it is this brand's
    let mut ops = Vec::new();
    for (provider, account, number) in current.as_ref().map(Sender::directory_entries).unwrap_or_default() {
        ops.push(keys::sender_directory(provider, &account, &number).delete());
    }
    let Some(provider) = change.provider else {
        ops.push(key.delete());
        tenant.batch(ops).await?;
        tracing::info!(tenant = %tenant.id, channel = ?change.channel, "a brand's sender was removed: the node-wide provider sends");
        return all(tenant).await;
    };
    // another provider starts from nothing but what is given (an old credential is not another's)
    let mut sender = match current {
        Some(current) if current.provider == provider => current,
        _ => Sender {
            channel: change.channel,
            provider,
            base_url: None,
            sender: String::new(),
            account: None,
            credential: None,
            dlt_entity_id: None,
            dlt_templates: BTreeMap::new(),
            language: None,
            app_secret: None,
            verify_token: None,
            updated_at: change.now,
        },
    };
    if let Some(base_url) = given(change.base_url) {
        sender.base_url = base_url;
    }
    if let Some(from) = change.sender {
        sender.sender = from.trim().to_owned();
    }
    if let Some(account) = given(change.account) {
        sender.account = account;
    }
    if let Some(credential) = change.credential {
        sender.credential = Some(credential).filter(|c| !c.expose().is_empty());
    }
    if let Some(entity) = given(change.dlt_entity_id) {
        sender.dlt_entity_id = entity;
    }
    for (template, dlt) in change.dlt_templates.unwrap_or_default() {
        match dlt.trim() {
            "" => sender.dlt_templates.remove(&template),
            dlt => sender.dlt_templates.insert(template, dlt.to_owned()),
        };
    }
    if let Some(language) = given(change.language) {
        sender.language = language;
    }
    if let Some(secret) = change.app_secret {
        sender.app_secret = Some(secret).filter(|c| !c.expose().is_empty());
    }
    if let Some(token) = change.verify_token {
        sender.verify_token = Some(token).filter(|c| !c.expose().is_empty());
    }
    sender.updated_at = change.now;
    // an incomplete sender is kept (its parts may come in several calls) and says what it
    // lacks; until it is complete the brand's sends on the channel wait
    for (provider, account, number) in sender.directory_entries() {
        // one number, one brand: its webhooks find the brand by it
        let entry = keys::sender_directory(provider, &account, &number);
        let owner: Option<serde_json::Value> = tenant.get(&entry).await?;
        if owner.as_ref().is_some_and(|o| o["tenant"] != tenant.id.as_str()) {
            let what = match provider {
                "whatsapp_verify" => "this verify token".to_owned(),
                _ => format!("the {provider} number {number}"),
            };
            return Err(QueryError::Duplicate(format!("{what} is another brand's sender")));
        }
        ops.retain(|op| op.row() != (entry.table, entry.partition.as_str(), entry.clustering.as_slice()));
        ops.push(entry.put(&serde_json::json!({"tenant": tenant.id, "channel": sender.channel})));
    }
    ops.push(key.put(&sender));
    tenant.batch(ops).await?;
    tracing::info!(tenant = %tenant.id, channel = ?sender.channel, provider = sender.provider.name(), "a brand's sender was set");
    all(tenant).await
}

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _)
    GetSenders: _ => all(tenant).await,
    SetSender: change => set(tenant, change).await,
    TwilioInbound: message => super::webhooks::twilio_inbound(tenant, message).await,
    WhatsappInbound: posted => super::webhooks::whatsapp_inbound(tenant, posted).await,
}
