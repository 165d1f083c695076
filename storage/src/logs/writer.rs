//! The coalescing writer shared by every sink.
//!
//! Requests queue their events on a channel. A worker takes the first waiting request, waits for a
//! free flush slot, then takes every other request that queued meanwhile: under load, many small
//! requests become few large PutLogEvents calls. Each flush runs as its own task, at most
//! `max_in_flight` at a time, and answers each request with its own [`WriteReport`].

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio::task::JoinHandle;

use super::batching::{chunk_stream, OwnedEvent};
use super::{now_ms, BatchReport, Chunk, EventFate, LogBackend, SinkEvent, WriteReport};

/// Tuning of a [`LogWriter`].
#[derive(Clone, Copy, Debug)]
pub struct WriterConfig {
    /// Most events taken into one flush (more requests wait for the next).
    pub max_events_per_flush: usize,
    /// Most flushes running at once.
    pub max_in_flight: usize,
    /// Requests that may wait in the queue before `write` waits for room.
    pub queue_depth: usize,
}

impl Default for WriterConfig {
    fn default() -> Self {
        Self { max_events_per_flush: 50_000, max_in_flight: 4, queue_depth: 4096 }
    }
}

/// The writer stopped (shut down, or a flush task died) before answering.
#[derive(Debug, thiserror::Error)]
#[error("the log writer stopped before the write completed")]
pub struct WriterClosed;

struct Pending {
    events: Vec<SinkEvent>,
    reply: oneshot::Sender<WriteReport>,
}

/// Handle to the coalescing writer. Cheap to clone. When every handle is dropped, the worker
/// finishes the flushes in flight and its [`JoinHandle`] completes.
#[derive(Clone)]
pub struct LogWriter {
    tx: mpsc::Sender<Pending>,
    backend_name: &'static str,
}

impl LogWriter {
    /// Starts the worker for `backend`.
    pub fn spawn(backend: Arc<dyn LogBackend>, config: WriterConfig) -> (Self, JoinHandle<()>) {
        let (tx, rx) = mpsc::channel(config.queue_depth.max(1));
        let backend_name = backend.name();
        let worker = tokio::spawn(run(backend, config, rx));
        (Self { tx, backend_name }, worker)
    }

    /// The backend's name (`embedded`, `cloudwatch`).
    pub fn backend_name(&self) -> &'static str {
        self.backend_name
    }

    /// Writes `events` and waits until the log service has answered for each of them.
    pub async fn write(&self, events: Vec<SinkEvent>) -> Result<WriteReport, WriterClosed> {
        if events.is_empty() {
            return Ok(WriteReport::default());
        }
        let (reply, answer) = oneshot::channel();
        self.tx.send(Pending { events, reply }).await.map_err(|_| WriterClosed)?;
        answer.await.map_err(|_| WriterClosed)
    }
}

async fn run(backend: Arc<dyn LogBackend>, config: WriterConfig, mut rx: mpsc::Receiver<Pending>) {
    let slots = Arc::new(Semaphore::new(config.max_in_flight.max(1)));
    while let Some(first) = rx.recv().await {
        let Ok(permit) = slots.clone().acquire_owned().await else { break };
        let mut events = first.events.len();
        let mut batch = vec![first];
        while events < config.max_events_per_flush {
            match rx.try_recv() {
                Ok(next) => {
                    events += next.events.len();
                    batch.push(next);
                }
                Err(_) => break,
            }
        }
        let backend = backend.clone();
        tokio::spawn(async move {
            flush(backend.as_ref(), batch).await;
            drop(permit);
        });
    }
    // Shutdown: wait until every flush in flight has answered its requests.
    let _ = slots.acquire_many(config.max_in_flight.max(1) as u32).await;
}

async fn flush(backend: &dyn LogBackend, mut batch: Vec<Pending>) {
    let mut by_stream: HashMap<(String, String), Vec<OwnedEvent>> = HashMap::new();
    for (request, pending) in batch.iter_mut().enumerate() {
        for (index, event) in std::mem::take(&mut pending.events).into_iter().enumerate() {
            by_stream.entry((event.group.clone(), event.stream.clone())).or_default().push(((request, index), event));
        }
    }
    let chunks: Vec<Chunk> =
        by_stream.into_iter().flat_map(|((group, stream), events)| chunk_stream(&group, &stream, events)).collect();

    let started = Instant::now();
    let results = backend.put_chunks(&chunks).await;
    metrics::histogram!("engage_log_sink_latency_seconds", "sink" => backend.name())
        .record(started.elapsed().as_secs_f64());
    metrics::histogram!("engage_log_flush_requests").record(batch.len() as f64);

    let now = now_ms();
    let mut reports = vec![WriteReport::default(); batch.len()];
    for (index, chunk) in chunks.iter().enumerate() {
        metrics::histogram!("engage_log_batch_events", "sink" => backend.name()).record(chunk.events.len() as f64);
        let (fates, error) = match results.get(index) {
            Some(Ok(rejected)) => {
                let timestamps: Vec<i64> = chunk.events.iter().map(|(ts, _)| *ts).collect();
                (rejected.fates(&timestamps, now), None)
            }
            Some(Err(error)) => {
                tracing::error!(sink = backend.name(), group = %chunk.group, stream = %chunk.stream, events = chunk.events.len(), %error, "log batch write failed");
                (vec![EventFate::Failed; chunk.events.len()], Some(error.to_string()))
            }
            None => (vec![EventFate::Failed; chunk.events.len()], Some("backend returned no result".to_owned())),
        };
        let mut per_request: BTreeMap<usize, BatchReport> = BTreeMap::new();
        for (&(request, event), fate) in chunk.owners.iter().zip(fates) {
            per_request
                .entry(request)
                .or_insert_with(|| BatchReport {
                    group: chunk.group.clone(),
                    stream: chunk.stream.clone(),
                    events: Vec::new(),
                    error: error.clone(),
                })
                .events
                .push((event, fate));
        }
        for (request, report) in per_request {
            reports[request].batches.push(report);
        }
    }
    for (pending, report) in batch.into_iter().zip(reports) {
        // A requester that went away (client disconnected) no longer needs its answer.
        let _ = pending.reply.send(report);
    }
}
