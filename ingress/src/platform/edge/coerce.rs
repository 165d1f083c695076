//! Schema-directed coercion of request bodies, the same for forms and JSON: before a body is
//! validated, each value whose JSON type is not one its schema declares is converted when the
//! conversion is exact, following AJV's `coerceTypes` (the Express + JSON-Schema stack the legacy
//! clients were written against). Decided by the declared type of each field, never by its name.
//!
//! | declared | given | becomes |
//! |---|---|---|
//! | `number` | a numeric string (`"80.50"`, `"1e3"`) | that number |
//! | `integer` | a string of a whole number (`"2"`, `"2.0"`), or a number with no fraction (`1.0`) | that integer |
//! | `number`, `integer` | `true` / `false` | `1` / `0` |
//! | `boolean` | `"true"`, `"1"`, `1` / `"false"`, `"0"`, `0` | `true` / `false` |
//! | `string` | a number (`parentBusinessId: 123`), a boolean | its text (`"123"`, `"true"`) |
//! | `array` | a single value | a one-element array (its element coerced in turn) |
//! | `enum` / `const` of strings | a number whose text is one of them (`execution_type: 1`) | that string |
//! | `enum` / `const` of numbers | a numeric string | that number |
//! | a type list with `null` (a field `null` removes) | the text `"null"` (a form has no other way to say null) | `null` |
//! | a string with the phone `pattern` ([`engage_actors::domain::phone::PATTERN`]) | a phone number in any written form (`+91 98111-10008`) | the form a brand's rows key it by (`9811110008`; [`engage_actors::domain::phone`]) |
//!
//! A value already of a declared type is otherwise left as it is (a number field's string keeps
//! its leading zeros); one that still does not fit after this is refused by the schema with its
//! pointer, as before. Objects and arrays are walked through `properties` and `items`.

use serde_json::{Map, Number, Value};

/// Coerces `value` in place to what `schema` declares (see the module's table).
pub fn coerce(schema: &Value, value: &mut Value) {
    if let Some(types) = declared(schema) {
        if types.contains(&"null") && value.as_str() == Some("null") {
            *value = Value::Null;
            return;
        }
        if !types.iter().any(|t| is_type(t, value)) {
            if let Some(coerced) = types.iter().find_map(|t| convert(t, value)) {
                *value = coerced;
            }
        }
    } else if let Some(choices) = choices(schema) {
        if !choices.contains(value) {
            if let Some(coerced) = choices.iter().find(|choice| same_text(choice, value)) {
                *value = coerced.clone();
            }
        }
    }
    if let Value::String(text) = value {
        if schema.get("pattern").and_then(Value::as_str) == Some(engage_actors::domain::phone::PATTERN) {
            *text = engage_actors::domain::phone::canonical(text);
        }
    }
    match value {
        Value::Object(object) => walk_object(schema, object),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for item in items {
                    coerce(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

fn walk_object(schema: &Value, object: &mut Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    for (name, field_schema) in properties {
        if let Some(field) = object.get_mut(name) {
            coerce(field_schema, field);
        }
    }
}

/// The types a schema declares (`type`, a name or a list).
fn declared(schema: &Value) -> Option<Vec<&str>> {
    match schema.get("type")? {
        Value::String(name) => Some(vec![name.as_str()]),
        Value::Array(names) => Some(names.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// The values an `enum` or `const` allows.
fn choices(schema: &Value) -> Option<Vec<Value>> {
    if let Some(constant) = schema.get("const") {
        return Some(vec![constant.clone()]);
    }
    schema.get("enum").and_then(Value::as_array).cloned()
}

fn same_text(choice: &Value, value: &Value) -> bool {
    match (choice, value) {
        (Value::String(text), Value::Number(number)) => *text == number.to_string(),
        (Value::Number(number), Value::String(text)) => parse_number(text).is_some_and(|n| n == *number),
        _ => false,
    }
}

fn is_type(name: &str, value: &Value) -> bool {
    match name {
        "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => false,
    }
}

/// A JSON number written as text (surrounding blanks allowed), as JSON would read it.
fn parse_number(text: &str) -> Option<Number> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let number: Number = serde_json::from_str(text).ok()?;
    Some(number)
}

/// A whole number as an integer (`2.0` → `2`).
fn whole(number: &Number) -> Option<Value> {
    if number.is_i64() || number.is_u64() {
        return Some(Value::Number(number.clone()));
    }
    let float = number.as_f64()?;
    (float.fract() == 0.0 && float.abs() < 9.0e15).then(|| Value::from(float as i64))
}

fn convert(name: &str, value: &Value) -> Option<Value> {
    match (name, value) {
        ("number", Value::String(text)) => parse_number(text).map(|n| whole(&n).unwrap_or(Value::Number(n))),
        ("integer", Value::String(text)) => parse_number(text).as_ref().and_then(whole),
        ("integer", Value::Number(number)) => whole(number),
        ("number" | "integer", Value::Bool(flag)) => Some(Value::from(u8::from(*flag))),
        ("boolean", Value::String(text)) => match text.trim() {
            "true" | "1" => Some(Value::Bool(true)),
            "false" | "0" => Some(Value::Bool(false)),
            _ => None,
        },
        ("boolean", Value::Number(number)) => match number.as_f64() {
            Some(1.0) => Some(Value::Bool(true)),
            Some(0.0) => Some(Value::Bool(false)),
            _ => None,
        },
        ("string", Value::Number(number)) => Some(Value::String(number.to_string())),
        ("string", Value::Bool(flag)) => Some(Value::String(flag.to_string())),
        ("array", Value::Object(_) | Value::String(_) | Value::Number(_) | Value::Bool(_)) => {
            Some(Value::Array(vec![value.clone()]))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn coerced(schema: Value, value: Value) -> Value {
        let mut value = value;
        coerce(&schema, &mut value);
        value
    }

    #[test]
    fn each_row_of_the_table() {
        let number = json!({"type": "number"});
        assert_eq!(coerced(number.clone(), json!("80.50")), json!(80.5));
        assert_eq!(coerced(number.clone(), json!(" 10 ")), json!(10));
        assert_eq!(coerced(number.clone(), json!("1e3")), json!(1000));
        assert_eq!(coerced(number.clone(), json!("ten")), json!("ten"), "no number: left for the schema to refuse");
        assert_eq!(coerced(number.clone(), json!("")), json!(""));
        assert_eq!(coerced(number, json!(true)), json!(1));
        let integer = json!({"type": "integer"});
        assert_eq!(coerced(integer.clone(), json!("2")), json!(2));
        assert_eq!(coerced(integer.clone(), json!("2.0")), json!(2));
        assert_eq!(coerced(integer.clone(), json!(1.0)), json!(1));
        assert_eq!(coerced(integer.clone(), json!(1.5)), json!(1.5), "a fraction is not an integer");
        assert_eq!(coerced(integer, json!("2.5")), json!("2.5"));
        let boolean = json!({"type": "boolean"});
        for (given, want) in [
            (json!("true"), true),
            (json!("1"), true),
            (json!(1), true),
            (json!("false"), false),
            (json!("0"), false),
            (json!(0), false),
        ] {
            assert_eq!(coerced(boolean.clone(), given.clone()), json!(want), "{given}");
        }
        assert_eq!(coerced(boolean, json!("yes")), json!("yes"));
        let string = json!({"type": "string"});
        assert_eq!(coerced(string.clone(), json!(123)), json!("123"));
        assert_eq!(coerced(string.clone(), json!(false)), json!("false"));
        assert_eq!(coerced(string, json!("+0098")), json!("+0098"), "a string keeps its + and zeros");
        let array = json!({"type": "array", "items": {"type": "integer"}});
        assert_eq!(coerced(array.clone(), json!("3")), json!([3]));
        assert_eq!(coerced(array, json!(["1", 2.0])), json!([1, 2]));
        assert_eq!(coerced(json!({"enum": ["1", "2"]}), json!(1)), json!("1"));
        assert_eq!(coerced(json!({"enum": [0, 1]}), json!("1")), json!(1));
        assert_eq!(coerced(json!({"const": 1}), json!("1")), json!(1));
        assert_eq!(coerced(json!({"type": ["integer", "string"]}), json!(7)), json!(7), "already a declared type");
        assert_eq!(coerced(json!({"type": ["string", "null"]}), json!("null")), json!(null));
        assert_eq!(
            coerced(json!({"type": "string"}), json!("null")),
            json!("null"),
            "null only where null is declared"
        );
    }

    #[test]
    fn objects_are_walked_through_their_properties() {
        let schema = json!({"type": "object", "properties": {
            "parentBusinessId": {"type": "string"}, "amount": {"type": "number"}, "page": {"type": "integer"},
            "customer": {"type": "object", "properties": {"phone": {"type": "string"}}},
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "qty": {"type": "integer"}, "price": {"type": "number"}}}}}});
        let body = json!({"parentBusinessId": 42, "amount": "120", "page": 1.0, "customer": {"phone": 9876543210u64},
            "items": [{"qty": "2", "price": "60.25"}], "extra": "5"});
        assert_eq!(
            coerced(schema, body),
            json!({"parentBusinessId": "42", "amount": 120, "page": 1, "customer": {"phone": "9876543210"},
                   "items": [{"qty": 2, "price": 60.25}], "extra": "5"})
        );
    }

    #[test]
    fn a_phone_field_keeps_the_number_in_the_form_rows_key_it_by() {
        let phone = json!({"type": "string", "pattern": engage_actors::domain::phone::PATTERN});
        assert_eq!(coerced(phone.clone(), json!("+91 98111-10008")), json!("9811110008"));
        assert_eq!(coerced(phone.clone(), json!(919811110008u64)), json!("9811110008"), "a number given as one");
        assert_eq!(
            coerced(phone.clone(), json!("12345")),
            json!("12345"),
            "not a phone: left for the schema to refuse"
        );
        assert_eq!(
            coerced(json!({"type": "string"}), json!("+919811110008")),
            json!("+919811110008"),
            "only phone fields"
        );
    }

    #[test]
    fn every_phone_field_of_the_platform_uses_the_one_rule() {
        // the fields coerce recognises by their pattern: a phone field with another pattern
        // would keep its written form and name another customer
        let rule = serde_json::to_string(engage_actors::domain::phone::PATTERN).unwrap();
        let mut found = 0;
        for (name, schema) in crate::platform::edge::schemas::PlatformSchemas::documents() {
            let text = schema.to_string();
            assert_eq!(
                text.matches("{7,15}").count(),
                text.matches(&rule).count(),
                "{name}: a phone pattern of its own"
            );
            for phone in ["\"phone\"", "\"mobile_number\"", "\"customer_number\""] {
                if text.contains(phone) {
                    found += 1;
                }
            }
        }
        assert!(found > 5, "the schemas were read: {found}");
    }
}
