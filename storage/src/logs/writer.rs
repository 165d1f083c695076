//! The coalescing writer shared by every sink.
//!
//! Requests queue their events on a channel. The worker sorts them into one lane per (group,
//! stream). A lane has at most `max_in_flight_per_stream` calls to the log service running; while
//! they run, the events of every request that arrives for that stream wait in the lane and go
//! together in its next call. Under load, many small requests become few large PutLogEvents calls
//! (CloudWatch: one call in flight per stream, so 32 single-event producers share calls of ~30
//! events instead of racing each other with calls of a few). Each request is answered with its own
//! [`WriteReport`] once every one of its events has a fate.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::batching::{chunk_stream, OwnedEvent};
use super::{now_ms, BatchReport, Chunk, EventFate, LogBackend, SinkEvent, WriteReport};

/// Tuning of a [`LogWriter`].
#[derive(Clone, Copy, Debug)]
pub struct WriterConfig {
    /// Most events taken into one flush of a stream (more wait for the next).
    pub max_events_per_flush: usize,
    /// Most calls running at once for one (group, stream).
    pub max_in_flight_per_stream: usize,
    /// Requests that may wait in the queue before `write` waits for room.
    pub queue_depth: usize,
    /// How long a stream whose call just ended may wait for more events before its next call,
    /// while it holds fewer than its last call took (the producers of that call have not had
    /// their answers long enough to send again). Zero: call at once.
    pub linger: Duration,
    /// Whether requests are merged in lanes by the worker. Off, each request calls the backend
    /// from its own task (per stream of its events), for a backend that merges concurrent calls
    /// itself (the embedded sink's appender does, into one sync).
    pub coalesce: bool,
}

impl Default for WriterConfig {
    fn default() -> Self {
        Self {
            max_events_per_flush: 50_000,
            max_in_flight_per_stream: 4,
            queue_depth: 4096,
            linger: Duration::ZERO,
            coalesce: true,
        }
    }
}

impl WriterConfig {
    /// For the embedded sink: no lanes; each request calls the segment log, whose appender merges
    /// whatever is queued into one write and one sync (issue 13: the worker's hop and the flush
    /// task were wake-ups on every single-event request).
    pub fn embedded() -> Self {
        Self { coalesce: false, ..Self::default() }
    }

    /// For CloudWatch: one PutLogEvents call in flight per stream, and up to 5 ms of waiting for
    /// the producers of the last call, so that concurrent producers share calls.
    pub fn cloudwatch() -> Self {
        Self { max_in_flight_per_stream: 1, linger: Duration::from_millis(5), ..Self::default() }
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

/// One request being written: its report so far and how many events still wait for a fate.
struct Request {
    state: Mutex<RequestState>,
}

struct RequestState {
    remaining: usize,
    report: WriteReport,
    reply: Option<oneshot::Sender<WriteReport>>,
}

impl Request {
    /// Adds one chunk's fates for this request; answers it when none of its events is left.
    fn settle(&self, batch: BatchReport) {
        let Ok(mut state) = self.state.lock() else { return };
        state.remaining = state.remaining.saturating_sub(batch.events.len());
        state.report.batches.push(batch);
        if state.remaining == 0 {
            if let Some(reply) = state.reply.take() {
                // A requester that went away (client disconnected) no longer needs its answer.
                let _ = reply.send(std::mem::take(&mut state.report));
            }
        }
    }
}

/// An event waiting in its stream's lane: (request id, index in the request), the event.
type Queued = OwnedEvent;

type StreamKey = (String, String);

#[derive(Default)]
struct Lane {
    queue: Vec<Queued>,
    in_flight: usize,
    /// Events in the lane's last call.
    last_call: usize,
    /// When the lane's last call ended, if none has started since.
    idle_since: Option<Instant>,
}

impl Lane {
    /// Until when the lane waits for more events before its next call, if it does.
    fn lingers_until(&self, linger: Duration) -> Option<Instant> {
        let since = self.idle_since?;
        let until = since + linger;
        (self.queue.len() < self.last_call && Instant::now() < until).then_some(until)
    }
}

/// Handle to the coalescing writer. Cheap to clone. When every handle is dropped, the worker
/// finishes the flushes in flight and its [`JoinHandle`] completes.
#[derive(Clone)]
pub struct LogWriter {
    tx: mpsc::Sender<Pending>,
    backend_name: &'static str,
    /// The backend, when requests call it themselves (`coalesce` off).
    direct: Option<Arc<dyn LogBackend>>,
}

impl LogWriter {
    /// Starts the worker for `backend`.
    pub fn spawn(backend: Arc<dyn LogBackend>, config: WriterConfig) -> (Self, JoinHandle<()>) {
        let (tx, rx) = mpsc::channel(config.queue_depth.max(1));
        let backend_name = backend.name();
        let direct = (!config.coalesce).then(|| backend.clone());
        let worker = tokio::spawn(run(backend, config, rx));
        (Self { tx, backend_name, direct }, worker)
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
        if let Some(backend) = &self.direct {
            if self.tx.is_closed() {
                return Err(WriterClosed);
            }
            let count = events.len();
            let state = RequestState { remaining: count, report: WriteReport::default(), reply: Some(reply) };
            let owners = HashMap::from([(0, Arc::new(Request { state: Mutex::new(state) }))]);
            let mut lanes: HashMap<StreamKey, Lane> = HashMap::new();
            enqueue(&mut lanes, 0, events);
            let flushes = lanes.into_iter().map(|((group, stream), lane)| {
                let (backend, owners) = (backend.clone(), &owners);
                async move { flush(backend.as_ref(), &group, &stream, lane.queue, owners).await }
            });
            futures::future::join_all(flushes).await;
        } else {
            self.tx.send(Pending { events, reply }).await.map_err(|_| WriterClosed)?;
        }
        answer.await.map_err(|_| WriterClosed)
    }
}

/// Tells the worker that a flush of `key` ended, however it ended (a panicking flush too).
struct FlushDone {
    key: Option<StreamKey>,
    done: mpsc::UnboundedSender<StreamKey>,
}

impl Drop for FlushDone {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let _ = self.done.send(key);
        }
    }
}

async fn run(backend: Arc<dyn LogBackend>, config: WriterConfig, mut rx: mpsc::Receiver<Pending>) {
    let mut lanes: HashMap<StreamKey, Lane> = HashMap::new();
    // Requests with events still waiting in a lane, and how many; a request leaves this map once
    // all its events are handed to flushes (which keep it alive until they settle it).
    let mut waiting: HashMap<usize, (Arc<Request>, usize)> = HashMap::new();
    let mut next_id = 0usize;
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<StreamKey>();
    let mut open = true;
    let mut wake: Option<Instant> = None;
    loop {
        let linger_ends = async {
            match wake {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = linger_ends => {}
            pending = rx.recv(), if open => match pending {
                Some(first) => {
                    let mut pending = Some(first);
                    while let Some(Pending { events, reply }) = pending.take() {
                        let id = next_id;
                        next_id = next_id.wrapping_add(1);
                        let count = events.len();
                        let state = RequestState { remaining: count, report: WriteReport::default(), reply: Some(reply) };
                        waiting.insert(id, (Arc::new(Request { state: Mutex::new(state) }), count));
                        enqueue(&mut lanes, id, events);
                        pending = rx.try_recv().ok();
                    }
                }
                None => open = false,
            },
            Some(key) = done_rx.recv() => {
                if let Some(lane) = lanes.get_mut(&key) {
                    lane.in_flight = lane.in_flight.saturating_sub(1);
                    if lane.in_flight == 0 {
                        lane.idle_since = Some(Instant::now());
                    }
                }
            }
        }
        wake = None;
        for (key, lane) in &mut lanes {
            if lane.queue.is_empty() || lane.in_flight >= config.max_in_flight_per_stream.max(1) {
                continue;
            }
            if let Some(until) = lane.lingers_until(config.linger) {
                wake = Some(wake.map_or(until, |at: Instant| at.min(until)));
                continue;
            }
            let take = lane.queue.len().min(config.max_events_per_flush.max(1));
            lane.last_call = take;
            lane.idle_since = None;
            let events: Vec<Queued> = lane.queue.drain(..take).collect();
            let mut owners: HashMap<usize, Arc<Request>> = HashMap::new();
            for ((id, _), _) in &events {
                if let Some((request, left)) = waiting.get_mut(id) {
                    owners.entry(*id).or_insert_with(|| request.clone());
                    *left -= 1;
                    if *left == 0 {
                        waiting.remove(id);
                    }
                }
            }
            lane.in_flight += 1;
            let guard = FlushDone { key: Some(key.clone()), done: done_tx.clone() };
            let backend = backend.clone();
            let (group, stream) = key.clone();
            tokio::spawn(async move {
                flush(backend.as_ref(), &group, &stream, events, &owners).await;
                drop(guard);
            });
        }
        lanes.retain(|_, lane| !lane.queue.is_empty() || lane.in_flight > 0);
        if !open && lanes.is_empty() {
            break;
        }
    }
}

/// Puts one request's events into the lanes of their streams (consecutive events of one stream,
/// the usual case, find their lane without building its key again).
fn enqueue(lanes: &mut HashMap<StreamKey, Lane>, id: usize, events: Vec<SinkEvent>) {
    let mut current: Option<(StreamKey, Vec<Queued>)> = None;
    for (index, event) in events.into_iter().enumerate() {
        match &mut current {
            Some(((group, stream), queue)) if *group == event.group && *stream == event.stream => {
                queue.push(((id, index), event));
            }
            _ => {
                if let Some((key, queue)) = current.take() {
                    lanes.entry(key).or_default().queue.extend(queue);
                }
                let key = (event.group.clone(), event.stream.clone());
                current = Some((key, vec![((id, index), event)]));
            }
        }
    }
    if let Some((key, queue)) = current {
        lanes.entry(key).or_default().queue.extend(queue);
    }
}

async fn flush(
    backend: &dyn LogBackend,
    group: &str,
    stream: &str,
    events: Vec<Queued>,
    owners: &HashMap<usize, Arc<Request>>,
) {
    let chunks: Vec<Chunk> = chunk_stream(group, stream, events);
    let started = Instant::now();
    let results = backend.put_chunks(&chunks).await;
    metrics::histogram!("engage_log_sink_latency_seconds", "sink" => backend.name())
        .record(started.elapsed().as_secs_f64());
    metrics::histogram!("engage_log_flush_requests").record(owners.len() as f64);

    let now = now_ms();
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
            if let Some(owner) = owners.get(&request) {
                owner.settle(report);
            }
        }
    }
}
