//! Typed tables over the Store. Every tenant-scoped table has the tenant in its partition key.
//!
//! | table | partition | clustering | value |
//! |---|---|---|---|
//! | `customers` | tenant | phone | [`Customer`] aggregate (totals + order contributions) |
//! | `orders` | `tenant|outlet` | orderId | the order payload with its version, and what it added to the `/stats` rollups (`stats`: a [`crate::capabilities::stats::Contribution`]) |
//! | `crm_queue` | `tenant|YYYY-MM-DD` (IST day) | `received_at|id` | [`QueueRecord`] |
//! | `businesses` | tenant | outlet id | merged business facts (status, merchant data, tokens, last-order hit) |
//! | `checkins` | `tenant|phone` | envelope id | the check-in payload |
//! | `fraud_config` | tenant | `velocity` / `alerts` | velocity limits / alert settings |
//! | `fraud_blocklist` | tenant | phone | `{contact_number, source, created_at}` |
//! | `fraud_flags` | tenant | flag id (`F<millis>-<digest>`) | [`crate::domain::fraud::FraudFlag`] |
//! | `business_wallets` | tenant | business id | [`crate::domain::wallet::Wallet`] |
//! | `wallet_txns` | `tenant|business` | transaction sequence (u64, big-endian) | a wallet transaction |
//! | `wallet_refs` | `tenant|business` | recharge reference / send id | `{txn_id, seq}` (idempotency) |
//! | `channel_queue` | `<sms|chat|push>_queue_<YYYYMMDD>` | `tenant|send id` | a queued send (SMS/push `processed: false`, chat `process_status: 0`) |
//! | `rewards` | tenant | reward id | `{reward_id, name, description, points_cost, valid_days, active}` |
//! | `pending_coupons` | tenant | order id | `{code}` (a POS coupon use waiting for its order) |
//! | `coupons` | tenant | coupon code | `{coupon_code, reward_id, customer_number, status, expires_at, …}` |
//! | `loyalty_otps` | `tenant|phone` | `otp` | `{hash, expires_at, attempts, verified_until}` |
//! | `loyalty_redemptions` | `tenant|phone` | order id | [`crate::domain::customer::Redemption`] |
//! | `pending_redemptions` | `due` | `expires_at|tenant|order id` | `{tenant, phone, order_id, expires_at}` |
//! | `loyalty_rules` | tenant | `rules` | [`crate::domain::loyalty::LoyaltyRules`] |
//! | `loyalty_ledger` | `tenant|phone` | ledger sequence (u64, big-endian) | [`crate::domain::loyalty::LedgerEntry`] |
//! | `loyalty_daily` | `tenant|YYYY-MM-DD` (IST day of the entry) | `phone|ledger sequence` | `{phone, kind, points}`: one row per ledger entry, for day-wise reports |
//! | `wallet_pricing` | tenant | `pricing` | [`crate::domain::wallet::Pricing`]: the brand's prices of paid sends (spec defaults) |
//! | `campaign_journeys` | tenant | journey id | [`crate::capabilities::journeys::JourneyConfig`] |
//! | `journey_types` | `brand\|<tenant>` (and `all`, read-only: types added before types belonged to a brand) | type id | [`crate::capabilities::journeys::JourneyType`]: types a brand added by `/crm_api/autoCampaign` |
//! | `access_settings` | tenant | `open_routes` | `{closed, updated_at}`: whether the brand closed the spec's open routes (`/crm_api/open_routes/settings`) |
//! | `journey_brands` | `all` | tenant | `{}`: brands with journey configurations (the journey jobs walk it) |
//! | `journey_sends` | `tenant|journey` | `phone|occasion` | [`crate::capabilities::journeys::JourneySend`]: a journey's decision (sent, holdout, skipped) and its attributed orders |
//! | `journey_runs` | tenant | `journey|IST day` | [`crate::capabilities::journeys::JourneyRun`]: the send history |
//! | `journey_settings` | tenant | `settings` | [`crate::capabilities::journeys::JourneySettings`]: quiet hours, frequency cap |
//! | `campaign_tags` | tenant | tag id | [`crate::capabilities::journeys::CampaignTag`] |
//! | `open_carts` | `all` | `tenant|outlet/orderId` | [`crate::capabilities::journeys::OpenCart`]: carts the abandoned-cart job looks at |
//! | `auto_campaign_roi` | `tenant|journey` | `IST day|mode` | [`crate::capabilities::journeys::RoiRow`] |
//! | `bill_configs` | tenant | business id (the brand's own record under the brand's id) | [`crate::capabilities::bills::LinkConfig`] |
//! | `bill_widgets` | tenant | widget mapping id (u64, big-endian) | [`crate::capabilities::bills::WidgetMapping`] |
//! | `digital_bills` | tenant | bill id | [`crate::capabilities::bills::Bill`]: the bill customer record and what the bill page shows |
//! | `bill_codes` | first two characters of the bill id | bill id | `{tenant}`: whose bill `/b/<bill_id>` is |
//! | `bill_aliases` | tenant | the link service's bill id | `{bill_id}` |
//! | `bill_funnel` | tenant | `IST day|outlet` | [`crate::capabilities::bills::Funnel`]: the daily funnel |
//! | `bill_skips` | `tenant|IST day` | `outlet|orderId` | [`crate::capabilities::bills::generate::Skipped`]: an order without a bill, and why |
//! | `bill_brands` | `all` | tenant | `{}`: brands with bill configurations (the bill jobs walk it) |
//! | `feedback_configs` | tenant | outlet (`0` for the brand's own) | [`crate::capabilities::feedback::FeedbackConfig`] |
//! | `feedback_requests` | tenant | `outlet|orderId` | [`crate::capabilities::feedback::FeedbackRequest`]: the feedback link sent after an order |
//! | `feedback_funnel` | tenant | `IST day|outlet` | [`crate::capabilities::feedback::FeedbackFunnel`] |
//! | `ratings` | tenant | `outlet|orderId|source` | [`crate::capabilities::feedback::Rating`] |
//! | `nps_responses` | tenant | NPS id | [`crate::capabilities::feedback::nps::NpsResponse`] |
//! | `feedback_brands` | `all` | tenant | `{}`: brands with feedback configurations or ratings |
//! | `feedback_recoveries` | tenant | `outlet|orderId` | [`crate::capabilities::feedback::recovery::Recovery`]: a low-rating recovery |
//! | `store_reviews` | `tenant|a` or `tenant|b` | review id | [`crate::reviews::StoreReview`]: an app-store review |
//! | `review_markers` | tenant | `a` / `b` | [`crate::reviews::Marker`]: the newest `lastModified` synced |
//! | `legacy_feedback_sms` | `all` | `tenant|id` | [`crate::capabilities::feedback::legacy::LegacySms`]: the legacy feedback SMS queue |
//! | `stats_days` | `tenant|scope` (outlet id, or `*` for the brand) | IST day | [`crate::capabilities::stats::Figures`]: the day's rollup |
//! | `stats_special_days` | tenant | IST day | `{date, label}`: a day the brand marked special |
//! | `points_expiry` | `due` | `expires_at|tenant|phone` | `{tenant, phone, expires_at}`: customers holding points that expire then |

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::{Store, StoreError, WriteOp};

use crate::domain::customer::Customer;
use crate::keys::Key;

pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    table: &'static str,
    key: impl FnOnce() -> String,
    bytes: &[u8],
) -> Result<T, StoreError> {
    serde_json::from_slice(bytes).map_err(|source| StoreError::Corrupt { table, key: key(), source })
}

pub use crate::tables::*;

/// Queue status: the event is on the bus, not yet processed (the bus message is the record).
#[allow(dead_code)] // the spec's status 0: no row is written in it (the bus message is the record)
pub const STATUS_QUEUED: u8 = 0;
/// Queue status: processed (customer and order upserted, totals recomputed).
pub const STATUS_PROCESSED: u8 = 1;
/// Queue status: the payload could not be processed (kept for inspection, not retried).
pub const STATUS_UNPROCESSABLE: u8 = 2;
/// Queue status: digital bill generated (the bill's send is committed).
pub const STATUS_BILL_GENERATED: u8 = 3;

/// A `crm_queue` record, as the spec's table. `D` is how it holds the payload: a `Value` as read,
/// a `&Value` when written from an envelope (no copy of the payload).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueRecord<D = Value> {
    /// The original payload.
    pub data: D,
    /// Source id (1 platform, 2 pos_a, 3 pos_c, 4 orderPush, 6 pos_d, 7 pos_e; 0 other events).
    pub source: u8,
    /// `YYYY-MM-DD HH:mm:ss`, IST, when the ingress accepted it.
    pub inserted_at: String,
    /// See the `STATUS_*` constants.
    pub status: u8,
    /// `lambda` when written by the serverless tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_source: Option<String>,
    /// The envelope id.
    pub id: String,
    /// Event kind (`order`, `customer`, …).
    pub kind: String,
    /// Why it is unprocessable, for status 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Typed access to the tables.
#[derive(Clone)]
pub struct Repo {
    store: Arc<dyn Store>,
}

impl Repo {
    /// Over `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Reads the row at `key` as stored.
    pub async fn row(&self, key: &Key) -> Result<Option<Vec<u8>>, StoreError> {
        self.store.get(key.table, &key.partition, &key.clustering).await
    }

    /// The rows at `keys`, in their order, read together ([`engage_storage::Store::get_many`]:
    /// one round trip on NATS KV).
    pub async fn rows_at(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let rows: Vec<(&'static str, &str, &[u8])> =
            keys.iter().map(|key| (key.table, key.partition.as_str(), key.clustering.as_slice())).collect();
        self.store.get_many(&rows).await
    }

    /// Reads the row at `key` as `T`; a row that does not decode is [`StoreError::Corrupt`],
    /// naming its table and key.
    pub async fn get<T: serde::de::DeserializeOwned>(&self, key: &Key) -> Result<Option<T>, StoreError> {
        let Some(bytes) = self.row(key).await? else { return Ok(None) };
        decode(key.table, || key.describe(), &bytes).map(Some)
    }

    /// A put of a customer row.
    pub fn put_customer(tenant: &str, customer: &Customer) -> WriteOp {
        WriteOp::Put {
            table: CUSTOMERS,
            partition: tenant.to_owned(),
            clustering: customer.phone.as_bytes().to_vec(),
            value: serde_json::to_vec(customer).unwrap_or_default(),
        }
    }

    /// A put of any JSON row.
    pub fn put_json(table: &'static str, partition: String, clustering: &[u8], value: &impl Serialize) -> WriteOp {
        crate::keys::put_json(table, partition, clustering, value)
    }

    /// Reads a JSON row.
    pub async fn json(
        &self,
        table: &'static str,
        partition: &str,
        clustering: &[u8],
    ) -> Result<Option<Value>, StoreError> {
        let Some(bytes) = self.store.get(table, partition, clustering).await? else { return Ok(None) };
        let key = || format!("{partition}/{}", String::from_utf8_lossy(clustering));
        decode(table, key, &bytes).map(Some)
    }

    /// Every row of a tenant-scoped table, decoded as JSON, in clustering order.
    pub async fn all_json(&self, table: &'static str, partition: &str) -> Result<Vec<Value>, StoreError> {
        self.all(table, partition).await
    }

    /// Every row of a partition, decoded as `T`, in clustering order; a row that does not decode
    /// is [`StoreError::Corrupt`].
    pub async fn all<T: serde::de::DeserializeOwned>(
        &self,
        table: &'static str,
        partition: &str,
    ) -> Result<Vec<T>, StoreError> {
        let mut out = Vec::new();
        self.visit(table, partition, |row| out.push(row)).await?;
        Ok(out)
    }

    /// Hands every row of a partition, decoded as JSON, to `visit`, in clustering order, a page
    /// at a time (nothing is collected).
    pub async fn visit_json(
        &self,
        table: &'static str,
        partition: &str,
        visit: impl FnMut(Value),
    ) -> Result<(), StoreError> {
        self.visit(table, partition, visit).await
    }

    /// Hands every row of a partition, decoded as `T`, to `visit`, in clustering order, a page at
    /// a time.
    pub async fn visit<T: serde::de::DeserializeOwned>(
        &self,
        table: &'static str,
        partition: &str,
        mut visit: impl FnMut(T),
    ) -> Result<(), StoreError> {
        let mut after: Option<Vec<u8>> = None;
        loop {
            let rows = self.store.scan(table, partition, after.as_deref(), 1000).await?;
            let Some(last) = rows.last() else { break };
            after = Some(last.clustering.clone());
            for row in &rows {
                visit(decode(table, || row_key(partition, &row.clustering), &row.value)?);
            }
        }
        Ok(())
    }

    /// Every row of a partition as stored, in clustering order, read a page at a time.
    pub async fn rows(&self, table: &'static str, partition: &str) -> Result<Vec<engage_storage::Row>, StoreError> {
        let mut out: Vec<engage_storage::Row> = Vec::new();
        loop {
            let after = out.last().map(|row| row.clustering.clone());
            let page = self.store.scan(table, partition, after.as_deref(), 1000).await?;
            if page.is_empty() {
                return Ok(out);
            }
            out.extend(page);
        }
    }

    /// The clustering keys (as text) of every row of a partition, in order.
    pub async fn clusterings(&self, table: &'static str, partition: &str) -> Result<Vec<String>, StoreError> {
        let rows = self.rows(table, partition).await?;
        Ok(rows.into_iter().map(|r| String::from_utf8_lossy(&r.clustering).into_owned()).collect())
    }

    /// A page of a partition's JSON rows in clustering order: rows `offset..offset + limit` of a
    /// sequence-keyed table.
    pub async fn seq_page<T: serde::de::DeserializeOwned>(
        &self,
        table: &'static str,
        partition: &str,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<T>, StoreError> {
        let after = offset.checked_sub(1).map(|last| last.to_be_bytes().to_vec());
        let rows = self.store.scan(table, partition, after.as_deref(), limit).await?;
        rows.iter().map(|row| decode(table, || row_key(partition, &row.clustering), &row.value)).collect()
    }

    /// Queue records of a tenant's IST day, oldest first.
    pub async fn queue_records(&self, tenant: &str, day: &str, limit: usize) -> Result<Vec<QueueRecord>, StoreError> {
        let partition = crate::keys::queue_partition(tenant, day);
        let rows = self.store.scan(CRM_QUEUE, &partition, None, limit).await?;
        rows.iter().map(|row| decode(CRM_QUEUE, || row_key(&partition, &row.clustering), &row.value)).collect()
    }
}

fn row_key(partition: &str, clustering: &[u8]) -> String {
    format!("{partition}/{}", String::from_utf8_lossy(clustering))
}
