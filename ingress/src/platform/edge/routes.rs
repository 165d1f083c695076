//! One declaration per route. A module lists its routes as
//!
//! ```ignore
//! Routes::new()
//!     .post("/crm_api/wallet/balance", "A business wallet's balance (decimal string)", balance)
//! ```
//!
//! and that one line both mounts the handler and writes its operation in `/openapi.json`: the auth
//! family, the security scheme, the request body (`#/components/schemas/<Type>`, JSON or
//! url-encoded), the error answers of the family and the scope come from the handler's own
//! extractor (`Staff<WalletRequest>`, `Integration<…>`, `Open<…>`, `Ingested<…>`, [`AppCustomer`]),
//! read off its signature by [`Typed`]. A route the typed edge does not fit (pages, multipart,
//! query strings, the enqueue table, the admin routes) is declared with [`Routes::route`] and its
//! operation written beside it, in the same call. A new route is therefore written in one place:
//! its module's `routes()`.

use axum::handler::Handler;
use axum::response::Response;
use axum::routing::{post, MethodRouter};
use axum::{Json, Router};
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use crate::platform::edge::auth::Auth;
use crate::platform::edge::contract::PlatformRequest;
use crate::platform::edge::contract::Scope;
use crate::platform::edge::{AppCustomer, Ingested, Integration, Open, Staff};
use crate::state::AppState;

/// What an extractor tells the contract: who may call, and the body it reads.
pub struct Contract {
    /// The auth family.
    pub auth: Auth,
    /// The body's schema name (`#/components/schemas/<name>`), when it reads one.
    pub schema: Option<&'static str>,
    /// What the route acts on, for outlet-limited tokens.
    pub scope: Option<Scope>,
    /// The body fields that name the brand.
    pub brand_fields: &'static [&'static str],
}

/// An extractor of the typed edge.
pub trait Extracts {
    /// Its contract.
    fn contract() -> Contract;
}

macro_rules! extracts {
    ($($extractor:ident => $auth:expr),* $(,)?) => {$(
        impl<T: PlatformRequest> Extracts for $extractor<T> {
            fn contract() -> Contract {
                Contract { auth: $auth, schema: Some(T::SCHEMA), scope: Some(T::SCOPE), brand_fields: T::BRAND_FIELDS }
            }
        }
    )*};
}

extracts!(Staff => Auth::Staff, Integration => Auth::Integration, Open => Auth::None, Ingested => Auth::Ingestion);

impl Extracts for AppCustomer {
    fn contract() -> Contract {
        Contract { auth: Auth::App, schema: None, scope: Some(Scope::Customer), brand_fields: &[] }
    }
}

/// What a handler's answer type says of its `200` body.
pub trait Answers {
    /// The schema of the `200` body.
    fn ok() -> Value;
}

impl<A: Answers, E> Answers for Result<A, E> {
    fn ok() -> Value {
        A::ok()
    }
}

impl<A: Answers> Answers for (axum::http::StatusCode, A) {
    fn ok() -> Value {
        A::ok()
    }
}

/// A JSON answer documents its type (`StaffAnswer<T>`: `{status: true}` and `T`'s fields).
impl<T: JsonSchema> Answers for Json<T> {
    fn ok() -> Value {
        crate::platform::edge::contract::answer_schema::<T>()
    }
}

impl Answers for Response {
    fn ok() -> Value {
        json!({"type": "object"})
    }
}

/// A handler whose last argument is an extractor of the typed edge (`M` is its argument list, as
/// axum's `Handler<T, S>` has it).
pub trait Typed<M> {
    /// The contract of its extractor, and the `200` body of its answer type.
    fn contract() -> (Contract, Value);
}

macro_rules! typed {
    ($($arg:ident),*) => {
        impl<F, Fut, $($arg,)* E> Typed<($($arg,)* E,)> for F
        where
            F: FnOnce($($arg,)* E) -> Fut,
            Fut: std::future::Future,
            Fut::Output: Answers,
            E: Extracts,
        {
            fn contract() -> (Contract, Value) {
                (E::contract(), Fut::Output::ok())
            }
        }
    };
}

typed!();
typed!(A);
typed!(A, B);
typed!(A, B, C);

/// The routes of a module, each mounted and documented by one declaration.
#[derive(Default)]
pub struct Routes {
    router: Router<AppState>,
    paths: Map<String, Value>,
    last: Option<(String, String)>,
}

impl Routes {
    /// No routes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A typed POST route: its auth family, body and refusals are its handler's extractor's.
    pub fn post<M, T, H>(self, path: &str, summary: &str, handler: H) -> Self
    where
        H: Typed<M> + Handler<T, AppState>,
        T: 'static,
    {
        let (contract, ok) = H::contract();
        let op = typed_operation(summary, contract, ok);
        self.route(path, post(handler), json!({ "post": op }))
    }

    /// A route with its operations written out (`{"get": {…}, "post": {…}}`).
    pub fn route(mut self, path: &str, method: MethodRouter<AppState>, operations: Value) -> Self {
        self.router = self.router.route(path, method);
        let methods = operations.as_object().cloned().unwrap_or_default();
        let item = self.paths.entry(path.to_owned()).or_insert_with(|| json!({}));
        let last_method = methods.keys().next().cloned().unwrap_or_default();
        if let Some(item) = item.as_object_mut() {
            item.extend(methods);
        }
        self.last = Some((path.to_owned(), last_method));
        self
    }

    /// Adds (or replaces) the answer `code` of the route just declared, with a body of its family.
    pub fn answer(self, code: &str, description: &str) -> Self {
        self.tweak(|op| {
            let family = family_schema(op);
            op["responses"][code] = json!({"description": description, "content": family});
        })
    }

    /// Declares `fields` required in the body of the route just declared (fields its handler needs
    /// that the body type, shared with other routes, leaves optional).
    pub fn requires(self, fields: &[&str]) -> Self {
        self.tweak(|op| require(op, json!({"required": fields})))
    }

    /// Adds a rule of the route just declared to its body schema (`{"anyOf": …}` of fields one
    /// of which it needs, a narrower `properties` of a shared field), as [`Routes::requires`].
    pub fn rule(self, rule: Value) -> Self {
        self.tweak(|op| require(op, rule))
    }

    /// Changes the operation of the route just declared.
    pub fn tweak(mut self, change: impl FnOnce(&mut Value)) -> Self {
        if let Some((path, method)) = &self.last {
            if let Some(op) = self.paths.get_mut(path).and_then(|item| item.get_mut(method)) {
                change(op);
            }
        }
        self
    }

    /// These routes and `other`'s.
    pub fn merge(mut self, other: Routes) -> Self {
        self.router = self.router.merge(other.router);
        for (path, item) in other.paths {
            match (self.paths.get_mut(&path).and_then(Value::as_object_mut), item) {
                (Some(existing), Value::Object(methods)) => existing.extend(methods),
                (_, item) => {
                    self.paths.insert(path, item);
                }
            }
        }
        self.last = None;
        self
    }

    /// The mounted routes.
    pub fn router(self) -> Router<AppState> {
        self.router
    }

    /// The path items of `/openapi.json`.
    pub fn paths(self) -> Map<String, Value> {
        self.paths
    }
}

/// The `content` of an error answer in `op`'s family (read off its 400).
fn family_schema(op: &Value) -> Value {
    op.pointer("/responses/400/content")
        .cloned()
        .unwrap_or_else(|| json!({"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}))
}

/// The operation of a typed route.
fn typed_operation(summary: &str, contract: Contract, ok: Value) -> Value {
    let mut op = operation(summary, contract.auth, contract.schema, ok);
    let family = family_schema(&op);
    op["responses"]["409"] = json!({"description": "the request is valid but the brand's state refuses it now (insufficient points or wallet balance, below the redemption minimum, over the bill share, a refused flag transition)", "content": family});
    // every tenant route can name a customer, coupon, reward or journey the brand does not have
    op["responses"]["404"] =
        json!({"description": "not found (customer, coupon, reward or journey)", "content": family});
    if contract.auth == Auth::None {
        op["responses"]["403"] = json!({"description": "xE_103 the open routes are closed and the integration token is another brand's (or another outlet's); xE_108/xE_109 fraud_detected denial; xE_112 one-time password refused", "content": family});
    }
    if let Some(scope) = contract.scope {
        op["x-engage-scope"] = json!(scope.as_str());
    }
    // a staff token, or no token, does not give the brand: the body must name it
    if matches!(contract.auth, Auth::Staff | Auth::None) && !contract.brand_fields.is_empty() {
        let named: Vec<Value> = contract.brand_fields.iter().map(|f| json!({"required": [f]})).collect();
        let tenant = if named.len() == 1 { named[0].clone() } else { json!({"anyOf": named}) };
        require(&mut op, tenant);
    }
    op
}

/// Adds `rule` (`{"required": [...]}` or a combination) to the body schema of `op`, for JSON and
/// forms alike: `{"allOf": [{"$ref": …}, rule, …]}`.
pub fn require(op: &mut Value, rule: Value) {
    let Some(content) = op.pointer_mut("/requestBody/content").and_then(Value::as_object_mut) else { return };
    for media in content.values_mut() {
        let schema = &mut media["schema"];
        if schema.get("allOf").is_none() {
            *schema = json!({"allOf": [schema.take()]});
        }
        if let Some(all) = schema["allOf"].as_array_mut() {
            all.push(rule.clone());
        }
    }
}

/// Whether `auth`'s refusals are the staff family's (`{message[, errors]}`).
pub fn staff_family(auth: Auth) -> bool {
    matches!(auth, Auth::Staff | Auth::App | Auth::Ingestion)
}

/// The operation of a platform route of `auth`'s family reading body `schema`, answering `ok`.
pub fn operation(summary: &str, auth: Auth, schema: Option<&str>, ok: Value) -> Value {
    let error = json!({"$ref": "#/components/schemas/IntegrationErrorBody"});
    let mut responses = if staff_family(auth) {
        let staff = json!({"$ref": "#/components/schemas/StaffErrorBody"});
        json!({
            "200": {"description": "accepted", "content": {"application/json": {"schema": ok}}},
            "400": {"description": "{message: \"invalid request\", errors} (body not JSON, schema violation, bad field)", "content": {"application/json": {"schema": staff}}},
            "413": {"description": "{message: \"the body exceeds 1048576 bytes\"}", "content": {"application/json": {"schema": staff}}},
            "503": {"description": "{message: \"temporarily unavailable; retry\"}: the tenant's owner is unavailable", "content": {"application/json": {"schema": staff}}},
        })
    } else {
        json!({
            "200": {"description": "accepted", "content": {"application/json": {"schema": ok}}},
            "400": {"description": "xE_102 invalid request (body not JSON, schema violation, missing parentBusinessId)", "content": {"application/json": {"schema": error}}},
            "413": {"description": "xE_413 the body exceeds 1048576 bytes", "content": {"application/json": {"schema": error}}},
            "503": {"description": "xE_503 the queue or the tenant's owner is unavailable; retry", "content": {"application/json": {"schema": error}}},
        })
    };
    match auth {
        Auth::None => {
            responses["401"] = json!({"description": "xE_101: the open routes are closed (ENGAGE_OPEN_ROUTES=closed, or the brand's /crm_api/open_routes/settings) and no integration token of the brand was sent", "content": {"application/json": {"schema": error}}});
            responses["403"] = json!({"description": "xE_103: the open routes are closed and the integration token is another brand's (or another outlet's)", "content": {"application/json": {"schema": error}}});
            responses["429"] = json!({"description": "xE_429 over the per-client limit of the open routes (ENGAGE_OPEN_ROUTES_RATE_LIMIT)", "content": {"application/json": {"schema": error}}});
        }
        Auth::Integration => {
            responses["401"] = json!({"description": "xE_101 Authentication Failed", "content": {"application/json": {"schema": error}}});
            responses["403"] = json!({"description": "xE_103 parentBusinessId differs from the token's", "content": {"application/json": {"schema": error}}});
        }
        Auth::Staff | Auth::Ingestion | Auth::App => {
            responses["403"] = json!({"description": "{message: \"invalid credentials\"}; {message: \"not allowed for this business\"} for a body naming another brand, or (outlet-limited tokens) another outlet or a brand-level route", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}});
            responses["500"] = json!({"description": "{message: \"authentication failed\"} (the check itself failed)"});
        }
        Auth::InternalJwt => responses["401"] = json!({"description": "{message: \"invalid token\"}"}),
    }
    let mut op = json!({"summary": summary, "tags": ["platform"], "responses": responses});
    if let Some(schema) = schema {
        let reference = json!({"$ref": format!("#/components/schemas/{schema}")});
        op["requestBody"] = json!({"required": true, "content": {
            "application/json": {"schema": reference},
            "application/x-www-form-urlencoded": {"schema": reference},
        }});
    }
    op["security"] = match auth.scheme() {
        Some(scheme) => json!([{ scheme: [] }]),
        // open as the spec has it; an integration token once the operator or the brand closed it
        None => json!([{}, {"integrationToken": []}]),
    };
    if auth == Auth::None {
        op["x-engage-open"] = json!(true);
    }
    if let Some(scope) = schema.and_then(crate::platform::edge::requests::scope_of) {
        op["x-engage-scope"] = json!(scope.as_str());
    }
    op
}

/// An HTML answer, for the pages.
pub fn html(description: &str) -> Value {
    json!({"description": description, "content": {"text/html": {"schema": {"type": "string"}}}})
}
