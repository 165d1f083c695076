//! Marketing consent (not in the spec; `docs/consent.md`): each customer's subscription per
//! channel in a brand, the brand's defaults, the keywords customers reply, the opt-out link every
//! marketing message carries, and the check every marketing send passes when it is queued
//! ([`may_send`], called by [`crate::capabilities::wallet::queue_send`]). Which sends are
//! marketing: [`crate::domain::consent`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use engage_storage::WriteOp;

use crate::domain::consent::{Choice, ConsentDefaults, Keyword, Source, Subscriptions};
use crate::domain::wallet::Channel;
use crate::keys;
use crate::query::{question, QueryError};
use crate::tenant_core::Tenant;

/// A question of the consent capability.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum ConsentQuery {
    /// See [`GetConsent`].
    Get(GetConsent),
    /// See [`SetConsent`].
    Set(SetConsent),
    /// See [`GetDefaults`].
    GetDefaults(GetDefaults),
    /// See [`SetDefaults`].
    SetDefaults(SetDefaults),
    /// See [`Inbound`].
    Inbound(Inbound),
    /// See [`ImportOptOuts`].
    ImportOptOuts(ImportOptOuts),
    /// See [`CountSkips`].
    CountSkips(CountSkips),
}

question! {
    /// A customer's subscriptions: [`ConsentView`].
    pub struct GetConsent {
        /// Customer phone.
        pub phone: String,
    } -> ConsentView;
}

question! {
    /// Sets a customer's subscriptions (each channel given; the others unchanged): [`ConsentView`].
    pub struct SetConsent {
        /// Customer phone.
        pub phone: String,
        /// SMS.
        pub sms: Option<bool>,
        /// Chat.
        pub chat: Option<bool>,
        /// Push.
        pub push: Option<bool>,
        /// How the change came.
        pub source: Source,
        /// When.
        pub now: DateTime<Utc>,
    } -> ConsentView;
}

question! {
    /// The brand's defaults: [`ConsentDefaults`].
    pub struct GetDefaults {} -> ConsentDefaults;
}

question! {
    /// Changes the brand's defaults (each part given): [`ConsentDefaults`].
    pub struct SetDefaults {
        /// SMS.
        pub sms: Option<bool>,
        /// Chat.
        pub chat: Option<bool>,
        /// Push.
        pub push: Option<bool>,
        /// The HELP answer (`""` removes it).
        pub help_text: Option<String>,
    } -> ConsentDefaults;
}

question! {
    /// A message a customer sent on `channel` (a provider's inbound webhook): STOP unsubscribes
    /// that channel, START resubscribes it, HELP is answered; anything else changes nothing.
    pub struct Inbound {
        /// Customer phone.
        pub phone: String,
        /// The channel the message came on.
        pub channel: Channel,
        /// The message.
        pub text: String,
        /// When.
        pub now: DateTime<Utc>,
    } -> InboundHandled;
}

question! {
    /// Unsubscribes each phone on `channels` (a CSV of opt-outs): [`Imported`].
    pub struct ImportOptOuts {
        /// Customer phones.
        pub phones: Vec<String>,
        /// The channels.
        pub channels: Vec<Channel>,
        /// When.
        pub now: DateTime<Utc>,
    } -> Imported;
}

question! {
    /// Counts `count` marketing sends of `business` on `channel` given up for consent (by the
    /// drains, outside the actor): `/stats/metrics/campaigns` shows them. Answers the day's count.
    pub struct CountSkips {
        /// The outlet that would have paid.
        pub business: String,
        /// The channel.
        pub channel: Channel,
        /// How many.
        pub count: u64,
        /// When.
        pub now: DateTime<Utc>,
    } -> u64;
}

/// Counts `count` marketing sends of `business` on `channel` skipped because the customer
/// unsubscribed, in the day's `consent_skips` row (staged: the message's answer waits for it).
/// The outlet's count of the day after it.
pub async fn count_skips(
    tenant: &mut Tenant,
    business: &str,
    channel: Channel,
    count: u64,
    now: DateTime<Utc>,
) -> Result<u64, QueryError> {
    metrics::counter!("engage_sends_skipped_total", "reason" => "consent").increment(count);
    let key = keys::consent_skips(&tenant.id, &crate::domain::time::ist_day(now), business);
    let mut row: serde_json::Value =
        tenant.repo().get(&key).await?.unwrap_or_else(|| serde_json::json!({"child_business_id": business}));
    let field = serde_json::to_value(channel).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let total = row.get(&field).and_then(serde_json::Value::as_u64).unwrap_or(0).saturating_add(count);
    row[field.as_str()] = serde_json::Value::from(total);
    tenant.stage(vec![key.put(&row)]).await?;
    Ok(total)
}

/// One channel of a customer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChannelConsent {
    /// Whether marketing may be sent on it.
    pub subscribed: bool,
    /// `true` when no choice is recorded (the brand's default applies).
    pub default: bool,
    /// How the recorded choice was made.
    pub source: Option<Source>,
    /// When it was recorded.
    pub changed_at: Option<DateTime<Utc>>,
}

/// A customer's subscriptions in a brand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConsentView {
    /// Customer phone.
    pub mobile_number: String,
    /// SMS.
    pub sms: ChannelConsent,
    /// Chat.
    pub chat: ChannelConsent,
    /// Push.
    pub push: ChannelConsent,
}

/// What an inbound message did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InboundHandled {
    /// The keyword the message was (none: an ordinary message, nothing changed).
    pub keyword: Option<Keyword>,
    /// Whether a subscription changed (STOP twice changes it once).
    pub changed: bool,
    /// What to answer the customer (the brand's HELP text, or a confirmation).
    pub reply: Option<String>,
    /// The channel's subscription now.
    pub subscribed: bool,
}

/// What an opt-out import did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Imported {
    /// Phones read.
    pub phones: u64,
    /// Channel subscriptions changed (already unsubscribed ones are not counted).
    pub changed: u64,
}

/// The brand's defaults.
pub async fn defaults(tenant: &Tenant) -> Result<ConsentDefaults, QueryError> {
    Ok(tenant.get(&keys::consent_defaults(&tenant.id)).await?.unwrap_or_default())
}

/// `phone`'s recorded choices.
async fn subscriptions(tenant: &Tenant, phone: &str) -> Result<Subscriptions, QueryError> {
    Ok(tenant.get(&keys::consent(&tenant.id, phone)).await?.unwrap_or_default())
}

/// Whether marketing may go to `phone` on `channel` now.
pub async fn may_send(tenant: &Tenant, phone: &str, channel: Channel) -> Result<bool, QueryError> {
    Ok(subscriptions(tenant, phone).await?.subscribed(channel, &defaults(tenant).await?))
}

/// `phone`'s subscriptions as the routes show them.
pub fn view(phone: &str, subs: &Subscriptions, defaults: &ConsentDefaults) -> ConsentView {
    let channel = |channel: Channel| {
        let choice: Option<&Choice> = subs.choice(channel);
        ChannelConsent {
            subscribed: subs.subscribed(channel, defaults),
            default: choice.is_none(),
            source: choice.map(|c| c.source),
            changed_at: choice.map(|c| c.at),
        }
    };
    ConsentView {
        mobile_number: phone.to_owned(),
        sms: channel(Channel::Sms),
        chat: channel(Channel::Chat),
        push: channel(Channel::Push),
    }
}

/// Records each given channel's choice for `phone`; the view after.
async fn set(
    tenant: &mut Tenant,
    phone: &str,
    choices: &[(Channel, bool)],
    source: Source,
    now: DateTime<Utc>,
) -> Result<(ConsentView, bool), QueryError> {
    let mut subs = subscriptions(tenant, phone).await?;
    let mut changed = false;
    for (channel, subscribed) in choices {
        changed |= subs.set(*channel, *subscribed, source, now);
    }
    if changed {
        tenant.batch(vec![keys::consent(&tenant.id, phone).put(&subs)]).await?;
        let label = if choices.iter().all(|(_, s)| !*s) { "unsubscribed" } else { "subscribed" };
        metrics::counter!("engage_consent_changes_total", "change" => label).increment(1);
    }
    Ok((view(phone, &subs, &defaults(tenant).await?), changed))
}

/// The opt-out code of `phone` in `tenant`: stable (the same customer always gets the same link),
/// short, and not guessable without the node's link secret.
pub fn link_code(salt: &str, tenant: &str, phone: &str) -> String {
    let phone = crate::domain::phone::canonical(phone);
    keys::digest(&["consent-link", salt, tenant, &phone]).chars().take(16).collect()
}

/// The write that makes `/u/<code>` name `phone` of `tenant` (idempotent).
pub fn link_row(code: &str, tenant: &str, phone: &str) -> WriteOp {
    keys::consent_link(code).put(&serde_json::json!({"tenant": tenant, "phone": phone}))
}

fn channels(sms: Option<bool>, chat: Option<bool>, push: Option<bool>) -> Vec<(Channel, bool)> {
    [(Channel::Sms, sms), (Channel::Chat, chat), (Channel::Push, push)]
        .into_iter()
        .filter_map(|(channel, choice)| choice.map(|c| (channel, c)))
        .collect()
}

/// A message a customer sent on `channel` ([`Inbound`]): STOP unsubscribes, START resubscribes,
/// HELP is answered; anything else changes nothing. Also called for a provider's own webhook
/// ([`crate::capabilities::senders::TwilioInbound`]) once its signature is checked.
pub(crate) async fn inbound(
    tenant: &mut Tenant,
    phone: &str,
    channel: Channel,
    text: &str,
    now: DateTime<Utc>,
) -> Result<InboundHandled, QueryError> {
    let keyword = Keyword::of(text);
    let wanted = match keyword {
        Some(Keyword::Stop) => Some(false),
        Some(Keyword::Start) => Some(true),
        _ => None,
    };
    let (view, changed) = match wanted {
        Some(subscribed) => set(tenant, phone, &[(channel, subscribed)], Source::Keyword, now).await?,
        None => (view(phone, &subscriptions(tenant, phone).await?, &defaults(tenant).await?), false),
    };
    let subscribed = match channel {
        Channel::Sms => view.sms.subscribed,
        Channel::Chat => view.chat.subscribed,
        Channel::Push => view.push.subscribed,
    };
    let reply = match keyword {
        Some(Keyword::Help) => Some(
            defaults(tenant)
                .await?
                .help_text
                .unwrap_or_else(|| "Reply STOP to stop offers on this number, START to get them again.".to_owned()),
        ),
        Some(Keyword::Stop) => Some("You will get no more offers here. Reply START to get them again.".to_owned()),
        Some(Keyword::Start) => Some("You will get offers here again. Reply STOP to stop them.".to_owned()),
        None => None,
    };
    Ok(InboundHandled { keyword, changed, reply, subscribed })
}

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _)
    GetConsent: GetConsent { phone } => {
        let subs = subscriptions(tenant, &phone).await?;
        Ok(view(&phone, &subs, &defaults(tenant).await?))
    },
    SetConsent: SetConsent { phone, sms, chat, push, source, now } => {
        Ok(set(tenant, &phone, &channels(sms, chat, push), source, now).await?.0)
    },
    GetDefaults: _ => defaults(tenant).await,
    CountSkips: CountSkips { business, channel, count, now } => count_skips(tenant, &business, channel, count, now).await,
    SetDefaults: SetDefaults { sms, chat, push, help_text } => {
        let mut current = defaults(tenant).await?;
        current.sms = sms.unwrap_or(current.sms);
        current.chat = chat.unwrap_or(current.chat);
        current.push = push.unwrap_or(current.push);
        if let Some(text) = help_text {
            current.help_text = Some(text.trim().to_owned()).filter(|t| !t.is_empty());
        }
        tenant.batch(vec![keys::consent_defaults(&tenant.id).put(&current)]).await?;
        Ok(current)
    },
    Inbound: Inbound { phone, channel, text, now } => inbound(tenant, &phone, channel, &text, now).await,
    ImportOptOuts: ImportOptOuts { phones, channels, now } => {
        let mut changed = 0u64;
        let mut ops = Vec::new();
        for phone in &phones {
            let mut subs = subscriptions(tenant, phone).await?;
            let mut any = false;
            for channel in &channels {
                if subs.set(*channel, false, Source::Import, now) {
                    changed += 1;
                    any = true;
                }
            }
            if any {
                ops.push(keys::consent(&tenant.id, phone).put(&subs));
            }
        }
        for chunk in ops.chunks(500) {
            tenant.batch(chunk.to_vec()).await?;
        }
        Ok(Imported { phones: phones.len() as u64, changed })
    },
}
