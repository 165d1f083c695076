//! The segment files on disk: names, the block header, a cursor over a block's bytes, and the scan that checks a segment and indexes its blocks (zeros after the last block are the preallocated tail, anything else is corruption).

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

#[allow(unused_imports)]
use super::*;

/// A block header's payload length and CRC.
pub(super) fn block_header(header: &[u8; BLOCK_HEADER]) -> (u32, u32) {
    let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    (len, crc)
}

pub(super) fn corrupt(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// What a block's payload starts with.
pub(super) struct BlockHead<'a> {
    pub(super) group: &'a [u8],
    pub(super) stream: &'a [u8],
    pub(super) count: u32,
    pub(super) span: Span,
}

/// Reads the fields of a payload in order.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.bytes.split_at_checked(n)?;
        self.bytes = rest;
        Some(head)
    }

    pub(super) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    pub(super) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    pub(super) fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.u32()? as usize;
        self.take(len)
    }

    pub(super) fn block_head(&mut self) -> Option<BlockHead<'a>> {
        let (group, stream, count) = (self.bytes()?, self.bytes()?, self.u32()?);
        let (min_ts, max_ts) = (self.u64()? as i64, self.u64()? as i64);
        Some(BlockHead { group, stream, count, span: Span { min_ts, max_ts, count: u64::from(count) } })
    }

    pub(super) fn event(&mut self) -> Option<(i64, u64, &'a [u8])> {
        Some((self.u64()? as i64, self.u64()?, self.bytes()?))
    }
}

pub(super) fn segment_number(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".seg")?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok())?
}

pub(super) fn segment_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:020}.seg"))
}

/// Adds a segment's blocks to the index; returns the length of its valid prefix. Every block's CRC
/// is checked when `verify` (the last segment, which a crash may have cut); in older segments only
/// the headers are read.
pub(super) fn scan_segment(path: &Path, number: u64, verify: bool, index: &mut Index) -> io::Result<u64> {
    let file = File::open(path)?;
    let size = file.metadata()?.len();
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut magic = [0; MAGIC.len()];
    if reader.read_exact(&mut magic).is_err() || &magic != MAGIC {
        if verify && size < MAGIC.len() as u64 {
            // created, then cut before its magic was synced: start it again
            let mut file = OpenOptions::new().write(true).open(path)?;
            file.set_len(0)?;
            file.write_all(MAGIC)?;
            file.sync_all()?;
            return Ok(MAGIC.len() as u64);
        }
        return Err(corrupt(format!("{} is not an engage log segment", path.display())));
    }
    let mut offset = MAGIC.len() as u64;
    let mut payload = Vec::new();
    loop {
        let mut header = [0; BLOCK_HEADER];
        if offset + BLOCK_HEADER as u64 > size || reader.read_exact(&mut header).is_err() {
            break;
        }
        let (len, crc) = block_header(&header);
        let end = offset + BLOCK_HEADER as u64 + u64::from(len);
        // a block's payload is never empty: a zero length is the zeros written ahead
        if len == 0 || len > MAX_PAYLOAD || end > size {
            break;
        }
        let head = if verify {
            payload.resize(len as usize, 0);
            reader.read_exact(&mut payload)?;
            if crc32fast::hash(&payload) != crc {
                break;
            }
            Cursor::new(&payload).block_head()
        } else {
            // group and stream names are at most a few KiB: read up to 64 KiB of the head
            let want = (len as usize).min(64 * 1024);
            payload.resize(want, 0);
            reader.read_exact(&mut payload)?;
            reader.seek_relative(i64::from(len) - want as i64)?;
            Cursor::new(&payload).block_head()
        };
        let Some(head) = head else { break };
        index.add(
            &String::from_utf8_lossy(head.group),
            &String::from_utf8_lossy(head.stream),
            number,
            offset,
            head.span,
        );
        offset = end;
    }
    if offset < size && !verify {
        tracing::warn!(segment = %path.display(), offset, size, "a log segment ends in a block that cannot be read; the rest of it is skipped");
    }
    Ok(offset)
}

/// Whether `file` holds only zero bytes from `from` to `to`.
pub(super) fn only_zeros(file: &File, from: u64, to: u64) -> io::Result<bool> {
    let mut buffer = vec![0; 64 * 1024];
    let mut at = from;
    while at < to {
        let want = (to - at).min(buffer.len() as u64) as usize;
        let read = file.read_at(&mut buffer[..want], at)?;
        if read == 0 {
            break;
        }
        if buffer[..read].iter().any(|&b| b != 0) {
            return Ok(false);
        }
        at += read as u64;
    }
    Ok(true)
}
