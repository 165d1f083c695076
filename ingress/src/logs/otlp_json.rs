//! OTLP/JSON as every printer writes it (issue 54).
//!
//! `opentelemetry-proto`'s serde reading takes OTLP/JSON as the OTLP specification words it. Other
//! printers write the same message a little differently, and an export refused with 400 is never
//! sent again, so each of these is read too:
//!
//! - an empty list or map as `{"arrayValue": {}}` / `{"kvlistValue": {}}` (protobuf's JSON
//!   mapping omits an empty repeated field: `MessageToJson`, the Collector's file exporter);
//! - a `KeyValue` without `key` (the empty key, omitted the same way);
//! - `severityNumber` as the enum's name (`"SEVERITY_NUMBER_INFO"`, `MessageToJson`'s default);
//! - `traceId` / `spanId` in base64 (protobuf's mapping of `bytes`) instead of OTLP's hex;
//! - base64 whose last symbol carries stray bits (`"bytesValue": "lYx8Gr=="`);
//! - an integer written with a zero fraction (`"droppedAttributesCount": 3.0`), as JSON Schema's
//!   `integer` and JavaScript's numbers allow.
//!
//! The common case costs nothing more: the body is read as is first, and only a body that fails
//! is rewritten ([`normalize`]) and read again. When that fails too, the first error is answered.

use base64::Engine;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::logs::v1::SeverityNumber;
use serde_json::{Map, Value};

/// Reads an OTLP/JSON `ExportLogsServiceRequest`, as the specification words it or as protobuf's
/// JSON mapping prints it.
pub(super) fn decode(bytes: &[u8]) -> Result<ExportLogsServiceRequest, serde_json::Error> {
    match serde_json::from_slice(bytes) {
        Ok(request) => Ok(request),
        Err(first) => {
            let Ok(mut value) = serde_json::from_slice::<Value>(bytes) else { return Err(first) };
            normalize(&mut value, None);
            serde_json::from_value(value).map_err(|_| first)
        }
    }
}

/// Rewrites, in place, what protobuf's JSON mapping prints differently from OTLP/JSON. `key` is
/// the name of the member `value` is the value of.
fn normalize(value: &mut Value, key: Option<&str>) {
    match value {
        Value::Object(object) => {
            if matches!(key, Some("arrayValue" | "kvlistValue")) {
                object.entry("values").or_insert_with(|| Value::Array(Vec::new()));
            }
            if key == Some("kvlistValue") {
                // a kvlistValue's values are KeyValues, even `{}`
                if let Some(Value::Array(pairs)) = object.get_mut("values") {
                    give_keys(pairs);
                }
            }
            fix_fields(object);
            for (name, member) in object.iter_mut() {
                normalize(member, Some(name.as_str()));
            }
        }
        Value::Number(number) => {
            // JSON Schema's (and JavaScript's) integer may be written `143703.0`; serde's u32 and
            // i64 take only `143703` (a double field takes either)
            if let Some(float) = number.as_f64().filter(|f| f.fract() == 0.0 && number.is_f64()) {
                if float >= 0.0 && float < u64::MAX as f64 {
                    *value = Value::from(float as u64);
                } else if float < 0.0 && float > i64::MIN as f64 {
                    *value = Value::from(float as i64);
                }
            }
        }
        Value::Array(items) => {
            if key == Some("attributes") {
                give_keys(items);
            }
            for item in items.iter_mut() {
                normalize(item, None);
            }
        }
        _ => {}
    }
}

/// KeyValues printed without `key` (the empty key, omitted by protobuf's JSON mapping) get it.
fn give_keys(pairs: &mut [Value]) {
    for pair in pairs.iter_mut() {
        if let Value::Object(pair) = pair {
            pair.entry("key").or_insert_with(|| Value::String(String::new()));
        }
    }
}

/// The scalar members printed differently: the severity's name, ids in base64.
fn fix_fields(object: &mut Map<String, Value>) {
    if let Some(Value::String(name)) = object.get("severityNumber") {
        if let Some(number) = SeverityNumber::from_str_name(name) {
            object.insert("severityNumber".to_owned(), Value::from(number as i32));
        }
    }
    if let Some(Value::String(text)) = object.get("bytesValue") {
        // base64 whose last symbol carries bits past the data (`Gr==`): read leniently, as most
        // base64 readers do, and written back canonically for the decoder
        if let Some(canonical) = lenient_base64(text) {
            object.insert("bytesValue".to_owned(), Value::String(canonical));
        }
    }
    for (field, len) in [("traceId", 16), ("spanId", 8)] {
        if let Some(Value::String(text)) = object.get(field) {
            if let Some(hex) = base64_id_as_hex(text, len) {
                object.insert(field.to_owned(), Value::String(hex));
            }
        }
    }
}

/// `text` as canonical base64, when it is base64 read leniently (trailing bits allowed).
fn lenient_base64(text: &str) -> Option<String> {
    use base64::engine::{general_purpose, DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    let lenient = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    lenient.decode(text).ok().map(|bytes| general_purpose::STANDARD.encode(bytes))
}

/// An id printed in base64 (protobuf's `bytes`) as OTLP's lowercase hex, when `text` is not hex
/// already and decodes to `len` bytes.
fn base64_id_as_hex(text: &str, len: usize) -> Option<String> {
    if text.len() == len * 2 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(text))
        .ok()?;
    (bytes.len() == len).then(|| bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::common::v1::any_value;

    #[test]
    fn what_message_to_json_prints_is_read() {
        let body = serde_json::json!({"resourceLogs": [{"resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "pay"}},
            {"key": "empty.list", "value": {"arrayValue": {}}},
            {"key": "empty.map", "value": {"kvlistValue": {}}},
            {"key": "nested", "value": {"kvlistValue": {"values": [{"value": {"arrayValue": {}}}, {}]}}}
        ]}, "scopeLogs": [{"logRecords": [{
            "timeUnixNano": "1700000000000000000", "severityNumber": "SEVERITY_NUMBER_WARN",
            "traceId": "W47/95gDgQPSabYzgT/GDA==", "spanId": "7uGbfsPBsXQ=",
            "body": {"arrayValue": {"values": [{"kvlistValue": {}}]}},
            "droppedAttributesCount": 3.0, "flags": 1.0, "observedTimeUnixNano": 515.0,
            "attributes": [{"key": "ratio", "value": {"doubleValue": 2.0}}, {"key": "raw", "value": {"bytesValue": "lYx8Gr=="}}]
        }]}]}]});
        let request = decode(body.to_string().as_bytes()).unwrap();
        let resource = request.resource_logs[0].resource.as_ref().unwrap();
        let value = |i: usize| resource.attributes[i].value.as_ref().and_then(|v| v.value.clone());
        assert_eq!(value(1), Some(any_value::Value::ArrayValue(Default::default())));
        assert_eq!(value(2), Some(any_value::Value::KvlistValue(Default::default())));
        let Some(any_value::Value::KvlistValue(nested)) = value(3) else { panic!("nested") };
        assert_eq!((nested.values[0].key.as_str(), nested.values[1].key.as_str()), ("", ""));
        let record = &request.resource_logs[0].scope_logs[0].log_records[0];
        assert_eq!(record.severity_number, SeverityNumber::Warn as i32);
        assert_eq!(hex(&record.trace_id), "5b8efff798038103d269b633813fc60c");
        assert_eq!(hex(&record.span_id), "eee19b7ec3c1b174");
        assert_eq!((record.dropped_attributes_count, record.flags, record.observed_time_unix_nano), (3, 1, 515));
        assert_eq!(
            record.attributes[0].value.as_ref().and_then(|v| v.value.clone()),
            Some(any_value::Value::DoubleValue(2.0))
        );
    }

    #[test]
    fn a_body_wrong_either_way_keeps_its_first_error() {
        let error =
            decode(br#"{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"timeUnixNano": "soon"}]}]}]}"#).unwrap_err();
        assert!(error.to_string().contains("soon") || error.to_string().contains("invalid"), "{error}");
        assert!(decode(b"{not json").is_err());
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}
