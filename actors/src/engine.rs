//! The engine of one node: for each owned partition a [`PartitionSupervisor`] and a runner that
//! pulls the partition's deliveries from the bus, routes each to its tenant actor, and acks it
//! only after the actor answered that its effects are stored (nak, and so redelivery, otherwise).
//! With NATS, each owned partition also answers request-reply questions ([`crate::rpc`]).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use ractor::{Actor, ActorRef};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use engage_streams::subject::partition_of;
use engage_streams::{Bus, Delivery};

use crate::ask::{Answer, Answered, Asked, Asking};
use crate::reaction::OrderReaction;
use crate::read_ahead::ReadAhead;
use crate::repo::Repo;
use crate::rpc::LocalTenants;
use crate::supervisor::{PartitionSupervisor, SupervisorArgs, SupervisorMsg};
use crate::tenant::{ApplyError, EngineContext, QueryError, TenantMsg};

/// Deliveries pulled per batch.
const BATCH: usize = 256;
/// Batches a partition may have routed and not yet settled on a bus that pulls ahead: the next
/// batch is pulled and routed while this many earlier ones wait for their writes (a batch waits
/// for the store's group commit, ~10–20 ms under load on NATS KV; with one, a partition's orders
/// waited two to three commits before their actor saw them: lag p99 145–187 ms at 5,300 orders/s
/// on one server, 47–85 ms with 3–8). Settled in the order they were routed.
const SETTLING_AHEAD: usize = 4;
/// How long a delivery may take before it is nak'd.
const APPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// Redelivery delay after a first failure; it doubles with each failed delivery.
const RETRY_DELAY: Duration = Duration::from_millis(500);
/// Longest redelivery delay.
const MAX_RETRY_DELAY: Duration = Duration::from_secs(10);

/// The delay before delivery `attempt + 1` of an event whose delivery `attempt` failed.
fn retry_delay(attempt: u32) -> Duration {
    RETRY_DELAY.saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1).min(16))).min(MAX_RETRY_DELAY)
}

/// Settings of an [`Engine`].
pub struct EngineConfig {
    /// Partition count (cluster-wide).
    pub partitions: u32,
    /// Idle time before a tenant actor is stopped.
    pub passivate_after: Duration,
    /// Testing only: panic once on this order id.
    pub fault_panic_order_id: Option<String>,
    /// Testing only: panic on every delivery of this order id (a permanent poison).
    pub fault_poison_order_id: Option<String>,
    /// Deliveries of an event that fail before it is parked ([`engage_streams::Bus::park`]).
    pub max_deliveries: u32,
    /// Links and the link service (digital bills).
    pub services: crate::tenant_core::Services,
    /// Most customers all tenant actors of this node cache together
    /// ([`crate::customer_cache::NodeCustomers`]).
    pub cached_customers_max: usize,
}

struct Runner {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
    supervisor: ActorRef<SupervisorMsg>,
    /// The partition's RPC server (it ends by itself a moment after the stop: [`crate::rpc`]).
    rpc: Option<JoinHandle<()>>,
}

/// The actor side of one node.
pub struct Engine {
    ctx: Arc<EngineContext>,
    reactions: crate::reaction::Reactions,
    bus: Arc<dyn Bus>,
    nats: Option<async_nats::Client>,
    config: EngineConfig,
    runners: tokio::sync::Mutex<HashMap<u32, Runner>>,
    supervisors: RwLock<HashMap<u32, ActorRef<SupervisorMsg>>>,
    /// The partitions processed now ([`Engine::running`]).
    running: watch::Sender<BTreeSet<u32>>,
    /// The RPC servers of the partitions [`Engine::shutdown`] stopped ([`Engine::rpc_ended`]).
    rpc_ending: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

impl Engine {
    /// An engine owning nothing yet; call [`Engine::set_owned`].
    pub fn new(
        store: Arc<dyn engage_storage::Store>,
        bus: Arc<dyn Bus>,
        nats: Option<async_nats::Client>,
        config: EngineConfig,
    ) -> Arc<Self> {
        Self::with_reactions(store, bus, nats, config, crate::capabilities::order_reactions())
    }

    /// An engine whose tenant actors run `reactions` on every applied order (instead of
    /// [`crate::capabilities::order_reactions`]).
    pub fn with_reactions(
        store: Arc<dyn engage_storage::Store>,
        bus: Arc<dyn Bus>,
        nats: Option<async_nats::Client>,
        config: EngineConfig,
        reactions: Vec<Arc<dyn OrderReaction>>,
    ) -> Arc<Self> {
        let repo = Repo::new(store);
        let reactions: crate::reaction::Reactions = Arc::new(reactions);
        let ctx = Arc::new(EngineContext {
            repo,
            fault_panic_order_id: config.fault_panic_order_id.clone(),
            fault_poison_order_id: config.fault_poison_order_id.clone(),
            fault_fired: AtomicBool::new(false),
            services: config.services.clone(),
            stamps: Default::default(),
            customers: Arc::new(crate::customer_cache::NodeCustomers::new(config.cached_customers_max)),
        });
        Arc::new(Self {
            ctx,
            reactions,
            bus,
            nats,
            config,
            runners: tokio::sync::Mutex::new(HashMap::new()),
            supervisors: RwLock::new(HashMap::new()),
            running: watch::channel(BTreeSet::new()).0,
            rpc_ending: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// The partition count.
    pub fn partitions(&self) -> u32 {
        self.config.partitions
    }

    /// Whether `partition` is processed here.
    pub fn owns(&self, partition: u32) -> bool {
        self.supervisors.read().map(|s| s.contains_key(&partition)).unwrap_or(false)
    }

    /// The partitions this node processes now: a partition leaves it once its runner has
    /// finished (and acked) what it had taken from the bus, so the lease keeper can hand it over
    /// at that moment (`engage_streams::lease::spawn_lease_keeper`).
    pub fn running(&self) -> watch::Receiver<BTreeSet<u32>> {
        self.running.subscribe()
    }

    /// Starts runners for newly owned partitions and stops those no longer owned (all at once:
    /// each finishes its batch).
    pub async fn set_owned(self: &Arc<Self>, owned: &BTreeSet<u32>) {
        let mut runners = self.runners.lock().await;
        let gone: Vec<u32> = runners.keys().filter(|p| !owned.contains(p)).copied().collect();
        let stopped = gone.len();
        let mut started = 0;
        let leaving: Vec<(u32, Runner)> =
            gone.into_iter().filter_map(|partition| runners.remove(&partition).map(|r| (partition, r))).collect();
        // a rebalance does not wait for the RPC servers' linger
        drop(self.stop_runners(leaving).await);
        self.running.send_replace(runners.keys().copied().collect());
        for &partition in owned {
            if runners.contains_key(&partition) {
                continue;
            }
            match self.start_runner(partition).await {
                Ok(runner) => {
                    runners.insert(partition, runner);
                    started += 1;
                }
                Err(error) => tracing::error!(partition, %error, "cannot start partition"),
            }
        }
        metrics::gauge!("engage_partitions_running").set(runners.len() as f64);
        self.running.send_replace(runners.keys().copied().collect());
        if started + stopped > 0 {
            tracing::info!(started, stopped, running = runners.len(), "partitions changed");
        }
    }

    async fn start_runner(self: &Arc<Self>, partition: u32) -> Result<Runner, ractor::SpawnErr> {
        let supervisor = self.spawn_supervisor(partition).await?;
        let (stop, stop_rx) = watch::channel(false);
        let runner = PartitionRunner {
            partition,
            bus: self.bus.clone(),
            engine: Arc::downgrade(self),
            supervisor: supervisor.clone(),
            max_deliveries: self.config.max_deliveries.max(1),
            failures: HashMap::new(),
            excused: HashMap::new(),
        };
        let task = tokio::spawn(runner.run(stop_rx.clone()));
        let rpc = self.nats.clone().map(|client| {
            let local: Arc<dyn LocalTenants> = self.clone();
            tokio::spawn(crate::rpc::serve_partition(client, partition, local, stop_rx))
        });
        if let Ok(mut supervisors) = self.supervisors.write() {
            supervisors.insert(partition, supervisor.clone());
        }
        // the partition's series exists (at zero) from the moment it runs here
        metrics::counter!("engage_events_processed_total", "partition" => partition.to_string()).increment(0);
        tracing::debug!(partition, "partition started");
        Ok(Runner { stop, task, supervisor, rpc })
    }

    /// Stops `leaving` together: each runner finishes the pull and the batch it is on, then its
    /// supervisor stops. Questions asked meanwhile are answered "not owned here" (the asker
    /// tries again, [`crate::rpc::TenantGateway`]); the partition's RPC subscription lingers
    /// a moment to say so to requests still routed here.
    /// Answers the RPC servers of the partitions stopped, which end by themselves a moment later
    /// (a rebalance does not wait for them; a shutdown does, so that no request routed to this
    /// node goes unanswered).
    async fn stop_runners(&self, leaving: Vec<(u32, Runner)>) -> Vec<JoinHandle<()>> {
        if let Ok(mut supervisors) = self.supervisors.write() {
            for (partition, _) in &leaving {
                supervisors.remove(partition);
            }
        }
        for (_, runner) in &leaving {
            let _ = runner.stop.send(true);
        }
        futures::future::join_all(leaving.into_iter().map(|(partition, runner)| async move {
            let _ = runner.task.await;
            runner.supervisor.stop(Some("partition released".to_owned()));
            tracing::debug!(partition, "partition stopped");
            runner.rpc
        }))
        .await
        .into_iter()
        .flatten()
        .collect()
    }

    /// Stops every partition (each finishes the batch it is processing).
    pub async fn shutdown(&self) {
        let mut runners = self.runners.lock().await;
        let leaving: Vec<(u32, Runner)> = runners.drain().collect();
        let rpc = self.stop_runners(leaving).await;
        self.running.send_replace(BTreeSet::new());
        if let Ok(mut ending) = self.rpc_ending.lock() {
            ending.extend(rpc);
        }
    }

    /// Waits until the RPC servers of the partitions [`Engine::shutdown`] stopped have answered
    /// every request routed to them (they linger a moment, then drain): called once the leases
    /// are released, before the process exits, so no asker waits out its time.
    pub async fn rpc_ended(&self) {
        let ending: Vec<JoinHandle<()>> = match self.rpc_ending.lock() {
            Ok(mut ending) => ending.drain(..).collect(),
            Err(_) => Vec::new(),
        };
        futures::future::join_all(ending).await;
    }

    /// Asks the tenant's actor, on this node, `question`; its own reply type comes back.
    /// `Unavailable` when the partition is not owned here or no answer came within `timeout`.
    pub async fn ask<Q: Answer>(&self, tenant: &str, question: Q, timeout: Duration) -> Answered<Q> {
        let (port, answer) = tokio::sync::oneshot::channel();
        crate::ask::awaited(self.deliver(tenant, Asking::local(question, port)), answer, timeout).await
    }

    /// Delivers `asked` to the tenant's actor on this node (its port gets the answer).
    async fn deliver(&self, tenant: &str, asked: Box<dyn Asked>) -> Result<(), QueryError> {
        let partition = partition_of(tenant, self.config.partitions);
        let supervisor = self.supervisors.read().ok().and_then(|s| s.get(&partition).cloned()).ok_or_else(|| {
            QueryError::Unavailable(format!("partition {partition} is {}", crate::ask::NOT_OWNED_HERE))
        })?;
        // on a networked store, the rows the question reads first are read here: beside the
        // actor, not in its turn (a failed read is left to the actor, which reads again and
        // answers the error)
        let keys = match self.ctx.repo.store().local_reads() {
            true => Vec::new(),
            false => asked.reads_ahead(tenant),
        };
        let read_ahead = match keys.is_empty() {
            true => None,
            false => ReadAhead::read(&self.ctx.repo, &self.ctx.stamps, keys).await.ok(),
        };
        let msg = TenantMsg::Query { asked, read_ahead };
        if supervisor.send_message(SupervisorMsg::Route { tenant: tenant.to_owned(), msg }).is_err() {
            return Err(QueryError::Unavailable(crate::ask::PARTITION_STOPPING.to_owned()));
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl LocalTenants for Engine {
    fn owns(&self, partition: u32) -> bool {
        Engine::owns(self, partition)
    }

    async fn deliver(&self, tenant: &str, asked: Box<dyn Asked>) -> Result<(), QueryError> {
        Engine::deliver(self, tenant, asked).await
    }
}

impl Engine {
    /// A new supervisor of `partition`'s tenant actors.
    async fn spawn_supervisor(&self, partition: u32) -> Result<ActorRef<SupervisorMsg>, ractor::SpawnErr> {
        let args = SupervisorArgs {
            partition,
            ctx: self.ctx.clone(),
            reactions: self.reactions.clone(),
            passivate_after: self.config.passivate_after,
        };
        let (supervisor, _) = Actor::spawn(None, PartitionSupervisor, args).await?;
        Ok(supervisor)
    }

    /// The supervisor of `partition` is gone (it failed): a new one takes its place, for the
    /// partition's runner and for questions. `None` when the partition is no longer run here.
    async fn respawn_supervisor(&self, partition: u32) -> Option<ActorRef<SupervisorMsg>> {
        let supervisor = match self.spawn_supervisor(partition).await {
            Ok(supervisor) => supervisor,
            Err(error) => {
                tracing::error!(partition, %error, "cannot restart the partition supervisor");
                return None;
            }
        };
        let mut supervisors = self.supervisors.write().ok()?;
        if !supervisors.contains_key(&partition) {
            supervisor.stop(None);
            return None;
        }
        supervisors.insert(partition, supervisor.clone());
        metrics::counter!("engage_supervisor_restarts_total").increment(1);
        tracing::error!(partition, "partition supervisor failed; a new one took its place");
        Some(supervisor)
    }
}

/// Pulls one partition's deliveries and routes them to their tenant actors; retries a failed one
/// with a growing delay and parks it after `max_deliveries` failed deliveries.
struct PartitionRunner {
    partition: u32,
    bus: Arc<dyn Bus>,
    engine: std::sync::Weak<Engine>,
    supervisor: ActorRef<SupervisorMsg>,
    max_deliveries: u32,
    /// When each event of this partition that failed and is being retried first failed, by
    /// envelope id.
    failures: HashMap<String, chrono::DateTime<chrono::Utc>>,
    /// Failed deliveries of an event that were another event's failure ([`ApplyError::Behind`]),
    /// by envelope id: they do not count towards parking it, up to [`MOST_EXCUSED`].
    excused: HashMap<String, u32>,
}

/// What became of a routed batch ([`settle`]).
struct Settled {
    /// The ids of the events applied (and acked).
    done: Vec<String>,
    /// The deliveries that failed, with why.
    failed: Vec<(Delivery, ApplyError)>,
}

/// Waits for every delivery's outcome and acks the applied ones together.
async fn settle(
    waits: Vec<(Delivery, tokio::sync::oneshot::Receiver<Result<(), ApplyError>>)>,
    processed: metrics::Counter,
    partition: u32,
) -> Settled {
    let outcomes = futures::future::join_all(waits.into_iter().map(|(delivery, rx)| async move {
        let outcome = match tokio::time::timeout(APPLY_TIMEOUT, rx).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(error))) => Err(error),
            Ok(Err(_)) => Err(ApplyError::Stopped),
            Err(_) => Err(ApplyError::TimedOut(APPLY_TIMEOUT.as_secs())),
        };
        (delivery, outcome)
    }))
    .await;
    let mut applied = Vec::with_capacity(outcomes.len());
    let mut failed = Vec::new();
    for (delivery, outcome) in outcomes {
        match outcome {
            Ok(()) => applied.push(delivery),
            Err(error) => failed.push((delivery, error)),
        }
    }
    let done = applied.iter().map(|delivery| delivery.envelope.id.clone()).collect();
    for result in Delivery::ack_all(applied).await {
        match result {
            Ok(()) => processed.increment(1),
            Err(error) => tracing::warn!(partition, %error, "ack failed; the event comes again (idempotent)"),
        }
    }
    Settled { done, failed }
}

/// Most deliveries of one event excused as another event's failure: past it they count, so an
/// event is parked at the latest after `max_deliveries + MOST_EXCUSED` deliveries.
const MOST_EXCUSED: u32 = 20;

impl PartitionRunner {
    async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let partition = self.partition;
        let mut consumer = loop {
            match self.bus.consumer(partition).await {
                Ok(consumer) => break consumer,
                Err(error) => {
                    tracing::warn!(partition, %error, "cannot open the partition consumer; retrying");
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                        _ = stop.wait_for(|s| *s) => return,
                    }
                }
            }
        };
        // one handle, not a registry lookup per delivery
        let processed = metrics::counter!("engage_events_processed_total", "partition" => partition.to_string());
        let mut failed_pulls = 0u32;
        // the batches before the one being routed, while they settle, oldest first
        let mut in_flight: VecDeque<JoinHandle<Settled>> = VecDeque::new();
        /// Pulls answered 503 that are said as a leader election, not warned about.
        const STARTING_PULLS: u32 = 20;
        loop {
            if *stop.borrow() {
                break;
            }
            // a pull is never cut short by a stop: the messages it has taken from the bus are
            // this node's until acked, and dropped half-way they would come again only after the
            // bus's ack wait (the lease, 10 s). The pull ends within its wait (500 ms); what it
            // brought is processed and acked below, then the loop sees the stop.
            let batch = consumer.next_batch(BATCH, Duration::from_millis(500)).await;
            let batch = match batch {
                Ok(batch) => {
                    failed_pulls = 0;
                    batch
                }
                Err(error) => {
                    failed_pulls += 1;
                    // a new cluster elects each stream's leader in its first seconds, and a
                    // partition just taken over opens its consumer: its first pulls may answer 503
                    let text = error.to_string();
                    if failed_pulls <= STARTING_PULLS && (text.contains("503") || text.contains("no responders")) {
                        tracing::info!(partition, failed_pulls, "the partition's stream has no leader yet (a new or changing NATS cluster elects one): pulling again");
                    } else {
                        tracing::warn!(partition, %error, failed_pulls, "pull failed");
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    // after an outage (a server lost, a leader moved) the consumer is opened again
                    if failed_pulls.is_multiple_of(3) {
                        match self.bus.consumer(partition).await {
                            Ok(reopened) => consumer = reopened,
                            Err(error) => tracing::warn!(partition, %error, "cannot reopen the partition consumer"),
                        }
                    }
                    continue;
                }
            };
            if batch.is_empty() {
                self.finish_all(&mut in_flight).await;
                continue;
            }
            self.keep_supervisor().await;
            let ahead = self.read_ahead(&batch).await;
            let mut waits = Vec::with_capacity(batch.len());
            for (delivery, read_ahead) in
                batch.into_iter().zip(ahead.into_iter().chain(std::iter::repeat_with(|| None)))
            {
                // what no retry can help (misrouted, out of bounds) is parked at once, before
                // the tenant's actor or the store sees it
                let unfit = delivery
                    .refused
                    .clone()
                    .or_else(|| crate::domain::bounds::refusal(&delivery.envelope, delivery.encoded_len));
                if let Some(reason) = unfit {
                    self.park(delivery, reason).await;
                    continue;
                }
                let (tx, rx) = tokio::sync::oneshot::channel();
                let position = delivery.rank();
                let msg = SupervisorMsg::Route {
                    tenant: delivery.envelope.tenant.clone(),
                    msg: TenantMsg::Apply {
                        envelope: delivery.envelope.clone(),
                        position,
                        reply: tx.into(),
                        read_ahead,
                    },
                };
                // If the supervisor is gone, the dropped reply port makes this delivery fail below.
                let _ = self.supervisor.send_message(msg);
                waits.push((delivery, rx));
            }
            // the batch settles (its outcomes awaited, its successes acked) on its own task;
            // on a bus that allows it the next batches are pulled and routed meanwhile (up to
            // SETTLING_AHEAD), so a partition's events never wait for earlier batches' writes to
            // become durable
            let settling = tokio::spawn(settle(waits, processed.clone(), partition));
            match consumer.pulls_ahead() {
                true => {
                    in_flight.push_back(settling);
                    while in_flight.len() > SETTLING_AHEAD {
                        let previous = in_flight.pop_front();
                        self.finish(previous).await;
                    }
                }
                false => self.finish(Some(settling)).await,
            }
        }
        // what was pulled is processed and acked before the runner ends
        self.finish_all(&mut in_flight).await;
    }

    /// [`Self::finish`]es every batch still settling, oldest first.
    async fn finish_all(&mut self, in_flight: &mut VecDeque<JoinHandle<Settled>>) {
        while let Some(settling) = in_flight.pop_front() {
            self.finish(Some(settling)).await;
        }
    }

    /// Handles a settled batch's outcome: successes forget their earlier failures, failures come
    /// again or are parked.
    async fn finish(&mut self, settling: Option<JoinHandle<Settled>>) {
        let Some(settling) = settling else { return };
        let settled = match settling.await {
            Ok(settled) => settled,
            Err(error) => {
                // its deliveries are neither acked nor nak'd: they come again after the ack wait
                tracing::error!(partition = self.partition, %error, "a batch's settling task failed");
                return;
            }
        };
        if !self.failures.is_empty() {
            for id in &settled.done {
                self.failures.remove(id);
                self.excused.remove(id);
            }
        }
        for (delivery, error) in settled.failed {
            self.failed(delivery, error).await;
        }
    }

    /// On a networked store, the rows the batch's events read (`orders::reads_ahead`), read here
    /// together (one round trip per 256 rows) before the actors handle the events one by one: an
    /// actor's turn then waits for no read of its own. One entry per delivery (none on the
    /// embedded store, or when the read failed: each actor then reads what it needs itself).
    async fn read_ahead(&self, batch: &[Delivery]) -> Vec<Option<ReadAhead>> {
        let Some(engine) = self.engine.upgrade() else { return Vec::new() };
        if engine.ctx.repo.store().local_reads() {
            return Vec::new();
        }
        let wanted: Vec<Vec<crate::keys::Key>> = batch
            .iter()
            .map(|delivery| match delivery.refused {
                Some(_) => Vec::new(),
                None => crate::capabilities::orders::reads_ahead(
                    &delivery.envelope.tenant,
                    &engine.reactions,
                    &delivery.envelope,
                ),
            })
            .collect();
        let mut all: Vec<crate::keys::Key> = wanted.iter().flatten().cloned().collect();
        if all.is_empty() {
            return Vec::new();
        }
        let mut seen = std::collections::HashSet::with_capacity(all.len());
        all.retain(|key| seen.insert(key.clone()));
        match ReadAhead::read(&engine.ctx.repo, &engine.ctx.stamps, all).await {
            Ok(read) => read.split(&wanted),
            Err(error) => {
                tracing::debug!(partition = self.partition, %error, "a batch's rows were not read ahead: each actor reads its own");
                Vec::new()
            }
        }
    }

    /// A supervisor that failed is replaced before the next batch is routed.
    async fn keep_supervisor(&mut self) {
        if matches!(self.supervisor.get_status(), ractor::ActorStatus::Running | ractor::ActorStatus::Starting) {
            return;
        }
        let Some(engine) = self.engine.upgrade() else { return };
        if let Some(supervisor) = engine.respawn_supervisor(self.partition).await {
            self.supervisor = supervisor;
        }
    }

    /// A delivery failed: it comes again after a growing delay, or, on its last allowed delivery,
    /// it is parked and leaves the queue.
    async fn failed(&mut self, delivery: Delivery, error: ApplyError) {
        let partition = self.partition;
        let envelope = delivery.envelope.clone();
        let now = chrono::Utc::now();
        let first = *self.failures.entry(envelope.id.clone()).or_insert(now);
        let excused = self.excused.entry(envelope.id.clone()).or_insert(0);
        if matches!(error, ApplyError::Behind(_)) && *excused < MOST_EXCUSED {
            *excused += 1;
        }
        let counted = delivery.attempt.saturating_sub(*excused);
        let error = error.to_string();
        if counted < self.max_deliveries {
            metrics::counter!("engage_events_retried_total").increment(1);
            tracing::warn!(
                partition, tenant = %envelope.tenant, event_id = %envelope.id, trace_id = %envelope.trace_id,
                attempt = delivery.attempt, counted, max = self.max_deliveries, %error, "event failed; it comes again"
            );
            let delay = retry_delay(counted.max(1));
            delivery.nak(delay).await;
            return;
        }
        self.park_since(delivery, error, first).await;
    }

    /// Parks a delivery that must not be applied at all (see [`crate::domain::bounds`]).
    async fn park(&mut self, delivery: Delivery, reason: String) {
        metrics::counter!("engage_events_refused_total").increment(1);
        self.park_since(delivery, reason, chrono::Utc::now()).await;
    }

    /// Parks a delivery whose first failure was at `first`, and takes it off the queue.
    async fn park_since(&mut self, delivery: Delivery, error: String, first: chrono::DateTime<chrono::Utc>) {
        let partition = self.partition;
        let envelope = delivery.envelope.clone();
        let now = chrono::Utc::now();
        let letter = engage_streams::DeadLetter {
            envelope: envelope.as_ref().clone(),
            error: error.clone(),
            attempts: delivery.attempt,
            first_failure: first.to_rfc3339(),
            last_failure: now.to_rfc3339(),
            partition,
            position: Some(delivery.rank()),
            unreplayable: None,
        };
        match self.bus.park(&letter).await {
            Ok(()) => {
                self.failures.remove(&envelope.id);
                self.excused.remove(&envelope.id);
                metrics::counter!("engage_events_parked_total", "partition" => partition.to_string()).increment(1);
                metrics::gauge!("engage_dead_letters").increment(1.0);
                tracing::warn!(
                    partition, tenant = %envelope.tenant, event_id = %envelope.id, trace_id = %envelope.trace_id,
                    attempts = delivery.attempt, %error,
                    "event parked in the dead-letter place after its last failed delivery (engage dead-letters show|replay|drop)"
                );
                if let Err(error) = delivery.term().await {
                    tracing::warn!(partition, event_id = %envelope.id, %error, "a parked event could not leave the queue; it comes again and is parked again");
                }
            }
            Err(park_error) => {
                tracing::error!(partition, event_id = %envelope.id, %park_error, "cannot park a failed event; it comes again");
                delivery.nak(MAX_RETRY_DELAY).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A partition supervisor that died is replaced before the partition's next batch: the
    /// order is processed and questions reach the new supervisor.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_partition_whose_supervisor_died_gets_a_new_one_and_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn engage_storage::Store> = Arc::new(engage_storage::EmbeddedStore::open(dir.path()).unwrap());
        let bus: Arc<dyn Bus> = Arc::new(engage_streams::bus::EmbeddedBus::new(store.clone(), 1));
        let config = EngineConfig {
            partitions: 1,
            passivate_after: Duration::from_secs(60),
            fault_panic_order_id: None,
            fault_poison_order_id: None,
            max_deliveries: 5,
            services: Default::default(),
            cached_customers_max: crate::customer_cache::NODE_CACHED_CUSTOMERS_MAX,
        };
        let engine = Engine::new(store, bus.clone(), None, config);
        engine.set_owned(&BTreeSet::from([0])).await;
        let first = engine.supervisors.read().unwrap().get(&0).cloned().unwrap();
        first.kill();
        while matches!(first.get_status(), ractor::ActorStatus::Running) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let payload = serde_json::json!({"parentBusinessId": "brand-s", "businessId": "o1", "orderId": "1",
            "customer": {"phone": "9000000001"}, "amount": 10});
        let order =
            engage_streams::Envelope::new(engage_streams::EventKind::Order, "platform", 1, "brand-s", "t", payload);
        bus.publish(&Arc::new(order)).await.unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let question = crate::capabilities::customers::Details { phone: "9000000001".to_owned() };
            if let Ok(view) = engine.ask("brand-s", question, Duration::from_secs(1)).await {
                if view.total_orders == 1 {
                    break;
                }
            }
            assert!(std::time::Instant::now() < deadline, "the partition never went on");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let now = engine.supervisors.read().unwrap().get(&0).cloned().unwrap();
        assert_ne!(now.get_id(), first.get_id(), "a new supervisor took its place");
        engine.shutdown().await;
    }

    #[test]
    fn retries_wait_longer_each_time_up_to_a_bound() {
        assert_eq!(retry_delay(1), Duration::from_millis(500));
        assert_eq!(retry_delay(2), Duration::from_secs(1));
        assert_eq!(retry_delay(4), Duration::from_secs(4));
        assert_eq!(retry_delay(9), MAX_RETRY_DELAY);
        assert_eq!(retry_delay(u32::MAX), MAX_RETRY_DELAY);
    }
}
