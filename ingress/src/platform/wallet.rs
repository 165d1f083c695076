//! Business wallets (staff token): `/crm_api/wallet/recharge`, `/crm_api/wallet/balance`,
//! `/crm_api/wallet/transactions` (paths of ours: the spec shows none), and the loopback
//! `/admin/wallet/*` twins used by `engage wallet`. Balances and amounts are decimal strings
//! (`"12.5000"`), never floats. Every change goes through the brand's tenant actor, which also
//! debits the wallets for sends, so no balance goes negative under any concurrency.

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::Number;

use engage_actors::capabilities::wallet::{Balance, Recharged, TxnPage, WalletQuery};
use engage_actors::QueryError;

use super::edge::{staff_answer, Staff, StaffAnswer};
use super::errors::StaffError;
use super::requests::WalletRequest;
use crate::AppState;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/crm_api/wallet/recharge", post(recharge))
        .route("/crm_api/wallet/balance", post(balance))
        .route("/crm_api/wallet/transactions", post(transactions))
}

/// The recharge of `business`'s wallet by `amount` (a decimal), applied once per `reference`.
pub fn recharge_query(business: String, amount: &Number, reference: Option<String>) -> WalletQuery {
    WalletQuery::Recharge { business, amount: amount.to_string(), reference, refund: false }
}

/// `/crm_api/wallet/recharge`: `{status: true, txn_id, balance[, replayed]}`.
async fn recharge(
    State(state): State<AppState>,
    Staff { brand, body, .. }: Staff<WalletRequest>,
) -> Result<Json<StaffAnswer<Recharged>>, StaffError> {
    let Some(amount) = &body.amount else {
        return Err(StaffError::invalid_message("/amount", "amount is required"));
    };
    let query = recharge_query(body.business_id, amount, body.reference);
    let recharged = state.platform.gateway.ask_as(&brand, query).await.map_err(|error| match error {
        QueryError::Invalid(message) => StaffError::invalid_message("/amount", message),
        other => StaffError::from(other),
    })?;
    Ok(staff_answer(recharged))
}

/// `/crm_api/wallet/balance`: `{status: true, business_id, balance, transactions}`.
async fn balance(
    State(state): State<AppState>,
    Staff { brand, body, .. }: Staff<WalletRequest>,
) -> Result<Json<StaffAnswer<Balance>>, StaffError> {
    let query = WalletQuery::Balance { business: body.business_id };
    Ok(staff_answer(state.platform.gateway.ask_as(&brand, query).await?))
}

/// `/crm_api/wallet/transactions`: `{status: true, data, page, page_size, total, balance}`.
async fn transactions(
    State(state): State<AppState>,
    Staff { brand, body, .. }: Staff<WalletRequest>,
) -> Result<Json<StaffAnswer<TxnPage>>, StaffError> {
    let query = WalletQuery::Txns {
        business: body.business_id,
        page: body.page.unwrap_or(1),
        page_size: body.page_size.unwrap_or(20),
    };
    Ok(staff_answer(state.platform.gateway.ask_as(&brand, query).await?))
}
