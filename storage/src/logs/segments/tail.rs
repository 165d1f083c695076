//! The live tail of the segment log (`engage logs tail`, `GET /v1/logs/tail`): a group's events
//! in the order they were appended, from a [`TailPosition`], with the position to go on from.
//!
//! A position is a block (segment and offset) and how many of its events were already handed
//! out; the end of the log is such a position too, published by the appending thread after the
//! index holds every block before it. So a reader that takes the end first and then reads up to
//! it misses nothing and reads nothing half-written, and a follower that goes on from the
//! position it was given sees each event once, in append order.
//!
//! A position comes back from a client: it is checked before it is trusted. The block it names is
//! read and its CRC checked; when that fails (a position made up, or from another log), the
//! segment's blocks are walked from the group's first one to the first block at or after it.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek};
use std::path::Path;
use std::time::{Duration, Instant};

use super::format::*;
use super::{open_unless_expired, segment_spans, LoggedEvent, Run, SegmentLog, BLOCK_HEADER, MAX_PAYLOAD};

/// A place in the log: a block and how many of its events were already read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct TailPosition {
    /// The segment's number.
    pub segment: u64,
    /// The block's offset in the segment.
    pub offset: u64,
    /// Events of that block already read.
    pub skip: u32,
}

impl TailPosition {
    pub(super) fn at(segment: u64, offset: u64) -> Self {
        Self { segment, offset, skip: 0 }
    }

    /// `<segment>.<offset>.<skip>`.
    pub fn encode(&self) -> String {
        format!("{}.{}.{}", self.segment, self.offset, self.skip)
    }

    /// Reads [`TailPosition::encode`]'s text back.
    pub fn decode(text: &str) -> Option<Self> {
        let mut parts = text.split('.');
        let position = Self {
            segment: parts.next()?.parse().ok()?,
            offset: parts.next()?.parse().ok()?,
            skip: parts.next()?.parse().ok()?,
        };
        parts.next().is_none().then_some(position)
    }
}

/// What a tail read wants.
#[derive(Clone, Debug)]
pub struct TailQuery {
    /// The log group.
    pub group: String,
    /// One stream of it, or all.
    pub stream: Option<String>,
    /// Only events whose own timestamp is at or after this (ms since the epoch).
    pub since_ms: i64,
    /// Only events whose stored text contains this (case-sensitive).
    pub filter: Option<String>,
    /// Go on from here; from the log's start when None.
    pub after: Option<TailPosition>,
    /// Most events returned.
    pub limit: usize,
}

/// Events read and where to go on from.
#[derive(Clone, Debug)]
pub struct TailPage {
    /// In append order.
    pub events: Vec<LoggedEvent>,
    /// The position after the last event returned (the log's end when fewer than `limit` came).
    pub next: TailPosition,
}

impl SegmentLog {
    /// The end of what readers may read now.
    pub fn end(&self) -> TailPosition {
        *self.end.borrow()
    }

    /// Events of the query's group appended after its position, oldest appended first.
    pub async fn tail(&self, query: TailQuery) -> io::Result<TailPage> {
        // the end first: every block before it is in the index read next
        let end = self.end();
        let (runs, names) = self.wanted_runs(&query.group, query.stream.as_deref())?;
        let dir = self.dir.clone();
        tokio::task::spawn_blocking(move || read_after(&dir, &query, &runs, &names, end))
            .await
            .map_err(io::Error::other)?
    }

    /// Whether any event of `group` (of `stream`, when given) was ever appended and not expired.
    pub fn has(&self, group: &str, stream: Option<&str>) -> io::Result<bool> {
        let index = self.index.read().map_err(|_| io::Error::other("the log index lock is poisoned"))?;
        Ok(index.groups.get(group).is_some_and(|streams| stream.is_none_or(|s| streams.contains_key(s))))
    }

    /// Waits until something is appended after `position` (true), or `within` passes (false).
    pub async fn wait_past(&self, position: TailPosition, within: Duration) -> bool {
        let mut end = self.end.subscribe();
        let deadline = Instant::now() + within;
        loop {
            let now = *end.borrow_and_update();
            if (now.segment, now.offset) > (position.segment, position.offset) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !matches!(tokio::time::timeout(left, end.changed()).await, Ok(Ok(()))) {
                return false;
            }
        }
    }
}

fn read_after(
    dir: &Path,
    query: &TailQuery,
    runs: &[(usize, Run)],
    names: &[String],
    end: TailPosition,
) -> io::Result<TailPage> {
    let from = query.after.unwrap_or_default();
    let wanted: HashMap<&[u8], usize> = names.iter().enumerate().map(|(i, name)| (name.as_bytes(), i)).collect();
    let mut spans = segment_spans(runs);
    spans.sort_by_key(|span| span.segment);
    let mut events = Vec::new();
    for span in spans {
        if span.segment < from.segment || span.segment > end.segment || span.max_ts < query.since_ms {
            continue;
        }
        // blocks starting before `stop` are whole and indexed
        let stop = if span.segment == end.segment { end.offset } else { u64::MAX };
        let path = segment_path(dir, span.segment);
        let Some(file) = open_unless_expired(&path)? else { continue };
        let size = file.metadata()?.len();
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut offset = span.first;
        let mut skip_at = None;
        if span.segment == from.segment && from.offset > span.first {
            if from.offset > span.last || from.offset >= stop {
                continue;
            }
            offset = match is_block(&mut reader, from.offset, size)? {
                true => from.offset,
                false => first_block_from(&mut reader, span.first, from.offset, size)?,
            };
        }
        if span.segment == from.segment && offset == from.offset {
            skip_at = Some((from.offset, from.skip));
        }
        reader.seek(io::SeekFrom::Start(offset))?;
        let mut payload = Vec::new();
        while offset <= span.last && offset < stop {
            let block = offset;
            let (len, crc) = read_block(&mut reader, &mut payload, offset, size, &path)?;
            offset += BLOCK_HEADER as u64 + u64::from(len);
            let mut cursor = Cursor::new(&payload);
            let head = cursor.block_head().ok_or_else(|| corrupt("a log block is cut short".into()))?;
            if head.group != query.group.as_bytes() || head.span.max_ts < query.since_ms {
                continue;
            }
            let Some(&stream) = wanted.get(head.stream) else { continue };
            if crc32fast::hash(&payload) != crc {
                return Err(corrupt(format!("block at {block} of {} fails its check", path.display())));
            }
            let skip = skip_at.filter(|(at, _)| *at == block).map_or(0, |(_, skip)| skip);
            for i in 0..head.count {
                let (ts, seq, message) = cursor.event().ok_or_else(|| corrupt("a log block is cut short".into()))?;
                if i < skip || ts < query.since_ms || !matches(message, query.filter.as_deref()) {
                    continue;
                }
                events.push(LoggedEvent {
                    timestamp: ts,
                    seq,
                    stream: names[stream].clone(),
                    message: message.to_vec(),
                });
                if events.len() >= query.limit {
                    let next = if i + 1 < head.count {
                        TailPosition { segment: span.segment, offset: block, skip: i + 1 }
                    } else {
                        TailPosition::at(span.segment, offset)
                    };
                    return Ok(TailPage { events, next });
                }
            }
        }
    }
    Ok(TailPage { events, next: end })
}

fn matches(message: &[u8], filter: Option<&str>) -> bool {
    filter.is_none_or(|filter| {
        filter.is_empty() || message.windows(filter.len()).any(|window| window == filter.as_bytes())
    })
}

/// Reads the block at `offset` into `payload`: its length and CRC.
fn read_block(
    reader: &mut BufReader<File>,
    payload: &mut Vec<u8>,
    offset: u64,
    size: u64,
    path: &Path,
) -> io::Result<(u32, u32)> {
    let mut header = [0; BLOCK_HEADER];
    reader.read_exact(&mut header)?;
    let (len, crc) = block_header(&header);
    if len > MAX_PAYLOAD || offset + BLOCK_HEADER as u64 + u64::from(len) > size {
        return Err(corrupt(format!("block at {offset} of {} is too long", path.display())));
    }
    payload.resize(len as usize, 0);
    reader.read_exact(payload)?;
    Ok((len, crc))
}

/// Whether a whole block whose CRC checks starts at `offset`.
fn is_block(reader: &mut BufReader<File>, offset: u64, size: u64) -> io::Result<bool> {
    if offset + BLOCK_HEADER as u64 > size {
        return Ok(false);
    }
    reader.seek(io::SeekFrom::Start(offset))?;
    let mut header = [0; BLOCK_HEADER];
    reader.read_exact(&mut header)?;
    let (len, crc) = block_header(&header);
    if len == 0 || len > MAX_PAYLOAD || offset + BLOCK_HEADER as u64 + u64::from(len) > size {
        return Ok(false);
    }
    let mut payload = vec![0; len as usize];
    reader.read_exact(&mut payload)?;
    Ok(crc32fast::hash(&payload) == crc)
}

/// The offset of the first block at or after `at`, walking the headers from `first` (a block).
fn first_block_from(reader: &mut BufReader<File>, first: u64, at: u64, size: u64) -> io::Result<u64> {
    let mut offset = first;
    reader.seek(io::SeekFrom::Start(offset))?;
    while offset < at && offset + (BLOCK_HEADER as u64) <= size {
        let mut header = [0; BLOCK_HEADER];
        reader.read_exact(&mut header)?;
        let (len, _) = block_header(&header);
        if len == 0 {
            break;
        }
        reader.seek_relative(i64::from(len))?;
        offset += BLOCK_HEADER as u64 + u64::from(len);
    }
    Ok(offset)
}

#[cfg(test)]
mod tests {
    use super::super::Blocks;
    use super::*;

    fn block(group: &str, stream: &str, events: &[(i64, u64, &str)]) -> Blocks {
        Blocks::of(group, stream, events)
    }

    fn query(after: Option<TailPosition>, limit: usize) -> TailQuery {
        TailQuery { group: "g".into(), stream: None, since_ms: 0, filter: None, after, limit }
    }

    fn texts(page: &TailPage) -> Vec<String> {
        page.events.iter().map(|e| String::from_utf8_lossy(&e.message).into_owned()).collect()
    }

    #[tokio::test]
    async fn a_follower_sees_each_event_once_in_append_order() {
        let dir = tempfile::tempdir().unwrap();
        let log = SegmentLog::open(dir.path()).unwrap();
        log.append(block("g", "a", &[(30, 1, "a30"), (50, 2, "a50")])).await.unwrap();
        log.append(block("other", "a", &[(1, 3, "elsewhere")])).await.unwrap();
        log.append(block("g", "b", &[(10, 4, "b10")])).await.unwrap();

        let page = log.tail(query(None, 2)).await.unwrap();
        assert_eq!(texts(&page), ["a30", "a50"]);
        let page = log.tail(query(Some(page.next), 10)).await.unwrap();
        assert_eq!(texts(&page), ["b10"], "appended order, not timestamp order");
        assert_eq!(page.next, log.end());
        // nothing new
        let empty = log.tail(query(Some(page.next), 10)).await.unwrap();
        assert!(empty.events.is_empty());
        assert_eq!(empty.next, page.next);

        // a page cut inside a block goes on inside it
        let first = log.tail(query(None, 1)).await.unwrap();
        assert_eq!(texts(&first), ["a30"]);
        assert_eq!(first.next.skip, 1);
        assert_eq!(texts(&log.tail(query(Some(first.next), 1)).await.unwrap()), ["a50"]);

        // a waiting follower wakes up for the next append
        let waiter = log.wait_past(page.next, Duration::from_secs(5));
        let appended = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            log.append(block("g", "a", &[(60, 5, "a60")])).await.unwrap();
        };
        let (woke, ()) = tokio::join!(waiter, appended);
        assert!(woke);
        assert_eq!(texts(&log.tail(query(Some(page.next), 10)).await.unwrap()), ["a60"]);
        assert!(!log.wait_past(log.end(), Duration::from_millis(20)).await);
    }

    #[tokio::test]
    async fn since_filter_and_stream_narrow_the_tail() {
        let dir = tempfile::tempdir().unwrap();
        let log = SegmentLog::open(dir.path()).unwrap();
        log.append(block("g", "a", &[(10, 1, "old a"), (40, 2, "new a ERROR")])).await.unwrap();
        log.append(block("g", "b", &[(50, 3, "new b")])).await.unwrap();
        let mut q = query(None, 10);
        q.since_ms = 20;
        assert_eq!(texts(&log.tail(q.clone()).await.unwrap()), ["new a ERROR", "new b"]);
        q.filter = Some("ERROR".into());
        assert_eq!(texts(&log.tail(q.clone()).await.unwrap()), ["new a ERROR"]);
        q.filter = None;
        q.stream = Some("b".into());
        assert_eq!(texts(&log.tail(q).await.unwrap()), ["new b"]);
    }

    #[tokio::test]
    async fn a_made_up_position_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let log = SegmentLog::open(dir.path()).unwrap();
        log.append(block("g", "a", &[(1, 1, "one")])).await.unwrap();
        let second = log.end();
        log.append(block("g", "a", &[(2, 2, "two")])).await.unwrap();
        log.append(block("g", "a", &[(3, 3, "three")])).await.unwrap();
        // inside the second block: goes on from the third
        let inside = TailPosition { segment: second.segment, offset: second.offset + 5, skip: 0 };
        assert_eq!(texts(&log.tail(query(Some(inside), 10)).await.unwrap()), ["three"]);
        for made_up in [
            TailPosition { segment: 0, offset: 0, skip: 0 },
            TailPosition { segment: 1, offset: 3, skip: 99 },
            TailPosition { segment: 1, offset: u64::MAX - 3, skip: 0 },
            TailPosition { segment: 999, offset: 1, skip: 0 },
        ] {
            assert!(log.tail(query(Some(made_up), 10)).await.is_ok(), "{made_up:?}");
        }
        assert_eq!(TailPosition::decode(&second.encode()), Some(second));
        for text in ["", "1.2", "1.2.3.4", "a.b.c", "-1.0.0"] {
            assert_eq!(TailPosition::decode(text), None, "{text}");
        }
    }
}
