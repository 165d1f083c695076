//! Pure domain logic: plain data and functions, no I/O. Actors wrap it.

pub mod bounds;
pub mod consent;
pub mod customer;
pub mod delivery;
pub mod fraud;
pub mod kept_orders;
pub mod loyalty;
pub mod order;
pub mod phone;
pub mod receipt;
pub mod sender;
pub mod time;
pub mod wallet;
pub mod webhook;

/// Whether `value` is its type's default: rows leave such fields out (`skip_serializing_if`), and
/// `#[serde(default)]` gives them back when read.
pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}
