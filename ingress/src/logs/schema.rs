//! The LogIngestRequest JSON Schema: compiled once, used to validate every request, and served
//! unchanged inside `/openapi.json`.

use jsonschema::Validator;
use serde_json::Value;

use crate::error::Issue;
use crate::validation;

/// Most events in one request.
pub const MAX_EVENTS_PER_REQUEST: usize = 1000;

/// The schema document (JSON Schema 2020-12).
pub const LOG_INGEST_REQUEST_SCHEMA: &str = include_str!("log_ingest_request.schema.json");

/// The compiled schema.
pub struct LogSchema {
    validator: Validator,
    /// The schema's rule for a LogEvent's `timestamp` alone (the typed path checks it with this).
    timestamp: Validator,
}

impl LogSchema {
    /// Compiles the schema with format assertion on (`date-time`, `uuid` are checked).
    pub fn compile() -> Result<Self, String> {
        let document = schema_document()?;
        let timestamp = &document["$defs"]["LogEvent"]["properties"]["timestamp"];
        if timestamp.is_null() {
            return Err("log schema has no LogEvent timestamp".to_owned());
        }
        Ok(Self { validator: validation::compile(&document)?, timestamp: validation::compile(timestamp)? })
    }

    /// Whether `text` passes the schema's rule for a LogEvent's `timestamp` (`date-time`).
    pub fn is_date_time(&self, text: &str) -> bool {
        self.timestamp.is_valid(&Value::String(text.to_owned()))
    }

    /// Every problem of `instance`, each with the JSON pointer of the offending value.
    pub fn issues(&self, instance: &Value) -> Vec<Issue> {
        validation::issues(&self.validator, instance)
    }
}

/// The schema as a JSON value.
pub fn schema_document() -> Result<Value, String> {
    serde_json::from_str(LOG_INGEST_REQUEST_SCHEMA).map_err(|e| format!("log schema is not JSON: {e}"))
}

/// Placeholder type for the request body in the generated OpenAPI document; its real schema is
/// [`schema_document`], swapped in by [`crate::openapi::document`].
pub struct LogIngestRequest;

impl utoipa::PartialSchema for LogIngestRequest {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        utoipa::openapi::RefOr::T(utoipa::openapi::Schema::Object(
            utoipa::openapi::ObjectBuilder::new().description(Some("replaced by the JSON Schema")).build(),
        ))
    }
}

impl utoipa::ToSchema for LogIngestRequest {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event() -> Value {
        json!({
            "timestamp": "2026-11-21T10:00:00Z", "level": "INFO", "product": "edge", "service": "api",
            "component": "web", "version": "1.0.0", "environment": "prod",
            "trace_id": "0b5f6c1e-8d0a-4c4e-9a59-3f3f6a1d2c11", "source": "server", "message": "hello"
        })
    }

    #[test]
    fn a_valid_event_and_array_pass() {
        let schema = LogSchema::compile().unwrap();
        assert!(schema.issues(&event()).is_empty());
        assert!(schema.issues(&json!([event(), event()])).is_empty());
    }

    #[test]
    fn issues_point_at_the_offending_value() {
        let schema = LogSchema::compile().unwrap();
        let mut bad = event();
        bad["level"] = json!("TRACE");
        let issues = schema.issues(&json!([event(), bad]));
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].pointer, "/1/level");
        let mut missing = event();
        missing.as_object_mut().unwrap().remove("message");
        assert_eq!(schema.issues(&missing)[0].pointer, "/message");
    }

    #[test]
    fn formats_are_asserted() {
        let schema = LogSchema::compile().unwrap();
        let mut bad = event();
        bad["timestamp"] = json!("yesterday");
        assert_eq!(schema.issues(&bad)[0].pointer, "/timestamp");
    }
}
