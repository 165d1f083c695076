//! Business wallets (staff token): `/crm_api/wallet/recharge`, `/crm_api/wallet/balance`,
//! `/crm_api/wallet/transactions`, `/crm_api/wallet/get_pricing`, `/crm_api/wallet/set_pricing` (paths
//! of ours: the spec shows none), and the loopback
//! `/admin/wallet/*` twins used by `engage wallet`. Balances and amounts are decimal strings
//! (`"12.5000"`), never floats. Every change goes through the brand's tenant actor, which also
//! debits the wallets for sends, so no balance goes negative under any concurrency.

pub mod requests;

use axum::extract::State;
use axum::Json;
use serde::Serialize;

use engage_actors::capabilities::wallet::{self, Balance, Recharged, TxnPage};
use engage_actors::domain::wallet::{self as wallet_domain, Pricing};
use engage_actors::QueryError;
use schemars::JsonSchema;

use crate::platform::edge::errors::StaffError;
use crate::platform::edge::requests::{ChannelPricesPatch, WalletPricingRequest, WalletRequest};
use crate::platform::edge::routes::Routes;
use crate::platform::edge::{decimal, staff_answer, Staff, StaffAnswer};
use crate::state::AppState;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post("/crm_api/wallet/recharge", "Credit a business wallet (a payment reference is applied once)", recharge)
        .requires(&["amount"])
        .post("/crm_api/wallet/balance", "A business wallet's balance (decimal string)", balance)
        .post("/crm_api/wallet/transactions", "A page of a business wallet's transactions", transactions)
        .post(
            "/crm_api/wallet/get_pricing",
            "The brand's price table for paid messages: {status, pricing} (the spec's values until one is set)",
            get_pricing,
        )
        .post(
            "/crm_api/wallet/set_pricing",
            "Change the brand's price table (fields left out keep their value): {status, message, pricing}",
            set_pricing,
        )
        .requires(&["pricing"])
}

/// The recharge of `business`'s wallet by `amount` (a decimal), applied once per `reference`.
pub fn recharge_query(business: String, amount: &serde_json::Number, reference: Option<String>) -> wallet::Recharge {
    wallet::Recharge { business, amount: amount.to_string(), reference, refund: false }
}

/// `/crm_api/wallet/recharge`: `{status: true, txn_id, balance[, replayed]}`.
async fn recharge(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<WalletRequest>,
) -> Result<Json<StaffAnswer<Recharged>>, StaffError> {
    let Some(amount) = &body.amount else {
        return Err(StaffError::invalid_message("/amount", "amount is required"));
    };
    let query = recharge_query(body.business_id, amount, body.reference);
    let recharged = state.platform.gateway.ask(&tenant, query).await.map_err(|error| match error {
        QueryError::Invalid(message) => StaffError::invalid_message("/amount", message),
        other => StaffError::from(other),
    })?;
    Ok(staff_answer(recharged))
}

/// `/crm_api/wallet/balance`: `{status: true, business_id, balance, transactions}`.
async fn balance(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<WalletRequest>,
) -> Result<Json<StaffAnswer<Balance>>, StaffError> {
    let query = wallet::GetBalance { business: body.business_id };
    Ok(staff_answer(state.platform.gateway.ask(&tenant, query).await?))
}

/// `/crm_api/wallet/transactions`: `{status: true, data, page, page_size, total, balance}`.
async fn transactions(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<WalletRequest>,
) -> Result<Json<StaffAnswer<TxnPage>>, StaffError> {
    let query = wallet::Txns {
        business: body.business_id,
        page: body.page.unwrap_or(1),
        page_size: body.page_size.unwrap_or(20),
    };
    Ok(staff_answer(state.platform.gateway.ask(&tenant, query).await?))
}

/// `{pricing}`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PricingAnswer {
    pricing: Pricing,
}

/// `/crm_api/wallet/get_pricing`: `{status: true, pricing}`, the brand's table (the spec's
/// values until one is set).
async fn get_pricing(
    State(state): State<AppState>,
    Staff { tenant, .. }: Staff<WalletPricingRequest>,
) -> Result<Json<StaffAnswer<PricingAnswer>>, StaffError> {
    let pricing = state.platform.gateway.ask(&tenant, wallet::GetPricing {}).await?;
    Ok(staff_answer(PricingAnswer { pricing }))
}

fn channel_patch(patch: &Option<ChannelPricesPatch>) -> wallet_domain::ChannelPricesPatch {
    let Some(patch) = patch else { return Default::default() };
    wallet_domain::ChannelPricesPatch {
        sms: decimal(&patch.sms),
        chat: decimal(&patch.chat),
        chat_utility: decimal(&patch.chat_utility),
        push: decimal(&patch.push),
    }
}

/// `{message, pricing}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PricingSaved {
    /// "pricing saved".
    message: &'static str,
    /// The brand's table after the change.
    pricing: Pricing,
}

/// `/crm_api/wallet/set_pricing`: applies `pricing` to the brand's table (fields left out keep
/// their value) inside the brand's actor, in one turn, and answers `{status: true, message,
/// pricing}`; sends queued after it pay the new prices, sends queued before keep what they paid.
async fn set_pricing(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<WalletPricingRequest>,
) -> Result<Json<StaffAnswer<PricingSaved>>, StaffError> {
    let Some(patch) = body.pricing else {
        return Err(StaffError::invalid_message("/pricing", "pricing is required"));
    };
    let patch = wallet_domain::PricingPatch {
        digital_bill_sms: decimal(&patch.digital_bill_sms),
        digital_chat_cost: decimal(&patch.digital_chat_cost),
        digital_chat_cost_utility: decimal(&patch.digital_chat_cost_utility),
        sms_gst: decimal(&patch.sms_gst),
        chat_gst: decimal(&patch.chat_gst),
        feedback: channel_patch(&patch.feedback),
        fraud_alert: channel_patch(&patch.fraud_alert),
        campaign: channel_patch(&patch.campaign),
        otp: channel_patch(&patch.otp),
    };
    let pricing: Pricing = state.platform.gateway.ask(&tenant, wallet::SetPricing { patch }).await?;
    Ok(staff_answer(PricingSaved { message: "pricing saved", pricing }))
}
