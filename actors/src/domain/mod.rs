//! Pure domain logic: plain data and functions, no I/O. Actors wrap it.

pub mod customer;
pub mod fraud;
pub mod loyalty;
pub mod order;
pub mod time;
pub mod wallet;
