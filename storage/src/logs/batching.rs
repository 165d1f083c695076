//! Splitting a (group, stream)'s events into PutLogEvents-sized chunks.
//!
//! CloudWatch limits one PutLogEvents call to 10,000 events, 1,048,576 bytes (each event's message
//! bytes plus 26) and a 24-hour span between its first and last event; events must be sorted by
//! timestamp.

use super::SinkEvent;

/// Most events in one call.
pub const MAX_EVENTS: usize = 10_000;
/// Most bytes in one call, counting [`EVENT_OVERHEAD`] per event.
pub const MAX_BYTES: usize = 1_048_576;
/// Bytes counted per event on top of its message.
pub const EVENT_OVERHEAD: usize = 26;
/// Longest span between the first and last event of one call, in milliseconds.
pub const MAX_SPAN_MS: i64 = 24 * 3600 * 1000;

/// An event with who waits for it: ((request number, index in that request), event).
pub type OwnedEvent = ((usize, usize), SinkEvent);

/// Events of one (group, stream), sorted by timestamp, within the limits of one call.
#[derive(Clone, Debug)]
pub struct Chunk {
    /// Log group.
    pub group: String,
    /// Log stream.
    pub stream: String,
    /// (timestamp ms, message), sorted by timestamp.
    pub events: Vec<(i64, String)>,
    /// For each event, who is waiting for it: (request number, index in that request).
    pub owners: Vec<(usize, usize)>,
}

/// Sorts events of one (group, stream) by timestamp (stably, so equal timestamps keep arrival
/// order) and cuts them into chunks. `events` are (owner, event).
pub fn chunk_stream(group: &str, stream: &str, mut events: Vec<OwnedEvent>) -> Vec<Chunk> {
    events.sort_by_key(|(_, e)| e.timestamp_ms);
    let mut chunks = Vec::new();
    let mut current = empty(group, stream);
    let mut bytes = 0usize;
    for (owner, event) in events {
        let size = event.message.len() + EVENT_OVERHEAD;
        let first_ts = current.events.first().map(|(ts, _)| *ts);
        let full = current.events.len() >= MAX_EVENTS
            || bytes + size > MAX_BYTES
            || first_ts.is_some_and(|first| event.timestamp_ms - first > MAX_SPAN_MS);
        if full && !current.events.is_empty() {
            chunks.push(std::mem::replace(&mut current, empty(group, stream)));
            bytes = 0;
        }
        bytes += size;
        current.events.push((event.timestamp_ms, event.message));
        current.owners.push(owner);
    }
    if !current.events.is_empty() {
        chunks.push(current);
    }
    chunks
}

fn empty(group: &str, stream: &str) -> Chunk {
    Chunk { group: group.to_owned(), stream: stream.to_owned(), events: Vec::new(), owners: Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(ts: i64, len: usize) -> SinkEvent {
        SinkEvent { group: "g".into(), stream: "s".into(), timestamp_ms: ts, message: "x".repeat(len) }
    }

    fn owned(events: Vec<SinkEvent>) -> Vec<((usize, usize), SinkEvent)> {
        events.into_iter().enumerate().map(|(i, e)| ((0, i), e)).collect()
    }

    #[test]
    fn sorts_by_timestamp_keeping_owners() {
        let chunks = chunk_stream("g", "s", owned(vec![event(3, 1), event(1, 1), event(2, 1)]));
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].events.iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(chunks[0].owners, vec![(0, 1), (0, 2), (0, 0)]);
    }

    #[test]
    fn splits_at_ten_thousand_events() {
        let chunks = chunk_stream("g", "s", owned((0..10_001).map(|i| event(i, 1)).collect()));
        assert_eq!(chunks.iter().map(|c| c.events.len()).collect::<Vec<_>>(), vec![10_000, 1]);
    }

    #[test]
    fn splits_at_the_byte_limit_counting_overhead() {
        // Two events of exactly half the budget fit; a third byte does not.
        let half = MAX_BYTES / 2 - EVENT_OVERHEAD;
        let fit = chunk_stream("g", "s", owned(vec![event(1, half), event(2, half)]));
        assert_eq!(fit.len(), 1);
        let over = chunk_stream("g", "s", owned(vec![event(1, half), event(2, half + 1)]));
        assert_eq!(over.len(), 2);
    }

    #[test]
    fn splits_at_a_24_hour_span() {
        let chunks = chunk_stream("g", "s", owned(vec![event(0, 1), event(MAX_SPAN_MS, 1), event(MAX_SPAN_MS + 1, 1)]));
        assert_eq!(chunks.iter().map(|c| c.events.len()).collect::<Vec<_>>(), vec![2, 1]);
    }
}
