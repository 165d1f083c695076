//! `/crm_api/get/waiting_refunds` (staff token; a path of ours, the spec shows none): refunds sent
//! on their own (`/integration/v1/order/refund`) whose order has not arrived yet. Such a refund is
//! kept and applied when its order comes (`docs/refunds.md`); this list lets the brand see which
//! are still waiting, a page at a time.

use axum::extract::State;
use axum::Json;
use serde_json::json;

use engage_actors::capabilities::customers::{WaitingPage, WaitingRefunds};

use crate::platform::edge::errors::StaffError;
use crate::platform::edge::requests::WaitingRefundsRequest;
use crate::platform::edge::routes::Routes;
use crate::platform::edge::{staff_answer, Staff, StaffAnswer};
use crate::state::AppState;

/// Orders a page lists when the body does not say.
const DEFAULT_LIMIT: u64 = 100;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post(
            "/crm_api/get/waiting_refunds",
            "Refunds waiting for their order: {status: true, data: [{business_id, order_id, refunds: {refund_id: amount or \"whole\"}}], next} (next: the cursor of the following page, null on the last)",
            waiting_refunds,
        )
        .tweak(|op| {
            let ok = &mut op["responses"]["200"]["content"]["application/json"]["schema"];
            ok["required"] = json!(["status", "data", "next"]);
            ok["properties"]["data"] = json!({"type": "array", "items": {"type": "object",
                "required": ["business_id", "order_id", "refunds"], "properties": {
                    "business_id": {"type": "string"}, "order_id": {"type": "string"},
                    "refunds": {"type": "object", "additionalProperties": {"type": "string"},
                                "description": "each refund by its id: the amount given back (a decimal string), or \"whole\""}}}});
            ok["properties"]["next"] = json!({"type": ["string", "null"], "description": "pass as `after` for the next page"});
        })
}

/// `{status: true, data, next}`: a page of the brand's (or one outlet's) waiting refunds.
async fn waiting_refunds(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<WaitingRefundsRequest>,
) -> Result<Json<StaffAnswer<WaitingPage>>, StaffError> {
    let limit = usize::try_from(body.limit.unwrap_or(DEFAULT_LIMIT)).unwrap_or(500);
    let question = WaitingRefunds { business: body.business_id, after: body.after, limit };
    Ok(staff_answer(state.platform.gateway.ask(&tenant, question).await?))
}
