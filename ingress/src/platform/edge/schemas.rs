//! The JSON Schemas of the platform's request bodies: compiled once, used by the routes, and
//! published in `/openapi.json` under their names. A typed body's schema is generated from its
//! type ([`crate::platform::edge::contract`], [`crate::platform::edge::requests::generated`]); the bodies published to the bus as
//! received (orders, customers, chat events, …) have no type, and their schema is the file in
//! `schemas/` ([`SCHEMAS`]).

use std::collections::BTreeMap;

use jsonschema::Validator;
use serde_json::Value;

use crate::error::Issue;
use crate::validation;

/// (name, schema text) of the bodies that have no type.
pub const SCHEMAS: &[(&str, &str)] = &[
    ("Order", include_str!("schemas/order.json")),
    ("Refund", include_str!("schemas/refund.json")),
    ("CreateCustomer", include_str!("schemas/customer.json")),
    ("PushToken", include_str!("schemas/push_token.json")),
    ("Checkin", include_str!("schemas/checkin.json")),
    ("BusinessStatus", include_str!("schemas/business_status.json")),
    ("MerchantData", include_str!("schemas/merchant_data.json")),
    ("CrmToken", include_str!("schemas/crm_token.json")),
    ("ChatEvent", include_str!("schemas/chat_event.json")),
];

/// Compiled validators by schema name.
pub struct PlatformSchemas {
    validators: BTreeMap<&'static str, Validator>,
    documents: BTreeMap<&'static str, Value>,
}

impl PlatformSchemas {
    /// Compiles every schema (formats asserted).
    pub fn compile() -> Result<Self, String> {
        let mut validators = BTreeMap::new();
        let mut documents = BTreeMap::new();
        for (name, schema) in Self::documents() {
            let validator = validation::compile(&schema).map_err(|e| format!("schema {name}: {e}"))?;
            validators.insert(name, validator);
            documents.insert(name, schema);
        }
        Ok(Self { validators, documents })
    }

    /// Converts the values of `instance` whose type schema `name` does not declare, where the
    /// conversion is exact ([`crate::platform::edge::coerce`]); then [`PlatformSchemas::issues`] judges it.
    pub fn coerce(&self, name: &str, instance: &mut Value) {
        if let Some(schema) = self.documents.get(name) {
            crate::platform::edge::coerce::coerce(schema, instance);
        }
    }

    /// Problems of `instance` against schema `name` (an unknown name is a problem too).
    pub fn issues(&self, name: &str, instance: &Value) -> Vec<Issue> {
        let Some(validator) = self.validators.get(name) else {
            return vec![Issue { pointer: String::new(), message: format!("no schema {name}") }];
        };
        validation::issues(validator, instance)
    }

    /// The schema documents, for `/openapi.json`: the files, then the typed bodies' generated ones.
    pub fn documents() -> Vec<(&'static str, Value)> {
        let files = SCHEMAS.iter().filter_map(|(name, text)| serde_json::from_str(text).ok().map(|v| (*name, v)));
        files.chain(crate::platform::edge::requests::generated()).collect()
    }
}
