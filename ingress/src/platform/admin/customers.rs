//! `/admin/customers`: a customer's data rights for requests that arrive by mail or phone, for
//! `engage customers export|erase`. Loopback callers with the admin key only, like every `/admin`
//! route ([`crate::platform::admin`]). The same work as the staff routes
//! `/crm_api/customer/export|erase` ([`crate::platform::consent`]).
//!
//! - `POST /admin/customers/export` `{parent, phone}` → the customer's export document;
//! - `POST /admin/customers/erase` `{parent, phone, by?}` → `{deleted, anonymised, cancelled,
//!   bus_messages}`; `by` (who asked, for the audit row) defaults to `cli`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use engage_actors::capabilities::rights::{CustomerExport, Erased};

use crate::platform::admin::{admin_op, Admin};
use crate::platform::consent::{erase_customer, export_customer};
use crate::platform::edge::routes::Routes;
use crate::state::AppState;

/// Routes of this module, each declared once with its operations ([`Routes`]).
pub fn routes() -> Routes {
    let id = json!({"type": "string", "minLength": 1, "maxLength": 128});
    let phone = json!({"type": "string", "pattern": engage_actors::domain::phone::PATTERN});
    let body = |required: &[&str]| json!({"type": "object", "required": required, "properties": {"parent": id, "phone": phone, "by": id}});
    let errors: &[(&str, &str)] = &[
        ("400", "{message}: the body is not {parent, phone, by?}"),
        ("503", "{message: \"temporarily unavailable; retry\"}: the brand's owner or the bus is unavailable"),
    ];
    Routes::new()
        .route(
            "/admin/customers/export",
            post(export),
            json!({"post": admin_op::<CustomerExport>("Everything a brand holds about one customer: {parent, phone}", "200", "the export document", Some(body(&["parent", "phone"])), errors)}),
        )
        .route(
            "/admin/customers/erase",
            post(erase),
            json!({"post": admin_op::<Erased>("Erase a customer's personal data in a brand: {parent, phone, by?}", "200", "{deleted, anonymised, cancelled, bus_messages}", Some(body(&["parent", "phone"])), errors)}),
        )
}

/// The body of `engage customers export|erase`.
#[derive(Deserialize)]
struct AdminCustomer {
    parent: String,
    phone: String,
    by: Option<String>,
}

/// The body, its phone in the kept form ([`engage_actors::domain::phone`]).
fn read(body: Result<Json<AdminCustomer>, axum::extract::rejection::JsonRejection>) -> Result<AdminCustomer, Response> {
    let refuse = |why: &str| (StatusCode::BAD_REQUEST, Json(json!({"message": why}))).into_response();
    let Ok(Json(mut body)) = body else { return Err(refuse("the body is not {parent, phone, by?}")) };
    if body.parent.is_empty() {
        return Err(refuse("parent is required"));
    }
    body.phone = engage_actors::domain::phone::parse(&body.phone).map_err(|why| refuse(&format!("phone: {why}")))?;
    Ok(body)
}

async fn export(
    State(state): State<AppState>,
    _admin: Admin,
    body: Result<Json<AdminCustomer>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<CustomerExport>, Response> {
    let body = read(body)?;
    export_customer(&state, &body.parent, &body.phone).await.map(Json).map_err(|e| e.into_response())
}

async fn erase(
    State(state): State<AppState>,
    _admin: Admin,
    body: Result<Json<AdminCustomer>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<Erased>, Response> {
    let body = read(body)?;
    let by = body.by.unwrap_or_else(|| "cli".to_owned());
    erase_customer(&state, &body.parent, &body.phone, by).await.map(Json).map_err(|e| e.into_response())
}
