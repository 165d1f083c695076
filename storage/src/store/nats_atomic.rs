//! Atomic batch publish for the NATS KV store (ADR-50: nats-server 2.12 and later, stream setting
//! `allow_atomic`): every write of a batch is published with `Nats-Batch-Id` and
//! `Nats-Batch-Sequence`, the last with `Nats-Batch-Commit: 1` as a request, and the server stores
//! all of them or none. A KV delete is a message with `KV-Operation: DEL`, as the KV client sends
//! it. At most [`MAX_ATOMIC`] messages make one batch.
//!
//! Written here rather than taken from the `jetstream-extra` crate: its releases build on an older
//! async-nats (0.48) than engage's (0.51), whose `Context` it cannot extend.

use std::sync::atomic::{AtomicU64, Ordering};

use async_nats::jetstream::kv::Store as Bucket;
use async_nats::jetstream::Context;
use async_nats::HeaderMap;
use bytes::Bytes;

use super::StoreError;

/// Most messages one atomic batch may hold (the server's limit).
pub const MAX_ATOMIC: usize = 1000;

/// Publishes batches of KV writes atomically to one bucket's stream.
pub struct AtomicPublisher {
    context: Context,
    /// Subject prefix of the bucket's keys (`$KV.<bucket>.`).
    prefix: String,
    /// Batches published, for unique batch ids.
    sent: AtomicU64,
}

impl AtomicPublisher {
    /// Turns on atomic publish on `bucket`'s stream; `None` (and the two-phase writes) when the
    /// server cannot (before 2.12) or the bucket is reached through a JetStream domain prefix.
    ///
    /// A server that cannot answer now (a cluster electing its leader: the request times out)
    /// is an error, so the store's open is retried; only a server that refuses the setting makes
    /// the store write in two phases.
    pub async fn enable(context: &Context, bucket: &Bucket) -> Result<Option<Self>, StoreError> {
        use async_nats::jetstream::context::CreateStreamErrorKind;
        if bucket.use_jetstream_prefix {
            return Ok(None);
        }
        let unavailable =
            |e: &dyn std::fmt::Display| StoreError::Backend(format!("the store bucket cannot answer: {e}"));
        let mut stream = context.get_stream(&bucket.stream_name).await.map_err(|e| unavailable(&e))?;
        let mut config = stream.info().await.map_err(|e| unavailable(&e))?.config.clone();
        if !config.allow_atomic_publish {
            config.allow_atomic_publish = true;
            match context.update_stream(config).await {
                Ok(_) => {}
                Err(error) if matches!(error.kind(), CreateStreamErrorKind::TimedOut) => {
                    return Err(unavailable(&error))
                }
                Err(error) => {
                    tracing::warn!(%error, "NATS KV store: the server does not take atomic batches (nats-server 2.12 or later does); a batch's rows are written in two phases");
                    return Ok(None);
                }
            }
        }
        let prefix = bucket.put_prefix.clone().unwrap_or_else(|| bucket.prefix.clone());
        Ok(Some(Self { context: context.clone(), prefix, sent: AtomicU64::new(0) }))
    }

    /// Publishes `writes` (at most [`MAX_ATOMIC`], each key once) as one atomic batch: when this
    /// answers `Ok`, all of them are stored; otherwise none is.
    pub async fn publish(&self, writes: Vec<(String, Option<Bytes>)>) -> Result<(), StoreError> {
        let count = writes.len();
        if count == 0 {
            return Ok(());
        }
        if count > MAX_ATOMIC {
            return Err(StoreError::Backend(format!("{count} writes exceed an atomic batch's {MAX_ATOMIC}")));
        }
        let id = format!(
            "engage-{:x}-{:x}-{:x}",
            std::process::id(),
            chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default(),
            self.sent.fetch_add(1, Ordering::Relaxed)
        );
        let client = self.context.client();
        for (index, (key, value)) in writes.into_iter().enumerate() {
            let mut headers = HeaderMap::new();
            headers.insert("Nats-Batch-Id", id.as_str());
            headers.insert("Nats-Batch-Sequence", (index + 1).to_string().as_str());
            let payload = match value {
                Some(value) => value,
                None => {
                    headers.insert("KV-Operation", "DEL");
                    Bytes::new()
                }
            };
            let subject = format!("{}{key}", self.prefix);
            if index + 1 < count {
                client.publish_with_headers(subject, headers, payload).await.map_err(backend)?;
            } else {
                headers.insert("Nats-Batch-Commit", "1");
                let ack = self.context.publish_with_headers(subject, headers, payload).await.map_err(backend)?;
                ack.await.map_err(backend)?;
            }
        }
        metrics::counter!("engage_store_atomic_batches_total").increment(1);
        Ok(())
    }
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("atomic batch: {error}"))
}
