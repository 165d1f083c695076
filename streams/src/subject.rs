//! Subjects and partitioning.
//!
//! A tenant's partition is a stable hash of its `parent_business_id` modulo the cluster-wide
//! partition count, computed by the publisher (no server-side subject mapping involved). The hash
//! is 64-bit FNV-1a over the id's UTF-8 bytes: fixed, documented, and the same in every version,
//! so a tenant never moves because engage was upgraded.
//!
//! Ids become subject tokens through [`token`]: ASCII letters, digits, `-` and `_` stay; every
//! other byte becomes `~XX` (hex). No `.`, `*`, `>` or whitespace ever reaches a subject.

/// Stream holding every order and ingestion event.
pub const ORDERS_STREAM: &str = "ENGAGE_ORDERS";
/// Subject prefix of [`ORDERS_STREAM`].
pub const ORDERS_PREFIX: &str = "engage.orders";
/// Chat-send subject.
pub const CHAT_MESSAGES: &str = "engage.chat.messages";
/// Chat-receipt subject.
pub const CHAT_RECEIPTS: &str = "engage.chat.receipts";

/// The partition of `tenant` among `partitions`.
pub fn partition_of(tenant: &str, partitions: u32) -> u32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in tenant.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (hash % u64::from(partitions.max(1))) as u32
}

/// A subject-safe token for an id.
pub fn token(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
            out.push(byte as char);
        } else {
            out.push_str(&format!("~{byte:02X}"));
        }
    }
    if out.is_empty() {
        out.push('~');
    }
    out
}

/// `engage.orders.<partition>.<token(tenant)>`.
pub fn order_subject(partition: u32, tenant: &str) -> String {
    format!("{ORDERS_PREFIX}.{partition}.{}", token(tenant))
}

/// The start of every partition consumer's name.
pub const PARTITION_CONSUMER_PREFIX: &str = "engage-p";

/// The durable consumer that delivers one partition's orders: `engage-p<partition>`.
pub fn partition_consumer(partition: u32) -> String {
    format!("{PARTITION_CONSUMER_PREFIX}{partition}")
}

/// The filter that selects one partition's orders: `engage.orders.<partition>.*`.
pub fn partition_filter(partition: u32) -> String {
    format!("{ORDERS_PREFIX}.{partition}.*")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_are_stable_and_in_range() {
        // fixed values: changing the hash would move every tenant
        assert_eq!(partition_of("brand-1", 64), partition_of("brand-1", 64));
        assert_eq!(partition_of("", 64), (0xcbf2_9ce4_8422_2325u64 % 64) as u32);
        for i in 0..1000 {
            assert!(partition_of(&format!("t{i}"), 64) < 64);
        }
        assert_eq!(partition_of("anything", 1), 0);
    }

    #[test]
    fn tokens_are_subject_safe() {
        assert_eq!(token("brand_1-A"), "brand_1-A");
        assert_eq!(token("a.b *>c"), "a~2Eb~20~2A~3Ec");
        assert_eq!(token(""), "~");
        for bad in [".", "*", ">", " ", "\t"] {
            assert!(!token(&format!("x{bad}y")).contains(bad));
        }
    }

    #[test]
    fn tokens_are_injective_tilde_included() {
        // `~` is escaped like any other byte, so an id written as another's escape stays apart
        assert_eq!(token("a~2Eb"), "a~7E2Eb");
        let ids = ["a.b", "a~2Eb", "a~7E2Eb", "~", "", "c|vip", "c~7Cvip", "ü", "a b", "a\0b", "-", "_"];
        let mut seen = std::collections::HashMap::new();
        for id in ids {
            if let Some(other) = seen.insert(token(id), id) {
                panic!("{other:?} and {id:?} share the token {:?}", token(id));
            }
        }
    }
}
