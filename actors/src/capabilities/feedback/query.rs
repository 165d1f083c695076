//! The feedback questions (`FeedbackQuery`) and their reply types.

use crate::signed_links::FormClaims;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::query::question;
use std::collections::BTreeMap;

#[allow(unused_imports)]
use super::*;

/// A query of the feedback capability.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum FeedbackQuery {
    /// See [`SaveConfig`].
    SaveConfig(SaveConfig),
    /// See [`Config`].
    Config(Config),
    /// See [`Open`].
    Open(Open),
    /// See [`Submit`].
    Submit(Submit),
    /// See [`Requests`].
    Requests(Requests),
    /// See [`Ratings`].
    Ratings(Ratings),
    /// See [`GetRatingDays`].
    RatingDays(GetRatingDays),
    /// See [`NpsRecord`].
    NpsRecord(NpsRecord),
    /// See [`NpsList`].
    NpsList(NpsList),
    /// See [`GetNpsReport`].
    NpsReport(GetNpsReport),
    /// See [`NpsExport`].
    NpsExport(NpsExport),
    /// See [`NpsConvert`].
    NpsConvert(NpsConvert),
    /// See [`StoreReviews`].
    StoreReviews(StoreReviews),
    /// See [`SyncConfigs`].
    SyncConfigs(SyncConfigs),
    /// See [`GetOrdersSummary`].
    OrdersSummary(GetOrdersSummary),
    /// See [`Mis`].
    Mis(Mis),
    /// See [`super::legacy::QueueLegacySms`].
    QueueLegacySms(super::legacy::QueueLegacySms),
}

question! {
    /// Create or replace a configuration: [`FeedbackConfig`].
    pub struct SaveConfig {
        /// The configuration.
        pub config: Box<FeedbackConfig>,
    } -> FeedbackConfig;
}

question! {
    /// A business's configuration: [`FeedbackConfig`]; not found when it has none.
    pub struct Config {
        /// The outlet, or `"0"`.
        pub child_business_id: String,
    } -> FeedbackConfig;
}

question! {
    /// The form of a link was opened: [`FormView`].
    pub struct Open {
        /// The link's claims.
        pub claims: FormClaims,
    } -> FormView;
}

question! {
    /// The form was submitted: [`Submitted`].
    pub struct Submit {
        /// The link's claims.
        pub claims: FormClaims,
        /// The link's token (`x_jwt_token` of a recovery message).
        pub token: String,
        /// What was submitted.
        pub submission: Submission,
        /// Now.
        pub now: DateTime<Utc>,
    } -> Submitted;
}

question! {
    /// Feedback requests, newest first, 20 a page: [`RequestPage`].
    pub struct Requests {
        /// Only this outlet's.
        pub business_id: Option<String>,
        /// From 1.
        pub page: u64,
        /// First IST day.
        pub start: Option<String>,
        /// Last IST day.
        pub end: Option<String>,
    } -> RequestPage;
}

question! {
    /// Ratings of the sources, newest first, 20 a page: [`RatingPage`].
    pub struct Ratings {
        /// Only this outlet's.
        pub business_id: Option<String>,
        /// Only these sources (`'1'`, `'2'` internal, `'3'` form; empty: all).
        pub sources: Vec<String>,
        /// From 1.
        pub page: u64,
        /// First IST day.
        pub start: Option<String>,
        /// Last IST day.
        pub end: Option<String>,
    } -> RatingPage;
}

question! {
    /// Ratings per IST day: [`RatingDays`].
    pub struct GetRatingDays {
        /// Only this outlet's.
        pub business_id: Option<String>,
        /// First IST day.
        pub start: Option<String>,
        /// Last IST day.
        pub end: Option<String>,
    } -> RatingDays;
}

question! {
    /// Store an answer of `/nps/data`: [`nps::NpsResponse`].
    pub struct NpsRecord {
        /// The answer.
        pub answer: nps::NpsAnswer,
        /// Now.
        pub now: DateTime<Utc>,
    } -> nps::NpsResponse;
}

question! {
    /// A page of NPS responses, newest first: [`nps::NpsPage`].
    pub struct NpsList {
        /// Only this outlet's.
        pub business_id: Option<String>,
        /// Only this answer.
        pub rating: Option<u8>,
        /// Only this customer's.
        pub mobile_number: Option<String>,
        /// From 1.
        pub page: u64,
    } -> nps::NpsPage;
}

question! {
    /// The NPS of a period: [`nps::NpsReport`].
    pub struct GetNpsReport {
        /// Only this outlet's.
        pub business_id: Option<String>,
        /// First IST day.
        pub start: String,
        /// Last IST day.
        pub end: String,
        /// The buckets.
        pub buckets: nps::Buckets,
    } -> nps::NpsReport;
}

question! {
    /// Every response of a period, newest first (the export): [`nps::NpsPage`].
    pub struct NpsExport {
        /// Only this outlet's.
        pub business_id: Option<String>,
        /// First IST day.
        pub start: String,
        /// Last IST day.
        pub end: String,
    } -> nps::NpsPage;
}

question! {
    /// The conversion of IST day `day`'s form ratings: [`nps::Converted`].
    pub struct NpsConvert {
        /// The IST day.
        pub day: String,
    } -> nps::Converted;
}

question! {
    /// App-store reviews of store `store` (`a` or `b`), newest first, 20 a page: [`ReviewPage`].
    pub struct StoreReviews {
        /// `a` or `b`.
        pub store: String,
        /// From 1.
        pub page: u64,
    } -> ReviewPage;
}

question! {
    /// The 12:06 sync: the brand's record, when its `feedback_flow` is 1, copied to each outlet
    /// the brand knows that has no record of its own: [`ConfigsSynced`].
    pub struct SyncConfigs {
        /// Now.
        pub now: DateTime<Utc>,
    } -> ConfigsSynced;
}

question! {
    /// Orders of a period with the valid/invalid-number summary: [`OrdersSummary`].
    pub struct GetOrdersSummary {
        /// Only this outlet's.
        pub business_id: Option<String>,
        /// First IST day.
        pub start: String,
        /// Last IST day (a longer period keeps the 32 days up to it).
        pub end: String,
        /// From 1.
        pub page: u64,
    } -> OrdersSummary;
}

question! {
    /// The funnel between two IST days: [`FeedbackMis`].
    pub struct Mis {
        /// Only this outlet's.
        pub business_id: Option<String>,
        /// First IST day.
        pub start: String,
        /// Last IST day.
        pub end: String,
    } -> FeedbackMis;
}

/// A page of app-store reviews, each the store's own record.
pub type ReviewPage = crate::query::Page<serde_json::Value>;

/// What the config sync did.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConfigsSynced {
    /// Outlets given the brand's record.
    pub copied: usize,
    /// Outlets with a record of their own, left alone.
    pub own: usize,
}

/// One order of the summary.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SummaryOrder {
    /// The outlet.
    pub business_id: String,
    /// The order.
    pub order_id: String,
    /// The customer's number as sent.
    pub mobile_number: String,
    /// The customer's name, when sent.
    pub name: Option<String>,
    /// The amount.
    pub amount: String,
    /// When engage accepted it (IST, `YYYY-MM-DD HH:mm:ss`).
    pub inserted_at: String,
    /// Whether the number can be sent a feedback link or a bill (`[6-9]\d{9}`, not sequential,
    /// not one digit repeated).
    pub valid_number: bool,
}

/// Orders with the number summary.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OrdersSummary {
    /// A page of orders (20), newest first.
    pub data: Vec<SummaryOrder>,
    /// Orders in the period (each once: its latest version).
    pub total_orders: u64,
    /// Of which with a valid number.
    pub valid_numbers: u64,
    /// Of which with an invalid number.
    pub invalid_numbers: u64,
    /// From 1.
    pub page: u64,
    /// Per page.
    pub page_size: u64,
}

/// A stored rating and the recovery it started, if any.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Submitted {
    /// The rating.
    pub rating: Rating,
    /// The low-rating recovery.
    pub recovery: Option<recovery::Recovery>,
    /// How the thank-you page presents the brand.
    #[serde(default)]
    pub branding: crate::capabilities::branding::Branding,
}

/// What the form shows.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FormView {
    /// The brand's questions.
    pub questions: Vec<String>,
    /// The customer's name, when known.
    pub name: String,
    /// Whether it was submitted already.
    pub is_submitted: bool,
    /// How the form presents the brand.
    #[serde(default)]
    pub branding: crate::capabilities::branding::Branding,
}

/// A page of feedback requests.
pub type RequestPage = crate::query::Page<FeedbackRequest>;

/// The funnel of a period.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FeedbackMis {
    /// Totals.
    pub totals: FeedbackFunnel,
    /// Per IST day and outlet.
    pub days: Vec<FeedbackFunnel>,
}

/// A page of ratings.
pub type RatingPage = crate::query::Page<Rating>;

/// Ratings per IST day, the average, and how customers heard about the brand.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RatingDays {
    /// Per day: `{date, rating_count, avg_rating}`.
    pub days: Vec<RatingDay>,
    /// `Hear About Us From` answers and their counts.
    pub hear_about_us: BTreeMap<String, u64>,
    /// All ratings of the period.
    pub ratings_done: u64,
    /// Their average (two decimals).
    pub avg_rating: f64,
    /// The latest 5-star ratings whose comment has at least 100 characters (newest first, 10).
    pub latest: Vec<Rating>,
}

/// One day's ratings.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RatingDay {
    /// IST day.
    pub date: String,
    /// Ratings.
    pub rating_count: u64,
    /// Their average (two decimals).
    pub avg_rating: f64,
}

/// Latest long 5-star ratings listed.
pub const LATEST_RATINGS: usize = 10;

/// The shortest comment a latest rating has.
pub const LATEST_COMMENT: usize = 100;
