//! Pure domain logic (wallet, loyalty, fraud, journeys, bills, feedback, rollups) and the ractor
//! actors that own it.
//!
//! Nothing lives here yet: the log ingestion service needs no actor. The engine issue fills this
//! crate (see `../shared/ARCHITECTURE.md`).
