//! Reading a log group as it grows (`GET /v1/logs/tail`, `engage logs tail`), from whichever sink
//! is configured, with a cursor to go on from.
//!
//! - **Embedded**: the segment log in append order ([`super::segments::SegmentLog::tail`]); the
//!   cursor `e<segment>.<offset>.<skip>` is a place in the log, so a follower sees each event once
//!   even when its timestamp is older than ones already shown. A read that finds nothing waits for
//!   the next append (up to the request's `wait`).
//! - A cursor of the other sink (the server's sink changed under a follower) starts over from
//!   `since`; anything else that is not a cursor is refused.
//! - **CloudWatch**: FilterLogEvents from the cursor's timestamp, oldest first; the cursor
//!   `c<timestamp>.<id>,<id>…` names the events of that millisecond already returned, so none is
//!   shown twice. As with `aws logs tail --follow`, an event that reaches CloudWatch later than
//!   younger events already shown (its timestamp before the cursor's) is not shown. A read that
//!   finds nothing asks again every `ENGAGE_CLOUDWATCH_TAIL_POLL_MS` (up to `wait`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cloudwatch::CloudWatchBackend;
use super::segments::{SegmentLog, TailPosition, TailQuery};

/// Where tail reads come from.
#[derive(Clone)]
pub enum LogTail {
    /// The embedded sink's segment log (None in a process that keeps none).
    Embedded(Option<Arc<SegmentLog>>),
    /// CloudWatch Logs, asked again every `poll` while a read waits.
    CloudWatch {
        /// The sink.
        backend: Arc<CloudWatchBackend>,
        /// How often a waiting read asks again.
        poll: Duration,
    },
}

/// One tail read.
#[derive(Clone, Debug)]
pub struct TailRequest {
    /// The log group.
    pub group: String,
    /// One stream of it, or all.
    pub stream: Option<String>,
    /// Only events whose own timestamp is at or after this (ms since the epoch).
    pub since_ms: i64,
    /// Only events whose stored text contains this (case-sensitive).
    pub filter: Option<String>,
    /// The cursor of the previous read.
    pub cursor: Option<String>,
    /// Most events returned.
    pub limit: usize,
    /// How long to wait for an event when there is none yet.
    pub wait: Duration,
}

/// One event read.
#[derive(Clone, Debug)]
pub struct TailEvent {
    /// Its stream.
    pub log_stream: String,
    /// Its own timestamp, ms since the epoch.
    pub timestamp: i64,
    /// The stored text (the LogEvent as JSON).
    pub message: String,
}

/// Events read and the cursor to go on from.
#[derive(Clone, Debug)]
pub struct TailAnswer {
    /// Embedded: in append order; CloudWatch: oldest first.
    pub events: Vec<TailEvent>,
    /// Pass back to read on.
    pub cursor: String,
    /// Whether the sink has the group (and the stream, when one was asked for): false when
    /// nothing was ever written to it, so an empty page is not taken for a quiet group.
    pub found: bool,
}

/// Why a tail read failed.
#[derive(Debug, thiserror::Error)]
pub enum TailError {
    /// The cursor is not one this sink gave.
    #[error("the cursor {0:?} is not one this server's log sink gave out")]
    BadCursor(String),
    /// The sink could not be read.
    #[error("the log sink cannot be read now: {0}")]
    Unavailable(String),
}

impl LogTail {
    /// Reads on from the request's cursor, waiting up to `wait` when nothing is there yet.
    pub async fn read(&self, mut request: TailRequest) -> Result<TailAnswer, TailError> {
        let deadline = Instant::now() + request.wait;
        loop {
            let answer = match self {
                LogTail::Embedded(log) => embedded(log.as_deref(), &request).await?,
                LogTail::CloudWatch { backend, .. } => cloudwatch(backend, &request).await?,
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if !answer.events.is_empty() || left.is_zero() {
                return Ok(answer);
            }
            match self {
                LogTail::Embedded(Some(log)) => {
                    let at = embedded_position(&answer.cursor)?;
                    log.wait_past(at, left).await;
                }
                LogTail::CloudWatch { poll, .. } => tokio::time::sleep((*poll).min(left)).await,
                LogTail::Embedded(None) => tokio::time::sleep(left).await,
            }
            request.cursor = Some(answer.cursor);
        }
    }
}

fn embedded_position(cursor: &str) -> Result<TailPosition, TailError> {
    cursor.strip_prefix('e').and_then(TailPosition::decode).ok_or_else(|| TailError::BadCursor(cursor.to_owned()))
}

async fn embedded(log: Option<&SegmentLog>, request: &TailRequest) -> Result<TailAnswer, TailError> {
    // a CloudWatch cursor (the server's sink changed under a follower) starts over from `since`
    let ours = request.cursor.as_deref().filter(|cursor| Seen::decode(cursor).is_none());
    let after = ours.map(embedded_position).transpose()?;
    let Some(log) = log else {
        return Ok(TailAnswer { events: Vec::new(), cursor: "e0.0.0".to_owned(), found: false });
    };
    let found = log
        .has(&request.group, request.stream.as_deref())
        .map_err(|error| TailError::Unavailable(error.to_string()))?;
    let page = log
        .tail(TailQuery {
            group: request.group.clone(),
            stream: request.stream.clone(),
            since_ms: request.since_ms,
            filter: request.filter.clone(),
            after,
            limit: request.limit,
        })
        .await
        .map_err(|error| TailError::Unavailable(format!("log segments: {error}")))?;
    let events = page
        .events
        .into_iter()
        .map(|event| TailEvent {
            log_stream: event.stream,
            timestamp: event.timestamp,
            message: String::from_utf8_lossy(&event.message).into_owned(),
        })
        .collect();
    Ok(TailAnswer { events, cursor: format!("e{}", page.next.encode()), found })
}

/// The CloudWatch cursor: a timestamp and the ids of the events of that millisecond returned.
struct Seen {
    timestamp: i64,
    ids: Vec<String>,
}

impl Seen {
    fn decode(cursor: &str) -> Option<Self> {
        let (timestamp, ids) = cursor.strip_prefix('c')?.split_once('.')?;
        let ids = if ids.is_empty() { Vec::new() } else { ids.split(',').map(str::to_owned).collect() };
        Some(Self { timestamp: timestamp.parse().ok()?, ids })
    }

    fn encode(&self) -> String {
        format!("c{}.{}", self.timestamp, self.ids.join(","))
    }
}

async fn cloudwatch(backend: &CloudWatchBackend, request: &TailRequest) -> Result<TailAnswer, TailError> {
    // an embedded cursor (the server's sink changed under a follower) starts over from `since`
    let ours = request.cursor.as_deref().filter(|cursor| embedded_position(cursor).is_err());
    let seen = match ours {
        Some(cursor) => Seen::decode(cursor).ok_or_else(|| TailError::BadCursor(cursor.to_owned()))?,
        None => Seen { timestamp: request.since_ms, ids: Vec::new() },
    };
    let start = seen.timestamp.max(request.since_ms);
    let found = backend
        .filter_events(&request.group, request.stream.as_deref(), start, request.limit + seen.ids.len())
        .await
        .map_err(TailError::Unavailable)?;
    let Some(found) = found else {
        return Ok(TailAnswer { events: Vec::new(), cursor: seen.encode(), found: false });
    };
    let mut next = Seen { timestamp: seen.timestamp, ids: seen.ids.clone() };
    let mut events = Vec::new();
    for event in found {
        let shown =
            event.timestamp < seen.timestamp || (event.timestamp == seen.timestamp && seen.ids.contains(&event.id));
        let wanted = request.filter.as_deref().is_none_or(|filter| event.message.contains(filter));
        if shown || event.timestamp < request.since_ms {
            continue;
        }
        // a filtered-out event moves the cursor too: it is not looked at again
        if event.timestamp != next.timestamp {
            next = Seen { timestamp: event.timestamp, ids: Vec::new() };
        }
        next.ids.push(event.id);
        if wanted {
            events.push(TailEvent { log_stream: event.stream, timestamp: event.timestamp, message: event.message });
            if events.len() >= request.limit {
                break;
            }
        }
    }
    Ok(TailAnswer { events, cursor: next.encode(), found: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloudwatch_cursors_read_back() {
        let seen = Seen { timestamp: 1_700_000_000_123, ids: vec!["1".into(), "22".into()] };
        let back = Seen::decode(&seen.encode()).unwrap();
        assert_eq!((back.timestamp, back.ids), (seen.timestamp, seen.ids));
        let none = Seen::decode("c5.").unwrap();
        assert!(none.ids.is_empty());
        for bad in ["", "c", "cx.1", "e1.2.3", "c1"] {
            assert!(Seen::decode(bad).is_none(), "{bad}");
        }
        assert!(embedded_position("c1.2.3").is_err());
        assert!(embedded_position("e1.2.3").is_ok());
    }
}
