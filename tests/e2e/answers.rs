//! Every answer is part of the contract (issue 52): each operation of `/openapi.json` is called with
//! valid data (its own example, for a brand that has a customer, an order, a wallet and rules), and
//! every field of every 200 answer must be declared in the operation's documented 200 schema,
//! recursively (`$ref`s resolved, `allOf`/`anyOf`/`oneOf` branches, maps through
//! `additionalProperties`). A field the schema leaves undeclared is a failure; so is an operation
//! that documents its 200 as `{status}` alone, unless it is the spec's acknowledgement
//! (`x-engage-answer: acknowledgement`, exactly `{status: 1}`) or one of the free-form answers the
//! docs list (`docs/engagement-platform.md`, "Answers").

use serde_json::{json, Value};

use crate::helpers::{spawn_app, token_for, TestApp};
use crate::platform::{order, wait_customer};

/// Operations whose 200 is free-form by design (listed, with the reason, in the docs).
const FREE_FORM: &[&str] = &[];

/// Operations whose 200 is `{status}` alone by design: liveness answers `{status: "ok"}` and
/// nothing else (`ops::Health`).
const STATUS_ONLY: &[&str] = &["/healthz"];

/// List routes whose `data` must hold rows for the seeded brand (so their items are checked).
const LISTS: &[&str] = &[
    "/crm_api/wallet/transactions",
    "/crm_api/loyalty/ledger",
    "/integration/v1/get_wallet_ledger",
    "/crm_api/day/wise/data",
    "/crm_api/automated/campaigns/report",
];

/// Lists whose items are free-form by design (`docs/engagement-platform.md`, "Answers"): NPS
/// questions and answers as the brand wrote them, raw order payloads.
const FREE_FORM_LISTS: &[&str] = &["/questions", "/answers", "/payload"];

/// `schema` with its `$ref` (to `#/components/schemas/…`) followed.
fn resolved<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    let mut schema = schema;
    for _ in 0..16 {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else { break };
        let name = reference.rsplit('/').next().unwrap_or_default();
        schema = &doc["components"]["schemas"][name];
    }
    schema
}

/// The branches of `schema`: itself and those of its `allOf`, `anyOf`, `oneOf`, resolved.
fn branches<'a>(doc: &'a Value, schema: &'a Value, out: &mut Vec<&'a Value>) {
    let schema = resolved(doc, schema);
    out.push(schema);
    for key in ["allOf", "anyOf", "oneOf"] {
        for branch in schema[key].as_array().into_iter().flatten() {
            branches(doc, branch, out);
        }
    }
}

/// Whether `schema` says nothing of its value's shape (`true`, `{}`): a free-form part.
fn free(schema: &Value) -> bool {
    schema == &Value::Bool(true) || schema.as_object().is_some_and(|o| o.keys().all(|k| k == "description"))
}

/// The fields of `value` (at `at`) that `schema` does not declare.
fn undeclared(doc: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let mut all = Vec::new();
    branches(doc, schema, &mut all);
    if all.iter().any(|s| free(s)) {
        return;
    }
    match value {
        Value::Object(fields) => {
            for (name, field) in fields {
                let here = format!("{at}/{name}");
                let declared: Vec<&Value> = all.iter().filter_map(|s| s["properties"].get(name)).collect();
                let maps: Vec<&Value> =
                    all.iter().filter_map(|s| s.get("additionalProperties")).filter(|a| a.is_object()).collect();
                let open = all.iter().any(|s| s.get("additionalProperties") == Some(&Value::Bool(true)));
                if declared.is_empty() && maps.is_empty() {
                    if !open {
                        out.push(here);
                    } else {
                        out.push(format!("{here} (only as additionalProperties: true)"));
                    }
                    continue;
                }
                // declared in some branch: its value must fit one of them
                let mut best: Option<Vec<String>> = None;
                for candidate in declared.iter().chain(maps.iter()) {
                    let mut missing = Vec::new();
                    undeclared(doc, candidate, field, &here, &mut missing);
                    if best.as_ref().is_none_or(|b| missing.len() < b.len()) {
                        best = Some(missing);
                    }
                }
                out.extend(best.unwrap_or_default());
            }
        }
        Value::Array(items) => {
            let item_schemas: Vec<&Value> = all.iter().filter_map(|s| s.get("items")).collect();
            // a list whose items are objects must say what they hold (issue 67): an untyped item
            // schema (`true`, `{}`) is a failure unless the list is free-form by design
            let untyped = !item_schemas.is_empty() && item_schemas.iter().all(|s| free(resolved(doc, s)));
            if untyped && items.iter().any(|item| item.is_object()) && !FREE_FORM_LISTS.iter().any(|l| at.ends_with(l))
            {
                out.push(format!("{at} (items of no declared shape)"));
                return;
            }
            for (n, item) in items.iter().enumerate() {
                let mut best: Option<Vec<String>> = None;
                for candidate in &item_schemas {
                    let mut missing = Vec::new();
                    undeclared(doc, candidate, item, &format!("{at}/{n}"), &mut missing);
                    if best.as_ref().is_none_or(|b| missing.len() < b.len()) {
                        best = Some(missing);
                    }
                }
                if item_schemas.is_empty() && (item.is_object() || item.is_array()) {
                    out.push(format!("{at}/{n} (an array without items)"));
                }
                out.extend(best.unwrap_or_default());
            }
        }
        _ => {}
    }
}

/// The documented 200 schema of `path`'s POST.
fn ok_schema<'a>(doc: &'a Value, path: &str) -> &'a Value {
    &doc["paths"][path]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
}

/// A brand with a customer (9876543210), an order, a wallet, loyalty rules and a reward.
async fn seed(app: &TestApp) {
    let brand = engage_ingress::platform::edge::examples::BRAND;
    let staff = token_for(app, "staff", brand, None).await;
    let post = |path: &'static str, body: Value| {
        let request = app.client.post(format!("{}{path}", app.base)).header("token", staff.clone()).json(&body);
        async move { request.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(
        post(
            "/crm_api/wallet/recharge",
            json!({"parent_business_id": brand, "business_id": "outlet-1", "amount": 500})
        )
        .await,
        200
    );
    let rules = json!({"parent_business_id": brand, "earn_percent": 10, "min_bill": 0, "point_value": 1,
                       "points_expiry_days": 365, "max_redeem_percent": 50, "min_redeem_points": 1});
    assert_eq!(post("/crm_api/add_edit_rules", rules).await, 200);
    let mut first = order(brand, "answers-1", "9876543210", 600.0);
    first["businessId"] = json!("outlet-1");
    assert_eq!(
        app.client.post(format!("{}/injestion/platform", app.base)).json(&first).send().await.unwrap().status(),
        200
    );
    wait_customer(app, brand, "9876543210", |c| c["total_orders"] == 1).await;
    // a bulk campaign (`bulk-1`, the example's auto_id), so the campaign report has rows
    let b = crate::journey_runs::Brand::new(app, brand).await;
    let fields = [("business_id", "outlet-1"), ("campaign_name", "Answers"), ("channel", "sms"), ("template_id", "t1")];
    let (status, queued) =
        crate::campaigns::upload(&b, "/crm_api/create/bulk/campaign", &fields, "Phone\n9876543211\n").await;
    assert_eq!((status, &queued["auto_id"]), (200, &json!("bulk-1")), "{queued}");
}

#[tokio::test]
async fn every_answer_is_declared_in_its_documented_schema() {
    let app = spawn_app(&[]).await;
    let (_, doc) = app.get_json("/openapi.json").await;

    // no operation documents its 200 as {status} alone (acknowledgements and the listed free-form
    // answers aside)
    let mut bare = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(schema) = op.pointer("/responses/200/content/application~1json/schema") else { continue };
            let mut all = Vec::new();
            branches(&doc, schema, &mut all);
            let fields: Vec<&String> =
                all.iter().filter_map(|s| s["properties"].as_object()).flat_map(|p| p.keys()).collect();
            let acknowledgement = all.iter().any(|s| s["x-engage-answer"] == "acknowledgement")
                && all.iter().any(|s| s["additionalProperties"] == false);
            let maps = all.iter().any(|s| s["additionalProperties"].is_object());
            if fields.iter().all(|f| *f == "status")
                && !maps
                && !acknowledgement
                && !FREE_FORM.contains(&path.as_str())
                && !STATUS_ONLY.contains(&path.as_str())
            {
                bare.push(format!("{method} {path}: {schema}"));
            }
        }
    }
    assert!(bare.is_empty(), "{} operations document no answer:\n{}", bare.len(), bare.join("\n"));

    seed(&app).await;
    let answers = crate::ops::post_examples(&app, &doc).await;
    let mut checked = 0;
    let mut failures = Vec::new();
    for (path, status, answer) in &answers {
        if *status != 200 {
            continue;
        }
        checked += 1;
        let mut missing = Vec::new();
        undeclared(&doc, ok_schema(&doc, path), answer, "", &mut missing);
        if !missing.is_empty() {
            failures.push(format!("POST {path}: {missing:?} in {answer}"));
        }
    }
    assert!(failures.is_empty(), "{} answers have undeclared fields:\n{}", failures.len(), failures.join("\n"));
    // the list routes answered rows, so their items were checked, not an empty list
    let mut empty = Vec::new();
    for path in LISTS {
        let rows = answers.iter().find(|(p, status, _)| p == path && *status == 200).map(|(_, _, a)| a["data"].clone());
        if rows.as_ref().and_then(Value::as_array).is_none_or(|rows| rows.is_empty()) {
            empty.push(format!("{path}: {rows:?}"));
        }
    }
    assert!(empty.is_empty(), "list routes without rows to check:\n{}", empty.join("\n"));
    assert!(checked > 90, "only {checked} operations answered 200 to their example");
}

#[test]
fn the_check_finds_an_undeclared_field() {
    let doc = json!({"components": {"schemas": {"A": {"type": "object", "properties": {"a": {"type": "integer"}}}}}});
    let schema = json!({"allOf": [{"$ref": "#/components/schemas/A"}, {"properties": {"list": {"items": {"properties": {"x": {}}}}}}]});
    let mut missing = Vec::new();
    undeclared(&doc, &schema, &json!({"a": 1, "b": 2, "list": [{"x": 1, "y": 2}]}), "", &mut missing);
    assert_eq!(missing, ["/b", "/list/0/y"]);
    // a list of objects whose items have no declared shape
    let mut untyped = Vec::new();
    let rows = json!({"type": "object", "properties": {"data": {"type": "array", "items": true}}});
    undeclared(&doc, &rows, &json!({"data": [{"at": "2026-11-29"}]}), "", &mut untyped);
    assert_eq!(untyped, ["/data (items of no declared shape)"]);
    let mut none = Vec::new();
    undeclared(
        &doc,
        &json!({"type": "object", "additionalProperties": {"type": "integer"}}),
        &json!({"k": 1}),
        "",
        &mut none,
    );
    assert!(none.is_empty(), "{none:?}");
}
