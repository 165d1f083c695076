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

use async_trait::async_trait;
use chrono::{DateTime, Timelike, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::{StoreError, WriteOp};

use super::wallet::{ChatButton, WalletTxn};
use crate::brand::Brand;
use crate::domain::customer::{Applied, Customer};
use crate::domain::time::ist;
use crate::domain::wallet::Channel;
use crate::keys::{self, digest};
use crate::query::{reply, QueryError, QueryReply};
use crate::reaction::{OrderEvent, OrderReaction};
use crate::repo::{BUSINESS_WALLETS, CAMPAIGN_JOURNEYS, CAMPAIGN_TAGS, JOURNEY_RUNS, JOURNEY_SENDS, WALLET_TXNS};

mod bulk;
mod carts;
mod health;
mod roi;
mod runs;

pub use crate::capabilities::business::BusinessConfig;
pub use bulk::{BulkCampaign, BulkRecipient, BulkSpec, BULK_CHUNK};
pub use carts::{abandoned, CartsHandled, OpenCart, CART_SOURCES, DEFAULT_TRIGGER_MINUTES};
pub use health::{FlagsSynced, Health, JourneyHealth};
pub use roi::{attribute, Attributed, RoiRow, RoiSummary, ATTRIBUTION_DAYS, ROI_LOOKBACK_DAYS};
pub use runs::{
    occasion, reach, reach_one, reach_one_with, run_page, JourneyRun, JourneySend, Outcome, Reach, RunPage,
    SentMessage, AUDIENCE_PAGE, BACKTRACK_LIMIT, NIGHTLY,
};

/// A query of the journeys capability.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum JourneysQuery {
    /// Create or update the configuration of (brand, `child_business_id`, type): [`Saved`].
    Save {
        /// The outlet (`"0"` or the brand's id for a brand-wide journey, as the caller sends it).
        child_business_id: String,
        /// The journey type.
        campaign_type_id: String,
        /// The type's `campaign_type` (denormalised for the builders).
        campaign_type: String,
        /// Channels, templates, thresholds.
        campaign_data: Box<CampaignData>,
    },
    /// Turn a configuration on or off: the [`JourneyConfig`] after it.
    Enable {
        /// Its id.
        campaign_journey_id: String,
        /// On (1) or off (0).
        enabled: bool,
    },
    /// One configuration: [`JourneyConfig`].
    View {
        /// Its id.
        campaign_journey_id: String,
    },
    /// The brand's configurations, optionally of one outlet: [`Journeys`].
    List {
        /// Only this outlet's.
        child_business_id: Option<String>,
    },
    /// The brand's journey settings, after replacing them with `set` when given:
    /// [`JourneySettings`].
    Settings {
        /// The new settings.
        set: Option<JourneySettings>,
    },
    /// One page of the nightly run as at `now`: [`RunPage`].
    RunPage {
        /// The run's time.
        now: DateTime<Utc>,
        /// The last customer of the previous page.
        after: Option<String>,
    },
    /// Re-attribute the orders after the sends of the journeys of these types: [`Attributed`].
    Attribute {
        /// The run's time.
        now: DateTime<Utc>,
        /// Journey types.
        campaign_types: Vec<String>,
    },
    /// The send history (newest day first), optionally of one journey: [`Runs`].
    Runs {
        /// Only this journey's.
        campaign_journey_id: Option<String>,
    },
    /// A page of one journey's audience (its decisions, with attributed orders): [`Audience`].
    Audience {
        /// The journey.
        campaign_journey_id: String,
        /// Decisions to pass over.
        offset: usize,
        /// Page size.
        limit: usize,
    },
    /// A journey's ROI: [`RoiSummary`].
    Roi {
        /// The journey.
        campaign_journey_id: String,
    },
    /// Remind the customers of the brand's abandoned `carts` as at `now`: [`CartsHandled`].
    Carts {
        /// The run's time.
        now: DateTime<Utc>,
        /// The brand's open carts.
        carts: Vec<OpenCart>,
    },
    /// Add a campaign tag: the [`CampaignTag`]; a name the brand has already (letter case
    /// aside) is [`QueryError::Invalid`].
    CreateTag {
        /// The tag's name.
        tag_name: String,
        /// Its colour, when given.
        color: Option<String>,
    },
    /// The brand's campaign tags, by name: [`Tags`].
    Tags,
    /// The wallet transactions of a campaign (`auto_id`), of one outlet or all: [`Report`].
    Report {
        /// The campaign (a journey id).
        auto_id: String,
        /// Only this outlet's wallet.
        business_id: Option<String>,
    },
    /// Create a bulk campaign: the [`BulkCampaign`] with the brand's next id.
    BulkCreate {
        /// What it is.
        spec: BulkSpec,
        /// Now.
        now: DateTime<Utc>,
    },
    /// Pay for and queue a chunk of a bulk campaign's recipients: the [`BulkCampaign`] after it.
    BulkQueue {
        /// The campaign.
        campaign_id: u64,
        /// At most [`BULK_CHUNK`] recipients.
        recipients: Vec<BulkRecipient>,
        /// Now.
        now: DateTime<Utc>,
    },
    /// Count a click on a chat tracking link against the journey send: [`Clicked`].
    Click {
        /// The journey.
        campaign_journey_id: String,
        /// The customer.
        phone: String,
        /// The send's occasion.
        occasion: String,
        /// When.
        now: DateTime<Utc>,
    },
    /// Set the brand's `business_configs.auto_campaign` flags: [`FlagsSynced`].
    SyncFlags {
        /// Now.
        now: DateTime<Utc>,
    },
    /// The brand's journey figures of the IST days `from..=to`: [`Health`].
    Health {
        /// First day, `YYYY-MM-DD`.
        from: String,
        /// Last day, `YYYY-MM-DD`.
        to: String,
    },
}

/// A click's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Clicked {
    /// False when there is no such journey send (nothing counted).
    pub counted: bool,
    /// Its clicks after this one.
    pub clicks: u32,
}

/// A campaign tag (table `campaign_tags`, partition tenant, clustering its id).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// The brand's campaign tags.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tags {
    /// By name.
    pub data: Vec<CampaignTag>,
}

/// A campaign's wallet transactions.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// Each transaction with its `business_id`, oldest first per outlet.
    pub data: Vec<Value>,
    /// Transactions.
    pub count: usize,
    /// Debited in all (decimal text).
    pub total_debited: String,
}

/// The send history.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Runs {
    /// Newest day first.
    pub data: Vec<JourneyRun>,
}

/// A page of a journey's audience.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Audience {
    /// The decisions, in phone order.
    pub data: Vec<JourneySend>,
    /// Decisions in all.
    pub total: usize,
}

/// IST quiet hours, `HH:MM` to `HH:MM` (the end excluded; a start after the end spans midnight).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuietHours {
    /// Start, `HH:MM` IST.
    pub start: String,
    /// End, `HH:MM` IST.
    pub end: String,
}

fn minutes(text: &str) -> Option<u32> {
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JourneySettings {
    /// Quiet hours, when set.
    #[serde(default)]
    pub quiet_hours: Option<QuietHours>,
    /// Journey messages per customer per rolling 7 days at most, when set.
    #[serde(default)]
    pub frequency_cap: Option<u32>,
}

/// The brand's journey settings (cached in the actor).
pub async fn settings(brand: &mut Brand) -> Result<JourneySettings, StoreError> {
    if let Some(cached) = &brand.journey_settings {
        return Ok(cached.clone());
    }
    let stored: JourneySettings = brand.repo().get(&keys::journey_settings(&brand.tenant)).await?.unwrap_or_default();
    brand.journey_settings = Some(stored.clone());
    Ok(stored)
}

/// A channel a journey sends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// A save's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Saved {
    /// The configuration's id.
    pub campaign_journey_id: String,
    /// False when an existing configuration was updated.
    pub created: bool,
}

/// The brand's configurations.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Journeys {
    /// By id.
    pub data: Vec<JourneyConfig>,
}

/// A field of a journey type's form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldOption {
    /// The value stored.
    pub value: String,
    /// Label.
    pub label: String,
}

/// A journey type (spec record "Journey type").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

fn field(ref_id: &str, label: &str, input: &str, required: bool, options: &[(&str, &str)]) -> JourneyField {
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
fn builtin(
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
pub async fn journeys(brand: &mut Brand) -> Result<Vec<JourneyConfig>, StoreError> {
    if let Some(cached) = &brand.journeys {
        return Ok(cached.clone());
    }
    let all: Vec<JourneyConfig> = brand.repo().all(CAMPAIGN_JOURNEYS, &brand.tenant).await?;
    brand.journeys = Some(all.clone());
    Ok(all)
}

/// A template with the customer's fields put in: `x_cust_name`, `x_cust_mobile` and
/// `x_cust_eid` (the customer's email; empty when unknown).
pub fn fill(template: &str, customer: &Customer) -> String {
    template
        .replace("x_cust_name", customer.name.as_deref().unwrap_or(""))
        .replace("x_cust_mobile", &customer.phone)
        .replace("x_cust_eid", customer.email.as_deref().unwrap_or(""))
}

/// The enabled journey of `campaign_type` that applies to `outlet`: the outlet's own, else the
/// brand-wide one (`child_business_id` `"0"` or the brand's id).
pub fn applicable<'a>(
    all: &'a [JourneyConfig],
    campaign_type: &str,
    outlet: &str,
    tenant: &str,
) -> Option<&'a JourneyConfig> {
    let enabled =
        |j: &&JourneyConfig| j.campaign_type == campaign_type && j.campaign_enabled == 1 && j.config_enabled == 1;
    all.iter()
        .filter(enabled)
        .find(|j| j.child_business_id == outlet)
        .or_else(|| all.iter().filter(enabled).find(|j| j.child_business_id == "0" || j.child_business_id == tenant))
}

/// The welcome journey as an order reaction: a customer's first order (a new order that makes
/// their order count 1) gets the outlet's (or the brand's) enabled welcome journey through
/// [`reach`] (occasion `first-order`): holdout, daily cap and frequency cap apply, then one
/// message per channel, paid by the order's outlet wallet (campaign prices, `auto_id` = the
/// journey), delivered today (IST). A replayed order pays nothing (the decision and the send ids
/// are per customer). A wallet that cannot pay skips the customer
/// (`engage_sends_skipped_total{reason="balance"}`); a push channel needs a registered push token.
pub struct SendWelcome;

#[async_trait]
impl OrderReaction for SendWelcome {
    fn name(&self) -> &'static str {
        "welcome"
    }

    async fn react(
        &self,
        brand: &mut Brand,
        order: &OrderEvent<'_>,
        customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        if order.applied != Applied::New || customer.total_orders() != 1 {
            return Ok(());
        }
        let all = journeys(brand).await?;
        let outlet = order.facts.business_id.clone();
        let Some(journey) = applicable(&all, "welcome", &outlet, &brand.tenant).cloned() else {
            return Ok(());
        };
        reach_one(brand, &journey, customer, &outlet, "first-order", order.received, ops).await?;
        Ok(())
    }
}

/// The wallet transactions (with their outlet) whose `auto_id` passes `wanted`, of `business_id`'s
/// wallet or every outlet's, oldest first per outlet.
async fn wallet_txns_of(
    brand: &Brand,
    business_id: Option<String>,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<(String, WalletTxn)>, QueryError> {
    let outlets = match business_id {
        Some(outlet) => vec![outlet],
        None => brand.repo().clusterings(BUSINESS_WALLETS, &brand.tenant).await?,
    };
    let mut found = Vec::new();
    for outlet in outlets {
        let partition = keys::wallet_txns_partition(&brand.tenant, &outlet);
        brand
            .repo()
            .visit(WALLET_TXNS, &partition, |txn: WalletTxn| {
                if txn.auto_id.as_deref().is_some_and(&wanted) {
                    found.push((outlet.clone(), txn));
                }
            })
            .await?;
    }
    Ok(found)
}

/// The wallet transactions whose `auto_id` is `auto_id`.
async fn report(brand: &Brand, auto_id: &str, business_id: Option<String>) -> Result<Report, QueryError> {
    let mut data = Vec::new();
    let mut total = rust_decimal::Decimal::ZERO;
    for (outlet, txn) in wallet_txns_of(brand, business_id, |id| id == auto_id).await? {
        if txn.transaction_type == "debit" {
            total += txn.amount;
        }
        let mut line = serde_json::to_value(&txn).unwrap_or_default();
        line["business_id"] = Value::String(outlet);
        data.push(line);
    }
    Ok(Report { count: data.len(), data, total_debited: total.normalize().to_string() })
}

/// Counts a click on the tracking link of a journey send.
async fn click(
    brand: &mut Brand,
    journey: &str,
    phone: &str,
    occasion: &str,
    now: DateTime<Utc>,
) -> Result<Clicked, QueryError> {
    let key = keys::journey_send(&brand.tenant, journey, phone, occasion);
    let Some(mut send) = brand.repo().get::<JourneySend>(&key).await? else {
        return Ok(Clicked { counted: false, clicks: 0 });
    };
    send.clicks += 1;
    send.first_click_at.get_or_insert(now);
    brand.batch(vec![key.put(&send)]).await?;
    metrics::counter!("engage_journey_link_clicks_total").increment(1);
    Ok(Clicked { counted: true, clicks: send.clicks })
}

async fn config(brand: &Brand, id: &str) -> Result<JourneyConfig, QueryError> {
    brand.repo().get(&keys::campaign_journey(&brand.tenant, id)).await?.ok_or(QueryError::NotFound)
}

/// Answers a journeys query.
pub async fn handle(brand: &mut Brand, query: JourneysQuery) -> QueryReply {
    let now = Utc::now();
    match query {
        JourneysQuery::Save { child_business_id, campaign_type_id, campaign_type, campaign_data } => {
            let id = journey_id(&brand.tenant, &child_business_id, &campaign_type_id);
            let existing: Option<JourneyConfig> = brand.repo().get(&keys::campaign_journey(&brand.tenant, &id)).await?;
            let created = existing.is_none();
            let row = JourneyConfig {
                campaign_journey_id: id.clone(),
                parent_business_id: brand.tenant.clone(),
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
            let index = keys::journey_brand(&brand.tenant).put(&serde_json::json!({}));
            brand.batch(vec![keys::campaign_journey(&brand.tenant, &id).put(&row), index]).await?;
            brand.journeys = None;
            reply(Ok(Saved { campaign_journey_id: id, created }))
        }
        JourneysQuery::Enable { campaign_journey_id, enabled } => {
            let mut row = config(brand, &campaign_journey_id).await?;
            if enabled && row.campaign_enabled == 0 {
                row.activated_at = Some(now);
            }
            row.campaign_enabled = u8::from(enabled);
            row.updated_at = now;
            brand.batch(vec![keys::campaign_journey(&brand.tenant, &campaign_journey_id).put(&row)]).await?;
            brand.journeys = None;
            reply(Ok(row))
        }
        JourneysQuery::View { campaign_journey_id } => reply(config(brand, &campaign_journey_id).await),
        JourneysQuery::List { child_business_id } => {
            let mut data = journeys(brand).await?;
            if let Some(child) = child_business_id {
                data.retain(|c| c.child_business_id == child);
            }
            reply(Ok(Journeys { data }))
        }
        JourneysQuery::Settings { set } => {
            if let Some(set) = set {
                brand.batch(vec![keys::journey_settings(&brand.tenant).put(&set)]).await?;
                brand.journey_settings = Some(set);
            }
            reply(settings(brand).await.map_err(QueryError::from))
        }
        JourneysQuery::RunPage { now, after } => reply(run_page(brand, now, after).await),
        JourneysQuery::Attribute { now, campaign_types } => reply(attribute(brand, now, &campaign_types).await),
        JourneysQuery::Runs { campaign_journey_id } => {
            let mut data: Vec<JourneyRun> = brand.repo().all(JOURNEY_RUNS, &brand.tenant).await?;
            if let Some(id) = campaign_journey_id {
                data.retain(|run| run.campaign_journey_id == id);
            }
            data.sort_by(|a, b| b.run_day.cmp(&a.run_day).then(a.campaign_journey_id.cmp(&b.campaign_journey_id)));
            reply(Ok(Runs { data }))
        }
        JourneysQuery::Audience { campaign_journey_id, offset, limit } => {
            config(brand, &campaign_journey_id).await?;
            let partition = keys::journey_sends_partition(&brand.tenant, &campaign_journey_id);
            let (mut data, mut total) = (Vec::new(), 0usize);
            brand
                .repo()
                .visit(JOURNEY_SENDS, &partition, |decision: JourneySend| {
                    if total >= offset && data.len() < limit {
                        data.push(decision);
                    }
                    total += 1;
                })
                .await?;
            reply(Ok(Audience { data, total }))
        }
        JourneysQuery::Carts { now, carts } => reply(abandoned(brand, now, carts).await),
        JourneysQuery::CreateTag { tag_name, color } => {
            let tag_id = digest(&["campaign-tag", &brand.tenant, &tag_name.trim().to_lowercase()]);
            let key = keys::campaign_tag(&brand.tenant, &tag_id);
            if brand.repo().get::<CampaignTag>(&key).await?.is_some() {
                return reply::<CampaignTag>(Err(QueryError::Duplicate(format!(
                    "a tag named {tag_name} exists already"
                ))));
            }
            let tag = CampaignTag { tag_id, tag_name: tag_name.trim().to_owned(), color, created_at: now };
            brand.batch(vec![key.put(&tag)]).await?;
            reply(Ok(tag))
        }
        JourneysQuery::Tags => {
            let mut data: Vec<CampaignTag> = brand.repo().all(CAMPAIGN_TAGS, &brand.tenant).await?;
            data.sort_by_key(|tag| tag.tag_name.to_lowercase());
            reply(Ok(Tags { data }))
        }
        JourneysQuery::Report { auto_id, business_id } => reply(report(brand, &auto_id, business_id).await),
        JourneysQuery::BulkCreate { spec, now } => reply(bulk::create(brand, spec, now).await),
        JourneysQuery::BulkQueue { campaign_id, recipients, now } => {
            reply(bulk::queue(brand, campaign_id, recipients, now).await)
        }
        JourneysQuery::Click { campaign_journey_id, phone, occasion, now } => {
            reply(click(brand, &campaign_journey_id, &phone, &occasion, now).await)
        }
        JourneysQuery::SyncFlags { now } => reply(health::sync_flags(brand, now).await),
        JourneysQuery::Health { from, to } => reply(health::health(brand, &from, &to).await),
        JourneysQuery::Roi { campaign_journey_id } => {
            let journey = config(brand, &campaign_journey_id).await?;
            let first = journey.campaign_data.channels.first().copied();
            reply(roi::summary(brand, &campaign_journey_id, first).await)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eight_types_have_fixed_distinct_hex_ids() {
        let types = builtin_types();
        assert_eq!(types.len(), 8);
        let mut ids: Vec<&str> = types.iter().map(|t| t.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 8);
        for t in &types {
            assert!(
                t.id.len() == 24 && t.id.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
                "{}",
                t.id
            );
        }
        let id = journey_id("brand", "outlet", &types[0].id);
        assert_eq!((id.len(), id == journey_id("brand", "outlet", &types[0].id)), (24, true));
        assert_ne!(id, journey_id("brand", "other", &types[0].id));
    }

    #[test]
    fn a_save_needs_a_template_per_channel_and_the_types_own_fields() {
        let lost = builtin_types().into_iter().find(|t| t.campaign_type == "lost_customers").unwrap();
        let mut data = CampaignData { channels: vec![JourneyChannel::Sms], ..CampaignData::default() };
        assert_eq!(check(&lost, &data).unwrap_err().0, "sms_template");
        data.sms_template = Some("We miss you x_cust_name".into());
        assert_eq!(check(&lost, &data).unwrap_err().0, "days");
        data.days = Some(30);
        assert_eq!(check(&lost, &data), Ok(()));
        data.send_days_type = Some("nope".into());
        assert_eq!(check(&lost, &data).unwrap_err().0, "send_days_type");
    }

    #[test]
    fn templates_are_filled_and_the_outlets_journey_comes_before_the_brands() {
        let customer = Customer {
            phone: "9876543210".into(),
            name: Some("Asha".into()),
            email: Some("asha@example.com".into()),
            ..Customer::default()
        };
        assert_eq!(
            fill("Hi x_cust_name, x_cust_mobile, x_cust_eid", &customer),
            "Hi Asha, 9876543210, asha@example.com"
        );
        let at = Utc::now();
        let journey = |id: &str, child: &str, enabled: u8| JourneyConfig {
            campaign_journey_id: id.into(),
            parent_business_id: "b".into(),
            child_business_id: child.into(),
            campaign_type_id: "t".into(),
            campaign_type: "welcome".into(),
            campaign_data: CampaignData::default(),
            campaign_enabled: enabled,
            config_enabled: 1,
            activated_at: None,
            created_at: at,
            updated_at: at,
        };
        let all = vec![journey("brand", "0", 1), journey("o1", "o1", 1), journey("o2", "o2", 0)];
        assert_eq!(applicable(&all, "welcome", "o1", "b").map(|j| j.campaign_journey_id.as_str()), Some("o1"));
        assert_eq!(applicable(&all, "welcome", "o2", "b").map(|j| j.campaign_journey_id.as_str()), Some("brand"));
        assert!(applicable(&all, "birthday", "o1", "b").is_none());
    }
}
