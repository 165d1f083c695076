//! The answers of the journey routes ([`crate::platform::journeys`]), each a type: `/openapi.json` documents
//! each route's 200 from these.

use schemars::JsonSchema;
use serde::Serialize;

use engage_actors::capabilities::journeys::{JourneyConfig, JourneyField, JourneyType, RoiSummary};

pub use crate::platform::edge::upload::InvalidLine;

/// A journey type, with how many of the brand's configurations use it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TypeInUse {
    /// The type.
    #[serde(flatten)]
    pub journey_type: JourneyType,
    /// Its configurations.
    pub roi: TypeUse,
}

/// How many configurations of a type the brand has, and how many are on.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TypeUse {
    /// Configurations.
    pub configured: usize,
    /// Configurations with `campaign_enabled` 1.
    pub enabled: usize,
}

/// A type's form.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TypeFields {
    /// The type.
    pub campaign_type_id: String,
    /// `welcome`, `birthday`, …
    pub campaign_type: String,
    /// Its form fields.
    pub fields: Vec<JourneyField>,
}

/// A send-timing option.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DayOption {
    /// Its id.
    pub id: &'static str,
    /// Its label.
    pub title: &'static str,
    /// Days relative to the customer's event; null: as soon as the trigger fires.
    pub offset_days: Option<i32>,
}

/// `{message, campaign_journey_id}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct JourneySaved {
    /// "journey saved" (new) or "journey updated".
    pub message: &'static str,
    /// The configuration's id.
    pub campaign_journey_id: String,
}

/// `{campaign_journey_id, campaign_enabled}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Enabled {
    /// The configuration.
    pub campaign_journey_id: String,
    /// 1 on, 0 off.
    pub campaign_enabled: u8,
}

/// The brand's configurations by outlet.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Mapped {
    /// The brand's `auto_campaign` flag (null before the first daily sync).
    pub auto_campaign: Option<u8>,
    /// By outlet.
    pub data: Vec<OutletJourneys>,
}

/// One outlet's configurations.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OutletJourneys {
    /// The outlet (`0`: the whole brand).
    pub child_business_id: String,
    /// The outlet's `auto_campaign` flag.
    pub auto_campaign: Option<u8>,
    /// Its configurations, each with its ROI.
    pub journeys: Vec<JourneyRoi>,
}

/// A configuration and its ROI.
#[derive(Debug, Serialize, JsonSchema)]
pub struct JourneyRoi {
    /// The configuration.
    #[serde(flatten)]
    pub journey: JourneyConfig,
    /// Its ROI.
    pub roi: RoiSummary,
}

/// A page of a journey's audience.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AudiencePage {
    /// The decisions, in phone order.
    pub data: Vec<engage_actors::capabilities::journeys::JourneySend>,
    /// Decisions in all.
    pub total: usize,
    /// This page, from 1.
    pub page: usize,
    /// Per page.
    pub page_size: usize,
}

/// What a bulk campaign upload queued.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BulkQueued {
    /// The campaign.
    pub campaign_id: u64,
    /// Messages queued (paid).
    pub queued_recipients: u32,
    /// Recipients the wallet could not pay for.
    pub unpaid: u32,
    /// Recipients left out because they unsubscribed from marketing on the channel (nothing
    /// debited).
    pub unsubscribed: u32,
    /// Recipients left out because the brand's own sender would refuse the message (an SMS
    /// template without its DLT id; nothing debited).
    pub refused: u32,
    /// Why the brand's sender refuses the message, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_reason: Option<String>,
    /// Its id in the campaign report (`/crm_api/automated/campaigns/report`).
    pub auto_id: String,
    /// The IST day of its sends, `YYYYMMDD`.
    pub delivery_date: String,
    /// Lines refused.
    pub invalid: Vec<InvalidLine>,
    /// Lines whose number came before in the file.
    pub duplicates: Vec<DuplicatePhone>,
}

/// A line whose number came before in the file.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DuplicatePhone {
    /// Line of the file.
    pub line: usize,
    /// The number.
    pub phone: String,
}
