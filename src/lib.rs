//! engage: wiring of the crates into one application.
//!
//! # Layout
//! - [`Application`]: builds the store, the log sink, auth and the router from [`Settings`],
//!   binds the listener, and runs until a shutdown signal, then drains and flushes.
//! - `main.rs`: the `engage` command line (`engage serve`).
//!
//! The crates: `engage-config` (settings), `engage-storage` (store, log sinks), `engage-streams`
//! (bus), `engage-actors` (domain and actors), `engage-ingress` (HTTP).

use std::collections::BTreeSet;
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use engage_actors::repo::Repo;
use engage_actors::{Engine, EngineConfig, TenantGateway};
pub use engage_config::{LogFormat, LogSinkKind, Role, Settings, StoreKind};
use engage_ingress::auth::jwks::{JwksOptions, JwksVerifier};
use engage_ingress::platform::{schemas::PlatformSchemas, tokens::TokenStore, PlatformState};
use engage_ingress::rate_limit::{CallerLimiter, PRUNE_EVERY};
use engage_ingress::{AppState, Serve};
use engage_storage::logs::cloudwatch::CloudWatchBackend;
use engage_storage::logs::embedded::EmbeddedLogBackend;
use engage_storage::logs::{LogBackend, LogWriter, WriterConfig};
use engage_storage::{EmbeddedStore, NatsKvStore, ScyllaStore, Store};
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
    log_store: EmbeddedStore,
    writer_task: JoinHandle<()>,
    grace: Duration,
    engine: Option<Arc<Engine>>,
    ownership: Ownership,
    serve: Serve,
}

/// Reads `<data_dir>/admin.key`, creating it (mode 0600) with a random key when missing.
pub fn admin_key(settings: &Settings) -> anyhow::Result<String> {
    if let Some(key) = &settings.admin_key {
        return Ok(key.expose().to_owned());
    }
    let path = settings.data_dir.join("admin.key");
    if let Ok(key) = std::fs::read_to_string(&path) {
        return Ok(key.trim().to_owned());
    }
    std::fs::create_dir_all(&settings.data_dir)?;
    let key = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    write_private(&path, &key).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(key)
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(text.as_bytes())
}

impl Application {
    /// Opens the stores, connects the sink and the bus, starts the engine (roles `all` and
    /// `node`), fetches the JWKS (best effort) and binds `settings.http_addr` (port 0 picks a
    /// free port).
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        let log_store = EmbeddedStore::open(&settings.data_dir)
            .with_context(|| format!("cannot open the embedded store in {}", settings.data_dir.display()))?;
        let shared_log_store: Arc<dyn Store> = Arc::new(log_store.clone());
        let backend: Arc<dyn LogBackend> = match settings.log_sink {
            LogSinkKind::Embedded => Arc::new(EmbeddedLogBackend::new(shared_log_store.clone())),
            LogSinkKind::Cloudwatch => Arc::new(
                CloudWatchBackend::connect(
                    settings.cloudwatch_endpoint.as_deref(),
                    Duration::from_millis(settings.cloudwatch_deadline_ms),
                )
                .await,
            ),
        };
        let writer_config = match settings.log_sink {
            LogSinkKind::Embedded => WriterConfig::default(),
            LogSinkKind::Cloudwatch => WriterConfig::cloudwatch(),
        };
        let (writer, writer_task) = LogWriter::spawn(backend, writer_config);

        // NATS, the platform store and the bus
        let nats = match &settings.nats_url {
            Some(url) => Some(
                async_nats::connect(url).await.with_context(|| format!("cannot connect to ENGAGE_NATS_URL {url}"))?,
            ),
            None => None,
        };
        let jetstream = nats.clone().map(async_nats::jetstream::new);
        let platform_store: Arc<dyn Store> = match (settings.store_kind(), &jetstream) {
            (StoreKind::Embedded, _) => shared_log_store.clone(),
            (StoreKind::Nats, Some(js)) => {
                Arc::new(NatsKvStore::open(js, STORE_BUCKET).await.context("cannot open the NATS KV store")?)
            }
            (StoreKind::Nats, None) => anyhow::bail!("ENGAGE_STORE=nats needs ENGAGE_NATS_URL"),
            (StoreKind::Scylla, _) => {
                let nodes = settings.scylla_nodes.as_deref().unwrap_or_default();
                Arc::new(
                    ScyllaStore::connect(nodes, &settings.scylla_keyspace, 3)
                        .await
                        .context("cannot connect to ENGAGE_SCYLLA_NODES")?,
                )
            }
        };
        let lease = Duration::from_secs(settings.partition_lease_secs);
        let jetstream_bus = match &jetstream {
            Some(js) => Some(Arc::new(
                JetStreamBus::connect(
                    js.clone(),
                    settings.partitions,
                    Duration::from_secs(settings.stream_retention_hours * 3600),
                    lease,
                )
                .await
                .context("cannot set up the JetStream streams")?,
            )),
            None => None,
        };
        let bus: Arc<dyn Bus> = match &jetstream_bus {
            Some(bus) => bus.clone(),
            None => Arc::new(EmbeddedBus::new(platform_store.clone(), settings.partitions)),
        };

        #[cfg(not(feature = "fault-injection"))]
        if settings.fault_panic_order_id.is_some() {
            tracing::warn!("ENGAGE_FAULT_PANIC_ORDER_ID is ignored: this build has no fault-injection feature");
        }
        let link_secret = engage_actors::links::secret(
            &Repo::new(platform_store.clone()),
            settings.link_secret.as_ref().map(|s| s.expose()),
        )
        .await
        .map_err(|e| anyhow::anyhow!("cannot read or keep the link-signing secret: {e}"))?;
        let links = engage_actors::links::Links::new(&link_secret, &settings.public_base_url());
        // the engine and partition ownership
        let engine = (settings.role != Role::Ingress).then(|| {
            Engine::new(
                Repo::new(platform_store.clone()),
                bus.clone(),
                nats.clone(),
                EngineConfig {
                    partitions: settings.partitions,
                    passivate_after: Duration::from_secs(settings.passivate_after_secs),
                    fault_panic_order_id: settings.fault_panic_order_id.clone(),
                    services: engage_actors::brand::Services::new(links.clone(), settings.link_service_url.clone())
                        .with_feedback_service(settings.feedback_service_url.clone())
                        .with_mail_service(settings.mail_service_url.clone()),
                },
            )
        });
        let job_claims = match &jetstream {
            Some(js) if engine.is_some() => Some(
                lease_bucket(js, lease).await.map_err(anyhow::Error::msg).context("cannot open the lease bucket")?,
            ),
            _ => None,
        };
        let mut ownership =
            Ownership { stop_leases: None, lease_task: None, sync_task: None, stop_jobs: None, job_tasks: Vec::new() };
        if let Some(engine) = &engine {
            match &jetstream {
                Some(js) => {
                    let bucket = lease_bucket(js, lease)
                        .await
                        .map_err(anyhow::Error::msg)
                        .context("cannot open the lease bucket")?;
                    let (stop, stop_rx) = watch::channel(false);
                    let node = settings.node_id();
                    tracing::info!(node, partitions = settings.partitions, "leasing partitions");
                    let (mut owned, lease_task) = spawn_lease_keeper(bucket, node, settings.partitions, lease, stop_rx);
                    let engine = engine.clone();
                    let sync_task = tokio::spawn(async move {
                        loop {
                            let current = owned.borrow_and_update().clone();
                            engine.set_owned(&current).await;
                            if owned.changed().await.is_err() {
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

        let jwt = match &settings.jwks_url {
            Some(url) => {
                let verifier = JwksVerifier::new(JwksOptions {
                    url: url.clone(),
                    issuer: settings.jwt_issuer.clone(),
                    audience: settings.jwt_audience.clone(),
                    refresh_after: Duration::from_secs(settings.jwks_refresh_secs),
                    min_refetch: Duration::from_secs(settings.jwks_min_refetch_secs),
                })
                .map_err(anyhow::Error::msg)?;
                verifier.refresh().await;
                Some(Arc::new(verifier))
            }
            None => {
                tracing::warn!(
                    "ENGAGE_JWKS_URL is not set: log ingestion is open to anyone who can reach {}",
                    settings.http_addr
                );
                None
            }
        };
        let limiter =
            settings.rate_limit_per_second.map(|rate| Arc::new(CallerLimiter::new(rate, settings.rate_limit_burst)));
        if let Some(limiter) = &limiter {
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
                Repo::new(platform_store.clone()),
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
            tokens: TokenStore::new(platform_store.clone()),
            repo: Repo::new(platform_store),
            schemas: PlatformSchemas::compile().map_err(anyhow::Error::msg)?,
            admin_key: admin_key(&settings)?,
            jobs,
            links,
        };

        let listener = TcpListener::bind(settings.http_addr)
            .await
            .with_context(|| format!("cannot bind ENGAGE_HTTP_ADDR {}", settings.http_addr))?;
        let grace = Duration::from_secs(settings.shutdown_grace_secs);
        ownership.stop_jobs = Some(stop_jobs);
        ownership.job_tasks = job_tasks;
        let serve = if settings.role == Role::Node { Serve::OpsOnly } else { Serve::All };
        let state =
            AppState::new(settings, writer, shared_log_store, jwt, limiter, platform).map_err(anyhow::Error::msg)?;
        Ok(Self { listener, state, log_store, writer_task, grace, engine, ownership, serve })
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
        tracing::info!(%addr, sink = state.writer.backend_name(), role = ?state.settings.role, "engage is serving");
        let app = engage_ingress::router(state.clone(), serve);
        let (stopping_tx, stopping_rx) = tokio::sync::watch::channel(false);
        let ready_state = state.clone();
        let signal = async move {
            shutdown.await;
            tracing::info!("shutdown requested: draining in-flight requests");
            ready_state.ready.store(false, Ordering::Relaxed);
            let _ = stopping_tx.send(true);
        };
        let server = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
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
        // Every handle of the writer lives in the state: dropping ours lets the worker finish.
        drop(state);
        if tokio::time::timeout(grace, writer_task).await.is_err() {
            tracing::warn!("log sink did not finish flushing within the grace period");
        }
        log_store.persist().context("cannot persist the embedded store")?;
        tracing::info!("engage stopped");
        Ok(())
    }
}

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
