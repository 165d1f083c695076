//! engage: wiring of the crates into one application.
//!
//! # Layout
//! - [`Application`]: builds the store, the log sink, auth and the router from [`Settings`],
//!   binds the listener, and runs until a shutdown signal, then drains and flushes.
//! - `main.rs`: the `engage` command line (`engage serve`).
//!
//! The crates: `engage-config` (settings), `engage-storage` (store, log sinks), `engage-streams`
//! (bus), `engage-actors` (domain and actors), `engage-ingress` (HTTP).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use engage_config::{LogFormat, LogSinkKind, Settings};
use engage_ingress::auth::jwks::{JwksOptions, JwksVerifier};
use engage_ingress::rate_limit::{CallerLimiter, PRUNE_EVERY};
use engage_ingress::AppState;
use engage_storage::logs::cloudwatch::CloudWatchBackend;
use engage_storage::logs::embedded::EmbeddedLogBackend;
use engage_storage::logs::{LogBackend, LogWriter, WriterConfig};
use engage_storage::{EmbeddedStore, Store};

/// A built, bound, not yet running server.
pub struct Application {
    listener: TcpListener,
    state: AppState,
    store: EmbeddedStore,
    writer_task: JoinHandle<()>,
    grace: Duration,
}

impl Application {
    /// Opens the store, connects the sink, fetches the JWKS (best effort) and binds
    /// `settings.http_addr` (port 0 picks a free port).
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        let store = EmbeddedStore::open(&settings.data_dir)
            .with_context(|| format!("cannot open the embedded store in {}", settings.data_dir.display()))?;
        let shared_store: Arc<dyn Store> = Arc::new(store.clone());
        let backend: Arc<dyn LogBackend> = match settings.log_sink {
            LogSinkKind::Embedded => Arc::new(EmbeddedLogBackend::new(shared_store.clone())),
            LogSinkKind::Cloudwatch => Arc::new(
                CloudWatchBackend::connect(
                    settings.cloudwatch_endpoint.as_deref(),
                    Duration::from_millis(settings.cloudwatch_deadline_ms),
                )
                .await,
            ),
        };
        let (writer, writer_task) = LogWriter::spawn(backend, WriterConfig::default());

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

        let listener = TcpListener::bind(settings.http_addr)
            .await
            .with_context(|| format!("cannot bind ENGAGE_HTTP_ADDR {}", settings.http_addr))?;
        let grace = Duration::from_secs(settings.shutdown_grace_secs);
        let state = AppState::new(settings, writer, shared_store, jwt, limiter).map_err(anyhow::Error::msg)?;
        Ok(Self { listener, state, store, writer_task, grace })
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.listener.local_addr().map(|a| a.port()).unwrap_or_default()
    }

    /// Serves until `shutdown` completes; then stops accepting, waits for in-flight requests
    /// (at most the grace period), flushes the log sink and persists the store.
    pub async fn run_until(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let Self { listener, state, store, writer_task, grace } = self;
        let addr = listener.local_addr()?;
        tracing::info!(%addr, sink = state.writer.backend_name(), "engage is serving");
        let app = engage_ingress::router(state.clone());
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
        // Every handle of the writer lives in the state: dropping ours lets the worker finish.
        drop(state);
        if tokio::time::timeout(grace, writer_task).await.is_err() {
            tracing::warn!("log sink did not finish flushing within the grace period");
        }
        store.persist().context("cannot persist the embedded store")?;
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
