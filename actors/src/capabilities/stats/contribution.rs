//! What one order version adds to the rollups ([`Contribution`]), read from its payload, and
//! kept in the order's own row so a newer version takes exactly that back.

use chrono::{Datelike, Timelike, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::is_default;
use crate::domain::order::decimal;
use crate::domain::time::{ist, parse_ist};

/// One item line of an order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ItemLine {
    /// Item name.
    pub name: String,
    /// Quantity.
    pub qty: i64,
    /// Quantity × price.
    pub revenue: Decimal,
}

/// What one order version added to the rollups (kept in `stats_orders`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Contribution {
    /// Outlet.
    pub outlet: String,
    /// IST day of `orderTime` (of the acceptance when absent).
    pub day: String,
    /// Its IST hour.
    pub hour: u8,
    /// `amount`.
    pub amount: Decimal,
    /// `discount` (0 when absent).
    #[serde(default, skip_serializing_if = "Decimal::is_zero")]
    pub discount: Decimal,
    /// The customer's first order.
    #[serde(default, skip_serializing_if = "is_default")]
    pub new_customer: bool,
    /// Points the order earned.
    #[serde(default, skip_serializing_if = "is_default")]
    pub points_earned: i64,
    /// Points redeemed against it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub points_redeemed: i64,
    /// Item lines (quantity above 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<ItemLine>,
    /// `channel` (or `fulfillment`), lower case; `unspecified` when absent.
    pub channel: String,
    /// `prepMinutes`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prep_minutes: Option<Decimal>,
    /// `deliveryMinutes`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_minutes: Option<Decimal>,
    /// `city` (or `customer.city`), as sent; `unknown` when absent.
    pub city: String,
    /// `pincode` (or `customer.pincode`); `unknown` when absent.
    pub pincode: String,
    /// Money given back (partial returns, or the whole amount of a cancelled or refunded order);
    /// `amount` is what is left.
    #[serde(default, skip_serializing_if = "Decimal::is_zero")]
    pub refunded: Decimal,
    /// Cancelled or refunded as a whole: counted only as a refunded order.
    #[serde(default, skip_serializing_if = "is_default")]
    pub void: bool,
}

/// The first of `names` that `payload` (or its `customer`) carries as text or a number.
fn field(payload: &Value, names: &[&str]) -> Option<String> {
    let customer = payload.get("customer");
    names.iter().find_map(|name| {
        [payload.get(*name), customer.and_then(|c| c.get(*name))].into_iter().flatten().find_map(|v| match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    })
}

impl Contribution {
    /// The contribution of `payload` (an order of `outlet`, accepted at `received`).
    pub fn of(
        payload: &Value,
        outlet: &str,
        order_time: Option<&str>,
        received: chrono::DateTime<Utc>,
        amount: Decimal,
    ) -> Self {
        let at = order_time.and_then(parse_ist).unwrap_or(received).with_timezone(&ist());
        let items = payload
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|line| {
                let name = line.get("name")?.as_str()?.to_owned();
                let qty = line.get("qty")?.as_i64().filter(|q| *q > 0)?;
                let price = line.get("price").and_then(decimal)?;
                let revenue = price.checked_mul(Decimal::from(qty)).unwrap_or(Decimal::MAX).round_dp(4);
                Some(ItemLine { name, qty, revenue })
            })
            .collect();
        // money and minutes are kept to 4 places, as the rows store them
        let minutes =
            |name: &str| payload.get(name).and_then(decimal).filter(|m| !m.is_sign_negative()).map(|m| m.round_dp(4));
        Self {
            outlet: outlet.to_owned(),
            day: format!("{:04}-{:02}-{:02}", at.year(), at.month(), at.day()),
            hour: u8::try_from(at.hour()).unwrap_or(0),
            amount: amount.round_dp(4),
            discount: payload
                .get("discount")
                .and_then(decimal)
                .filter(|d| !d.is_sign_negative())
                .map(|d| d.round_dp(4))
                .unwrap_or_default(),
            new_customer: false,
            points_earned: 0,
            points_redeemed: 0,
            items,
            channel: field(payload, &["channel", "fulfillment"])
                .map_or_else(|| "unspecified".to_owned(), |c| c.to_lowercase()),
            prep_minutes: minutes("prepMinutes"),
            delivery_minutes: minutes("deliveryMinutes"),
            city: field(payload, &["city"]).unwrap_or_else(|| "unknown".to_owned()),
            pincode: field(payload, &["pincode"]).unwrap_or_else(|| "unknown".to_owned()),
            refunded: Decimal::ZERO,
            void: false,
        }
    }

    /// With what the order gave back: `amount` becomes what is left.
    pub fn refunded(mut self, facts: &crate::domain::order::OrderFacts) -> Self {
        self.amount = facts.net().round_dp(4);
        self.refunded = facts.refunded.round_dp(4);
        self.void = facts.void;
        self
    }
}
