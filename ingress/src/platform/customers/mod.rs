//! `/crm_api/get/customer/details` (open, synchronous read) and
//! `/crm_api/update/customer/details` (staff token), answered by the tenant's actor wherever it
//! runs (this node, or the owner by NATS request-reply).

pub mod integration;
pub mod refunds;
pub mod requests;

use axum::extract::State;
use axum::Json;
use serde::Serialize;

use engage_actors::capabilities::customers::{self, CustomerView};

use crate::platform::edge::errors::{IntegrationError, StaffError};
use crate::platform::edge::requests::{CustomerDetailsRequest, UpdateCustomerRequest};
use crate::platform::edge::routes::Routes;
use crate::platform::edge::{answer, Answer, Open, Staff};
use crate::state::AppState;

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new()
        .post(
            "/crm_api/get/customer/details",
            "Customer details (synchronous read from the tenant's actor): {status: 1, customer: {customer_number, name, total_orders, last_order, loyalty_points, segment, lifetime_value, average_order_value}}; 404 xE_404 when unknown",
            get_customer_details,
        )
        .tweak(with_customer)
        .post(
            "/crm_api/update/customer/details",
            "Update a customer's name, email, gender or dob: {status: 1, message, customer}",
            update_customer_details,
        )
        .tweak(with_customer)
}

/// The answer carries `customer` (`#/components/schemas/CustomerDetails`).
fn with_customer(op: &mut serde_json::Value) {
    let ok = &mut op["responses"]["200"]["content"]["application/json"]["schema"];
    ok["properties"]["customer"] = serde_json::json!({"$ref": "#/components/schemas/CustomerDetails"});
}

/// `{customer}`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CustomerAnswer {
    customer: CustomerView,
}

impl From<CustomerView> for CustomerAnswer {
    fn from(customer: CustomerView) -> Self {
        Self { customer }
    }
}

/// `{message, customer}`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Updated {
    message: &'static str,
    customer: CustomerView,
}

/// `{status: 1, customer: {customer_number, name, total_orders, last_order, loyalty_points,
/// segment, lifetime_value, average_order_value}}`; 404 `xE_404` for an unknown customer.
pub async fn get_customer_details(
    State(state): State<AppState>,
    Open { tenant, body }: Open<CustomerDetailsRequest>,
) -> Result<Json<Answer<CustomerAnswer>>, IntegrationError> {
    let query = customers::Details { phone: body.customer_number };
    Ok(answer(CustomerAnswer { customer: state.platform.gateway.ask(&tenant, query).await? }))
}

/// Updates name, email, gender or dob; answers `{status: 1, message, customer}`. A token limited
/// to one outlet may only name that outlet in `business_id` (the extractor holds it there).
pub async fn update_customer_details(
    State(state): State<AppState>,
    Staff { tenant, body, .. }: Staff<UpdateCustomerRequest>,
) -> Result<Json<Answer<Updated>>, StaffError> {
    let query = customers::Update {
        phone: body.customer_number,
        name: body.name,
        email: body.email,
        gender: body.gender,
        dob: body.dob,
        anniversary: body.anniversary,
    };
    let customer = state.platform.gateway.ask(&tenant, query).await?;
    Ok(answer(Updated { message: "customer updated", customer }))
}
