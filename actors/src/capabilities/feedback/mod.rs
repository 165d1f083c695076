//! Feedback (spec "Feedback, ratings and NPS", "Feedback behaviour" 1–2): each business's
//! feedback configuration, the feedback-form link sent after an order ([`SendFeedback`]), its
//! funnel (sent, opened, submitted) and the ratings the form stores (source `'3'`).
//!
//! Decisions the spec leaves open (documented in `docs/feedback.md`):
//! - the configuration is written by `/crm_api/save/feedback/config` (staff) and read by
//!   `/crm_api/get/feedback/config`; the brand's own record is `child_business_id` `"0"`;
//! - an outlet's record applies when its `feedback_flow` is 1, else the brand's when its
//!   `feedback_flow` is 1; otherwise no link is sent;
//! - one feedback request per (outlet, order): the order's first version sends it, updates and
//!   replays send nothing;
//! - a form submitted again for the same order replaces its rating (the funnel counts the first).

use std::collections::BTreeMap;

pub mod legacy;
pub mod nps;
pub mod recovery;

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use engage_storage::{StoreError, WriteOp};

use crate::brand::Brand;
use crate::capabilities::bills::generate::mobile_ok;
use crate::capabilities::wallet::{put_wallet, queue_send, wallet, SendRequest};
use crate::domain::customer::{Applied, Customer};
use crate::domain::time::ist_day;
use crate::domain::wallet::{Channel, Purpose, TemplateType};
use crate::keys;
use crate::links::FormClaims;
use crate::query::{page_of, reply, within, QueryError, QueryReply};
use crate::reaction::{OrderEvent, OrderReaction};
use crate::repo::{FEEDBACK_CONFIGS, FEEDBACK_FUNNEL, FEEDBACK_REQUESTS, RATINGS};

/// Feedback requests listed per page.
pub const FEEDBACK_PAGE: usize = 20;
/// Days a feedback-form link stays valid after it is sent.
pub const FORM_VALIDITY_DAYS: i64 = 30;

/// A business's feedback configuration (table `feedback_configs`, clustering the outlet, `"0"`
/// for the brand's own).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    fn channels(&self) -> Vec<Channel> {
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    fn add(&mut self, other: &FeedbackFunnel) {
        self.total_feedback_sent += other.total_feedback_sent;
        self.total_clicks += other.total_clicks;
        self.unique_clicks += other.unique_clicks;
        self.total_submitted += other.total_submitted;
    }
}

/// A rating or review (spec "Rating/review record"; table `ratings`, clustering
/// `outlet|orderId|source`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The question.
    pub question: String,
    /// The answer.
    pub answer: String,
}

/// A submitted form.
#[derive(Clone, Debug, Serialize, Deserialize)]
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

/// A query of the feedback capability.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum FeedbackQuery {
    /// Create or replace a configuration: [`FeedbackConfig`].
    SaveConfig {
        /// The configuration.
        config: Box<FeedbackConfig>,
    },
    /// A business's configuration: [`FeedbackConfig`]; not found when it has none.
    Config {
        /// The outlet, or `"0"`.
        child_business_id: String,
    },
    /// The form of a link was opened: [`FormView`].
    Open {
        /// The link's claims.
        claims: FormClaims,
    },
    /// The form was submitted: [`Submitted`].
    Submit {
        /// The link's claims.
        claims: FormClaims,
        /// The link's token (`x_jwt_token` of a recovery message).
        token: String,
        /// What was submitted.
        submission: Submission,
        /// Now.
        now: DateTime<Utc>,
    },
    /// Feedback requests, newest first, 20 a page: [`RequestPage`].
    Requests {
        /// Only this outlet's.
        business_id: Option<String>,
        /// From 1.
        page: u64,
        /// First IST day.
        start: Option<String>,
        /// Last IST day.
        end: Option<String>,
    },
    /// Ratings of the sources, newest first, 20 a page: [`RatingPage`].
    Ratings {
        /// Only this outlet's.
        business_id: Option<String>,
        /// Only these sources (`'1'`, `'2'` internal, `'3'` form; empty: all).
        sources: Vec<String>,
        /// From 1.
        page: u64,
        /// First IST day.
        start: Option<String>,
        /// Last IST day.
        end: Option<String>,
    },
    /// Ratings per IST day: [`RatingDays`].
    RatingDays {
        /// Only this outlet's.
        business_id: Option<String>,
        /// First IST day.
        start: Option<String>,
        /// Last IST day.
        end: Option<String>,
    },
    /// Store an answer of `/nps/data`: [`nps::NpsResponse`].
    NpsRecord {
        /// The answer.
        answer: nps::NpsAnswer,
        /// Now.
        now: DateTime<Utc>,
    },
    /// A page of NPS responses, newest first: [`nps::NpsPage`].
    NpsList {
        /// Only this outlet's.
        business_id: Option<String>,
        /// Only this answer.
        rating: Option<u8>,
        /// Only this customer's.
        mobile_number: Option<String>,
        /// From 1.
        page: u64,
    },
    /// The NPS of a period: [`nps::NpsReport`].
    NpsReport {
        /// Only this outlet's.
        business_id: Option<String>,
        /// First IST day.
        start: String,
        /// Last IST day.
        end: String,
        /// The buckets.
        buckets: nps::Buckets,
    },
    /// Every response of a period, newest first (the export): [`nps::NpsPage`].
    NpsExport {
        /// Only this outlet's.
        business_id: Option<String>,
        /// First IST day.
        start: String,
        /// Last IST day.
        end: String,
    },
    /// The conversion of IST day `day`'s form ratings: [`nps::Converted`].
    NpsConvert {
        /// The IST day.
        day: String,
    },
    /// App-store reviews of store `store` (`a` or `b`), newest first, 20 a page: [`ReviewPage`].
    StoreReviews {
        /// `a` or `b`.
        store: String,
        /// From 1.
        page: u64,
    },
    /// The 12:06 sync: the brand's record, when its `feedback_flow` is 1, copied to each outlet
    /// the brand knows that has no record of its own: [`ConfigsSynced`].
    SyncConfigs {
        /// Now.
        now: DateTime<Utc>,
    },
    /// Orders of a period with the valid/invalid-number summary: [`OrdersSummary`].
    OrdersSummary {
        /// Only this outlet's.
        business_id: Option<String>,
        /// First IST day.
        start: String,
        /// Last IST day (a longer period keeps the 32 days up to it).
        end: String,
        /// From 1.
        page: u64,
    },
    /// The funnel between two IST days: [`FeedbackMis`].
    Mis {
        /// Only this outlet's.
        business_id: Option<String>,
        /// First IST day.
        start: String,
        /// Last IST day.
        end: String,
    },
}

/// A page of app-store reviews, each the store's own record.
pub type ReviewPage = crate::query::Page<serde_json::Value>;

/// What the config sync did.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ConfigsSynced {
    /// Outlets given the brand's record.
    pub copied: usize,
    /// Outlets with a record of their own, left alone.
    pub own: usize,
}

/// One order of the summary.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Submitted {
    /// The rating.
    pub rating: Rating,
    /// The low-rating recovery.
    pub recovery: Option<recovery::Recovery>,
}

/// What the form shows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FormView {
    /// The brand's questions.
    pub questions: Vec<String>,
    /// The customer's name, when known.
    pub name: String,
    /// Whether it was submitted already.
    pub is_submitted: bool,
}

/// A page of feedback requests.
pub type RequestPage = crate::query::Page<FeedbackRequest>;

/// The funnel of a period.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FeedbackMis {
    /// Totals.
    pub totals: FeedbackFunnel,
    /// Per IST day and outlet.
    pub days: Vec<FeedbackFunnel>,
}

/// A page of ratings.
pub type RatingPage = crate::query::Page<Rating>;

/// Ratings per IST day, the average, and how customers heard about the brand.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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

/// The brand's configurations by outlet (cached in [`Brand::feedback_configs`]).
async fn configs(brand: &mut Brand) -> Result<BTreeMap<String, FeedbackConfig>, StoreError> {
    if let Some(configs) = &brand.feedback_configs {
        return Ok(configs.clone());
    }
    let rows: Vec<FeedbackConfig> = brand.repo().all(FEEDBACK_CONFIGS, &brand.tenant).await?;
    let configs: BTreeMap<String, FeedbackConfig> =
        rows.into_iter().map(|c| (c.child_business_id.clone(), c)).collect();
    brand.feedback_configs = Some(configs.clone());
    Ok(configs)
}

/// The configuration that applies to `outlet`: its own when its `feedback_flow` is 1, else the
/// brand's (`"0"`) when its `feedback_flow` is 1.
pub fn applicable<'a>(configs: &'a BTreeMap<String, FeedbackConfig>, outlet: &str) -> Option<&'a FeedbackConfig> {
    let on = |c: &&FeedbackConfig| c.feedback_flow == 1;
    configs.get(outlet).filter(on).or_else(|| configs.get("0").filter(on))
}

async fn funnel(brand: &Brand, day: &str, outlet: &str) -> Result<FeedbackFunnel, StoreError> {
    let stored: Option<FeedbackFunnel> = brand.repo().get(&keys::feedback_funnel(&brand.tenant, day, outlet)).await?;
    Ok(stored.unwrap_or_else(|| FeedbackFunnel {
        date: day.to_owned(),
        child_business_id: outlet.to_owned(),
        ..FeedbackFunnel::default()
    }))
}

fn put_funnel(brand: &Brand, row: &FeedbackFunnel) -> WriteOp {
    keys::feedback_funnel(&brand.tenant, &row.date, &row.child_business_id).put(row)
}

/// The message: the template with `x_cust_name`, `x_cust_mobile`, `x_order_id` and
/// `x_feedback_url` put in; the link is appended when the template does not place it.
pub fn message(template: Option<&str>, name: &str, phone: &str, order_id: &str, url: &str) -> String {
    let template = template
        .filter(|t| !t.trim().is_empty())
        .unwrap_or("Hi x_cust_name, how was your order x_order_id? Tell us: x_feedback_url");
    let text = template.replace("x_cust_name", name).replace("x_cust_mobile", phone).replace("x_order_id", order_id);
    if text.contains("x_feedback_url") {
        text.replace("x_feedback_url", url)
    } else {
        format!("{} {url}", text.trim_end())
    }
}

/// The order reaction: a new order whose outlet (or brand) has feedback on and whose customer's
/// number is `[6-9]\d{9}` gets the feedback-form link by SMS and/or chat, `feedback_time` minutes
/// later, paid by the outlet's wallet at the feedback prices; one request per (outlet, order).
/// A wallet that cannot pay a channel skips that channel.
pub struct SendFeedback;

#[async_trait]
impl OrderReaction for SendFeedback {
    fn name(&self) -> &'static str {
        "feedback"
    }

    async fn react(
        &self,
        brand: &mut Brand,
        order: &OrderEvent<'_>,
        customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        if order.applied != Applied::New || !mobile_ok(&order.facts.phone) {
            return Ok(());
        }
        let all = configs(brand).await?;
        let Some(config) = applicable(&all, &order.facts.business_id).cloned() else { return Ok(()) };
        let channels = config.channels();
        if channels.is_empty() {
            return Ok(());
        }
        let facts = order.facts;
        let key = keys::feedback_request(&brand.tenant, &facts.business_id, &facts.order_id);
        if brand.repo().get::<FeedbackRequest>(&key).await?.is_some() {
            return Ok(());
        }
        let now = Utc::now();
        let scheduled_at = now + Duration::minutes(config.feedback_time.max(0));
        let claims = FormClaims {
            scope: "feedback_form".to_owned(),
            tenant: brand.tenant.clone(),
            business_id: facts.business_id.clone(),
            phone: facts.phone.clone(),
            order_id: facts.order_id.clone(),
            bill_id: String::new(),
            exp: (scheduled_at + Duration::days(FORM_VALIDITY_DAYS)).timestamp(),
        };
        let links = brand.ctx.services.links.clone();
        let url = match &brand.ctx.services.feedback_service_url {
            Some(service) => links.sign(&claims).map(|token| format!("{service}?token={token}")),
            None => links.form_url(&claims),
        }
        .map_err(StoreError::Backend)?;
        let name = customer.name.clone().or_else(|| facts.name.clone()).unwrap_or_default();
        let mut purse = wallet(brand, &facts.business_id).await?;
        let mut sent = Vec::new();
        for channel in channels {
            let template = if channel == Channel::Chat { &config.chat_template } else { &config.sms_template };
            let send = SendRequest {
                business: facts.business_id.clone(),
                channel,
                template_type: if channel == Channel::Chat { config.chat_template_type } else { TemplateType::Utility },
                purpose: Purpose::Feedback,
                to: facts.phone.clone(),
                message: message(template.as_deref(), &name, &facts.phone, &facts.order_id, &url),
                send_id: format!("feedback-{}", keys::digest(&[&facts.business_id, &facts.order_id, channel.queue()])),
                delivery_date: ist_day(scheduled_at).replace('-', ""),
                auto_id: None,
                template_id: None,
                button: None,
                sender_id: config.sender_id.clone(),
                not_before: (scheduled_at > now).then_some(scheduled_at),
            };
            match queue_send(brand, &mut purse, &send, now, ops).await {
                Ok(_) => sent.push(channel),
                Err(QueryError::Insufficient(_)) => {
                    metrics::counter!("engage_feedback_skipped_total", "reason" => "wallet").increment(1);
                }
                Err(error) => return Err(StoreError::Backend(error.to_string())),
            }
        }
        if sent.is_empty() {
            return Ok(());
        }
        let request = FeedbackRequest {
            parent_business_id: brand.tenant.clone(),
            child_business_id: facts.business_id.clone(),
            order_id: facts.order_id.clone(),
            mobile_number: facts.phone.clone(),
            name,
            channels: sent,
            url,
            sent_at: now,
            scheduled_at,
            clicks: 0,
            is_submitted: false,
            rating: None,
        };
        let mut row = funnel(brand, &ist_day(now), &facts.business_id).await?;
        row.total_feedback_sent += 1;
        ops.push(key.put(&request));
        ops.push(put_funnel(brand, &row));
        ops.push(put_wallet(brand, &facts.business_id, &purse));
        metrics::counter!("engage_feedback_sent_total").increment(1);
        Ok(())
    }
}

/// The request a link's claims name, or one made for a bill's link (which has no request).
async fn request_of(brand: &Brand, claims: &FormClaims) -> Result<Option<FeedbackRequest>, StoreError> {
    brand.repo().get(&keys::feedback_request(&brand.tenant, &claims.business_id, &claims.order_id)).await
}

async fn open(brand: &mut Brand, claims: FormClaims) -> Result<FormView, QueryError> {
    let now = Utc::now();
    let questions = applicable(&configs(brand).await?, &claims.business_id).map(|c| c.questions.clone());
    let mut view = FormView { questions: questions.unwrap_or_default(), name: String::new(), is_submitted: false };
    if let Some(mut request) = request_of(brand, &claims).await? {
        let mut row = funnel(brand, &ist_day(now), &claims.business_id).await?;
        row.total_clicks += 1;
        if request.clicks == 0 {
            row.unique_clicks += 1;
        }
        request.clicks += 1;
        view.name = request.name.clone();
        view.is_submitted = request.is_submitted;
        let key = keys::feedback_request(&brand.tenant, &claims.business_id, &claims.order_id);
        brand.batch(vec![key.put(&request), put_funnel(brand, &row)]).await?;
    }
    Ok(view)
}

async fn submit(
    brand: &mut Brand,
    claims: FormClaims,
    token: String,
    submission: Submission,
    now: DateTime<Utc>,
) -> Result<Submitted, QueryError> {
    if !(1..=5).contains(&submission.rating) {
        return Err(QueryError::Invalid("/rating: a rating is 1 to 5 stars".to_owned()));
    }
    let config = applicable(&configs(brand).await?, &claims.business_id).cloned();
    let questions = config.as_ref().map(|c| c.questions.clone());
    let answers = questions
        .unwrap_or_default()
        .into_iter()
        .zip(submission.answers)
        .map(|(question, answer)| Answer { question, answer })
        .collect();
    let mut customer = brand.customer_or_new(&claims.phone, now).await?;
    let mut other_params = BTreeMap::new();
    if let Some(heard) = submission.hear_about_us.filter(|h| !h.is_empty()) {
        other_params.insert("Hear About Us From".to_owned(), heard);
    }
    let rating = Rating {
        business_id: claims.business_id.clone(),
        parent_business_id: brand.tenant.clone(),
        mobile_number: claims.phone.clone(),
        order_id: claims.order_id.clone(),
        rating: submission.rating,
        rating_comments: submission.comment,
        inserted_at: now,
        source: "3".to_owned(),
        questions: answers,
        other_params,
        gender: customer.gender.clone(),
    };
    let mut ops = vec![
        keys::rating(&brand.tenant, &claims.business_id, &claims.order_id, "3").put(&rating),
        keys::feedback_brand(&brand.tenant).put(&serde_json::json!({})),
    ];
    if let Some(mut request) = request_of(brand, &claims).await? {
        if !request.is_submitted {
            let mut row = funnel(brand, &ist_day(now), &claims.business_id).await?;
            row.total_submitted += 1;
            ops.push(put_funnel(brand, &row));
        }
        request.is_submitted = true;
        request.rating = Some(submission.rating);
        ops.push(keys::feedback_request(&brand.tenant, &claims.business_id, &claims.order_id).put(&request));
    }
    let comment = rating.rating_comments.clone();
    let recovered = recovery::recover(
        brand,
        &claims,
        &token,
        submission.rating,
        &comment,
        config.as_ref(),
        &mut customer,
        now,
        &mut ops,
    )
    .await?;
    let recovery = match recovered {
        Some((recovery, alerts)) => {
            brand.commit_customer(ops, customer).await?;
            recovery::alert(brand, alerts, now).await?;
            Some(recovery)
        }
        None => {
            brand.batch(ops).await?;
            None
        }
    };
    metrics::counter!("engage_feedback_submitted_total").increment(1);
    Ok(Submitted { rating, recovery })
}

async fn requests(
    brand: &Brand,
    business: Option<String>,
    page: u64,
    start: Option<String>,
    end: Option<String>,
) -> Result<RequestPage, QueryError> {
    let mut found = Vec::new();
    brand
        .repo()
        .visit(FEEDBACK_REQUESTS, &brand.tenant, |request: FeedbackRequest| {
            if business.as_ref().is_none_or(|b| *b == request.child_business_id)
                && within(&ist_day(request.sent_at), start.as_deref(), end.as_deref())
            {
                found.push(request);
            }
        })
        .await?;
    found.sort_by(|a, b| b.sent_at.cmp(&a.sent_at).then_with(|| a.order_id.cmp(&b.order_id)));
    Ok(RequestPage::of(found, page, FEEDBACK_PAGE))
}

async fn mis(brand: &Brand, business: Option<String>, start: String, end: String) -> Result<FeedbackMis, QueryError> {
    let mut days = Vec::new();
    brand
        .repo()
        .visit(FEEDBACK_FUNNEL, &brand.tenant, |row: FeedbackFunnel| {
            if business.as_ref().is_none_or(|b| *b == row.child_business_id)
                && within(&row.date, Some(&start), Some(&end))
            {
                days.push(row);
            }
        })
        .await?;
    let mut totals = FeedbackFunnel { child_business_id: business.unwrap_or_default(), ..FeedbackFunnel::default() };
    for day in &days {
        totals.add(day);
    }
    Ok(FeedbackMis { totals, days })
}

/// The brand's ratings in the period (of one outlet or all), newest first.
async fn ratings_in(
    brand: &Brand,
    business: Option<&str>,
    start: Option<&str>,
    end: Option<&str>,
) -> Result<Vec<Rating>, QueryError> {
    let mut found = Vec::new();
    brand
        .repo()
        .visit(RATINGS, &brand.tenant, |rating: Rating| {
            if business.is_none_or(|b| b == rating.business_id) && within(&ist_day(rating.inserted_at), start, end) {
                found.push(rating);
            }
        })
        .await?;
    found.sort_by(|a, b| b.inserted_at.cmp(&a.inserted_at).then_with(|| a.order_id.cmp(&b.order_id)));
    Ok(found)
}

fn average(sum: u64, count: u64) -> f64 {
    if count == 0 {
        0.0
    } else {
        (sum as f64 * 100.0 / count as f64).round() / 100.0
    }
}

async fn rating_days(
    brand: &Brand,
    business: Option<String>,
    start: Option<String>,
    end: Option<String>,
) -> Result<RatingDays, QueryError> {
    let ratings = ratings_in(brand, business.as_deref(), start.as_deref(), end.as_deref()).await?;
    let mut by_day: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut hear_about_us: BTreeMap<String, u64> = BTreeMap::new();
    let (mut count, mut sum) = (0u64, 0u64);
    for rating in &ratings {
        let day = by_day.entry(ist_day(rating.inserted_at)).or_default();
        day.0 += 1;
        day.1 += u64::from(rating.rating);
        count += 1;
        sum += u64::from(rating.rating);
        if let Some(heard) = rating.other_params.get("Hear About Us From") {
            *hear_about_us.entry(heard.clone()).or_default() += 1;
        }
    }
    let days = by_day
        .into_iter()
        .map(|(date, (n, total))| RatingDay { date, rating_count: n, avg_rating: average(total, n) })
        .collect();
    let latest = ratings
        .into_iter()
        .filter(|r| r.rating == 5 && r.rating_comments.chars().count() >= LATEST_COMMENT)
        .take(LATEST_RATINGS)
        .collect();
    Ok(RatingDays { days, hear_about_us, ratings_done: count, avg_rating: average(sum, count), latest })
}

async fn sync_configs(brand: &mut Brand, now: DateTime<Utc>) -> Result<ConfigsSynced, QueryError> {
    let all = configs(brand).await?;
    let Some(parent) = all.get("0").filter(|c| c.feedback_flow == 1).cloned() else {
        return Ok(ConfigsSynced::default());
    };
    let tenant = brand.tenant.clone();
    let mut outlets = std::collections::BTreeSet::new();
    for table in [crate::repo::BUSINESS_WALLETS, crate::repo::BUSINESS_CONFIGS, crate::repo::BUSINESSES] {
        outlets
            .extend(brand.repo().clusterings(table, &tenant).await?.into_iter().filter(|o| o != "0" && *o != tenant));
    }
    outlets.extend(all.keys().filter(|o| *o != "0").cloned());
    let mut done = ConfigsSynced::default();
    let mut ops = Vec::new();
    for outlet in outlets {
        if all.get(&outlet).is_some_and(|own| own.copied_from_brand_at.is_none()) {
            done.own += 1;
            continue;
        }
        let copy = FeedbackConfig {
            child_business_id: outlet.clone(),
            copied_from_brand_at: Some(now),
            updated_at: Some(now),
            ..parent.clone()
        };
        ops.push(keys::feedback_config(&tenant, &outlet).put(&copy));
        done.copied += 1;
    }
    brand.feedback_configs = None;
    for chunk in ops.chunks(500) {
        brand.batch(chunk.to_vec()).await?;
    }
    Ok(done)
}

async fn orders_summary(
    brand: &Brand,
    business: Option<String>,
    start: &str,
    end: &str,
    page: u64,
) -> Result<OrdersSummary, QueryError> {
    let parse = |d: &str| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok();
    let (Some(first), Some(last)) = (parse(start), parse(end)) else {
        return Err(QueryError::Invalid("/start: start and end are IST days, YYYY-MM-DD".to_owned()));
    };
    // a longer period keeps its last 32 days (the one period rule's clamp, at this read's size)
    let first = first.max(last - chrono::Days::new(31));
    // each order once, its latest version (queue records are in acceptance order)
    let mut orders: BTreeMap<(String, String), SummaryOrder> = BTreeMap::new();
    let mut day = first;
    while day <= last {
        let records: Vec<crate::repo::QueueRecord> = brand
            .repo()
            .all(
                crate::repo::CRM_QUEUE,
                &crate::keys::queue_partition(&brand.tenant, &day.format("%Y-%m-%d").to_string()),
            )
            .await?;
        for record in records.into_iter().filter(|r| r.kind == "order") {
            let Ok(facts) = crate::domain::order::OrderFacts::from_payload(&record.data) else { continue };
            if facts.is_cart() || business.as_ref().is_some_and(|b| *b != facts.business_id) {
                continue;
            }
            orders.insert(
                (facts.business_id.clone(), facts.order_id.clone()),
                SummaryOrder {
                    valid_number: mobile_ok(&facts.phone),
                    business_id: facts.business_id,
                    order_id: facts.order_id,
                    mobile_number: facts.phone,
                    name: facts.name,
                    amount: facts.amount.normalize().to_string(),
                    inserted_at: record.inserted_at,
                },
            );
        }
        day += Duration::days(1);
    }
    let mut all: Vec<SummaryOrder> = orders.into_values().collect();
    all.sort_by(|a, b| b.inserted_at.cmp(&a.inserted_at).then_with(|| a.order_id.cmp(&b.order_id)));
    let valid = all.iter().filter(|o| o.valid_number).count() as u64;
    let total = all.len() as u64;
    let page = page.max(1);
    let data = page_of(all, page, FEEDBACK_PAGE);
    Ok(OrdersSummary {
        data,
        total_orders: total,
        valid_numbers: valid,
        invalid_numbers: total - valid,
        page,
        page_size: FEEDBACK_PAGE as u64,
    })
}

async fn save_config(brand: &mut Brand, config: FeedbackConfig) -> Result<FeedbackConfig, QueryError> {
    let key = keys::feedback_config(&brand.tenant, &config.child_business_id);
    brand.feedback_configs = None;
    brand.batch(vec![key.put(&config), keys::feedback_brand(&brand.tenant).put(&serde_json::json!({}))]).await?;
    Ok(config)
}

/// Answers a feedback query.
pub async fn handle(brand: &mut Brand, query: FeedbackQuery) -> QueryReply {
    match query {
        FeedbackQuery::SaveConfig { config } => reply(save_config(brand, *config).await),
        FeedbackQuery::Config { child_business_id } => {
            let found = configs(brand).await.map_err(QueryError::from).map(|c| c.get(&child_business_id).cloned());
            reply(found.and_then(|c| c.ok_or(QueryError::NotFound)))
        }
        FeedbackQuery::Open { claims } => reply(open(brand, claims).await),
        FeedbackQuery::Submit { claims, token, submission, now } => {
            reply(submit(brand, claims, token, submission, now).await)
        }
        FeedbackQuery::Requests { business_id, page, start, end } => {
            reply(requests(brand, business_id, page, start, end).await)
        }
        FeedbackQuery::Mis { business_id, start, end } => reply(mis(brand, business_id, start, end).await),
        FeedbackQuery::StoreReviews { store, page } => {
            let mut all: Vec<crate::reviews::StoreReview> = match brand
                .repo()
                .all(crate::repo::STORE_REVIEWS, &crate::keys::store_reviews_partition(&brand.tenant, &store))
                .await
            {
                Ok(all) => all,
                Err(error) => return Err(error.into()),
            };
            all.sort_by(|a, b| b.last_modified.cmp(&a.last_modified));
            let records = all.into_iter().map(|r| r.record).collect();
            reply(Ok(ReviewPage::of(records, page, FEEDBACK_PAGE)))
        }
        FeedbackQuery::SyncConfigs { now } => reply(sync_configs(brand, now).await),
        FeedbackQuery::OrdersSummary { business_id, start, end, page } => {
            reply(orders_summary(brand, business_id, &start, &end, page).await)
        }
        FeedbackQuery::NpsRecord { answer, now } => reply(nps::record(brand, answer, now).await),
        FeedbackQuery::NpsList { business_id, rating, mobile_number, page } => {
            reply(nps::list(brand, business_id, rating, mobile_number, page).await)
        }
        FeedbackQuery::NpsReport { business_id, start, end, buckets } => {
            reply(nps::report(brand, business_id, &start, &end, buckets).await)
        }
        FeedbackQuery::NpsExport { business_id, start, end } => reply(
            nps::responses(brand, |r| {
                let day = ist_day(r.insertedAt);
                business_id.as_ref().is_none_or(|b| *b == r.businessId) && day >= start && day <= end
            })
            .await
            .map(|data| nps::NpsPage { total: data.len() as u64, data }),
        ),
        FeedbackQuery::NpsConvert { day } => reply(nps::convert(brand, &day).await),
        FeedbackQuery::Ratings { business_id, sources, page, start, end } => {
            reply(ratings_in(brand, business_id.as_deref(), start.as_deref(), end.as_deref()).await.map(|all| {
                let matching: Vec<Rating> =
                    all.into_iter().filter(|r| sources.is_empty() || sources.contains(&r.source)).collect();
                RatingPage::of(matching, page, FEEDBACK_PAGE)
            }))
        }
        FeedbackQuery::RatingDays { business_id, start, end } => {
            reply(rating_days(brand, business_id, start, end).await)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outlet_record_applies_only_when_its_flow_is_on() {
        let config = |child: &str, flow: u8| FeedbackConfig {
            child_business_id: child.to_owned(),
            feedback_flow: flow,
            ..FeedbackConfig::default()
        };
        let mut all = BTreeMap::new();
        all.insert("0".to_owned(), config("0", 1));
        all.insert("o1".to_owned(), config("o1", 0));
        all.insert("o2".to_owned(), config("o2", 1));
        assert_eq!(applicable(&all, "o1").map(|c| c.child_business_id.as_str()), Some("0"));
        assert_eq!(applicable(&all, "o2").map(|c| c.child_business_id.as_str()), Some("o2"));
        all.insert("0".to_owned(), config("0", 0));
        assert!(applicable(&all, "o1").is_none());
        assert_eq!(message(Some("Rate us"), "A", "9", "7", "U"), "Rate us U");
        assert_eq!(message(Some("x_cust_name: x_feedback_url!"), "A", "9", "7", "U"), "A: U!");
    }
}
