//! The embedded log sink's own storage: an append-only segment log.
//!
//! Log events are only ever appended and read back oldest first, so they are not kept in the LSM
//! tree (issue 13: its memtable, flushes and compactions sorted and rewrote what is only ever
//! appended). They go to segment files in `<data_dir>/logs/`:
//!
//! - **Segments.** `00000000000000000001.seg`, `…0002.seg`, …: an 8-byte magic, then blocks. A
//!   new segment starts when the active one holds [`SEGMENT_BYTES`]; older ones are never written
//!   again.
//! - **Blocks.** One block holds the events of one (group, stream) from one write, sorted by time:
//!   `len u32 | crc32 u32 | payload`, payload `group_len u32 | group | stream_len u32 | stream |
//!   count u32 | min_ts i64 | max_ts i64 | count × (ts i64 | seq u64 | len u32 | message)`, all
//!   little-endian; the CRC covers the payload.
//! - **Group commit.** One thread appends. It takes every write that queued while it was busy,
//!   appends them all, syncs the file once (`fdatasync`) and only then answers them: an event is
//!   acknowledged after it is on disk, and concurrent writers share one sync.
//! - **Zeroed ahead.** The active segment is kept written with zeros (and synced) for
//!   [`ZERO_AHEAD`] bytes past its last block, and blocks are written over those zeros. So a
//!   sync after a write changes no file size and no block allocation: `fdatasync` flushes the
//!   data alone and does not write the inode too (issue 13: in a microbenchmark of 600-byte
//!   writes, 1.3–1.5× the syncs per second, a third less CPU each; single-event log requests
//!   +14%). A zero block header (length 0) ends the blocks when the log is read
//!   back. A segment is cut to its last block (and synced) before the next one starts, so only the
//!   last segment has zeros at its end.
//! - **Index.** For the read route, memory holds one *run* per (segment, group, stream): the
//!   offsets of the stream's first and last block in that segment, its oldest and newest
//!   timestamps and its event count (48 bytes plus the names). So the index grows with segments
//!   times streams, not with events or blocks. A read merges the wanted streams' runs of each
//!   segment into one span, visits the segments in order of their oldest wanted event, scanning
//!   each span once for the wanted streams' blocks (so a group read of many interleaved streams
//!   reads a segment once, not once per stream), and stops as soon as no unvisited segment can
//!   hold an event older than the `limit` it has.
//! - **Opening.** The index is rebuilt from the block headers. In the last segment every block's
//!   CRC is checked and what follows the last whole block is cut off: the zeros written ahead, and
//!   a torn tail (a crash during a write, never acknowledged), which is logged.
//! - **Failure.** When a write or sync fails, what reached the disk is unknown: the log refuses
//!   every later write (`engage_log_segment_failures_total`) until the process is restarted and
//!   has recovered the files.

mod expiry;
mod format;
mod tail;

pub use expiry::{spawn_expiry, Expired, Usage};
use format::*;
pub use tail::{TailPage, TailPosition, TailQuery};

use std::collections::{BinaryHeap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read, Seek, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;

/// Bytes after which a new segment is started.
pub const SEGMENT_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes of zeros kept written past the active segment's last block (see "Zeroed ahead" above).
/// They are topped up, within the sync of the write that used up half of them, so that one sync in
/// about every 512 KiB written pays for a size change.
pub const ZERO_AHEAD: u64 = 1024 * 1024;

const MAGIC: &[u8; 8] = b"ENGLOG1\n";
/// `len` and `crc` before each payload.
const BLOCK_HEADER: usize = 8;
/// Longest payload accepted when reading: a guard against a corrupt length.
const MAX_PAYLOAD: u32 = 1 << 30;

/// One event read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedEvent {
    /// Its timestamp in milliseconds since the epoch.
    pub timestamp: i64,
    /// The tie-breaker among equal timestamps, as written.
    pub seq: u64,
    /// The stream it was written to.
    pub stream: String,
    /// The message, as written.
    pub message: Vec<u8>,
}

/// Blocks encoded by a writer, appended together.
#[derive(Default)]
pub struct Blocks {
    bytes: Vec<u8>,
    blocks: Vec<NewBlock>,
}

struct NewBlock {
    group: String,
    stream: String,
    offset: usize,
    span: Span,
}

impl Blocks {
    /// Adds one block: `events` (timestamp, seq, message) of one stream, sorted by timestamp.
    pub fn push<'a>(&mut self, group: &str, stream: &str, events: impl ExactSizeIterator<Item = (i64, u64, &'a [u8])>) {
        let offset = self.bytes.len();
        let out = &mut self.bytes;
        out.extend_from_slice(&[0; BLOCK_HEADER]);
        put_bytes(out, group.as_bytes());
        put_bytes(out, stream.as_bytes());
        let events_count = events.len() as u64;
        out.extend_from_slice(&(events.len() as u32).to_le_bytes());
        let bounds = out.len();
        out.extend_from_slice(&[0; 16]);
        let (mut min_ts, mut max_ts) = (i64::MAX, i64::MIN);
        for (ts, seq, message) in events {
            min_ts = min_ts.min(ts);
            max_ts = max_ts.max(ts);
            out.extend_from_slice(&ts.to_le_bytes());
            out.extend_from_slice(&seq.to_le_bytes());
            put_bytes(out, message);
        }
        out[bounds..bounds + 8].copy_from_slice(&min_ts.to_le_bytes());
        out[bounds + 8..bounds + 16].copy_from_slice(&max_ts.to_le_bytes());
        let payload = &out[offset + BLOCK_HEADER..];
        let len = payload.len() as u32;
        let crc = crc32fast::hash(payload);
        out[offset..offset + 4].copy_from_slice(&len.to_le_bytes());
        out[offset + 4..offset + 8].copy_from_slice(&crc.to_le_bytes());
        self.blocks.push(NewBlock {
            group: group.to_owned(),
            stream: stream.to_owned(),
            offset,
            span: Span { min_ts, max_ts, count: events_count },
        });
    }

    /// Whether no block was added.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The time span and size of a block's events.
#[derive(Clone, Copy, Debug)]
struct Span {
    min_ts: i64,
    max_ts: i64,
    count: u64,
}

/// The blocks of one stream in one segment: where the first and the last start, and what they
/// hold together.
#[derive(Clone, Copy, Debug)]
struct Run {
    segment: u64,
    first: u64,
    last: u64,
    span: Span,
}

/// group → stream → runs, one per segment the stream has blocks in, in segment order.
#[derive(Default)]
struct Index {
    groups: HashMap<String, HashMap<String, Vec<Run>>>,
}

impl Index {
    fn add(&mut self, group: &str, stream: &str, segment: u64, offset: u64, span: Span) {
        let streams = match self.groups.get_mut(group) {
            Some(streams) => streams,
            None => self.groups.entry(group.to_owned()).or_default(),
        };
        let runs = match streams.get_mut(stream) {
            Some(runs) => runs,
            None => streams.entry(stream.to_owned()).or_default(),
        };
        match runs.last_mut() {
            Some(run) if run.segment == segment => {
                run.last = offset;
                run.span.min_ts = run.span.min_ts.min(span.min_ts);
                run.span.max_ts = run.span.max_ts.max(span.max_ts);
                run.span.count += span.count;
            }
            _ => runs.push(Run { segment, first: offset, last: offset, span }),
        }
    }
}

struct Append {
    blocks: Blocks,
    reply: tokio::sync::oneshot::Sender<Result<(), String>>,
}

/// The segment log of one data dir. Writes go through one appending thread; reads run on the
/// blocking pool.
pub struct SegmentLog {
    dir: PathBuf,
    index: Arc<RwLock<Index>>,
    failed: Arc<OnceLock<String>>,
    appender: mpsc::Sender<Append>,
    /// The end of the last block readers may read: set after the index holds every block before
    /// it (the tail's cursor, [`tail`]).
    end: Arc<tokio::sync::watch::Sender<TailPosition>>,
}

impl SegmentLog {
    /// Opens (or creates) the log in `dir` with segments of [`SEGMENT_BYTES`].
    pub fn open(dir: &Path) -> io::Result<Self> {
        Self::open_with(dir, SEGMENT_BYTES)
    }

    /// Opens (or creates) the log in `dir`, rebuilding the index and cutting a torn tail; a new
    /// segment starts once the active one holds `segment_bytes`.
    pub fn open_with(dir: &Path, segment_bytes: u64) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let mut segments: Vec<u64> = std::fs::read_dir(dir)?
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| segment_number(&entry.file_name().to_string_lossy()))
            .collect();
        segments.sort_unstable();
        let mut index = Index::default();
        let mut active = None;
        for (position, &number) in segments.iter().enumerate() {
            let last = position + 1 == segments.len();
            let valid = scan_segment(&segment_path(dir, number), number, last, &mut index)?;
            if last {
                active = Some((number, valid));
            }
        }
        let active = match active {
            Some((number, valid)) => {
                let file = OpenOptions::new().read(true).write(true).open(segment_path(dir, number))?;
                let size = file.metadata()?.len();
                if size > valid {
                    if !only_zeros(&file, valid, size)? {
                        tracing::warn!(segment = number, valid, size, "cutting a torn tail off the log segment");
                    }
                    file.set_len(valid)?;
                    file.sync_all()?;
                }
                Active { number, file, len: valid, zeroed: valid, limit: segment_bytes }
            }
            None => Active::create(dir, 1, segment_bytes)?,
        };
        let index = Arc::new(RwLock::new(index));
        let failed = Arc::new(OnceLock::new());
        let end = Arc::new(tokio::sync::watch::Sender::new(TailPosition::at(active.number, active.len)));
        let (appender, receiver) = mpsc::channel();
        std::thread::Builder::new().name("engage-log-append".into()).spawn({
            let (dir, index, failed, end) = (dir.to_owned(), index.clone(), failed.clone(), end.clone());
            move || append_loop(&dir, active, &receiver, &index, &failed, &end)
        })?;
        Ok(Self { dir: dir.to_owned(), index, failed, appender, end })
    }

    /// Why the log refuses writes, once a write or sync failed.
    pub fn failure(&self) -> Option<String> {
        self.failed.get().cloned()
    }

    /// Appends `blocks`; returns once they are synced to disk and visible to reads.
    pub async fn append(&self, blocks: Blocks) -> Result<(), String> {
        if let Some(cause) = self.failed.get() {
            return Err(refused(cause));
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.appender.send(Append { blocks, reply }).map_err(|_| "the log appender stopped".to_owned())?;
        answer.await.map_err(|_| "the log appender stopped".to_owned())?
    }

    /// Up to `limit` events of `group` (of one stream, or of all), oldest first (by timestamp,
    /// then sequence).
    pub async fn read(&self, group: &str, stream: Option<&str>, limit: usize) -> io::Result<Vec<LoggedEvent>> {
        self.read_since(group, stream, i64::MIN, limit).await
    }

    /// Like [`SegmentLog::read`], of the events at or after `min_ts` only (what the retention
    /// keeps).
    pub async fn read_since(
        &self,
        group: &str,
        stream: Option<&str>,
        min_ts: i64,
        limit: usize,
    ) -> io::Result<Vec<LoggedEvent>> {
        let (runs, names) = self.wanted_runs(group, stream)?;
        let runs: Vec<(usize, Run)> = runs.into_iter().filter(|(_, run)| run.span.max_ts >= min_ts).collect();
        let (dir, group) = (self.dir.clone(), group.to_owned());
        tokio::task::spawn_blocking(move || read_oldest(&dir, &group, runs, &names, min_ts, limit))
            .await
            .map_err(io::Error::other)?
    }
}

/// Runs, each with the position of its stream's name in the names beside them.
type WantedRuns = (Vec<(usize, Run)>, Vec<String>);

impl SegmentLog {
    /// The runs of `group`'s streams (of one, or of all) in the index now, each with the position
    /// of its stream's name in the names returned.
    fn wanted_runs(&self, group: &str, stream: Option<&str>) -> io::Result<WantedRuns> {
        let mut runs: Vec<(usize, Run)> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let index = self.index.read().map_err(|_| io::Error::other("the log index lock is poisoned"))?;
        if let Some(streams) = index.groups.get(group) {
            for (name, refs) in streams.iter().filter(|(name, _)| stream.is_none_or(|s| s == name.as_str())) {
                names.push(name.clone());
                runs.extend(refs.iter().map(|run| (names.len() - 1, *run)));
            }
        }
        Ok((runs, names))
    }
}

/// The runs of the wanted streams in one segment, read in one pass: from the first run's start to
/// the last run's end, and the oldest event among them.
struct SegmentSpan {
    segment: u64,
    first: u64,
    last: u64,
    min_ts: i64,
    max_ts: i64,
}

/// Merges `runs` into one span per segment.
fn segment_spans(runs: &[(usize, Run)]) -> Vec<SegmentSpan> {
    let mut spans: HashMap<u64, SegmentSpan> = HashMap::new();
    for (_, run) in runs {
        let span = spans.entry(run.segment).or_insert(SegmentSpan {
            segment: run.segment,
            first: run.first,
            last: run.last,
            min_ts: run.span.min_ts,
            max_ts: run.span.max_ts,
        });
        span.first = span.first.min(run.first);
        span.last = span.last.max(run.last);
        span.min_ts = span.min_ts.min(run.span.min_ts);
        span.max_ts = span.max_ts.max(run.span.max_ts);
    }
    let mut spans: Vec<SegmentSpan> = spans.into_values().collect();
    spans.sort_by_key(|span| (span.min_ts, span.segment));
    spans
}

/// Reads the `limit` oldest events of `runs` (the runs of the streams in `names`), visiting each
/// segment once, in order of its oldest wanted event: a group read of many streams whose blocks
/// interleave reads each segment once, not once per stream.
fn read_oldest(
    dir: &Path,
    group: &str,
    runs: Vec<(usize, Run)>,
    names: &[String],
    min_ts: i64,
    limit: usize,
) -> io::Result<Vec<LoggedEvent>> {
    let wanted: HashMap<&[u8], usize> = names.iter().enumerate().map(|(i, name)| (name.as_bytes(), i)).collect();
    // newest kept on top, so that it is the one dropped when an older event comes
    let mut kept: BinaryHeap<(i64, u64, usize, Vec<u8>)> = BinaryHeap::new();
    let mut payload = Vec::new();
    for span in segment_spans(&runs) {
        if kept.len() >= limit && kept.peek().is_some_and(|newest| span.min_ts > newest.0) {
            break;
        }
        let path = segment_path(dir, span.segment);
        let Some(file) = open_unless_expired(&path)? else { continue };
        let mut reader = BufReader::with_capacity(1 << 20, file);
        reader.seek(io::SeekFrom::Start(span.first))?;
        let mut offset = span.first;
        while offset <= span.last {
            let mut header = [0; BLOCK_HEADER];
            reader.read_exact(&mut header)?;
            let (len, crc) = block_header(&header);
            if len > MAX_PAYLOAD {
                return Err(corrupt(format!("block at {offset} of {} is too long", path.display())));
            }
            payload.resize(len as usize, 0);
            reader.read_exact(&mut payload)?;
            offset += BLOCK_HEADER as u64 + u64::from(len);
            let mut cursor = Cursor::new(&payload);
            let head = cursor.block_head().ok_or_else(|| corrupt("a log block is cut short".into()))?;
            if head.group != group.as_bytes() {
                continue;
            }
            let Some(&stream) = wanted.get(head.stream) else { continue };
            if crc32fast::hash(&payload) != crc {
                return Err(corrupt(format!("block at {offset} of {} fails its check", path.display())));
            }
            for _ in 0..head.count {
                let (ts, seq, message) = cursor.event().ok_or_else(|| corrupt("a log block is cut short".into()))?;
                if ts < min_ts {
                    continue;
                }
                if kept.len() >= limit && kept.peek().is_some_and(|newest| (ts, seq) >= (newest.0, newest.1)) {
                    continue;
                }
                kept.push((ts, seq, stream, message.to_vec()));
                if kept.len() > limit {
                    kept.pop();
                }
            }
        }
    }
    Ok(kept
        .into_sorted_vec()
        .into_iter()
        .map(|(timestamp, seq, stream, message)| LoggedEvent { timestamp, seq, stream: names[stream].clone(), message })
        .collect())
}

/// Opens a segment file; None when the expiry deleted it after the caller read the index.
fn open_unless_expired(path: &Path) -> io::Result<Option<File>> {
    match File::open(path) {
        Ok(file) => Ok(Some(file)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
impl Blocks {
    /// One block of `events` (timestamp, sequence, message): how the tests write.
    fn of(group: &str, stream: &str, events: &[(i64, u64, &str)]) -> Self {
        let mut blocks = Blocks::default();
        blocks.push(group, stream, events.iter().map(|(ts, seq, m)| (*ts, *seq, m.as_bytes())));
        blocks
    }
}

/// Why a write is refused once an earlier one failed.
fn refused(cause: &str) -> String {
    format!("the log segments failed earlier and take no writes until restart: {cause}")
}

/// The segment being appended to.
struct Active {
    number: u64,
    file: File,
    /// End of the last block.
    len: u64,
    /// End of the zeros written ahead of `len` (`len` when none are).
    zeroed: u64,
    /// Bytes after which the next segment starts.
    limit: u64,
}

impl Active {
    fn create(dir: &Path, number: u64, limit: u64) -> io::Result<Self> {
        let mut file = OpenOptions::new().create_new(true).write(true).open(segment_path(dir, number))?;
        file.write_all(MAGIC)?;
        file.sync_all()?;
        File::open(dir)?.sync_all()?;
        let len = MAGIC.len() as u64;
        Ok(Self { number, file, len, zeroed: len, limit })
    }

    /// Writes `bytes` after the last block.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all_at(bytes, self.len)?;
        self.len += bytes.len() as u64;
        self.zeroed = self.zeroed.max(self.len);
        Ok(())
    }

    /// Tops the zeros past the last block up to [`ZERO_AHEAD`] once fewer than half of them are
    /// left (never past the segment's size); the caller's sync makes them durable.
    fn zero_ahead(&mut self) -> io::Result<()> {
        let ahead = ZERO_AHEAD.min(self.limit / 4);
        let target = (self.len + ahead).min(self.limit);
        if self.zeroed >= target || self.zeroed - self.len >= ahead / 2 {
            return Ok(());
        }
        let zeros = vec![0; (target - self.zeroed) as usize];
        self.file.write_all_at(&zeros, self.zeroed)?;
        self.zeroed = target;
        Ok(())
    }

    /// Cuts the zeros off a full segment and syncs it, before the next one is created.
    fn seal(&self) -> io::Result<()> {
        self.file.set_len(self.len)?;
        self.file.sync_all()
    }
}

fn append_loop(
    dir: &Path,
    mut active: Active,
    receiver: &mpsc::Receiver<Append>,
    index: &RwLock<Index>,
    failed: &OnceLock<String>,
    end: &tokio::sync::watch::Sender<TailPosition>,
) {
    while let Ok(first) = receiver.recv() {
        let mut batch = vec![first];
        batch.extend(receiver.try_iter());
        let result = match failed.get() {
            Some(cause) => Err(refused(cause)),
            None => write_batch(dir, &mut active, &batch).map_err(|error| {
                tracing::error!(%error, segment = active.number, "log segment write failed; refusing further writes");
                metrics::counter!("engage_log_segment_failures_total").increment(1);
                let _ = failed.set(error.to_string());
                format!("the log segment write failed: {error}")
            }),
        };
        if let Ok(placed) = &result {
            match index.write() {
                Ok(mut index) => {
                    for (append, offsets) in batch.iter().zip(placed) {
                        for (block, &(segment, offset)) in append.blocks.blocks.iter().zip(offsets) {
                            index.add(&block.group, &block.stream, segment, offset, block.span);
                        }
                    }
                }
                Err(_) => tracing::error!("the log index lock is poisoned; reads miss the newest events"),
            }
            end.send_replace(TailPosition::at(active.number, active.len));
        }
        for append in batch {
            let _ = append.reply.send(result.as_ref().map(|_| ()).map_err(Clone::clone));
        }
    }
}

/// Appends every write of `batch`, rolling to a new segment when the active one is full, and
/// syncs. Returns where each write's blocks went: (segment, offset) per block.
fn write_batch(dir: &Path, active: &mut Active, batch: &[Append]) -> io::Result<Vec<Vec<(u64, u64)>>> {
    let started = Instant::now();
    let mut placed = Vec::with_capacity(batch.len());
    for append in batch {
        let bytes = &append.blocks.bytes;
        if active.len > MAGIC.len() as u64 && active.len + bytes.len() as u64 > active.limit {
            active.seal()?;
            *active = Active::create(dir, active.number + 1, active.limit)?;
        }
        placed
            .push(append.blocks.blocks.iter().map(|block| (active.number, active.len + block.offset as u64)).collect());
        active.write(bytes)?;
    }
    active.zero_ahead()?;
    active.file.sync_data()?;
    metrics::histogram!("engage_log_segment_sync_seconds").record(started.elapsed().as_secs_f64());
    Ok(placed)
}

#[cfg(test)]
mod tests;
