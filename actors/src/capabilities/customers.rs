//! Customers: details as `get/customer/details` shows them, staff updates, and instant orders
//! (an envelope applied at once, answering the customer).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use engage_streams::Envelope;

use super::loyalty::number;
use super::orders::apply;
pub use super::orders::{GetOrder, WaitingPage, WaitingRefund, WaitingRefunds};
use crate::domain::customer::Customer;
use crate::query::{question, QueryError};

/// Customer questions (each its own type, answered with a [`CustomerView`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum CustomersQuery {
    /// `get/customer/details`.
    Details(Details),
    /// `update/customer/details`.
    Update(Update),
    /// An instant order.
    ApplyNow(ApplyNow),
    /// Refunds waiting for their order.
    WaitingRefunds(WaitingRefunds),
    /// See [`GetOrder`].
    Order(GetOrder),
}

question! {
    /// `get/customer/details`: the customer.
    pub struct Details {
        /// Customer phone.
        pub phone: String,
    } -> CustomerView;
}

question! {
    /// `update/customer/details`: the customer after it.
    pub struct Update {
        /// Customer phone.
        pub phone: String,
        /// New name.
        pub name: Option<String>,
        /// New email.
        pub email: Option<String>,
        /// New gender.
        pub gender: Option<String>,
        /// New date of birth.
        pub dob: Option<String>,
        /// New anniversary (`YYYY-MM-DD`).
        #[serde(default)]
        pub anniversary: Option<String>,
    } -> CustomerView;
}

question! {
    /// Process an envelope now and answer with the customer (instant orders). Idempotent with the bus
    /// delivery of the same envelope.
    pub struct ApplyNow {
        /// The envelope, already published.
        pub envelope: Envelope,
    } -> CustomerView;
}

/// The customer as `get/customer/details` shows it.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CustomerView {
    /// Phone.
    pub customer_number: String,
    /// Name ("" when unknown).
    pub name: String,
    /// Orders counted.
    pub total_orders: usize,
    /// IST day of the last order.
    pub last_order: Option<String>,
    /// Points balance.
    pub loyalty_points: i64,
    /// `prospect`, `new`, `repeat`, `loyal`, `lapsed`.
    pub segment: String,
    /// LTV.
    pub lifetime_value: Option<f64>,
    /// AOV.
    pub average_order_value: Option<f64>,
    /// Referrer.
    pub referred_by: Option<String>,
}

/// The view of `customer` at `now`.
pub fn view(customer: &Customer, now: DateTime<Utc>) -> CustomerView {
    CustomerView {
        customer_number: customer.phone.clone(),
        name: customer.name.clone().unwrap_or_default(),
        total_orders: customer.total_orders(),
        last_order: customer.last_order().map(|t| t.get(..10).unwrap_or(t).to_owned()),
        loyalty_points: customer.loyalty_points,
        segment: customer.segment(now).to_owned(),
        lifetime_value: number(customer.lifetime_value),
        average_order_value: number(customer.average_order_value()),
        referred_by: customer.referred_by.clone(),
    }
}

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, reactions) let now = Utc::now();
    Details: Details { phone } => Ok(view(&tenant.known_customer(&phone).await?, now)),
    Update: Update { phone, name, email, gender, dob, anniversary } => {
        let mut customer = tenant.known_customer(&phone).await?;
        for (value, slot) in [
            (name, &mut customer.name),
            (email, &mut customer.email),
            (gender, &mut customer.gender),
            (dob, &mut customer.dob),
            (anniversary, &mut customer.anniversary),
        ] {
            if value.is_some() {
                *slot = value;
            }
        }
        let answer = view(&customer, now);
        tenant.commit_customer(Vec::new(), customer).await?;
        Ok(answer)
    },
    WaitingRefunds: question => super::orders::waiting_refunds(tenant, question).await,
    GetOrder: question => super::orders::order_row(tenant, question).await,
    ApplyNow: ApplyNow { envelope } => {
        match apply(tenant, reactions, &envelope, envelope.position.unwrap_or(0)).await? {
            Some(phone) => Ok(view(&tenant.known_customer(&phone).await?, now)),
            None => Err(QueryError::Invalid("the event touched no customer".to_owned())),
        }
    },
}
