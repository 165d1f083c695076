//! What processing needs from an order payload (the `/injestion/platform` shape, which every
//! order route shares): outlet, order id, customer phone and name, amount, order time, and what
//! was refunded (`docs/refunds.md`).

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
    /// What was given back (`docs/refunds.md`): the whole amount for a cancelled or refunded
    /// order, else the partial returns; never more than `amount`. Zero for a plain order.
    pub refunded: Decimal,
    /// Cancelled or refunded as a whole: it no longer counts as an order anywhere.
    pub void: bool,
}

/// `status` values of a whole order that did not happen (besides 0 cart and 1 paid).
pub const STATUS_CANCELLED: u8 = 2;
/// `status` of an order refunded as a whole.
pub const STATUS_REFUNDED: u8 = 3;

/// A recorded refund of the whole order (in the payload's `refunds`, by refund id).
pub const WHOLE: &str = "whole";

/// Status words POS systems send for a whole order that was cancelled, voided or refunded.
pub const VOID_WORDS: [&str; 6] = ["cancelled", "canceled", "refunded", "voided", "void", "rejected"];

/// Status words of an order that happened (besides the numbers 0 to 3 as text).
pub const PAID_WORDS: [&str; 8] =
    ["paid", "completed", "complete", "success", "delivered", "settled", "closed", "confirmed"];

/// Every `status` text an order may carry, lower case: the numbers 0 to 3, [`PAID_WORDS`] and
/// [`VOID_WORDS`]. The edge refuses any other (case and spacing are forgiven).
pub fn status_words() -> Vec<&'static str> {
    ["0", "1", "2", "3"].into_iter().chain(PAID_WORDS).chain(VOID_WORDS).collect()
}

/// Fields whose truth marks a whole order cancelled or refunded.
pub const VOID_FLAGS: [&str; 4] = ["cancelled", "refunded", "isCancelled", "isRefunded"];

/// A yes/no as POS systems send it: `true`/`false`, `1`/`0`, or those (and `yes`/`no`) as text,
/// in any case and spacing. `None` for anything else (`null` included).
pub fn flag(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(1.0) => Some(true),
            Some(0.0) => Some(false),
            _ => None,
        },
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "y" => Some(true),
            "false" | "0" | "no" | "n" | "" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// What the `returnedItems` of `payload` come to: quantity (`qty` or `quantity`, 1 when absent)
/// times `price`, each line at least 0.
fn returned_items(payload: &Value) -> Decimal {
    let line = |item: &Value| {
        let qty = item.get("qty").or_else(|| item.get("quantity")).and_then(decimal).unwrap_or(Decimal::ONE);
        let price = item.get("price").and_then(decimal).unwrap_or_default();
        (qty * price).max(Decimal::ZERO)
    };
    payload.get("returnedItems").and_then(Value::as_array).map(|items| items.iter().map(line).sum()).unwrap_or_default()
}

/// A refund sent on its own (`/integration/v1/order/refund`): the order it refunds, its id, and
/// what it gives back (an amount, or [`WHOLE`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RefundRequest {
    /// Outlet.
    pub business_id: String,
    /// The order refunded.
    pub order_id: String,
    /// The refund's own id.
    pub refund_id: String,
    /// `amount`, else what `returnedItems` come to, else the whole order.
    pub amount: Value,
}

impl RefundRequest {
    /// Reads it from a refund event's payload.
    pub fn from_payload(payload: &Value) -> Result<Self, NotAnOrder> {
        let (Some(business_id), Some(order_id), Some(refund_id)) =
            (text(payload.get("businessId")), text(payload.get("orderId")), text(payload.get("refundId")))
        else {
            return Err(NotAnOrder("businessId, orderId and refundId are required".into()));
        };
        let items = returned_items(payload);
        let amount = match payload.get("amount").and_then(decimal) {
            Some(amount) if amount > Decimal::ZERO => serde_json::json!(amount),
            _ if items > Decimal::ZERO => serde_json::json!(items),
            _ => serde_json::json!(WHOLE),
        };
        Ok(Self { business_id, order_id, refund_id, amount })
    }
}

/// What `payload` gives back (see [`OrderFacts::refunded`]): (amount refunded, whole order).
fn refund_of(payload: &Value, amount: Decimal, status: Option<u8>) -> (Decimal, bool) {
    let word = ["status", "orderStatus", "order_status"]
        .iter()
        .filter_map(|field| payload.get(*field).and_then(Value::as_str))
        .any(|word| VOID_WORDS.contains(&word.trim().to_ascii_lowercase().as_str()));
    let flagged = VOID_FLAGS.iter().any(|field| payload.get(*field).and_then(flag) == Some(true));
    if word || flagged || matches!(status, Some(STATUS_CANCELLED | STATUS_REFUNDED)) {
        return (amount, true);
    }
    let stated = ["refundedAmount", "refundAmount", "refund_amount"]
        .iter()
        .filter_map(|field| payload.get(*field).and_then(decimal))
        .fold(Decimal::ZERO, Decimal::max);
    let items = returned_items(payload);
    // refunds engage recorded from `POST /integration/v1/order/refund`, by refund id: an amount,
    // or `"whole"`
    let refunds = payload.get("refunds").and_then(Value::as_object);
    if refunds.is_some_and(|refunds| refunds.values().any(|r| r == WHOLE)) {
        return (amount, true);
    }
    let recorded: Decimal = refunds
        .map(|refunds| refunds.values().filter_map(decimal).filter(|d| !d.is_sign_negative()).sum())
        .unwrap_or_default();
    let refunded = stated.max(items).max(recorded).max(Decimal::ZERO).min(amount);
    (refunded, amount > Decimal::ZERO && refunded >= amount)
}

/// The version of an order copy: `p` then its bus position in 20 digits, then `|` and when the
/// ingress accepted it. Versions compare as text in the order the bus accepted the copies (the
/// last copy accepted wins, never the clock); every such version ranks above the older
/// `<received_at>|<envelope id>` form, so copies accepted after an upgrade win over rows written
/// before it.
pub fn copy_version(position: u64, received_at: &str) -> String {
    format!("p{position:020}|{received_at}")
}

/// When the copy of `version` was accepted, for either form of [`copy_version`].
pub fn version_received(version: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let received = match version.strip_prefix('p') {
        Some(rest) => rest.split('|').nth(1),
        None => version.split('|').next(),
    };
    received.and_then(super::time::parse_instant)
}

/// A JSON number with no fraction written as a float (`2.0`: the edge's schema takes it as the
/// integer it is).
fn whole(value: &Value) -> Option<u64> {
    value.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= 255.0).map(|f| f as u64)
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
        Value::Number(n) => decimal_text(&n.to_string()),
        Value::String(s) => decimal_text(s.trim()),
        _ => None,
    }
}

/// Decimal text, plain or scientific (`"1.5e3"`); a magnitude below what a decimal holds
/// (`5e-324`, `2.2e-104`) is zero to it, as a JSON number of it is.
fn decimal_text(text: &str) -> Option<Decimal> {
    Decimal::from_str(text)
        .or_else(|_| Decimal::from_scientific(text))
        .ok()
        .or_else(|| text.parse::<f64>().ok().filter(|f| f.is_finite() && f.abs() < 1e-20).map(|_| Decimal::ZERO))
}

impl OrderFacts {
    /// Reads the facts from a payload.
    pub fn from_payload(payload: &Value) -> Result<Self, NotAnOrder> {
        let business_id = text(payload.get("businessId")).ok_or_else(|| NotAnOrder("businessId missing".into()))?;
        let order_id = text(payload.get("orderId")).ok_or_else(|| NotAnOrder("orderId missing".into()))?;
        let customer = payload.get("customer");
        // one customer whatever form the number came in (the edge already wrote it so; a replay
        // published straight onto the stream may not have)
        let phone = text(customer.and_then(|c| c.get("phone")))
            .map(|phone| super::phone::canonical(&phone))
            .ok_or_else(|| NotAnOrder("customer.phone missing".into()))?;
        let name = text(customer.and_then(|c| c.get("name")));
        let amount = payload.get("amount").and_then(decimal).ok_or_else(|| NotAnOrder("amount missing".into()))?;
        if amount.is_sign_negative() {
            return Err(NotAnOrder("amount is negative".into()));
        }
        // an orderTime that is no real time (accepted before ingress checked it) counts as absent
        let order_time = text(payload.get("orderTime")).filter(|t| super::time::parse_ist(t).is_some());
        let status = payload
            .get("status")
            .and_then(|s| s.as_u64().or_else(|| whole(s)).or_else(|| s.as_str().and_then(|s| s.trim().parse().ok())))
            .and_then(|s| u8::try_from(s).ok());
        let os = text(payload.get("os"));
        let (refunded, void) = refund_of(payload, amount, status);
        Ok(Self { business_id, order_id, phone, name, amount, order_time, status, os, refunded, void })
    }

    /// A cart (`status` 0): not an order until it is paid.
    pub fn is_cart(&self) -> bool {
        self.status == Some(0)
    }

    /// What the order counts for: its amount less what was given back (0 when void).
    pub fn net(&self) -> Decimal {
        if self.void {
            Decimal::ZERO
        } else {
            (self.amount - self.refunded).max(Decimal::ZERO)
        }
    }

    /// Whether anything of it was given back.
    pub fn has_refund(&self) -> bool {
        self.void || self.refunded > Decimal::ZERO
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
    fn decimals_are_read_from_numbers_and_text_alike() {
        for (given, wanted) in [
            (json!("5e-324"), "0"),
            (json!(5e-324), "0"),
            (json!("1.5e3"), "1500"),
            (json!("12.50"), "12.50"),
            (json!(2.5), "2.5"),
        ] {
            assert_eq!(decimal(&given), Decimal::from_str(wanted).ok(), "{given}");
        }
        assert_eq!(decimal(&json!("ten")), None);
        assert_eq!(decimal(&json!("1e400")), None);
    }

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

    #[test]
    fn cancellations_refunds_and_returns_are_recognised() {
        let order = |extra: Value| {
            let mut payload =
                json!({"businessId": "b", "orderId": "1", "customer": {"phone": "9876543210"}, "amount": 500});
            payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            OrderFacts::from_payload(&payload).unwrap()
        };
        let d = |s: &str| Decimal::from_str(s).unwrap();
        for whole in [
            json!({"status": 2}),
            json!({"status": 3}),
            json!({"status": 2.0}),
            json!({"isCancelled": "true"}),
            json!({"cancelled": 1}),
            json!({"status": "Cancelled"}),
            json!({"orderStatus": "REFUNDED"}),
            json!({"isCancelled": true}),
            json!({"refundedAmount": 500}),
        ] {
            let facts = order(whole.clone());
            assert!(facts.void, "{whole}");
            assert_eq!((facts.refunded, facts.net()), (d("500"), Decimal::ZERO), "{whole}");
        }
        let partial = order(json!({"refundedAmount": "120.50"}));
        assert_eq!((partial.void, partial.net()), (false, d("379.50")));
        let items =
            order(json!({"returnedItems": [{"name": "tea", "qty": 2, "price": 40}, {"name": "x", "price": 20}]}));
        assert_eq!(items.net(), d("400"));
        let recorded = order(json!({"refunds": {"r1": 100, "r2": "50"}}));
        assert_eq!(recorded.net(), d("350"));
        assert!(order(json!({"refunds": {"r1": 100, "r2": "whole"}})).void);
        assert!(order(json!({"status": "0"})).is_cart(), "a status written as a string");
        // never more than the amount, never negative
        assert_eq!(order(json!({"refundedAmount": 900})).net(), Decimal::ZERO);
        assert_eq!(order(json!({"refundedAmount": -5})).net(), d("500"));
        let plain = order(json!({"status": 1}));
        assert!(!plain.void && !plain.has_refund());
    }
}
