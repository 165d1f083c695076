//! Business wallets (staff token): `/crm_api/wallet/recharge`, `/crm_api/wallet/balance`,
//! `/crm_api/wallet/transactions` (paths of ours: the spec shows none), and the loopback
//! `/admin/wallet/*` twins used by `engage wallet`. Balances and amounts are decimal strings
//! (`"12.5000"`), never floats. Every change goes through the brand's tenant actor, which also
//! debits the wallets for sends, so no balance goes negative under any concurrency.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use engage_actors::capabilities::wallet::WalletQuery;
use engage_actors::QueryError;

use super::body::PlatformBody;
use super::errors::{IntegrationError, StaffError};
use super::staff::staff_request;
use crate::error::Issue;
use crate::AppState;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/crm_api/wallet/recharge", post(|s, h, b| wallet_route(s, h, b, Op::Recharge)))
        .route("/crm_api/wallet/balance", post(|s, h, b| wallet_route(s, h, b, Op::Balance)))
        .route("/crm_api/wallet/transactions", post(|s, h, b| wallet_route(s, h, b, Op::Transactions)))
}

#[derive(Clone, Copy)]
enum Op {
    Recharge,
    Balance,
    Transactions,
}

fn text(body: &Value, name: &str) -> Option<String> {
    match body.get(name)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The query a wallet request asks for.
pub fn wallet_query(body: &Value, recharge: bool) -> Result<WalletQuery, Issue> {
    let business = text(body, "business_id").unwrap_or_default();
    if recharge {
        let amount =
            text(body, "amount").ok_or(Issue { pointer: "/amount".into(), message: "amount is required".into() })?;
        return Ok(WalletQuery::Recharge { business, amount, reference: text(body, "reference"), refund: false });
    }
    Ok(WalletQuery::Balance { business })
}

async fn wallet_route(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<PlatformBody, IntegrationError>,
    op: Op,
) -> Response {
    let (brand, _, body) = match staff_request(&state, &headers, body, "WalletRequest").await {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal,
    };
    let query = match op {
        Op::Transactions => WalletQuery::Txns {
            business: text(&body, "business_id").unwrap_or_default(),
            page: body.get("page").and_then(Value::as_u64).unwrap_or(1),
            page_size: body.get("page_size").and_then(Value::as_u64).unwrap_or(20),
        },
        Op::Recharge | Op::Balance => match wallet_query(&body, matches!(op, Op::Recharge)) {
            Ok(query) => query,
            Err(issue) => return StaffError::invalid(vec![issue]).into_response(),
        },
    };
    match state.platform.gateway.ask(&brand, query).await {
        Ok(mut answer) => {
            answer["status"] = json!(true);
            Json(answer).into_response()
        }
        Err(QueryError::Invalid(message)) => StaffError::invalid_message("/amount", message).into_response(),
        Err(error) => StaffError::unavailable(error).into_response(),
    }
}
