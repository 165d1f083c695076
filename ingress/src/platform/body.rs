//! Request bodies of the platform routes: JSON, or `application/x-www-form-urlencoded`.
//!
//! A body that parses as a JSON object or array is JSON whatever its `content-type` says (curl's
//! `-d` labels every body a form), as on the log routes; other bodies labelled as forms are forms,
//! and everything else must be JSON. A body over [`MAX_BODY`] bytes is 413 in the route's family.
//!
//! Form bodies become a JSON object: `a=1` is `{"a": "1"}`; one level of brackets nests
//! (`customer[phone]=98…` is `{"customer": {"phone": "98…"}}`); a value that is itself a JSON
//! array or object (`items=[{…}]`) is parsed as JSON; the numeric fields `amount`, `qty`, `price`,
//! `status` and the loyalty routes' numeric fields are converted to numbers. Everything else stays a string (phone numbers keep their
//! leading `+` and zeros).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::{Map, Value};

use super::errors::IntegrationError;
use crate::error::Issue;

/// Largest platform request body.
pub const MAX_BODY: usize = 1024 * 1024;

/// A parsed platform body.
#[derive(Debug)]
pub struct PlatformBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for PlatformBody {
    type Rejection = IntegrationError;

    async fn from_request(request: Request, _state: &S) -> Result<Self, Self::Rejection> {
        read(request).await.map(Self).map_err(IntegrationError::from)
    }
}

/// Why a body was refused.
#[derive(Debug)]
pub enum BodyError {
    /// Not JSON, a malformed form, a schema violation: 400 in the route's family.
    Invalid(Vec<Issue>),
    /// Over [`MAX_BODY`] bytes: 413 in the route's family.
    TooLarge,
}

/// The body of `request` as JSON (a url-encoded form converted), or what is wrong with it.
pub async fn read(request: Request) -> Result<Value, BodyError> {
    let is_form = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let refuse = |message: String| BodyError::Invalid(vec![Issue { pointer: String::new(), message }]);
    let bytes: Bytes = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => return Err(BodyError::TooLarge),
        Err(error) => return Err(refuse(format!("the body could not be read: {error}"))),
    };
    let looks_like_json = bytes.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|b| matches!(b, b'{' | b'['));
    if is_form && !looks_like_json {
        form_to_json(&bytes).map_err(|e| refuse(format!("the form body is malformed: {e}")))
    } else {
        serde_json::from_slice(&bytes).map_err(|e| refuse(format!("the body is not JSON: {e}")))
    }
}

/// A form value: JSON arrays and objects (`items=[…]`) are parsed; everything else stays text,
/// and the route's schema converts it to the type it declares ([`super::coerce`]).
fn form_value(value: String) -> Value {
    if value.starts_with('[') || value.starts_with('{') {
        if let Ok(parsed) = serde_json::from_str::<Value>(&value) {
            return parsed;
        }
    }
    Value::String(value)
}

/// Decodes a url-encoded body into a JSON object.
pub fn form_to_json(bytes: &[u8]) -> Result<Value, serde_urlencoded::de::Error> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(bytes)?;
    let mut object = Map::new();
    for (key, value) in pairs {
        match key.split_once('[') {
            Some((outer, rest)) if rest.ends_with(']') => {
                let inner = &rest[..rest.len() - 1];
                let entry = object.entry(outer.to_owned()).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(nested) = entry {
                    nested.insert(inner.to_owned(), form_value(value));
                }
            }
            _ => {
                let coerced = form_value(value);
                object.insert(key, coerced);
            }
        }
    }
    Ok(Value::Object(object))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn forms_become_json() {
        let value = form_to_json(b"parentBusinessId=p1&customer%5Bphone%5D=09876543210&customer%5Bname%5D=Asha&amount=12.50&orderId=7&items=%5B%7B%22name%22%3A%22tea%22%2C%22qty%22%3A1%2C%22price%22%3A12.5%7D%5D").unwrap();
        assert_eq!(
            value,
            json!({"parentBusinessId": "p1", "customer": {"phone": "09876543210", "name": "Asha"}, "amount": "12.50", "orderId": "7",
                   "items": [{"name": "tea", "qty": 1, "price": 12.5}]})
        );
        // the route's schema then makes the declared numbers numbers; the phone keeps its zero
        let schemas = super::super::schemas::PlatformSchemas::compile().unwrap();
        let mut value = value;
        schemas.coerce("Order", &mut value);
        assert_eq!((&value["amount"], &value["customer"]["phone"]), (&json!(12.5), &json!("09876543210")));
        assert!(schemas.issues("Order", &value).iter().all(|i| i.pointer != "/amount"));
    }
}
