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

use crate::error::Issue;
use crate::platform::edge::errors::{IntegrationError, StaffError};

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
/// and the route's schema converts it to the type it declares ([`crate::platform::edge::coerce`]).
fn form_value(value: String) -> Value {
    if value.starts_with('[') || value.starts_with('{') {
        if let Ok(parsed) = serde_json::from_str::<Value>(&value) {
            return parsed;
        }
    }
    Value::String(value)
}

/// Most levels of brackets a form key may have (`a[b][c]` has two), as Express's `qs` allows.
const MAX_DEPTH: usize = 5;

/// Decodes a url-encoded body into a JSON object, as the Express `qs` parser legacy clients were
/// written against does: `customer[phone]=…` and deeper `a[b][c]=…` nest, `items[0][name]=…` and
/// `tags[]=…` make arrays, and a key sent more than once (`contacts=a&contacts=b`) is a list.
pub fn form_to_json(bytes: &[u8]) -> Result<Value, serde_urlencoded::de::Error> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(bytes)?;
    let mut object = Value::Object(Map::new());
    for (key, value) in pairs {
        let path = key_path(&key);
        insert(&mut object, &path, form_value(value));
    }
    // the body itself stays an object; lists are made inside it
    let Value::Object(fields) = object else { return Ok(object) };
    Ok(Value::Object(fields.into_iter().map(|(k, v)| (k, listed(v))).collect()))
}

/// `a[b][c]` as `["a", "b", "c"]`; a key whose brackets do not close, or go deeper than
/// [`MAX_DEPTH`], is one plain name.
fn key_path(key: &str) -> Vec<String> {
    let Some((outer, mut rest)) = key.split_once('[') else { return vec![key.to_owned()] };
    let mut path = vec![outer.to_owned()];
    while let Some((inner, after)) = rest.split_once(']') {
        path.push(inner.to_owned());
        rest = after;
        match rest.strip_prefix('[') {
            Some(next) => rest = next,
            None if rest.is_empty() => break,
            None => return vec![key.to_owned()],
        }
    }
    if outer.is_empty() || path.len() == 1 || path.len() > MAX_DEPTH + 1 || !rest.is_empty() {
        return vec![key.to_owned()];
    }
    path
}

/// Puts `value` at `path` under `node`; a second value at the same place makes a list.
fn insert(node: &mut Value, path: &[String], value: Value) {
    insert_at(node, path, value, 0);
}

fn insert_at(node: &mut Value, path: &[String], value: Value, depth: usize) {
    let Value::Object(map) = node else { return };
    let Some((first, rest)) = path.split_first() else { return };
    // `tags[]=a&tags[]=b`: each value appended, under a fresh index (a field named "" is just that)
    let name = if first.is_empty() && depth > 0 { map.len().to_string() } else { first.clone() };
    if rest.is_empty() {
        match map.get_mut(&name) {
            Some(Value::Array(list)) => list.push(value),
            Some(existing) => *existing = Value::Array(vec![existing.take(), value]),
            None => {
                map.insert(name, value);
            }
        }
        return;
    }
    let child = map.entry(name).or_insert_with(|| Value::Object(Map::new()));
    if !child.is_object() {
        // `a=1&a[b]=2`: the nested form wins over the plain value
        *child = Value::Object(Map::new());
    }
    insert_at(child, rest, value, depth + 1);
}

/// Objects whose keys are exactly `0..n` (from `items[0][…]` or `tags[]`) become arrays.
fn listed(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let indexed = !map.is_empty() && (0..map.len()).all(|i| map.contains_key(&i.to_string()));
            let mut map: Map<String, Value> = map.into_iter().map(|(k, v)| (k, listed(v))).collect();
            if indexed {
                Value::Array((0..map.len()).filter_map(|i| map.remove(&i.to_string())).collect())
            } else {
                Value::Object(map)
            }
        }
        other => other,
    }
}

impl From<BodyError> for IntegrationError {
    fn from(error: BodyError) -> Self {
        match error {
            BodyError::Invalid(issues) => Self::invalid(issues),
            BodyError::TooLarge => Self::too_large("the body", MAX_BODY),
        }
    }
}

impl From<BodyError> for StaffError {
    fn from(error: BodyError) -> Self {
        match error {
            BodyError::Invalid(issues) => Self::invalid(issues),
            BodyError::TooLarge => Self::too_large(MAX_BODY),
        }
    }
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
        // the route's schema then makes the declared numbers numbers; the phone stays text, in the
        // form the brand's rows key it by (an Indian mobile's trunk zero dropped:
        // engage_actors::domain::phone)
        let schemas = crate::platform::edge::schemas::PlatformSchemas::compile().unwrap();
        let mut value = value;
        schemas.coerce("Order", &mut value);
        assert_eq!((&value["amount"], &value["customer"]["phone"]), (&json!(12.5), &json!("9876543210")));
        assert!(schemas.issues("Order", &value).iter().all(|i| i.pointer != "/amount"));
    }

    #[test]
    fn brackets_nest_and_repeated_keys_list() {
        let form = "customer[phone]=0987&customer[address][city]=Pune&items[0][name]=tea&items[0][qty]=2\
                    &items[1][name]=bun&contacts=6000000001&contacts=6000000002&tags[]=a&tags[]=b&odd[=x&plain=1&=null";
        assert_eq!(
            form_to_json(form.as_bytes()).unwrap(),
            json!({"customer": {"phone": "0987", "address": {"city": "Pune"}},
                   "items": [{"name": "tea", "qty": "2"}, {"name": "bun"}],
                   "contacts": ["6000000001", "6000000002"], "tags": ["a", "b"], "odd[": "x", "plain": "1", "": "null"})
        );
    }
}
