//! Per-caller rate limiting with `governor` (off unless `ENGAGE_RATE_LIMIT_PER_SECOND` is set).

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::error::ApiError;

/// A keyed GCRA limiter: each caller key has its own bucket.
pub struct CallerLimiter {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
}

impl CallerLimiter {
    /// `per_second` requests per second with bursts of `burst` (default: `per_second`).
    pub fn new(per_second: NonZeroU32, burst: Option<NonZeroU32>) -> Self {
        let quota = Quota::per_second(per_second).allow_burst(burst.unwrap_or(per_second));
        Self { limiter: RateLimiter::keyed(quota), clock: DefaultClock::default() }
    }

    /// Counts one request of `key`; `RATE_LIMITED` with the whole seconds to wait when over.
    pub fn check(&self, key: &str) -> Result<(), ApiError> {
        self.limiter.check_key(&key.to_owned()).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            metrics::counter!("engage_rate_limited_total").increment(1);
            ApiError::rate_limited(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
        })
    }

    /// Forgets callers whose buckets are full again (memory stays bounded by active callers).
    pub fn prune(&self) {
        self.limiter.retain_recent();
    }
}

/// How often idle callers are pruned.
pub const PRUNE_EVERY: Duration = Duration::from_secs(60);
