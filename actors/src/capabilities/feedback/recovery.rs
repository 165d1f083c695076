//! Low-rating recovery (spec "Feedback behaviour" 3–4): a submitted form whose rating is at most
//! the brand's `low_rating` journey's `rating`, from a customer whose `rating_frequency` is below
//! the journey's `frequency_rating` (1 when unset), gets:
//!
//! 1. a promo coupon: a real coupon of the rewards capability (no points paid), redeemable at the
//!    POS like any other, named and valid as the journey's `promo_details` say (`name`,
//!    `reward_id`, `valid_days`; 30 days by default);
//! 2. the journey's SMS and/or chat promo through the journey path ([`reach_one_with`]: holdout,
//!    caps, wallet debit at campaign prices), with `x_cust_name`, `x_cust_mobile`, `x_cust_eid`,
//!    `x_dynamic_coupon` (the code) and `x_jwt_token` (the form link's token) put in;
//! 3. the journey send as its ROI row (the `roi_journeys` job attributes later orders to it);
//! 4. a merchant alert: one SMS to each of the feedback configuration's `alert_contacts`, paid by
//!    the outlet at the feedback SMS price, and one e-mail to its `alert_emails` through
//!    `ENGAGE_MAIL_SERVICE_URL` (see [`alert`]);
//! 5. `rating_frequency` + 1.
//!
//! Otherwise nothing. One recovery per (outlet, order): a form submitted again does not recover
//! twice (table `feedback_recoveries`).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::{StoreError, WriteOp};

use super::FeedbackConfig;
use crate::capabilities::journeys::{applicable, journeys, reach_one_with, Outcome};
use crate::capabilities::rewards::{put_coupon, Coupon, CouponStatus};
use crate::capabilities::wallet::{send_now, SendRequest};
use crate::domain::customer::Customer;
use crate::domain::time::ist_day;
use crate::domain::wallet::{Channel, Purpose, TemplateType};
use crate::keys;
use crate::query::QueryError;
use crate::signed_links::FormClaims;
use crate::tenant_core::Tenant;

/// Days a recovery coupon is valid unless `promo_details.valid_days` says otherwise.
pub const COUPON_DAYS: i64 = 30;

/// A recovery (table `feedback_recoveries`, clustering `outlet|orderId`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recovery {
    /// The outlet.
    pub child_business_id: String,
    /// The order rated.
    pub order_id: String,
    /// The customer.
    pub mobile_number: String,
    /// The rating.
    pub rating: u8,
    /// The `low_rating` journey.
    pub campaign_journey_id: String,
    /// The promo coupon.
    pub coupon_code: String,
    /// What the journey decided (`sent`, `holdout`, `skipped`).
    pub outcome: String,
    /// The merchant alert SMS queued, by number.
    pub alerted_contacts: Vec<String>,
    /// The alert e-mail addresses (mailed through the mail service when one is set).
    pub alert_emails: Vec<String>,
    /// When.
    pub at: DateTime<Utc>,
}

/// What [`recover`] left to do after its batch: the alerts (each its own paid send) and the
/// e-mail.
pub struct Alerts {
    texts: Vec<SendRequest>,
    emails: Vec<String>,
    subject: String,
    body: String,
}

/// Decides the recovery of `rating` given through the link of `claims`; adds its writes to `ops`
/// (the caller writes `customer` last). Answers the alerts to send once that batch is written.
#[allow(clippy::too_many_arguments)]
pub async fn recover(
    tenant: &mut Tenant,
    claims: &FormClaims,
    token: &str,
    rating: u8,
    comment: &str,
    config: Option<&FeedbackConfig>,
    customer: &mut Customer,
    now: DateTime<Utc>,
    ops: &mut Vec<WriteOp>,
) -> Result<Option<(Recovery, Alerts)>, StoreError> {
    let all = journeys(tenant).await?;
    let Some(journey) = applicable(&all, "low_rating", &claims.business_id, &tenant.id).cloned() else {
        return Ok(None);
    };
    let data = &journey.campaign_data;
    if data.rating.is_none_or(|threshold| rating > threshold) {
        return Ok(None);
    }
    if customer.rating_frequency >= data.frequency_rating.unwrap_or(1) {
        metrics::counter!("engage_low_rating_recoveries_total", "outcome" => "frequency").increment(1);
        return Ok(None);
    }
    let key = keys::feedback_recovery(&tenant.id, &claims.business_id, &claims.order_id);
    if tenant.repo().get::<Recovery>(&key).await?.is_some() {
        return Ok(None);
    }
    let promo = data.promo_details.clone().unwrap_or(Value::Null);
    let code = keys::digest(&["low_rating", &tenant.id, &claims.business_id, &claims.order_id])[..8].to_uppercase();
    let days = promo["valid_days"].as_i64().filter(|d| *d > 0).unwrap_or(COUPON_DAYS);
    let coupon = Coupon {
        coupon_code: code.clone(),
        reward_id: promo["reward_id"].as_str().unwrap_or("low_rating").to_owned(),
        name: promo["name"].as_str().unwrap_or("We are sorry: an offer for your next visit").to_owned(),
        customer_number: customer.phone.clone(),
        points_cost: 0,
        status: CouponStatus::Issued,
        issued_at: now,
        expires_at: now + Duration::days(days),
        ledger_seq: customer.ledger_seq,
        order_id: None,
        redeemed_at: None,
        pending_until: None,
        revoked_at: None,
    };
    ops.push(put_coupon(tenant, &coupon));
    let variables = vec![("x_dynamic_coupon", code.clone()), ("x_jwt_token", token.to_owned())];
    let occasion = format!("rating-{}-{}", claims.business_id, claims.order_id);
    let decision =
        reach_one_with(tenant, &journey, customer, &claims.business_id, &occasion, now, variables, ops).await?;
    let outcome = match decision.map(|d| d.outcome) {
        Some(Outcome::Sent) => "sent",
        Some(Outcome::Holdout) => "holdout",
        _ => "skipped",
    };
    customer.rating_frequency += 1;
    let contacts = config.map(|c| c.alert_contacts.clone()).unwrap_or_default();
    let text = format!(
        "Low rating: {} ({}) rated {rating}/5 for order {} at {}. Comment: {}",
        customer.name.as_deref().unwrap_or("a customer"),
        customer.phone,
        claims.order_id,
        claims.business_id,
        comment.chars().take(200).collect::<String>()
    );
    let texts = contacts
        .iter()
        .map(|contact| SendRequest {
            business: claims.business_id.clone(),
            channel: Channel::Sms,
            template_type: TemplateType::Utility,
            purpose: Purpose::Feedback,
            to: contact.clone(),
            message: text.clone(),
            send_id: format!("rating-alert-{}", keys::digest(&[&claims.business_id, &claims.order_id, contact])),
            delivery_date: ist_day(now).replace('-', ""),
            auto_id: None,
            template_id: None,
            button: None,
            sender_id: config.and_then(|c| c.sender_id.clone()),
            not_before: None,
        })
        .collect::<Vec<_>>();
    let recovery = Recovery {
        child_business_id: claims.business_id.clone(),
        order_id: claims.order_id.clone(),
        mobile_number: customer.phone.clone(),
        rating,
        campaign_journey_id: journey.campaign_journey_id.clone(),
        coupon_code: code,
        outcome: outcome.to_owned(),
        alerted_contacts: contacts,
        alert_emails: config.map(|c| c.alert_emails.clone()).unwrap_or_default(),
        at: now,
    };
    ops.push(key.put(&recovery));
    metrics::counter!("engage_low_rating_recoveries_total", "outcome" => outcome).increment(1);
    let subject = format!("Low rating ({rating}/5) at {}", claims.business_id);
    Ok(Some((recovery.clone(), Alerts { texts, emails: recovery.alert_emails, subject, body: text })))
}

/// Sends the merchant alerts: each SMS paid on its own (an outlet that cannot pay one skips it),
/// and one e-mail to the alert addresses through the mail service (multipart: `report`
/// `low-rating-alert`, `subject`, `to` — the addresses, comma-separated —, `text`); without a mail
/// service, or when it fails (logged, counted, not retried), the addresses stay on the recovery
/// record only.
pub async fn alert(tenant: &mut Tenant, alerts: Alerts, now: DateTime<Utc>) -> Result<u32, QueryError> {
    // the recovery the alerts tell of is on disk before any of them leaves
    tenant.settle().await?;
    let mut sent = 0;
    if let (false, Some(url)) = (alerts.emails.is_empty(), tenant.ctx.services.mail_service_url.clone()) {
        let form = reqwest::multipart::Form::new()
            .text("report", "low-rating-alert")
            .text("subject", alerts.subject.clone())
            .text("to", alerts.emails.join(","))
            .text("text", alerts.body.clone());
        let outcome = tenant.ctx.services.http.post(&url).multipart(form).send().await;
        let label = match outcome {
            Ok(response) if response.status().is_success() => "sent",
            Ok(response) => {
                tracing::warn!(tenant = %tenant.id, status = %response.status(), "low-rating alert e-mail refused");
                "failed"
            }
            Err(error) => {
                tracing::warn!(tenant = %tenant.id, %error, "low-rating alert e-mail not sent");
                "failed"
            }
        };
        metrics::counter!("engage_low_rating_alert_emails_total", "outcome" => label).increment(1);
    }
    for text in alerts.texts {
        match send_now(tenant, &text, Vec::new(), now).await {
            Ok(_) => sent += 1,
            Err(QueryError::Insufficient(_)) => {
                metrics::counter!("engage_sends_skipped_total", "reason" => "balance").increment(1);
            }
            Err(error) => return Err(error),
        }
    }
    Ok(sent)
}
