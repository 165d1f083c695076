//! The common case of `POST /v1/logs`, read without building a `serde_json::Value` (issue 13:
//! building and dropping the `Value` tree for the schema was a quarter of the 1000-event profile).
//!
//! Each event of the body is read straight into [`LogEventRef`], whose strings borrow from the
//! body, and checked against the LogEvent rules of the schema (`log_ingest_request.schema.json`)
//! by hand. The reading is *conservative*: it answers only when it is sure the schema accepts the
//! whole request, and says `None` for anything else (a wrong type, a missing or duplicated field,
//! an empty string, an unknown enum value, an event over the size limit or on several lines,
//! more than 1000 events, …). The request then goes the general way ([`super::ingest`]): the JSON
//! Schema validator over a `Value`, which names every problem. So the schema stays the contract;
//! this path only skips work for requests it accepts. `typed_accepts_only_what_the_schema_accepts`
//! checks that on a few hundred variants of an event, and
//! `the_rules_read_by_hand_are_the_schemas` fails when the schema's LogEvent changes, so that this
//! file is revisited with it.

use std::borrow::Cow;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use engage_storage::logs::SinkEvent;

use super::naming::{log_group, log_stream};
use super::schema::LogSchema;
use super::schema::MAX_EVENTS_PER_REQUEST;

const LEVELS: [&str; 4] = ["ERROR", "WARN", "INFO", "DEBUG"];
const PRODUCTS: [&str; 5] = ["edge", "flash", "product_p", "platform", "white-label"];
const SOURCES: [&str; 4] = ["server", "client", "lambda", "worker"];

/// A LogEvent as sent, its strings borrowed from the body where they have no escapes.
#[derive(Deserialize)]
struct LogEventRef<'a> {
    #[serde(borrow)]
    timestamp: Cow<'a, str>,
    #[serde(borrow)]
    level: Cow<'a, str>,
    #[serde(borrow)]
    product: Cow<'a, str>,
    #[serde(borrow)]
    service: Cow<'a, str>,
    #[serde(borrow)]
    component: Cow<'a, str>,
    #[serde(borrow)]
    version: Cow<'a, str>,
    #[serde(borrow)]
    environment: Cow<'a, str>,
    #[serde(borrow)]
    trace_id: Cow<'a, str>,
    #[serde(borrow)]
    source: Cow<'a, str>,
    #[serde(borrow)]
    message: Cow<'a, str>,
    /// `null` and absent both read as None (the schema allows both).
    #[serde(borrow, default)]
    tenant: Option<TenantRef<'a>>,
    // read only for their types, as `stack` and `upstream` below
    #[serde(borrow, default, deserialize_with = "present")]
    #[allow(dead_code)]
    user_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<ErrorRef<'a>>,
    #[serde(default, deserialize_with = "present")]
    #[allow(dead_code)]
    context: Option<AnyObject>,
}

#[derive(Deserialize)]
struct TenantRef<'a> {
    #[serde(borrow)]
    business_id: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "present")]
    parent_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ErrorRef<'a> {
    #[serde(borrow)]
    code: Cow<'a, str>,
    #[serde(borrow)]
    category: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "present")]
    #[allow(dead_code)]
    stack: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    #[allow(dead_code)]
    upstream: Option<Cow<'a, str>>,
}

/// An optional field that, when present, must be a `T` (`null` is not absent: for a string field
/// the schema refuses it).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// Any JSON object (its members are skipped).
struct AnyObject;

impl<'de> Deserialize<'de> for AnyObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = AnyObject;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyObject, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(AnyObject)
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

fn non_empty(text: &str) -> bool {
    !text.is_empty()
}

/// `^[A-Z][A-Z0-9_]*$`
fn is_error_code(code: &str) -> bool {
    let mut bytes = code.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_uppercase())
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The LogEvent fields the schema's rules look at, as text (`None`: absent). The OTLP input
/// (`otlp_map.rs`) checks the events it builds with the same rules.
pub(super) struct EventRules<'a> {
    pub timestamp: &'a str,
    pub level: &'a str,
    pub product: Option<&'a str>,
    pub source: &'a str,
    pub service: Option<&'a str>,
    pub component: Option<&'a str>,
    pub version: Option<&'a str>,
    pub environment: Option<&'a str>,
    pub message: Option<&'a str>,
    /// Characters of the trace id (the only thing the rule reads).
    pub trace_id_chars: usize,
    /// business_id (None: absent), parent_id
    pub tenant: Option<(Option<&'a str>, Option<&'a str>)>,
    /// code, category
    pub error: Option<(&'a str, &'a str)>,
}

impl EventRules<'_> {
    /// Whether the schema surely accepts the event (`date_time` checks the timestamp's format
    /// exactly as the schema validator does).
    pub fn surely_valid(&self, schema: &LogSchema) -> bool {
        LEVELS.contains(&self.level)
            && self.product.is_some_and(|product| PRODUCTS.contains(&product))
            && SOURCES.contains(&self.source)
            && [self.service, self.component, self.version, self.environment, self.message]
                .iter()
                .all(|text| text.is_some_and(non_empty))
            // a UUID has 36 characters: "uuid or at least 8 characters" is "at least 8"
            && self.trace_id_chars >= 8
            && self.tenant.is_none_or(|(business_id, parent_id)| {
                business_id.is_some_and(non_empty) && parent_id.is_none_or(non_empty)
            })
            && self.error.is_none_or(|(code, category)| is_error_code(code) && non_empty(category))
            && schema.is_date_time(self.timestamp)
    }
}

impl LogEventRef<'_> {
    fn surely_valid(&self, schema: &LogSchema) -> bool {
        EventRules {
            timestamp: &self.timestamp,
            level: &self.level,
            product: Some(&self.product),
            source: &self.source,
            service: Some(&self.service),
            component: Some(&self.component),
            version: Some(&self.version),
            environment: Some(&self.environment),
            message: Some(&self.message),
            trace_id_chars: self.trace_id.chars().count(),
            tenant: self.tenant.as_ref().map(|t| (Some(t.business_id.as_ref()), t.parent_id.as_deref())),
            error: self.error.as_ref().map(|e| (e.code.as_ref(), e.category.as_ref())),
        }
        .surely_valid(schema)
    }
}

/// Names cached between consecutive events (a request's events mostly share them).
#[derive(Default)]
pub(super) struct Names {
    group: Option<(String, String, String)>,
    stream: Option<(String, i64, String)>,
}

impl Names {
    pub fn group(&mut self, org: &str, product: &str, service: &str) -> String {
        match &self.group {
            Some((p, s, group)) if p == product && s == service => group.clone(),
            _ => {
                let group = log_group(org, product, service);
                self.group = Some((product.to_owned(), service.to_owned(), group.clone()));
                group
            }
        }
    }

    pub fn stream(&mut self, component: &str, timestamp_ms: i64) -> String {
        let day = timestamp_ms.div_euclid(86_400_000);
        match &self.stream {
            Some((c, d, stream)) if c == component && *d == day => stream.clone(),
            _ => {
                let stream = log_stream(component, timestamp_ms);
                self.stream = Some((component.to_owned(), day, stream.clone()));
                stream
            }
        }
    }
}

/// The sink events of a request the schema surely accepts; None when the request must go the
/// general way (see the module's documentation).
pub fn sink_events(bytes: &[u8], schema: &LogSchema, org: &str, max_event_bytes: usize) -> Option<Vec<SinkEvent>> {
    let raws: Vec<&RawValue> = match bytes.iter().find(|b| !b.is_ascii_whitespace())? {
        b'[' => serde_json::from_slice(bytes).ok()?,
        b'{' => vec![serde_json::from_slice(bytes).ok()?],
        _ => return None,
    };
    if raws.is_empty() || raws.len() > MAX_EVENTS_PER_REQUEST {
        return None;
    }
    let mut names = Names::default();
    let mut events = Vec::with_capacity(raws.len());
    for raw in raws {
        let text = raw.get();
        if text.len() > max_event_bytes || text.contains(['\n', '\r']) {
            return None;
        }
        let event: LogEventRef = serde_json::from_str(text).ok()?;
        if !event.surely_valid(schema) {
            return None;
        }
        let timestamp_ms = chrono::DateTime::parse_from_rfc3339(&event.timestamp).ok()?.timestamp_millis();
        events.push(SinkEvent {
            group: names.group(org, &event.product, &event.service),
            stream: names.stream(&event.component, timestamp_ms),
            timestamp_ms,
            message: text.to_owned(),
        });
    }
    Some(events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::ingest::general_sink_events;
    use serde_json::{json, Value};

    /// The LogEvent definition the rules above were written from.
    fn schema_log_event() -> Value {
        super::super::schema::schema_document().unwrap()["$defs"]["LogEvent"].clone()
    }

    const ORG: &str = "org";
    const MAX: usize = 256 * 1024 - 26;

    fn base() -> Value {
        json!({
            "timestamp": "2026-11-21T10:00:00.123Z", "level": "INFO", "product": "edge", "service": "checkout",
            "component": "api", "version": "1.4.2", "environment": "prod",
            "trace_id": "0b5f6c1e-8d0a-4c4e-9a59-3f3f6a1d2c11", "tenant": {"business_id": "b1", "parent_id": "p1"},
            "source": "server", "message": "order placed", "context": {"order": 7, "note": null}
        })
    }

    /// Values to try in each field: every JSON type, empty and short strings, enum neighbours,
    /// escapes, formats the schema refuses and ones it takes.
    fn candidates() -> Vec<Value> {
        let mut values = vec![
            json!(null),
            json!(true),
            json!(1),
            json!(1.5),
            json!([]),
            json!({}),
            json!(""),
            json!(" "),
            json!("x"),
            json!("short"),
            json!("eightchr"),
            json!("sevench"),
            json!("INFO"),
            json!("info"),
            json!("TRACE"),
            json!("edge"),
            json!("Edge"),
            json!("white-label"),
            json!("worker"),
            json!("server "),
            json!("caf\u{e9} \"quoted\" \\ /"),
            json!("\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}"),
            json!("0b5f6c1e-8d0a-4c4e-9a59-3f3f6a1d2c11"),
            json!("E_CODE_1"),
            json!("e_code"),
            json!("1CODE"),
            json!("CODE-1"),
            json!("CODE\n"),
            json!("C"),
            json!("eX"),
            json!("\u{c9}X"),
            json!({"business_id": "b1"}),
            json!({"business_id": ""}),
            json!({"business_id": "b1", "parent_id": null}),
            json!({"business_id": "b1", "parent_id": ""}),
            json!({"business_id": "b1", "parent_id": "p", "extra": 1}),
            json!({"parent_id": "p"}),
            json!({"code": "E_X", "category": "db"}),
            json!({"code": "E_X", "category": "db", "stack": "at x", "upstream": "pg"}),
            json!({"code": "E_X", "category": "db", "stack": null}),
            json!({"code": "e_x", "category": "db"}),
            json!({"code": "E_X", "category": ""}),
            json!({"code": "E_X"}),
            json!({"a": {"b": [1, null]}}),
        ];
        for timestamp in [
            "2026-11-21T10:00:00Z",
            "2026-11-21t10:00:00z",
            "2026-11-21T10:00:00.5+05:30",
            "2026-11-21T10:00:00-00:00",
            "2026-11-21 10:00:00Z",
            "2026-11-21T10:00:00",
            "2026-02-29T10:00:00Z",
            "2024-02-29T10:00:00Z",
            "2026-11-21T24:00:00Z",
            "2026-11-21T23:59:60Z",
            "2026-12-31T23:59:60Z",
            "2026-11-21T10:00:00.Z",
            "2026-11-21T10:00:00+24:00",
            "2026-1-21T10:00:00Z",
            "yesterday",
        ] {
            values.push(json!(timestamp));
        }
        values
    }

    /// Every variant: each field of the base event set to each candidate, or removed; an extra
    /// field; events on several lines.
    fn variants() -> Vec<String> {
        let mut bodies = Vec::new();
        let fields: Vec<String> = schema_log_event()["properties"].as_object().unwrap().keys().cloned().collect();
        for field in &fields {
            let mut removed = base();
            removed.as_object_mut().unwrap().remove(field);
            bodies.push(removed.to_string());
            for value in candidates() {
                let mut event = base();
                event[field.as_str()] = value;
                bodies.push(event.to_string());
            }
        }
        // the members of the nested objects, each set to each candidate or removed
        let error = json!({"code": "E_X", "category": "db", "stack": "at x", "upstream": "pg"});
        for (field, object) in [("tenant", base()["tenant"].clone()), ("error", error)] {
            for member in object.as_object().unwrap().keys() {
                let mut removed = object.clone();
                removed.as_object_mut().unwrap().remove(member);
                let mut values = vec![None];
                values.extend(candidates().into_iter().map(Some));
                for value in values {
                    let mut nested = removed.clone();
                    if let Some(value) = value {
                        nested[member.as_str()] = value;
                    }
                    let mut event = base();
                    event[field] = nested;
                    bodies.push(event.to_string());
                }
            }
        }
        let mut extra = base();
        extra["unknown"] = json!({"x": 1});
        bodies.push(extra.to_string());
        bodies.push(serde_json::to_string_pretty(&base()).unwrap());
        // a duplicated key: the general way reads the last one
        bodies.push(base().to_string().replacen("\"level\":\"INFO\"", "\"level\":\"TRACE\",\"level\":\"INFO\"", 1));
        bodies.push(base().to_string().replacen("\"level\":\"INFO\"", "\"level\":\"INFO\",\"level\":\"TRACE\"", 1));
        // escapes in a borrowed field
        bodies.push(base().to_string().replacen("\"api\"", "\"a\\u0070i\"", 1));
        bodies
    }

    fn facts(events: &[SinkEvent]) -> Vec<(String, String, i64, String)> {
        events.iter().map(|e| (e.group.clone(), e.stream.clone(), e.timestamp_ms, e.message.clone())).collect()
    }

    #[test]
    fn typed_accepts_only_what_the_schema_accepts() {
        let schema = LogSchema::compile().unwrap();
        let bodies = variants();
        let mut typed = 0;
        for body in &bodies {
            for request in [body.clone(), format!("[{body},{body}]"), format!(" [ {body} ] ")] {
                let general = general_sink_events(request.as_bytes(), &schema, ORG, MAX);
                if let Some(events) = sink_events(request.as_bytes(), &schema, ORG, MAX) {
                    typed += 1;
                    let general =
                        general.unwrap_or_else(|e| panic!("typed took what the schema refuses: {request}: {e:?}"));
                    assert_eq!(facts(&events), facts(&general), "{request}");
                }
            }
        }
        // the common shapes do take the typed path
        assert!(sink_events(base().to_string().as_bytes(), &schema, ORG, MAX).is_some());
        assert!(typed > bodies.len(), "only {typed} of {} variants were read typed", bodies.len() * 3);
    }

    #[test]
    fn what_the_typed_path_leaves_to_the_general_one() {
        let schema = LogSchema::compile().unwrap();
        let one = base().to_string();
        let many = format!("[{}]", vec![one.as_str(); MAX_EVENTS_PER_REQUEST + 1].join(","));
        for body in ["", "[]", "null", "[1]", "{\"a\":", many.as_str()] {
            assert!(sink_events(body.as_bytes(), &schema, ORG, MAX).is_none(), "{body}");
        }
        assert!(sink_events(one.as_bytes(), &schema, ORG, one.len() - 1).is_none(), "over the size limit");
    }

    #[test]
    fn the_rules_read_by_hand_are_the_schemas() {
        // When this fails the schema's LogEvent changed: bring `LogEventRef::surely_valid` and
        // the enums at the top of this file in line with it, then update this copy.
        let expected = json!({
          "title": "LogEvent",
          "type": "object",
          "required": ["timestamp", "level", "product", "service", "component", "version", "environment", "trace_id", "source", "message"],
          "properties": {
            "timestamp": { "type": "string", "format": "date-time" },
            "level": { "type": "string", "enum": ["ERROR", "WARN", "INFO", "DEBUG"] },
            "product": { "type": "string", "enum": ["edge", "flash", "product_p", "platform", "white-label"] },
            "service": { "type": "string", "minLength": 1 },
            "component": { "type": "string", "minLength": 1 },
            "version": { "type": "string", "minLength": 1 },
            "environment": { "type": "string", "minLength": 1 },
            "trace_id": {
              "description": "A UUID, or any string of at least 8 characters.",
              "anyOf": [
                { "type": "string", "format": "uuid" },
                { "type": "string", "minLength": 8 }
              ]
            },
            "tenant": {
              "type": ["object", "null"],
              "required": ["business_id"],
              "properties": {
                "business_id": { "type": "string", "minLength": 1 },
                "parent_id": { "type": "string", "minLength": 1 }
              }
            },
            "user_id": { "type": "string" },
            "source": { "type": "string", "enum": ["server", "client", "lambda", "worker"] },
            "message": { "type": "string", "minLength": 1 },
            "error": {
              "type": "object",
              "required": ["code", "category"],
              "properties": {
                "code": { "type": "string", "pattern": "^[A-Z][A-Z0-9_]*$" },
                "category": { "type": "string", "minLength": 1 },
                "stack": { "type": "string" },
                "upstream": { "type": "string" }
              }
            },
            "context": { "type": "object", "description": "Free-form map; values may be null." }
          }
        });
        assert_eq!(schema_log_event(), expected);
    }
}
