//! Answers to the journey questions that are not a run: the campaign report, a tracked click, one configuration.

use super::super::wallet::WalletTxn;
use crate::keys::{self};
use crate::query::QueryError;
use crate::repo::{BUSINESS_WALLETS, WALLET_TXNS};
use crate::tenant_core::Tenant;
use chrono::{DateTime, Utc};

#[allow(unused_imports)]
use super::*;

/// The wallet transactions (with their outlet) whose `auto_id` passes `wanted`, of `business_id`'s
/// wallet or every outlet's, oldest first per outlet.
pub(super) async fn wallet_txns_of(
    tenant: &Tenant,
    business_id: Option<String>,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<(String, WalletTxn)>, QueryError> {
    let outlets = match business_id {
        Some(outlet) => vec![outlet],
        None => tenant.repo().clusterings(BUSINESS_WALLETS, &tenant.id).await?,
    };
    let mut found = Vec::new();
    for outlet in outlets {
        let partition = keys::wallet_txns_partition(&tenant.id, &outlet);
        tenant
            .repo()
            .visit(WALLET_TXNS, &partition, |txn: WalletTxn| {
                if txn.auto_id.as_deref().is_some_and(&wanted) {
                    found.push((outlet.clone(), txn));
                }
            })
            .await?;
    }
    Ok(found)
}

/// The wallet transactions whose `auto_id` is `auto_id`.
pub(super) async fn report(tenant: &Tenant, auto_id: &str, business_id: Option<String>) -> Result<Report, QueryError> {
    let mut data = Vec::new();
    let mut total = rust_decimal::Decimal::ZERO;
    for (outlet, txn) in wallet_txns_of(tenant, business_id, |id| id == auto_id).await? {
        if txn.transaction_type == "debit" {
            total += txn.amount;
        }
        data.push(CampaignTxn { business_id: outlet, txn });
    }
    Ok(Report { count: data.len(), data, total_debited: total.normalize().to_string() })
}

/// Counts a click on the tracking link of a journey send.
pub(super) async fn click(
    tenant: &mut Tenant,
    journey: &str,
    phone: &str,
    occasion: &str,
    now: DateTime<Utc>,
) -> Result<Clicked, QueryError> {
    let key = keys::journey_send(&tenant.id, journey, phone, occasion);
    let Some(mut send) = tenant.repo().get::<JourneySend>(&key).await? else {
        return Ok(Clicked { counted: false, clicks: 0 });
    };
    send.clicks += 1;
    send.first_click_at.get_or_insert(now);
    tenant.batch(vec![key.put(&send)]).await?;
    metrics::counter!("engage_journey_link_clicks_total").increment(1);
    Ok(Clicked { counted: true, clicks: send.clicks })
}

pub(super) async fn config(tenant: &Tenant, id: &str) -> Result<JourneyConfig, QueryError> {
    tenant.repo().get(&keys::campaign_journey(&tenant.id, id)).await?.ok_or(QueryError::NotFound)
}
