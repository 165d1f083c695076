//! Why a call to an outside service (an SMS, chat or push provider, the legacy SMS gateway, the
//! link service, an app store) did not do its part: the text is what a queue row keeps as its last
//! error, or what a job reports.

/// A call to an outside service that did not do its part.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// The service could not be reached (`what` names it: "provider", "gateway").
    #[error("{what} unreachable: {error}")]
    Unreachable {
        /// Which service.
        what: &'static str,
        /// Why.
        error: String,
    },
    /// The service answered with a status that is not a success.
    #[error("{what} answered {status}")]
    Refused {
        /// Which service.
        what: &'static str,
        /// Its status line (`502 Bad Gateway`).
        status: String,
    },
    /// The service throttled the call (429), asking for `retry_after` seconds when it said.
    #[error("{what} throttled the call (429)")]
    Throttled {
        /// Which service.
        what: &'static str,
        /// Its `Retry-After`, in seconds.
        retry_after: Option<u64>,
    },
    /// The service answered something engage cannot use.
    #[error("{what} answer is unusable: {error}")]
    BadAnswer {
        /// Which service.
        what: &'static str,
        /// Why.
        error: String,
    },
    /// The provider refused the message for good (an invalid number, a template it does not
    /// know): another attempt would be refused the same way.
    #[error("{what} refused the message: {reason}")]
    Rejected {
        /// Which service.
        what: &'static str,
        /// Its status and what it said.
        reason: String,
    },
    /// The service kept throttling or failing through every attempt.
    #[error("{what} still throttling or failing after {attempts} attempts")]
    GaveUp {
        /// Which service.
        what: &'static str,
        /// Attempts made.
        attempts: u32,
    },
}

impl DeliveryError {
    /// Whether another attempt cannot help ([`DeliveryError::Rejected`]).
    pub fn is_permanent(&self) -> bool {
        matches!(self, Self::Rejected { .. })
    }
}

/// How long a send waits after the `attempts`-th drain run whose attempts failed in a way that may
/// pass (5xx, 429, no answer): 30 s doubled each run up to 30 min, less a jitter of up to half of it so that
/// sends failed together do not come back together ("equal jitter"; the jitter is drawn from
/// `seed`, the send id, so each send keeps its own), and at least what a 429's `Retry-After`
/// asked, up to an hour.
pub fn retry_delay(attempts: u32, seed: &str, retry_after: Option<u64>) -> chrono::Duration {
    const BASE_SECS: u64 = 30;
    const CAP_SECS: u64 = 30 * 60;
    let full = BASE_SECS.saturating_mul(1 << attempts.saturating_sub(1).min(16)).min(CAP_SECS);
    let wait = equal_jitter(full, (seed, attempts)).max(retry_after.unwrap_or(0).min(3600));
    chrono::Duration::seconds(wait as i64)
}

/// `full` less a jitter of up to half of it, drawn from `seed` (the same seed, the same wait).
fn equal_jitter(full: u64, seed: impl std::hash::Hash) -> u64 {
    use std::hash::Hasher;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    seed.hash(&mut hasher);
    full - hasher.finish() % (full / 2 + 1)
}

/// Calls a drain makes again at once after an answer that may pass, before the send waits for a
/// later run ([`retry_delay`]).
pub const QUICK_RETRIES: u32 = 3;

/// How long a drain waits before its `retry`-th quick retry of a send: 250 ms doubled each time,
/// less a jitter of up to half of it drawn from `seed`; `None` when a 429 asked for more than two
/// seconds (the send waits for a later run instead).
pub fn quick_delay(retry: u32, seed: &str, retry_after: Option<u64>) -> Option<std::time::Duration> {
    if retry_after.is_some_and(|secs| secs > 2) {
        return None;
    }
    let full = 250u64 << retry.saturating_sub(1).min(4);
    let wait = equal_jitter(full, (seed, retry, "quick")).max(retry_after.unwrap_or(0) * 1000);
    Some(std::time::Duration::from_millis(wait))
}

/// How long sends that may pass keep being retried before they fail for good (and are credited
/// back): a provider down for hours loses nothing.
pub const RETRY_WINDOW: chrono::Duration = chrono::Duration::hours(24);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_with_jitter_and_honour_retry_after() {
        let secs = |attempts, seed: &str, after| retry_delay(attempts, seed, after).num_seconds();
        assert!((15..=30).contains(&secs(1, "s1", None)));
        assert!((60..=120).contains(&secs(3, "s1", None)));
        assert!((900..=1800).contains(&secs(12, "s1", None)), "capped at 30 min");
        assert_eq!(secs(1, "s1", Some(600)), 600, "Retry-After asks for longer");
        assert_eq!(secs(1, "s1", Some(86_400)), 3600, "at most an hour");
        // two sends failed together come back at different times
        let spread: std::collections::BTreeSet<i64> = (0..20).map(|i| secs(5, &format!("send-{i}"), None)).collect();
        assert!(spread.len() > 10, "{spread:?}");
        assert_eq!(secs(5, "same", None), secs(5, "same", None), "one send keeps its own jitter");
        // quick retries inside one run: short, and none when a 429 asks for longer
        let quick = |retry| quick_delay(retry, "s1", None).unwrap().as_millis();
        assert!((125..=250).contains(&quick(1)) && (500..=1000).contains(&quick(3)));
        assert_eq!(quick_delay(1, "s1", Some(1)), Some(std::time::Duration::from_millis(1000)));
        assert_eq!(quick_delay(1, "s1", Some(30)), None);
    }
}
