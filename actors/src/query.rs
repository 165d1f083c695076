//! What every capability answers with: [`QueryError`] (why a query failed) and [`QueryReply`], the
//! reply as it crosses the mailbox and the NATS request-reply (JSON). Capabilities build typed
//! replies (structs) and turn them into a [`QueryReply`] with [`reply`]; callers that want the
//! type back read it with [`read_reply`].

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use engage_storage::StoreError;

use crate::domain::fraud::TransitionRefused;
use crate::domain::loyalty::RedeemError;
use crate::domain::wallet::InsufficientBalance;

/// Why a query failed.
#[derive(Clone, Debug, Serialize, Deserialize, thiserror::Error, PartialEq, Eq)]
pub enum QueryError {
    /// No such customer.
    #[error("not found")]
    NotFound,
    /// No such thing of another kind (the text names it: "reward r-1").
    #[error("{0} not found")]
    Missing(String),
    /// The thing to create exists already (a tag, a widget of that kind): the text says which.
    #[error("{0}")]
    Duplicate(String),
    /// The tenant cannot answer now (restarting, not owned here, time-out).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The request cannot be processed.
    #[error("invalid: {0}")]
    Invalid(String),
    /// The store failed.
    #[error("failed: {0}")]
    Failed(String),
    /// A redemption was refused.
    #[error("refused: {0}")]
    Redeem(RedeemError),
    /// The customer is blocked (blocklist or a block by staff): loyalty actions are denied.
    #[error("the customer is blocked")]
    Blocked,
    /// A velocity limit was breached: a flag was raised and the action denied.
    #[error("{fraud_type} breached; flag {flag_id} raised")]
    Fraud {
        /// Which limit.
        fraud_type: String,
        /// The flag raised (or already open).
        flag_id: String,
    },
    /// A flag transition was refused.
    #[error("{0}")]
    Transition(TransitionRefused),
    /// The wallet cannot pay for the send.
    #[error("{0}")]
    Insufficient(InsufficientBalance),
    /// A one-time password is missing, wrong, expired or used up.
    #[error("one-time password: {0}")]
    Otp(String),
}

impl From<StoreError> for QueryError {
    fn from(error: StoreError) -> Self {
        QueryError::Failed(error.to_string())
    }
}

/// Answer to a query, as JSON: the form it takes over the mailbox and over NATS.
pub type QueryReply = Result<Value, QueryError>;

/// A typed answer as a [`QueryReply`].
pub fn reply<T: Serialize>(answer: Result<T, QueryError>) -> QueryReply {
    answer.and_then(|typed| {
        serde_json::to_value(typed).map_err(|e| QueryError::Failed(format!("the reply cannot be encoded: {e}")))
    })
}

/// Reads a typed answer back from a [`QueryReply`].
pub fn read_reply<T: DeserializeOwned>(answer: QueryReply) -> Result<T, QueryError> {
    answer.and_then(|value| {
        serde_json::from_value(value).map_err(|e| QueryError::Failed(format!("unexpected reply shape: {e}")))
    })
}

/// Page `page` (from 1; 0 counts as 1) of `items`, `size` a page.
pub fn page_of<T>(items: Vec<T>, page: u64, size: usize) -> Vec<T> {
    items.into_iter().skip((page.max(1) as usize - 1).saturating_mul(size)).take(size).collect()
}

/// One page of a list: `{data, total, page, page_size}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Page<T> {
    /// The items of the page.
    pub data: Vec<T>,
    /// All items.
    pub total: u64,
    /// Page, from 1.
    pub page: u64,
    /// Per page.
    pub page_size: u64,
}

impl<T> Page<T> {
    /// Page `page` (from 1) of `items`, `size` a page.
    pub fn of(items: Vec<T>, page: u64, size: usize) -> Self {
        let total = items.len() as u64;
        let page = page.max(1);
        Self { data: page_of(items, page, size), total, page, page_size: size as u64 }
    }
}

/// Whether IST day `day` (`YYYY-MM-DD`) is within `start..=end` (each end open when absent).
pub fn within(day: &str, start: Option<&str>, end: Option<&str>) -> bool {
    start.is_none_or(|s| day >= s) && end.is_none_or(|e| day <= e)
}
