//! The wallet questions (`WalletQuery`) and their reply types.

use crate::domain::wallet::{Pricing, PricingPatch};
use serde::{Deserialize, Serialize};

use crate::query::{question, Question};

#[allow(unused_imports)]
use super::*;

/// Wallet queries.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum WalletQuery {
    /// See [`Recharge`].
    Recharge(Recharge),
    /// See [`GetBalance`].
    Balance(GetBalance),
    /// See [`Txns`].
    Txns(Txns),
    /// See [`SendRequest`].
    Send(SendRequest),
    /// See [`GetPricing`].
    GetPricing(GetPricing),
    /// See [`SetPricing`].
    SetPricing(SetPricing),
}

question! {
    /// Credit a business wallet (idempotent per `reference`): [`Recharged`].
    pub struct Recharge {
        /// The outlet.
        pub business: String,
        /// Amount, decimal text, positive.
        pub amount: String,
        /// Payment reference; a recharge with a reference already applied changes nothing.
        pub reference: Option<String>,
        /// `recharge` (default) or `refund` (the failed-chat refund job).
        #[serde(default)]
        pub refund: bool,
    } -> Recharged;
}

question! {
    /// A business wallet's balance: [`Balance`].
    pub struct GetBalance {
        /// The outlet.
        pub business: String,
    } -> Balance;
}

question! {
    /// A page of a business wallet's transactions: [`TxnPage`].
    pub struct Txns {
        /// The outlet.
        pub business: String,
        /// Page, from 1.
        pub page: u64,
        /// Per page.
        pub page_size: u64,
    } -> TxnPage;
}

impl Question for SendRequest {
    type Reply = Queued;
}

question! {
    /// The brand's price table: [`Pricing`].
    pub struct GetPricing {} -> Pricing;
}

question! {
    /// Change the brand's price table (fields left out keep their value), in one turn of its
    /// actor; answers the table.
    pub struct SetPricing {
        /// The changes.
        pub patch: PricingPatch,
    } -> Pricing;
}

/// A recharge's answer.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recharged {
    /// Its transaction.
    pub txn_id: String,
    /// The balance after it.
    pub balance: String,
    /// True when the reference was applied before (nothing changed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// A wallet's balance.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Balance {
    /// The outlet.
    pub business_id: String,
    /// Decimal text.
    pub balance: String,
    /// Transactions written.
    pub transactions: u64,
}

/// A page of transactions.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TxnPage {
    /// The transactions, oldest first.
    pub data: Vec<super::WalletTxn>,
    /// Page, from 1.
    pub page: u64,
    /// Per page.
    pub page_size: u64,
    /// All transactions.
    pub total: u64,
    /// Decimal text.
    pub balance: String,
}

/// A send's answer.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Queued {
    /// The wallet transaction that paid it.
    pub txn_id: String,
    /// The balance after it.
    pub balance: String,
    /// Debited (cost + GST), decimal text; absent on a replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charged: Option<String>,
    /// `<channel>_queue_<YYYYMMDD>`; absent on a replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// True when the send id was paid before (nothing changed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}
