//! A brand's own senders (`docs/senders.md`): `POST /crm_api/senders` reads them, or sets the
//! provider, sender and credential of one channel. Credentials are written, never answered.

pub mod requests;
pub mod twilio;
pub mod whatsapp;

use axum::extract::State;
use axum::Json;
use chrono::Utc;

use engage_actors::capabilities::senders::{GetSenders, SetSender};
use engage_actors::domain::sender::{Credential, ProviderKind, Senders};

use crate::platform::edge::errors::StaffError;
use crate::platform::edge::requests::SendersRequest;
use crate::platform::edge::routes::Routes;
use crate::platform::edge::{staff_answer, Staff, StaffAnswer};
use crate::state::AppState;
use requests::ProviderChoice;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .route("/webhooks/twilio", axum::routing::post(twilio::twilio), serde_json::json!({"post": twilio::operation_doc()}))
        .route(
            "/webhooks/whatsapp",
            axum::routing::get(whatsapp::verify).post(whatsapp::receive),
            serde_json::json!({"get": whatsapp::verify_doc(), "post": whatsapp::receive_doc()}),
        )
        .post(
        "/crm_api/senders",
        "Read the brand's own senders (provider, sender, DLT ids per channel; a credential only as credential_set; incomplete: what one lacks before it sends), or with channel and provider, set the one of that channel, a part not given kept (provider default: back to the node-wide provider): {status, senders}",
        senders,
    )
}

async fn senders(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<SendersRequest>,
) -> Result<Json<StaffAnswer<Senders>>, StaffError> {
    // without a provider nothing is set: the senders are read
    let (Some(channel), Some(choice)) = (body.channel, body.provider) else {
        return Ok(staff_answer(state.platform.gateway.ask(&tenant, GetSenders {}).await?));
    };
    let provider = match choice {
        ProviderChoice::Default => None,
        ProviderChoice::Generic => Some(ProviderKind::Generic),
        ProviderChoice::Twilio => Some(ProviderKind::Twilio),
        ProviderChoice::Msg91 => Some(ProviderKind::Msg91),
        ProviderChoice::WhatsappCloud => Some(ProviderKind::WhatsappCloud),
        ProviderChoice::Fcm => Some(ProviderKind::Fcm),
    };
    let change = SetSender {
        channel,
        provider,
        base_url: body.base_url,
        sender: body.sender,
        account: body.account,
        credential: body.credential.map(Credential::new),
        dlt_entity_id: body.dlt_entity_id,
        dlt_templates: body.dlt_templates,
        language: body.language,
        app_secret: body.app_secret.map(Credential::new),
        verify_token: body.verify_token.map(Credential::new),
        now: Utc::now(),
    };
    Ok(staff_answer(state.platform.gateway.ask(&tenant, change).await?))
}
