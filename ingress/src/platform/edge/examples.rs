//! An example body for every operation of `/openapi.json` that takes JSON, made from the schema
//! the route validates with (its body type's, plus what the route itself requires): the required
//! fields only, each with the simplest value its schema allows, for brand `brand-example` and
//! outlet `outlet-1`. Derived, not written by hand, so it cannot go stale; a test posts every
//! operation's example and holds the server to accepting it (`tests/e2e/ops.rs`).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::{json, Map, Value};

/// The brand the examples act for.
pub const BRAND: &str = "brand-example";

/// Values tried for a `pattern`, in order; the first the pattern matches is taken.
const CANDIDATES: &[&str] = &[
    "9876543210",
    "+919876543210",
    "0123456789abcdef01234567",
    "https://example.com/offer",
    "2026-11-20 10:00:00",
    "123456",
    "09:00",
    "#336699",
    "ENGAGE",
    "ABCD1234",
    "welcome_back",
    "brand-example",
    "x",
];

/// Adds `example` to the JSON media type of every operation of `paths` whose body schema is known.
pub fn apply(paths: &mut Map<String, Value>, schemas: &Map<String, Value>) {
    for op in paths.values_mut().filter_map(Value::as_object_mut).flat_map(|item| item.values_mut()) {
        let Some(json) = op.pointer_mut("/requestBody/content/application~1json") else { continue };
        let example = instance(&json["schema"], schemas, "");
        if example.is_object() {
            json["example"] = example;
        }
    }
}

/// The simplest value `schema` allows (its required properties only); `name` is the property it is
/// the value of, for the brand and outlet fields.
pub fn instance(schema: &Value, schemas: &Map<String, Value>, name: &str) -> Value {
    let schema = resolved(schema, schemas);
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.iter().find(|v| !v.is_null())) {
        return first.clone();
    }
    let allows_text =
        schema["type"] == "string" || schema["type"].as_array().is_some_and(|k| k.contains(&json!("string")));
    if allows_text && matches!(name, "parent_business_id" | "parentBusinessId") {
        return json!(BRAND);
    }
    let kind = match &schema["type"] {
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).find(|k| *k != "null").unwrap_or("string"),
        Value::String(kind) => kind.as_str(),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match kind {
        "object" => object(&schema, schemas),
        "array" => {
            let count = schema["minItems"].as_u64().unwrap_or(1).max(1);
            Value::Array((0..count).map(|_| instance(&schema["items"], schemas, name)).collect())
        }
        "integer" | "number" => number(&schema, kind == "integer"),
        "boolean" => json!(true),
        _ => text(&schema, name),
    }
}

/// `schema` with its `$ref` followed and its `allOf` merged (required lists joined, the first
/// branch of an `anyOf` taken).
fn resolved(schema: &Value, schemas: &Map<String, Value>) -> Value {
    let mut out = match schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")) {
        Some(name) => schemas.get(name).cloned().unwrap_or_default(),
        None => schema.clone(),
    };
    let parts: Vec<Value> = out.get("allOf").and_then(Value::as_array).cloned().unwrap_or_default();
    let branch = out.get("anyOf").and_then(Value::as_array).and_then(|b| b.first()).cloned();
    if let Some(object) = out.as_object_mut() {
        object.remove("allOf");
        object.remove("anyOf");
    }
    for part in parts.iter().chain(branch.iter()) {
        let part = resolved(part, schemas);
        merge(&mut out, &part);
    }
    out
}

fn merge(into: &mut Value, part: &Value) {
    let Some(part) = part.as_object() else { return };
    for (key, value) in part {
        match (key.as_str(), into.get_mut(key)) {
            ("required", Some(Value::Array(list))) => {
                for field in value.as_array().into_iter().flatten() {
                    if !list.contains(field) {
                        list.push(field.clone());
                    }
                }
            }
            ("properties", Some(Value::Object(properties))) => {
                for (name, property) in value.as_object().into_iter().flatten() {
                    let entry = properties.entry(name.clone()).or_insert_with(|| json!({}));
                    merge(entry, property);
                }
            }
            (_, _) => into[key] = value.clone(),
        }
    }
}

fn object(schema: &Value, schemas: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        out.insert(name.to_owned(), instance(&schema["properties"][name], schemas, name));
    }
    // an object that needs a property but names none required (`minProperties`): its first
    let wanted = schema["minProperties"].as_u64().unwrap_or(0) as usize;
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        if out.len() >= wanted {
            break;
        }
        if !out.contains_key(name) && !name.to_lowercase().contains("parent") {
            out.insert(name.clone(), instance(property, schemas, name));
        }
    }
    Value::Object(out)
}

fn number(schema: &Value, integer: bool) -> Value {
    let floor = schema["minimum"].as_f64().or_else(|| schema["exclusiveMinimum"].as_f64().map(|m| m + 1.0));
    let mut value = floor.unwrap_or(1.0).max(1.0);
    if let Some(ceiling) = schema["maximum"].as_f64() {
        value = value.min(ceiling);
    }
    if integer || value.fract() == 0.0 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

fn text(schema: &Value, name: &str) -> Value {
    match (schema["format"].as_str(), name) {
        (Some("date"), _) => return json!("2026-11-20"),
        (Some("date-time"), _) => return json!("2026-11-20T10:00:00+05:30"),
        (Some("email"), _) => return json!("asha@example.com"),
        (Some("uri"), _) => return json!("https://example.com/offer"),
        (_, "business_id" | "businessId" | "child_business_id" | "outlet_id") if schema.get("pattern").is_none() => {
            return json!("outlet-1")
        }
        // a campaign's id in the wallet's transactions: the brand's first bulk campaign
        (_, "auto_id") if schema.get("pattern").is_none() => return json!("bulk-1"),
        _ => {}
    }
    if let Some(pattern) = schema["pattern"].as_str() {
        if let Some(found) = CANDIDATES.iter().find(|c| matches(pattern, c)) {
            return json!(found);
        }
    }
    json!("x".repeat(schema["minLength"].as_u64().unwrap_or(1).max(1) as usize))
}

/// Whether `pattern` matches `candidate` (compiled once per pattern).
fn matches(pattern: &str, candidate: &str) -> bool {
    static COMPILED: OnceLock<Mutex<HashMap<String, Option<jsonschema::Validator>>>> = OnceLock::new();
    let Ok(mut compiled) = COMPILED.get_or_init(Default::default).lock() else { return false };
    let validator = compiled
        .entry(pattern.to_owned())
        .or_insert_with(|| jsonschema::validator_for(&json!({"type": "string", "pattern": pattern})).ok());
    validator.as_ref().is_some_and(|v| v.is_valid(&json!(candidate)))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map, Value};

    #[test]
    fn every_typed_body_has_an_example_its_schema_accepts() {
        let schemas = crate::platform::edge::schemas::PlatformSchemas::compile().unwrap();
        let documents: Map<String, Value> = crate::platform::edge::schemas::PlatformSchemas::documents()
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v))
            .collect();
        for (name, schema) in &documents {
            let example = super::instance(schema, &documents, "");
            let issues = schemas.issues(name, &example);
            assert!(issues.is_empty(), "{name}: {example} — {issues:?}");
        }
        let order = super::instance(&documents["Order"], &documents, "");
        assert_eq!(order["customer"]["phone"], json!("9876543210"), "{order}");
    }

    #[test]
    fn a_routes_own_requirements_are_in_its_example() {
        let documents: Map<String, Value> = crate::platform::edge::schemas::PlatformSchemas::documents()
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v))
            .collect();
        let route = json!({"allOf": [{"$ref": "#/components/schemas/IntegrationUserRequest"},
            {"required": ["business_id"]}, {"anyOf": [{"required": ["parent_business_id"]}]}]});
        let example = super::instance(&route, &documents, "");
        assert_eq!(
            (&example["business_id"], &example["parent_business_id"]),
            (&json!("outlet-1"), &json!(super::BRAND)),
            "{example}"
        );
    }
}
