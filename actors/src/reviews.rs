//! App-store reviews (spec "Public app-store reviews", "Feedback behaviour" 6): the `review_sync`
//! job (every 3 hours) reads each brand's reviews from two stores and upserts them by review id,
//! changing a stored review only when its text or reply changed, and keeps a last-reviewed marker
//! per brand and store so a run reads only what is new.
//!
//! The two clients speak the stores' public shapes, as engage's adapters (base URL and bearer
//! credential from the settings; the brand's app ids from its own feedback configuration,
//! `store_a_app_id` / `store_b_app_id`):
//!
//! | store | request | answer |
//! |---|---|---|
//! | A | `GET {ENGAGE_STORE_A_URL}/apps/{app}/reviews?pageSize=200[&pageToken=T]` | `{reviews: [{reviewId, reviewer, comment, reply, starRating, createTime, lastModified}], nextPageToken}`, newest `lastModified` first |
//! | B | `GET {ENGAGE_STORE_B_URL}/apps/{appId}/customerReviews?limit=200[&cursor=C]` | `{data: [{id, type, attributes: {rating, title, body, reviewerNickname, createdDate, lastModified, response}}], next}`, newest first |
//!
//! A run reads pages (newest first) until a page's oldest review is not newer than the marker (or
//! there are no more). A
//! store answering 429 or 5xx is asked again after a backoff (0.2 s, 0.4 s, 0.8 s; `Retry-After`
//! up to 5 s), four times at most; then the brand's run for that store fails, its marker stays,
//! and the next run resumes from it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use engage_storage::StoreError;

use crate::domain::delivery::DeliveryError;
use crate::keys;
use crate::repo::Repo;

/// Reviews asked for per page.
pub const REVIEW_PAGE: usize = 200;
/// Attempts per page before a run gives up on a store.
pub const ATTEMPTS: u32 = 4;

/// Which store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AppStore {
    /// Store A.
    A,
    /// Store B.
    B,
}

impl AppStore {
    /// `a` or `b`.
    pub fn as_str(self) -> &'static str {
        match self {
            AppStore::A => "a",
            AppStore::B => "b",
        }
    }
}

/// Where a store is and its credential.
#[derive(Clone, Debug, Default)]
pub struct StoreClient {
    /// Base URL.
    pub url: Option<String>,
    /// Bearer credential.
    pub token: Option<String>,
}

/// A stored review (table `store_reviews`, partition `tenant|a` or `tenant|b`, clustering the
/// review id): the store's own record, the brand, and engage's bookkeeping.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StoreReview {
    /// The store's record as it sent it (store A: `reviewId`, `reviewer`, …; store B: `id`,
    /// `attributes`, …), with `parent_business_id` (and `appId` for store B) added.
    pub record: Value,
    /// Its text (comment or body).
    pub text: String,
    /// Its reply.
    pub reply: String,
    /// Its last modification as the store says (the marker's unit).
    pub last_modified: String,
    /// First stored.
    pub synced_at: DateTime<Utc>,
    /// Last changed by a sync.
    pub updated_at: DateTime<Utc>,
}

/// A brand's last-reviewed marker of one store (table `review_markers`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Marker {
    /// The newest `lastModified` stored.
    pub last_modified: String,
    /// When a run last finished.
    pub synced_at: Option<DateTime<Utc>>,
}

/// What one brand's run on one store did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Synced {
    /// Pages read.
    pub pages: u32,
    /// Reviews read.
    pub read: u32,
    /// New reviews stored.
    pub inserted: u32,
    /// Stored reviews whose text or reply changed.
    pub updated: u32,
    /// Reviews read that had not changed.
    pub unchanged: u32,
    /// Throttled or failed answers retried.
    pub retried: u32,
}

/// One review as read, before it is stored.
struct Read {
    id: String,
    record: Value,
    text: String,
    reply: String,
    last_modified: String,
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Object(map) => map.get("text").or_else(|| map.get("body")).map(text).unwrap_or_default(),
        other => other.to_string(),
    }
}

/// Why a store's reviews were not synced.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// engage's own store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The app store did not answer usably.
    #[error(transparent)]
    Service(#[from] DeliveryError),
}

/// Reads one page, retrying throttled and failed answers with backoff.
async fn page(
    http: &reqwest::Client,
    client: &StoreClient,
    url: &str,
    done: &mut Synced,
) -> Result<Value, DeliveryError> {
    const WHAT: &str = "store";
    let mut wait = Duration::from_millis(200);
    for attempt in 1..=ATTEMPTS {
        let mut request = http.get(url);
        if let Some(token) = &client.token {
            request = request.bearer_auth(token);
        }
        let outcome = request.send().await;
        let retry_after = match outcome {
            Ok(response) if response.status().is_success() => {
                return response
                    .json()
                    .await
                    .map_err(|e| DeliveryError::BadAnswer { what: WHAT, error: format!("not JSON: {e}") });
            }
            Ok(response) if response.status() == 429 || response.status().is_server_error() => response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok())
                .map(|s| Duration::from_secs(s.min(5))),
            Ok(response) => return Err(DeliveryError::Refused { what: WHAT, status: response.status().to_string() }),
            Err(error) => {
                if attempt == ATTEMPTS {
                    return Err(DeliveryError::Unreachable { what: WHAT, error: error.to_string() });
                }
                None
            }
        };
        if attempt == ATTEMPTS {
            return Err(DeliveryError::GaveUp { what: WHAT, attempts: ATTEMPTS });
        }
        done.retried += 1;
        tokio::time::sleep(retry_after.unwrap_or(wait)).await;
        wait *= 2;
    }
    Err(DeliveryError::GaveUp { what: WHAT, attempts: ATTEMPTS })
}

/// The reviews of one page and the next page's token, in store `store`'s shape.
fn reviews_of(store: AppStore, tenant: &str, app: &str, answer: &Value) -> (Vec<Read>, Option<String>) {
    match store {
        AppStore::A => {
            let reviews = answer["reviews"].as_array().cloned().unwrap_or_default();
            let read = reviews
                .into_iter()
                .filter_map(|mut r| {
                    let id = r["reviewId"].as_str()?.to_owned();
                    r["parent_business_id"] = json!(tenant);
                    Some(Read {
                        id,
                        text: text(&r["comment"]),
                        reply: text(&r["reply"]),
                        last_modified: r["lastModified"].as_str().or(r["createTime"].as_str()).unwrap_or("").to_owned(),
                        record: r,
                    })
                })
                .collect();
            (read, answer["nextPageToken"].as_str().filter(|t| !t.is_empty()).map(str::to_owned))
        }
        AppStore::B => {
            let reviews = answer["data"].as_array().cloned().unwrap_or_default();
            let read = reviews
                .into_iter()
                .filter_map(|r| {
                    let id = match &r["id"] {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        _ => return None,
                    };
                    let attributes = r["attributes"].clone();
                    Some(Read {
                        text: text(&attributes["body"]),
                        reply: text(&attributes["response"]),
                        last_modified: attributes["lastModified"]
                            .as_str()
                            .or(attributes["createdDate"].as_str())
                            .unwrap_or("")
                            .to_owned(),
                        record: json!({"id": id, "parent_business_id": tenant, "appId": app, "attributes": attributes}),
                        id,
                    })
                })
                .collect();
            (read, answer["next"].as_str().filter(|t| !t.is_empty()).map(str::to_owned))
        }
    }
}

/// Syncs `tenant`'s reviews of `app` from `store`.
pub async fn sync(
    repo: &Repo,
    http: &reqwest::Client,
    client: &StoreClient,
    store: AppStore,
    tenant: &str,
    app: &str,
    now: DateTime<Utc>,
) -> Result<Synced, SyncError> {
    let Some(base) = client.url.as_deref().map(|u| u.trim_end_matches('/')) else {
        return Ok(Synced::default());
    };
    let marker_key = keys::review_marker(tenant, store.as_str());
    let marker: Marker = repo.get(&marker_key).await?.unwrap_or_default();
    let mut newest = marker.last_modified.clone();
    let mut done = Synced::default();
    let mut token: Option<String> = None;
    loop {
        let url = match (store, &token) {
            (AppStore::A, None) => format!("{base}/apps/{app}/reviews?pageSize={REVIEW_PAGE}"),
            (AppStore::A, Some(t)) => format!("{base}/apps/{app}/reviews?pageSize={REVIEW_PAGE}&pageToken={t}"),
            (AppStore::B, None) => format!("{base}/apps/{app}/customerReviews?limit={REVIEW_PAGE}"),
            (AppStore::B, Some(t)) => format!("{base}/apps/{app}/customerReviews?limit={REVIEW_PAGE}&cursor={t}"),
        };
        let answer = page(http, client, &url, &mut done).await?;
        done.pages += 1;
        let (reviews, next) = reviews_of(store, tenant, app, &answer);
        // newest first: when the page's oldest review is not newer than the marker, the pages
        // after it hold nothing new
        let more = reviews
            .last()
            .is_some_and(|oldest| marker.last_modified.is_empty() || oldest.last_modified > marker.last_modified);
        let mut ops = Vec::new();
        for review in reviews {
            done.read += 1;
            if review.last_modified > newest {
                newest = review.last_modified.clone();
            }
            let key = keys::store_review(tenant, store.as_str(), &review.id);
            let stored: Option<StoreReview> = repo.get(&key).await?;
            match stored {
                Some(old) if old.text == review.text && old.reply == review.reply => done.unchanged += 1,
                Some(old) => {
                    done.updated += 1;
                    let row = StoreReview {
                        record: review.record,
                        text: review.text,
                        reply: review.reply,
                        last_modified: review.last_modified,
                        synced_at: old.synced_at,
                        updated_at: now,
                    };
                    ops.push(key.put(&row));
                }
                None => {
                    done.inserted += 1;
                    let row = StoreReview {
                        record: review.record,
                        text: review.text,
                        reply: review.reply,
                        last_modified: review.last_modified,
                        synced_at: now,
                        updated_at: now,
                    };
                    ops.push(key.put(&row));
                }
            }
        }
        if !ops.is_empty() {
            repo.store().batch(ops).await?;
        }
        match next {
            Some(next) if more => token = Some(next),
            _ => break,
        }
    }
    let marker = Marker { last_modified: newest, synced_at: Some(now) };
    repo.store().batch(vec![marker_key.put(&marker)]).await?;
    metrics::counter!("engage_reviews_synced_total", "store" => store.as_str()).increment(u64::from(done.read));
    Ok(done)
}
