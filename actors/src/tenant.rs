//! `TenantActor`: one per brand (`parent_business_id`); every write for the brand goes through it,
//! one message at a time, so no balance or total can be updated concurrently.
//!
//! Messages ([`TenantMsg`]): `Apply` an envelope from the bus (answers after its effects are
//! stored: the engine acks only then), or a synchronous [`TenantQuery`]. The actor caches the
//! customers it touched; a restarted actor starts empty and reloads rows from the store.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use engage_storage::{StoreError, WriteOp};
use engage_streams::{Envelope, EventKind};

use crate::domain::customer::{Applied, Customer, Redemption};
use crate::domain::fraud::{
    breaches, count_in_period, record, transition, FlagAction, FlagState, FraudFlag, TransitionRefused, VelocityRules,
    POINTS_EARNING, REDEMPTION_FREQUENCY, TXN_EARN, TXN_REDEEM,
};
use crate::domain::loyalty::{DayFigures, LedgerEntry, Lot, LoyaltyRules, Milestone, RedeemError};
use crate::domain::order::{decimal, OrderFacts};
use crate::domain::time::{end_of_ist_day_after, ist_day, ist_timestamp, parse_instant, reached};
use crate::domain::wallet::{price, Channel, InsufficientBalance, Purpose, TemplateType, Wallet};
use crate::repo::{
    QueueRecord, Repo, BLOCKLIST, BUSINESSES, BUSINESS_WALLETS, CHANNEL_QUEUE, CHECKINS, CRM_QUEUE, FRAUD_CONFIG,
    FRAUD_FLAGS, LOYALTY_LEDGER, LOYALTY_RULES, ORDERS, PENDING_REDEMPTIONS, STATUS_PROCESSED, STATUS_UNPROCESSABLE,
    WALLET_REFS, WALLET_TXNS,
};
use crate::repo::{COUPONS, LOYALTY_DAILY, OTPS, PENDING_COUPONS, POINTS_EXPIRY, REDEMPTIONS, REWARDS};

/// What every tenant actor shares.
pub struct EngineContext {
    /// Typed store access.
    pub repo: Repo,
    /// Testing only: panic once on this order id (`ENGAGE_FAULT_PANIC_ORDER_ID`).
    pub fault_panic_order_id: Option<String>,
    /// Whether the fault fired already (once per process).
    pub fault_fired: AtomicBool,
}

/// A synchronous question or command for a tenant.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum TenantQuery {
    /// `get/customer/details`.
    CustomerDetails {
        /// Customer phone.
        phone: String,
    },
    /// `update/customer/details`.
    UpdateCustomer {
        /// Customer phone.
        phone: String,
        /// New name.
        name: Option<String>,
        /// New email.
        email: Option<String>,
        /// New gender.
        gender: Option<String>,
        /// New date of birth.
        dob: Option<String>,
    },
    /// Process an envelope now and answer with the customer (instant orders). Idempotent with
    /// the bus delivery of the same envelope.
    ApplyNow {
        /// The envelope, already published.
        envelope: Envelope,
    },
    /// Replace the brand's loyalty rules (milestones are kept).
    SetRules {
        /// The new rules.
        rules: LoyaltyRules,
    },
    /// Replace the brand's milestones.
    SetMilestones {
        /// The milestones.
        milestones: Vec<Milestone>,
    },
    /// The brand's rules.
    GetRules,
    /// A customer's points, and how many are redeemable on `bill` (decimal text) when given.
    Loyalty {
        /// Customer phone.
        phone: String,
        /// Bill amount, when known.
        bill: Option<String>,
    },
    /// Redeem points for an order (once per order: a retry answers the first redemption).
    Redeem {
        /// Customer phone.
        phone: String,
        /// Points to redeem.
        points: i64,
        /// The order paid with them.
        order_id: String,
        /// The outlet.
        outlet_id: Option<String>,
        /// Bill amount (decimal text), when known: caps points by the bill share.
        bill: Option<String>,
        /// For a POS redemption (`/api/redeemLoyalty`): minutes the redemption waits for its
        /// order before the revoke job reverts it; `None` for a final redemption.
        pending_minutes: Option<u64>,
        /// The customer's one-time password, for brands with `otp_required` (POS redemptions).
        #[serde(default)]
        otp: Option<String>,
    },
    /// Add or edit a reward of the brand's catalogue.
    UpsertReward {
        /// The reward (`reward_id`, `name`, `description`, `points_cost`, `valid_days`, `active`).
        reward: Value,
    },
    /// The active rewards, with `affordable` for `phone` when given.
    ListRewards {
        /// Customer phone, optional.
        phone: Option<String>,
    },
    /// Buy a reward with points: a coupon is issued (once per `reference` when given).
    PurchaseReward {
        /// Customer phone.
        phone: String,
        /// The reward.
        reward_id: String,
        /// Caller's reference for retries.
        reference: Option<String>,
    },
    /// A customer's coupons.
    CustomerCoupons {
        /// Customer phone.
        phone: String,
    },
    /// A coupon.
    GetCoupon {
        /// Its code.
        code: String,
    },
    /// Use an issued coupon on an order.
    UseCoupon {
        /// Its code.
        code: String,
        /// The order.
        order_id: String,
        /// POS use: the coupon stays `pending` until the order arrives, and the revoke job puts it
        /// back to `issued` after this many minutes otherwise. `None`: final at once.
        #[serde(default)]
        pending_minutes: Option<u64>,
    },
    /// Put a pending coupon back to `issued` when its order never arrived (the revoke job).
    RevokePendingCoupon {
        /// Its code.
        code: String,
        /// The job's clock (RFC 3339).
        now: String,
    },
    /// Revoke an issued (unused) coupon: its points come back.
    RevokeCoupon {
        /// Customer phone (must own the coupon).
        phone: String,
        /// Its code.
        code: String,
    },
    /// Create a one-time password and queue it by SMS, paid by `business`'s wallet.
    GenerateOtp {
        /// Customer phone.
        phone: String,
        /// The outlet whose wallet pays for the SMS.
        business: String,
    },
    /// Check a one-time password; a correct one opens a 5-minute window for one POS redemption.
    VerifyOtp {
        /// Customer phone.
        phone: String,
        /// The password.
        otp: String,
    },
    /// Revert a pending POS redemption whose order never arrived (the revoke job, with its
    /// clock), or any redemption of the order now (`force`, `/api/revokeLoyalty`).
    Revoke {
        /// Customer phone.
        phone: String,
        /// The order.
        order_id: String,
        /// The clock to judge expiry by (RFC 3339).
        now: String,
        /// Revoke even if not expired / not pending.
        force: bool,
    },
    /// Replace the brand's velocity limits.
    SetVelocity {
        /// The limits.
        rules: VelocityRules,
    },
    /// The brand's velocity limits.
    GetVelocity,
    /// Staff act on a contact's open fraud flags (block, unblock, resolve).
    Flag {
        /// Customer phone.
        contact: String,
        /// What to do.
        action: FlagAction,
        /// Staff comment.
        comment: Option<String>,
        /// Who acts.
        submitted_by: String,
    },
    /// Blocked state, open flags and velocity counts of a contact.
    Evaluate {
        /// Customer phone.
        contact: String,
    },
    /// Credit a business wallet (idempotent per `reference`).
    WalletRecharge {
        /// The outlet.
        business: String,
        /// Amount, decimal text, positive.
        amount: String,
        /// Payment reference; a recharge with a reference already applied changes nothing.
        reference: Option<String>,
        /// `recharge` (default) or `refund` (the failed-chat refund job).
        #[serde(default)]
        refund: bool,
    },
    /// A business wallet's balance.
    WalletBalance {
        /// The outlet.
        business: String,
    },
    /// A page of a business wallet's transactions.
    WalletTxns {
        /// The outlet.
        business: String,
        /// Page, from 1.
        page: u64,
        /// Per page.
        page_size: u64,
    },
    /// Debit the wallet for one send and queue it for delivery (idempotent per `send_id`).
    Send {
        /// The outlet paying.
        business: String,
        /// Channel.
        channel: Channel,
        /// Template category.
        template_type: TemplateType,
        /// Price table.
        purpose: Purpose,
        /// Recipient.
        to: String,
        /// Message text.
        message: String,
        /// Caller's id of this send.
        send_id: String,
        /// Delivery date, `YYYYMMDD` (the queue suffix).
        delivery_date: String,
        /// Campaign id (`auto_id`), when any.
        auto_id: Option<String>,
    },
    /// Expire the customer's points whose expiry is at or before `now` (the expiry job).
    ExpirePoints {
        /// Customer phone.
        phone: String,
        /// The job's clock (RFC 3339).
        now: String,
    },
    /// Day-wise loyalty figures of the IST days `from..=to` (`YYYY-MM-DD`).
    DayWise {
        /// First day.
        from: String,
        /// Last day.
        to: String,
    },
    /// A page of a customer's points ledger.
    Ledger {
        /// Customer phone.
        phone: String,
        /// Page number, from 1.
        page: u64,
        /// Entries per page.
        page_size: u64,
    },
}

/// Why a query failed.
#[derive(Clone, Debug, Serialize, Deserialize, thiserror::Error, PartialEq, Eq)]
pub enum QueryError {
    /// No such customer.
    #[error("not found")]
    NotFound,
    /// The tenant cannot answer now (restarting, not owned here, time-out).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The request cannot be processed.
    #[error("invalid: {0}")]
    Invalid(String),
    /// The store failed.
    #[error("failed: {0}")]
    Failed(String),
    /// A redemption was refused.
    #[error("refused: {0}")]
    Redeem(RedeemError),
    /// The customer is blocked (blocklist or a block by staff): loyalty actions are denied.
    #[error("the customer is blocked")]
    Blocked,
    /// A velocity limit was breached: a flag was raised and the action denied.
    #[error("{fraud_type} breached; flag {flag_id} raised")]
    Fraud {
        /// Which limit.
        fraud_type: String,
        /// The flag raised (or already open).
        flag_id: String,
    },
    /// A flag transition was refused.
    #[error("{0}")]
    Transition(TransitionRefused),
    /// The wallet cannot pay for the send.
    #[error("{0}")]
    Insufficient(InsufficientBalance),
    /// A one-time password is missing, wrong, expired or used up.
    #[error("one-time password: {0}")]
    Otp(String),
}

/// Answer to a query.
pub type QueryReply = Result<Value, QueryError>;

/// Messages of [`TenantActor`].
pub enum TenantMsg {
    /// Apply a bus delivery; `Ok` once its effects are stored.
    Apply {
        /// The envelope.
        envelope: Envelope,
        /// Where the outcome goes.
        reply: RpcReplyPort<Result<(), String>>,
    },
    /// Answer a query.
    Query {
        /// The query.
        query: TenantQuery,
        /// Where the answer goes.
        reply: RpcReplyPort<QueryReply>,
    },
}

impl TenantMsg {
    /// Answers the message with an error without processing it.
    pub fn refuse(self, reason: &str) {
        match self {
            TenantMsg::Apply { reply, .. } => {
                let _ = reply.send(Err(reason.to_owned()));
            }
            TenantMsg::Query { reply, .. } => {
                let _ = reply.send(Err(QueryError::Unavailable(reason.to_owned())));
            }
        }
    }
}

/// The actor (stateless handler; state is [`TenantState`]).
pub struct TenantActor;

/// Start-up arguments.
pub struct TenantArgs {
    /// The brand.
    pub tenant: String,
    /// Shared context.
    pub ctx: Arc<EngineContext>,
}

/// State of one tenant actor.
pub struct TenantState {
    tenant: String,
    ctx: Arc<EngineContext>,
    customers: HashMap<String, Customer>,
    /// The brand's loyalty rules, once loaded.
    rules: Option<LoyaltyRules>,
    /// The brand's velocity limits, once loaded.
    velocity: Option<VelocityRules>,
}

impl Actor for TenantActor {
    type Msg = TenantMsg;
    type State = TenantState;
    type Arguments = TenantArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: TenantArgs,
    ) -> Result<TenantState, ActorProcessingErr> {
        metrics::gauge!("engage_tenant_actors").increment(1.0);
        Ok(TenantState { tenant: args.tenant, ctx: args.ctx, customers: HashMap::new(), rules: None, velocity: None })
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        _state: &mut TenantState,
    ) -> Result<(), ActorProcessingErr> {
        metrics::gauge!("engage_tenant_actors").decrement(1.0);
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: TenantMsg,
        state: &mut TenantState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            TenantMsg::Apply { envelope, reply } => {
                let outcome = state.apply(&envelope).await.map(|_| ()).map_err(|e| e.to_string());
                if let Err(error) = &outcome {
                    tracing::error!(tenant = %state.tenant, id = %envelope.id, trace_id = %envelope.trace_id, %error, "apply failed");
                }
                let _ = reply.send(outcome);
            }
            TenantMsg::Query { query: TenantQuery::DayWise { from, to }, reply } => {
                let (repo, tenant) = (state.ctx.repo.clone(), state.tenant.clone());
                tokio::spawn(async move {
                    let _ = reply.send(day_wise(repo, tenant, from, to).await);
                });
            }
            TenantMsg::Query { query, reply } => {
                let answer = state.query(query).await;
                let _ = reply.send(answer);
            }
        }
        Ok(())
    }
}

fn parse_bill(bill: Option<&str>) -> Result<Option<Decimal>, QueryError> {
    match bill {
        None => Ok(None),
        Some(text) => decimal(&Value::String(text.to_owned()))
            .filter(|d| !d.is_sign_negative())
            .map(Some)
            .ok_or_else(|| QueryError::Invalid(format!("bill amount {text:?} is not a non-negative number"))),
    }
}

fn number(value: Decimal) -> Value {
    value.to_f64().and_then(serde_json::Number::from_f64).map(Value::Number).unwrap_or(Value::Null)
}

/// The customer as `get/customer/details` shows it.
pub fn customer_view(customer: &Customer, now: DateTime<Utc>) -> Value {
    json!({
        "customer_number": customer.phone,
        "name": customer.name.clone().unwrap_or_default(),
        "total_orders": customer.total_orders(),
        "last_order": customer.last_order().map(|t| t.get(..10).unwrap_or(t).to_owned()),
        "loyalty_points": customer.loyalty_points,
        "segment": customer.segment(now),
        "lifetime_value": number(customer.lifetime_value),
        "average_order_value": number(customer.average_order_value()),
        "referred_by": customer.referred_by,
    })
}

fn digest(parts: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Adds points to the customer's balance (taking or giving back their expiry lots) and returns
/// the writes that record it: the ledger row, keyed by the customer's next ledger sequence number
/// (kept in the customer row); its row in the day's rollup (`loyalty_daily`); and, for points that
/// expire, the expiry job's index row.
fn ledger_entry(tenant: &str, customer: &mut Customer, entry: LedgerDraft) -> Vec<WriteOp> {
    let mut ops = Vec::with_capacity(3);
    customer.loyalty_points += entry.points;
    let seq = customer.ledger_seq;
    customer.ledger_seq += 1;
    let mut expires_at = None;
    let lots = match entry.lots {
        LotEffect::Grant(at) => {
            let lot = Lot { expires_at: at.to_rfc3339(), points: entry.points };
            expires_at = Some(lot.expires_at.clone());
            vec![lot]
        }
        LotEffect::Consume => customer.point_lots.debit(-entry.points),
        LotEffect::Restore(lots) => lots,
        LotEffect::Expired(lots) => lots,
    };
    if entry.points > 0 {
        for lot in &lots {
            customer.point_lots.credit(lot);
            let key = format!("{}|{tenant}|{}", lot.expires_at, customer.phone);
            ops.push(Repo::put_json(
                POINTS_EXPIRY,
                "due".to_owned(),
                key.as_bytes(),
                &json!({"tenant": tenant, "phone": customer.phone, "expires_at": lot.expires_at}),
            ));
        }
    }
    let day = ist_day(parse_instant(&entry.at).unwrap_or_else(Utc::now));
    let mut daily_key = customer.phone.as_bytes().to_vec();
    daily_key.push(b'|');
    daily_key.extend_from_slice(&seq.to_be_bytes());
    ops.push(Repo::put_json(
        LOYALTY_DAILY,
        format!("{tenant}|{day}"),
        &daily_key,
        &json!({"phone": customer.phone, "kind": entry.kind, "points": entry.points}),
    ));
    let row = LedgerEntry {
        txn_id: entry.txn_id,
        kind: entry.kind.to_owned(),
        points: entry.points,
        balance_after: customer.loyalty_points,
        order_id: entry.order_id,
        outlet_id: entry.outlet_id,
        at: entry.at,
        expires_at,
        status: 1,
        lots,
    };
    ops.push(Repo::put_json(LOYALTY_LEDGER, format!("{tenant}|{}", customer.phone), &seq.to_be_bytes(), &row));
    ops
}

/// Day-wise figures of `tenant` for the IST days `from..=to`, and their totals (customers counted
/// once over the range). A read of `loyalty_daily` only, run beside the actor (not in it), so a long
/// report never holds up the brand's writes.
async fn day_wise(repo: Repo, tenant: String, from: String, to: String) -> QueryReply {
    let parse = |d: &str| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok();
    let (Some(first), Some(last)) = (parse(&from), parse(&to)) else {
        return Err(QueryError::Invalid("day-wise dates must be YYYY-MM-DD".into()));
    };
    let mut days = Vec::new();
    let mut total = DayFigures::default();
    for date in first.iter_days().take_while(|d| *d <= last) {
        let date = date.format("%Y-%m-%d").to_string();
        let partition = format!("{tenant}|{date}");
        let mut day = DayFigures::default();
        repo.visit_json(LOYALTY_DAILY, &partition, |row| {
            let (phone, kind) = (row["phone"].as_str().unwrap_or_default(), row["kind"].as_str().unwrap_or_default());
            let points = row["points"].as_i64().unwrap_or(0);
            day.add(phone, kind, points);
            total.add(phone, kind, points);
        })
        .await
        .map_err(|e| QueryError::Failed(e.to_string()))?;
        let mut view = day.view();
        view["date"] = json!(date);
        days.push(view);
    }
    Ok(json!({"from": from, "to": to, "data": days, "totals": total.view()}))
}

/// Removes a pending POS redemption (points or coupon) from the revoke job's index.
fn unindex_pending(key: String) -> WriteOp {
    WriteOp::Delete { table: PENDING_REDEMPTIONS, partition: "due".into(), clustering: key.into_bytes() }
}

/// What a ledger row says, before it gets its balance and key.
struct LedgerDraft {
    txn_id: String,
    kind: &'static str,
    points: i64,
    order_id: Option<String>,
    outlet_id: Option<String>,
    at: String,
    lots: LotEffect,
}

/// What a ledger entry does to the customer's expiry lots.
enum LotEffect {
    /// Earned points, expiring at this instant.
    Grant(DateTime<Utc>),
    /// Points taken: from the lots that expire first.
    Consume,
    /// Points given back: into the lots they were taken from.
    Restore(Vec<Lot>),
    /// Points expired: these lots, already removed.
    Expired(Vec<Lot>),
}

impl TenantState {
    async fn rules(&mut self) -> Result<LoyaltyRules, StoreError> {
        if let Some(rules) = &self.rules {
            return Ok(rules.clone());
        }
        let rules = match self.ctx.repo.store().get(LOYALTY_RULES, &self.tenant, b"rules").await? {
            Some(bytes) => {
                serde_json::from_slice(&bytes).map_err(|e| StoreError::Backend(format!("corrupt rules: {e}")))?
            }
            None => LoyaltyRules::default(),
        };
        self.rules = Some(rules.clone());
        Ok(rules)
    }

    async fn velocity(&mut self) -> Result<VelocityRules, StoreError> {
        if let Some(rules) = &self.velocity {
            return Ok(rules.clone());
        }
        let rules = match self.ctx.repo.store().get(FRAUD_CONFIG, &self.tenant, b"velocity").await? {
            Some(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| StoreError::Backend(format!("corrupt velocity rules: {e}")))?,
            None => VelocityRules::default(),
        };
        self.velocity = Some(rules.clone());
        Ok(rules)
    }

    /// Blocked: by staff (a flag), or on the brand's blocklist.
    async fn is_blocked(&self, customer: &Customer) -> Result<bool, StoreError> {
        Ok(customer.is_blocked
            || self.ctx.repo.store().get(BLOCKLIST, &self.tenant, customer.phone.as_bytes()).await?.is_some())
    }

    /// Raises a flag for a breach unless one of that type is already open; returns its id and the
    /// write of the new flag (if any).
    fn raise_flag(
        &self,
        customer: &mut Customer,
        fraud_type: &str,
        outlet: Option<String>,
        at: DateTime<Utc>,
    ) -> (String, Option<WriteOp>) {
        let open = customer.flags.iter().find_map(|(id, state)| (*state == FlagState::Flagged).then_some(id.clone()));
        if let Some(id) = open.filter(|id| id.ends_with(&digest(&[fraud_type]))) {
            return (id, None);
        }
        let flag_id = format!("F{:013}-{}", at.timestamp_millis(), digest(&[fraud_type]));
        let flag = FraudFlag {
            flag_id: flag_id.clone(),
            contact: customer.phone.clone(),
            name: customer.name.clone(),
            fraud_type: fraud_type.to_owned(),
            parent_business_id: self.tenant.clone(),
            child_business_id: outlet,
            block_reason: format!("{fraud_type} exceeded"),
            blocked_by: "System".to_owned(),
            status: FlagState::Flagged.status(),
            state: FlagState::Flagged,
            comment: None,
            resolved_comment: None,
            submitted_by: None,
            created_at: at.to_rfc3339(),
            updated_at: at.to_rfc3339(),
        };
        customer.flags.insert(flag_id.clone(), FlagState::Flagged);
        metrics::counter!("engage_fraud_flags_total", "fraud_type" => fraud_type.to_owned()).increment(1);
        tracing::warn!(tenant = %self.tenant, fraud_type, flag_id, "velocity limit breached: flag raised");
        let op = Repo::put_json(FRAUD_FLAGS, self.tenant.clone(), flag_id.as_bytes(), &flag);
        (flag_id, Some(op))
    }

    async fn wallet(&self, business: &str) -> Result<Wallet, StoreError> {
        Ok(match self.ctx.repo.store().get(BUSINESS_WALLETS, &self.tenant, business.as_bytes()).await? {
            Some(bytes) => {
                serde_json::from_slice(&bytes).map_err(|e| StoreError::Backend(format!("corrupt wallet: {e}")))?
            }
            None => Wallet::default(),
        })
    }

    /// A reference already applied to `wallet` (its transaction is below the wallet's sequence).
    async fn applied_reference(
        &self,
        business: &str,
        reference: &str,
        wallet: &Wallet,
    ) -> Result<Option<Value>, StoreError> {
        let Some(row) =
            self.ctx.repo.json(WALLET_REFS, &format!("{}|{business}", self.tenant), reference.as_bytes()).await?
        else {
            return Ok(None);
        };
        Ok(row["seq"].as_u64().filter(|seq| *seq < wallet.txn_seq).map(|_| row))
    }

    /// The writes of one wallet transaction: its row (keyed by the wallet's next sequence), the
    /// reference row, and the wallet row last (the one that commits it).
    fn wallet_txn(
        &self,
        business: &str,
        wallet: &mut Wallet,
        reference: &str,
        mut txn: Value,
    ) -> (String, Vec<WriteOp>) {
        let seq = wallet.txn_seq;
        wallet.txn_seq += 1;
        let txn_id = format!("W-{}", digest(&[&self.tenant, business, reference]));
        txn["txn_id"] = json!(txn_id);
        txn["balance_after"] = json!(wallet.balance.normalize().to_string());
        let partition = format!("{}|{business}", self.tenant);
        let ops = vec![
            Repo::put_json(WALLET_TXNS, partition.clone(), &seq.to_be_bytes(), &txn),
            Repo::put_json(WALLET_REFS, partition, reference.as_bytes(), &json!({"txn_id": txn_id, "seq": seq})),
        ];
        (txn_id, ops)
    }

    fn otp_hash(&self, phone: &str, otp: &str) -> String {
        digest(&[&self.tenant, phone, "otp", otp])
    }

    async fn otp_row(&self, phone: &str) -> Result<Option<Value>, QueryError> {
        self.ctx
            .repo
            .json(OTPS, &format!("{}|{phone}", self.tenant), b"otp")
            .await
            .map_err(|e| QueryError::Failed(e.to_string()))
    }

    fn put_otp(&self, phone: &str, row: &Value) -> WriteOp {
        Repo::put_json(OTPS, format!("{}|{phone}", self.tenant), b"otp", row)
    }

    /// Checks `otp` (or an open verification window) for a redemption and returns the write that
    /// uses it up.
    async fn consume_otp(&self, phone: &str, otp: Option<&str>, now: DateTime<Utc>) -> Result<WriteOp, QueryError> {
        let mut row =
            self.otp_row(phone).await?.ok_or_else(|| QueryError::Otp("no one-time password was generated".into()))?;
        if row["verified_until"].as_str().and_then(parse_instant).is_some_and(|until| until > now) {
            row["verified_until"] = Value::Null;
            return Ok(self.put_otp(phone, &row));
        }
        let otp = otp.ok_or_else(|| QueryError::Otp("required for this brand's POS redemptions".into()))?;
        self.check_otp(phone, otp, &mut row, now)?;
        row["hash"] = Value::Null;
        Ok(self.put_otp(phone, &row))
    }

    /// Verifies `otp` against `row` (counting the attempt); at most 5 attempts per password.
    fn check_otp(&self, phone: &str, otp: &str, row: &mut Value, now: DateTime<Utc>) -> Result<(), QueryError> {
        let expired = row["expires_at"].as_str().and_then(parse_instant).is_none_or(|t| t <= now);
        let attempts = row["attempts"].as_u64().unwrap_or(0);
        if row["hash"].is_null() || expired {
            return Err(QueryError::Otp("expired or already used; generate a new one".into()));
        }
        if attempts >= 5 {
            return Err(QueryError::Otp("too many attempts; generate a new one".into()));
        }
        row["attempts"] = json!(attempts + 1);
        if row["hash"].as_str() != Some(self.otp_hash(phone, otp).as_str()) {
            return Err(QueryError::Otp("incorrect".into()));
        }
        Ok(())
    }

    /// Writes `ops` and then the customer row (last: on a store without multi-row atomicity it is
    /// the row that commits the others) and caches the customer; on a failure the cached copy is
    /// dropped so the next message reloads the stored one.
    async fn commit_customer(&mut self, mut ops: Vec<WriteOp>, customer: Customer) -> Result<(), QueryError> {
        ops.push(Repo::put_customer(&self.tenant, &customer));
        if let Err(error) = self.ctx.repo.store().batch(ops).await {
            self.customers.remove(&customer.phone);
            return Err(QueryError::Failed(error.to_string()));
        }
        self.customers.insert(customer.phone.clone(), customer);
        Ok(())
    }

    /// The redemption of `order_id`, if the customer row committed it.
    async fn redemption(&self, customer: &Customer, order_id: &str) -> Result<Option<Redemption>, StoreError> {
        let partition = format!("{}|{}", self.tenant, customer.phone);
        let Some(row) = self.ctx.repo.json(REDEMPTIONS, &partition, order_id.as_bytes()).await? else {
            return Ok(None);
        };
        Ok(serde_json::from_value::<Redemption>(row).ok().filter(|r| r.ledger_seq < customer.ledger_seq))
    }

    /// Records `referrer` as the customer's referrer when the referral is acceptable: the
    /// customer is new to the brand (no order yet) and has no referrer, and the referrer is
    /// another existing customer of the brand. Otherwise it is ignored (logged and counted).
    async fn refer(&mut self, customer: &mut Customer, referrer: &str) -> Result<(), StoreError> {
        let refused = if customer.referred_by.is_some() {
            Some("already referred")
        } else if customer.total_orders() > 0 {
            Some("not a new customer")
        } else if referrer == customer.phone {
            Some("self-referral")
        } else if self.customer(referrer).await?.is_none() {
            Some("unknown referrer")
        } else {
            None
        };
        match refused {
            Some(reason) => {
                metrics::counter!("engage_referrals_refused_total", "reason" => reason).increment(1);
                tracing::info!(tenant = %self.tenant, reason, "referral ignored");
            }
            None => {
                metrics::counter!("engage_referrals_total").increment(1);
                customer.referred_by = Some(referrer.to_owned());
            }
        }
        Ok(())
    }

    /// On a referred customer's first order of at least the programme's minimum: the referee's
    /// and the referrer's points. The referrer's row is written before the referee's (which
    /// commits the reward): a retry after a partial write finds the referee in the referrer's
    /// `referrals_rewarded` and does not pay the referrer twice.
    async fn reward_referral(
        &mut self,
        customer: &mut Customer,
        facts: &OrderFacts,
        at: DateTime<Utc>,
    ) -> Result<Vec<WriteOp>, StoreError> {
        let rules = self.rules().await?;
        let program = &rules.referral;
        let Some(referrer_phone) = customer.referred_by.clone() else { return Ok(Vec::new()) };
        if !program.enabled || customer.referral_rewarded || facts.amount < program.min_order_amount {
            return Ok(Vec::new());
        }
        customer.referral_rewarded = true;
        let expires = end_of_ist_day_after(at, rules.points_expiry_days);
        let (tenant, referee) = (self.tenant.clone(), customer.phone.clone());
        let draft = |phone: &str, points| LedgerDraft {
            txn_id: format!("RF-{}", digest(&[&tenant, phone, &referee])),
            kind: "referral",
            points,
            order_id: Some(facts.order_id.clone()),
            outlet_id: Some(facts.business_id.clone()),
            at: at.to_rfc3339(),
            lots: LotEffect::Grant(expires),
        };
        let mut ops = Vec::new();
        if let Some(mut referrer) = self.customer(&referrer_phone).await? {
            let capped = program.max_referrals > 0
                && referrer.referrals_rewarded.len() >= usize::try_from(program.max_referrals).unwrap_or(usize::MAX);
            if !referrer.referrals_rewarded.contains(&customer.phone) && !capped && !self.is_blocked(&referrer).await? {
                referrer.referrals_rewarded.insert(customer.phone.clone());
                if program.referrer_points > 0 {
                    ops.extend(ledger_entry(
                        &self.tenant,
                        &mut referrer,
                        draft(&referrer_phone, program.referrer_points),
                    ));
                }
                ops.push(Repo::put_customer(&self.tenant, &referrer));
                // reloaded from the store next time: the batch may still fail
                self.customers.remove(&referrer_phone);
            }
        }
        if program.referee_points > 0 && !self.is_blocked(customer).await? {
            let phone = customer.phone.clone();
            ops.extend(ledger_entry(&self.tenant, customer, draft(&phone, program.referee_points)));
        }
        Ok(ops)
    }

    /// The lots a ledger row took points from (to give them back).
    async fn ledger_lots(&self, phone: &str, seq: u64) -> Result<Vec<Lot>, StoreError> {
        let partition = format!("{}|{phone}", self.tenant);
        let row = self.ctx.repo.json(LOYALTY_LEDGER, &partition, &seq.to_be_bytes()).await?;
        Ok(row.and_then(|row| serde_json::from_value(row["lots"].clone()).ok()).unwrap_or_default())
    }

    fn put_redemption(&self, phone: &str, order_id: &str, redemption: &Redemption) -> WriteOp {
        Repo::put_json(REDEMPTIONS, format!("{}|{phone}", self.tenant), order_id.as_bytes(), redemption)
    }

    async fn save_rules(&mut self, rules: LoyaltyRules) -> Result<(), StoreError> {
        self.ctx.repo.store().batch(vec![Repo::put_json(LOYALTY_RULES, self.tenant.clone(), b"rules", &rules)]).await?;
        self.rules = Some(rules);
        Ok(())
    }

    /// Earns (or adjusts) the order's points and awards milestones; returns the ledger rows.
    /// `received` is the envelope's acceptance time, parsed once by the caller.
    async fn earn(
        &mut self,
        customer: &mut Customer,
        facts: &OrderFacts,
        envelope: &Envelope,
        received: DateTime<Utc>,
        applied: Applied,
    ) -> Result<Vec<WriteOp>, StoreError> {
        let rules = self.rules().await?;
        let mut ops = Vec::new();
        let expires = end_of_ist_day_after(received, rules.points_expiry_days);
        // Blocked customers earn nothing (the order itself still counts).
        if self.is_blocked(customer).await? {
            return Ok(ops);
        }
        if matches!(applied, Applied::New | Applied::Updated) {
            let key = facts.key();
            let before = customer.orders.get(&key).map_or(0, |c| c.points);
            let mut after = rules.points_for(facts.amount);
            if applied == Applied::New && after > 0 {
                let velocity = self.velocity().await?;
                let already =
                    count_in_period(&customer.velocity, TXN_EARN, velocity.points_earning_limit_period, received);
                if breaches(velocity.points_earning_limit_value, already) {
                    let (_, flag) =
                        self.raise_flag(customer, POINTS_EARNING, Some(facts.business_id.clone()), received);
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
                let kind = if applied == Applied::New { "earn" } else { "adjust" };
                ops.extend(ledger_entry(
                    &self.tenant,
                    customer,
                    LedgerDraft {
                        txn_id: format!("E-{}", &envelope.id[..envelope.id.len().min(16)]),
                        kind,
                        points: delta,
                        order_id: Some(facts.order_id.clone()),
                        outlet_id: Some(facts.business_id.clone()),
                        at: envelope.received_at.clone(),
                        lots: if delta > 0 { LotEffect::Grant(expires) } else { LotEffect::Consume },
                    },
                ));
            }
        }
        let orders = u32::try_from(customer.total_orders()).unwrap_or(u32::MAX);
        for milestone in rules.milestones_reached(orders, &customer.milestones_awarded) {
            customer.milestones_awarded.insert(milestone.orders);
            ops.extend(ledger_entry(
                &self.tenant,
                customer,
                LedgerDraft {
                    txn_id: format!("B-{}", digest(&[&self.tenant, &customer.phone, &milestone.orders.to_string()])),
                    kind: "bonus",
                    points: milestone.bonus_points,
                    order_id: Some(facts.order_id.clone()),
                    outlet_id: Some(facts.business_id.clone()),
                    at: envelope.received_at.clone(),
                    lots: LotEffect::Grant(expires),
                },
            ));
        }
        Ok(ops)
    }

    async fn customer(&mut self, phone: &str) -> Result<Option<Customer>, StoreError> {
        if let Some(customer) = self.customers.get(phone) {
            return Ok(Some(customer.clone()));
        }
        self.ctx.repo.customer(&self.tenant, phone).await
    }

    async fn customer_or_new(&mut self, phone: &str, now: DateTime<Utc>) -> Result<Customer, StoreError> {
        Ok(self.customer(phone).await?.unwrap_or_else(|| Customer::new(phone, now)))
    }

    async fn merge_business(&self, business_id: &str, patch: Value) -> Result<WriteOp, StoreError> {
        let mut row =
            self.ctx.repo.json(BUSINESSES, &self.tenant, business_id.as_bytes()).await?.unwrap_or_else(|| json!({}));
        if let (Some(row), Value::Object(patch)) = (row.as_object_mut(), patch) {
            row.extend(patch);
        }
        Ok(Repo::put_json(BUSINESSES, self.tenant.clone(), business_id.as_bytes(), &row))
    }

    /// Applies one envelope; returns the customer it touched (if any).
    async fn apply(&mut self, envelope: &Envelope) -> Result<Option<Customer>, StoreError> {
        let now = Utc::now();
        let received = parse_instant(&envelope.received_at).unwrap_or(now);
        metrics::histogram!("engage_processing_lag_seconds")
            .record((now - received).num_milliseconds().max(0) as f64 / 1000.0);
        let version = format!("{}|{}", envelope.received_at, envelope.id);
        let text = |name: &str| envelope.payload.get(name).and_then(Value::as_str).map(str::to_owned);
        let mut ops = Vec::new();
        let mut touched: Option<Customer> = None;
        let mut error = None;

        match envelope.kind {
            EventKind::Order => match OrderFacts::from_payload(&envelope.payload) {
                Ok(facts) => {
                    if self.ctx.fault_panic_order_id.as_deref() == Some(facts.order_id.as_str())
                        && !self.ctx.fault_fired.swap(true, Ordering::SeqCst)
                    {
                        panic!("injected fault: ENGAGE_FAULT_PANIC_ORDER_ID={}", facts.order_id);
                    }
                    let mut customer = self.customer_or_new(&facts.phone, now).await?;
                    let applied = customer.apply_order(&facts, &version);
                    ops.extend(self.earn(&mut customer, &facts, envelope, received, applied).await?);
                    if applied == Applied::New {
                        ops.extend(self.reward_referral(&mut customer, &facts, received).await?);
                    }
                    // a POS coupon waiting for this order is final now
                    if let Some(pending) =
                        self.ctx.repo.json(PENDING_COUPONS, &self.tenant, facts.order_id.as_bytes()).await?
                    {
                        let code = pending["code"].as_str().unwrap_or_default().to_owned();
                        if let Some(mut coupon) = self.ctx.repo.json(COUPONS, &self.tenant, code.as_bytes()).await? {
                            if coupon["status"] == "pending" {
                                let until = coupon["pending_until"].as_str().unwrap_or_default().to_owned();
                                coupon["status"] = json!("redeemed");
                                if let Some(object) = coupon.as_object_mut() {
                                    object.remove("pending_until");
                                }
                                ops.push(unindex_pending(format!("{until}|{}|coupon:{code}", self.tenant)));
                                ops.push(Repo::put_json(COUPONS, self.tenant.clone(), code.as_bytes(), &coupon));
                            }
                        }
                        ops.push(WriteOp::Delete {
                            table: PENDING_COUPONS,
                            partition: self.tenant.clone(),
                            clustering: facts.order_id.as_bytes().to_vec(),
                        });
                    }
                    // a POS redemption waiting for this order is final now
                    if let Some(mut redemption) = self.redemption(&customer, &facts.order_id).await? {
                        if let Some(until) = redemption.pending_until.take() {
                            ops.push(unindex_pending(format!("{until}|{}|{}", self.tenant, facts.order_id)));
                            ops.push(self.put_redemption(&customer.phone, &facts.order_id, &redemption));
                        }
                    }
                    if matches!(applied, Applied::New | Applied::Updated) {
                        ops.push(Repo::put_json(
                            ORDERS,
                            format!("{}|{}", self.tenant, facts.business_id),
                            facts.order_id.as_bytes(),
                            &json!({"payload": envelope.payload, "version": version, "amount": facts.amount, "source": envelope.source_id}),
                        ));
                    }
                    metrics::counter!("engage_orders_applied_total", "outcome" => format!("{applied:?}").to_lowercase()).increment(1);
                    if envelope.api_source.as_deref() == Some("lambda") {
                        ops.push(
                            self.merge_business(&facts.business_id, json!({"last_order_hit": envelope.received_at}))
                                .await?,
                        );
                    }
                    touched = Some(customer);
                }
                Err(not_an_order) => error = Some(not_an_order.to_string()),
            },
            EventKind::Customer => match text("phone") {
                Some(phone) => {
                    let mut customer = self.customer_or_new(&phone, now).await?;
                    for (field, slot) in [
                        ("name", &mut customer.name),
                        ("email", &mut customer.email),
                        ("gender", &mut customer.gender),
                        ("dob", &mut customer.dob),
                    ] {
                        if let Some(value) = text(field) {
                            *slot = Some(value);
                        }
                    }
                    if let Some(referrer) = text("referrer_number") {
                        self.refer(&mut customer, &referrer).await?;
                    }
                    touched = Some(customer);
                }
                None => error = Some("phone missing".to_owned()),
            },
            EventKind::PushToken => match (text("phone"), text("fcm_token")) {
                (Some(phone), Some(token)) => {
                    let mut customer = self.customer_or_new(&phone, now).await?;
                    if !customer.push_tokens.contains(&token) {
                        customer.push_tokens.push(token);
                    }
                    touched = Some(customer);
                }
                _ => error = Some("phone or fcm_token missing".to_owned()),
            },
            EventKind::Checkin => match text("phone") {
                Some(phone) => {
                    ops.push(Repo::put_json(
                        CHECKINS,
                        format!("{}|{phone}", self.tenant),
                        envelope.id.as_bytes(),
                        &envelope.payload,
                    ));
                    let mut customer = self.customer_or_new(&phone, now).await?;
                    customer.last_checkin = Some(envelope.received_at.clone());
                    touched = Some(customer);
                }
                None => error = Some("phone missing".to_owned()),
            },
            EventKind::BusinessStatus | EventKind::MerchantData | EventKind::CrmToken => match text("businessId") {
                Some(business_id) => {
                    let patch = match envelope.kind {
                        EventKind::BusinessStatus => {
                            json!({"status": envelope.payload.get("status"), "status_updated_at": envelope.received_at})
                        }
                        EventKind::MerchantData => {
                            json!({"merchant": envelope.payload, "merchant_updated_at": envelope.received_at})
                        }
                        _ => {
                            json!({"crm_token": envelope.payload.get("token"), "crm_token_updated_at": envelope.received_at})
                        }
                    };
                    ops.push(self.merge_business(&business_id, patch).await?);
                }
                None => error = Some("businessId missing".to_owned()),
            },
        }

        let record = QueueRecord {
            data: envelope.payload.clone(),
            source: envelope.source_id,
            inserted_at: ist_timestamp(received),
            status: if error.is_some() { STATUS_UNPROCESSABLE } else { STATUS_PROCESSED },
            api_source: envelope.api_source.clone(),
            id: envelope.id.clone(),
            kind: serde_json::to_value(envelope.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            error: error.clone(),
        };
        if let Some(error) = &error {
            tracing::warn!(tenant = %self.tenant, id = %envelope.id, trace_id = %envelope.trace_id, error, "unprocessable event kept with status 2");
        }
        ops.push(Repo::put_json(
            CRM_QUEUE,
            format!("{}|{}", self.tenant, ist_day(received)),
            format!("{}|{}", envelope.received_at, envelope.id).as_bytes(),
            &record,
        ));
        // The customer row last: it holds the totals, and on a store without multi-row atomicity
        // a crash before it leaves the event to be applied again on redelivery.
        if let Some(customer) = &touched {
            ops.push(Repo::put_customer(&self.tenant, customer));
        }
        if let Err(error) = self.ctx.repo.store().batch(ops).await {
            if let Some(customer) = &touched {
                self.customers.remove(&customer.phone);
            }
            return Err(error);
        }
        if let Some(customer) = &touched {
            self.customers.insert(customer.phone.clone(), customer.clone());
        }
        Ok(touched)
    }

    async fn query(&mut self, query: TenantQuery) -> QueryReply {
        let failed = |e: StoreError| QueryError::Failed(e.to_string());
        let now = Utc::now();
        match query {
            TenantQuery::CustomerDetails { phone } => {
                let customer = self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                Ok(customer_view(&customer, now))
            }
            TenantQuery::UpdateCustomer { phone, name, email, gender, dob } => {
                let mut customer = self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                for (value, slot) in [
                    (name, &mut customer.name),
                    (email, &mut customer.email),
                    (gender, &mut customer.gender),
                    (dob, &mut customer.dob),
                ] {
                    if value.is_some() {
                        *slot = value;
                    }
                }
                self.ctx.repo.store().batch(vec![Repo::put_customer(&self.tenant, &customer)]).await.map_err(failed)?;
                let view = customer_view(&customer, now);
                self.customers.insert(phone, customer);
                Ok(view)
            }
            TenantQuery::ApplyNow { envelope } => match self.apply(&envelope).await.map_err(failed)? {
                Some(customer) => Ok(customer_view(&customer, now)),
                None => Err(QueryError::Invalid("the event touched no customer".to_owned())),
            },
            TenantQuery::SetRules { rules } => {
                let milestones = self.rules().await.map_err(failed)?.milestones;
                let rules = LoyaltyRules { milestones, ..rules };
                self.save_rules(rules.clone()).await.map_err(failed)?;
                Ok(json!(rules))
            }
            TenantQuery::SetMilestones { mut milestones } => {
                milestones.sort_by_key(|m| m.orders);
                milestones.dedup_by_key(|m| m.orders);
                let rules = LoyaltyRules { milestones, ..self.rules().await.map_err(failed)? };
                self.save_rules(rules.clone()).await.map_err(failed)?;
                Ok(json!(rules))
            }
            TenantQuery::GetRules => Ok(json!(self.rules().await.map_err(failed)?)),
            TenantQuery::Loyalty { phone, bill } => {
                let rules = self.rules().await.map_err(failed)?;
                let customer = self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                let bill = parse_bill(bill.as_deref())?;
                Ok(json!({
                    "customer_number": customer.phone,
                    "loyalty_points": customer.loyalty_points,
                    "redeemable_points": rules.redeemable(customer.loyalty_points, bill),
                    "point_value": number(rules.point_value),
                    "min_redeem_points": rules.min_redeem_points,
                    "max_redeem_percent": number(rules.max_redeem_percent),
                    "next_expiry": customer.point_lots.next(),
                }))
            }
            TenantQuery::Redeem { phone, points, order_id, outlet_id, bill, pending_minutes, otp } => {
                let rules = self.rules().await.map_err(failed)?;
                let mut customer = self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                if let Some(done) = self.redemption(&customer, &order_id).await.map_err(failed)? {
                    // a retry: answer what was done, change nothing
                    return Ok(
                        json!({"redeemed": done.points, "wallet_balance": customer.loyalty_points, "txn_id": done.txn_id, "replayed": true}),
                    );
                }
                if self.is_blocked(&customer).await.map_err(failed)? {
                    metrics::counter!("engage_fraud_denials_total", "reason" => "blocked").increment(1);
                    return Err(QueryError::Blocked);
                }
                let bill = parse_bill(bill.as_deref())?;
                rules.check_redeem(customer.loyalty_points, points, bill).map_err(QueryError::Redeem)?;
                let mut otp_ops = Vec::new();
                if rules.otp_required && pending_minutes.is_some() {
                    otp_ops.push(self.consume_otp(&phone, otp.as_deref(), now).await?);
                }
                let velocity = self.velocity().await.map_err(failed)?;
                let already = count_in_period(&customer.velocity, TXN_REDEEM, velocity.redemption_limit_period, now);
                if breaches(velocity.redemption_limit_value, already) {
                    let (flag_id, flag) = self.raise_flag(&mut customer, REDEMPTION_FREQUENCY, outlet_id.clone(), now);
                    let ops: Vec<WriteOp> = flag.into_iter().collect();
                    self.commit_customer(ops, customer).await?;
                    metrics::counter!("engage_fraud_denials_total", "reason" => "velocity").increment(1);
                    return Err(QueryError::Fraud { fraud_type: REDEMPTION_FREQUENCY.to_owned(), flag_id });
                }
                record(&mut customer.velocity, TXN_REDEEM, now);
                let txn_id = format!("R-{}", digest(&[&self.tenant, &phone, &order_id]));
                let ledger_seq = customer.ledger_seq;
                let pending_until = pending_minutes.map(|m| (now + chrono::Duration::minutes(m as i64)).to_rfc3339());
                let ledger = ledger_entry(
                    &self.tenant,
                    &mut customer,
                    LedgerDraft {
                        txn_id: txn_id.clone(),
                        kind: "redeem",
                        points: -points,
                        order_id: Some(order_id.clone()),
                        outlet_id,
                        at: now.to_rfc3339(),
                        lots: LotEffect::Consume,
                    },
                );
                let mut ops = ledger;
                ops.extend(otp_ops);
                if let Some(until) = &pending_until {
                    ops.push(Repo::put_json(
                        PENDING_REDEMPTIONS,
                        "due".to_owned(),
                        format!("{until}|{}|{order_id}", self.tenant).as_bytes(),
                        &json!({"tenant": self.tenant, "phone": phone, "order_id": order_id, "expires_at": until}),
                    ));
                }
                ops.push(self.put_redemption(
                    &phone,
                    &order_id,
                    &Redemption { txn_id: txn_id.clone(), points, pending_until: pending_until.clone(), ledger_seq },
                ));
                metrics::counter!("engage_points_redeemed_total").increment(points.unsigned_abs());
                let balance = customer.loyalty_points;
                self.commit_customer(ops, customer).await?;
                Ok(
                    json!({"redeemed": points, "wallet_balance": balance, "txn_id": txn_id, "pending_until": pending_until}),
                )
            }
            TenantQuery::Revoke { phone, order_id, now: clock, force } => {
                let clock = parse_instant(&clock).unwrap_or(now);
                let mut customer = self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                let Some(redemption) = self.redemption(&customer, &order_id).await.map_err(failed)? else {
                    return Ok(json!({"reverted": false, "reason": "no redemption for this order"}));
                };
                let index_key =
                    redemption.pending_until.as_ref().map(|until| format!("{until}|{}|{order_id}", self.tenant));
                let mut ops = Vec::new();
                let arrived =
                    customer.orders.keys().any(|key| key.rsplit_once('/').is_some_and(|(_, id)| id == order_id));
                let due = reached(redemption.pending_until.as_deref(), clock);
                if !force && (redemption.pending_until.is_none() || arrived || !due) {
                    if arrived && redemption.pending_until.is_some() {
                        // the POS order came: the redemption is final
                        let confirmed = Redemption { pending_until: None, ..redemption.clone() };
                        ops.push(self.put_redemption(&phone, &order_id, &confirmed));
                        ops.extend(index_key.map(unindex_pending));
                        self.commit_customer(ops, customer).await?;
                        return Ok(json!({"reverted": false, "confirmed": true}));
                    }
                    return Ok(json!({"reverted": false, "reason": if due { "final" } else { "not due" }}));
                }
                // revert: the points come back into the lots they came from, the redemption's
                // ledger row is marked status 2
                let mut restore: Vec<Lot> = Vec::new();
                let ledger_partition = format!("{}|{phone}", self.tenant);
                if let Some(mut row) = self
                    .ctx
                    .repo
                    .json(LOYALTY_LEDGER, &ledger_partition, &redemption.ledger_seq.to_be_bytes())
                    .await
                    .map_err(failed)?
                {
                    row["status"] = json!(2);
                    restore = serde_json::from_value(row["lots"].clone()).unwrap_or_default();
                    ops.push(Repo::put_json(
                        LOYALTY_LEDGER,
                        ledger_partition,
                        &redemption.ledger_seq.to_be_bytes(),
                        &row,
                    ));
                }
                ops.extend(ledger_entry(
                    &self.tenant,
                    &mut customer,
                    LedgerDraft {
                        txn_id: format!("V-{}", digest(&[&self.tenant, &phone, &order_id])),
                        kind: "revoke",
                        points: redemption.points,
                        order_id: Some(order_id.clone()),
                        outlet_id: None,
                        at: clock.to_rfc3339(),
                        lots: LotEffect::Restore(restore),
                    },
                ));
                ops.push(WriteOp::Delete {
                    table: REDEMPTIONS,
                    partition: format!("{}|{phone}", self.tenant),
                    clustering: order_id.as_bytes().to_vec(),
                });
                ops.extend(index_key.map(unindex_pending));
                let balance = customer.loyalty_points;
                self.commit_customer(ops, customer).await?;
                metrics::counter!("engage_redemptions_reverted_total").increment(1);
                Ok(json!({"reverted": true, "restored": redemption.points, "wallet_balance": balance}))
            }
            TenantQuery::SetVelocity { rules } => {
                self.ctx
                    .repo
                    .store()
                    .batch(vec![Repo::put_json(FRAUD_CONFIG, self.tenant.clone(), b"velocity", &rules)])
                    .await
                    .map_err(failed)?;
                self.velocity = Some(rules.clone());
                Ok(json!(rules))
            }
            TenantQuery::GetVelocity => Ok(json!(self.velocity().await.map_err(failed)?)),
            TenantQuery::Flag { contact, action, comment, submitted_by } => {
                let mut customer = self.customer(&contact).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                let wanted = if action == FlagAction::Unblock { FlagState::Blocked } else { FlagState::Flagged };
                let targets: Vec<String> =
                    customer.flags.iter().filter(|(_, s)| **s == wanted).map(|(id, _)| id.clone()).collect();
                if targets.is_empty() {
                    let state = customer.flags.values().next().copied().unwrap_or(if customer.is_blocked {
                        FlagState::Blocked
                    } else {
                        FlagState::Resolved
                    });
                    return Err(QueryError::Transition(TransitionRefused { state, action }));
                }
                let mut ops = Vec::new();
                let mut changed = Vec::new();
                for id in targets {
                    let state = customer.flags[&id];
                    let next = transition(state, action).map_err(QueryError::Transition)?;
                    let Some(mut flag) = self
                        .ctx
                        .repo
                        .json(FRAUD_FLAGS, &self.tenant, id.as_bytes())
                        .await
                        .map_err(failed)?
                        .and_then(|v| serde_json::from_value::<FraudFlag>(v).ok())
                    else {
                        continue;
                    };
                    flag.state = next;
                    flag.status = next.status();
                    flag.updated_at = now.to_rfc3339();
                    flag.submitted_by = Some(submitted_by.clone());
                    match action {
                        FlagAction::Resolve => flag.resolved_comment = comment.clone(),
                        _ => flag.comment = comment.clone(),
                    }
                    if matches!(next, FlagState::Blocked) {
                        customer.flags.insert(id.clone(), next);
                    } else {
                        customer.flags.remove(&id);
                    }
                    ops.push(Repo::put_json(FRAUD_FLAGS, self.tenant.clone(), id.as_bytes(), &flag));
                    changed.push(flag);
                }
                customer.is_blocked = customer.flags.values().any(|s| *s == FlagState::Blocked);
                let blocked = customer.is_blocked;
                self.commit_customer(ops, customer).await?;
                Ok(json!({"flags": changed, "is_blocked": blocked}))
            }
            TenantQuery::Evaluate { contact } => {
                let customer = self.customer(&contact).await.map_err(failed)?;
                let velocity = self.velocity().await.map_err(failed)?;
                let blocklisted = self
                    .ctx
                    .repo
                    .store()
                    .get(BLOCKLIST, &self.tenant, contact.as_bytes())
                    .await
                    .map_err(failed)?
                    .is_some();
                let counters = customer.as_ref().map(|c| c.velocity.clone()).unwrap_or_default();
                let count = |txn, period| count_in_period(&counters, txn, period, now);
                Ok(json!({
                    "contact": contact,
                    "known_customer": customer.is_some(),
                    "blocklisted": blocklisted,
                    "is_blocked": customer.as_ref().is_some_and(|c| c.is_blocked),
                    "blocked": blocklisted || customer.as_ref().is_some_and(|c| c.is_blocked),
                    "open_flags": customer.as_ref().map(|c| json!(c.flags)).unwrap_or_else(|| json!({})),
                    "redemptions_in_period": count(TXN_REDEEM, velocity.redemption_limit_period),
                    "allocations_in_period": count(TXN_EARN, velocity.points_earning_limit_period),
                    "limits": velocity,
                }))
            }
            TenantQuery::UpsertReward { mut reward } => {
                let id = reward["reward_id"]
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("RW-{}", &uuid::Uuid::new_v4().simple().to_string()[..10]));
                reward["reward_id"] = json!(id);
                if reward.get("active").is_none_or(Value::is_null) {
                    reward["active"] = json!(true);
                }
                self.ctx
                    .repo
                    .store()
                    .batch(vec![Repo::put_json(REWARDS, self.tenant.clone(), id.as_bytes(), &reward)])
                    .await
                    .map_err(failed)?;
                Ok(reward)
            }
            TenantQuery::ListRewards { phone } => {
                let balance = match &phone {
                    Some(phone) => {
                        Some(self.customer(phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?.loyalty_points)
                    }
                    None => None,
                };
                let rewards: Vec<Value> = self
                    .ctx
                    .repo
                    .all_json(REWARDS, &self.tenant)
                    .await
                    .map_err(failed)?
                    .into_iter()
                    .filter(|r| r["active"] == true)
                    .map(|mut r| {
                        if let Some(balance) = balance {
                            r["affordable"] = json!(r["points_cost"].as_i64().is_some_and(|cost| cost <= balance));
                        }
                        r
                    })
                    .collect();
                Ok(json!({"rewards": rewards, "loyalty_points": balance}))
            }
            TenantQuery::PurchaseReward { phone, reward_id, reference } => {
                let mut customer = self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                let reference = reference.unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
                // a retry with the same reference answers the coupon already issued
                let order_key = format!("reward:{reference}");
                if let Some(done) = self.redemption(&customer, &order_key).await.map_err(failed)? {
                    let code = done.txn_id.trim_start_matches("C-").to_owned();
                    let coupon = self.ctx.repo.json(COUPONS, &self.tenant, code.as_bytes()).await.map_err(failed)?;
                    return Ok(json!({"coupon": coupon, "loyalty_points": customer.loyalty_points, "replayed": true}));
                }
                let reward = self
                    .ctx
                    .repo
                    .json(REWARDS, &self.tenant, reward_id.as_bytes())
                    .await
                    .map_err(failed)?
                    .filter(|r| r["active"] == true)
                    .ok_or_else(|| QueryError::Invalid(format!("no active reward {reward_id}")))?;
                let cost = reward["points_cost"].as_i64().unwrap_or(0);
                if self.is_blocked(&customer).await.map_err(failed)? {
                    return Err(QueryError::Blocked);
                }
                if cost > customer.loyalty_points {
                    return Err(QueryError::Redeem(RedeemError::Insufficient { balance: customer.loyalty_points }));
                }
                let code: String = uuid::Uuid::new_v4().simple().to_string()[..8].to_uppercase();
                let expires_at =
                    (now + chrono::Duration::days(reward["valid_days"].as_i64().unwrap_or(30))).to_rfc3339();
                let ledger_seq = customer.ledger_seq;
                let mut ops = ledger_entry(
                    &self.tenant,
                    &mut customer,
                    LedgerDraft {
                        txn_id: format!("C-{code}"),
                        kind: "reward_purchase",
                        points: -cost,
                        order_id: None,
                        outlet_id: None,
                        at: now.to_rfc3339(),
                        lots: LotEffect::Consume,
                    },
                );
                let coupon = json!({"coupon_code": code, "reward_id": reward_id, "name": reward["name"], "customer_number": phone,
                                    "points_cost": cost, "status": "issued", "issued_at": now.to_rfc3339(), "expires_at": expires_at,
                                    "ledger_seq": ledger_seq});
                ops.push(Repo::put_json(COUPONS, self.tenant.clone(), code.as_bytes(), &coupon));
                ops.push(self.put_redemption(
                    &phone,
                    &order_key,
                    &Redemption { txn_id: format!("C-{code}"), points: cost, pending_until: None, ledger_seq },
                ));
                let balance = customer.loyalty_points;
                self.commit_customer(ops, customer).await?;
                Ok(json!({"coupon": coupon, "loyalty_points": balance}))
            }
            TenantQuery::CustomerCoupons { phone } => {
                let coupons: Vec<Value> = self
                    .ctx
                    .repo
                    .all_json(COUPONS, &self.tenant)
                    .await
                    .map_err(failed)?
                    .into_iter()
                    .filter(|c| c["customer_number"] == phone.as_str())
                    .map(|mut c| {
                        let expired = reached(c["expires_at"].as_str(), now);
                        if expired && c["status"] == "issued" {
                            c["status"] = json!("expired");
                        }
                        c
                    })
                    .collect();
                Ok(json!({"coupons": coupons}))
            }
            TenantQuery::GetCoupon { code } => self
                .ctx
                .repo
                .json(COUPONS, &self.tenant, code.as_bytes())
                .await
                .map_err(failed)?
                .ok_or(QueryError::NotFound),
            TenantQuery::UseCoupon { code, order_id, pending_minutes } => {
                let mut coupon = self
                    .ctx
                    .repo
                    .json(COUPONS, &self.tenant, code.as_bytes())
                    .await
                    .map_err(failed)?
                    .ok_or(QueryError::NotFound)?;
                if (coupon["status"] == "redeemed" || coupon["status"] == "pending")
                    && coupon["order_id"] == order_id.as_str()
                {
                    return Ok(coupon); // a retry
                }
                let expired = coupon["expires_at"].as_str().and_then(parse_instant).is_none_or(|t| t <= now);
                if coupon["status"] != "issued" || expired {
                    return Err(QueryError::Invalid(format!(
                        "coupon {code} is {} and cannot be used",
                        if expired { "expired" } else { coupon["status"].as_str().unwrap_or("unusable") }
                    )));
                }
                coupon["status"] = json!("redeemed");
                coupon["order_id"] = json!(order_id);
                coupon["redeemed_at"] = json!(now.to_rfc3339());
                let mut ops = Vec::new();
                if let Some(minutes) = pending_minutes {
                    let until = (now + chrono::Duration::minutes(minutes as i64)).to_rfc3339();
                    coupon["status"] = json!("pending");
                    coupon["pending_until"] = json!(until);
                    ops.push(Repo::put_json(
                        PENDING_REDEMPTIONS,
                        "due".to_owned(),
                        format!("{until}|{}|coupon:{code}", self.tenant).as_bytes(),
                        &json!({"tenant": self.tenant, "kind": "coupon", "code": code, "order_id": order_id, "expires_at": until}),
                    ));
                    ops.push(Repo::put_json(
                        PENDING_COUPONS,
                        self.tenant.clone(),
                        order_id.as_bytes(),
                        &json!({"code": code}),
                    ));
                }
                ops.push(Repo::put_json(COUPONS, self.tenant.clone(), code.as_bytes(), &coupon));
                self.ctx.repo.store().batch(ops).await.map_err(failed)?;
                Ok(coupon)
            }
            TenantQuery::RevokePendingCoupon { code, now: clock } => {
                let clock = parse_instant(&clock).unwrap_or(now);
                let Some(mut coupon) =
                    self.ctx.repo.json(COUPONS, &self.tenant, code.as_bytes()).await.map_err(failed)?
                else {
                    return Ok(json!({"reverted": false, "reason": "no such coupon"}));
                };
                let until = coupon["pending_until"].as_str().unwrap_or_default().to_owned();
                let due = reached(Some(&until), clock);
                if coupon["status"] != "pending" || !due {
                    return Ok(json!({"reverted": false, "reason": "not pending or not due"}));
                }
                let order_id = coupon["order_id"].as_str().unwrap_or_default().to_owned();
                coupon["status"] = json!("issued");
                for field in ["order_id", "redeemed_at", "pending_until"] {
                    if let Some(object) = coupon.as_object_mut() {
                        object.remove(field);
                    }
                }
                let ops = vec![
                    unindex_pending(format!("{until}|{}|coupon:{code}", self.tenant)),
                    WriteOp::Delete {
                        table: PENDING_COUPONS,
                        partition: self.tenant.clone(),
                        clustering: order_id.into_bytes(),
                    },
                    Repo::put_json(COUPONS, self.tenant.clone(), code.as_bytes(), &coupon),
                ];
                self.ctx.repo.store().batch(ops).await.map_err(failed)?;
                metrics::counter!("engage_coupon_redemptions_reverted_total").increment(1);
                Ok(json!({"reverted": true, "coupon": coupon}))
            }
            TenantQuery::RevokeCoupon { phone, code } => {
                let mut coupon = self
                    .ctx
                    .repo
                    .json(COUPONS, &self.tenant, code.as_bytes())
                    .await
                    .map_err(failed)?
                    .ok_or(QueryError::NotFound)?;
                if coupon["customer_number"] != phone.as_str() {
                    return Err(QueryError::NotFound);
                }
                if coupon["status"] != "issued" {
                    return Err(QueryError::Invalid(format!(
                        "coupon {code} is {} and cannot be revoked",
                        coupon["status"].as_str().unwrap_or("unusable")
                    )));
                }
                let mut customer = self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                let cost = coupon["points_cost"].as_i64().unwrap_or(0);
                let restore = match coupon["ledger_seq"].as_u64() {
                    Some(seq) => self.ledger_lots(&phone, seq).await.map_err(failed)?,
                    None => Vec::new(),
                };
                let mut ops = ledger_entry(
                    &self.tenant,
                    &mut customer,
                    LedgerDraft {
                        txn_id: format!("CV-{code}"),
                        kind: "reward_revoke",
                        points: cost,
                        order_id: None,
                        outlet_id: None,
                        at: now.to_rfc3339(),
                        lots: LotEffect::Restore(restore),
                    },
                );
                coupon["status"] = json!("revoked");
                coupon["revoked_at"] = json!(now.to_rfc3339());
                ops.push(Repo::put_json(COUPONS, self.tenant.clone(), code.as_bytes(), &coupon));
                let balance = customer.loyalty_points;
                self.commit_customer(ops, customer).await?;
                Ok(json!({"coupon": coupon, "loyalty_points": balance}))
            }
            TenantQuery::GenerateOtp { phone, business } => {
                self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                let random = uuid::Uuid::new_v4().as_u128();
                let otp = format!("{:06}", random % 1_000_000);
                let expires_at = (now + chrono::Duration::minutes(5)).to_rfc3339();
                let row = json!({"hash": self.otp_hash(&phone, &otp), "expires_at": expires_at, "attempts": 0, "verified_until": null});
                // the SMS is a paid send: the wallet debit, the queue row and the OTP row in one batch
                let mut wallet = self.wallet(&business).await.map_err(failed)?;
                let charge = price(Purpose::Campaign, Channel::Sms, TemplateType::Utility);
                wallet.debit(charge.total).map_err(QueryError::Insufficient)?;
                let send_id = format!("otp-{}", digest(&[&phone, &expires_at]));
                let seq = wallet.txn_seq;
                let txn = json!({"transaction_type": "debit", "amount": charge.total.normalize().to_string(), "cost": charge.cost.normalize().to_string(),
                                 "gst": charge.gst.normalize().to_string(), "purpose": "otp", "channel": "sms", "send_id": send_id, "at": now.to_rfc3339(), "status": 1});
                let (txn_id, mut ops) = self.wallet_txn(&business, &mut wallet, &send_id, txn);
                let today = crate::domain::time::ist_day(now).replace('-', "");
                let queued = json!({"send_id": send_id, "parent_business_id": self.tenant, "business_id": business, "channel": "sms",
                                    "to": phone, "message": format!("Your loyalty redemption code is {otp}. It expires in 5 minutes."),
                                    "template_type": "UTILITY", "purpose": "otp", "cost": charge.cost.normalize().to_string(),
                                    "gst": charge.gst.normalize().to_string(), "total": charge.total.normalize().to_string(),
                                    "txn_id": txn_id, "wallet_seq": seq, "delivery_date": today, "processed": false, "created_at": now.to_rfc3339()});
                ops.push(Repo::put_json(
                    CHANNEL_QUEUE,
                    format!("{}_{today}", Channel::Sms.queue()),
                    format!("{}|{send_id}", self.tenant).as_bytes(),
                    &queued,
                ));
                ops.push(self.put_otp(&phone, &row));
                ops.push(Repo::put_json(BUSINESS_WALLETS, self.tenant.clone(), business.as_bytes(), &wallet));
                self.ctx.repo.store().batch(ops).await.map_err(failed)?;
                Ok(json!({"expires_at": expires_at}))
            }
            TenantQuery::VerifyOtp { phone, otp } => {
                let mut row = self
                    .otp_row(&phone)
                    .await?
                    .ok_or_else(|| QueryError::Otp("no one-time password was generated".into()))?;
                let checked = self.check_otp(&phone, &otp, &mut row, now);
                if checked.is_ok() {
                    row["hash"] = Value::Null;
                    row["verified_until"] = json!((now + chrono::Duration::minutes(5)).to_rfc3339());
                }
                self.ctx.repo.store().batch(vec![self.put_otp(&phone, &row)]).await.map_err(failed)?;
                checked?;
                Ok(json!({"verified": true, "valid_until": row["verified_until"]}))
            }
            TenantQuery::WalletRecharge { business, amount, reference, refund } => {
                let amount = decimal(&Value::String(amount.clone()))
                    .filter(|a| *a > Decimal::ZERO)
                    .ok_or_else(|| QueryError::Invalid(format!("amount {amount:?} must be a positive number")))?;
                let mut wallet = self.wallet(&business).await.map_err(failed)?;
                let reference =
                    reference.unwrap_or_else(|| format!("recharge-{}", now.timestamp_nanos_opt().unwrap_or_default()));
                if let Some(done) = self.applied_reference(&business, &reference, &wallet).await.map_err(failed)? {
                    return Ok(
                        json!({"txn_id": done["txn_id"], "balance": wallet.balance.normalize().to_string(), "replayed": true}),
                    );
                }
                wallet.credit(amount);
                let txn = json!({"transaction_type": "credit", "amount": amount.normalize().to_string(), "reference": reference, "purpose": if refund { "refund" } else { "recharge" }, "at": now.to_rfc3339(), "status": 1});
                let (txn_id, mut ops) = self.wallet_txn(&business, &mut wallet, &reference, txn);
                ops.push(Repo::put_json(BUSINESS_WALLETS, self.tenant.clone(), business.as_bytes(), &wallet));
                self.ctx.repo.store().batch(ops).await.map_err(failed)?;
                Ok(json!({"txn_id": txn_id, "balance": wallet.balance.normalize().to_string()}))
            }
            TenantQuery::WalletBalance { business } => {
                let wallet = self.wallet(&business).await.map_err(failed)?;
                Ok(
                    json!({"business_id": business, "balance": wallet.balance.normalize().to_string(), "transactions": wallet.txn_seq}),
                )
            }
            TenantQuery::WalletTxns { business, page, page_size } => {
                let wallet = self.wallet(&business).await.map_err(failed)?;
                let page = page.max(1);
                let page_size = page_size.clamp(1, 100);
                let data = self
                    .ctx
                    .repo
                    .seq_page(
                        WALLET_TXNS,
                        &format!("{}|{business}", self.tenant),
                        (page - 1) * page_size,
                        page_size as usize,
                    )
                    .await
                    .map_err(failed)?;
                Ok(
                    json!({"data": data, "page": page, "page_size": page_size, "total": wallet.txn_seq, "balance": wallet.balance.normalize().to_string()}),
                )
            }
            TenantQuery::Send {
                business,
                channel,
                template_type,
                purpose,
                to,
                message,
                send_id,
                delivery_date,
                auto_id,
            } => {
                let mut wallet = self.wallet(&business).await.map_err(failed)?;
                if let Some(done) = self.applied_reference(&business, &send_id, &wallet).await.map_err(failed)? {
                    return Ok(
                        json!({"txn_id": done["txn_id"], "balance": wallet.balance.normalize().to_string(), "replayed": true}),
                    );
                }
                let charge = price(purpose, channel, template_type);
                if let Err(short) = wallet.debit(charge.total) {
                    metrics::counter!("engage_sends_skipped_total", "reason" => "balance").increment(1);
                    return Err(QueryError::Insufficient(short));
                }
                let seq = wallet.txn_seq;
                let txn = json!({"transaction_type": "debit", "amount": charge.total.normalize().to_string(), "cost": charge.cost.normalize().to_string(),
                                 "gst": charge.gst.normalize().to_string(), "purpose": purpose, "channel": channel, "auto_id": auto_id,
                                 "send_id": send_id, "at": now.to_rfc3339(), "status": 1});
                let (txn_id, mut ops) = self.wallet_txn(&business, &mut wallet, &send_id, txn);
                let pending =
                    if channel == Channel::Chat { json!({"process_status": 0}) } else { json!({"processed": false}) };
                let mut row = json!({"send_id": send_id, "parent_business_id": self.tenant, "business_id": business, "channel": channel,
                                     "to": to, "message": message, "template_type": template_type, "purpose": purpose, "auto_id": auto_id,
                                     "cost": charge.cost.normalize().to_string(), "gst": charge.gst.normalize().to_string(), "total": charge.total.normalize().to_string(),
                                     "txn_id": txn_id, "wallet_seq": seq, "delivery_date": delivery_date, "created_at": now.to_rfc3339()});
                if let (Some(row), Value::Object(flags)) = (row.as_object_mut(), pending) {
                    row.extend(flags);
                }
                ops.push(Repo::put_json(
                    CHANNEL_QUEUE,
                    format!("{}_{delivery_date}", channel.queue()),
                    format!("{}|{send_id}", self.tenant).as_bytes(),
                    &row,
                ));
                ops.push(Repo::put_json(BUSINESS_WALLETS, self.tenant.clone(), business.as_bytes(), &wallet));
                self.ctx.repo.store().batch(ops).await.map_err(failed)?;
                metrics::counter!("engage_sends_queued_total", "channel" => format!("{channel:?}").to_lowercase())
                    .increment(1);
                Ok(
                    json!({"txn_id": txn_id, "balance": wallet.balance.normalize().to_string(), "charged": charge.total.normalize().to_string(),
                          "queue": format!("{}_{delivery_date}", channel.queue())}),
                )
            }
            TenantQuery::ExpirePoints { phone, now: clock } => {
                let clock = parse_instant(&clock).unwrap_or(now);
                let Some(mut customer) = self.customer(&phone).await.map_err(failed)? else {
                    return Ok(json!({"expired": 0}));
                };
                let lots = customer.point_lots.expire(clock);
                // the lots never hold more than the balance; the clamp keeps it so for old rows
                let points = lots.iter().map(|lot| lot.points).sum::<i64>().min(customer.loyalty_points);
                if points <= 0 {
                    return Ok(json!({"expired": 0, "loyalty_points": customer.loyalty_points}));
                }
                let last = lots.last().map(|lot| lot.expires_at.clone()).unwrap_or_default();
                let ops = ledger_entry(
                    &self.tenant,
                    &mut customer,
                    LedgerDraft {
                        txn_id: format!("X-{}", digest(&[&self.tenant, &phone, &last])),
                        kind: "expire",
                        points: -points,
                        order_id: None,
                        outlet_id: None,
                        at: clock.to_rfc3339(),
                        lots: LotEffect::Expired(lots),
                    },
                );
                let balance = customer.loyalty_points;
                self.commit_customer(ops, customer).await?;
                metrics::counter!("engage_points_expired_total").increment(points.unsigned_abs());
                Ok(json!({"expired": points, "loyalty_points": balance}))
            }
            TenantQuery::DayWise { from, to } => day_wise(self.ctx.repo.clone(), self.tenant.clone(), from, to).await,
            TenantQuery::Ledger { phone, page, page_size } => {
                let customer = self.customer(&phone).await.map_err(failed)?.ok_or(QueryError::NotFound)?;
                let page = page.max(1);
                let page_size = page_size.clamp(1, 100);
                let entries = self
                    .ctx
                    .repo
                    .ledger(&self.tenant, &phone, (page - 1) * page_size, page_size as usize)
                    .await
                    .map_err(failed)?;
                Ok(json!({"data": entries, "page": page, "page_size": page_size, "total": customer.ledger_seq,
                          "loyalty_points": customer.loyalty_points}))
            }
        }
    }
}
