//! IST (UTC+05:30, no daylight saving): the spec's schedules and `insertedAt` are in IST.

use chrono::{DateTime, Datelike, FixedOffset, NaiveDateTime, Timelike, Utc};

/// The IST offset.
pub fn ist() -> FixedOffset {
    IST
}

// Checked when compiling: the offset is in range.
const IST: FixedOffset = match FixedOffset::east_opt(5 * 3600 + 30 * 60) {
    Some(offset) => offset,
    None => panic!("the IST offset is out of range"),
};

/// `YYYY-MM-DD HH:mm:ss` in IST, the queue record's `insertedAt` format.
pub fn ist_timestamp(at: DateTime<Utc>) -> String {
    // written out, not through a strftime pattern: it is parsed on every call, and every order
    // formats a few of these (issue 13)
    let t = at.with_timezone(&ist());
    format!("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", t.year(), t.month(), t.day(), t.hour(), t.minute(), t.second())
}

/// `YYYY-MM-DD` in IST (day buckets).
pub fn ist_day(at: DateTime<Utc>) -> String {
    let t = at.with_timezone(&ist());
    format!("{:04}-{:02}-{:02}", t.year(), t.month(), t.day())
}

/// The end of the IST day that is `days` days after `at`'s IST day: the start of the next IST day,
/// in UTC. Points earned at `at` with an expiry of `days` days are usable through that whole day.
pub fn end_of_ist_day_after(at: DateTime<Utc>, days: u32) -> DateTime<Utc> {
    let date = at.with_timezone(&ist()).date_naive() + chrono::Days::new(u64::from(days) + 1);
    date.and_hms_opt(0, 0, 0)
        .and_then(|midnight| midnight.and_local_timezone(ist()).single())
        .map_or(at, |t| t.with_timezone(&Utc))
}

/// An instant as key text: RFC 3339 in UTC with a fixed nine-digit fraction, so that text order
/// is time order (index rows that the jobs scan in order are keyed by it).
pub fn instant_key(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
}

/// Parses an RFC 3339 instant (the form every stored timestamp has).
pub fn parse_instant(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text).ok().map(|t| t.with_timezone(&Utc))
}

/// Whether the RFC 3339 instant `text` has come by `now` (at or before it); an absent or
/// unreadable instant has not.
pub fn reached(text: Option<&str>, now: DateTime<Utc>) -> bool {
    text.and_then(parse_instant).is_some_and(|t| t <= now)
}

/// Parses `YYYY-MM-DD HH:mm:ss` (an IST wall-clock time, as POS systems send `orderTime`).
pub fn parse_ist(text: &str) -> Option<DateTime<Utc>> {
    let naive = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").ok()?;
    naive.and_local_timezone(ist()).single().map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ist_is_five_thirty_ahead() {
        let at = DateTime::parse_from_rfc3339("2026-11-21T20:00:00Z").unwrap().with_timezone(&Utc);
        assert_eq!(ist_timestamp(at), "2026-11-22 01:30:00");
        assert_eq!(ist_day(at), "2026-11-22");
        assert_eq!(parse_ist("2026-11-22 01:30:00"), Some(at));
        assert_eq!(parse_ist("22/11/2026"), None);
        assert_eq!(parse_instant("2026-11-22T01:30:00+05:30"), Some(at));
        assert!(reached(Some("2026-11-22T01:30:00+05:30"), at) && !reached(Some("2026-11-21T20:00:01Z"), at));
        assert!(!reached(None, at) && !reached(Some("tomorrow"), at));
        // earned at 01:30 IST on the 22nd with 1 day: usable through the 23rd (IST)
        assert_eq!(end_of_ist_day_after(at, 1).to_rfc3339(), "2026-11-23T18:30:00+00:00");
        assert_eq!(end_of_ist_day_after(at, 0).to_rfc3339(), "2026-11-22T18:30:00+00:00");
    }

    #[test]
    fn ist_text_is_what_the_strftime_patterns_give() {
        let start = DateTime::parse_from_rfc3339("1999-12-31T18:29:59Z").unwrap().with_timezone(&Utc);
        for step in 0..500i64 {
            // across midnights, month and year ends, one odd second at a time
            let at = start + chrono::Duration::seconds(step * 86_399 + step * step);
            let local = at.with_timezone(&ist());
            assert_eq!(ist_timestamp(at), local.format("%Y-%m-%d %H:%M:%S").to_string());
            assert_eq!(ist_day(at), local.format("%Y-%m-%d").to_string());
        }
    }

    #[test]
    fn instant_keys_sort_as_time() {
        let at = DateTime::parse_from_rfc3339("2026-11-22T12:00:00Z").unwrap().with_timezone(&Utc);
        let later = at + chrono::Duration::milliseconds(500);
        assert!(instant_key(at) < instant_key(later), "{} {}", instant_key(at), instant_key(later));
        assert_eq!(instant_key(at), "2026-11-22T12:00:00.000000000Z");
        assert_eq!(parse_instant(&instant_key(later)), Some(later));
    }
}
