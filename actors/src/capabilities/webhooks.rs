//! The providers' webhooks as the brand's actor takes them (`docs/senders.md`, "Webhooks"): the
//! ingress found the brand by the number that received or sent the message (the sender
//! directory); here the signature is checked with the brand's own secret, which never leaves the
//! actor, and only then does a customer's message act as a keyword
//! ([`crate::capabilities::consent::inbound`]) or a receipt move a send
//! ([`crate::capabilities::receipts::apply`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::capabilities::consent::InboundHandled;
use crate::capabilities::receipts::{self, Posted};
use crate::domain::sender::{ProviderKind, Sender};
use crate::domain::wallet::Channel;
use crate::keys;
use crate::query::{question, QueryError};
use crate::tenant_core::Tenant;

/// What a Twilio form is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TwilioPost {
    /// A customer's message (`From`, `Body`).
    Message {
        /// `From`: the customer.
        from: String,
        /// `Body`.
        body: String,
    },
    /// A status callback of a message the brand sent (`MessageSid`, `MessageStatus`).
    Status(Posted),
}

question! {
    /// A form Twilio posted for the brand's number `number` of `account`: a customer's message
    /// (handled as a keyword) or the status of a message the brand sent (a receipt), only when
    /// `signature` is Twilio's for `url` and `params` with the brand's own auth token and
    /// `account`/`number` are the brand's sender. Answers [`WebhookHandled`].
    pub struct TwilioInbound {
        /// `AccountSid`.
        pub account: String,
        /// The brand's number as Twilio posts it (`whatsapp:+…` on WhatsApp): `To` of a
        /// message, `From` of a status callback.
        pub number: String,
        /// What was posted.
        pub post: TwilioPost,
        /// The URL Twilio posted to.
        pub url: String,
        /// Every form parameter, as posted.
        pub params: Vec<(String, String)>,
        /// `X-Twilio-Signature`.
        pub signature: String,
        /// When.
        pub now: DateTime<Utc>,
    } -> WebhookHandled;
}

question! {
    /// What WhatsApp Cloud posted for the brand's phone-number id: customers' messages (handled
    /// as keywords) and statuses of messages the brand sent (receipts), only when `signature`
    /// (`X-Hub-Signature-256`) is Meta's for `body` with the brand's app secret. Answers
    /// [`WebhookHandled`].
    pub struct WhatsappInbound {
        /// `metadata.phone_number_id`: the brand's number.
        pub phone_number_id: String,
        /// The raw body, as signed.
        pub body: String,
        /// `X-Hub-Signature-256`.
        pub signature: String,
        /// Each message: the customer's number and its text.
        pub messages: Vec<(String, String)>,
        /// Each status of a message the brand sent.
        #[serde(default)]
        pub statuses: Vec<Posted>,
        /// When.
        pub now: DateTime<Utc>,
    } -> WebhookHandled;
}

/// What a webhook did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WebhookHandled {
    /// Whether the signature was the provider's with the brand's secret (`false`: nothing
    /// changed).
    pub verified: bool,
    /// What the (last) customer message did, when verified.
    pub handled: Option<InboundHandled>,
    /// Receipts that moved a send.
    #[serde(default)]
    pub receipts: u32,
}

pub(super) async fn twilio_inbound(tenant: &mut Tenant, message: TwilioInbound) -> Result<WebhookHandled, QueryError> {
    let channel = match message.number.starts_with("whatsapp:") {
        true => Channel::Chat,
        false => Channel::Sms,
    };
    let refused = WebhookHandled::default();
    let Some(sender) = tenant.get::<Sender>(&keys::brand_sender(&tenant.id, channel)).await? else {
        return Ok(refused);
    };
    let ours =
        sender.twilio_entry().is_some_and(|(account, number)| account == message.account && number == message.number);
    let token = sender.credential.as_ref().map(|c| c.expose()).unwrap_or_default();
    if !ours
        || token.is_empty()
        || !crate::domain::webhook::twilio_signed(token, &message.url, &message.params, &message.signature)
    {
        tracing::warn!(tenant = %tenant.id, "a Twilio webhook whose signature is not the brand's: nothing changed");
        return Ok(refused);
    }
    match message.post {
        TwilioPost::Message { from, body } => {
            let from = from.strip_prefix("whatsapp:").unwrap_or(&from);
            let phone = crate::domain::phone::parse(from).map_err(|why| QueryError::Invalid(format!("From: {why}")))?;
            let handled = crate::capabilities::consent::inbound(tenant, &phone, channel, &body, message.now).await?;
            Ok(WebhookHandled { verified: true, handled: Some(handled), receipts: 0 })
        }
        TwilioPost::Status(posted) => {
            let moved = receipts::apply(tenant, &posted, message.now).await?;
            Ok(WebhookHandled { verified: true, handled: None, receipts: u32::from(moved) })
        }
    }
}

pub(super) async fn whatsapp_inbound(
    tenant: &mut Tenant,
    posted: WhatsappInbound,
) -> Result<WebhookHandled, QueryError> {
    let refused = WebhookHandled::default();
    let Some(sender) = tenant.get::<Sender>(&keys::brand_sender(&tenant.id, Channel::Chat)).await? else {
        return Ok(refused);
    };
    let secret = sender.app_secret.as_ref().map(|c| c.expose()).unwrap_or_default();
    if sender.provider != ProviderKind::WhatsappCloud
        || sender.sender != posted.phone_number_id
        || secret.is_empty()
        || !crate::domain::webhook::meta_signed(secret, posted.body.as_bytes(), &posted.signature)
    {
        tracing::warn!(tenant = %tenant.id, "a WhatsApp webhook whose signature is not the brand's: nothing changed");
        return Ok(refused);
    }
    let mut done = WebhookHandled { verified: true, ..WebhookHandled::default() };
    for (from, text) in posted.messages {
        let phone = crate::domain::phone::parse(&from).map_err(|why| QueryError::Invalid(format!("from: {why}")))?;
        done.handled =
            Some(crate::capabilities::consent::inbound(tenant, &phone, Channel::Chat, &text, posted.now).await?);
    }
    for status in &posted.statuses {
        done.receipts += u32::from(receipts::apply(tenant, status, posted.now).await?);
    }
    Ok(done)
}
