//! Where an event goes: log group `/logs/<org>/<product>/<service>` and log stream
//! `<component>/<YYYY-MM-DD>` (the UTC date of the event's own timestamp).
//!
//! Per-day streams keep each stream (and each embedded-store partition) bounded, and a batch that
//! spans days is split along the same line CloudWatch's 24-hour rule draws. Characters CloudWatch
//! does not allow are replaced by `_`: in a group segment anything but letters, digits and
//! `_ - . #` (so a `/` inside `service` cannot add a level); in a stream `:` and `*`.

use chrono::{DateTime, Utc};

/// CloudWatch's longest group and stream names.
const MAX_NAME: usize = 512;

/// The log group of an event.
pub fn log_group(org: &str, product: &str, service: &str) -> String {
    let name = format!("/logs/{}/{}/{}", group_segment(org), group_segment(product), group_segment(service));
    truncate(name)
}

/// The log stream of an event.
pub fn log_stream(component: &str, timestamp_ms: i64) -> String {
    let date = DateTime::<Utc>::from_timestamp_millis(timestamp_ms)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "invalid-date".to_owned());
    let component: String = component.chars().map(|c| if c == ':' || c == '*' { '_' } else { c }).collect();
    truncate(format!("{}/{date}", truncate_chars(&component, MAX_NAME - 11)))
}

fn group_segment(segment: &str) -> String {
    segment.chars().map(|c| if c.is_ascii_alphanumeric() || "_-.#".contains(c) { c } else { '_' }).collect()
}

fn truncate_chars(value: &str, max: usize) -> String {
    value.chars().take(max).collect()
}

fn truncate(value: String) -> String {
    if value.chars().count() <= MAX_NAME {
        value
    } else {
        truncate_chars(&value, MAX_NAME)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_documented_scheme() {
        assert_eq!(log_group("org", "edge", "api"), "/logs/org/edge/api");
        assert_eq!(log_group("org", "white-label", "a/b c"), "/logs/org/white-label/a_b_c");
        // 2026-11-21T10:00:00Z
        assert_eq!(log_stream("web:1", 1_795_255_200_000), "web_1/2026-11-21");
    }
}
