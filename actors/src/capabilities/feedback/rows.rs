//! The feedback rows a brand keeps: configurations, requests (links sent), the day's funnel, ratings and form answers.

use crate::domain::wallet::{Channel, TemplateType};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[allow(unused_imports)]
use super::*;

/// A business's feedback configuration (table `feedback_configs`, clustering the outlet, `"0"`
/// for the brand's own).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FeedbackConfig {
    /// The brand.
    pub parent_business_id: String,
    /// The outlet, or `"0"`.
    pub child_business_id: String,
    /// 0/1: this record applies.
    pub feedback_flow: u8,
    /// `'true'` sends the link by SMS.
    pub feedback_sms: String,
    /// `'true'` sends the link by chat.
    pub feedback_chat: String,
    /// Minutes after the order.
    pub feedback_time: i64,
    /// SMS text (`x_cust_name`, `x_cust_mobile`, `x_order_id`, `x_feedback_url`).
    pub sms_template: Option<String>,
    /// Chat text (the same variables).
    pub chat_template: Option<String>,
    /// `UTILITY` (default) or `MARKETING`.
    #[serde(default)]
    pub chat_template_type: TemplateType,
    /// SMS sender.
    pub sender_id: Option<String>,
    /// The brand's questions on the form.
    #[serde(default)]
    pub questions: Vec<String>,
    /// Whom a low rating alerts (numbers).
    #[serde(default)]
    pub alert_contacts: Vec<String>,
    /// Whom a low rating alerts (e-mails).
    #[serde(default)]
    pub alert_emails: Vec<String>,
    /// Changed.
    pub updated_at: Option<DateTime<Utc>>,
    /// The brand's app in app store A (its record only): the review sync reads its reviews.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_a_app_id: Option<String>,
    /// The brand's app in app store B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_b_app_id: Option<String>,
    /// Set on an outlet's record that the 12:06 sync copied from the brand's (and may copy again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied_from_brand_at: Option<DateTime<Utc>>,
}

impl FeedbackConfig {
    pub(super) fn channels(&self) -> Vec<Channel> {
        let on = |flag: &str| flag.eq_ignore_ascii_case("true");
        let mut channels = Vec::new();
        if on(&self.feedback_sms) {
            channels.push(Channel::Sms);
        }
        if on(&self.feedback_chat) {
            channels.push(Channel::Chat);
        }
        channels
    }
}

/// A feedback request: the link sent after one order (table `feedback_requests`, clustering
/// `outlet|orderId`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FeedbackRequest {
    /// The brand.
    pub parent_business_id: String,
    /// The outlet.
    pub child_business_id: String,
    /// The order.
    pub order_id: String,
    /// The customer.
    pub mobile_number: String,
    /// The customer's name.
    pub name: String,
    /// `sms`, `chat`.
    pub channels: Vec<Channel>,
    /// The form link.
    pub url: String,
    /// When it was queued.
    pub sent_at: DateTime<Utc>,
    /// When the message goes out.
    pub scheduled_at: DateTime<Utc>,
    /// Opens of the form.
    pub clicks: u64,
    /// Whether the form was submitted.
    pub is_submitted: bool,
    /// The rating submitted, when any.
    pub rating: Option<u8>,
}

/// A day's feedback funnel of one outlet (table `feedback_funnel`, clustering `day|outlet`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FeedbackFunnel {
    /// IST day.
    pub date: String,
    /// The outlet.
    pub child_business_id: String,
    /// Links sent (one per order, whatever the channels).
    pub total_feedback_sent: u64,
    /// Form opens.
    pub total_clicks: u64,
    /// Requests opened at least once.
    pub unique_clicks: u64,
    /// Forms submitted (first submissions).
    pub total_submitted: u64,
}

impl FeedbackFunnel {
    pub(super) fn add(&mut self, other: &FeedbackFunnel) {
        self.total_feedback_sent += other.total_feedback_sent;
        self.total_clicks += other.total_clicks;
        self.unique_clicks += other.unique_clicks;
        self.total_submitted += other.total_submitted;
    }
}

/// A rating or review (spec "Rating/review record"; table `ratings`, clustering
/// `outlet|orderId|source`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rating {
    /// The outlet.
    pub business_id: String,
    /// The brand.
    pub parent_business_id: String,
    /// The customer.
    pub mobile_number: String,
    /// The order.
    pub order_id: String,
    /// Stars, 1 to 5.
    pub rating: u8,
    /// The comment.
    pub rating_comments: String,
    /// When it was stored.
    pub inserted_at: DateTime<Utc>,
    /// `'1'` order-level, `'2'` platform, `'3'` feedback form.
    pub source: String,
    /// Answers to the brand's questions.
    pub questions: Vec<Answer>,
    /// Other answers (`Hear About Us From`).
    pub other_params: BTreeMap<String, String>,
    /// The customer's gender, when known.
    pub gender: Option<String>,
}

/// An answer on the form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Answer {
    /// The question.
    pub question: String,
    /// The answer.
    pub answer: String,
}

/// A submitted form.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Submission {
    /// Stars, 1 to 5.
    pub rating: u8,
    /// The comment.
    pub comment: String,
    /// Answers to the brand's questions, in order.
    pub answers: Vec<String>,
    /// How they heard about the brand.
    pub hear_about_us: Option<String>,
}
