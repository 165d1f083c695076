//! Business configuration records (spec "Legacy routes": "add business config"): `/crm_api/add_b_config`
//! (staff token) and `/crm_api/add_b_config/php` (open, as the spec has it: the legacy PHP
//! back-end calls it; the optional per-client rate limit applies, and operators should reach it
//! only from that back-end's network). Both set fields of the record
//! ([`engage_actors::capabilities::business`]) and answer
//! `{status: 1, message: "Business configuration saved", data: <record>}`.

pub mod open_routes;
pub mod requests;

use axum::extract::{ConnectInfo, State};
use axum::Json;
use chrono::Utc;

use engage_actors::capabilities::business::{BusinessConfig, SaveConfig};

use crate::platform::edge::errors::{IntegrationError, StaffError};
use crate::platform::edge::requests::BusinessConfigRequest;
use crate::platform::edge::routes::Routes;
use crate::platform::edge::{answer, open_rate_limit, Answer, Open, Saved, Staff};
use crate::state::AppState;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post(
            "/crm_api/add_b_config",
            "Set fields of a business's configuration record (business_id \"0\": the brand's own); fields left out keep their value, null removes one: {status: 1, message, data: record}",
            add_staff,
        )
        .post(
            "/crm_api/add_b_config/php",
            "The same as /crm_api/add_b_config without a token (the legacy PHP back-end's route; reach it only from that network): {status: 1, message, data: record}",
            add_open,
        )
}

fn query(body: BusinessConfigRequest) -> SaveConfig {
    let business_id = body.business_id.clone();
    SaveConfig { business_id, fields: body.fields(), now: Utc::now() }
}

fn saved(config: BusinessConfig) -> Json<Answer<Saved<BusinessConfig>>> {
    answer(Saved { message: "Business configuration saved".into(), data: config })
}

async fn add_staff(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<BusinessConfigRequest>,
) -> Result<Json<Answer<Saved<BusinessConfig>>>, StaffError> {
    let config =
        state.platform.gateway.ask(&tenant, query(body)).await.map_err(|e| StaffError::from_query(e, "business"))?;
    Ok(saved(config))
}

async fn add_open(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    Open { tenant, body }: Open<BusinessConfigRequest>,
) -> Result<Json<Answer<Saved<BusinessConfig>>>, IntegrationError> {
    open_rate_limit(&state, "add_b_config", peer)?;
    Ok(saved(state.platform.gateway.ask(&tenant, query(body)).await?))
}
