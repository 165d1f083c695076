//! A brand's own sender on a channel (`docs/senders.md`): which provider its messages go through,
//! with the brand's credentials and sender, instead of the node-wide provider
//! (`ENGAGE_SMS_PROVIDER_URL` and the like). The credential is a secret: it is written through
//! the API and never shown again ([`SenderView`] says only whether one is set); its `Debug` hides it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::wallet::{Channel, Purpose};

/// The providers a brand may send through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// engage's own JSON (`{send_id, to, message, …}`) to the brand's URL, with its bearer token.
    Generic,
    /// Twilio Programmable Messaging: SMS, or WhatsApp through Twilio on the chat channel.
    Twilio,
    /// An Indian DLT gateway in the MSG91 Flow style: SMS only, each template's DLT id.
    Msg91,
    /// The WhatsApp Cloud API: chat only, approved templates.
    WhatsappCloud,
    /// Firebase Cloud Messaging HTTP v1: push only, a service-account key.
    Fcm,
}

impl ProviderKind {
    /// Where its API is unless the brand names another base URL (sandboxes, tests).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::Generic => None,
            ProviderKind::Twilio => Some("https://api.twilio.com"),
            ProviderKind::Msg91 => Some("https://control.msg91.com"),
            ProviderKind::WhatsappCloud => Some("https://graph.facebook.com"),
            ProviderKind::Fcm => Some("https://fcm.googleapis.com"),
        }
    }

    /// The channels it carries.
    pub fn carries(self, channel: Channel) -> bool {
        match self {
            ProviderKind::Generic => true,
            ProviderKind::Twilio => matches!(channel, Channel::Sms | Channel::Chat),
            ProviderKind::Msg91 => channel == Channel::Sms,
            ProviderKind::WhatsappCloud => channel == Channel::Chat,
            ProviderKind::Fcm => channel == Channel::Push,
        }
    }

    /// Its name in metrics and answers.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Generic => "generic",
            ProviderKind::Twilio => "twilio",
            ProviderKind::Msg91 => "msg91",
            ProviderKind::WhatsappCloud => "whatsapp_cloud",
            ProviderKind::Fcm => "fcm",
        }
    }
}

/// The template a send names at a provider: its own template id, else its purpose's name
/// (`digital_bill`, `feedback`, `fraud_alert`, `campaign`, `otp`), so that a brand registers its
/// bills, feedback requests and journeys (which name no template) under those names.
pub fn template_key(template_id: Option<&str>, purpose: Purpose) -> String {
    match template_id.filter(|id| !id.trim().is_empty()) {
        Some(id) => id.to_owned(),
        None => serde_json::to_value(purpose).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(),
    }
}

/// The parts of a service-account key engage uses.
#[derive(Clone, Deserialize)]
pub struct ServiceAccount {
    /// Who signs (`…@….iam.gserviceaccount.com`).
    pub client_email: String,
    /// The RSA key, PEM (PKCS#8).
    pub private_key: String,
    /// The key's id (the JWT's `kid`).
    #[serde(default)]
    pub private_key_id: Option<String>,
    /// Where tokens are minted (default Google's).
    #[serde(default = "default_token_uri")]
    pub token_uri: String,
}

fn default_token_uri() -> String {
    "https://oauth2.googleapis.com/token".to_owned()
}

impl ServiceAccount {
    /// The key in a sender's credential; why it is not one otherwise.
    pub fn parse(credential: &str) -> Result<Self, String> {
        let key: Self = serde_json::from_str(credential).map_err(|_| {
            "credential must be a service-account key (JSON with client_email and private_key)".to_owned()
        })?;
        jsonwebtoken::EncodingKey::from_rsa_pem(key.private_key.as_bytes())
            .map_err(|_| "the service-account key's private_key is not an RSA key in PEM".to_owned())?;
        Ok(key)
    }
}

/// A credential: kept and sent, never shown (`Debug` prints `***`).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Credential(String);

impl Credential {
    /// Wraps `value`.
    pub fn new(value: String) -> Self {
        Self(value)
    }

    /// The value, to send to the provider.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// A brand's sender on one channel, as stored (`brand_senders`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sender {
    /// The channel.
    pub channel: Channel,
    /// The provider.
    pub provider: ProviderKind,
    /// The provider's API base URL (default [`ProviderKind::default_base_url`]; required for
    /// `generic`: the URL engage POSTs to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Who the messages come from: the Twilio number (E.164, or `whatsapp:+…` on chat), the DLT
    /// sender id (6 letters), the WhatsApp phone-number id, the Firebase project id, the generic
    /// sender id.
    pub sender: String,
    /// The Twilio account SID (the basic-auth user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The credential: Twilio auth token, MSG91 auth key, WhatsApp access token, FCM
    /// service-account key (the JSON file), generic bearer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<Credential>,
    /// The brand's DLT principal entity id (MSG91).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dlt_entity_id: Option<String>,
    /// Each template's DLT template id (MSG91: the flow id), by engage's template id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dlt_templates: BTreeMap<String, String>,
    /// The WhatsApp template language (default `en`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The WhatsApp app's secret: its webhooks are signed with it (`X-Hub-Signature-256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_secret: Option<Credential>,
    /// The token the WhatsApp webhook's `GET` handshake must present (`hub.verify_token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_token: Option<Credential>,
    /// When it was last changed.
    pub updated_at: DateTime<Utc>,
}

impl Sender {
    /// The API base URL, without a trailing slash.
    pub fn base_url(&self) -> Option<String> {
        self.base_url.as_deref().or(self.provider.default_base_url()).map(|url| url.trim_end_matches('/').to_owned())
    }

    /// Why this sender cannot send (a required part missing), if it cannot.
    pub fn incomplete(&self) -> Option<String> {
        if !self.provider.carries(self.channel) {
            return Some(format!("{} does not carry {:?} messages", self.provider.name(), self.channel));
        }
        if self.sender.trim().is_empty() {
            return Some("sender is required".to_owned());
        }
        let missing = match self.provider {
            ProviderKind::Generic if self.base_url.is_none() => Some("base_url"),
            ProviderKind::Twilio if self.account.is_none() => Some("account"),
            ProviderKind::Msg91 if self.dlt_entity_id.is_none() => Some("dlt_entity_id"),
            ProviderKind::Twilio | ProviderKind::Msg91 | ProviderKind::WhatsappCloud | ProviderKind::Fcm
                if self.credential.is_none() =>
            {
                Some("credential")
            }
            _ => None,
        };
        if let Some(field) = missing {
            return Some(format!("{field} is required for {}", self.provider.name()));
        }
        match (self.provider, &self.credential) {
            (ProviderKind::Fcm, Some(key)) => ServiceAccount::parse(key.expose()).err(),
            _ => None,
        }
    }

    /// Whether every SMS through it needs its template's DLT id (an Indian DLT gateway).
    pub fn needs_dlt(&self) -> bool {
        self.provider == ProviderKind::Msg91
    }

    /// The DLT template id of a send naming `template_id` (or none) for `purpose`
    /// ([`template_key`]), when the brand registered one.
    pub fn dlt_template(&self, template_id: Option<&str>, purpose: Purpose) -> Option<&str> {
        self.dlt_templates.get(&template_key(template_id, purpose)).map(String::as_str)
    }

    /// Why the provider would refuse a send naming `template_id` (or none) for `purpose`, known
    /// before any call: an SMS through a DLT gateway whose template has no DLT id. Such a send is
    /// refused when queued (it costs nothing), and again at the drain if the sender changed since.
    pub fn refuses(&self, template_id: Option<&str>, purpose: Purpose) -> Option<String> {
        if self.needs_dlt() && self.dlt_template(template_id, purpose).is_none() {
            let key = template_key(template_id, purpose);
            return Some(format!(
                "template {key:?} has no DLT template id in the brand's {} sender (set dlt_templates.{key})",
                self.provider.name()
            ));
        }
        None
    }

    /// A sender's entries in the sender directory, (provider, account, key): a Twilio sender by its
    /// account and the number as Twilio posts it; a WhatsApp Cloud sender by its phone-number id, and
    /// by the SHA-256 of its verify token (the webhook's `GET` handshake names no number).
    pub fn directory_entries(&self) -> Vec<(&'static str, String, String)> {
        let sender = self;
        match sender.provider {
            ProviderKind::Twilio => {
                let Some(account) = sender.account.clone() else { return Vec::new() };
                let number = match (sender.channel, sender.sender.starts_with("whatsapp:")) {
                    (Channel::Chat, false) => format!("whatsapp:{}", sender.sender),
                    _ => sender.sender.clone(),
                };
                vec![("twilio", account, number)]
            }
            ProviderKind::WhatsappCloud => {
                let mut entries = vec![("whatsapp_cloud", String::new(), sender.sender.clone())];
                if let Some(token) = &sender.verify_token {
                    entries.push(("whatsapp_verify", String::new(), super::webhook::verify_token_key(token.expose())));
                }
                entries
            }
            _ => Vec::new(),
        }
    }

    /// A Twilio sender's entry: (account, the number as Twilio posts it).
    pub fn twilio_entry(&self) -> Option<(String, String)> {
        self.directory_entries().into_iter().find(|(provider, _, _)| *provider == "twilio").map(|(_, a, n)| (a, n))
    }

    /// What answers show: everything but the credential.
    pub fn view(&self) -> SenderView {
        SenderView {
            channel: self.channel,
            provider: self.provider,
            base_url: self.base_url(),
            sender: self.sender.clone(),
            account: self.account.clone(),
            credential_set: self.credential.is_some(),
            dlt_entity_id: self.dlt_entity_id.clone(),
            dlt_templates: self.dlt_templates.clone(),
            language: self.language.clone(),
            app_secret_set: self.app_secret.is_some(),
            verify_token_set: self.verify_token.is_some(),
            updated_at: self.updated_at,
            incomplete: self.incomplete(),
        }
    }
}

/// A brand's sender as answers show it: the credential only as `credential_set`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SenderView {
    /// The channel.
    pub channel: Channel,
    /// The provider.
    pub provider: ProviderKind,
    /// The API base URL messages go to.
    pub base_url: Option<String>,
    /// Who the messages come from.
    pub sender: String,
    /// The Twilio account SID.
    pub account: Option<String>,
    /// Whether a credential is kept (it is never shown).
    pub credential_set: bool,
    /// The DLT principal entity id.
    pub dlt_entity_id: Option<String>,
    /// Each template's DLT template id, by engage's template id.
    pub dlt_templates: BTreeMap<String, String>,
    /// The WhatsApp template language.
    pub language: Option<String>,
    /// Whether the WhatsApp app secret is kept (never shown): without it, the brand's WhatsApp
    /// webhooks are refused.
    pub app_secret_set: bool,
    /// Whether the WhatsApp webhook's verify token is kept (never shown).
    pub verify_token_set: bool,
    /// When it was last changed.
    pub updated_at: DateTime<Utc>,
    /// What it lacks before it can send (`null`: complete); until then the brand's sends on the
    /// channel wait.
    pub incomplete: Option<String>,
}

/// A brand's senders, one per channel it set (the others use the node-wide provider).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Senders {
    /// By channel.
    pub senders: Vec<SenderView>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn twilio() -> Sender {
        Sender {
            channel: Channel::Sms,
            provider: ProviderKind::Twilio,
            base_url: None,
            sender: "+15005550006".into(),
            account: Some("AC1".into()),
            credential: Some(Credential::new("tok-secret".into())),
            dlt_entity_id: None,
            dlt_templates: BTreeMap::new(),
            language: None,
            app_secret: None,
            verify_token: None,
            updated_at: Utc::now(),
        }
    }

    #[test]
    fn the_credential_is_never_shown_nor_logged() {
        let sender = twilio();
        assert!(!format!("{sender:?}").contains("tok-secret"));
        let view = serde_json::to_string(&sender.view()).unwrap();
        assert!(!view.contains("tok-secret") && view.contains("\"credential_set\":true"), "{view}");
        assert_eq!(sender.base_url().as_deref(), Some("https://api.twilio.com"));
    }

    #[test]
    fn a_dlt_gateway_refuses_templates_without_a_dlt_id_and_fixed_sends_go_by_purpose() {
        let mut msg91 = Sender { provider: ProviderKind::Msg91, dlt_entity_id: Some("E1".into()), ..twilio() };
        msg91.dlt_templates.insert("promo-1".into(), "1207000000000001".into());
        msg91.dlt_templates.insert("digital_bill".into(), "1207000000000002".into());
        assert_eq!(msg91.refuses(Some("promo-1"), Purpose::Campaign), None);
        assert_eq!(msg91.dlt_template(Some("promo-1"), Purpose::Campaign), Some("1207000000000001"));
        assert_eq!(msg91.dlt_template(None, Purpose::DigitalBill), Some("1207000000000002"));
        let refused = msg91.refuses(Some("promo-2"), Purpose::Campaign).unwrap_or_default();
        assert!(refused.contains("promo-2") && refused.contains("dlt_templates"), "{refused}");
        assert!(msg91.refuses(None, Purpose::Feedback).unwrap_or_default().contains("\"feedback\""));
        // Twilio needs no DLT id
        assert_eq!(twilio().refuses(Some("promo-2"), Purpose::Campaign), None);
    }

    #[test]
    fn a_sender_missing_what_its_provider_needs_is_incomplete() {
        assert_eq!(twilio().incomplete(), None);
        let mut no_account = twilio();
        no_account.account = None;
        assert!(no_account.incomplete().unwrap().contains("account"));
        let mut push = twilio();
        push.channel = Channel::Push;
        assert!(push.incomplete().is_some());
        let mut msg91 = twilio();
        msg91.provider = ProviderKind::Msg91;
        assert!(msg91.incomplete().unwrap().contains("dlt_entity_id"));
    }
}
