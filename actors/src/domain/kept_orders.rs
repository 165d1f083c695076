//! The orders a customer's row keeps one by one (`MAX_KEPT_ORDERS` of the customer module at most), by
//! `outlet/orderId`: a vector kept sorted by key, stored as the JSON object a map was. A
//! `BTreeMap` allocates a node for eleven entries however few it holds (~1.6 KB for a customer of
//! one order); this holds exactly its entries, so a cached customer costs what it holds (issue 57).

use rust_decimal::Decimal;
use serde::de::Deserializer;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

/// One order's contribution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Contribution {
    /// The amount counted.
    pub amount: Decimal,
    /// Version of the order applied: the envelope's `received_at` then id, so later wins.
    pub version: String,
    /// `orderTime` of that version, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_time: Option<String>,
    /// Loyalty points this order earned.
    #[serde(default, skip_serializing_if = "super::is_default")]
    pub points: i64,
    /// Cancelled or refunded as a whole: kept (so a replay or an older copy is recognised) but
    /// not counted as an order; its `amount` is 0.
    #[serde(default, skip_serializing_if = "super::is_default")]
    pub void: bool,
    /// What was given back on it (the whole amount when void).
    #[serde(default, skip_serializing_if = "Decimal::is_zero")]
    pub refunded: Decimal,
}

/// Orders by `outlet/orderId`, sorted by key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeptOrders(Vec<(String, Contribution)>);

impl KeptOrders {
    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// The order's contribution.
    pub fn get(&self, key: &str) -> Option<&Contribution> {
        self.position(key).ok().map(|at| &self.0[at].1)
    }

    /// The order's contribution, to change.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Contribution> {
        self.position(key).ok().map(|at| &mut self.0[at].1)
    }

    /// Whether the order is kept.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// Keeps `contribution` for `key`, returning the one it replaces. Grows by one entry at a time.
    pub fn insert(&mut self, key: String, contribution: Contribution) -> Option<Contribution> {
        match self.position(&key) {
            Ok(at) => Some(std::mem::replace(&mut self.0[at].1, contribution)),
            Err(at) => {
                self.0.reserve_exact(1);
                self.0.insert(at, (key, contribution));
                None
            }
        }
    }

    /// Forgets the order, returning its contribution.
    pub fn remove(&mut self, key: &str) -> Option<Contribution> {
        self.position(key).ok().map(|at| self.0.remove(at).1)
    }

    /// How many orders are kept.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The orders, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Contribution)> {
        self.0.iter().map(|(key, contribution)| (key, contribution))
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(key, _)| key)
    }

    /// The contributions, in key order.
    pub fn values(&self) -> impl Iterator<Item = &Contribution> {
        self.0.iter().map(|(_, contribution)| contribution)
    }
}

impl Serialize for KeptOrders {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, contribution) in &self.0 {
            map.serialize_entry(key, contribution)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for KeptOrders {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = std::collections::BTreeMap::<String, Contribution>::deserialize(deserializer)?;
        Ok(Self(map.into_iter().collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contribution(amount: i64) -> Contribution {
        Contribution {
            amount: Decimal::from(amount),
            version: "v".into(),
            order_time: None,
            points: 0,
            void: false,
            refunded: Decimal::ZERO,
        }
    }

    #[test]
    fn kept_orders_read_and_write_as_the_map_they_were() {
        let mut kept = KeptOrders::default();
        for (key, amount) in [("o/3", 3), ("o/1", 1), ("o/2", 2)] {
            assert_eq!(kept.insert(key.into(), contribution(amount)), None);
        }
        assert_eq!(kept.insert("o/2".into(), contribution(20)), Some(contribution(2)));
        assert_eq!(kept.keys().map(String::as_str).collect::<Vec<_>>(), ["o/1", "o/2", "o/3"]);
        assert_eq!(kept.remove("o/1"), Some(contribution(1)));
        assert!(!kept.contains_key("o/1") && kept.len() == 2);
        let json = serde_json::to_value(&kept).unwrap();
        let map: std::collections::BTreeMap<String, Contribution> = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(serde_json::to_value(&map).unwrap(), json, "the same JSON as a map");
        let back: KeptOrders = serde_json::from_value(json).unwrap();
        assert_eq!(back, kept);
        assert_eq!(back.get("o/2").map(|c| c.amount), Some(Decimal::from(20)));
    }
}
