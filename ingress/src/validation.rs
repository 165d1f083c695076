//! JSON Schema validation shared by every route family: compile with formats asserted, and turn
//! validation errors into [`Issue`]s whose pointer names the offending value (for a missing
//! property: where it should be).

use jsonschema::error::ValidationErrorKind;
use jsonschema::Validator;
use serde_json::Value;

use crate::error::Issue;

/// Most characters of one issue message (values inside messages can be large).
const MAX_MESSAGE_CHARS: usize = 300;

/// Compiles a draft 2020-12 schema with `format` asserted.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::draft202012::options().should_validate_formats(true).build(schema).map_err(|e| e.to_string())
}

/// Every problem of `instance`, one issue each.
pub fn issues(validator: &Validator, instance: &Value) -> Vec<Issue> {
    // Most instances are valid: `is_valid` stops at nothing and builds no error values.
    if validator.is_valid(instance) {
        return Vec::new();
    }
    let mut issues: Vec<Issue> = validator
        .iter_errors(instance)
        .map(|error| {
            let mut pointer = error.instance_path().as_str().to_owned();
            if let ValidationErrorKind::Required { property } = error.kind() {
                if let Some(name) = property.as_str() {
                    pointer.push('/');
                    pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
                }
            }
            let mut message = match error.kind() {
                // every allowed value, not jsonschema's "A, B or 2 other candidates": a producer
                // must learn what would be accepted
                ValidationErrorKind::Enum { options } => enum_message(error.instance(), options),
                _ => error.to_string(),
            };
            if message.chars().count() > MAX_MESSAGE_CHARS {
                message = message.chars().take(MAX_MESSAGE_CHARS).collect::<String>() + "…";
            }
            Issue { pointer, message }
        })
        .collect();
    issues.dedup();
    issues
}

/// `"TRACE" is not one of "DEBUG", "INFO", "WARN" or "ERROR"`, every option named.
fn enum_message(value: &Value, options: &Value) -> String {
    let options: Vec<String> = options.as_array().map(|o| o.iter().map(Value::to_string).collect()).unwrap_or_default();
    let listed = match options.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("{value} is not one of {listed}")
}
