//! The JSON Schema of a typed request body, generated from its Rust type: the fields, which of them
//! are required (`Option` or not) and their JSON types come from the type itself; bounds (length,
//! range, pattern, enum, format) are attributes on its fields (`#[schemars(...)]`, in
//! [`crate::platform::edge::requests`]). The type is the one source: the edge validates a body against this schema
//! ([`crate::platform::edge::schemas::PlatformSchemas`]) and `/openapi.json` publishes it under the type's name.
//!
//! Two readings make the generated schema say what the routes accept:
//! - an `Option` field left out is absent, not `null`: its schema does not add `null`, unless the
//!   field says null has a meaning (`x-engage-nullable`, "null removes it": business configuration);
//! - integer widths (`uint32`, `int64`, …) are the Rust type's, not the contract's: the bounds the
//!   field states are the contract, so those formats are left out.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// What a route acts on, for outlet-limited tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The whole brand: an outlet-limited token may not use the route.
    Tenant,
    /// One outlet, which the request names: an outlet-limited token may use it for its outlet.
    Outlet,
    /// One customer of the brand (customers are the brand's, not an outlet's): any token of the
    /// brand may use it; an outlet it names must be an outlet-limited token's own.
    Customer,
}

impl Scope {
    /// `brand` or `outlet` (`x-engage-scope` in `/openapi.json`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Tenant => "brand",
            Scope::Outlet => "outlet",
            Scope::Customer => "customer",
        }
    }
}

/// A platform request body: decoded from JSON after its schema accepted it.
pub trait PlatformRequest: DeserializeOwned + Send + 'static {
    /// The name of its JSON Schema (the type's own name): `schemas/*.json`, and
    /// `#/components/schemas/<name>` in `/openapi.json`.
    const SCHEMA: &'static str;

    /// What the route acts on, for outlet-limited tokens ([`Scope`]).
    const SCOPE: Scope;

    /// The body fields that name the outlet, the first the one an outlet-limited token fills in
    /// when the body leaves the outlet out.
    const OUTLET_FIELDS: &'static [&'static str] = &[];

    /// The body fields that name the brand (one of them is required where the token does not
    /// give the brand: staff tokens and the open routes).
    const BRAND_FIELDS: &'static [&'static str] = &[];

    /// The brand the body names, when it names one.
    fn tenant(&self) -> Option<&str> {
        None
    }
}

/// The schema of `T`, as the edge validates bodies with it.
pub fn schema_of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true).into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    read_as_contract(&mut schema);
    schema
}

/// The schema of an answer of type `T`, as it is serialized: every subschema inlined, integer
/// widths left out. A field that may be `null` says so; a field that may be left out is not
/// required.
pub fn answer_schema<T: JsonSchema>() -> Value {
    let generator =
        SchemaSettings::draft2020_12().for_serialize().with(|s| s.inline_subschemas = true).into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    drop_widths(&mut schema);
    schema
}

/// Drops integer widths, and writes a schema that allows anything (a free-form `Value` field) as
/// `{}` rather than `true`: the same to JSON Schema, and what client generators read.
fn drop_widths(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object.get("format").and_then(Value::as_str).is_some_and(|f| WIDTHS.contains(&f)) {
                object.remove("format");
            }
            for (key, value) in object.iter_mut() {
                match (key.as_str(), value) {
                    ("items", any @ Value::Bool(true)) => *any = Value::Object(Map::new()),
                    ("properties" | "$defs", Value::Object(named)) => {
                        for any in named.values_mut().filter(|v| **v == Value::Bool(true)) {
                            *any = Value::Object(Map::new());
                        }
                    }
                    ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(choices)) => {
                        for any in choices.iter_mut().filter(|v| **v == Value::Bool(true)) {
                            *any = Value::Object(Map::new());
                        }
                    }
                    _ => {}
                }
            }
            object.values_mut().for_each(drop_widths);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_widths),
        _ => {}
    }
}

/// Integer formats of Rust types, not of the contract.
const WIDTHS: &[&str] =
    &["int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float", "double"];

fn read_as_contract(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else { return };
    if object.get("format").and_then(Value::as_str).is_some_and(|f| WIDTHS.contains(&f)) {
        object.remove("format");
    }
    let required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                absent_is_not_null(property);
            }
        }
    }
    for (key, value) in object.iter_mut() {
        match (key.as_str(), value) {
            ("properties", Value::Object(properties)) => properties.values_mut().for_each(read_as_contract),
            ("items", item @ Value::Object(_)) => read_as_contract(item),
            _ => {}
        }
    }
}

/// An optional field's schema without the `null` schemars adds for `Option` (kept when the field
/// is marked `x-engage-nullable`).
fn absent_is_not_null(property: &mut Value) {
    let Some(object) = property.as_object_mut() else { return };
    if object.remove("x-engage-nullable").is_some() {
        return;
    }
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            object.insert("type".to_owned(), only);
        }
    }
    // `Option<struct>`: {"anyOf": [{…the struct…}, {"type": "null"}]} → the struct
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(choices)) = object.get(key) else { continue };
        let some: Vec<Value> =
            choices.iter().filter(|c| c.get("type") != Some(&Value::from("null"))).cloned().collect();
        if some.len() == 1 && some.len() < choices.len() {
            object.remove(key);
            if let Value::Object(inner) = &some[0] {
                let mut merged: Map<String, Value> = inner.clone();
                merged.extend(std::mem::take(object));
                *object = merged;
            }
        }
    }
    if object.get("enum").and_then(Value::as_array).is_some_and(|e| e.contains(&Value::Null)) {
        if let Some(Value::Array(choices)) = object.get_mut("enum") {
            choices.retain(|c| !c.is_null());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn optional_fields_are_absent_not_null_unless_null_means_something() {
        let mut schema = json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"type": ["string", "null"]},
            "c": {"type": ["string", "null"], "x-engage-nullable": true},
            "d": {"anyOf": [{"type": "object", "properties": {"n": {"type": "integer", "format": "uint32"}}}, {"type": "null"}], "description": "kept"},
            "e": {"type": ["integer", "null"], "format": "int64", "enum": [0, 1, null]}}});
        super::read_as_contract(&mut schema);
        let p = &schema["properties"];
        assert_eq!(p["a"]["type"], json!(["string", "null"]), "a required field is as the type says");
        assert_eq!(p["b"]["type"], "string");
        assert_eq!(p["c"]["type"], json!(["string", "null"]));
        assert!(p["c"].get("x-engage-nullable").is_none());
        assert_eq!((&p["d"]["type"], &p["d"]["description"]), (&json!("object"), &json!("kept")));
        assert!(p["d"]["properties"]["n"].get("format").is_none());
        assert_eq!((&p["e"]["type"], &p["e"]["enum"]), (&json!("integer"), &json!([0, 1])));
        assert!(p["e"].get("format").is_none());
    }
}
