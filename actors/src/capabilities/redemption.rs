//! Points redemptions: final ones (integration and staff routes), POS ones that stay pending until
//! their order arrives (the [`ConfirmPendingRedemption`] order reaction makes them final; the
//! revoke job reverts them otherwise), and revocations.

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use engage_storage::{StoreError, WriteOp};

use super::fraud::{is_blocked, raise_flag, velocity};
use super::ledger::{self, Draft, LotEffect};
use super::loyalty::{parse_bill, rules};
use super::otp;
use crate::capabilities::stats::count_redeemed;
use crate::domain::customer::{Customer, Redemption};
use crate::domain::fraud::{breaches, count_in_period, record, REDEMPTION_FREQUENCY, TXN_REDEEM};
use crate::domain::order::OrderFacts;
use crate::domain::time::parse_instant;
use crate::keys::{self, digest};
use crate::query::{question, QueryError, Question};
use crate::reaction::{OrderEvent, OrderReaction};
use crate::tenant_core::Tenant;

/// Redemption queries.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum RedemptionQuery {
    /// Redeem points for an order (once per order: a retry answers the first redemption):
    /// [`Redeemed`].
    Redeem(RedeemRequest),
    /// See [`Revoke`].
    Revoke(Revoke),
}

question! {
    /// Revert a pending POS redemption whose order never arrived (the revoke job, with its clock), or
    /// any redemption of the order now (`force`, `/api/revokeLoyalty`): [`Revoked`].
    pub struct Revoke {
        /// Customer phone.
        pub phone: String,
        /// The order.
        pub order_id: String,
        /// The clock to judge expiry by (RFC 3339).
        pub now: String,
        /// Revoke even if not expired / not pending.
        pub force: bool,
    } -> Revoked;
}

impl Question for RedeemRequest {
    type Reply = Redeemed;
}

/// A redemption's answer.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Redeemed {
    /// Points redeemed.
    pub redeemed: i64,
    /// The balance after it.
    pub wallet_balance: i64,
    /// Its ledger transaction.
    pub txn_id: String,
    /// A POS redemption's deadline for its order.
    pub pending_until: Option<DateTime<Utc>>,
    /// True when it was done before (nothing changed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// A revocation's answer.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Revoked {
    /// Whether points came back.
    pub reverted: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The order came: the redemption is final now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<bool>,
    /// Points restored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored: Option<i64>,
    /// The balance after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wallet_balance: Option<i64>,
}

impl Revoked {
    fn not(reason: &str) -> Self {
        Self { reason: Some(reason.to_owned()), ..Self::default() }
    }
}

/// The redemption of `order_id`, if the customer row committed it.
pub async fn committed(tenant: &Tenant, customer: &Customer, order_id: &str) -> Result<Option<Redemption>, StoreError> {
    let row: Option<Redemption> = tenant.get(&keys::redemption(&tenant.id, &customer.phone, order_id)).await?;
    Ok(row.filter(|r| r.ledger_seq < customer.ledger_seq))
}

/// The write of a redemption row.
pub fn put(tenant: &Tenant, phone: &str, order_id: &str, redemption: &Redemption) -> WriteOp {
    keys::redemption(&tenant.id, phone, order_id).put(redemption)
}

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _) let now = Utc::now();
    // was the order redeemed before; is the phone blocklisted
    RedeemRequest: request => redeem(tenant, request, now).await;
        ahead(request, tenant) => vec![
            keys::redemption(tenant, &request.phone, &request.order_id),
            keys::blocklist(tenant, &request.phone),
        ],
    Revoke: Revoke { phone, order_id, now: clock, force } => {
        revoke(tenant, &phone, &order_id, parse_instant(&clock).unwrap_or(now), force).await
    },
}

/// A redemption asked for.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RedeemRequest {
    /// Customer phone.
    pub phone: String,
    /// Points to redeem.
    pub points: i64,
    /// The order paid with them.
    pub order_id: String,
    /// The outlet.
    pub outlet_id: Option<String>,
    /// Bill amount (decimal text), when known: caps points by the bill share.
    pub bill: Option<String>,
    /// For a POS redemption (`/api/redeemLoyalty`): minutes the redemption waits for its order
    /// before the revoke job reverts it; `None` for a final redemption.
    pub pending_minutes: Option<u64>,
    /// The customer's one-time password, for brands with `otp_required` (POS redemptions).
    #[serde(default)]
    pub otp: Option<String>,
}

async fn redeem(tenant: &mut Tenant, request: RedeemRequest, now: DateTime<Utc>) -> Result<Redeemed, QueryError> {
    let RedeemRequest { phone, points, order_id, outlet_id: outlet, bill, pending_minutes, otp } = request;
    let rules = rules(tenant).await?;
    let mut customer = tenant.known_customer(&phone).await?;
    // both reads at once: on a networked store they are one round trip instead of two
    let (done, blocked) = futures::try_join!(committed(tenant, &customer, &order_id), is_blocked(tenant, &customer))?;
    if let Some(done) = done {
        // a retry: answer what was done, change nothing
        return Ok(Redeemed {
            redeemed: done.points,
            wallet_balance: customer.loyalty_points,
            txn_id: done.txn_id,
            pending_until: None,
            replayed: true,
        });
    }
    if blocked {
        metrics::counter!("engage_fraud_denials_total", "reason" => "blocked").increment(1);
        return Err(QueryError::Blocked);
    }
    let bill = parse_bill(bill.as_deref())?;
    rules.check_redeem(customer.loyalty_points, points, bill).map_err(QueryError::Redeem)?;
    let mut ops = Vec::new();
    if rules.otp_required && pending_minutes.is_some() {
        ops.push(otp::consume(tenant, &phone, otp.as_deref(), now).await?);
    }
    let limits = velocity(tenant).await?;
    let already = count_in_period(&customer.velocity, TXN_REDEEM, limits.redemption_limit_period, now);
    if breaches(limits.redemption_limit_value, already) {
        let (flag_id, flag) = raise_flag(tenant, &mut customer, REDEMPTION_FREQUENCY, outlet.clone(), now);
        tenant.commit_customer(flag.into_iter().collect(), customer).await?;
        metrics::counter!("engage_fraud_denials_total", "reason" => "velocity").increment(1);
        return Err(QueryError::Fraud { fraud_type: REDEMPTION_FREQUENCY.to_owned(), flag_id });
    }
    record(&mut customer.velocity, TXN_REDEEM, now);
    let txn_id = format!("R-{}", digest(&[&tenant.id, &phone, &order_id]));
    let ledger_seq = customer.ledger_seq;
    let pending_until = pending_minutes.map(|m| now + Duration::minutes(m as i64));
    let mut entry = ledger::entry(
        &tenant.id,
        &mut customer,
        Draft {
            txn_id: txn_id.clone(),
            kind: "redeem",
            points: -points,
            order_id: Some(order_id.clone()),
            outlet_id: outlet.clone(),
            at: now,
            lots: LotEffect::Consume,
        },
    );
    entry.append(&mut ops);
    let mut ops = entry;
    if let Some(until) = pending_until {
        ops.push(
            keys::pending_redemption(until, &tenant.id, &order_id).put(
                &serde_json::json!({"tenant": tenant.id, "phone": phone, "order_id": order_id, "expires_at": until}),
            ),
        );
    }
    let redemption = Redemption { txn_id: txn_id.clone(), points, pending_until, ledger_seq };
    ops.push(put(tenant, &phone, &order_id, &redemption));
    if pending_until.is_none() {
        count_redeemed(tenant, outlet.as_deref(), now, points, &mut ops).await?;
    }
    metrics::counter!("engage_points_redeemed_total").increment(points.unsigned_abs());
    let balance = customer.loyalty_points;
    tenant.commit_customer(ops, customer).await?;
    Ok(Redeemed { redeemed: points, wallet_balance: balance, txn_id, pending_until, replayed: false })
}

async fn revoke(
    tenant: &mut Tenant,
    phone: &str,
    order_id: &str,
    clock: DateTime<Utc>,
    force: bool,
) -> Result<Revoked, QueryError> {
    let mut customer = tenant.known_customer(phone).await?;
    let Some(redemption) = committed(tenant, &customer, order_id).await? else {
        return Ok(Revoked::not("no redemption for this order"));
    };
    let index = redemption.pending_until.map(|until| keys::pending_redemption(until, &tenant.id, order_id));
    let mut ops = Vec::new();
    let arrived = customer.orders.keys().any(|key| key.rsplit_once('/').is_some_and(|(_, id)| id == order_id));
    let due = redemption.pending_until.is_some_and(|until| until <= clock);
    if !force && (redemption.pending_until.is_none() || arrived || !due) {
        if arrived && redemption.pending_until.is_some() {
            // the POS order came: the redemption is final
            let confirmed = Redemption { pending_until: None, ..redemption.clone() };
            ops.push(put(tenant, phone, order_id, &confirmed));
            let outlet = customer.orders.keys().find_map(|key| {
                key.rsplit_once('/').filter(|(_, id)| *id == order_id).map(|(outlet, _)| outlet.to_owned())
            });
            count_redeemed(tenant, outlet.as_deref(), clock, redemption.points, &mut ops).await?;
            ops.extend(index.map(keys::Key::delete));
            tenant.commit_customer(ops, customer).await?;
            return Ok(Revoked { confirmed: Some(true), ..Revoked::default() });
        }
        return Ok(Revoked::not(if due { "final" } else { "not due" }));
    }
    revert(tenant, &mut customer, order_id, &redemption, clock, &mut ops).await?;
    let balance = customer.loyalty_points;
    tenant.commit_customer(ops, customer).await?;
    metrics::counter!("engage_redemptions_reverted_total").increment(1);
    Ok(Revoked {
        reverted: true,
        restored: Some(redemption.points),
        wallet_balance: Some(balance),
        ..Revoked::default()
    })
}

/// Reverts `redemption` of `order_id` into `ops`: the points come back into the lots they came
/// from, the redemption's ledger row is marked status 2, the redemption and its revoke-job index
/// row go.
async fn revert(
    tenant: &mut Tenant,
    customer: &mut Customer,
    order_id: &str,
    redemption: &Redemption,
    clock: DateTime<Utc>,
    ops: &mut Vec<WriteOp>,
) -> Result<(), StoreError> {
    let phone = customer.phone.clone();
    let mut restore = Vec::new();
    if let Some(mut row) = ledger::row(tenant, &phone, redemption.ledger_seq).await? {
        row.status = 2;
        restore = row.lots.clone();
        ops.push(keys::ledger(&tenant.id, &phone, redemption.ledger_seq).put(&row));
    }
    ops.extend(ledger::entry(
        &tenant.id,
        customer,
        Draft {
            txn_id: format!("V-{}", digest(&[&tenant.id, &phone, order_id])),
            kind: "revoke",
            points: redemption.points,
            order_id: Some(order_id.to_owned()),
            outlet_id: None,
            at: clock,
            lots: LotEffect::Restore(restore),
        },
    ));
    ops.push(keys::redemption(&tenant.id, &phone, order_id).delete());
    if let Some(until) = redemption.pending_until {
        ops.push(keys::pending_redemption(until, &tenant.id, order_id).delete());
    }
    Ok(())
}

/// Order reaction: a POS redemption waiting for this order is final now; when the order arrives
/// cancelled or refunded as a whole, the redemption is reverted instead (the points come back).
pub struct ConfirmPendingRedemption;

#[async_trait]
impl OrderReaction for ConfirmPendingRedemption {
    fn name(&self) -> &'static str {
        "pending_redemption_confirm"
    }

    fn reads(&self, tenant: &str, facts: &OrderFacts) -> Vec<keys::Key> {
        vec![keys::redemption(tenant, &facts.phone, &facts.order_id)]
    }

    async fn react(
        &self,
        tenant: &mut Tenant,
        order: &OrderEvent<'_>,
        customer: &mut Customer,
        ops: &mut Vec<WriteOp>,
    ) -> Result<(), StoreError> {
        let order_id = &order.facts.order_id;
        if let Some(mut redemption) = committed(tenant, customer, order_id).await? {
            if redemption.pending_until.is_some() && order.voids() {
                revert(tenant, customer, order_id, &redemption, order.received, ops).await?;
                metrics::counter!("engage_redemptions_reverted_total").increment(1);
                return Ok(());
            }
            if let Some(until) = redemption.pending_until.take() {
                ops.push(keys::pending_redemption(until, &tenant.id, order_id).delete());
                ops.push(put(tenant, &customer.phone, order_id, &redemption));
                let outlet = order.facts.business_id.as_str();
                count_redeemed(tenant, Some(outlet), order.received, redemption.points, ops).await?;
            }
        }
        Ok(())
    }
}
