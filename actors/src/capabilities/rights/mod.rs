//! A customer's data rights (`docs/consent.md`): the export of everything engage holds about one
//! phone number in one brand, as one document ([`CustomerExport`]), and the erasure of it
//! ([`erase`]). The export is read beside the actor (it scans the brand's bills, feedback and the
//! channel queues of the retention window): committed rows only, never holding up the brand's
//! writes. The erasure runs in the actor's turn.

mod erase;
mod sweep;

pub use erase::{Erase, Erased};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::capabilities::consent::ConsentView;
use crate::capabilities::customers::{self, CustomerView};
use crate::domain::consent::{ConsentDefaults, Subscriptions};
use crate::domain::customer::Customer;
use crate::domain::time::ist_day;
use crate::domain::wallet::Channel;
use crate::keys;
use crate::query::{question, QueryError};
use crate::repo::Repo;
use crate::tables::{
    CAMPAIGN_JOURNEYS, COUPONS, DIGITAL_BILLS, FEEDBACK_RECOVERIES, FEEDBACK_REQUESTS, LOYALTY_LEDGER, NPS_RESPONSES,
    RATINGS, REDEMPTIONS,
};

/// A question of the data-rights capability.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum RightsQuery {
    /// See [`Export`].
    Export(Export),
    /// See [`Erase`].
    Erase(Erase),
    /// See [`PurgeErased`].
    PurgeErased(PurgeErased),
}

question! {
    /// The end of an erasure, once the bus's part is done too: the bytes of the rows the erasure
    /// deleted or rewrote leave the store's files ([`engage_storage::Store::purge_unreachable`]).
    /// Answered beside the actor (the brand's orders go on meanwhile); answers when the journal
    /// holding them is gone (the tables' compaction follows at once, on the store's purge thread).
    pub struct PurgeErased {} -> ();
}

question! {
    /// Everything the brand holds about `phone`: [`CustomerExport`].
    pub struct Export {
        /// Customer phone.
        pub phone: String,
    } -> CustomerExport;
}

/// Everything engage holds about one customer of one brand: each list holds the stored rows of
/// one table, in the type they are kept as (an order's own row is its payload as received).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CustomerExport {
    /// Customer phone.
    pub mobile_number: String,
    /// The brand.
    pub parent_business_id: String,
    /// When the export was made.
    pub exported_at: DateTime<Utc>,
    /// The profile as `/crm_api/get/customer/details` shows it (absent: no customer row).
    pub profile: Option<CustomerView>,
    /// The customer's orders: each order's contribution by `outlet/orderId`, and the stored
    /// order rows.
    pub orders: Vec<ExportedOrder>,
    /// The loyalty ledger, oldest first.
    pub ledger: Vec<crate::domain::loyalty::LedgerEntry>,
    /// Point redemptions, by order.
    pub redemptions: Vec<crate::domain::customer::Redemption>,
    /// Coupons issued to the customer.
    pub coupons: Vec<crate::capabilities::rewards::Coupon>,
    /// Digital bills sent to the customer.
    pub bills: Vec<crate::capabilities::bills::Bill>,
    /// Feedback requests sent to the customer.
    pub feedback_requests: Vec<crate::capabilities::feedback::FeedbackRequest>,
    /// The customer's ratings and comments.
    pub ratings: Vec<crate::capabilities::feedback::Rating>,
    /// The customer's NPS answers.
    pub nps: Vec<crate::capabilities::feedback::nps::NpsResponse>,
    /// Low-rating recoveries offered to the customer.
    pub recoveries: Vec<crate::capabilities::feedback::recovery::Recovery>,
    /// Marketing subscriptions.
    pub subscriptions: ConsentView,
    /// Journey decisions about the customer (sent, held out, skipped).
    pub journey_sends: Vec<crate::capabilities::journeys::JourneySend>,
    /// Messages queued for the customer in the last 35 days (the queues' retention), any channel.
    pub sends: Vec<crate::capabilities::wallet::QueuedSend>,
}

/// One of the customer's orders in an export.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExportedOrder {
    /// `outlet/orderId`.
    pub order: String,
    /// What the customer's totals count for it.
    pub contribution: Option<crate::domain::kept_orders::Contribution>,
    /// The stored order row: the order as received (free-form: each source its own fields).
    pub row: Option<Value>,
}

/// The channel queue partitions (`sms_queue_20261127`, …) of the days a queued message is kept
/// (the queues' retention, [`crate::tables::DAY_BUCKET_RETENTION_DAYS`]), up to `now`'s IST day.
pub(crate) fn queue_partitions(now: DateTime<Utc>) -> Vec<String> {
    let days = crate::tables::DAY_BUCKET_RETENTION_DAYS
        .iter()
        .find(|(table, _)| *table == crate::tables::CHANNEL_QUEUE)
        .map_or(35, |(_, days)| i64::from(*days));
    (0..days)
        .flat_map(|back| {
            let day = ist_day(now - Duration::days(back)).replace('-', "");
            [Channel::Sms, Channel::Chat, Channel::Push].map(|channel| format!("{}_{day}", channel.queue()))
        })
        .collect()
}

/// `table` and each of its day partitions (`partition` of the IST day `YYYY-MM-DD`) over the
/// table's retention window (`DAY_BUCKET_RETENTION_DAYS`) up to `now`.
pub(crate) fn day_partitions(
    now: DateTime<Utc>,
    table: &'static str,
    partition: impl Fn(&str) -> String,
) -> Vec<(&'static str, String)> {
    let days = crate::tables::DAY_BUCKET_RETENTION_DAYS.iter().find(|(t, _)| *t == table).map_or(35, |(_, d)| *d);
    (0..=i64::from(days)).map(|back| (table, partition(&ist_day(now - Duration::days(back))))).collect()
}

/// Whether a stored row names `phone` in one of the fields that hold a customer's number.
pub(crate) fn names(row: &Value, phone: &str) -> bool {
    ["phone", "mobile_number", "mobileNo", "customer_number", "number", "to", "contact", "mobile"]
        .iter()
        .any(|field| row.get(*field).and_then(Value::as_str) == Some(phone))
}

async fn rows_naming(repo: &Repo, table: &'static str, partition: &str, phone: &str) -> Result<Vec<Value>, QueryError> {
    let mut out = Vec::new();
    repo.visit_json(table, partition, |row| {
        if names(&row, phone) {
            out.push(row);
        }
    })
    .await?;
    Ok(out)
}

/// `rows` of `table` in the type they are kept as.
fn typed<T: serde::de::DeserializeOwned>(table: &str, rows: Vec<Value>) -> Result<Vec<T>, QueryError> {
    rows.into_iter()
        .map(|row| serde_json::from_value(row).map_err(|e| QueryError::Failed(format!("a {table} row: {e}"))))
        .collect()
}

/// [`rows_naming`] in the type `table` keeps its rows as.
async fn typed_rows_naming<T: serde::de::DeserializeOwned>(
    repo: &Repo,
    table: &'static str,
    partition: &str,
    phone: &str,
) -> Result<Vec<T>, QueryError> {
    typed(table, rows_naming(repo, table, partition, phone).await?)
}

/// The keys (`outlet/orderId`) of every order of `phone`: those listed in `customer_orders` and
/// those the customer's row keeps (a row written before that table lists them there only).
pub(crate) async fn order_keys(
    repo: &Repo,
    tenant: &str,
    phone: &str,
    customer: Option<&Customer>,
) -> Result<std::collections::BTreeSet<String>, QueryError> {
    let partition = keys::customer_orders_partition(tenant, phone);
    let mut all: std::collections::BTreeSet<String> =
        repo.clusterings(crate::tables::CUSTOMER_ORDERS, &partition).await?.into_iter().collect();
    all.extend(customer.into_iter().flat_map(|c| c.orders.keys().cloned()));
    Ok(all)
}

/// The export of `phone` in `tenant`, from committed rows.
pub async fn export(repo: Repo, tenant: String, phone: String) -> Result<CustomerExport, QueryError> {
    let now = Utc::now();
    let customer: Option<Customer> = repo.get(&keys::customer(&tenant, &phone)).await?;
    let mut orders = Vec::new();
    for key in order_keys(&repo, &tenant, &phone, customer.as_ref()).await? {
        let (outlet, order_id) = key.split_once('/').unwrap_or(("", &key));
        let row: Option<Value> = repo.get(&keys::order(&tenant, outlet, order_id)).await?;
        // what the customer's totals count for it: kept in their row, or in the order's own
        let kept = customer.as_ref().and_then(|c| c.orders.get(&key)).cloned();
        let contribution = kept.or_else(|| {
            let counted = row.as_ref().and_then(|r| r.get(crate::capabilities::orders::COUNTED).cloned())?;
            serde_json::from_value(counted).ok()
        });
        orders.push(ExportedOrder { order: key, contribution, row });
    }
    let ledger = repo.all(LOYALTY_LEDGER, &keys::ledger_partition(&tenant, &phone)).await?;
    let redemptions = repo.all(REDEMPTIONS, &keys::ledger_partition(&tenant, &phone)).await?;
    let subs: Subscriptions = repo.get(&keys::consent(&tenant, &phone)).await?.unwrap_or_default();
    let defaults: ConsentDefaults = repo.get(&keys::consent_defaults(&tenant)).await?.unwrap_or_default();
    let subscriptions = crate::capabilities::consent::view(&phone, &subs, &defaults);
    let mut journey_sends = Vec::new();
    for journey in repo.clusterings(CAMPAIGN_JOURNEYS, &tenant).await? {
        let partition = keys::journey_sends_partition(&tenant, &journey);
        journey_sends.extend(typed_rows_naming(&repo, crate::tables::JOURNEY_SENDS, &partition, &phone).await?);
    }
    let mut sends = Vec::new();
    for partition in queue_partitions(now) {
        let mut found = rows_naming(&repo, crate::tables::CHANNEL_QUEUE, &partition, &phone).await?;
        found.retain(|row| row.get("parent_business_id").and_then(Value::as_str) == Some(tenant.as_str()));
        sends.extend(found);
    }
    Ok(CustomerExport {
        profile: customer.as_ref().map(|c| customers::view(c, now)),
        orders,
        ledger,
        redemptions,
        coupons: typed_rows_naming(&repo, COUPONS, &tenant, &phone).await?,
        bills: typed_rows_naming(&repo, DIGITAL_BILLS, &tenant, &phone).await?,
        feedback_requests: typed_rows_naming(&repo, FEEDBACK_REQUESTS, &tenant, &phone).await?,
        ratings: typed_rows_naming(&repo, RATINGS, &tenant, &phone).await?,
        nps: typed_rows_naming(&repo, NPS_RESPONSES, &tenant, &phone).await?,
        recoveries: typed_rows_naming(&repo, FEEDBACK_RECOVERIES, &tenant, &phone).await?,
        subscriptions,
        journey_sends,
        sends: typed(crate::tables::CHANNEL_QUEUE, sends)?,
        mobile_number: phone,
        parent_business_id: tenant,
        exported_at: now,
    })
}

// Each question of the area (read beside the actor).
crate::query::answers! {
    (tenant, _)
    Export: Export { phone } => export(tenant.repo().clone(), tenant.id.clone(), phone).await;
        beside(tenant) => export(tenant.repo().clone(), tenant.id.clone(), phone),
    Erase: Erase { phone, by, now } => erase::erase(tenant, &phone, &by, now).await,
    PurgeErased: _ => purge(tenant.repo().clone()).await;
        beside(tenant) => purge(tenant.repo().clone()),
}

async fn purge(repo: Repo) -> Result<(), QueryError> {
    Ok(repo.store().purge_unreachable().await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_the_customers_when_a_phone_field_is_theirs() {
        assert!(names(&serde_json::json!({"mobile_number": "9811400001", "rating": 4}), "9811400001"));
        assert!(names(&serde_json::json!({"to": "9811400001"}), "9811400001"));
        assert!(!names(&serde_json::json!({"to": "9811400002", "note": "9811400001"}), "9811400001"));
    }
}
