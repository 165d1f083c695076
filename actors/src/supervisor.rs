//! `PartitionSupervisor`: one per owned partition. Spawns a [`TenantActor`] per tenant on demand
//! (linked, so failures come here), restarts a failed one with backoff, and passivates idle ones.
//!
//! Restart policy: a tenant actor that fails (panics or errors) is dropped and counted
//! (`engage_actor_failures_total`); the messages it held are answered with errors by their dropped
//! reply ports, so the engine naks them and the bus delivers them again. The next message for the
//! tenant starts a fresh actor (which reloads its state from the store) once the backoff has
//! passed: 100 ms doubling per failure within a minute, at most 30 s. More than
//! [`MAX_FAILURES_PER_MINUTE`] failures in a minute quarantine the tenant for a minute (the
//! restart-intensity limit); messages meanwhile are refused and come back later.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, SupervisionEvent};

use crate::tenant::{EngineContext, TenantActor, TenantArgs, TenantMsg};

/// Failures within a minute after which a tenant is quarantined for a minute.
pub const MAX_FAILURES_PER_MINUTE: u32 = 10;
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
const WINDOW: Duration = Duration::from_secs(60);

/// Messages of the supervisor. `Route` dwarfs `Passivate`; boxing it would add an allocation to
/// every delivery for a message sent once per tick.
#[allow(clippy::large_enum_variant)]
pub enum SupervisorMsg {
    /// Deliver `msg` to `tenant`'s actor, starting it when needed.
    Route {
        /// The brand.
        tenant: String,
        /// The message.
        msg: TenantMsg,
    },
    /// Stop tenant actors idle longer than the passivation time.
    Passivate,
}

/// The supervisor.
pub struct PartitionSupervisor;

/// Start-up arguments.
pub struct SupervisorArgs {
    /// Partition number (for logs and metrics).
    pub partition: u32,
    /// Shared context for tenant actors.
    pub ctx: Arc<EngineContext>,
    /// What the tenant actors run on every applied order.
    pub reactions: crate::reaction::Reactions,
    /// Idle time after which a tenant actor is stopped.
    pub passivate_after: Duration,
}

struct Child {
    actor: ActorRef<TenantMsg>,
    last_used: Instant,
}

#[derive(Default)]
struct Failures {
    count: u32,
    window_start: Option<Instant>,
    not_before: Option<Instant>,
}

/// Supervisor state.
pub struct SupervisorState {
    partition: u32,
    ctx: Arc<EngineContext>,
    reactions: crate::reaction::Reactions,
    passivate_after: Duration,
    children: HashMap<String, Child>,
    tenants_by_actor: HashMap<ActorId, String>,
    failures: HashMap<String, Failures>,
}

impl Actor for PartitionSupervisor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = SupervisorArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<SupervisorMsg>,
        args: SupervisorArgs,
    ) -> Result<SupervisorState, ActorProcessingErr> {
        let tick = (args.passivate_after / 2).max(Duration::from_millis(200));
        let weak = myself.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(tick).await;
                if weak.send_message(SupervisorMsg::Passivate).is_err() {
                    break;
                }
            }
        });
        Ok(SupervisorState {
            partition: args.partition,
            ctx: args.ctx,
            reactions: args.reactions,
            passivate_after: args.passivate_after,
            children: HashMap::new(),
            tenants_by_actor: HashMap::new(),
            failures: HashMap::new(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<SupervisorMsg>,
        message: SupervisorMsg,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SupervisorMsg::Route { tenant, msg } => state.route(myself.get_cell(), tenant, msg).await,
            SupervisorMsg::Passivate => state.passivate(),
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<SupervisorMsg>,
        event: SupervisionEvent,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorFailed(cell, error) => state.failed(&cell, &error.to_string()),
            SupervisionEvent::ActorTerminated(cell, _, _) => state.forget(&cell),
            _ => {}
        }
        Ok(())
    }
}

impl SupervisorState {
    async fn route(&mut self, me: ActorCell, tenant: String, msg: TenantMsg) {
        if let Some(child) = self.children.get_mut(&tenant) {
            child.last_used = Instant::now();
            if let Err(ractor::MessagingErr::SendErr(msg)) = child.actor.send_message(msg) {
                msg.refuse("tenant actor stopping");
            }
            return;
        }
        if let Some(not_before) = self.failures.get(&tenant).and_then(|f| f.not_before) {
            if Instant::now() < not_before {
                msg.refuse("tenant actor restarting (backoff)");
                return;
            }
        }
        let args = TenantArgs { tenant: tenant.clone(), ctx: self.ctx.clone(), reactions: self.reactions.clone() };
        match Actor::spawn_linked(None, TenantActor, args, me).await {
            Ok((actor, _handle)) => {
                self.tenants_by_actor.insert(actor.get_id(), tenant.clone());
                if let Err(ractor::MessagingErr::SendErr(msg)) = actor.send_message(msg) {
                    msg.refuse("tenant actor stopped at start");
                }
                self.children.insert(tenant, Child { actor, last_used: Instant::now() });
            }
            Err(error) => {
                tracing::error!(partition = self.partition, tenant, %error, "tenant actor failed to start");
                msg.refuse("tenant actor failed to start");
            }
        }
    }

    fn failed(&mut self, cell: &ActorCell, error: &str) {
        let Some(tenant) = self.tenants_by_actor.remove(&cell.get_id()) else { return };
        self.children.remove(&tenant);
        metrics::counter!("engage_actor_failures_total").increment(1);
        let now = Instant::now();
        let failures = self.failures.entry(tenant.clone()).or_default();
        if failures.window_start.is_none_or(|start| now - start > WINDOW) {
            failures.window_start = Some(now);
            failures.count = 0;
        }
        failures.count += 1;
        let backoff = if failures.count > MAX_FAILURES_PER_MINUTE {
            metrics::counter!("engage_actor_quarantines_total").increment(1);
            WINDOW
        } else {
            (FIRST_BACKOFF * 2u32.saturating_pow(failures.count - 1)).min(MAX_BACKOFF)
        };
        failures.not_before = Some(now + backoff);
        metrics::counter!("engage_actor_restarts_total").increment(1);
        tracing::error!(
            partition = self.partition,
            tenant,
            error,
            failures = failures.count,
            ?backoff,
            "tenant actor failed; restarting on its next message after the backoff"
        );
    }

    fn forget(&mut self, cell: &ActorCell) {
        if let Some(tenant) = self.tenants_by_actor.remove(&cell.get_id()) {
            self.children.remove(&tenant);
        }
    }

    fn passivate(&mut self) {
        let now = Instant::now();
        let idle: Vec<String> = self
            .children
            .iter()
            .filter(|(_, c)| now - c.last_used > self.passivate_after)
            .map(|(t, _)| t.clone())
            .collect();
        for tenant in idle {
            if let Some(child) = self.children.remove(&tenant) {
                self.tenants_by_actor.remove(&child.actor.get_id());
                child.actor.stop(Some("passivated".to_owned()));
                metrics::counter!("engage_actor_passivations_total").increment(1);
            }
        }
    }
}
