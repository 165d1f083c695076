//! Tenant isolation, tried as another brand would: every operation of `/openapi.json` that takes a
//! brand (read from the document itself, so a route added later is covered without editing this
//! test) is called with each credential kind of another brand, and of an outlet-limited token of
//! the same brand on another outlet; each call must be refused in the route's family, and the
//! victim's state (read through its own tokens) must be unchanged afterwards.
//!
//! The two brands are `c` and `c|vip`: before keys were escaped, brand `c`'s outlet `vip|o1` and
//! brand `c|vip`'s outlet `o1` shared rows (a wallet ledger among them).

use std::time::{Duration, Instant};

use reqwest::multipart;
use serde_json::{json, Map, Value};

use crate::helpers::{read, spawn_app, token_for, TestApp};

const VICTIM: &str = "c|vip";
const VICTIM_OUTLET: &str = "o1";
const ATTACKER: &str = "c";
const ATTACKER_OUTLET: &str = "vip|o1";
const ATTACKER_OTHER_OUTLET: &str = "o2";
const PHONE: &str = "9876543210";

const BRAND_FIELDS: [&str; 2] = ["parentBusinessId", "parent_business_id"];
const OUTLET_FIELDS: [&str; 4] = ["business_id", "businessId", "child_business_id", "outlet_id"];

/// A credential: its kind (as `/openapi.json` names the scheme) and the token.
#[derive(Clone, Debug)]
struct Credential {
    scheme: &'static str,
    token: String,
    label: String,
}

impl Credential {
    fn headers(&self) -> Vec<(&'static str, String)> {
        match self.scheme {
            "integrationToken" => vec![("authorization", self.token.clone())],
            "appToken" => vec![("token", self.token.clone()), ("source", "mobile".to_owned())],
            _ => vec![("token", self.token.clone())],
        }
    }
}

async fn credential(app: &TestApp, scheme: &'static str, parent: &str, business: Option<&str>) -> Credential {
    let kind = match scheme {
        "staffToken" => "staff",
        "integrationToken" => "integration",
        "ingestionToken" => "ingestion",
        _ => "app",
    };
    let token = token_for(app, kind, parent, business).await;
    Credential { scheme, token, label: format!("{kind} of {parent:?} (outlet {business:?})") }
}

async fn post(app: &TestApp, path: &str, credential: &Credential, body: &Value) -> (u16, Value) {
    let mut request = app.client.post(format!("{}{path}", app.base)).json(body);
    for (name, value) in credential.headers() {
        request = request.header(name, value);
    }
    read(request.send().await.unwrap()).await
}

/// `#/components/schemas/X` resolved.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    // a route's own requirements wrap its body type: {"allOf": [{"$ref": …}, {"required": …}]}
    let schema = schema.pointer("/allOf/0").unwrap_or(schema);
    match schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")) {
        Some(name) => &doc["components"]["schemas"][name],
        None => schema,
    }
}

/// A small instance of `schema`: its required properties, each the simplest value it allows.
fn instance(doc: &Value, schema: &Value) -> Value {
    let schema = resolve(doc, schema);
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::Array(kinds) => kinds.first().and_then(Value::as_str).unwrap_or("string"),
        Value::String(kind) => kind.as_str(),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match kind {
        "object" => {
            let mut out = Map::new();
            for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                out.insert(name.to_owned(), instance(doc, &schema["properties"][name]));
            }
            Value::Object(out)
        }
        "array" => {
            let items = schema["minItems"].as_u64().unwrap_or(0).max(1);
            Value::Array((0..items).map(|_| instance(doc, &schema["items"])).collect())
        }
        "integer" => json!(schema["minimum"].as_i64().unwrap_or(1).max(1)),
        "number" => json!(schema["minimum"].as_f64().unwrap_or(1.0).max(1.0)),
        "boolean" => json!(true),
        _ if schema["format"] == "date" => json!("2026-11-20"),
        _ if schema["format"] == "date-time" => json!("2026-11-20T10:00:00Z"),
        _ => match schema["pattern"].as_str().unwrap_or_default() {
            p if p.contains("http") => json!("https://example.com/x"),
            p if p.contains("[0-9]{7") || p.contains("[6-9]") || p.contains("[0-9]{9") => json!(PHONE),
            p if p.starts_with("^[a-z]") => json!("abc"),
            _ => json!("x".repeat(schema["minLength"].as_u64().unwrap_or(1).max(1) as usize)),
        },
    }
}

/// The body schema of an operation (JSON, form or multipart) and whether it is multipart.
fn body_schema<'a>(doc: &'a Value, op: &'a Value) -> Option<(&'a Value, bool)> {
    let content = op["requestBody"]["content"].as_object()?;
    if let Some(multipart) = content.get("multipart/form-data") {
        return Some((resolve(doc, &multipart["schema"]), true));
    }
    content
        .get("application/json")
        .or_else(|| content.get("application/x-www-form-urlencoded"))
        .map(|c| (resolve(doc, &c["schema"]), false))
}

/// A body for `op` naming `brand` (in the brand fields its schema has) and `outlet` (in its outlet
/// fields).
fn body_naming(doc: &Value, op: &Value, brand: &str, outlet: &str) -> (Value, bool) {
    let Some((schema, multipart)) = body_schema(doc, op) else { return (json!({"parent_business_id": brand}), false) };
    let mut body = instance(doc, schema);
    let properties = schema["properties"].as_object().cloned().unwrap_or_default();
    // fields the route requires beyond its body type ({"allOf": [{"$ref"}, {"required": […]}]})
    let wrapper = op["requestBody"]["content"].as_object().and_then(|c| c.values().next()).map(|m| &m["schema"]);
    let rules = wrapper.and_then(|w| w["allOf"].as_array()).into_iter().flatten().skip(1);
    for name in rules.filter_map(|r| r["required"].as_array()).flatten().filter_map(Value::as_str) {
        if body.get(name).is_none() {
            body[name] = instance(doc, &properties.get(name).cloned().unwrap_or_default());
        }
    }
    let brand_fields: Vec<&str> = BRAND_FIELDS.iter().copied().filter(|f| properties.contains_key(*f)).collect();
    for field in if brand_fields.is_empty() { vec!["parent_business_id"] } else { brand_fields } {
        body[field] = json!(brand);
    }
    for field in OUTLET_FIELDS.iter().filter(|f| properties.contains_key(**f)) {
        body[*field] = json!(outlet);
    }
    (body, multipart)
}

/// The credential schemes an operation accepts, and whether it is one of the spec's open routes.
fn schemes(op: &Value) -> (Vec<String>, bool) {
    let schemes = op["security"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|requirement| requirement.keys().cloned())
        .collect();
    (schemes, op["x-engage-open"] == true)
}

const TOKEN_SCHEMES: [&str; 4] = ["staffToken", "integrationToken", "ingestionToken", "appToken"];

/// One brand-taking operation of the document.
struct Operation {
    method: String,
    path: String,
    op: Value,
    /// The scheme a caller must use (open routes, closed: `integrationToken`).
    scheme: String,
}

fn operations(doc: &Value) -> Vec<Operation> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let (schemes, open) = schemes(op);
            let Some(scheme) = schemes.iter().find(|s| TOKEN_SCHEMES.contains(&s.as_str())) else { continue };
            // an operation about the credential itself (`/dashboard/session`) takes no brand: no
            // body, no parameter; it answers the caller's own brand only
            if op["x-engage-scope"] == "token" {
                assert!(op["requestBody"].is_null() && op["parameters"].is_null(), "{method} {path} takes input");
                continue;
            }
            assert!(!open || scheme == "integrationToken", "{method} {path}: an open route closes to {scheme}");
            out.push(Operation {
                method: method.to_uppercase(),
                path: path.replace("{chat_partner}", "partner1"),
                op: op.clone(),
                scheme: scheme.clone(),
            });
        }
    }
    out
}

async fn call(
    app: &TestApp,
    doc: &Value,
    operation: &Operation,
    credential: &Credential,
    body: &Value,
) -> (u16, Value) {
    let url = format!("{}{}", app.base, operation.path);
    let mut request = match operation.method.as_str() {
        "GET" => {
            let query: Vec<(String, String)> = operation.op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "query")
                .filter_map(|p| p["name"].as_str())
                .map(|name| {
                    let value =
                        body.get(name).and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| PHONE.to_owned());
                    (name.to_owned(), value)
                })
                .collect();
            app.client.get(reqwest::Url::parse_with_params(&url, &query).unwrap())
        }
        _ => app.client.post(&url),
    };
    if operation.method != "GET" {
        request = match body_schema(doc, &operation.op) {
            Some((_, true)) => {
                let mut form = multipart::Form::new();
                for (name, value) in body.as_object().unwrap() {
                    if name != "file" {
                        form = form
                            .text(name.clone(), value.as_str().map(str::to_owned).unwrap_or_else(|| value.to_string()));
                    }
                }
                let file = multipart::Part::bytes(format!("Phone\n{PHONE}\n").into_bytes()).file_name("list.csv");
                request.multipart(form.part("file", file))
            }
            _ => request.json(body),
        };
    }
    for (name, value) in credential.headers() {
        request = request.header(name, value);
    }
    read(request.send().await.unwrap()).await
}

/// The error family an operation answers in (its 400's schema).
fn integration_family(op: &Value) -> bool {
    op["responses"]["400"]["content"]["application/json"]["schema"]["$ref"]
        .as_str()
        .is_some_and(|r| r.ends_with("IntegrationErrorBody"))
}

/// A refusal for being the wrong brand or outlet, in the operation's family.
fn is_access_denial(op: &Value, status: u16, body: &Value) -> bool {
    status == 403
        && match integration_family(op) {
            true => body["error_code"] == "xE_103" && body["status"] == 0,
            false => body["message"].as_str().is_some_and(|m| m.starts_with("not allowed for this business")),
        }
}

/// What a brand's own tokens read of its state: one answer per read, in order.
async fn state_of(
    app: &TestApp,
    staff: &Credential,
    integration: &Credential,
    brand: &str,
    outlet: &str,
) -> Vec<Value> {
    let reads = [
        ("/crm_api/wallet/balance", json!({"business_id": outlet})),
        ("/crm_api/wallet/transactions", json!({"business_id": outlet})),
        ("/crm_api/get/campaign/type/ids", json!({})),
        ("/crm_api/fetch_loyalty_details", json!({})),
        ("/crm_api/get_blocklist_contacts", json!({})),
        ("/crm_api/get_fraud_configuration", json!({})),
        ("/crm_api/links/getBusinessConfig", json!({"business_id": outlet})),
        ("/crm_api/get/campaign_tags", json!({})),
        ("/crm_api/journeys/settings", json!({})),
        ("/crm_api/wallet/get_pricing", json!({})),
        ("/crm_api/get/campaign/mapped/business", json!({})),
        ("/crm_api/get/feedback/config", json!({"child_business_id": outlet})),
        ("/crm_api/open_routes/settings", json!({})),
        ("/stats/dashboard/summary", json!({"start": "2026-11-01", "end": "2026-11-30"})),
    ];
    let mut out = Vec::new();
    for (path, mut body) in reads {
        body["parent_business_id"] = json!(brand);
        out.push(json!({"read": path, "answer": post(app, path, staff, &body).await}));
    }
    for path in ["/integration/v1/get_user_profile", "/integration/v1/get_wallet_ledger", "/integration/v1/get_rewards"]
    {
        let answer = post(app, path, integration, &json!({"customer_number": PHONE})).await;
        out.push(json!({"read": path, "answer": answer}));
    }
    out
}

/// Seeds a brand through its own tokens: an order, a wallet recharge, loyalty rules, a journey
/// type and a campaign tag.
async fn seed(
    app: &TestApp,
    doc: &Value,
    staff: &Credential,
    integration: &Credential,
    brand: &str,
    outlet: &str,
    tag: &str,
) {
    let order = json!({"businessId": outlet, "orderId": format!("{tag}-1"), "customer": {"name": tag, "phone": PHONE},
        "items": [{"name": "tea", "qty": 1, "price": 500}], "amount": 500, "orderTime": "2026-11-21 10:00:00"});
    assert_eq!(post(app, "/api/ingestion/orderPush", integration, &order).await.0, 200);
    let recharge =
        json!({"parent_business_id": brand, "business_id": outlet, "amount": 1000, "reference": format!("{tag}-pay")});
    assert_eq!(post(app, "/crm_api/wallet/recharge", staff, &recharge).await.0, 200);
    let mut rules = instance(doc, &doc["components"]["schemas"]["LoyaltyRulesRequest"]);
    rules["parent_business_id"] = json!(brand);
    assert_eq!(post(app, "/crm_api/add_edit_rules", staff, &rules).await.0, 200, "rules {rules}");
    let journey_type = json!({"parent_business_id": brand, "title": tag, "campaign_type": format!("{tag}_special"), "execution_type": "1"});
    let (status, answer) = post(app, "/crm_api/autoCampaign", staff, &journey_type).await;
    assert_eq!(status, 200, "{answer}");
    let tag_body = json!({"parent_business_id": brand, "tag_name": format!("{tag}-tag")});
    assert_eq!(post(app, "/crm_api/create/campaign_tag", staff, &tag_body).await.0, 200);
    // the order is processed before anything is compared
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, profile) =
            post(app, "/integration/v1/get_user_profile", integration, &json!({"customer_number": PHONE})).await;
        if status == 200 && profile.to_string().contains("500") {
            break;
        }
        assert!(Instant::now() < deadline, "{brand}'s order was not processed: {status} {profile}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn type_names(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["campaign_type"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn no_credential_of_another_brand_or_outlet_touches_a_brand_on_any_operation() {
    isolation_on(&[]).await;
}

/// The same on NATS (bus and KV store), where a key is the table, the partition and the
/// clustering in hex.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_credential_of_another_brand_or_outlet_touches_a_brand_on_nats() {
    let nats = crate::procs::NatsServer::start().await;
    isolation_on(&[("ENGAGE_NATS_URL", &nats.url)]).await;
}

async fn isolation_on(env: &[(&str, &str)]) {
    // every open route closed, so that every brand-taking operation takes a credential
    let mut settings = vec![("ENGAGE_OPEN_ROUTES", "closed")];
    settings.extend_from_slice(env);
    let app = spawn_app(&settings).await;
    let doc: Value = app.client.get(format!("{}/openapi.json", app.base)).send().await.unwrap().json().await.unwrap();

    let victim_staff = credential(&app, "staffToken", VICTIM, None).await;
    let victim_integration = credential(&app, "integrationToken", VICTIM, None).await;
    let attacker_staff = credential(&app, "staffToken", ATTACKER, None).await;
    let attacker_integration = credential(&app, "integrationToken", ATTACKER, None).await;
    seed(&app, &doc, &victim_staff, &victim_integration, VICTIM, VICTIM_OUTLET, "victim").await;
    seed(&app, &doc, &attacker_staff, &attacker_integration, ATTACKER, ATTACKER_OTHER_OUTLET, "attacker").await;
    // the attacker's own outlet `vip|o1` has a wallet too, whose ledger once was the victim's
    let recharge =
        json!({"parent_business_id": ATTACKER, "business_id": ATTACKER_OUTLET, "amount": 77, "reference": "a-pay"});
    assert_eq!(post(&app, "/crm_api/wallet/recharge", &attacker_staff, &recharge).await.0, 200);

    let victim_before = state_of(&app, &victim_staff, &victim_integration, VICTIM, VICTIM_OUTLET).await;
    let attacker_before = state_of(&app, &attacker_staff, &attacker_integration, ATTACKER, ATTACKER_OTHER_OUTLET).await;
    let victim_wallet = &victim_before[0]["answer"][1];
    assert!(victim_wallet.to_string().contains("1000"), "victim's wallet: {victim_wallet}");
    // the reported collision: brand c's outlet vip|o1 and brand c|vip's outlet o1 keep two ledgers
    let amounts = |answer: &Value| -> Vec<String> {
        answer["data"].as_array().unwrap().iter().map(|t| t["amount"].as_str().unwrap().to_owned()).collect()
    };
    let theirs = post(
        &app,
        "/crm_api/wallet/transactions",
        &victim_staff,
        &json!({"parent_business_id": VICTIM, "business_id": VICTIM_OUTLET}),
    )
    .await;
    let mine = post(
        &app,
        "/crm_api/wallet/transactions",
        &attacker_staff,
        &json!({"parent_business_id": ATTACKER, "business_id": ATTACKER_OUTLET}),
    )
    .await;
    assert_eq!(
        (amounts(&theirs.1), amounts(&mine.1)),
        (vec!["1000".to_owned()], vec!["77".to_owned()]),
        "{theirs:?} {mine:?}"
    );

    // journey types: each brand sees its own added type and not the other's
    for (state, own, other) in [
        (&victim_before, "victim_special", "attacker_special"),
        (&attacker_before, "attacker_special", "victim_special"),
    ] {
        let names = type_names(&state[2]["answer"][1]);
        assert!(names.iter().any(|n| n == own) && !names.iter().any(|n| n == other), "{names:?}");
        assert!(names.len() >= 9, "the eight built-in types stay: {names:?}");
    }

    let mut attackers = Vec::new();
    for scheme in TOKEN_SCHEMES {
        attackers.push(credential(&app, scheme, ATTACKER, if scheme == "appToken" { Some(PHONE) } else { None }).await);
    }
    let outlet_staff = credential(&app, "staffToken", ATTACKER, Some(ATTACKER_OUTLET)).await;
    let outlet_integration = credential(&app, "integrationToken", ATTACKER, Some(ATTACKER_OUTLET)).await;
    attackers.push(outlet_staff.clone());
    attackers.push(outlet_integration.clone());

    let operations = operations(&doc);
    assert!(operations.len() > 100, "only {} brand-taking operations in /openapi.json", operations.len());
    let mut calls = 0;
    let mut failures = Vec::new();
    for operation in &operations {
        let (body, _) = body_naming(&doc, &operation.op, VICTIM, VICTIM_OUTLET);
        for attacker in &attackers {
            let (status, answer) = call(&app, &doc, operation, attacker, &body).await;
            calls += 1;
            let refused = if attacker.scheme == operation.scheme {
                is_access_denial(&operation.op, status, &answer)
            } else {
                status == 401 || status == 403
            };
            if !refused {
                failures.push(format!(
                    "{} {} with {}: {status} {answer}",
                    operation.method, operation.path, attacker.label
                ));
            } else if operation.op["responses"].get(status.to_string()).is_none() {
                failures.push(format!("{} {}: {status} is not in /openapi.json", operation.method, operation.path));
            }
        }
        // an outlet-limited token of the brand on another outlet, or on a brand-level route
        let scope = operation.op["x-engage-scope"].as_str().unwrap_or("customer");
        let (own_body, _) = body_naming(&doc, &operation.op, ATTACKER, ATTACKER_OTHER_OUTLET);
        let names_an_outlet = OUTLET_FIELDS.iter().any(|f| own_body.get(*f).is_some());
        if scope == "customer" && !names_an_outlet {
            continue;
        }
        for limited in [&outlet_staff, &outlet_integration].into_iter().filter(|c| c.scheme == operation.scheme) {
            let (status, answer) = call(&app, &doc, operation, limited, &own_body).await;
            calls += 1;
            if !is_access_denial(&operation.op, status, &answer) {
                failures.push(format!(
                    "{} {} ({scope}-level) with {} naming outlet {ATTACKER_OTHER_OUTLET}: {status} {answer}",
                    operation.method, operation.path, limited.label
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {calls} calls were not refused:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{} brand-taking operations, {calls} calls, every one refused", operations.len());

    let victim_after = state_of(&app, &victim_staff, &victim_integration, VICTIM, VICTIM_OUTLET).await;
    assert_eq!(victim_after, victim_before, "the victim's state changed");
    let attacker_after = state_of(&app, &attacker_staff, &attacker_integration, ATTACKER, ATTACKER_OTHER_OUTLET).await;
    assert_eq!(attacker_after, attacker_before, "outlet {ATTACKER_OTHER_OUTLET}'s state changed");
    app.stop().await;
}
