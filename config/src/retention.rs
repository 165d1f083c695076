//! How long log events are kept (issue 44): `ENGAGE_LOG_RETENTION_DAYS` for every log group, and
//! `ENGAGE_LOG_RETENTION_BY_GROUP` for some (`/logs/org/edge/api=7,/logs/org/flash/*=90`: a name,
//! or a prefix ending in `*`; an exact name wins over a prefix, a longer prefix over a shorter).
//! The same days on both sinks, so only the values CloudWatch's PutRetentionPolicy takes; 0 keeps
//! events forever (CloudWatch's "never expire").

use crate::ConfigError;

/// The retention periods CloudWatch Logs accepts, in days.
pub const RETENTION_DAYS: [u32; 22] =
    [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653];

const DAY_MS: i64 = 86_400_000;

/// One override: a group name or a prefix, and its days.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    pattern: String,
    prefix: bool,
    days: u32,
}

/// The retention of every log group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRetention {
    default_days: u32,
    rules: Vec<Rule>,
}

fn check_days(key: &str, days: u32) -> Result<u32, ConfigError> {
    if days == 0 || RETENTION_DAYS.contains(&days) {
        Ok(days)
    } else {
        Err(ConfigError::new(
            key,
            format!("{days} is not a retention CloudWatch takes: 0 (forever) or one of {RETENTION_DAYS:?}"),
        ))
    }
}

impl LogRetention {
    /// Reads the two settings.
    pub fn parse(default_days: u32, by_group: Option<&str>) -> Result<Self, ConfigError> {
        let key = "log_retention_by_group";
        let default_days = check_days("log_retention_days", default_days)?;
        let mut rules = Vec::new();
        for item in by_group.unwrap_or_default().split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (pattern, days) = item.rsplit_once('=').ok_or_else(|| {
                ConfigError::new(key, format!("{item:?}: write GROUP=DAYS, e.g. /logs/org/edge/api=7"))
            })?;
            let days = days
                .trim()
                .parse::<u32>()
                .map_err(|_| ConfigError::new(key, format!("{item:?}: the days must be a whole number")))?;
            let days = check_days(key, days)?;
            let pattern = pattern.trim();
            let (pattern, prefix) = match pattern.strip_suffix('*') {
                Some(stem) => (stem, true),
                None => (pattern, false),
            };
            let any_group = prefix && pattern.is_empty();
            if !(pattern.starts_with('/') || any_group) {
                return Err(ConfigError::new(key, format!("{item:?}: a log group starts with / (/logs/<org>/…)")));
            }
            rules.push(Rule { pattern: pattern.to_owned(), prefix, days });
        }
        Ok(Self { default_days, rules })
    }

    /// Days `group`'s events are kept; 0: forever.
    pub fn days_for(&self, group: &str) -> u32 {
        if let Some(exact) = self.rules.iter().find(|r| !r.prefix && r.pattern == group) {
            return exact.days;
        }
        self.rules
            .iter()
            .filter(|r| r.prefix && group.starts_with(&r.pattern))
            .max_by_key(|r| r.pattern.len())
            .map_or(self.default_days, |r| r.days)
    }

    /// The oldest timestamp (ms) of `group` still kept at `now_ms`; None when kept forever.
    pub fn cutoff_ms(&self, group: &str, now_ms: i64) -> Option<i64> {
        match self.days_for(group) {
            0 => None,
            days => Some(now_ms - i64::from(days) * DAY_MS),
        }
    }

    /// Whether every group keeps its events forever.
    pub fn keeps_everything(&self) -> bool {
        self.default_days == 0 && self.rules.iter().all(|r| r.days == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_win_then_the_longest_prefix_then_the_default() {
        let r = LogRetention::parse(30, Some("/logs/o/edge/api=7, /logs/o/edge/*=90,/logs/o/*=1,/logs/o/edge/keep=0"))
            .unwrap();
        assert_eq!(r.days_for("/logs/o/edge/api"), 7);
        assert_eq!(r.days_for("/logs/o/edge/web"), 90);
        assert_eq!(r.days_for("/logs/o/flash/x"), 1);
        assert_eq!(r.days_for("/logs/other/edge/api"), 30);
        assert_eq!(r.cutoff_ms("/logs/o/edge/keep", 1_000), None);
        assert_eq!(r.cutoff_ms("/logs/o/flash/x", 100 * DAY_MS), Some(99 * DAY_MS));
        assert!(!r.keeps_everything());
        assert!(LogRetention::parse(0, None).unwrap().keeps_everything());
    }

    #[test]
    fn values_cloudwatch_would_refuse_are_refused_here() {
        for (days, by_group) in [(2, None), (30, Some("/logs/a=2")), (30, Some("/logs/a")), (30, Some("logs/a=7"))] {
            let error = LogRetention::parse(days, by_group).unwrap_err();
            assert!(error.key.starts_with("log_retention"), "{error:?}");
        }
        assert!(LogRetention::parse(3653, Some("*=1")).is_ok());
    }
}
