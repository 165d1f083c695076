//! The answers to the feedback questions: the form (open, submit), the lists, the MIS, ratings per day, the configuration sync and the orders summary.

use crate::capabilities::bills::generate::mobile_ok;
use crate::domain::time::ist_day;
use crate::keys;
use crate::query::{page_of, within, QueryError};
use crate::repo::{FEEDBACK_FUNNEL, FEEDBACK_REQUESTS, RATINGS};
use crate::signed_links::FormClaims;
use crate::tenant_core::Tenant;
use chrono::{DateTime, Duration, Utc};
use engage_storage::StoreError;
use std::collections::BTreeMap;

#[allow(unused_imports)]
use super::*;

/// The request a link's claims name, or one made for a bill's link (which has no request).
pub(super) async fn request_of(tenant: &Tenant, claims: &FormClaims) -> Result<Option<FeedbackRequest>, StoreError> {
    tenant.repo().get(&keys::feedback_request(&tenant.id, &claims.business_id, &claims.order_id)).await
}

pub(super) async fn open(tenant: &mut Tenant, claims: FormClaims) -> Result<FormView, QueryError> {
    let now = Utc::now();
    let questions = applicable(&configs(tenant).await?, &claims.business_id).map(|c| c.questions.clone());
    let branding = crate::capabilities::bills::branding(tenant, &claims.business_id).await?;
    let mut view =
        FormView { questions: questions.unwrap_or_default(), name: String::new(), is_submitted: false, branding };
    if let Some(mut request) = request_of(tenant, &claims).await? {
        let mut row = funnel(tenant, &ist_day(now), &claims.business_id).await?;
        row.total_clicks += 1;
        if request.clicks == 0 {
            row.unique_clicks += 1;
        }
        request.clicks += 1;
        view.name = request.name.clone();
        view.is_submitted = request.is_submitted;
        let key = keys::feedback_request(&tenant.id, &claims.business_id, &claims.order_id);
        tenant.batch(vec![key.put(&request), put_funnel(tenant, &row)]).await?;
    }
    Ok(view)
}

pub(super) async fn submit(
    tenant: &mut Tenant,
    claims: FormClaims,
    token: String,
    submission: Submission,
    now: DateTime<Utc>,
) -> Result<Submitted, QueryError> {
    if !(1..=5).contains(&submission.rating) {
        return Err(QueryError::Invalid("/rating: a rating is 1 to 5 stars".to_owned()));
    }
    let config = applicable(&configs(tenant).await?, &claims.business_id).cloned();
    let questions = config.as_ref().map(|c| c.questions.clone());
    let answers = questions
        .unwrap_or_default()
        .into_iter()
        .zip(submission.answers)
        .map(|(question, answer)| Answer { question, answer })
        .collect();
    let mut customer = tenant.customer_or_new(&claims.phone, now).await?;
    let mut other_params = BTreeMap::new();
    if let Some(heard) = submission.hear_about_us.filter(|h| !h.is_empty()) {
        other_params.insert("Hear About Us From".to_owned(), heard);
    }
    let rating = Rating {
        business_id: claims.business_id.clone(),
        parent_business_id: tenant.id.clone(),
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
        keys::rating(&tenant.id, &claims.business_id, &claims.order_id, "3").put(&rating),
        keys::feedback_tenant(&tenant.id).put(&serde_json::json!({})),
    ];
    if let Some(mut request) = request_of(tenant, &claims).await? {
        if !request.is_submitted {
            let mut row = funnel(tenant, &ist_day(now), &claims.business_id).await?;
            row.total_submitted += 1;
            ops.push(put_funnel(tenant, &row));
        }
        request.is_submitted = true;
        request.rating = Some(submission.rating);
        ops.push(keys::feedback_request(&tenant.id, &claims.business_id, &claims.order_id).put(&request));
    }
    let comment = rating.rating_comments.clone();
    let recovered = recovery::recover(
        tenant,
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
            tenant.commit_customer(ops, customer).await?;
            recovery::alert(tenant, alerts, now).await?;
            Some(recovery)
        }
        None => {
            tenant.batch(ops).await?;
            None
        }
    };
    metrics::counter!("engage_feedback_submitted_total").increment(1);
    let branding = crate::capabilities::bills::branding(tenant, &claims.business_id).await?;
    Ok(Submitted { rating, recovery, branding })
}

pub(super) async fn requests(
    tenant: &Tenant,
    business: Option<String>,
    page: u64,
    start: Option<String>,
    end: Option<String>,
) -> Result<RequestPage, QueryError> {
    let mut found = Vec::new();
    tenant
        .repo()
        .visit(FEEDBACK_REQUESTS, &tenant.id, |request: FeedbackRequest| {
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

pub(super) async fn mis(
    tenant: &Tenant,
    business: Option<String>,
    start: String,
    end: String,
) -> Result<FeedbackMis, QueryError> {
    let mut days = Vec::new();
    tenant
        .repo()
        .visit(FEEDBACK_FUNNEL, &tenant.id, |row: FeedbackFunnel| {
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
pub(super) async fn ratings_in(
    tenant: &Tenant,
    business: Option<&str>,
    start: Option<&str>,
    end: Option<&str>,
) -> Result<Vec<Rating>, QueryError> {
    let mut found = Vec::new();
    tenant
        .repo()
        .visit(RATINGS, &tenant.id, |rating: Rating| {
            if business.is_none_or(|b| b == rating.business_id) && within(&ist_day(rating.inserted_at), start, end) {
                found.push(rating);
            }
        })
        .await?;
    found.sort_by(|a, b| b.inserted_at.cmp(&a.inserted_at).then_with(|| a.order_id.cmp(&b.order_id)));
    Ok(found)
}

pub(super) fn average(sum: u64, count: u64) -> f64 {
    if count == 0 {
        0.0
    } else {
        (sum as f64 * 100.0 / count as f64).round() / 100.0
    }
}

pub(super) async fn rating_days(
    tenant: &Tenant,
    business: Option<String>,
    start: Option<String>,
    end: Option<String>,
) -> Result<RatingDays, QueryError> {
    let ratings = ratings_in(tenant, business.as_deref(), start.as_deref(), end.as_deref()).await?;
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

pub(super) async fn sync_configs(tenant: &mut Tenant, now: DateTime<Utc>) -> Result<ConfigsSynced, QueryError> {
    let all = configs(tenant).await?;
    let Some(parent) = all.get("0").filter(|c| c.feedback_flow == 1).cloned() else {
        return Ok(ConfigsSynced::default());
    };
    let id = tenant.id.clone();
    let mut outlets = std::collections::BTreeSet::new();
    for table in [crate::repo::BUSINESS_WALLETS, crate::repo::BUSINESS_CONFIGS, crate::repo::BUSINESSES] {
        outlets.extend(tenant.repo().clusterings(table, &id).await?.into_iter().filter(|o| o != "0" && *o != id));
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
        ops.push(keys::feedback_config(&id, &outlet).put(&copy));
        done.copied += 1;
    }
    tenant.cache.forget::<BTreeMap<String, FeedbackConfig>>();
    for chunk in ops.chunks(500) {
        tenant.batch(chunk.to_vec()).await?;
    }
    Ok(done)
}

pub(super) async fn orders_summary(
    tenant: &Tenant,
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
        let records: Vec<crate::repo::QueueRecord> = tenant
            .repo()
            .all(crate::repo::CRM_QUEUE, &crate::keys::queue_partition(&tenant.id, &day.format("%Y-%m-%d").to_string()))
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

pub(super) async fn save_config(tenant: &mut Tenant, config: FeedbackConfig) -> Result<FeedbackConfig, QueryError> {
    let key = keys::feedback_config(&tenant.id, &config.child_business_id);
    tenant.cache.forget::<BTreeMap<String, FeedbackConfig>>();
    tenant.batch(vec![key.put(&config), keys::feedback_tenant(&tenant.id).put(&serde_json::json!({}))]).await?;
    Ok(config)
}
