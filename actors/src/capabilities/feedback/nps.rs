//! NPS (spec "NPS records", "Feedback behaviour" 5): responses stored per business (table
//! `nps_responses`), listed and aggregated with report-level buckets, exported, and made from the
//! feedback form's ratings by the 06:00 `nps_conversion` job.
//!
//! A response's id is a digest of the outlet, the customer, the order and where it came from
//! (`api` for `/nps/data`, `form` for a converted rating), so the same answer sent again, or a
//! conversion run again, replaces the response instead of adding one.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::Rating;
use crate::domain::time::ist_day;
use crate::keys;
use crate::query::{page_of, QueryError};
use crate::repo::{NPS_RESPONSES, RATINGS};
use crate::tenant_core::Tenant;

/// Days a response stays valid (`validTill`).
pub const NPS_VALIDITY_DAYS: i64 = 365;
/// Responses listed per page.
pub const NPS_PAGE: usize = 20;

/// An NPS response (spec "NPS response").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[allow(non_snake_case)]
pub struct NpsResponse {
    /// Its id.
    pub nps_id: String,
    /// The brand.
    pub parentBusinessId: String,
    /// The outlet.
    pub businessId: String,
    /// The customer.
    pub mobileNo: String,
    /// 0 to 10.
    pub rating: u8,
    /// The order, when given.
    pub order_id: String,
    /// Answers.
    pub questions: Vec<serde_json::Value>,
    /// When it was stored.
    pub insertedAt: DateTime<Utc>,
    /// `insertedAt` + 365 days.
    pub validTill: DateTime<Utc>,
    /// 1.
    pub status: u8,
    /// Not used by engage (null).
    pub contactMappingId: Option<String>,
    /// `api` (`/nps/data`) or `form` (a converted feedback-form rating).
    pub source: String,
}

/// An NPS answer as `/nps/data` takes it.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NpsAnswer {
    /// The outlet.
    pub business_id: String,
    /// The customer.
    pub mobile_no: String,
    /// 0 to 10.
    pub rating: u8,
    /// The order, when given.
    pub order_id: String,
    /// Answers.
    pub questions: Vec<serde_json::Value>,
}

/// Report-level buckets: promoters from `promoter_from`, passives from `passive_from`, the rest
/// detractors (the spec's 9–10, 7–8, 0–6 by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Buckets {
    /// Lowest promoter answer (9).
    pub promoter_from: u8,
    /// Lowest passive answer (7).
    pub passive_from: u8,
}

impl Default for Buckets {
    fn default() -> Self {
        Self { promoter_from: 9, passive_from: 7 }
    }
}

/// One scope's NPS.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NpsFigures {
    /// The outlet (empty for the brand).
    pub business_id: String,
    /// Responses.
    pub total: u64,
    /// At or above `promoter_from`.
    pub promoters: u64,
    /// From `passive_from` to below `promoter_from`.
    pub passives: u64,
    /// Below `passive_from`.
    pub detractors: u64,
    /// % promoters − % detractors, two decimals (0 without responses).
    pub nps: f64,
}

impl NpsFigures {
    fn count(&mut self, rating: u8, buckets: Buckets) {
        self.total += 1;
        if rating >= buckets.promoter_from {
            self.promoters += 1;
        } else if rating >= buckets.passive_from {
            self.passives += 1;
        } else {
            self.detractors += 1;
        }
    }

    fn finish(mut self) -> Self {
        if self.total > 0 {
            let share = |n: u64| n as f64 * 100.0 / self.total as f64;
            self.nps = ((share(self.promoters) - share(self.detractors)) * 100.0).round() / 100.0;
        }
        self
    }
}

/// The brand's NPS and each outlet's.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NpsReport {
    /// The buckets used.
    pub buckets: Buckets,
    /// The brand (or the one outlet asked for).
    pub brand: NpsFigures,
    /// Per outlet.
    pub outlets: Vec<NpsFigures>,
}

/// A page of responses.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NpsPage {
    /// `{mobileNo, rating, questions, businessId, order_id, insertedAt}`.
    pub data: Vec<NpsResponse>,
    /// All matching.
    pub total: u64,
}

/// What the conversion did.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Converted {
    /// Form ratings of the day read.
    pub ratings: u64,
    /// Responses written (new or replaced).
    pub responses: u64,
}

fn response(tenant: &Tenant, answer: NpsAnswer, source: &str, now: DateTime<Utc>) -> NpsResponse {
    let nps_id = keys::digest(&[&tenant.id, &answer.business_id, &answer.mobile_no, &answer.order_id, source]);
    NpsResponse {
        nps_id,
        parentBusinessId: tenant.id.clone(),
        businessId: answer.business_id,
        mobileNo: answer.mobile_no,
        rating: answer.rating,
        order_id: answer.order_id,
        questions: answer.questions,
        insertedAt: now,
        validTill: now + Duration::days(NPS_VALIDITY_DAYS),
        status: 1,
        contactMappingId: None,
        source: source.to_owned(),
    }
}

/// Stores an answer of `/nps/data`.
pub async fn record(tenant: &mut Tenant, answer: NpsAnswer, now: DateTime<Utc>) -> Result<NpsResponse, QueryError> {
    if answer.rating > 10 {
        return Err(QueryError::Invalid("/rating: an NPS answer is 0 to 10".to_owned()));
    }
    let row = response(tenant, answer, "api", now);
    tenant.batch(vec![keys::nps_response(&tenant.id, &row.nps_id).put(&row)]).await?;
    metrics::counter!("engage_nps_responses_total", "source" => "api").increment(1);
    Ok(row)
}

/// Every response of the brand, newest first, that `keep` keeps.
pub async fn responses(tenant: &Tenant, keep: impl Fn(&NpsResponse) -> bool) -> Result<Vec<NpsResponse>, QueryError> {
    let mut found = Vec::new();
    tenant
        .repo()
        .visit(NPS_RESPONSES, &tenant.id, |row: NpsResponse| {
            if keep(&row) {
                found.push(row);
            }
        })
        .await?;
    found.sort_by(|a, b| b.insertedAt.cmp(&a.insertedAt).then_with(|| a.nps_id.cmp(&b.nps_id)));
    Ok(found)
}

/// A page of responses, filtered as `/npsList` filters.
pub async fn list(
    tenant: &Tenant,
    business: Option<String>,
    rating: Option<u8>,
    mobile: Option<String>,
    page: u64,
) -> Result<NpsPage, QueryError> {
    let all = responses(tenant, |r| {
        business.as_ref().is_none_or(|b| *b == r.businessId)
            && rating.is_none_or(|n| n == r.rating)
            && mobile.as_ref().is_none_or(|m| *m == r.mobileNo)
    })
    .await?;
    let total = all.len() as u64;
    let data = page_of(all, page.max(1), NPS_PAGE);
    Ok(NpsPage { data, total })
}

/// The NPS of the responses stored between two IST days (`validTill` not considered).
pub async fn report(
    tenant: &Tenant,
    business: Option<String>,
    start: &str,
    end: &str,
    buckets: Buckets,
) -> Result<NpsReport, QueryError> {
    let all = responses(tenant, |r| {
        let day = ist_day(r.insertedAt);
        business.as_ref().is_none_or(|b| *b == r.businessId) && day.as_str() >= start && day.as_str() <= end
    })
    .await?;
    let mut whole = NpsFigures { business_id: business.unwrap_or_default(), ..NpsFigures::default() };
    let mut outlets: BTreeMap<String, NpsFigures> = BTreeMap::new();
    for row in &all {
        whole.count(row.rating, buckets);
        outlets
            .entry(row.businessId.clone())
            .or_insert_with(|| NpsFigures { business_id: row.businessId.clone(), ..NpsFigures::default() })
            .count(row.rating, buckets);
    }
    Ok(NpsReport { buckets, brand: whole.finish(), outlets: outlets.into_values().map(NpsFigures::finish).collect() })
}

/// The conversion of IST day `day`'s feedback-form ratings (source `'3'`) into responses: a
/// rating of 5 or less counts double (stars become a 0–10 answer), a larger one is kept; the
/// response is dated when the rating was given (`validTill` 365 days after).
pub async fn convert(tenant: &mut Tenant, day: &str) -> Result<Converted, QueryError> {
    let mut ratings = Vec::new();
    tenant
        .repo()
        .visit(RATINGS, &tenant.id, |rating: Rating| {
            if rating.source == "3" && ist_day(rating.inserted_at) == day {
                ratings.push(rating);
            }
        })
        .await?;
    let mut done = Converted { ratings: ratings.len() as u64, responses: 0 };
    let mut ops = Vec::new();
    for rating in ratings {
        let value = if rating.rating <= 5 { rating.rating * 2 } else { rating.rating };
        let questions = rating.questions.iter().filter_map(|q| serde_json::to_value(q).ok()).collect();
        let answer = NpsAnswer {
            business_id: rating.business_id,
            mobile_no: rating.mobile_number,
            rating: value.min(10),
            order_id: rating.order_id,
            questions,
        };
        let row = response(tenant, answer, "form", rating.inserted_at);
        ops.push(keys::nps_response(&tenant.id, &row.nps_id).put(&row));
        done.responses += 1;
    }
    for chunk in ops.chunks(500) {
        tenant.batch(chunk.to_vec()).await?;
    }
    metrics::counter!("engage_nps_responses_total", "source" => "form").increment(done.responses);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nps_is_promoters_minus_detractors_with_the_buckets_given() {
        let mut figures = NpsFigures::default();
        for rating in [10, 9, 9, 8, 7, 6, 0, 10, 3, 9] {
            figures.count(rating, Buckets::default());
        }
        let figures = figures.finish();
        // 5 promoters, 2 passives, 3 detractors of 10: 50% - 30% = 20
        assert_eq!((figures.promoters, figures.passives, figures.detractors, figures.nps), (5, 2, 3, 20.0));
        let mut strict = NpsFigures::default();
        for rating in [10, 9, 9, 8, 7, 6, 0, 10, 3, 9] {
            strict.count(rating, Buckets { promoter_from: 10, passive_from: 8 });
        }
        let strict = strict.finish();
        // 2 promoters, 4 passives, 4 detractors: 20% - 40% = -20
        assert_eq!((strict.promoters, strict.passives, strict.detractors, strict.nps), (2, 4, 4, -20.0));
        let mut thirds = NpsFigures::default();
        for rating in [10, 5, 8] {
            thirds.count(rating, Buckets::default());
        }
        assert_eq!(thirds.finish().nps, 0.0);
        let mut two_of_three = NpsFigures::default();
        for rating in [10, 10, 5] {
            two_of_three.count(rating, Buckets::default());
        }
        assert_eq!(two_of_three.finish().nps, 33.33);
    }
}
