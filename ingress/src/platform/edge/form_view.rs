//! How a body type travels as a url-encoded form, for `/openapi.json`. A form field is text, so
//! the document says how the nested parts of a body are written, the way the Express `qs` parser
//! legacy clients use reads them and [`crate::platform::edge::body::form_to_json`] reads them too:
//!
//! - an object property as `deepObject` (`customer[phone]=…`, deeper `a[b][c]=…`);
//! - an array of objects (`items`) has no form style in OpenAPI, so the form view of the body
//!   leaves it out (`<Type>Form`); a form may still send it as `items[0][name]=…` or as JSON text
//!   (`items=[{…}]`), and a body that needs one is documented as JSON only.
//!
//! A route's own requirements (`{"allOf": [{"$ref": …}, {"required": …}]}`) are merged into its
//! form view, since a form's fields are read off the schema's top-level `properties`.
//!
//! The JSON view of every body is its schema unchanged; the form view is derived from it here, so
//! there is still one schema per body.

use serde_json::{json, Map, Value};

/// Rewrites the form media type of every operation of `paths` whose body has nested parts.
pub fn apply(paths: &mut Map<String, Value>, schemas: &mut Map<String, Value>) {
    let mut views = Map::new();
    for op in paths.values_mut().filter_map(Value::as_object_mut).flat_map(|item| item.values_mut()) {
        let Some(content) = op.pointer_mut("/requestBody/content").and_then(Value::as_object_mut) else { continue };
        let Some(form) = content.get_mut("application/x-www-form-urlencoded") else { continue };
        let Some(name) = body_name(&form["schema"]) else { continue };
        let Some(schema) = schemas.get(&name) else { continue };
        let rules: Vec<Value> = form["schema"]["allOf"].as_array().map(|all| all[1..].to_vec()).unwrap_or_default();
        let properties = schema["properties"].as_object().cloned().unwrap_or_default();
        let required: Vec<&str> =
            schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let lists: Vec<&String> = properties.keys().filter(|p| is_list_of_objects(&properties[p.as_str()])).collect();
        if lists.iter().any(|p| required.contains(&p.as_str())) {
            content.remove("application/x-www-form-urlencoded");
            continue;
        }
        let mut encoding = Map::new();
        for (property, _) in properties.iter().filter(|(_, s)| declares(s, "object")) {
            encoding.insert(property.clone(), json!({"style": "deepObject", "explode": true}));
        }
        if !encoding.is_empty() {
            form["encoding"] = Value::Object(encoding);
        }
        if lists.is_empty() && rules.is_empty() {
            continue;
        }
        let mut view_name = format!("{name}Form");
        let mut view = schema.clone();
        if let Some(kept) = view["properties"].as_object_mut() {
            for list in &lists {
                kept.remove(list.as_str());
            }
        }
        if !lists.is_empty() {
            let left_out = lists.iter().map(|l| l.as_str()).collect::<Vec<_>>().join(", ");
            view["description"] = json!(format!(
                "{name} as a url-encoded form: {left_out} left out (send them as JSON text or items[0][name]=…)"
            ));
        }
        for rule in &rules {
            merge_rule(&mut view, rule, &mut view_name);
        }
        views.insert(view_name.clone(), view);
        form["schema"] = json!({"$ref": format!("#/components/schemas/{view_name}")});
    }
    schemas.extend(views);
}

/// Merges a route's rule into its form view (and names the view after it): `required` fields join
/// the view's, any other rule (`anyOf` of brand fields) is kept beside them with `allOf`.
fn merge_rule(view: &mut Value, rule: &Value, view_name: &mut String) {
    match rule.get("required").and_then(Value::as_array) {
        Some(fields) if rule.as_object().is_some_and(|r| r.len() == 1) => {
            for field in fields {
                let required = view["required"].as_array_mut();
                match required {
                    Some(list) if !list.contains(field) => list.push(field.clone()),
                    Some(_) => {}
                    None => view["required"] = json!([field]),
                }
                view_name.push('_');
                view_name.push_str(field.as_str().unwrap_or_default());
            }
        }
        _ => {
            let all = view.as_object_mut().map(|v| v.entry("allOf").or_insert_with(|| json!([])));
            if let Some(Value::Array(all)) = all {
                all.push(rule.clone());
            }
            view_name.push_str("_brand");
        }
    }
}

/// The component a body schema names: `{"$ref": …}` or `{"allOf": [{"$ref": …}, …]}`.
fn body_name(schema: &Value) -> Option<String> {
    let reference = schema.pointer("/allOf/0/$ref").or_else(|| schema.get("$ref"))?.as_str()?;
    reference.strip_prefix("#/components/schemas/").map(str::to_owned)
}

fn declares(schema: &Value, kind: &str) -> bool {
    match &schema["type"] {
        Value::String(name) => name == kind,
        Value::Array(names) => names.iter().any(|n| n == kind),
        _ => false,
    }
}

fn is_list_of_objects(schema: &Value) -> bool {
    declares(schema, "array") && (declares(&schema["items"], "object") || schema["items"].get("properties").is_some())
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map, Value};

    #[test]
    fn nested_objects_are_deep_objects_and_lists_of_objects_leave_the_form_view() {
        let mut schemas: Map<String, Value> = serde_json::from_value(json!({
            "Order": {"type": "object", "required": ["customer"], "properties": {
                "customer": {"type": "object", "properties": {"phone": {"type": "string"}}},
                "items": {"type": "array", "items": {"type": "object"}}, "amount": {"type": "number"}}},
            "Milestones": {"type": "object", "required": ["milestones"], "properties": {
                "milestones": {"type": "array", "items": {"type": "object"}}}}}))
        .unwrap();
        let form = |name: &str| {
            json!({"requestBody": {"content": {
            "application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}},
            "application/x-www-form-urlencoded": {"schema": {"allOf": [{"$ref": format!("#/components/schemas/{name}")}]}}}}})
        };
        let open = json!({"requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {"allOf": [
            {"$ref": "#/components/schemas/Order"}, {"required": ["parentBusinessId"]}]}}}}});
        let mut paths: Map<String, Value> = serde_json::from_value(
            json!({"/order": {"post": form("Order")}, "/milestones": {"post": form("Milestones")},
                "/open": {"post": open}}),
        )
        .unwrap();
        super::apply(&mut paths, &mut schemas);
        let order = &paths["/order"]["post"]["requestBody"]["content"];
        assert_eq!(order["application/x-www-form-urlencoded"]["encoding"]["customer"]["style"], "deepObject");
        assert_eq!(order["application/x-www-form-urlencoded"]["schema"]["$ref"], "#/components/schemas/OrderForm");
        assert_eq!(order["application/json"]["schema"]["$ref"], "#/components/schemas/Order", "JSON unchanged");
        assert!(schemas["OrderForm"]["properties"].get("items").is_none());
        assert!(schemas["Order"]["properties"].get("items").is_some());
        let milestones = &paths["/milestones"]["post"]["requestBody"]["content"];
        assert!(milestones.get("application/x-www-form-urlencoded").is_none(), "a required list: JSON only");
        // a route's own requirement joins its form view, whose fields are then top-level
        let open = &paths["/open"]["post"]["requestBody"]["content"]["application/x-www-form-urlencoded"];
        assert_eq!(open["schema"]["$ref"], "#/components/schemas/OrderForm_parentBusinessId");
        assert_eq!(schemas["OrderForm_parentBusinessId"]["required"], json!(["customer", "parentBusinessId"]));
    }
}
