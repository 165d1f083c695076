use std::collections::HashMap;

use super::*;

const HOSTILE: [&str; 16] = [
    "",
    "c",
    "vip",
    "c|vip",
    "vip|o1",
    "o1",
    "\\",
    "\\|",
    "|",
    "a.b",
    "a~2Eb",
    "a/b",
    "a\0b",
    "ü|",
    "\u{1F600}",
    "\\\\|",
];

#[test]
fn split_reads_back_what_join_made() {
    for parts in [vec!["a", "b"], vec!["o|1", "x\\y|"], vec!["", ""], vec!["ü|", "\\"]] {
        assert_eq!(split(&join(&parts)), parts);
    }
}

#[test]
fn joined_keys_are_injective_whatever_the_ids_hold() {
    let mut seen: HashMap<String, Vec<&str>> = HashMap::new();
    for a in HOSTILE {
        for b in HOSTILE {
            let parts = vec![a, b];
            if let Some(before) = seen.insert(join(&parts), parts.clone()) {
                panic!("{before:?} and {parts:?} give one key {:?}", join(&parts));
            }
        }
    }
    // lists of different lengths never meet either
    for a in HOSTILE {
        assert!(!seen.contains_key(&join(&[a])), "{a:?} meets a pair");
    }
    // the reported collision: brand `c`'s outlet `vip|o1` against brand `c|vip`'s outlet `o1`
    assert_ne!(wallet_txn("c", "vip|o1", 1), wallet_txn("c|vip", "o1", 1));
    assert_ne!(order("c", "vip|o1", "1"), order("c|vip", "o1", "1"));
}

#[test]
fn ids_without_separator_or_escape_keep_the_bytes_they_always_had() {
    assert_eq!(wallet_txns_partition("brand-1", "outlet 1/ü"), "brand-1|outlet 1/ü");
    assert_eq!(order("b", "o", "A-1").partition, "b|o");
    assert_eq!(open_cart("b", "o", "A/1").clustering, b"b|o/A/1".to_vec());
    assert_eq!(digest(&["a", "b"]), digest(&["a", "b"]));
    assert_ne!(digest(&["a\0b", "c"]), digest(&["a", "b\0c"]));
}

#[test]
fn open_carts_and_pending_rows_do_not_meet() {
    assert_ne!(open_cart("t", "a/b", "c"), open_cart("t", "a", "b/c"));
    assert_ne!(open_cart("t|a", "b", "c"), open_cart("t", "a|b", "c"));
    let at = chrono::Utc::now();
    assert_ne!(pending_redemption(at, "t", "coupon:X"), pending_coupon_use(at, "t", "X"));
    assert_eq!(
        pending_redemption(at, "t", "A-1").clustering,
        format!("{}|t|A-1", instant_key(at)).into_bytes(),
        "an ordinary order keeps its key"
    );
}

#[test]
fn a_brands_journey_types_never_share_the_legacy_partition() {
    assert_ne!(journey_types_partition("all"), LEGACY_JOURNEY_TYPES);
    assert_ne!(journey_type("a", "t"), journey_type("b", "t"));
}
