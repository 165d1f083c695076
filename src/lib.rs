//! engage: wiring of the crates into one application.
//!
//! # Layout
//! - [`Application`]: builds the store, the log sink, auth and the router from [`Settings`],
//!   binds the listener, and runs until a shutdown signal, then drains and flushes.
//! - `main.rs`: the `engage` command line (`engage serve`).
//!
//! The crates: `engage-config` (settings), `engage-storage` (store, log sinks), `engage-streams`
//! (bus), `engage-actors` (domain and actors), `engage-ingress` (HTTP).

mod data_dir;
mod listener;
mod nats_link;
mod partition_change;
mod readiness_watch;

pub use data_dir::*;
use listener::{Closing, DrainingListener};
pub use nats_link::cli_jetstream;
use nats_link::*;
pub use partition_change::{data_dir_partition_count, set_partition_count};
use readiness_watch::*;

use std::collections::BTreeSet;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use engage_actors::{Engine, EngineConfig, TenantGateway};
pub use engage_config::{LogFormat, LogSinkKind, Role, Settings, StoreKind};
use engage_ingress::auth::jwks::{JwksOptions, JwksVerifier};
use engage_ingress::platform::edge::{schemas::PlatformSchemas, tokens::TokenStore};
use engage_ingress::platform::PlatformState;
use engage_ingress::rate_limit::{CallerLimiter, PRUNE_EVERY};
use engage_ingress::readiness::{Phase, Readiness};
use engage_ingress::{AppState, LogReads, Serve};
use engage_storage::logs::cloudwatch::CloudWatchBackend;
use engage_storage::logs::disk::DiskGuard;
use engage_storage::logs::embedded::{EmbeddedLogBackend, EmbeddedLogs};
use engage_storage::logs::segments::{spawn_expiry, SegmentLog};
use engage_storage::logs::tail::LogTail;
use engage_storage::logs::{LogBackend, LogWriter, WriterConfig};
use engage_storage::{EmbeddedStore, NatsKvStore, ScyllaStore, Store};
use engage_streams::bus::partition_count::{self, Settled};
use engage_streams::bus::{EmbeddedBus, JetStreamBus};
use engage_streams::lease::{lease_bucket, spawn_lease_keeper};
use engage_streams::Bus;

/// The JetStream KV bucket of the `nats` store backend.
pub const STORE_BUCKET: &str = "engage_store";

/// Partition ownership of this process.
struct Ownership {
    /// Stops the lease keeper (distributed mode).
    stop_leases: Option<watch::Sender<bool>>,
    /// The lease keeper (releases leases when it stops).
    lease_task: Option<JoinHandle<()>>,
    /// Applies ownership changes to the engine.
    sync_task: Option<JoinHandle<()>>,
    /// Stops the job scheduler.
    stop_jobs: Option<watch::Sender<bool>>,
    /// The scheduler's timers.
    job_tasks: Vec<JoinHandle<()>>,
}

/// A built, bound, not yet running server.
pub struct Application {
    listener: TcpListener,
    state: AppState,
    /// The embedded store in the data dir, when this process opened one.
    log_store: Option<EmbeddedStore>,
    writer_task: JoinHandle<()>,
    grace: Duration,
    engine: Option<Arc<Engine>>,
    ownership: Ownership,
    serve: Serve,
}

/// A process that has bound its listener and, while it connects to its dependencies, answers
/// `/healthz`, `/readyz` (503 `starting`, with what it waits for) and `/metrics`.
pub struct Startup {
    listener: TcpListener,
    readiness: Arc<Readiness>,
    /// Closes the interim server's listener; its task (kept a while after, for the connections
    /// it accepted to finish).
    interim: Option<(Closing, JoinHandle<()>)>,
}

/// How long the interim server's connections have to finish after the real server took over
/// (each of its answers closes its connection, so they finish as soon as they are answered).
const INTERIM_LINGER: Duration = Duration::from_secs(10);

impl Startup {
    /// Installs the metrics recorder (before anything records), binds `settings.http_addr` (port 0
    /// picks a free port) and starts the interim server on it.
    pub async fn bind(settings: &Settings) -> anyhow::Result<Self> {
        engage_ingress::telemetry::prometheus();
        let listener = TcpListener::bind(settings.http_addr)
            .await
            .with_context(|| format!("cannot bind ENGAGE_HTTP_ADDR {}", settings.http_addr))?;
        let readiness = Arc::new(Readiness::new(Phase::Starting));
        // Two handles on one listening socket: the interim server accepts on one until the real
        // server takes over on the other; connections arriving in between wait in the backlog.
        let socket = listener.into_std().context("cannot take the listener")?;
        let interim_listener = TcpListener::from_std(socket.try_clone().context("cannot share the listener")?)?;
        let listener = TcpListener::from_std(socket)?;
        let (interim_listener, closing) = DrainingListener::new(interim_listener);
        let app = engage_ingress::ops::starting_router(readiness.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(interim_listener, app).await;
        });
        Ok(Self { listener, readiness, interim: Some((closing, task)) })
    }

    /// Hands over to the real server: the interim one stops accepting (the real one accepts on
    /// the same socket), and the connections it accepted are answered and closed by themselves
    /// (never shut down mid-request, which would reset one whose request was not read yet).
    async fn stop_interim(&mut self) {
        if let Some((mut closing, task)) = self.interim.take() {
            closing.close(Duration::from_secs(2)).await;
            tokio::spawn(async move {
                tokio::time::sleep(INTERIM_LINGER).await;
                task.abort();
            });
        }
    }
}

impl Application {
    /// Binds `settings.http_addr` (port 0 picks a free port), opens the stores, connects the sink
    /// and the bus (retrying NATS and ScyllaDB up to `connect_timeout_secs`), starts the engine
    /// (roles `all` and `node`) and fetches the JWKS.
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        let startup = Startup::bind(&settings).await?;
        Self::build_from(startup, settings).await
    }

    /// [`Application::build`] on a process already bound by [`Startup::bind`].
    pub async fn build_from(mut startup: Startup, mut settings: Settings) -> anyhow::Result<Self> {
        let readiness = startup.readiness.clone();
        let connect_timeout = Duration::from_secs(settings.connect_timeout_secs);
        let local_store = if needs_data_dir(&settings) { Some(open_data_dir(&settings)?) } else { None };

        // NATS, the platform store and the bus
        let replicas = settings.nats_replicas()?;
        let nats = match &settings.nats_url {
            Some(url) => {
                let target = format!("ENGAGE_NATS_URL={}", engage_config::redact_url(url));
                let servers = engage_config::nats_servers(url);
                Some(
                    with_retry("nats", &target, Some(url), connect_timeout, &readiness, || {
                        nats_options(readiness.clone()).connect(servers.clone())
                    })
                    .await?,
                )
            }
            None => None,
        };
        let jetstream = nats.clone().map(jetstream_context);

        let platform_store: Arc<dyn Store> = match (settings.store_kind(), &jetstream, &local_store) {
            (StoreKind::Embedded, _, Some(local)) => Arc::new(local.clone()),
            (StoreKind::Embedded, _, None) => anyhow::bail!("the embedded store was not opened"),
            (StoreKind::Nats, Some(js), _) => {
                // a cluster that has just started may not have elected its JetStream leader yet
                let target = format!("the NATS KV bucket {STORE_BUCKET}");
                let copies = replicas.of(&format!("KV_{STORE_BUCKET}"));
                Arc::new(
                    with_retry("nats", &target, None, connect_timeout, &readiness, || {
                        NatsKvStore::open(js, STORE_BUCKET, copies)
                    })
                    .await
                    .context("cannot open the NATS KV store")?,
                )
            }
            (StoreKind::Nats, None, _) => anyhow::bail!("ENGAGE_STORE=nats needs ENGAGE_NATS_URL"),
            (StoreKind::Scylla, _, _) => {
                let nodes = settings.scylla_nodes.as_deref().unwrap_or_default();
                let target = format!("ENGAGE_SCYLLA_NODES={nodes}");
                let options = scylla_options(&settings);
                Arc::new(
                    with_retry("scylla", &target, None, connect_timeout, &readiness, || {
                        ScyllaStore::connect(nodes, &settings.scylla_keyspace, &options)
                    })
                    .await?,
                )
            }
        };
        watch_failure(&platform_store, "store", readiness.clone(), |store| {
            store.healthy().err().map(|e| e.to_string())
        });
        // the log sink: the embedded one appends to the data dir's segment log, which only a
        // process serving the log routes opens; rows older versions kept in the store are read
        // back beside it
        let retention = settings.log_retention()?;
        let log_segments = match &local_store {
            Some(_) if serves_embedded_logs(&settings) => {
                let dir = settings.data_dir.join("logs");
                Some(Arc::new(
                    SegmentLog::open_with(&dir, settings.log_segment_bytes)
                        .with_context(|| format!("cannot open the log segments in {}", dir.display()))?,
                ))
            }
            _ => None,
        };
        // the embedded log's retention and disk guard (issue 44)
        let mut disk = None;
        if let Some(segments) = &log_segments {
            watch_failure(segments, "log_segments", readiness.clone(), SegmentLog::failure);
            let every = Duration::from_secs(settings.log_expiry_interval_secs);
            spawn_expiry(segments.clone(), retention.clone(), every);
            let guard = Arc::new(DiskGuard::new(&settings.data_dir.join("logs"), settings.log_min_free_bytes));
            watch_disk(guard.clone(), readiness.clone());
            disk = Some(guard);
        }
        let logs = EmbeddedLogs {
            segments: log_segments.clone(),
            legacy: match &local_store {
                Some(local) => Arc::new(local.clone()),
                None => platform_store.clone(),
            },
        };
        let (backend, writer_config, tail): (Arc<dyn LogBackend>, WriterConfig, LogTail) = match settings.log_sink {
            LogSinkKind::Embedded => (
                Arc::new(EmbeddedLogBackend::new(log_segments.clone()).with_retention(retention.clone())),
                WriterConfig::embedded(),
                LogTail::Embedded(log_segments),
            ),
            LogSinkKind::Cloudwatch => {
                let backend = Arc::new(
                    CloudWatchBackend::connect(
                        settings.cloudwatch_endpoint.as_deref(),
                        Duration::from_millis(settings.cloudwatch_deadline_ms),
                    )
                    .await
                    .with_retention(retention.clone(), settings.log_retention_reconcile),
                );
                if settings.role != Role::Node {
                    watch_cloudwatch(backend.clone(), readiness.clone());
                }
                let poll = Duration::from_millis(settings.cloudwatch_tail_poll_ms);
                (backend.clone(), WriterConfig::cloudwatch(), LogTail::CloudWatch { backend, poll })
            }
        };
        let (writer, writer_task) = LogWriter::spawn(backend, writer_config);
        let lease = Duration::from_secs(settings.partition_lease_secs);
        let jetstream_bus = match &jetstream {
            Some(js) => {
                let bus = with_retry("nats", "the JetStream streams", None, connect_timeout, &readiness, || {
                    JetStreamBus::connect(
                        js.clone(),
                        settings.partitions,
                        Duration::from_secs(settings.stream_retention_hours * 3600),
                        lease,
                        &replicas,
                    )
                })
                .await
                .context("cannot set up the JetStream streams")?;
                let (configured, given) = (settings.partitions, settings.partitions_given);
                let target = "the orders stream's partition count";
                let settled = with_retry("nats", target, None, connect_timeout, &readiness, || {
                    partition_count::settle(js, configured, given)
                })
                .await?;
                settings.partitions = settled_partitions(settled, configured, "this NATS cluster")?;
                Some(Arc::new(bus.with_partitions(settings.partitions)))
            }
            None => None,
        };
        if let Some(js) = jetstream.as_ref().filter(|_| jetstream_bus.is_some()) {
            watch_bus(js.clone(), settings.store_kind() == StoreKind::Nats, readiness.clone());
        }
        let bus: Arc<dyn Bus> = match &jetstream_bus {
            Some(bus) => bus.clone(),
            None => {
                let (configured, given) = (settings.partitions, settings.partitions_given);
                let settled = partition_count::settle_in_store(&*platform_store, configured, given)
                    .await
                    .context("cannot read the data dir's partition count")?;
                settings.partitions = settled_partitions(settled, configured, "this data dir")?;
                Arc::new(EmbeddedBus::new(platform_store.clone(), settings.partitions))
            }
        };
        #[cfg(not(feature = "fault-injection"))]
        if settings.fault_panic_order_id.is_some() || settings.fault_poison_order_id.is_some() {
            tracing::warn!("ENGAGE_FAULT_PANIC_ORDER_ID and ENGAGE_FAULT_POISON_ORDER_ID are ignored: this build has no fault-injection feature");
        }
        let link_secret = engage_actors::signed_links::secret(
            platform_store.clone(),
            settings.link_secret.as_ref().map(|s| s.expose()),
        )
        .await
        .map_err(|e| anyhow::anyhow!("cannot read or keep the link-signing secret: {e}"))?;
        let links = engage_actors::signed_links::Links::new(&link_secret, &settings.public_base_url());
        // the engine and partition ownership
        let engine = (settings.role != Role::Ingress).then(|| {
            Engine::new(
                platform_store.clone(),
                bus.clone(),
                nats.clone(),
                EngineConfig {
                    partitions: settings.partitions,
                    passivate_after: Duration::from_secs(settings.passivate_after_secs),
                    fault_panic_order_id: settings.fault_panic_order_id.clone(),
                    fault_poison_order_id: settings.fault_poison_order_id.clone(),
                    max_deliveries: settings.max_deliveries,
                    services: engage_actors::Services::new(links.clone(), settings.link_service_url.clone())
                        .with_feedback_service(settings.feedback_service_url.clone())
                        .with_mail_service(settings.mail_service_url.clone()),
                    cached_customers_max: usize::try_from(settings.cached_customers_max).unwrap_or(usize::MAX),
                },
            )
        });
        let job_claims = match &jetstream {
            Some(js) if engine.is_some() => Some(
                lease_bucket(js, lease, replicas.of(&format!("KV_{}", engage_streams::lease::LEASE_BUCKET)))
                    .await
                    .map_err(anyhow::Error::msg)
                    .context("cannot open the lease bucket")?,
            ),
            _ => None,
        };
        let mut ownership =
            Ownership { stop_leases: None, lease_task: None, sync_task: None, stop_jobs: None, job_tasks: Vec::new() };
        if let Some(engine) = &engine {
            // the bucket the job claims use (opened once: it is there exactly when the engine runs
            // on NATS)
            match &job_claims {
                Some(bucket) => {
                    let bucket = bucket.clone();
                    let (stop, stop_rx) = watch::channel(false);
                    let node = settings.node_id();
                    tracing::debug!(node, partitions = settings.partitions, "leasing partitions");
                    let (mut owned, lease_task) =
                        spawn_lease_keeper(bucket, node, settings.partitions, lease, stop_rx, engine.running());
                    let engine = engine.clone();
                    // ready once this node processes a partition, or a lease after it started (a
                    // cluster with more nodes than partitions leaves some with none): a new node
                    // is not ready while it holds nothing (docs/operations.md, "Readiness")
                    let readiness = startup.readiness.clone();
                    readiness.set_problem("partitions", Some(JOINING.to_owned()));
                    let joined_by = tokio::time::Instant::now() + lease;
                    let sync_task = tokio::spawn(async move {
                        let mut joined = false;
                        loop {
                            let current = owned.borrow_and_update().clone();
                            engine.set_owned(&current).await;
                            if !joined && !current.is_empty() {
                                joined = true;
                                readiness.set_problem("partitions", None);
                            }
                            let changed = tokio::select! {
                                changed = owned.changed() => changed,
                                () = tokio::time::sleep_until(joined_by), if !joined => {
                                    joined = true;
                                    readiness.set_problem("partitions", None);
                                    continue;
                                }
                            };
                            if changed.is_err() {
                                break;
                            }
                        }
                    });
                    ownership.stop_leases = Some(stop);
                    ownership.lease_task = Some(lease_task);
                    ownership.sync_task = Some(sync_task);
                }
                None => engine.set_owned(&(0..settings.partitions).collect::<BTreeSet<u32>>()).await,
            }
        }

        // actor nodes serve no log routes: no verifier, no warning about open ingestion
        let jwt = match (&settings.jwks_url, settings.role) {
            (_, Role::Node) => None,
            (Some(url), _) => {
                let verifier = Arc::new(
                    JwksVerifier::new(JwksOptions {
                        url: url.clone(),
                        issuer: settings.jwt_issuer.clone(),
                        audience: settings.jwt_audience.clone(),
                        refresh_after: Duration::from_secs(settings.jwks_refresh_secs),
                        min_refetch: Duration::from_secs(settings.jwks_min_refetch_secs),
                    })
                    .map_err(anyhow::Error::msg)?,
                );
                let first = verifier.refresh().await;
                watch_jwks(verifier.clone(), first, readiness.clone());
                Some(verifier)
            }
            (None, _) => {
                tracing::warn!(
                    "ENGAGE_JWKS_URL is not set: log ingestion is open to anyone who can reach {}",
                    settings.http_addr
                );
                None
            }
        };
        let limiter =
            settings.rate_limit_per_second.map(|rate| Arc::new(CallerLimiter::new(rate, settings.rate_limit_burst)));
        // the open routes' own limit: bursts of twice the rate
        let open_limiter = std::num::NonZeroU32::new(settings.open_routes_rate_limit).map(|rate| {
            Arc::new(CallerLimiter::new(rate, rate.checked_mul(std::num::NonZeroU32::MIN.saturating_add(1))))
        });
        for limiter in limiter.iter().chain(open_limiter.iter()) {
            let limiter = Arc::downgrade(limiter);
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(PRUNE_EVERY);
                loop {
                    tick.tick().await;
                    let Some(limiter) = limiter.upgrade() else { break };
                    limiter.prune();
                }
            });
        }
        let jobs = engine.as_ref().map(|engine| {
            engage_actors::jobs::Jobs::new(
                platform_store.clone(),
                TenantGateway::new(Some(engine.clone()), nats.clone(), settings.partitions),
                engage_actors::jobs::Providers {
                    sms: settings.sms_provider_url.clone(),
                    chat: settings.chat_provider_url.clone(),
                    push: settings.push_provider_url.clone(),
                    token: settings.provider_token.as_ref().map(|t| t.expose().to_owned()),
                    links: Some(links.clone()),
                    mail: settings.mail_service_url.clone(),
                    reports_dir: settings.data_dir.join("reports"),
                    store_a: engage_actors::reviews::StoreClient {
                        url: settings.store_a_url.clone(),
                        token: settings.store_a_token.as_ref().map(|t| t.expose().to_owned()),
                    },
                    store_b: engage_actors::reviews::StoreClient {
                        url: settings.store_b_url.clone(),
                        token: settings.store_b_token.as_ref().map(|t| t.expose().to_owned()),
                    },
                },
                settings
                    .job_crons()
                    .into_iter()
                    .filter_map(|(name, cron)| {
                        engage_actors::jobs::JobName::parse(name).map(|job| (job, cron.to_owned()))
                    })
                    .collect(),
                job_claims.clone(),
                settings.node_id(),
            )
        });
        let (stop_jobs, stop_jobs_rx) = watch::channel(false);
        let mut job_tasks = jobs.clone().map(|jobs| jobs.spawn_scheduler(stop_jobs_rx.clone())).unwrap_or_default();
        // the chat topics' consumers run where the engine runs (embedded: on publish)
        if let (Some(bus), Some(_)) = (&jetstream_bus, &engine) {
            job_tasks.extend(bus.spawn_chat_consumers(stop_jobs_rx).await.context("cannot set up the chat consumers")?);
        }
        let platform = PlatformState {
            bus,
            gateway: TenantGateway::new(
                engine.clone().map(|engine| engine as Arc<dyn engage_actors::rpc::LocalTenants>),
                nats.clone(),
                settings.partitions,
            ),
            tokens: TokenStore::cached(platform_store.clone()),
            directory: engage_actors::directory::Directory::new(platform_store),
            schemas: PlatformSchemas::compile().map_err(anyhow::Error::msg)?,
            // the loopback admin routes are served where the HTTP routes are (not on nodes)
            admin_key: if settings.role == Role::Node { String::new() } else { admin_key(&settings)? },
            jobs,
            links,
            open_routes: engage_ingress::platform::state::OpenRoutes::new(
                settings.open_routes == engage_config::OpenRoutes::Closed,
            ),
            open_limiter,
        };
        if settings.role != Role::Node {
            engage_ingress::platform::edge::access::log_open_routes(&settings);
        }

        startup.stop_interim().await;
        let grace = Duration::from_secs(settings.shutdown_grace_secs);
        ownership.stop_jobs = Some(stop_jobs);
        ownership.job_tasks = job_tasks;
        let serve = if settings.role == Role::Node { Serve::OpsOnly } else { Serve::All };
        let state = AppState::new(
            settings,
            writer,
            LogReads { logs, tail, disk, retention },
            jwt,
            limiter,
            platform,
            readiness,
            engage_ingress::served().map_err(anyhow::Error::msg)?,
        );
        let Startup { listener, .. } = startup;
        Ok(Self { listener, state, log_store: local_store, writer_task, grace, engine, ownership, serve })
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.listener.local_addr().map(|a| a.port()).unwrap_or_default()
    }

    /// Serves until `shutdown` completes; then stops accepting, waits for in-flight requests
    /// (at most the grace period), stops the engine after its current batches, releases the
    /// partition leases, flushes the log sink and persists the store.
    pub async fn run_until(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let Self { listener, state, log_store, writer_task, grace, engine, ownership, serve } = self;
        let addr = listener.local_addr()?;
        let app = engage_ingress::router(state.clone(), serve);
        state.readiness.set_phase(Phase::Serving);
        let settings = &state.settings;
        // the one start-up line: what this process is and what it talks to
        tracing::info!(
            %addr,
            role = ?settings.role,
            sink = state.writer.backend_name(),
            store = ?settings.store_kind(),
            bus = if settings.nats_url.is_some() { "jetstream" } else { "embedded" },
            nats = settings.nats_url.as_deref().map(engage_config::redact_url).unwrap_or_else(|| "-".to_owned()),
            data_dir = %if log_store.is_some() { settings.data_dir.display().to_string() } else { "-".to_owned() },
            node = %if engine.is_some() { settings.node_id() } else { "-".to_owned() },
            partitions = settings.partitions,
            "engage is serving"
        );
        let (stopping_tx, stopping_rx) = tokio::sync::watch::channel(false);
        let ready_state = state.clone();
        let drain = Duration::from_secs(settings.shutdown_drain_secs);
        // docs/operations.md, "Stopping and restarting": first /readyz says 503 shutting_down
        // while every route still serves (the drain), each answer closing its connection so no
        // client keeps one the process is about to close; then the listener closes and the
        // requests in flight finish (at most the grace period)
        let (listener, mut closing) = DrainingListener::new(listener);
        let activity = listener::Activity::new();
        let activity_now = activity.clone();
        let signal = async move {
            shutdown.await;
            ready_state.readiness.set_phase(Phase::ShuttingDown);
            tracing::info!(?drain, "shutdown requested: /readyz says shutting_down; serving on for the drain");
            tokio::time::sleep(drain).await;
            // the connections the kernel queued are taken and answered, then the socket closes
            closing.close(Duration::from_secs(2)).await;
            // those last connections' requests are read and answered (a connection shut down
            // before its request is read would be reset)
            // (ENGAGE_SHUTDOWN_DRAIN_SECS=0: a stop at once, as the tests' in-process servers do)
            if !drain.is_zero() {
                activity_now.quiet(QUIET, QUIET_AT_MOST).await;
            }
            tracing::info!("drain over: no new connections; finishing the requests in flight");
            let _ = stopping_tx.send(true);
        };
        let app = app
            .layer(axum::middleware::map_response_with_state(state.readiness.clone(), close_when_stopping))
            .layer(axum::middleware::from_fn_with_state(activity, listener::track));
        let server = axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |_| {}),
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(signal);
        let mut stopping = stopping_rx;
        let bounded = async move {
            let _ = stopping.wait_for(|s| *s).await;
            tokio::time::sleep(grace).await;
        };
        tokio::select! {
            result = server => result.context("HTTP server failed")?,
            () = bounded => tracing::warn!(?grace, "grace period over; dropping requests still in flight"),
        }
        if let Some(task) = ownership.sync_task {
            task.abort();
        }
        if let Some(stop) = ownership.stop_jobs {
            let _ = stop.send(true);
        }
        for task in ownership.job_tasks {
            let _ = task.await;
        }
        if let Some(engine) = &engine {
            engine.shutdown().await;
        }
        if let Some(stop) = ownership.stop_leases {
            let _ = stop.send(true);
        }
        if let Some(task) = ownership.lease_task {
            let _ = tokio::time::timeout(grace, task).await;
        }
        if let Some(engine) = &engine {
            // requests NATS routed here meanwhile are answered ("not owned here": asked again)
            let _ = tokio::time::timeout(grace, engine.rpc_ended()).await;
        }
        // Every handle of the writer lives in the state: dropping ours lets the worker finish.
        drop(state);
        if tokio::time::timeout(grace, writer_task).await.is_err() {
            tracing::warn!("log sink did not finish flushing within the grace period");
        }
        if let Some(store) = &log_store {
            store.persist().context("cannot persist the embedded store")?;
        }
        tracing::info!("engage stopped");
        Ok(())
    }
}

/// Once shutdown began, every answer closes its connection (`Connection: close`): a client then
/// opens a new one for its next request rather than sending it on a connection the process is
/// about to close, which would be reset.
async fn close_when_stopping(
    axum::extract::State(readiness): axum::extract::State<Arc<Readiness>>,
    mut response: axum::response::Response,
) -> axum::response::Response {
    if readiness.phase() == Phase::ShuttingDown {
        response.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
    }
    response
}

/// After its listener closed, a stopping server shuts its connections down once no request is
/// under way and none started for this long (the last connections taken have sent theirs), or
/// after [`QUIET_AT_MOST`] (see [`Application::run_until`]).
const QUIET: Duration = Duration::from_secs(1);
const QUIET_AT_MOST: Duration = Duration::from_secs(10);

/// What `/readyz` says of a cluster node that has not processed a partition yet.
const JOINING: &str =
    "joining the cluster: no partition taken yet (ready once it processes one, at most one lease after the start)";

/// Completes on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

/// The partition count this process uses: the one its cluster (or single node's data dir) was
/// made with (`docs/operations.md`, "The partition count a cluster keeps"). A process given
/// another one does not start.
fn settled_partitions(settled: Settled, configured: u32, place: &str) -> anyhow::Result<u32> {
    match settled {
        Settled::Differs { cluster, given } => anyhow::bail!(Settled::refusal(cluster, given, place)),
        Settled::Use(count) => {
            if count != configured {
                tracing::info!(
                    partitions = count,
                    "ENGAGE_PARTITIONS is not set: this process uses the count {place} was made with"
                );
            }
            Ok(count)
        }
    }
}

/// The ScyllaDB options of the settings, with the day-bucketed tables' TTLs.
fn scylla_options(settings: &Settings) -> engage_storage::ScyllaOptions {
    engage_storage::ScyllaOptions {
        replication: settings.scylla_replication,
        replication_factor: settings.scylla_replication_factor,
        read_consistency: settings.scylla_read_consistency,
        write_consistency: settings.scylla_write_consistency,
        ttls: engage_actors::DAY_BUCKET_RETENTION_DAYS
            .iter()
            .map(|(table, days)| (*table, (*days as i32).saturating_mul(86_400)))
            .collect(),
    }
}
