//! The journey questions (`JourneysQuery`) and their reply types.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[allow(unused_imports)]
use super::*;

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
