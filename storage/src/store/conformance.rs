//! The conformance suite every [`Store`] backend passes. Backends call [`run_all`] from their tests
//! with a fresh, empty store.

use super::{Store, WriteOp};

/// Runs every check; panics (failing the calling test) on the first violation.
pub async fn run_all(store: &dyn Store) {
    get_put_delete(store).await;
    scan_orders_and_pages(store).await;
    partitions_are_isolated(store).await;
    batches_apply_every_write(store).await;
    a_later_write_of_a_row_in_a_batch_wins(store).await;
    staged_batches_are_read_in_order_before_they_are_durable(store).await;
    hostile_ids_name_distinct_rows(store).await;
    many_rows_read_at_once_answer_as_single_reads(store).await;
}

/// [`Store::get_many`] answers each row as [`Store::get`] does, in the order asked: rows written,
/// deleted, never written, staged and not yet durable, asked twice, and more than one batched
/// read holds (600 rows).
async fn many_rows_read_at_once_answer_as_single_reads(store: &dyn Store) {
    let put = |partition: &str, clustering: &[u8], value: &[u8]| WriteOp::Put {
        table: "conf_many",
        partition: partition.to_owned(),
        clustering: clustering.to_vec(),
        value: value.to_vec(),
    };
    let mut ops: Vec<WriteOp> = (0..300u32).map(|i| put("p", &i.to_be_bytes(), format!("v{i}").as_bytes())).collect();
    ops.push(put("gone", b"x", b"1"));
    store.batch(ops).await.unwrap();
    store
        .batch(vec![WriteOp::Delete { table: "conf_many", partition: "gone".into(), clustering: b"x".to_vec() }])
        .await
        .unwrap();
    let staged =
        store.stage(vec![put("staged", b"s", b"new"), put("p", &7u32.to_be_bytes(), b"changed")]).await.unwrap();
    let mut asked: Vec<(String, Vec<u8>)> = (0..600u32).map(|i| ("p".to_owned(), i.to_be_bytes().to_vec())).collect();
    asked.push(("gone".into(), b"x".to_vec()));
    asked.push(("staged".into(), b"s".to_vec()));
    asked.push(("p".into(), 3u32.to_be_bytes().to_vec()));
    asked.push(("other".into(), 3u32.to_be_bytes().to_vec()));
    let rows: Vec<(&'static str, &str, &[u8])> =
        asked.iter().map(|(partition, clustering)| ("conf_many", partition.as_str(), clustering.as_slice())).collect();
    let many = store.get_many(&rows).await.unwrap();
    assert_eq!(many.len(), rows.len());
    for (&(table, partition, clustering), got) in rows.iter().zip(&many) {
        assert_eq!(got, &store.get(table, partition, clustering).await.unwrap(), "{partition} {clustering:?}");
    }
    assert_eq!(many[7].as_deref(), Some(&b"changed"[..]), "a staged row is read as staged");
    assert_eq!(many[299].as_deref(), Some(&b"v299"[..]));
    assert_eq!(many[300], None, "never written");
    assert_eq!(many[600], None, "deleted");
    assert_eq!(many[601].as_deref(), Some(&b"new"[..]));
    assert_eq!(many[602].as_deref(), Some(&b"v3"[..]), "asked twice");
    assert_eq!(many[603], None, "another partition's row of the same clustering");
    staged.wait().await.unwrap();
    assert!(store.get_many(&[]).await.unwrap().is_empty());
}

/// Partitions and clusterings holding the characters ids hold in the wild (and those a naive
/// join or a subject would confuse) each name their own row: no write lands in another's row and
/// no scan of one partition sees another's.
async fn hostile_ids_name_distinct_rows(store: &dyn Store) {
    let long = "p".repeat(1000);
    let partitions = [
        "c",
        "c|vip",
        "c|vip|o1",
        "c\\|vip",
        "a.b",
        "a~2Eb",
        "a~7E2Eb",
        "a/b",
        "a\0b",
        "a",
        "a\0",
        "",
        " ",
        "*",
        ">",
        "a.*",
        "ü",
        "ü|",
        "\u{1F600}",
        long.as_str(),
    ];
    let clusterings: [&[u8]; 6] = [b"", b"|", b"\0", b"a|b", b"a", "ü".as_bytes()];
    let mut ops = Vec::new();
    for (p, partition) in partitions.iter().enumerate() {
        for (c, clustering) in clusterings.iter().enumerate() {
            let value = format!("{p}:{c}").into_bytes();
            ops.push(WriteOp::Put {
                table: "conf_hostile",
                partition: (*partition).to_owned(),
                clustering: clustering.to_vec(),
                value,
            });
        }
    }
    store.batch(ops).await.unwrap();
    for (p, partition) in partitions.iter().enumerate() {
        for (c, clustering) in clusterings.iter().enumerate() {
            let got = store.get("conf_hostile", partition, clustering).await.unwrap();
            assert_eq!(got, Some(format!("{p}:{c}").into_bytes()), "row ({partition:?}, {clustering:?})");
        }
        let rows = store.scan("conf_hostile", partition, None, 100).await.unwrap();
        let values: Vec<String> = rows.iter().map(|r| String::from_utf8_lossy(&r.value).into_owned()).collect();
        assert_eq!(values.len(), clusterings.len(), "partition {partition:?} sees {values:?}");
        assert!(values.iter().all(|v| v.starts_with(&format!("{p}:"))), "partition {partition:?} sees {values:?}");
    }
}

async fn get_put_delete(store: &dyn Store) {
    assert_eq!(store.get("conf_kv", "p", b"a").await.unwrap(), None);
    store.put("conf_kv", "p", b"a", b"1".to_vec()).await.unwrap();
    assert_eq!(store.get("conf_kv", "p", b"a").await.unwrap(), Some(b"1".to_vec()));
    store.put("conf_kv", "p", b"a", b"2".to_vec()).await.unwrap();
    assert_eq!(store.get("conf_kv", "p", b"a").await.unwrap(), Some(b"2".to_vec()));
    store
        .batch(vec![WriteOp::Delete { table: "conf_kv", partition: "p".into(), clustering: b"a".to_vec() }])
        .await
        .unwrap();
    assert_eq!(store.get("conf_kv", "p", b"a").await.unwrap(), None);
}

async fn scan_orders_and_pages(store: &dyn Store) {
    for key in [b"c".as_slice(), b"a", b"b", b"\xff", b"\x00"] {
        store.put("conf_scan", "p", key, key.to_vec()).await.unwrap();
    }
    let all = store.scan("conf_scan", "p", None, 100).await.unwrap();
    let keys: Vec<&[u8]> = all.iter().map(|r| r.clustering.as_slice()).collect();
    assert_eq!(keys, vec![b"\x00".as_slice(), b"a", b"b", b"c", b"\xff"]);
    let page = store.scan("conf_scan", "p", Some(b"a"), 2).await.unwrap();
    let keys: Vec<&[u8]> = page.iter().map(|r| r.clustering.as_slice()).collect();
    assert_eq!(keys, vec![b"b".as_slice(), b"c"]);
    assert!(store.scan("conf_scan", "p", Some(b"\xff"), 10).await.unwrap().is_empty());
}

async fn partitions_are_isolated(store: &dyn Store) {
    store.put("conf_iso", "ab", b"x", b"1".to_vec()).await.unwrap();
    store.put("conf_iso", "a", b"bx", b"2".to_vec()).await.unwrap();
    let rows = store.scan("conf_iso", "a", None, 10).await.unwrap();
    assert_eq!(rows.len(), 1, "partition 'a' must not see rows of partition 'ab'");
    assert_eq!(rows[0].value, b"2".to_vec());
    assert_eq!(store.get("conf_iso_other", "a", b"bx").await.unwrap(), None);
}

async fn batches_apply_every_write(store: &dyn Store) {
    let ops = (0..50u8)
        .map(|i| WriteOp::Put {
            table: "conf_batch",
            partition: format!("p{}", i % 3),
            clustering: vec![i],
            value: vec![i],
        })
        .collect();
    store.batch(ops).await.unwrap();
    let total: usize = {
        let mut n = 0;
        for p in 0..3 {
            n += store.scan("conf_batch", &format!("p{p}"), None, 100).await.unwrap().len();
        }
        n
    };
    assert_eq!(total, 50);
}

async fn a_later_write_of_a_row_in_a_batch_wins(store: &dyn Store) {
    let put = |key: &[u8], value: &[u8]| WriteOp::Put {
        table: "conf_last",
        partition: "p".into(),
        clustering: key.to_vec(),
        value: value.to_vec(),
    };
    let delete = |key: &[u8]| WriteOp::Delete { table: "conf_last", partition: "p".into(), clustering: key.to_vec() };
    store
        .batch(vec![put(b"k", b"1"), put(b"j", b"1"), delete(b"j"), put(b"k", b"2"), delete(b"m"), put(b"m", b"1")])
        .await
        .unwrap();
    assert_eq!(store.get("conf_last", "p", b"k").await.unwrap(), Some(b"2".to_vec()));
    assert_eq!(store.get("conf_last", "p", b"j").await.unwrap(), None);
    assert_eq!(store.get("conf_last", "p", b"m").await.unwrap(), Some(b"1".to_vec()));
}

async fn staged_batches_are_read_in_order_before_they_are_durable(store: &dyn Store) {
    let put = |key: &[u8], value: &[u8]| WriteOp::Put {
        table: "conf_stage",
        partition: "p".into(),
        clustering: key.to_vec(),
        value: value.to_vec(),
    };
    let mut durables = Vec::new();
    for round in 0..20u8 {
        durables.push(store.stage(vec![put(b"k", &[round]), put(&[b'r', round], b"1")]).await.unwrap());
        // a read right after staging sees the batch, before it is durable
        assert_eq!(store.get("conf_stage", "p", b"k").await.unwrap(), Some(vec![round]));
    }
    assert_eq!(store.scan("conf_stage", "p", None, 100).await.unwrap().len(), 21);
    store.batch(vec![put(b"k", b"last")]).await.unwrap();
    for durable in durables {
        durable.wait().await.unwrap();
    }
    assert_eq!(store.get("conf_stage", "p", b"k").await.unwrap(), Some(b"last".to_vec()), "applied in order");
}
