//! Many rows in one round trip: JetStream's batched direct get (`multi_last`, nats-server 2.11
//! and later). One request names up to [`MOST_SUBJECTS`] keys; the server answers with the last
//! message of each key that has one, then an end-of-batch status (`204 EOB`), or `404 No Results`
//! when none has. Every answer comes to one subscription the store keeps for the connection's
//! life (`<inbox>.<request>`), so a read costs the server one message in and one out per row
//! found plus one, not a request, a reply and an inbox subscription per row.
//!
//! A server that does not know `multi_last` (before 2.11) reads the request as an empty one and
//! answers `400`: the store then reads each row on its own from then on ([`MultiGet::unsupported`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::Message;
use futures::StreamExt;

use crate::store::StoreError;

/// Most keys named in one request (the server answers at most 1,024 messages to one).
pub(super) const MOST_SUBJECTS: usize = 256;

/// How long a batched read may take before it fails (as a single read would).
const TIMEOUT: Duration = Duration::from_secs(10);

/// The batched reads of one bucket, and the subscription their answers come to.
pub(super) struct MultiGet {
    client: async_nats::Client,
    /// `$JS.API.DIRECT.GET.<stream>`.
    api: String,
    /// The subscription's subject without its last token.
    inbox: String,
    /// Requests waiting for answers, by their number.
    waiting: Arc<Mutex<HashMap<u64, tokio::sync::mpsc::UnboundedSender<Message>>>>,
    next: AtomicU64,
    /// Set once the server answered a batched read as a request it does not know.
    unsupported: AtomicBool,
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// One request's answers: removes its entry from the waiting map when dropped (answered, failed
/// or timed out alike).
struct Waiting<'a> {
    id: u64,
    map: &'a Mutex<HashMap<u64, tokio::sync::mpsc::UnboundedSender<Message>>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Ok(mut map) = self.map.lock() {
            map.remove(&self.id);
        }
    }
}

/// What one batched read found.
pub(super) enum Found {
    /// The last value of each key that has one (a delete marker: `None`), by subject.
    Rows(HashMap<String, Option<Vec<u8>>>),
    /// The server does not do batched reads: read each row on its own.
    Unsupported,
}

impl MultiGet {
    /// Subscribes to the answers' inbox and routes each answer to its request.
    pub async fn start(client: async_nats::Client, stream: &str) -> Result<Self, StoreError> {
        let inbox = client.new_inbox();
        let mut subscription = client.subscribe(format!("{inbox}.*")).await.map_err(backend)?;
        let waiting: Arc<Mutex<HashMap<u64, tokio::sync::mpsc::UnboundedSender<Message>>>> = Arc::default();
        let routes = waiting.clone();
        tokio::spawn(async move {
            while let Some(message) = subscription.next().await {
                let Some(id) = message.subject.as_str().rsplit('.').next().and_then(|t| t.parse::<u64>().ok()) else {
                    continue;
                };
                let sender = routes.lock().ok().and_then(|map| map.get(&id).cloned());
                // an answer for a request that gave up is dropped
                if let Some(sender) = sender {
                    let _ = sender.send(message);
                }
            }
        });
        Ok(Self {
            client,
            api: format!("$JS.API.DIRECT.GET.{stream}"),
            inbox,
            waiting,
            next: AtomicU64::new(1),
            unsupported: AtomicBool::new(false),
        })
    }

    /// Whether the server refused a batched read before (the caller reads rows one by one).
    pub fn unsupported(&self) -> bool {
        self.unsupported.load(Ordering::Relaxed)
    }

    /// The last message of each of `subjects` (at most [`MOST_SUBJECTS`], no wildcards).
    pub async fn read(&self, subjects: &[String]) -> Result<Found, StoreError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (sender, mut answers) = tokio::sync::mpsc::unbounded_channel();
        self.waiting.lock().map_err(|_| backend("multi-get routes poisoned"))?.insert(id, sender);
        let _waiting = Waiting { id, map: &self.waiting };
        let body = serde_json::to_vec(&serde_json::json!({ "multi_last": subjects })).map_err(backend)?;
        self.client
            .publish_with_reply(self.api.clone(), format!("{}.{id}", self.inbox), body.into())
            .await
            .map_err(backend)?;
        let mut rows = HashMap::with_capacity(subjects.len());
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let message = match tokio::time::timeout_at(deadline, answers.recv()).await {
                Ok(Some(message)) => message,
                Ok(None) => return Err(backend("the multi-get subscription ended")),
                Err(_) => {
                    return Err(backend(format!(
                        "no complete answer to a read of {} rows within {TIMEOUT:?}",
                        subjects.len()
                    )))
                }
            };
            let header = |name: &str| message.headers.as_ref().and_then(|h| h.get(name)).map(|v| v.as_str().to_owned());
            match message.status.map(|s| s.as_u16()) {
                None | Some(200) => {
                    let Some(subject) = header("Nats-Subject") else {
                        return Err(backend("a multi-get answer without its subject"));
                    };
                    let deleted = header("KV-Operation").is_some_and(|op| op == "DEL" || op == "PURGE");
                    rows.insert(subject, (!deleted).then(|| message.payload.to_vec()));
                }
                // the end of the batch; more pending would mean a cut-short answer
                Some(204) => {
                    return match header("Nats-Num-Pending").as_deref() {
                        None | Some("0") => Ok(Found::Rows(rows)),
                        Some(pending) => Err(backend(format!("a multi-get ended with {pending} rows pending"))),
                    }
                }
                Some(404) if message.description.as_deref().is_some_and(|d| d.eq_ignore_ascii_case("no results")) => {
                    return Ok(Found::Rows(rows));
                }
                // a server before 2.11 reads `multi_last` as an empty request
                Some(400) if rows.is_empty() => {
                    tracing::warn!(
                        status = 400,
                        description = message.description.as_deref().unwrap_or(""),
                        "nats-server refused a batched direct get: rows are read one by one"
                    );
                    self.unsupported.store(true, Ordering::Relaxed);
                    return Ok(Found::Unsupported);
                }
                Some(status) => {
                    let description = message.description.as_deref().unwrap_or("");
                    return Err(backend(format!("a multi-get answered {status} {description}")));
                }
            }
        }
    }
}
