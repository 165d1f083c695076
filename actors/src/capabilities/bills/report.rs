//! The daily bill report's figures (behaviour 10): per outlet, the funnel of the reported IST day
//! beside the same weekday one and two weeks earlier; the day's skipped orders by reason; and the
//! businesses with bills on that sent none that day, each with the reason. The `bill_report` job
//! gathers every brand's figures and writes the workbook ([`crate::reports::write_bills`]).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Duration, NaiveDate};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::generate::{Skip, Skipped};
use super::{configs, funnel_rows, Funnel};
use crate::capabilities::wallet::wallet;
use crate::query::QueryError;
use crate::repo::BILL_SKIPS;
use crate::tenant_core::Tenant;

/// The wallet balance under which a business cannot be sent bills (spec Limits).
pub const UNSENT_BALANCE: Decimal = Decimal::from_parts(30, 0, 0, false, 2);

/// One outlet's funnel on the day and one and two weeks before.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FunnelFigures {
    /// The brand.
    pub parent_business_id: String,
    /// The outlet.
    pub child_business_id: String,
    /// The reported day.
    pub day: Funnel,
    /// Seven days earlier.
    pub week_before: Funnel,
    /// Fourteen days earlier.
    pub two_weeks_before: Funnel,
}

/// Skipped orders of one outlet and reason.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkipCount {
    /// The brand.
    pub parent_business_id: String,
    /// The outlet.
    pub child_business_id: String,
    /// Why.
    pub reason: String,
    /// Orders.
    pub count: u64,
}

/// A business with bills on (or orders waiting for a bill) that sent none.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Unsent {
    /// The brand.
    pub parent_business_id: String,
    /// The outlet, or the brand for its own record.
    pub business_id: String,
    /// Why, in words.
    pub reason: String,
}

/// One brand's figures.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BillReport {
    /// The reported IST day.
    pub date: String,
    /// Per outlet.
    pub funnel: Vec<FunnelFigures>,
    /// Per outlet and reason.
    pub skips: Vec<SkipCount>,
    /// Businesses that sent nothing.
    pub unsent: Vec<Unsent>,
}

fn shifted(day: &str, back: i64) -> Result<String, QueryError> {
    let date =
        NaiveDate::parse_from_str(day, "%Y-%m-%d").map_err(|_| QueryError::Invalid(format!("not a day: {day}")))?;
    Ok((date - Duration::days(back)).format("%Y-%m-%d").to_string())
}

fn describe(reason: &str) -> String {
    match reason {
        "wallet" => "wallet balance below 0.30".to_owned(),
        "no_config" => "no bill configuration (neither the outlet nor the brand)".to_owned(),
        "invalid_mobile" => "every order had an invalid customer number".to_owned(),
        "platform" => "no order came from a platform in bill_platform".to_owned(),
        "link_service" => "the link service did not answer".to_owned(),
        "disabled" => "bills are off".to_owned(),
        "sender" => "the brand's SMS sender has no DLT template id for digital_bill".to_owned(),
        other => format!("orders skipped: {other}"),
    }
}

/// The figures of `day`.
pub async fn figures(tenant: &mut Tenant, day: &str) -> Result<BillReport, QueryError> {
    let dates = [day.to_owned(), shifted(day, 7)?, shifted(day, 14)?];
    let mut by_outlet: BTreeMap<String, [Funnel; 3]> = BTreeMap::new();
    for (slot, date) in dates.iter().enumerate() {
        for row in funnel_rows(tenant, None, date, date).await? {
            let outlet = row.child_business_id.clone();
            by_outlet.entry(outlet).or_default()[slot] = row;
        }
    }
    let sent_on_day = |outlet: &str| by_outlet.get(outlet).map_or(0, |rows: &[Funnel; 3]| rows[0].total_bill_sent);
    let skipped: Vec<Skipped> =
        tenant.repo().all(BILL_SKIPS, &crate::keys::bill_skips_partition(&tenant.id, day)).await?;
    let mut counts: BTreeMap<(String, Skip), u64> = BTreeMap::new();
    for row in &skipped {
        *counts.entry((row.child_business_id.clone(), row.reason)).or_default() += 1;
    }
    let skips = counts
        .iter()
        .map(|((outlet, reason), count)| SkipCount {
            parent_business_id: tenant.id.clone(),
            child_business_id: outlet.clone(),
            reason: reason.as_str().to_owned(),
            count: *count,
        })
        .collect();

    // who should have sent: every business with bills on, and every outlet with skipped orders
    let all = configs(tenant).await?;
    let mut candidates: BTreeSet<String> =
        all.values().filter(|c| c.status == 1).map(|c| c.business_id.clone()).collect();
    candidates.extend(skipped.iter().map(|s| s.child_business_id.clone()));
    let mut unsent = Vec::new();
    for business in candidates {
        let brand_level = all.get(&business).is_some_and(|c| c.brand_level());
        let sent = if brand_level {
            by_outlet.iter().filter(|(o, _)| !all.contains_key(*o)).map(|(_, r)| r[0].total_bill_sent).sum()
        } else {
            sent_on_day(&business)
        };
        if sent > 0 {
            continue;
        }
        let top = counts
            .iter()
            .filter(|((outlet, _), _)| *outlet == business)
            .max_by_key(|(_, count)| **count)
            .map(|((_, reason), _)| reason.as_str());
        // what happened to its orders says most; without any, a wallet too low to pay one bill
        let reason = if let Some(top) = top {
            describe(top)
        } else if !brand_level && wallet(tenant, &business).await?.balance < UNSENT_BALANCE {
            describe("wallet")
        } else {
            "no eligible orders".to_owned()
        };
        unsent.push(Unsent { parent_business_id: tenant.id.clone(), business_id: business, reason });
    }
    let funnel = by_outlet
        .into_iter()
        .map(|(outlet, [day, week_before, two_weeks_before])| FunnelFigures {
            parent_business_id: tenant.id.clone(),
            child_business_id: outlet,
            day,
            week_before,
            two_weeks_before,
        })
        .collect();
    Ok(BillReport { date: day.to_owned(), funnel, skips, unsent })
}
