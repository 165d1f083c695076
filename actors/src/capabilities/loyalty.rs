//! Loyalty points: the brand's rules and milestones, balances, earning on orders (the
//! [`EarnPoints`] order reaction), expiry, the day-wise report and the ledger pages. Redemptions
//! are [`super::redemption`].

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::{StoreError, WriteOp};

use super::fraud::{is_blocked, raise_flag, velocity};
use super::ledger::{self, Draft, LotEffect};
use crate::domain::customer::{Applied, Customer};
use crate::domain::fraud::{breaches, count_in_period, record, POINTS_EARNING, TXN_EARN};
use crate::domain::loyalty::{DayFigures, Lot, LoyaltyRules, Milestone, RulesPatch};
use crate::domain::order::{decimal, OrderFacts};
use crate::domain::time::{end_of_ist_day_after, instant_key, parse_instant};
use crate::keys::{self, digest};
use crate::query::{question, QueryError};
use crate::reaction::{OrderEvent, OrderReaction};
use crate::repo::{Repo, LOYALTY_DAILY, LOYALTY_LEDGER};
use crate::tenant_core::Tenant;

/// Loyalty queries.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum LoyaltyQuery {
    /// See [`SetRules`].
    SetRules(SetRules),
    /// See [`SetMilestones`].
    SetMilestones(SetMilestones),
    /// See [`GetRules`].
    GetRules(GetRules),
    /// See [`Balance`].
    Balance(Balance),
    /// See [`ExpirePoints`].
    ExpirePoints(ExpirePoints),
    /// See [`GetDayWise`].
    DayWise(GetDayWise),
    /// See [`Ledger`].
    Ledger(Ledger),
}

question! {
    /// Change the brand's loyalty rules (fields left out keep their value, milestones are kept)
    /// in one turn of its actor; answers the rules.
    pub struct SetRules {
        /// The changes.
        pub patch: RulesPatch,
    } -> LoyaltyRules;
}

question! {
    /// Replace the brand's milestones; answers the rules.
    pub struct SetMilestones {
        /// The milestones.
        pub milestones: Vec<Milestone>,
    } -> LoyaltyRules;
}

question! {
    /// The brand's rules.
    pub struct GetRules {} -> LoyaltyRules;
}

question! {
    /// A customer's points, and how many are redeemable on `bill` (decimal text) when given:
    /// [`PointsBalance`].
    pub struct Balance {
        /// Customer phone.
        pub phone: String,
        /// Bill amount, when known.
        pub bill: Option<String>,
    } -> PointsBalance;
}

question! {
    /// Expire the customer's points whose expiry is at or before `now` (the expiry job): [`Expired`].
    pub struct ExpirePoints {
        /// Customer phone.
        pub phone: String,
        /// The job's clock (RFC 3339).
        pub now: String,
    } -> Expired;
}

question! {
    /// Day-wise loyalty figures of the IST days `from..=to` (`YYYY-MM-DD`): [`DayWise`]. Read
    /// beside the actor ([`day_wise`]), never holding up the brand's writes.
    pub struct GetDayWise {
        /// First day.
        pub from: String,
        /// Last day.
        pub to: String,
    } -> DayWise;
}

question! {
    /// A page of a customer's points ledger: [`LedgerPage`].
    pub struct Ledger {
        /// Customer phone.
        pub phone: String,
        /// Page number, from 1.
        pub page: u64,
        /// Entries per page.
        pub page_size: u64,
    } -> LedgerPage;
}

/// A customer's points.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PointsBalance {
    /// The customer.
    pub customer_number: String,
    /// Balance.
    pub loyalty_points: i64,
    /// Redeemable now (on the bill, when given).
    pub redeemable_points: i64,
    /// Value of a point.
    pub point_value: Option<f64>,
    /// Fewest points a redemption may use.
    pub min_redeem_points: i64,
    /// Largest share of a bill payable with points, percent.
    pub max_redeem_percent: Option<f64>,
    /// The earliest expiring lot.
    pub next_expiry: Option<Lot>,
}

/// What an expiry run did to one customer.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Expired {
    /// Points expired.
    pub expired: i64,
    /// The balance after it (absent for an unknown customer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loyalty_points: Option<i64>,
}

/// Day-wise figures.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DayWise {
    /// First day.
    pub from: String,
    /// Last day.
    pub to: String,
    /// One entry per IST day.
    pub data: Vec<DayRow>,
    /// The range's totals (customers counted once).
    pub totals: DayRow,
}

pub use crate::domain::loyalty::DayRow;

/// A page of a ledger.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LedgerPage {
    /// The rows, oldest first.
    pub data: Vec<crate::domain::loyalty::LedgerEntry>,
    /// Page, from 1.
    pub page: u64,
    /// Per page.
    pub page_size: u64,
    /// All rows.
    pub total: u64,
    /// The balance.
    pub loyalty_points: i64,
}

/// A decimal as a JSON number (None when it has no `f64`).
pub fn number(value: Decimal) -> Option<f64> {
    value.to_f64()
}

/// A bill amount (decimal text), non-negative.
pub fn parse_bill(bill: Option<&str>) -> Result<Option<Decimal>, QueryError> {
    match bill {
        None => Ok(None),
        Some(text) => decimal(&Value::String(text.to_owned()))
            .filter(|d| !d.is_sign_negative())
            .map(Some)
            .ok_or_else(|| QueryError::Invalid(format!("bill amount {text:?} is not a non-negative number"))),
    }
}

/// The brand's rules (cached; no points are earned without configured rules).
pub async fn rules(tenant: &mut Tenant) -> Result<LoyaltyRules, StoreError> {
    if let Some(rules) = &tenant.rules {
        return Ok(rules.clone());
    }
    let rules: LoyaltyRules = tenant.repo().get(&keys::loyalty_rules(&tenant.id)).await?.unwrap_or_default();
    tenant.rules = Some(rules.clone());
    Ok(rules)
}

async fn save_rules(tenant: &mut Tenant, rules: LoyaltyRules) -> Result<LoyaltyRules, StoreError> {
    tenant.batch(vec![keys::loyalty_rules(&tenant.id).put(&rules)]).await?;
    tenant.rules = Some(rules.clone());
    Ok(rules)
}

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _) let now = Utc::now();
    SetRules: SetRules { patch } => {
        let new = patch.apply(&rules(tenant).await?);
        Ok(save_rules(tenant, new).await?)
    },
    SetMilestones: SetMilestones { mut milestones } => {
        milestones.sort_by_key(|m| m.orders);
        milestones.dedup_by_key(|m| m.orders);
        let current = rules(tenant).await?;
        Ok(save_rules(tenant, LoyaltyRules { milestones, ..current }).await?)
    },
    GetRules: _ => Ok(rules(tenant).await?),
    Balance: Balance { phone, bill } => {
        let rules = rules(tenant).await?;
        let customer = tenant.known_customer(&phone).await?;
        let bill = parse_bill(bill.as_deref())?;
        Ok(PointsBalance {
            redeemable_points: rules.redeemable(customer.loyalty_points, bill),
            point_value: number(rules.point_value),
            min_redeem_points: rules.min_redeem_points,
            max_redeem_percent: number(rules.max_redeem_percent),
            next_expiry: customer.point_lots.next(),
            loyalty_points: customer.loyalty_points,
            customer_number: customer.phone,
        })
    },
    ExpirePoints: ExpirePoints { phone, now: clock } => {
        expire(tenant, &phone, parse_instant(&clock).unwrap_or(now)).await
    },
    GetDayWise: GetDayWise { from, to } => day_wise(tenant.repo().clone(), tenant.id.clone(), from, to).await;
        beside(tenant) => day_wise(tenant.repo().clone(), tenant.id.clone(), from, to),
    Ledger: Ledger { phone, page, page_size } => {
        let customer = tenant.known_customer(&phone).await?;
        let page = page.max(1);
        let page_size = page_size.clamp(1, 100);
        let partition = keys::ledger_partition(&tenant.id, &phone);
        let data =
            tenant.repo().seq_page(LOYALTY_LEDGER, &partition, (page - 1) * page_size, page_size as usize).await?;
        Ok(LedgerPage {
            data,
            page,
            page_size,
            total: customer.ledger_seq,
            loyalty_points: customer.loyalty_points,
        })
    },
}

async fn expire(tenant: &mut Tenant, phone: &str, clock: DateTime<Utc>) -> Result<Expired, QueryError> {
    let Some(mut customer) = tenant.customer(phone).await? else {
        return Ok(Expired { expired: 0, loyalty_points: None });
    };
    let lots = customer.point_lots.expire(clock);
    // the lots never hold more than the balance; the clamp keeps it so for old rows
    let points = lots.iter().map(|lot| lot.points).sum::<i64>().min(customer.loyalty_points);
    if points <= 0 {
        return Ok(Expired { expired: 0, loyalty_points: Some(customer.loyalty_points) });
    }
    let last = lots.last().map(|lot| instant_key(lot.expires_at)).unwrap_or_default();
    let ops = ledger::entry(
        &tenant.id,
        &mut customer,
        Draft {
            txn_id: format!("X-{}", digest(&[&tenant.id, phone, &last])),
            kind: "expire",
            points: -points,
            order_id: None,
            outlet_id: None,
            at: clock,
            lots: LotEffect::Expired(lots),
        },
    );
    let balance = customer.loyalty_points;
    tenant.commit_customer(ops, customer).await?;
    metrics::counter!("engage_points_expired_total").increment(points.unsigned_abs());
    Ok(Expired { expired: points, loyalty_points: Some(balance) })
}

/// Day-wise figures of `tenant` for the IST days `from..=to`, and their totals (customers counted
/// once over the range). A read of `loyalty_daily` only, run beside the actor (not in it), so a long
/// report never holds up the brand's writes.
pub async fn day_wise(repo: Repo, tenant: String, from: String, to: String) -> Result<DayWise, QueryError> {
    let parse = |d: &str| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok();
    let (Some(first), Some(last)) = (parse(&from), parse(&to)) else {
        return Err(QueryError::Invalid("day-wise dates must be YYYY-MM-DD".into()));
    };
    let mut days = Vec::new();
    let mut total = DayFigures::default();
    for date in first.iter_days().take_while(|d| *d <= last) {
        let date = date.format("%Y-%m-%d").to_string();
        let mut day = DayFigures::default();
        repo.visit_json(LOYALTY_DAILY, &keys::loyalty_daily_partition(&tenant, &date), |row| {
            let (phone, kind) = (row["phone"].as_str().unwrap_or_default(), row["kind"].as_str().unwrap_or_default());
            let points = row["points"].as_i64().unwrap_or(0);
            day.add(phone, kind, points);
            total.add(phone, kind, points);
        })
        .await?;
        days.push(DayRow { date: Some(date), ..day.view() });
    }
    Ok(DayWise { from, to, data: days, totals: total.view() })
}

/// Order reaction: earns (or adjusts) the order's points under the brand's rules and velocity
/// limits, and awards milestones. Blocked customers earn nothing (the order still counts).
pub struct EarnPoints;

#[async_trait]
impl OrderReaction for EarnPoints {
    fn name(&self) -> &'static str {
        "loyalty_earn"
    }

    fn reads(&self, tenant: &str, facts: &OrderFacts) -> Vec<keys::Key> {
        vec![keys::blocklist(tenant, &facts.phone)]
    }

    async fn react(
        &self,
        tenant: &mut Tenant,
        order: &OrderEvent<'_>,
        customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        let rules = rules(tenant).await?;
        let (facts, envelope, received) = (order.facts, order.envelope, order.received);
        let expires = end_of_ist_day_after(received, rules.points_expiry_days);
        if is_blocked(tenant, customer).await? {
            return Ok(());
        }
        if order.changed() {
            let key = facts.key();
            let before = customer.orders.get(&key).map_or(0, |c| c.points);
            // what is given back earns nothing (a whole refund: nothing at all)
            let mut after = rules.points_for(facts.net());
            if order.voids() {
                // the earn it counted against the velocity limit is taken back too
                if let Some(at) = order.before.as_ref().and_then(|b| crate::domain::order::version_received(&b.version))
                {
                    crate::domain::fraud::unrecord(&mut customer.velocity, TXN_EARN, at);
                }
            }
            if order.applied == Applied::New && after > 0 {
                let limits = velocity(tenant).await?;
                let already =
                    count_in_period(&customer.velocity, TXN_EARN, limits.points_earning_limit_period, received);
                if breaches(limits.points_earning_limit_value, already) {
                    let (_, flag) =
                        raise_flag(tenant, customer, POINTS_EARNING, Some(facts.business_id.clone()), received);
                    ops.extend(flag);
                    after = 0;
                } else {
                    record(&mut customer.velocity, TXN_EARN, received);
                }
            }
            // an update may take points back, but never below a zero balance
            let delta = (after - before).max(-customer.loyalty_points);
            if let Some(contribution) = customer.orders.get_mut(&key) {
                contribution.points = before + delta;
            }
            if delta != 0 {
                ops.extend(ledger::entry(
                    &tenant.id,
                    customer,
                    Draft {
                        txn_id: format!("E-{}", &envelope.id[..envelope.id.len().min(16)]),
                        kind: match (order.applied, facts.has_refund() && delta < 0) {
                            (Applied::New, _) => "earn",
                            (_, true) => "clawback",
                            _ => "adjust",
                        },
                        points: delta,
                        order_id: Some(facts.order_id.clone()),
                        outlet_id: Some(facts.business_id.clone()),
                        at: received,
                        lots: if delta > 0 { LotEffect::Grant(expires) } else { LotEffect::Consume },
                    },
                ));
            }
        }
        let orders = u32::try_from(customer.total_orders()).unwrap_or(u32::MAX);
        // a refund that takes the customer below a milestone takes its bonus back (as far as the
        // balance goes) and lets it be reached again
        let lost: Vec<_> = rules
            .milestones
            .iter()
            .filter(|m| m.orders > orders && customer.milestones_awarded.contains(&m.orders))
            .cloned()
            .collect();
        for milestone in lost {
            customer.milestones_awarded.remove(&milestone.orders);
            let points = milestone.bonus_points.min(customer.loyalty_points);
            if points > 0 {
                let txn_id = format!(
                    "BC-{}",
                    digest(&[&tenant.id, &customer.phone, &milestone.orders.to_string(), &envelope.id])
                );
                ops.extend(ledger::entry(
                    &tenant.id,
                    customer,
                    Draft {
                        txn_id,
                        kind: "clawback",
                        points: -points,
                        order_id: Some(facts.order_id.clone()),
                        outlet_id: Some(facts.business_id.clone()),
                        at: received,
                        lots: LotEffect::Consume,
                    },
                ));
            }
        }
        for milestone in rules.milestones_reached(orders, &customer.milestones_awarded) {
            customer.milestones_awarded.insert(milestone.orders);
            // reached again after a refund took it back: a new entry
            let again = customer.ledger_seq.to_string();
            let txn_id = format!("B-{}", digest(&[&tenant.id, &customer.phone, &milestone.orders.to_string(), &again]));
            ops.extend(ledger::entry(
                &tenant.id,
                customer,
                Draft {
                    txn_id,
                    kind: "bonus",
                    points: milestone.bonus_points,
                    order_id: Some(facts.order_id.clone()),
                    outlet_id: Some(facts.business_id.clone()),
                    at: received,
                    lots: LotEffect::Grant(expires),
                },
            ));
        }
        Ok(())
    }
}
