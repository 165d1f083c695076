//! OTLP LogRecord → the spec's LogEvent (`docs/otlp.md` has the table).
//!
//! Each field is looked up on the record's attributes, then its scope's, then its resource's
//! (the first found wins). The event built is checked with the JSON route's rules
//! (`typed::EventRules`; the schema names the problems of one that fails) and written as one line
//! of JSON, so a record and a JSON event with the same fields are stored alike.

use std::borrow::Cow;
use std::rc::Rc;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value as Any, AnyValue, KeyValue};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use engage_storage::logs::SinkEvent;

use super::schema::LogSchema;
use super::typed::{EventRules, Names};

/// The attributes looked up, each with its slot in [`Found`]; all but the last two are read into
/// LogEvent fields (so not copied into `context`); `exception.*` are read as fallbacks only.
const KEYS: [&str; 21] = [
    "product",
    "service",
    "service.name",
    "component",
    "version",
    "service.version",
    "environment",
    "deployment.environment",
    "deployment.environment.name",
    "source",
    "trace_id",
    "tenant.business_id",
    "tenant.parent_id",
    "user_id",
    "enduser.id",
    "error.code",
    "error.category",
    "error.stack",
    "error.upstream",
    "exception.type",
    "exception.stacktrace",
];
/// Keys before this index in [`KEYS`] are read into fields.
const MAPPED: usize = 19;

/// The slot of `key` in [`KEYS`].
fn slot(key: &str) -> Option<usize> {
    KEYS.iter().position(|k| *k == key)
}

/// Whether an attribute is read into a field (and so left out of `context`).
fn mapped(key: &str) -> bool {
    slot(key).is_some_and(|i| i < MAPPED)
}

/// Problems quoted in a partial-success message; the rest are counted.
const QUOTED: usize = 10;

/// Where a record is in its export: indices of its resource, scope and record.
#[derive(Clone, Copy, Debug)]
pub(super) struct Origin(usize, usize, usize);

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "resourceLogs[{}].scopeLogs[{}].logRecords[{}]", self.0, self.1, self.2)
    }
}

/// What a request's records became.
#[derive(Default)]
pub(super) struct Mapped {
    /// The records that passed, as sink events.
    pub events: Vec<SinkEvent>,
    /// Where each of `events` came from: (resource, scope, record) indices.
    pub origins: Vec<Origin>,
    /// Records refused, with the first [`QUOTED`] problems named.
    pub invalid: usize,
    /// `<origin>: <problem>` lines.
    pub problems: Vec<String>,
    /// Records in the request.
    pub total: usize,
}

impl Mapped {
    fn refuse(&mut self, origin: Origin, problem: impl FnOnce() -> String) {
        self.invalid += 1;
        if self.problems.len() < QUOTED {
            self.problems.push(format!("{origin}: {}", problem()));
        }
    }
}

/// Maps every record of `request`.
pub(super) fn map_request(
    request: &ExportLogsServiceRequest,
    schema: &LogSchema,
    org: &str,
    max_event_bytes: usize,
    now_nanos: u64,
) -> Mapped {
    let mut out = Mapped::default();
    let mut names = Names::default();
    let mut last_time = (0, Shared::default());
    for (r, resource_logs) in request.resource_logs.iter().enumerate() {
        let resource = resource_logs.resource.as_ref().map_or(&[][..], |r| &r.attributes[..]);
        let resource_context = unmapped_resource(resource);
        for (s, scope_logs) in resource_logs.scope_logs.iter().enumerate() {
            let scope = scope_logs.scope.as_ref();
            let scope_attrs = scope.map_or(&[][..], |s| &s.attributes[..]);
            let scope_name = scope.map(|s| s.name.as_str()).filter(|n| !n.is_empty());
            let base = Found::new().fill(scope_attrs).fill(resource);
            for (l, record) in scope_logs.log_records.iter().enumerate() {
                out.total += 1;
                let origin = Origin(r, s, l);
                let lookup = Found::over(&record.attributes, &base);
                let event = build(record, &lookup, scope_name, resource_context.as_deref(), now_nanos, &mut last_time);
                let rules = event.rules();
                if !rules.surely_valid(schema) {
                    let issues = serde_json::to_value(&event).map(|value| schema.issues(&value)).unwrap_or_default();
                    if !issues.is_empty() {
                        let problem = issues
                            .iter()
                            .map(|issue| format!("{} {}", issue.pointer, issue.message))
                            .collect::<Vec<_>>()
                            .join("; ");
                        out.refuse(origin, || problem);
                        continue;
                    }
                }
                // one allocation for most events: the body and a few hundred bytes of fields
                let estimate = 320 + event.message.as_ref().map_or(0, |m| m.len());
                let mut bytes = Vec::with_capacity(estimate);
                let message = match serde_json::to_writer(&mut bytes, &event).map(|()| String::from_utf8(bytes)) {
                    Ok(Ok(text)) => text,
                    Ok(Err(error)) => {
                        out.refuse(origin, || format!("cannot be written as JSON: {error}"));
                        continue;
                    }
                    Err(error) => {
                        out.refuse(origin, || format!("cannot be written as JSON: {error}"));
                        continue;
                    }
                };
                if message.len() > max_event_bytes {
                    out.refuse(origin, || {
                        format!("is {} bytes as a LogEvent; at most {max_event_bytes} are accepted", message.len())
                    });
                    continue;
                }
                let (product, service, component) = (rules.product, rules.service, rules.component);
                let timestamp_ms = (event.nanos / 1_000_000) as i64;
                out.events.push(SinkEvent {
                    group: names.group(org, product.unwrap_or_default(), service.unwrap_or_default()),
                    stream: names.stream(component.unwrap_or_default(), timestamp_ms),
                    timestamp_ms,
                    message,
                });
                out.origins.push(origin);
            }
        }
    }
    out
}

/// The looked-up attributes of a record: its own, then its scope's, then its resource's (the first
/// found wins). The scope's and resource's are found once per scope, not once per record.
#[derive(Clone, Copy)]
struct Found<'a> {
    slots: [Option<&'a AnyValue>; KEYS.len()],
}

impl<'a> Found<'a> {
    fn new() -> Self {
        Self { slots: [None; KEYS.len()] }
    }

    /// Fills the slots still empty from `attributes`.
    fn fill(mut self, attributes: &'a [KeyValue]) -> Self {
        for kv in attributes {
            if let Some(i) = slot(&kv.key) {
                if self.slots[i].is_none() {
                    self.slots[i] = kv.value.as_ref();
                }
            }
        }
        self
    }

    /// The record's attributes over `base` (its scope's and resource's).
    fn over(attributes: &'a [KeyValue], base: &Found<'a>) -> Self {
        let mut found = Self::new().fill(attributes);
        for (slot, inherited) in found.slots.iter_mut().zip(base.slots) {
            if slot.is_none() {
                *slot = inherited;
            }
        }
        found
    }

    /// The first of `keys` found, as text (a number or a boolean is written out).
    fn text(&self, keys: &[&str]) -> Option<Cow<'a, str>> {
        keys.iter().filter_map(|key| slot(key)).find_map(|i| self.slots[i]).and_then(text)
    }
}

fn text(value: &AnyValue) -> Option<Cow<'_, str>> {
    match value.value.as_ref()? {
        Any::StringValue(text) => Some(Cow::Borrowed(text.as_str())),
        Any::IntValue(n) => Some(Cow::Owned(n.to_string())),
        Any::DoubleValue(n) => Some(Cow::Owned(n.to_string())),
        Any::BoolValue(b) => Some(Cow::Owned(b.to_string())),
        _ => None,
    }
}

/// The LogEvent of one record, serialised as the stored message.
#[derive(Serialize)]
struct Event<'a> {
    timestamp: Shared,
    level: Cow<'static, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    product: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    component: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    environment: Option<Cow<'a, str>>,
    trace_id: TraceId<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<Tenant<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<Cow<'a, str>>,
    source: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorPart<'a>>,
    #[serde(skip_serializing_if = "Context::is_empty")]
    context: Context<'a>,
    #[serde(skip)]
    nanos: u64,
}

#[derive(Serialize)]
struct Tenant<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    business_id: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_id: Option<Cow<'a, str>>,
}

#[derive(Serialize)]
struct ErrorPart<'a> {
    code: Cow<'a, str>,
    category: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    upstream: Option<Cow<'a, str>>,
}

impl Event<'_> {
    fn rules(&self) -> EventRules<'_> {
        EventRules {
            timestamp: &self.timestamp.0,
            level: &self.level,
            product: self.product.as_deref(),
            source: &self.source,
            service: self.service.as_deref(),
            component: self.component.as_deref(),
            version: self.version.as_deref(),
            environment: self.environment.as_deref(),
            message: self.message.as_deref(),
            trace_id_chars: match &self.trace_id {
                TraceId::Bytes(bytes) => bytes.len() * 2,
                TraceId::Text(text) => text.chars().count(),
            },
            tenant: self.tenant.as_ref().map(|t| (t.business_id.as_deref(), t.parent_id.as_deref())),
            error: self.error.as_ref().map(|e| (e.code.as_ref(), e.category.as_ref())),
        }
    }
}

fn build<'a>(
    record: &'a LogRecord,
    lookup: &Found<'a>,
    scope_name: Option<&'a str>,
    resource: Option<&'a RawValue>,
    now_nanos: u64,
    last_time: &mut (u64, Shared),
) -> Event<'a> {
    let nanos = [record.time_unix_nano, record.observed_time_unix_nano, now_nanos].into_iter().find(|t| *t != 0);
    let nanos = nanos.unwrap_or(now_nanos);
    // records of one export often share their time
    if last_time.0 != nanos || last_time.1 .0.is_empty() {
        let text = i64::try_from(nanos)
            .map(|n| chrono::DateTime::from_timestamp_nanos(n).to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
            .unwrap_or_else(|_| format!("{nanos} ns since the epoch (out of range)"));
        *last_time = (nanos, Shared(Rc::from(text)));
    }
    let timestamp = last_time.1.clone();
    let trace_id = match valid_id(&record.trace_id, 16) {
        Some(bytes) => TraceId::Bytes(bytes),
        None => {
            TraceId::Text(lookup.text(&["trace_id"]).unwrap_or_else(|| Cow::Owned(uuid::Uuid::new_v4().to_string())))
        }
    };
    let business_id = lookup.text(&["tenant.business_id"]);
    let parent_id = lookup.text(&["tenant.parent_id"]);
    let tenant = (business_id.is_some() || parent_id.is_some()).then_some(Tenant { business_id, parent_id });
    let error = lookup.text(&["error.code"]).map(|code| ErrorPart {
        code,
        category: lookup.text(&["error.category", "exception.type"]).unwrap_or(Cow::Borrowed("exception")),
        stack: lookup.text(&["error.stack", "exception.stacktrace"]),
        upstream: lookup.text(&["error.upstream"]),
    });
    let message = match record.body.as_ref().and_then(|body| body.value.as_ref()) {
        Some(Any::StringValue(text)) => Some(Cow::Borrowed(text.as_str())),
        Some(_) => record.body.as_ref().and_then(|body| serde_json::to_string(&Json(body)).ok()).map(Cow::Owned),
        None => None,
    };
    let message = message
        .filter(|m| !m.is_empty())
        .or_else(|| Some(record.event_name.as_str()).filter(|name| !name.is_empty()).map(Cow::Borrowed));
    Event {
        timestamp,
        level: level(record.severity_number, &record.severity_text),
        product: lookup.text(&["product"]),
        service: lookup.text(&["service.name", "service"]),
        component: lookup.text(&["component"]).or(scope_name.map(Cow::Borrowed)),
        version: lookup.text(&["version", "service.version"]),
        environment: lookup.text(&["environment", "deployment.environment.name", "deployment.environment"]),
        trace_id,
        tenant,
        user_id: lookup.text(&["user_id", "enduser.id"]),
        source: lookup.text(&["source"]).unwrap_or(Cow::Borrowed("server")),
        message,
        error,
        context: Context { record, resource },
        nanos,
    }
}

/// A valid trace (16 bytes) or span (8 bytes) id: that long, not all zero.
fn valid_id(bytes: &[u8], len: usize) -> Option<&[u8]> {
    (bytes.len() == len && bytes.iter().any(|b| *b != 0)).then_some(bytes)
}

/// Text written once and shared by the events of an export (their common timestamp).
#[derive(Clone, Default)]
struct Shared(Rc<str>);

impl Serialize for Shared {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// The record's trace id (written as hex), or one from an attribute or made up.
enum TraceId<'a> {
    Bytes(&'a [u8]),
    Text(Cow<'a, str>),
}

impl Serialize for TraceId<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            TraceId::Bytes(bytes) => Hex(bytes).serialize(serializer),
            TraceId::Text(text) => serializer.serialize_str(text),
        }
    }
}

/// An id written as lower-case hex without a heap allocation.
struct Hex<'a>(&'a [u8]);

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut buffer = [0u8; 32];
        if self.0.len() > 16 {
            return serializer.serialize_str(&lower_hex(self.0));
        }
        for (i, byte) in self.0.iter().enumerate() {
            buffer[2 * i] = DIGITS[usize::from(byte >> 4)];
            buffer[2 * i + 1] = DIGITS[usize::from(byte & 0xf)];
        }
        let text = std::str::from_utf8(&buffer[..self.0.len() * 2]).map_err(serde::ser::Error::custom)?;
        serializer.serialize_str(text)
    }
}

/// Bytes as lower-case hex digits.
fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0xf)] as char);
    }
    out
}

/// OTLP severity → LogEvent level: TRACE and DEBUG → DEBUG, INFO → INFO, WARN → WARN, ERROR and
/// FATAL → ERROR; an unset number is read from the severity text (INFO when that says nothing).
fn level(number: i32, text: &str) -> Cow<'static, str> {
    Cow::Borrowed(match number {
        1..=8 => "DEBUG",
        9..=12 => "INFO",
        13..=16 => "WARN",
        17..=24 => "ERROR",
        0 => match text.trim().to_ascii_uppercase().as_str() {
            "TRACE" | "DEBUG" | "FINE" | "FINER" | "FINEST" => "DEBUG",
            "WARN" | "WARNING" => "WARN",
            "ERROR" | "ERR" | "FATAL" | "CRITICAL" | "CRIT" | "ALERT" | "EMERGENCY" | "EMERG" | "SEVERE" => "ERROR",
            _ => "INFO",
        },
        other => return Cow::Owned(format!("SEVERITY_NUMBER_{other}")),
    })
}

/// The record's attributes not read into fields, its span id and event name, and its resource's
/// unmapped attributes under `resource`.
struct Context<'a> {
    record: &'a LogRecord,
    resource: Option<&'a RawValue>,
}

impl Context<'_> {
    fn extra(&self) -> impl Iterator<Item = &KeyValue> {
        self.record.attributes.iter().filter(|kv| !mapped(&kv.key))
    }

    fn span_id(&self) -> Option<Hex<'_>> {
        valid_id(&self.record.span_id, 8).map(Hex)
    }

    fn is_empty(&self) -> bool {
        self.extra().next().is_none()
            && self.resource.is_none()
            && self.span_id().is_none()
            && self.record.event_name.is_empty()
    }
}

impl Serialize for Context<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let taken = |key: &str| self.record.attributes.iter().any(|kv| kv.key == key);
        for kv in self.extra() {
            map.serialize_entry(&kv.key, &kv.value.as_ref().map(Json))?;
        }
        if let Some(span_id) = self.span_id().filter(|_| !taken("span_id")) {
            map.serialize_entry("span_id", &span_id)?;
        }
        if !self.record.event_name.is_empty() && !taken("event_name") {
            map.serialize_entry("event_name", &self.record.event_name)?;
        }
        if let Some(resource) = self.resource.filter(|_| !taken("resource")) {
            map.serialize_entry("resource", resource)?;
        }
        map.end()
    }
}

/// The resource's attributes not read into fields, as JSON written once per resource.
fn unmapped_resource(attributes: &[KeyValue]) -> Option<Box<RawValue>> {
    let extra: Vec<&KeyValue> = attributes.iter().filter(|kv| !mapped(&kv.key)).collect();
    if extra.is_empty() {
        return None;
    }
    serde_json::value::to_raw_value(&Attributes(&extra)).ok()
}

struct Attributes<'a>(&'a [&'a KeyValue]);

impl Serialize for Attributes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for kv in self.0 {
            map.serialize_entry(&kv.key, &kv.value.as_ref().map(Json))?;
        }
        map.end()
    }
}

/// An attribute value as plain JSON: strings, numbers, booleans, arrays, objects; bytes in hex.
struct Json<'a>(&'a AnyValue);

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0.value {
            None => serializer.serialize_none(),
            Some(Any::StringValue(text)) => serializer.serialize_str(text),
            Some(Any::BoolValue(b)) => serializer.serialize_bool(*b),
            Some(Any::IntValue(n)) => serializer.serialize_i64(*n),
            Some(Any::DoubleValue(n)) if n.is_finite() => serializer.serialize_f64(*n),
            Some(Any::DoubleValue(n)) => serializer.serialize_str(&n.to_string()),
            Some(Any::BytesValue(bytes)) => serializer.serialize_str(&lower_hex(bytes)),
            // a profiles dictionary index: no dictionary travels with logs
            Some(Any::StringValueStrindex(_)) => serializer.serialize_none(),
            Some(Any::ArrayValue(array)) => {
                let mut seq = serializer.serialize_seq(Some(array.values.len()))?;
                for value in &array.values {
                    seq.serialize_element(&Json(value))?;
                }
                seq.end()
            }
            Some(Any::KvlistValue(list)) => {
                let mut map = serializer.serialize_map(Some(list.values.len()))?;
                for kv in &list.values {
                    map.serialize_entry(&kv.key, &kv.value.as_ref().map(Json))?;
                }
                map.end()
            }
        }
    }
}
