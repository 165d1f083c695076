//! The journey questions (`JourneysQuery`) and their reply types.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::query::question;

#[allow(unused_imports)]
use super::*;

/// A query of the journeys capability.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum JourneysQuery {
    /// See [`Save`].
    Save(Save),
    /// See [`Enable`].
    Enable(Enable),
    /// See [`View`].
    View(View),
    /// See [`List`].
    List(List),
    /// See [`Settings`].
    Settings(Settings),
    /// See [`GetRunPage`].
    RunPage(GetRunPage),
    /// See [`Attribute`].
    Attribute(Attribute),
    /// See [`GetRuns`].
    Runs(GetRuns),
    /// See [`GetAudience`].
    Audience(GetAudience),
    /// See [`Roi`].
    Roi(Roi),
    /// See [`Carts`].
    Carts(Carts),
    /// See [`CreateTag`].
    CreateTag(CreateTag),
    /// See [`GetTags`].
    Tags(GetTags),
    /// See [`GetReport`].
    Report(GetReport),
    /// See [`BulkCreate`].
    BulkCreate(BulkCreate),
    /// See [`BulkQueue`].
    BulkQueue(BulkQueue),
    /// See [`Click`].
    Click(Click),
    /// See [`SyncFlags`].
    SyncFlags(SyncFlags),
    /// See [`GetHealth`].
    Health(GetHealth),
    /// See [`GetTypes`].
    Types(GetTypes),
    /// See [`AddType`].
    AddType(AddType),
    /// See [`GetFlags`].
    Flags(GetFlags),
}

question! {
    /// The brand's `business_configs` rows (the `auto_campaign` flag of each outlet, `"0"` the
    /// brand's): [`Flags`].
    pub struct GetFlags {} -> Flags;
}

/// The brand's `business_configs` rows.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Flags {
    /// One per outlet that has one.
    pub data: Vec<BusinessConfig>,
}

question! {
    /// Every journey type the brand sees: [`JourneyTypes`].
    pub struct GetTypes {} -> JourneyTypes;
}

question! {
    /// Add a journey type of the brand's own, with the common form fields: the [`JourneyType`]; a
    /// `campaign_type` the brand sees already is [`QueryError::Duplicate`].
    pub struct AddType {
        /// `welcome`, `birthday`, … (unique among the types the brand sees).
        pub campaign_type: String,
        /// Title.
        pub title: String,
        /// Description.
        pub description: String,
        /// Icon.
        pub icon_url: String,
        /// `'1'` event-triggered, `'2'` scheduled.
        pub execution_type: String,
    } -> JourneyType;
}

/// The journey types a brand sees.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JourneyTypes {
    /// Built-in first, then the legacy ones, then the brand's own.
    pub data: Vec<JourneyType>,
}

question! {
    /// Create or update the configuration of (brand, `child_business_id`, type): [`Saved`].
    pub struct Save {
        /// The outlet (`"0"` or the brand's id for a brand-wide journey, as the caller sends it).
        pub child_business_id: String,
        /// The journey type.
        pub campaign_type_id: String,
        /// The type's `campaign_type` (denormalised for the builders).
        pub campaign_type: String,
        /// Channels, templates, thresholds.
        pub campaign_data: Box<CampaignData>,
    } -> Saved;
}

question! {
    /// Turn a configuration on or off: the [`JourneyConfig`] after it.
    pub struct Enable {
        /// Its id.
        pub campaign_journey_id: String,
        /// On (1) or off (0).
        pub enabled: bool,
    } -> JourneyConfig;
}

question! {
    /// One configuration: [`JourneyConfig`].
    pub struct View {
        /// Its id.
        pub campaign_journey_id: String,
    } -> JourneyConfig;
}

question! {
    /// The brand's configurations, optionally of one outlet: [`Journeys`].
    pub struct List {
        /// Only this outlet's.
        pub child_business_id: Option<String>,
    } -> Journeys;
}

question! {
    /// The brand's journey settings, after replacing them with `set` when given:
    /// [`JourneySettings`].
    pub struct Settings {
        /// The new settings.
        pub set: Option<JourneySettings>,
    } -> JourneySettings;
}

question! {
    /// One page of the nightly run as at `now`: [`RunPage`].
    pub struct GetRunPage {
        /// The run's time.
        pub now: DateTime<Utc>,
        /// The last customer of the previous page.
        pub after: Option<String>,
    } -> RunPage;
}

question! {
    /// Re-attribute the orders after the sends of the journeys of these types: [`Attributed`].
    pub struct Attribute {
        /// The run's time.
        pub now: DateTime<Utc>,
        /// Journey types.
        pub campaign_types: Vec<String>,
    } -> Attributed;
}

question! {
    /// The send history (newest day first), optionally of one journey: [`Runs`].
    pub struct GetRuns {
        /// Only this journey's.
        pub campaign_journey_id: Option<String>,
    } -> Runs;
}

question! {
    /// A page of one journey's audience (its decisions, with attributed orders): [`Audience`].
    pub struct GetAudience {
        /// The journey.
        pub campaign_journey_id: String,
        /// Decisions to pass over.
        pub offset: usize,
        /// Page size.
        pub limit: usize,
    } -> Audience;
}

question! {
    /// A journey's ROI: [`RoiSummary`].
    pub struct Roi {
        /// The journey.
        pub campaign_journey_id: String,
    } -> RoiSummary;
}

question! {
    /// Remind the customers of the brand's abandoned `carts` as at `now`: [`CartsHandled`].
    pub struct Carts {
        /// The run's time.
        pub now: DateTime<Utc>,
        /// The brand's open carts.
        pub carts: Vec<OpenCart>,
    } -> CartsHandled;
}

question! {
    /// Add a campaign tag: the [`CampaignTag`]; a name the brand has already (letter case
    /// aside) is [`QueryError::Invalid`].
    pub struct CreateTag {
        /// The tag's name.
        pub tag_name: String,
        /// Its colour, when given.
        pub color: Option<String>,
    } -> CampaignTag;
}

question! {
    /// The brand's campaign tags, by name: [`Tags`].
    pub struct GetTags {} -> Tags;
}

question! {
    /// The wallet transactions of a campaign (`auto_id`), of one outlet or all: [`Report`].
    pub struct GetReport {
        /// The campaign (a journey id).
        pub auto_id: String,
        /// Only this outlet's wallet.
        pub business_id: Option<String>,
    } -> Report;
}

question! {
    /// Create a bulk campaign: the [`BulkCampaign`] with the brand's next id.
    pub struct BulkCreate {
        /// What it is.
        pub spec: BulkSpec,
        /// Now.
        pub now: DateTime<Utc>,
    } -> BulkCampaign;
}

question! {
    /// Pay for and queue a chunk of a bulk campaign's recipients: the [`BulkCampaign`] after it.
    pub struct BulkQueue {
        /// The campaign.
        pub campaign_id: u64,
        /// At most [`BULK_CHUNK`] recipients.
        pub recipients: Vec<BulkRecipient>,
        /// Now.
        pub now: DateTime<Utc>,
    } -> BulkCampaign;
}

question! {
    /// Count a click on a chat tracking link against the journey send: [`Clicked`].
    pub struct Click {
        /// The journey.
        pub campaign_journey_id: String,
        /// The customer.
        pub phone: String,
        /// The send's occasion.
        pub occasion: String,
        /// When.
        pub now: DateTime<Utc>,
    } -> Clicked;
}

question! {
    /// Set the brand's `business_configs.auto_campaign` flags: [`FlagsSynced`].
    pub struct SyncFlags {
        /// Now.
        pub now: DateTime<Utc>,
    } -> FlagsSynced;
}

question! {
    /// The brand's journey figures of the IST days `from..=to`: [`Health`].
    pub struct GetHealth {
        /// First day, `YYYY-MM-DD`.
        pub from: String,
        /// Last day, `YYYY-MM-DD`.
        pub to: String,
    } -> Health;
}

/// A click's answer.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Clicked {
    /// False when there is no such journey send (nothing counted).
    pub counted: bool,
    /// Its clicks after this one.
    pub clicks: u32,
}

/// The brand's campaign tags.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tags {
    /// By name.
    pub data: Vec<CampaignTag>,
}

/// A wallet transaction of a campaign, with the outlet whose wallet it moved.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CampaignTxn {
    /// The outlet.
    pub business_id: String,
    /// The transaction.
    #[serde(flatten)]
    pub txn: crate::capabilities::wallet::WalletTxn,
}

/// A campaign's wallet transactions.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    /// Each transaction with its `business_id`, oldest first per outlet.
    pub data: Vec<CampaignTxn>,
    /// Transactions.
    pub count: usize,
    /// Debited in all (decimal text).
    pub total_debited: String,
}

/// The send history.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Runs {
    /// Newest day first.
    pub data: Vec<JourneyRun>,
}

/// A page of a journey's audience.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Audience {
    /// The decisions, in phone order.
    pub data: Vec<JourneySend>,
    /// Decisions in all.
    pub total: usize,
}

/// A save's answer.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Saved {
    /// The configuration's id.
    pub campaign_journey_id: String,
    /// False when an existing configuration was updated.
    pub created: bool,
}

/// The brand's configurations.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Journeys {
    /// By id.
    pub data: Vec<JourneyConfig>,
}
