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
