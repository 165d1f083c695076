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

use crate::ask::{panicked, Asked, Asking, WireReply};
use crate::capabilities::bills::BillsQuery;
use crate::capabilities::business::BusinessQuery;
use crate::capabilities::consent::ConsentQuery;
use crate::capabilities::customers::CustomersQuery;
use crate::capabilities::feedback::FeedbackQuery;
use crate::capabilities::fraud::FraudQuery;
use crate::capabilities::journeys::JourneysQuery;
use crate::capabilities::loyalty::LoyaltyQuery;
use crate::capabilities::otp::OtpQuery;
use crate::capabilities::redemption::RedemptionQuery;
use crate::capabilities::rewards::RewardsQuery;
use crate::capabilities::rights::RightsQuery;
use crate::capabilities::senders::SendersQuery;
use crate::capabilities::stats::StatsQuery;
use crate::capabilities::wallet::WalletQuery;
use crate::capabilities::{
    bills, business, consent, customers, feedback, fraud, journeys, loyalty, orders, otp, redemption, rewards, rights,
    senders, stats, wallet,
};
pub use crate::query::QueryError;
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
    /// Marketing consent.
    Consent(ConsentQuery),
    /// The customer's data rights.
    Rights(RightsQuery),
    /// The brand's own senders.
    Senders(SendersQuery),
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
    ConsentQuery => Consent,
    RightsQuery => Rights,
    SendersQuery => Senders,
);

/// Each question type of an area becomes a [`TenantQuery`]: its area's variant of the same name,
/// or, written `Variant(Type)`, of another name (the variant's name is the question's wire tag).
/// A question that came over the wire is answered by its own [`crate::ask::Answer`]: the list is
/// every question, or the match of [`TenantQuery::into_asked`] does not compile.
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
    ($($module:ident :: $area:ident => $variant:ident { $($question:ident $(($ty:ident))?),* $(,)? }),* $(,)?) => {
        $($(
            questions!(@one $module $area $variant $question $($ty)?);
        )*)*

        impl TenantQuery {
            /// The question, to be answered as JSON on `port`.
            pub(crate) fn into_asked(self, port: tokio::sync::oneshot::Sender<WireReply>) -> Box<dyn Asked> {
                match self {
                    $($(TenantQuery::$variant($area::$question(question)) => Asking::wire(question, port),)*)*
                }
            }
        }
    };
}

questions!(
    customers::CustomersQuery => Customers { Details, Update, ApplyNow, WaitingRefunds, Order(GetOrder) },
    otp::OtpQuery => Otp { Generate, Verify },
    business::BusinessQuery => Business { SaveConfig, GetConfig, OpenRoutes, OutletNames },
    consent::ConsentQuery => Consent {
        Get(GetConsent),
        Set(SetConsent),
        GetDefaults,
        SetDefaults,
        Inbound,
        ImportOptOuts,
        CountSkips,
    },
    rights::RightsQuery => Rights { Export, Erase, PurgeErased },
    senders::SendersQuery => Senders { GetSenders, SetSender, TwilioInbound, WhatsappInbound },
    stats::StatsQuery => Stats { ReadMetric, MarkSpecialDays },
    redemption::RedemptionQuery => Redemption { Redeem(RedeemRequest), Revoke },
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
    /// Not applied because another event's writes failed (its writes travelled with them, or it
    /// read rows they dropped): not this event's failure, so it does not count towards parking.
    #[error("{0}")]
    Behind(String),
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
        /// Rows it reads, read with its batch before it reached the mailbox ([`crate::read_ahead`]).
        read_ahead: Option<ReadAhead>,
    },
    /// Answer a query.
    Query {
        /// The question and where its answer goes.
        asked: Box<dyn Asked>,
        /// Rows it reads, read before it reached the mailbox ([`crate::read_ahead`]).
        read_ahead: Option<ReadAhead>,
    },
}

impl TenantMsg {
    /// Answers the message with an error without processing it.
    pub fn refuse(self, reason: &str) {
        match self {
            TenantMsg::Apply { reply, .. } => {
                let _ = reply.send(Err(ApplyError::Refused(reason.to_owned())));
            }
            TenantMsg::Query { asked, .. } => asked.refuse(QueryError::Unavailable(reason.to_owned())),
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
            TenantMsg::Apply { envelope, position, reply, read_ahead } => {
                if let Some(ahead) = read_ahead {
                    tenant.accept_read_ahead(ahead, crate::tenant_core::ReadFor::Event);
                }
                // a panic fails this event alone: the actor, its other events and its brand's
                // routes go on (the engine retries the event, then parks it)
                // boxed: the apply's state (kilobytes) is allocated for the message only, not
                // kept in every live actor's task between messages (issue 57)
                let outcome = match AssertUnwindSafe(Box::pin(orders::apply(tenant, reactions, &envelope, position)))
                    .catch_unwind()
                    .await
                {
                    Ok(applied) => applied.map(|_| ()).map_err(|e| match e.is_behind_another() {
                        true => ApplyError::Behind(e.to_string()),
                        false => ApplyError::Failed(e.to_string()),
                    }),
                    Err(panic) => Err(ApplyError::Panicked(panicked(tenant, &*panic))),
                };
                // the rows read ahead serve this event only, applied or not
                tenant.end_read_ahead();
                if let Err(error) = &outcome {
                    tracing::error!(tenant = %tenant.id, event_id = %envelope.id, trace_id = %envelope.trace_id, %error, "apply failed");
                }
                let (tenant_id, id, trace_id) = (tenant.id.clone(), envelope.id.clone(), envelope.trace_id.clone());
                when_durable(tenant, move |failure| {
                    let outcome = match failure {
                        None => outcome,
                        Some(error) if error.is_behind_another() => {
                            tracing::warn!(tenant = %tenant_id, %id, %trace_id, %error, "apply not written: another event's writes failed; it comes again");
                            Err(ApplyError::Behind(error.to_string()))
                        }
                        Some(error) => {
                            tracing::error!(tenant = %tenant_id, %id, %trace_id, %error, "apply failed: its writes did not reach the disk");
                            Err(ApplyError::NotDurable(error.to_string()))
                        }
                    };
                    let _ = reply.send(outcome);
                });
            }
            TenantMsg::Query { asked, read_ahead } => {
                // a long report is read beside the actor, never holding up the brand's writes
                let Some(asked) = asked.beside(tenant) else { return Ok(()) };
                if let Some(ahead) = read_ahead {
                    tenant.accept_read_ahead(ahead, crate::tenant_core::ReadFor::Query);
                }
                let sealed = Box::pin(asked.answer(tenant, reactions)).await;
                tenant.end_read_ahead();
                let tenant_id = tenant.id.clone();
                when_durable(tenant, move |failure| match failure {
                    None => sealed.send(),
                    Some(error) => {
                        tracing::error!(tenant = %tenant_id, %error, "query failed: its writes did not reach the disk");
                        sealed.fail(QueryError::Failed(error.to_string()));
                    }
                });
            }
        }
        Ok(())
    }
}

/// Calls `done` once the commits the message staged are durable (at once when it staged none)
/// with the first failure, if one failed. The actor does not wait: it goes on to its next message.
fn when_durable(tenant: &mut Tenant, done: impl FnOnce(Option<engage_storage::StoreError>) + Send + 'static) {
    let staged = tenant.take_staged();
    if staged.is_empty() {
        done(None);
        return;
    }
    tokio::spawn(async move {
        for durable in staged {
            if let Err(error) = durable.wait().await {
                done(Some(error));
                return;
            }
        }
        done(None);
    });
}
