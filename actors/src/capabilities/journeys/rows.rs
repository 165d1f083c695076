//! The journey rows a brand keeps: journey configurations and their campaign data, quiet hours and settings, campaign tags, and the journey types with their form fields.

use super::super::wallet::ChatButton;
use crate::domain::time::ist;
use crate::domain::wallet::Channel;
use crate::keys::{self, digest};
use crate::repo::CAMPAIGN_JOURNEYS;
use crate::tenant_core::Tenant;
use chrono::{DateTime, Timelike, Utc};
use engage_storage::StoreError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[allow(unused_imports)]
use super::*;

/// A campaign tag (table `campaign_tags`, partition tenant, clustering its id).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CampaignTag {
    /// `digest(brand, lower-case name)`.
    pub tag_id: String,
    /// The name as first written.
    pub tag_name: String,
    /// Colour.
    #[serde(default)]
    pub color: Option<String>,
    /// When it was added.
    pub created_at: DateTime<Utc>,
}

/// IST quiet hours, `HH:MM` to `HH:MM` (the end excluded; a start after the end spans midnight).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QuietHours {
    /// Start, `HH:MM` IST.
    pub start: String,
    /// End, `HH:MM` IST.
    pub end: String,
}

pub(super) fn minutes(text: &str) -> Option<u32> {
    let (h, m) = text.split_once(':')?;
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60 && text.len() == 5).then_some(h * 60 + m)
}

impl QuietHours {
    /// Whether both ends are `HH:MM` times.
    pub fn valid(&self) -> bool {
        minutes(&self.start).is_some() && minutes(&self.end).is_some()
    }

    /// Whether `at` (in IST) lies inside them.
    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        let (Some(start), Some(end)) = (minutes(&self.start), minutes(&self.end)) else { return false };
        let local = at.with_timezone(&ist());
        let now = local.hour() * 60 + local.minute();
        if start <= end {
            (start..end).contains(&now)
        } else {
            now >= start || now < end
        }
    }
}

/// A brand's journey settings (beyond the spec): quiet hours, in which no campaign message is
/// delivered (the drains leave them queued until the hours end), and a frequency cap, the most
/// journey messages a customer gets in any 7 days.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JourneySettings {
    /// Quiet hours, when set.
    #[serde(default)]
    pub quiet_hours: Option<QuietHours>,
    /// Journey messages per customer per rolling 7 days at most, when set.
    #[serde(default)]
    pub frequency_cap: Option<u32>,
}

/// The brand's journey settings (cached in the actor).
pub async fn settings(tenant: &mut Tenant) -> Result<JourneySettings, StoreError> {
    if let Some(cached) = tenant.cache.get::<JourneySettings>() {
        return Ok(cached.clone());
    }
    let stored: JourneySettings = tenant.repo().get(&keys::journey_settings(&tenant.id)).await?.unwrap_or_default();
    tenant.cache.set::<JourneySettings>(stored.clone());
    Ok(stored)
}

/// A channel a journey sends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JourneyChannel {
    /// SMS.
    Sms,
    /// Chat (WhatsApp-style).
    Chat,
    /// Push notification.
    Push,
}

impl JourneyChannel {
    /// The send channel (its queue and prices).
    pub fn channel(self) -> Channel {
        match self {
            JourneyChannel::Sms => Channel::Sms,
            JourneyChannel::Chat => Channel::Chat,
            JourneyChannel::Push => Channel::Push,
        }
    }

    /// `sms`, `chat` or `push` (as in `campaign_data.channels` and ROI `mode`).
    pub fn as_str(self) -> &'static str {
        match self {
            JourneyChannel::Sms => "sms",
            JourneyChannel::Chat => "chat",
            JourneyChannel::Push => "push",
        }
    }
}

/// A journey's `campaign_data` (the spec's free-form object, with the fields engage reads).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CampaignData {
    /// Channels to send on.
    #[serde(default)]
    pub channels: Vec<JourneyChannel>,
    /// SMS text (`x_cust_name`, `x_cust_mobile`, `x_cust_eid` are replaced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sms_template: Option<String>,
    /// Chat template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template: Option<String>,
    /// Push text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_template: Option<String>,
    /// Most messages a run sends (volume = min(eligible, daily_cap)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily_cap: Option<u32>,
    /// One of the six send-timing option ids ([`DAYS_TYPE_OPTIONS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_days_type: Option<String>,
    /// Lost customers: no order for this many days; wallet expiry: points expiring within them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days: Option<u32>,
    /// Abandoned cart: minutes after the cart's last update (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_minutes: Option<u32>,
    /// Low rating: ratings at most this start the recovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<u8>,
    /// Low rating: recoveries per customer at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_rating: Option<u32>,
    /// Low rating: the offer sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promo_details: Option<Value>,
    /// Referral boost: the order-count threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orders: Option<u32>,
    /// Chat: the call-to-action button's label (with `chat_button_url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_button_text: Option<String>,
    /// Chat: where the button leads; the message carries a signed tracking link to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_button_url: Option<String>,
    /// Percentage (0–100) of eligible customers held out (never sent; the ROI baseline), chosen
    /// by a stable hash of journey and phone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdout_percent: Option<u8>,
}

impl CampaignData {
    /// The chat button of a send on `occasion`, when the journey has a button URL.
    pub fn chat_button(&self, occasion: &str) -> Option<ChatButton> {
        let url = self.chat_button_url.clone().filter(|u| !u.trim().is_empty())?;
        let text = self.chat_button_text.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| "Open".to_owned());
        Some(ChatButton { text, url, occasion: occasion.to_owned() })
    }
}

/// A journey configuration (table `campaign_journeys`, partition brand, clustering its id).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JourneyConfig {
    /// `digest(brand, outlet, type)`: 24 hex characters.
    pub campaign_journey_id: String,
    /// The brand.
    pub parent_business_id: String,
    /// The outlet.
    pub child_business_id: String,
    /// The journey type.
    pub campaign_type_id: String,
    /// Its `campaign_type`.
    pub campaign_type: String,
    /// Channels, templates, thresholds.
    pub campaign_data: CampaignData,
    /// 1 when the nightly run (or the event trigger) may send it.
    pub campaign_enabled: u8,
    /// 1 unless the brand's configuration switch is off (always 1 until a route turns it off).
    pub config_enabled: u8,
    /// When it was last turned on (the first nightly run after it backtracks).
    #[serde(default)]
    pub activated_at: Option<DateTime<Utc>>,
    /// First saved.
    pub created_at: DateTime<Utc>,
    /// Last saved or toggled.
    pub updated_at: DateTime<Utc>,
}

/// A field of a journey type's form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JourneyField {
    /// The `campaign_data` key it fills.
    pub ref_id: String,
    /// Label.
    pub label: String,
    /// `number`, `text`, `select`, `multiselect` or `object`.
    pub input: String,
    /// Whether a save needs it.
    pub required: bool,
    /// Allowed values (select inputs).
    #[serde(default)]
    pub options: Vec<FieldOption>,
}

/// An allowed value of a field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FieldOption {
    /// The value stored.
    pub value: String,
    /// Label.
    pub label: String,
}

/// A journey type (spec record "Journey type").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JourneyType {
    /// 24 hex characters.
    pub id: String,
    /// Title.
    pub title: String,
    /// Description.
    pub description: String,
    /// `welcome`, `birthday`, … (unique).
    pub campaign_type: String,
    /// Icon.
    pub icon_url: String,
    /// `'1'` event-triggered, `'2'` scheduled (the nightly run).
    pub execution_type: String,
    /// The form.
    pub fields: Vec<JourneyField>,
}

/// The six send-timing options of `/crm_api/get/days/type/options`: (id, title, days relative to
/// the customer's event; `None`: as soon as the trigger fires).
pub const DAYS_TYPE_OPTIONS: [(&str, &str, Option<i32>); 6] = [
    ("6650d0a1e4b0c2f1a9000001", "As soon as it happens", None),
    ("6650d0a1e4b0c2f1a9000002", "On the day", Some(0)),
    ("6650d0a1e4b0c2f1a9000003", "1 day before", Some(-1)),
    ("6650d0a1e4b0c2f1a9000004", "3 days before", Some(-3)),
    ("6650d0a1e4b0c2f1a9000005", "7 days before", Some(-7)),
    ("6650d0a1e4b0c2f1a9000006", "1 day after", Some(1)),
];

pub(super) fn field(ref_id: &str, label: &str, input: &str, required: bool, options: &[(&str, &str)]) -> JourneyField {
    JourneyField {
        ref_id: ref_id.to_owned(),
        label: label.to_owned(),
        input: input.to_owned(),
        required,
        options: options.iter().map(|(v, l)| FieldOption { value: (*v).to_owned(), label: (*l).to_owned() }).collect(),
    }
}

/// The fields every journey type has (a type `/crm_api/autoCampaign` adds gets these).
pub fn common_fields() -> Vec<JourneyField> {
    let days: Vec<(&str, &str)> = DAYS_TYPE_OPTIONS.iter().map(|(id, title, _)| (*id, *title)).collect();
    vec![
        field("channels", "Channels", "multiselect", true, &[("sms", "SMS"), ("chat", "Chat"), ("push", "Push")]),
        field("sms_template", "SMS text", "text", false, &[]),
        field("chat_template", "Chat template", "text", false, &[]),
        field("push_template", "Push text", "text", false, &[]),
        field("daily_cap", "Most messages per run", "number", false, &[]),
        field("send_days_type", "When to send", "select", false, &days),
        field("chat_button_text", "Chat button label", "text", false, &[]),
        field("chat_button_url", "Chat button link (tracked)", "text", false, &[]),
        field("holdout_percent", "Holdout group (% of eligible customers never sent)", "number", false, &[]),
    ]
}

/// A built-in type: the common fields, then its own.
pub(super) fn builtin(
    id: &str,
    campaign_type: &str,
    title: &str,
    description: &str,
    execution_type: &str,
    own: Vec<JourneyField>,
) -> JourneyType {
    let mut fields = common_fields();
    fields.extend(own);
    JourneyType {
        id: id.to_owned(),
        title: title.to_owned(),
        description: description.to_owned(),
        campaign_type: campaign_type.to_owned(),
        icon_url: format!("/static/journeys/{campaign_type}.svg"),
        execution_type: execution_type.to_owned(),
        fields,
    }
}

/// The eight built-in journey types, with their fixed ids.
pub fn builtin_types() -> Vec<JourneyType> {
    vec![
        builtin(
            "6650c0a1e4b0c2f1a9000001",
            "welcome",
            "Welcome",
            "A new customer's first order gets a welcome message.",
            "1",
            vec![],
        ),
        builtin(
            "6650c0a1e4b0c2f1a9000002",
            "birthday",
            "Birthday",
            "Customers whose birthday is the next IST day.",
            "2",
            vec![],
        ),
        builtin(
            "6650c0a1e4b0c2f1a9000003",
            "anniversary",
            "Anniversary",
            "Customers whose anniversary is the next IST day.",
            "2",
            vec![],
        ),
        builtin(
            "6650c0a1e4b0c2f1a9000004",
            "wallet_expiry",
            "Wallet expiry",
            "Customers with points expiring within the given days, once per expiring lot.",
            "2",
            vec![field("days", "Points expiring within (days)", "number", true, &[])],
        ),
        builtin(
            "6650c0a1e4b0c2f1a9000005",
            "lost_customers",
            "Lost customers",
            "Customers with no order for the given days, once per lapse.",
            "2",
            vec![field("days", "No order for (days)", "number", true, &[])],
        ),
        builtin(
            "6650c0a1e4b0c2f1a9000006",
            "abandoned_cart",
            "Abandoned cart",
            "A cart left for the given minutes, at most one message per customer per IST day.",
            "1",
            vec![field("trigger_minutes", "Cart left for (minutes, default 30)", "number", false, &[])],
        ),
        builtin(
            "6650c0a1e4b0c2f1a9000007",
            "low_rating",
            "Low rating rewards",
            "A rating at or below the threshold starts a recovery with an offer.",
            "1",
            vec![
                field("rating", "Ratings at most", "number", true, &[]),
                field("frequency_rating", "Recoveries per customer at most", "number", false, &[]),
                field("promo_details", "Offer", "object", false, &[]),
            ],
        ),
        builtin(
            "6650c0a1e4b0c2f1a9000008",
            "referral_boost",
            "Referral boost",
            "Customers reaching an order count are asked to refer friends.",
            "1",
            vec![field("orders", "Order count", "number", true, &[])],
        ),
    ]
}

/// What is missing or wrong in `data` for `journey_type`: (field, reason).
pub fn check(journey_type: &JourneyType, data: &CampaignData) -> Result<(), (String, String)> {
    if data.channels.is_empty() {
        return Err(("channels".into(), "at least one channel is required".into()));
    }
    for channel in &data.channels {
        let (name, template) = match channel {
            JourneyChannel::Sms => ("sms_template", &data.sms_template),
            JourneyChannel::Chat => ("chat_template", &data.chat_template),
            JourneyChannel::Push => ("push_template", &data.push_template),
        };
        if template.as_deref().is_none_or(|t| t.trim().is_empty()) {
            return Err((name.into(), format!("{name} is required when the journey sends on that channel")));
        }
    }
    if let Some(days) = &data.send_days_type {
        if !DAYS_TYPE_OPTIONS.iter().any(|(id, _, _)| id == days) {
            return Err(("send_days_type".into(), "not one of /crm_api/get/days/type/options".into()));
        }
    }
    let given = serde_json::to_value(data).unwrap_or_default();
    for field in journey_type.fields.iter().filter(|f| f.required && f.ref_id != "channels") {
        if given.get(&field.ref_id).is_none_or(Value::is_null) {
            return Err((
                field.ref_id.clone(),
                format!("{} is required for a {} journey", field.ref_id, journey_type.campaign_type),
            ));
        }
    }
    Ok(())
}

/// The id of the configuration of (brand, outlet, type): 24 hex characters.
pub fn journey_id(tenant: &str, child: &str, campaign_type_id: &str) -> String {
    let mut id = digest(&["journey", tenant, child, campaign_type_id]);
    id.push_str(&digest(&["journey-2", tenant, child, campaign_type_id])[..8]);
    id
}

/// The brand's journey configurations (cached in the actor; saves and toggles refresh it).
pub async fn journeys(tenant: &mut Tenant) -> Result<Vec<JourneyConfig>, StoreError> {
    if let Some(cached) = tenant.cache.get::<Vec<JourneyConfig>>() {
        return Ok(cached.clone());
    }
    let all: Vec<JourneyConfig> = tenant.repo().all(CAMPAIGN_JOURNEYS, &tenant.id).await?;
    tenant.cache.set::<Vec<JourneyConfig>>(all.clone());
    Ok(all)
}
