use super::*;

fn block(group: &str, stream: &str, events: &[(i64, u64, &str)]) -> Blocks {
    Blocks::of(group, stream, events)
}

fn stamps(events: &[LoggedEvent]) -> Vec<(i64, u64)> {
    events.iter().map(|e| (e.timestamp, e.seq)).collect()
}

#[tokio::test]
async fn reads_the_oldest_events_of_a_group_or_a_stream_across_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let log = SegmentLog::open(dir.path()).unwrap();
    log.append(block("g", "a", &[(30, 1, "a30"), (50, 2, "a50")])).await.unwrap();
    log.append(block("g", "b", &[(10, 3, "b10"), (40, 4, "b40")])).await.unwrap();
    log.append(block("g", "a", &[(20, 5, "a20"), (20, 6, "a20bis")])).await.unwrap();
    log.append(block("other", "a", &[(1, 7, "elsewhere")])).await.unwrap();

    let all = log.read("g", None, 10).await.unwrap();
    assert_eq!(stamps(&all), vec![(10, 3), (20, 5), (20, 6), (30, 1), (40, 4), (50, 2)]);
    assert_eq!(all[0].stream, "b");
    assert_eq!(all[0].message, b"b10");
    assert_eq!(stamps(&log.read("g", None, 3).await.unwrap()), vec![(10, 3), (20, 5), (20, 6)]);
    assert_eq!(stamps(&log.read("g", Some("a"), 2).await.unwrap()), vec![(20, 5), (20, 6)]);
    assert!(log.read("g", Some("c"), 5).await.unwrap().is_empty());
    assert!(log.read("none", None, 5).await.unwrap().is_empty());
}

#[tokio::test]
async fn reopening_rebuilds_the_index_and_cuts_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (block("g", "a", &[(1, 1, "one")]), block("g", "a", &[(2, 2, "two")]));
    let whole = (MAGIC.len() + one.bytes.len() + two.bytes.len()) as u64;
    {
        let log = SegmentLog::open(dir.path()).unwrap();
        log.append(one).await.unwrap();
        log.append(two).await.unwrap();
    }
    // a crash during the third write: half a block over the zeros after the second
    let path = segment_path(dir.path(), 1);
    assert!(std::fs::metadata(&path).unwrap().len() >= whole + ZERO_AHEAD / 2, "zeros written ahead");
    let torn = block("g", "a", &[(3, 3, "three")]);
    let file = OpenOptions::new().write(true).open(&path).unwrap();
    file.write_all_at(&torn.bytes[..torn.bytes.len() / 2], whole).unwrap();
    drop(file);

    let log = SegmentLog::open(dir.path()).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), whole, "the torn tail is cut");
    assert_eq!(stamps(&log.read("g", None, 10).await.unwrap()), vec![(1, 1), (2, 2)]);
    log.append(block("g", "a", &[(4, 4, "four")])).await.unwrap();
    drop(log);
    let log = SegmentLog::open(dir.path()).unwrap();
    let events = log.read("g", Some("a"), 10).await.unwrap();
    assert_eq!(stamps(&events), vec![(1, 1), (2, 2), (4, 4)]);
    assert_eq!(events[2].message, b"four");
}

#[tokio::test]
async fn a_corrupt_block_in_the_last_segment_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (block("g", "a", &[(1, 1, "one")]), block("g", "a", &[(2, 2, "two")]));
    // the last byte of the second block, before the zeros written ahead
    let last = MAGIC.len() + one.bytes.len() + two.bytes.len() - 1;
    {
        let log = SegmentLog::open(dir.path()).unwrap();
        log.append(one).await.unwrap();
        log.append(two).await.unwrap();
    }
    let path = segment_path(dir.path(), 1);
    let mut bytes = std::fs::read(&path).unwrap();
    assert_ne!(bytes[last], 0);
    bytes[last] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let log = SegmentLog::open(dir.path()).unwrap();
    assert_eq!(stamps(&log.read("g", None, 10).await.unwrap()), vec![(1, 1)]);
}

#[tokio::test]
async fn blocks_go_over_zeros_kept_ahead_which_reopening_cuts_and_reads_skip() {
    let dir = tempfile::tempdir().unwrap();
    let path = segment_path(dir.path(), 1);
    let message = "m".repeat(1000);
    let size = block("g", "a", &[(0, 0, message.as_str())]).bytes.len() as u64;
    let (mut end, mut sizes) = (MAGIC.len() as u64, Vec::new());
    {
        let log = SegmentLog::open(dir.path()).unwrap();
        // 2000 blocks of ~1 KiB: about two MiB, so the zeros are topped up several times
        for i in 0..2000i64 {
            log.append(block("g", "a", &[(i, i as u64, message.as_str())])).await.unwrap();
            end += size;
            let file_size = std::fs::metadata(&path).unwrap().len();
            assert!(file_size >= end + ZERO_AHEAD / 2, "write {i}: {file_size} bytes for {end} of blocks");
            assert!(file_size <= end + ZERO_AHEAD, "write {i}: {file_size} bytes for {end} of blocks");
            sizes.push(file_size);
        }
        sizes.dedup();
        assert!((3..=8).contains(&sizes.len()), "the size changed in {} writes of 2000", sizes.len());
        let file = File::open(&path).unwrap();
        assert!(only_zeros(&file, end, end + ZERO_AHEAD / 2).unwrap());
        assert_eq!(log.read("g", None, 5000).await.unwrap().len(), 2000);
    }
    let log = SegmentLog::open(dir.path()).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), end, "reopening cuts the zeros");
    log.append(block("g", "b", &[(5000, 5000, "after")])).await.unwrap();
    drop(log);
    let log = SegmentLog::open(dir.path()).unwrap();
    let events = log.read("g", None, 5000).await.unwrap();
    assert_eq!(events.len(), 2001);
    assert_eq!(events[2000].message, b"after");
}

#[tokio::test]
async fn concurrent_writes_share_syncs_and_a_full_segment_rolls_over() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(SegmentLog::open(dir.path()).unwrap());
    let message = "x".repeat(512 * 1024);
    let writes = (0..160i64).map(|i| {
        let (log, message) = (log.clone(), message.clone());
        tokio::spawn(async move { log.append(block("g", "a", &[(i, i as u64, message.as_str())])).await })
    });
    for write in futures::future::join_all(writes).await {
        write.unwrap().unwrap();
    }
    // 160 × 512 KiB = 80 MiB: more than one segment
    assert!(segment_path(dir.path(), 2).exists());
    let events = log.read("g", None, 1000).await.unwrap();
    assert_eq!(events.len(), 160);
    assert!(events.windows(2).all(|w| w[0].timestamp < w[1].timestamp));
    drop(log);
    let log = SegmentLog::open(dir.path()).unwrap();
    assert_eq!(log.read("g", None, 1000).await.unwrap().len(), 160);
    let page = log.read("g", None, 3).await.unwrap();
    assert_eq!(stamps(&page), vec![(0, 0), (1, 1), (2, 2)]);
}

#[tokio::test]
async fn a_full_segment_is_cut_to_its_blocks_before_the_next_starts() {
    let dir = tempfile::tempdir().unwrap();
    let log = SegmentLog::open(dir.path()).unwrap();
    let message = "x".repeat(100_000);
    let size = block("g", "a", &[(0, 0, message.as_str())]).bytes.len() as u64;
    // 700 × ~100 KB: the first segment fills while zeros are still written ahead of it
    for i in 0..700i64 {
        log.append(block("g", "a", &[(i, i as u64, message.as_str())])).await.unwrap();
    }
    assert!(segment_path(dir.path(), 2).exists());
    let first = std::fs::metadata(segment_path(dir.path(), 1)).unwrap().len();
    assert_eq!((first - MAGIC.len() as u64) % size, 0, "{first} bytes are not whole blocks of {size}");
    assert!(first > SEGMENT_BYTES - size);
    drop(log);
    let log = SegmentLog::open(dir.path()).unwrap();
    assert_eq!(log.read("g", None, 1000).await.unwrap().len(), 700);
}

#[tokio::test]
async fn the_index_keeps_one_run_per_segment_and_stream_however_many_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let log = SegmentLog::open(dir.path()).unwrap();
    // 60 blocks, streams interleaved, each block's events later than the last but one
    for i in 0..60i64 {
        let stream = if i % 2 == 0 { "a" } else { "b" };
        let ts = 1000 - i * 10;
        log.append(block("g", stream, &[(ts, i as u64, "m"), (ts + 5, 100 + i as u64, "n")])).await.unwrap();
    }
    {
        let index = log.index.read().unwrap();
        let streams = &index.groups["g"];
        for (name, runs) in streams {
            assert_eq!(runs.len(), 1, "{name}: one run in one segment");
            assert_eq!(runs[0].span.count, 60, "{name}");
        }
        assert_eq!((streams["a"][0].span.min_ts, streams["a"][0].span.max_ts), (420, 1005));
    }
    // the oldest events are those written last, of both streams
    let oldest = log.read("g", None, 3).await.unwrap();
    assert_eq!(stamps(&oldest), vec![(410, 59), (415, 159), (420, 58)]);
    assert_eq!(oldest.iter().map(|e| e.stream.as_str()).collect::<Vec<_>>(), vec!["b", "b", "a"]);
    assert_eq!(stamps(&log.read("g", Some("a"), 2).await.unwrap()), vec![(420, 58), (425, 158)]);
    assert_eq!(log.read("g", None, 1000).await.unwrap().len(), 120);
}

#[tokio::test]
async fn a_group_read_of_interleaved_streams_reads_each_segment_once_and_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    let log = SegmentLog::open(dir.path()).unwrap();
    let message = "x".repeat(512 * 1024);
    // 136 × 512 KiB: two segments, four streams interleaved in both, times out of order
    let mut written = Vec::new();
    for i in 0..136u64 {
        let (stream, ts) = (format!("s{}", i % 4), ((i * 7919) % 1000) as i64);
        log.append(block("g", &stream, &[(ts, i, message.as_str())])).await.unwrap();
        written.push((ts, i, stream));
    }
    assert!(segment_path(dir.path(), 2).exists());
    written.sort();
    for limit in [1, 10, 136] {
        let read = log.read("g", None, limit).await.unwrap();
        let expected: Vec<(i64, u64)> = written.iter().take(limit).map(|(ts, seq, _)| (*ts, *seq)).collect();
        assert_eq!(stamps(&read), expected, "limit {limit}");
        assert!(read.iter().zip(&written).all(|(event, (_, _, stream))| &event.stream == stream));
    }
    let one: Vec<(i64, u64)> =
        written.iter().filter(|(_, _, stream)| stream == "s1").take(5).map(|(ts, seq, _)| (*ts, *seq)).collect();
    assert_eq!(stamps(&log.read("g", Some("s1"), 5).await.unwrap()), one);
    // the group's eight runs (four streams in two segments) are read as two spans
    let runs: Vec<(usize, Run)> = {
        let index = log.index.read().unwrap();
        index.groups["g"].values().flatten().map(|run| (0, *run)).collect()
    };
    assert_eq!(runs.len(), 8);
    let spans = segment_spans(&runs);
    assert_eq!(spans.len(), 2);
    assert!(spans.windows(2).all(|w| w[0].min_ts <= w[1].min_ts));
}

#[test]
fn segment_names_are_twenty_digits() {
    assert_eq!(segment_number("00000000000000000042.seg"), Some(42));
    assert_eq!(segment_number("42.seg"), None);
    assert_eq!(segment_number("0000000000000000004x.seg"), None);
    assert_eq!(segment_path(Path::new("/d"), 7), Path::new("/d/00000000000000000007.seg"));
}
