//! `TenantActor`: one per brand (`parent_business_id`); every write for the brand goes through it,
//! one message at a time, so no balance or total can be updated concurrently.
//!
//! Messages ([`TenantMsg`]): `Apply` an envelope from the bus (answers after its effects are
//! stored: the engine acks only then), or a synchronous [`TenantQuery`], which names a capability
//! and that capability's typed query. The actor keeps the brand's [`Tenant`] state (cached
//! customers and configurations); a restarted actor starts empty and reloads rows from the store.
//! What a query does lives in its capability ([`crate::capabilities`]); this module only
//! dispatches.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde::{Deserialize, Serialize};

use engage_streams::Envelope;

use crate::capabilities::bills::BillsQuery;
use crate::capabilities::business::BusinessQuery;
use crate::capabilities::customers::CustomersQuery;
use crate::capabilities::feedback::FeedbackQuery;
use crate::capabilities::fraud::FraudQuery;
use crate::capabilities::journeys::JourneysQuery;
use crate::capabilities::loyalty::{GetDayWise, LoyaltyQuery};
use crate::capabilities::otp::OtpQuery;
use crate::capabilities::redemption::RedemptionQuery;
use crate::capabilities::rewards::RewardsQuery;
use crate::capabilities::stats::StatsQuery;
use crate::capabilities::wallet::WalletQuery;
use crate::capabilities::{
    bills, business, customers, feedback, fraud, journeys, loyalty, orders, otp, redemption, rewards, stats, wallet,
};
use crate::keys::Key;
use crate::query::reply;
pub use crate::query::{QueryError, QueryReply};
use crate::read_ahead::ReadAhead;
pub use crate::tenant_core::EngineContext;
use crate::tenant_core::Tenant;

/// A synchronous question or command for a tenant: a capability's query.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "area", content = "query", rename_all = "snake_case")]
pub enum TenantQuery {
    /// Customers and instant orders.
    Customers(CustomersQuery),
    /// Loyalty rules, balances, expiry, reports.
    Loyalty(LoyaltyQuery),
    /// Points redemptions and revocations.
    Redemption(RedemptionQuery),
    /// Rewards and coupons.
    Rewards(RewardsQuery),
    /// One-time passwords.
    Otp(OtpQuery),
    /// Fraud limits and flags.
    Fraud(FraudQuery),
    /// Business wallets and paid sends.
    Wallet(WalletQuery),
    /// Automated journey configurations.
    Journeys(JourneysQuery),
    /// Digital bills.
    Bills(BillsQuery),
    /// Feedback and ratings.
    Feedback(FeedbackQuery),
    /// Dashboard metrics.
    Stats(StatsQuery),
    /// Business configuration records.
    Business(BusinessQuery),
}

impl TenantQuery {
    /// The rows answering this query reads before anything else, which the engine reads before
    /// the query reaches the actor ([`crate::read_ahead`]): the store's round trip then overlaps
    /// the actor's other messages instead of holding them up.
    pub fn reads_ahead(&self, tenant: &str) -> Vec<Key> {
        match self {
            TenantQuery::Redemption(query) => query.reads_ahead(tenant),
            _ => Vec::new(),
        }
    }
}

macro_rules! area {
    ($($query:ident => $variant:ident),* $(,)?) => {$(
        impl From<$query> for TenantQuery {
            fn from(query: $query) -> Self {
                TenantQuery::$variant(query)
            }
        }
    )*};
}

area!(
    CustomersQuery => Customers,
    LoyaltyQuery => Loyalty,
    RedemptionQuery => Redemption,
    RewardsQuery => Rewards,
    OtpQuery => Otp,
    FraudQuery => Fraud,
    WalletQuery => Wallet,
    JourneysQuery => Journeys,
    BillsQuery => Bills,
    FeedbackQuery => Feedback,
    StatsQuery => Stats,
    BusinessQuery => Business,
);

/// Each question type of an area becomes a [`TenantQuery`]: its area's variant of the same name,
/// or, written `Variant(Type)`, of another name (the variant's name is the question's wire tag).
macro_rules! questions {
    (@one $module:ident $area:ident $variant:ident $question:ident) => {
        questions!(@one $module $area $variant $question $question);
    };
    (@one $module:ident $area:ident $variant:ident $question:ident $ty:ident) => {
        impl From<$module::$ty> for TenantQuery {
            fn from(question: $module::$ty) -> Self {
                TenantQuery::$variant($area::$question(question))
            }
        }
    };
    ($($module:ident :: $area:ident => $variant:ident { $($question:ident $(($ty:ident))?),* $(,)? }),* $(,)?) => {$($(
        questions!(@one $module $area $variant $question $($ty)?);
    )*)*};
}

questions!(
    customers::CustomersQuery => Customers { Details, Update, ApplyNow, WaitingRefunds, Order(GetOrder) },
    otp::OtpQuery => Otp { Generate, Verify },
    business::BusinessQuery => Business { SaveConfig, GetConfig, OpenRoutes },
    stats::StatsQuery => Stats { ReadMetric, MarkSpecialDays },
    redemption::RedemptionQuery => Redemption { Revoke },
    loyalty::LoyaltyQuery => Loyalty {
        SetRules,
        SetMilestones,
        GetRules,
        Balance,
        ExpirePoints,
        DayWise(GetDayWise),
        Ledger,
    },
    fraud::FraudQuery => Fraud {
        SetVelocity,
        GetVelocity,
        Flag,
        Evaluate,
        SaveAlerts,
        Alerts,
        Blocklist,
        Unblocklist,
        SendAlert,
        BlocklistPage,
        FlagPage,
        GroupFlags,
        CountFlags,
    },
    wallet::WalletQuery => Wallet { Recharge, Balance(GetBalance), Txns, Send(SendRequest), GetPricing, SetPricing },
    journeys::JourneysQuery => Journeys {
        Save,
        Enable,
        View,
        List,
        Settings,
        RunPage(GetRunPage),
        Attribute,
        Runs(GetRuns),
        Audience(GetAudience),
        Roi,
        Carts,
        CreateTag,
        Tags(GetTags),
        Report(GetReport),
        BulkCreate,
        BulkQueue,
        Click,
        SyncFlags,
        Health(GetHealth),
        Types(GetTypes),
        AddType,
        Flags(GetFlags),
    },
    bills::BillsQuery => Bills {
        SaveConfig,
        SetStatus,
        Config,
        AddWidget,
        EditWidget,
        Customers,
        Mis(GetMis),
        Open,
        FeedbackOpen,
        Download,
        Insight,
        Generate,
        Report,
        ResolveBill,
    },
    feedback::FeedbackQuery => Feedback {
        SaveConfig,
        Config,
        Open,
        Submit,
        Requests,
        Ratings,
        RatingDays(GetRatingDays),
        NpsRecord,
        NpsList,
        NpsReport(GetNpsReport),
        NpsExport,
        NpsConvert,
        StoreReviews,
        SyncConfigs,
        OrdersSummary(GetOrdersSummary),
        Mis,
        QueueLegacySms,
    },
    rewards::RewardsQuery => Rewards {
        UpsertReward,
        ListRewards,
        PurchaseReward,
        CustomerCoupons,
        GetCoupon,
        UseCoupon,
        RevokePendingCoupon,
        RevokeCoupon,
    },
);

impl From<redemption::RedeemRequest> for TenantQuery {
    fn from(question: redemption::RedeemRequest) -> Self {
        TenantQuery::Redemption(RedemptionQuery::Redeem(question))
    }
}

/// Why a bus delivery was not applied (the engine retries it, then parks it with this text).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// Applying failed (the store, a row that does not decode).
    #[error("{0}")]
    Failed(String),
    /// Applying panicked; the actor forgot its cached state and goes on.
    #[error("panicked: {0}")]
    Panicked(String),
    /// The actor could not take it (stopping, restarting, the store failed for good).
    #[error("{0}")]
    Refused(String),
    /// Applied, but its writes did not reach the disk.
    #[error("{0}")]
    NotDurable(String),
    /// The actor stopped before answering.
    #[error("the tenant actor stopped before answering")]
    Stopped,
    /// No answer within the engine's limit (seconds).
    #[error("not applied within {0} s")]
    TimedOut(u64),
}

/// Messages of [`TenantActor`]. (A query is moved into the mailbox once; boxing it to match the
/// small `Apply` would cost an allocation per query instead.)
#[allow(clippy::large_enum_variant)]
pub enum TenantMsg {
    /// Apply a bus delivery; `Ok` once its effects are stored.
    Apply {
        /// The envelope (shared with the bus delivery).
        envelope: std::sync::Arc<Envelope>,
        /// Its bus position: the rank of this copy of an order ([`crate::domain::order::copy_version`]).
        position: u64,
        /// Where the outcome goes.
        reply: RpcReplyPort<Result<(), ApplyError>>,
    },
    /// Answer a query.
    Query {
        /// The query.
        query: TenantQuery,
        /// Rows it reads, read before it reached the mailbox ([`crate::read_ahead`]).
        read_ahead: Option<ReadAhead>,
        /// Where the answer goes.
        reply: RpcReplyPort<QueryReply>,
    },
}

impl TenantMsg {
    /// Answers the message with an error without processing it.
    pub fn refuse(self, reason: &str) {
        match self {
            TenantMsg::Apply { reply, .. } => {
                let _ = reply.send(Err(ApplyError::Refused(reason.to_owned())));
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
    /// What it runs on every applied order.
    pub reactions: crate::reaction::Reactions,
}

/// State of one tenant actor.
pub struct TenantState {
    tenant: Tenant,
    reactions: crate::reaction::Reactions,
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
        Ok(TenantState { tenant: Tenant::new(args.tenant, args.ctx), reactions: args.reactions })
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
        let (tenant, reactions) = (&mut state.tenant, &state.reactions);
        // a store that failed for good may hold in memory what is not on disk: nothing cached is
        // trusted, and nothing is answered from it
        if let Err(error) = tenant.repo().store().healthy() {
            tenant.forget_all();
            message.refuse(&error.to_string());
            return Ok(());
        }
        tenant.follow_store_generation();
        tenant.begin_message();
        match message {
            TenantMsg::Apply { envelope, position, reply } => {
                // a panic fails this event alone: the actor, its other events and its brand's
                // routes go on (the engine retries the event, then parks it)
                let outcome = match AssertUnwindSafe(orders::apply(tenant, reactions, &envelope, position))
                    .catch_unwind()
                    .await
                {
                    Ok(applied) => applied.map(|_| ()).map_err(|e| ApplyError::Failed(e.to_string())),
                    Err(panic) => Err(ApplyError::Panicked(panicked(tenant, &*panic))),
                };
                if let Err(error) = &outcome {
                    tracing::error!(tenant = %tenant.id, event_id = %envelope.id, trace_id = %envelope.trace_id, %error, "apply failed");
                }
                let (tenant_id, id, trace_id) = (tenant.id.clone(), envelope.id.clone(), envelope.trace_id.clone());
                answer_when_durable(tenant, reply, outcome, move |outcome, error| {
                    tracing::error!(tenant = %tenant_id, %id, %trace_id, %error, "apply failed: its writes did not reach the disk");
                    *outcome = Err(ApplyError::NotDurable(error.to_string()));
                });
            }
            // a long report is read beside the actor, never holding up the brand's writes
            TenantMsg::Query {
                query: TenantQuery::Loyalty(LoyaltyQuery::DayWise(GetDayWise { from, to })),
                reply: port,
                ..
            } => {
                let (repo, id) = (tenant.repo().clone(), tenant.id.clone());
                tokio::spawn(async move {
                    let _ = port.send(reply(loyalty::day_wise(repo, id, from, to).await));
                });
            }
            // so are the metrics: they read committed rollup rows
            TenantMsg::Query { query: TenantQuery::Stats(query @ StatsQuery::ReadMetric(_)), reply: port, .. } => {
                let (repo, id) = (tenant.repo().clone(), tenant.id.clone());
                tokio::spawn(async move {
                    let _ = port.send(reply(stats::read(repo, id, query).await));
                });
            }
            TenantMsg::Query { query, read_ahead, reply } => {
                if let Some(ahead) = read_ahead {
                    tenant.accept_read_ahead(ahead);
                }
                let answer = AssertUnwindSafe(async {
                    match query {
                        TenantQuery::Customers(query) => customers::handle(tenant, reactions, query).await,
                        TenantQuery::Loyalty(query) => loyalty::handle(tenant, query).await,
                        TenantQuery::Redemption(query) => redemption::handle(tenant, query).await,
                        TenantQuery::Rewards(query) => rewards::handle(tenant, query).await,
                        TenantQuery::Otp(query) => otp::handle(tenant, query).await,
                        TenantQuery::Fraud(query) => fraud::handle(tenant, query).await,
                        TenantQuery::Wallet(query) => wallet::handle(tenant, query).await,
                        TenantQuery::Journeys(query) => journeys::handle(tenant, query).await,
                        TenantQuery::Bills(query) => bills::handle(tenant, query).await,
                        TenantQuery::Feedback(query) => feedback::handle(tenant, query).await,
                        TenantQuery::Stats(query) => stats::handle(tenant, query).await,
                        TenantQuery::Business(query) => business::handle(tenant, query).await,
                    }
                })
                .catch_unwind()
                .await;
                let answer = match answer {
                    Ok(answer) => answer,
                    Err(panic) => Err(QueryError::Failed(format!("panicked: {}", panicked(tenant, &*panic)))),
                };
                tenant.end_read_ahead();
                let tenant_id = tenant.id.clone();
                answer_when_durable(tenant, reply, answer, move |answer, error| {
                    tracing::error!(tenant = %tenant_id, %error, "query failed: its writes did not reach the disk");
                    *answer = Err(QueryError::Failed(error.to_string()));
                });
            }
        }
        Ok(())
    }
}

/// A panic while handling a message: the brand's cached state may be half-changed, so it is
/// forgotten (rows are read again from the store); the panic is counted like an actor failure
/// (`engage_actor_failures_total`, `engage_actor_panics_total`). Answers the failure's text.
/// The panic's message (counted and logged).
fn panicked(tenant: &mut Tenant, panic: &(dyn std::any::Any + Send)) -> String {
    tenant.forget_all();
    metrics::counter!("engage_actor_failures_total").increment(1);
    metrics::counter!("engage_actor_panics_total").increment(1);
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    tracing::error!(tenant = %tenant.id, panic = %text, "a message panicked; the tenant actor forgot its cached state and goes on");
    text
}

/// Sends `answer` on `reply` once the commits the message staged are durable (at once when it
/// staged none); if one fails, `failed` turns the answer into the failure first. The actor does not
/// wait: it goes on to its next message.
fn answer_when_durable<T: Send + 'static>(
    tenant: &mut Tenant,
    reply: RpcReplyPort<T>,
    mut answer: T,
    failed: impl FnOnce(&mut T, &engage_storage::StoreError) + Send + 'static,
) {
    let staged = tenant.take_staged();
    if staged.is_empty() {
        let _ = reply.send(answer);
        return;
    }
    tokio::spawn(async move {
        for durable in staged {
            if let Err(error) = durable.wait().await {
                failed(&mut answer, &error);
                break;
            }
        }
        let _ = reply.send(answer);
    });
}
