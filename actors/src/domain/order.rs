//! What processing needs from an order payload (the `/injestion/platform` shape, which every
//! order route shares): outlet, order id, customer phone and name, amount, order time.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::Value;

/// The facts of one order.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderFacts {
    /// Outlet (`businessId`).
    pub business_id: String,
    /// `orderId` (numbers are taken as their decimal text).
    pub order_id: String,
    /// Customer phone (`customer.phone`).
    pub phone: String,
    /// Customer name, when given.
    pub name: Option<String>,
    /// Order amount.
    pub amount: Decimal,
    /// `orderTime` as sent (`YYYY-MM-DD HH:mm:ss`, IST), when given.
    pub order_time: Option<String>,
    /// `status`: 0 is a cart (not an order yet), 1 (or absent) a paid order.
    pub status: Option<u8>,
    /// `os`: where it was placed (`A` Android, `I` iOS, `website`, …), when given.
    pub os: Option<String>,
}

/// Why a payload is not an order (ingress validates first; this guards replays of odd data).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unprocessable order: {0}")]
pub struct NotAnOrder(pub String);

fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A decimal from a JSON number or numeric string, exactly as written.
pub fn decimal(value: &Value) -> Option<Decimal> {
    match value {
        Value::Number(n) => Decimal::from_str(&n.to_string())
            .or_else(|_| Decimal::from_scientific(&n.to_string()))
            .ok()
            // a magnitude below what a decimal holds (`2.2e-104`) is zero to it
            .or_else(|| n.as_f64().filter(|f| f.abs() < 1e-20).map(|_| Decimal::ZERO)),
        Value::String(s) => Decimal::from_str(s.trim()).ok(),
        _ => None,
    }
}

impl OrderFacts {
    /// Reads the facts from a payload.
    pub fn from_payload(payload: &Value) -> Result<Self, NotAnOrder> {
        let business_id = text(payload.get("businessId")).ok_or_else(|| NotAnOrder("businessId missing".into()))?;
        let order_id = text(payload.get("orderId")).ok_or_else(|| NotAnOrder("orderId missing".into()))?;
        let customer = payload.get("customer");
        let phone =
            text(customer.and_then(|c| c.get("phone"))).ok_or_else(|| NotAnOrder("customer.phone missing".into()))?;
        let name = text(customer.and_then(|c| c.get("name")));
        let amount = payload.get("amount").and_then(decimal).ok_or_else(|| NotAnOrder("amount missing".into()))?;
        if amount.is_sign_negative() {
            return Err(NotAnOrder("amount is negative".into()));
        }
        // an orderTime that is no real time (accepted before ingress checked it) counts as absent
        let order_time = text(payload.get("orderTime")).filter(|t| super::time::parse_ist(t).is_some());
        let status = payload.get("status").and_then(Value::as_u64).and_then(|s| u8::try_from(s).ok());
        let os = text(payload.get("os"));
        Ok(Self { business_id, order_id, phone, name, amount, order_time, status, os })
    }

    /// A cart (`status` 0): not an order until it is paid.
    pub fn is_cart(&self) -> bool {
        self.status == Some(0)
    }

    /// The order's key within the brand: outlet and order id.
    pub fn key(&self) -> String {
        format!("{}/{}", self.business_id, self.order_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_platform_shape_exactly() {
        let facts = OrderFacts::from_payload(&json!({
            "parentBusinessId": "p", "businessId": "b", "orderId": 42,
            "customer": {"name": "Asha", "phone": "9876543210"}, "amount": 199.99, "orderTime": "2026-11-21 10:00:00"
        }))
        .unwrap();
        assert_eq!(facts.order_id, "42");
        assert_eq!(facts.amount, Decimal::from_str("199.99").unwrap());
        assert_eq!(facts.key(), "b/42");
        assert!(OrderFacts::from_payload(&json!({"businessId": "b"})).is_err());
        assert!(OrderFacts::from_payload(
            &json!({"businessId": "b", "orderId": "1", "customer": {"phone": "1"}, "amount": -1})
        )
        .is_err());
    }
}
