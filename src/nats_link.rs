//! The NATS connection as a cluster client: the server list of `ENGAGE_NATS_URL`, quick
//! reconnects to any live server, bounded JetStream requests, and `/readyz` that says when the
//! bus cannot take writes.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{context::ContextBuilder, Context};
use async_nats::{ConnectOptions, Event};
use engage_ingress::readiness::Readiness;

/// Longest wait for one JetStream API request or publish ack. A stream that lost its leader
/// elects another within a few seconds; a request that outlasts this fails (the POST answers 503)
/// instead of holding the caller.
pub(super) const JETSTREAM_TIMEOUT: Duration = Duration::from_secs(5);

/// How often the bus is probed; while it is unusable, [`PROBE_FAILING`].
const PROBE_EVERY: Duration = Duration::from_secs(2);
const PROBE_FAILING: Duration = Duration::from_millis(500);

/// Connection options: reconnects every 250 ms to 2 s (not the client's 4 s cap), and the
/// connection's state on `/readyz` (`nats_connection`) and in the log.
pub(super) fn nats_options(readiness: Arc<Readiness>) -> ConnectOptions {
    ConnectOptions::new()
        .connection_timeout(Duration::from_secs(3))
        .request_timeout(Some(JETSTREAM_TIMEOUT))
        .reconnect_delay_callback(|attempts| Duration::from_millis((attempts as u64 * 250).min(2_000)))
        .event_callback(move |event| {
            let readiness = readiness.clone();
            async move {
                match event {
                    Event::Disconnected => {
                        tracing::warn!("disconnected from NATS; reconnecting to a server of ENGAGE_NATS_URL");
                        readiness.set_problem(
                            "nats_connection",
                            Some("disconnected from NATS; reconnecting to a server of ENGAGE_NATS_URL".to_owned()),
                        );
                    }
                    Event::Connected => {
                        tracing::info!("connected to NATS");
                        readiness.set_problem("nats_connection", None);
                    }
                    Event::LameDuckMode => tracing::warn!("the NATS server is shutting down (lame duck mode)"),
                    other => tracing::debug!(event = %other, "NATS connection event"),
                }
            }
        })
}

/// The JetStream context every part shares: requests and awaited acks bounded by
/// [`JETSTREAM_TIMEOUT`].
pub(super) fn jetstream_context(client: async_nats::Client) -> Context {
    ContextBuilder::new().timeout(JETSTREAM_TIMEOUT).build(client)
}

/// A CLI command's JetStream context on `url` (one attempt: an operator runs it again); the
/// error names the servers with any credentials hidden.
pub async fn cli_jetstream(url: &str) -> anyhow::Result<Context> {
    let client = async_nats::connect(engage_config::nats_servers(url)).await.map_err(|e| {
        let shown = engage_config::redact_url(url);
        anyhow::anyhow!("cannot connect to {shown}: {}", engage_config::redact_in(&e.to_string(), url))
    })?;
    Ok(async_nats::jetstream::new(client))
}

/// Probes, every [`PROBE_EVERY`], that the orders stream (and the store bucket when the store is
/// NATS KV) has a leader that answers: without one no publish can be acknowledged, so `/readyz`
/// lists `bus` with the cause until it answers again.
pub(super) fn watch_bus(jetstream: Context, kv_store: bool, readiness: Arc<Readiness>) {
    let mut streams = vec![engage_streams::subject::ORDERS_STREAM.to_owned()];
    if kv_store {
        streams.push(format!("KV_{}", super::STORE_BUCKET));
    }
    let mut probe = jetstream.clone();
    probe.set_timeout(Duration::from_secs(2));
    tokio::spawn(async move {
        let mut was_ok = true;
        loop {
            let mut problem = None;
            for name in &streams {
                // the stream's info comes from its leader
                if let Err(error) = probe.get_stream(name).await {
                    problem = Some(format!("stream {name} cannot take writes now: {error}"));
                    break;
                }
            }
            match (&problem, was_ok) {
                (Some(cause), true) => tracing::warn!(%cause, "the bus cannot take writes: /readyz answers 503"),
                (None, false) => tracing::info!("the bus takes writes again"),
                _ => {}
            }
            was_ok = problem.is_none();
            readiness.set_problem("bus", problem);
            tokio::time::sleep(if was_ok { PROBE_EVERY } else { PROBE_FAILING }).await;
        }
    });
}
