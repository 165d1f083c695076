use super::*;

#[tokio::test]
async fn embedded_store_passes_conformance() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    crate::store::conformance::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_commit_keeps_each_batch_atomic_ordered_and_isolated() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let put = |key: &[u8], value: &[u8]| WriteOp::Put {
        table: "g",
        partition: "p".into(),
        clustering: key.to_vec(),
        value: value.to_vec(),
    };
    for round in 0..50u8 {
        // polled in order, so sent in order: the later batch's write of "k" wins; the batch
        // naming a bad table fails alone
        let bad = WriteOp::Put { table: "bad table", partition: "p".into(), clustering: vec![1], value: vec![1] };
        let (first, second, third) = futures::join!(
            store.batch(vec![put(b"k", &[round, 1]), put(&[b'a', round], b"x")]),
            store.batch(vec![bad, put(&[b'b', round], b"y")]),
            store.batch(vec![put(b"k", &[round, 3])]),
        );
        assert!(first.is_ok() && third.is_ok());
        assert!(matches!(second, Err(StoreError::InvalidTable(_))));
        assert_eq!(store.get("g", "p", b"k").await.unwrap(), Some(vec![round, 3]));
        assert_eq!(store.get("g", "p", &[b'a', round]).await.unwrap(), Some(b"x".to_vec()));
        assert_eq!(store.get("g", "p", &[b'b', round]).await.unwrap(), None, "the failed batch wrote nothing");
    }
    // 200 concurrent writers: every batch lands
    let writes = (0..200u32).map(|i| {
        let store = store.clone();
        async move { store.batch(vec![put(&i.to_be_bytes(), b"v"), put(b"final", &i.to_be_bytes())]).await }
    });
    assert!(futures::future::join_all(writes).await.iter().all(Result::is_ok));
    let rows = store.scan("g", "p", None, 1000).await.unwrap();
    assert_eq!(rows.iter().filter(|r| r.clustering.len() == 4).count(), 200);
    drop(store);
    // durable: every write is there after reopening
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.scan("g", "p", None, 1000).await.unwrap().iter().filter(|r| r.clustering.len() == 4).count(), 200);
}

fn put(key: &[u8], value: &[u8]) -> WriteOp {
    WriteOp::Put { table: "s", partition: "p".into(), clustering: key.to_vec(), value: value.to_vec() }
}

/// The sizes of the table files fjall has flushed so far, over every keyspace
fn table_sizes(dir: &Path) -> Vec<u64> {
    let keyspaces = std::fs::read_dir(dir.join("store/keyspaces")).unwrap();
    keyspaces
        .filter_map(|keyspace| std::fs::read_dir(keyspace.unwrap().path().join("tables")).ok())
        .flatten()
        .map(|table| table.unwrap().metadata().unwrap().len())
        .collect()
}

/// The journal's zeros are written ahead of its end (third_party/fjall's patch), so a commit's
/// sync finds its blocks allocated: the active journal keeps its preallocated length and has
/// more blocks on disk than its rows need, and what was written reads back after a reopen.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journal_is_zeroed_ahead_of_its_end() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    for key in 0..20u32 {
        store.batch(vec![put(&key.to_be_bytes(), &[7; 100])]).await.unwrap();
    }
    let journals: Vec<_> = std::fs::read_dir(dir.path().join("store"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jnl"))
        .collect();
    let allocated: Vec<(u64, u64)> = journals
        .iter()
        .map(|path| std::fs::metadata(path).unwrap())
        .map(|meta| (meta.len(), meta.blocks() * 512))
        .collect();
    assert!(
        allocated.iter().any(|&(len, on_disk)| len == 64 << 20 && on_disk >= 512 << 10),
        "no journal with zeros written ahead (length, bytes on disk): {allocated:?}"
    );
    drop(store);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let rows = store.scan("s", "p", None, 100).await.unwrap();
    assert_eq!(rows.len(), 20);
    assert!(rows.iter().all(|row| row.value == [7; 100]));
    store.batch(vec![put(b"after", b"reopen")]).await.unwrap();
    drop(store);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.get("s", "p", b"after").await.unwrap(), Some(b"reopen".to_vec()));
    assert_eq!(store.scan("s", "p", None, 100).await.unwrap().len(), 21);
}

/// Memtables rotated, flushed and retired many times over, into tables large enough to be
/// written out a megabyte at a time (the two paths third_party/lsm-tree's patch changes):
/// every row reads back, before and after a reopen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_survive_memtable_rotations_and_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open_with(dir.path(), Some(2 << 20), STORE_CACHE_BYTES).unwrap();
    // ~1 KiB that does not compress: the key, then bytes from a generator seeded by key and round
    let value = |key: u32, round: u8| {
        let mut state = u64::from(key) << 8 | u64::from(round) | 1 << 63;
        let noise = (0..255).flat_map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state as u32).to_le_bytes()
        });
        key.to_be_bytes().into_iter().chain(noise).collect::<Vec<u8>>()
    };
    // four rounds over 2,000 keys: ~8 MiB through 2 MiB memtables
    for round in 0..4u8 {
        for chunk in (0..2000u32).collect::<Vec<_>>().chunks(50) {
            let ops = chunk.iter().map(|&key| put(&key.to_be_bytes(), &value(key, round))).collect();
            store.batch(ops).await.unwrap();
        }
    }
    // flushes run on fjall's workers: wait for them to show on disk
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while table_sizes(dir.path()).len() < 3 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let sizes = table_sizes(dir.path());
    assert!(sizes.len() >= 3, "memtables were not rotated and flushed: {sizes:?}");
    assert!(sizes.iter().any(|&size| size > 1 << 20), "no table over 1 MiB: {sizes:?}");
    let check = |store: EmbeddedStore| async move {
        for key in (0..2000u32).step_by(97) {
            assert_eq!(store.get("s", "p", &key.to_be_bytes()).await.unwrap(), Some(value(key, 3)));
        }
        let rows = store.scan("s", "p", None, 5000).await.unwrap();
        assert_eq!(rows.len(), 2000);
        assert!(
            rows.iter().all(|row| row.value == value(u32::from_be_bytes(row.clustering[..4].try_into().unwrap()), 3)),
            "a row kept an earlier round's value"
        );
    };
    check(store.clone()).await;
    drop(store);
    check(EmbeddedStore::open(dir.path()).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::await_holding_lock)] // holding the committer back across awaits is the point
async fn staged_writes_are_read_at_once_scanned_once_written_and_durable_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    store.batch(vec![put(b"gone", b"0"), put(b"k", b"0")]).await.unwrap();
    // the committer cannot write while the test holds it
    let hold = store.inner.shared.hold.lock().unwrap();
    let first = store
        .stage(vec![
            put(b"k", b"1"),
            WriteOp::Delete { table: "s", partition: "p".into(), clustering: b"gone".to_vec() },
        ])
        .await
        .unwrap();
    let second = store.stage(vec![put(b"k", b"2"), put(b"new", b"n")]).await.unwrap();
    assert_eq!(store.get("s", "p", b"k").await.unwrap(), Some(b"2".to_vec()), "the newest staged write");
    assert_eq!(store.get("s", "p", b"gone").await.unwrap(), None, "a staged delete");
    assert_eq!(store.get("s", "p", b"new").await.unwrap(), Some(b"n".to_vec()));
    assert_eq!(store.get("s", "other", b"k").await.unwrap(), None);
    // a scan of the partition waits for the staged rows; another partition's does not
    assert!(store.scan("s", "other", None, 10).await.unwrap().is_empty());
    let scan = tokio::spawn({
        let store = store.clone();
        async move { store.scan("s", "p", None, 10).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!scan.is_finished(), "the scan ran before the staged rows were written");
    drop(hold);
    let rows = scan.await.unwrap().unwrap();
    let rows: Vec<_> = rows.iter().map(|r| (r.clustering.as_slice(), r.value.as_slice())).collect();
    assert_eq!(rows, vec![(&b"k"[..], &b"2"[..]), (&b"new"[..], &b"n"[..])]);
    first.wait().await.unwrap();
    second.wait().await.unwrap();
    assert!(store.inner.shared.staging.is_empty(), "written rows leave the staged map");
    drop(store);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.get("s", "p", b"k").await.unwrap(), Some(b"2".to_vec()));
    assert_eq!(store.get("s", "p", b"gone").await.unwrap(), None);
}

#[tokio::test]
async fn a_failed_commit_of_staged_writes_fails_the_store_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    // a plain batch that fails fails alone
    store.inner.shared.fail_next.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(store.batch(vec![put(b"a", b"1")]).await.is_err());
    store.healthy().unwrap();
    store.batch(vec![put(b"a", b"2")]).await.unwrap();
    // a staged one that fails was read by others: everything is refused from then on
    store.inner.shared.fail_next.store(true, std::sync::atomic::Ordering::SeqCst);
    let durable = store.stage(vec![put(b"a", b"3")]).await.unwrap();
    assert!(durable.wait().await.is_err());
    let refused = store.get("s", "p", b"a").await.unwrap_err().to_string();
    assert!(refused.contains("refuses reads and writes until engage restarts"), "{refused}");
    assert!(store.healthy().is_err());
    assert!(store.scan("s", "p", None, 10).await.is_err());
    assert!(store.batch(vec![put(b"b", b"1")]).await.is_err());
    assert!(store.stage(vec![put(b"b", b"1")]).await.is_err());
    drop(store);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.get("s", "p", b"a").await.unwrap(), Some(b"2".to_vec()), "what the disk holds");
}

#[tokio::test]
async fn embedded_store_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = EmbeddedStore::open(dir.path()).unwrap();
        store.put("t", "p", b"k", b"v".to_vec()).await.unwrap();
    }
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.get("t", "p", b"k").await.unwrap(), Some(b"v".to_vec()));
}

/// A burst of writes fills memtables; once the store has gone `IDLE_FLUSH_AFTER` without a write
/// they are flushed and freed (their memory goes back, issue 57: no old tree version keeps a
/// flushed memtable) and every row still reads back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memtables_are_flushed_once_the_store_is_idle() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let value = |key: u32| key.to_be_bytes().iter().cycle().take(1024).copied().collect::<Vec<u8>>();
    for chunk in (0..6000u32).collect::<Vec<_>>().chunks(100) {
        store.batch(chunk.iter().map(|&key| put(&key.to_be_bytes(), &value(key))).collect()).await.unwrap();
    }
    let held = || store.inner.shared.memtables_held();
    assert!(held() >= IDLE_FLUSH_MIN_BYTES, "the burst is in memtables: {}", held());
    let deadline = std::time::Instant::now() + IDLE_FLUSH_AFTER + std::time::Duration::from_secs(20);
    while held() > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(held(), 0, "memtables (written or flushed) still held");
    assert!(!table_sizes(dir.path()).is_empty(), "flushed to table files");
    for key in (0..6000u32).step_by(101) {
        assert_eq!(store.get("s", "p", &key.to_be_bytes()).await.unwrap(), Some(value(key)));
    }
}

#[tokio::test]
async fn reads_of_a_table_never_written_create_nothing() {
    // a read on a full disk must not write: reading a table creates no keyspace on disk
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.get("never_written", "p", b"k").await.unwrap(), None);
    assert!(store.scan("never_written", "p", None, 10).await.unwrap().is_empty());
    assert!(!store.inner.shared.db.keyspace_exists("never_written"));
    assert!(matches!(store.scan("bad table", "p", None, 1).await, Err(StoreError::InvalidTable(_))));
    store
        .batch(vec![WriteOp::Put {
            table: "written",
            partition: "p".into(),
            clustering: b"k".to_vec(),
            value: b"v".to_vec(),
        }])
        .await
        .unwrap();
    assert_eq!(store.scan("written", "p", None, 10).await.unwrap().len(), 1);
}

/// A scan reads its first rows on the caller's thread and the rest on the blocking pool: across
/// that seam every limit and cursor gives the rows in order, none twice, none missed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_across_the_inline_rows_give_every_row_once_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let keys: Vec<Vec<u8>> = (0..150u32).map(|n| n.to_be_bytes().to_vec()).collect();
    store.batch(keys.iter().map(|key| put(key, b"v")).collect()).await.unwrap();
    for limit in [1, INLINE_SCAN_ROWS - 1, INLINE_SCAN_ROWS, INLINE_SCAN_ROWS + 1, 100, 150, 1000] {
        for start in [None, Some(0usize), Some(INLINE_SCAN_ROWS - 1), Some(100)] {
            let after = start.map(|n| keys[n].clone());
            let rows = store.scan("s", "p", after.as_deref(), limit).await.unwrap();
            let from = start.map_or(0, |n| n + 1);
            let want: Vec<&Vec<u8>> = keys[from..].iter().take(limit).collect();
            let got: Vec<&Vec<u8>> = rows.iter().map(|row| &row.clustering).collect();
            assert_eq!(got, want, "limit {limit} after {start:?}");
        }
    }
}

/// Every file under `dir` that holds `needle`, with its size.
fn files_holding(dir: &Path, needle: &[u8]) -> Vec<(std::path::PathBuf, usize)> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    found.push((path, bytes.len()));
                }
            }
        }
    }
    found
}

/// A purge leaves no byte of a deleted or overwritten row in any file: the journal at once, the
/// table files once the compaction that follows is done (its marker gone); rows kept stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purge_leaves_no_byte_of_deleted_or_overwritten_rows_in_any_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let row = |key: &str, value: &str| WriteOp::Put {
        table: "customers",
        partition: "brand".into(),
        clustering: key.as_bytes().to_vec(),
        value: value.as_bytes().to_vec(),
    };
    store.batch(vec![row("9811100001", "Zubeda Quraishi 9811100001"), row("9811100002", "Kept Person")]).await.unwrap();
    // some of it reaches table files before the erasure, some stays in the journal
    store.purge_unreachable().await.unwrap();
    wait_purged(dir.path()).await;
    store.batch(vec![row("other", "Zubeda Quraishi wrote again")]).await.unwrap();
    let gone = WriteOp::Delete { table: "customers", partition: "brand".into(), clustering: b"9811100001".to_vec() };
    store.batch(vec![gone, row("other", "erased")]).await.unwrap();
    assert!(!files_holding(dir.path(), b"Zubeda").is_empty(), "before the purge the bytes are on disk");

    let started = std::time::Instant::now();
    store.purge_unreachable().await.unwrap();
    println!("journal step {:?}", started.elapsed());
    let journals: Vec<_> = files_holding(dir.path(), b"Zubeda")
        .into_iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "jnl"))
        .collect();
    assert_eq!(journals, [], "no journal holds them when the purge answers");
    wait_purged(dir.path()).await;
    println!("compaction done {:?}", started.elapsed());
    assert_eq!(files_holding(dir.path(), b"Zubeda"), [], "no file holds them after the compaction");
    assert_eq!(files_holding(dir.path(), b"9811100001"), []);
    assert_eq!(store.get("customers", "brand", b"9811100002").await.unwrap(), Some(b"Kept Person".to_vec()));
    assert!(!files_holding(dir.path(), b"Kept Person").is_empty(), "what is kept is on disk");
}

/// Waits until the store's compaction after a purge is done (at most 30 s).
async fn wait_purged(dir: &Path) {
    let marker = dir.join("purge-pending");
    for _ in 0..300 {
        if !marker.exists() {
            // the replaced table files are deleted by fjall's retire thread
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the compaction after the purge did not end in 30 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement: ENGAGE_PURGE_MB=100 cargo nextest run -p engage-storage --run-ignored only -E 'test(purge_time)' --no-capture"]
async fn purge_time_of_a_store() {
    let megabytes: usize = std::env::var("ENGAGE_PURGE_MB").ok().and_then(|m| m.parse().ok()).unwrap_or(100);
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let value = vec![b'x'; 1000];
    for chunk in 0..megabytes {
        let ops = (0..1000u32)
            .map(|i| WriteOp::Put {
                table: "rows",
                partition: format!("brand-{}", i % 50),
                clustering: format!("{chunk:06}-{i:04}").into_bytes(),
                value: value.iter().enumerate().map(|(n, b)| b ^ ((n as u32 + i) % 7) as u8).collect(),
            })
            .collect();
        store.batch(ops).await.unwrap();
    }
    let started = std::time::Instant::now();
    store.purge_unreachable().await.unwrap();
    let journal = started.elapsed();
    wait_purged(dir.path()).await;
    println!("{megabytes} MB written: journal step {journal:?}, compaction done after {:?}", started.elapsed());
}
