//! What `/readyz` reports: the process's phase (starting, serving, shutting down) and every
//! dependency that is unusable right now (NATS or ScyllaDB while connecting, the CloudWatch sink,
//! the JWKS), each with its reason. Ready means serving with no problem listed.

use std::collections::BTreeMap;
use std::sync::RwLock;

use serde_json::{json, Value};

/// The process's phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Connecting to its dependencies; only `/healthz`, `/readyz` and `/metrics` answer.
    Starting,
    /// Serving every route.
    Serving,
    /// Shutdown began: draining in-flight requests.
    ShuttingDown,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Serving => "ready",
            Phase::ShuttingDown => "shutting_down",
        }
    }
}

/// Shared readiness of one process. Cheap to read; written rarely.
#[derive(Debug)]
pub struct Readiness {
    inner: RwLock<Inner>,
}

#[derive(Debug)]
struct Inner {
    phase: Phase,
    /// Dependency (`nats`, `scylla`, `cloudwatch`, `jwks`) -> why it is unusable.
    problems: BTreeMap<&'static str, String>,
}

impl Default for Readiness {
    fn default() -> Self {
        Self::new(Phase::Starting)
    }
}

impl Readiness {
    /// A readiness in `phase` with no problems.
    pub fn new(phase: Phase) -> Self {
        Self { inner: RwLock::new(Inner { phase, problems: BTreeMap::new() }) }
    }

    /// Moves to `phase`.
    pub fn set_phase(&self, phase: Phase) {
        if let Ok(mut inner) = self.inner.write() {
            inner.phase = phase;
        }
    }

    /// The phase now.
    pub fn phase(&self) -> Phase {
        self.inner.read().map_or(Phase::ShuttingDown, |inner| inner.phase)
    }

    /// Records (`Some`) or clears (`None`) a dependency's problem.
    pub fn set_problem(&self, dependency: &'static str, problem: Option<String>) {
        if let Ok(mut inner) = self.inner.write() {
            match problem {
                Some(reason) => inner.problems.insert(dependency, reason),
                None => inner.problems.remove(dependency),
            };
        }
    }

    /// Whether `/readyz` answers 200, and its body: `{"status", "problems"?}`.
    pub fn report(&self) -> (bool, Value) {
        let Ok(inner) = self.inner.read() else {
            return (false, json!({"status": "unknown"}));
        };
        let ready = inner.phase == Phase::Serving && inner.problems.is_empty();
        let status = if inner.phase == Phase::Serving && !ready { "not_ready" } else { inner.phase.name() };
        let mut body = json!({"status": status});
        if !inner.problems.is_empty() {
            body["problems"] = json!(inner.problems);
        }
        (ready, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_only_when_serving_without_problems() {
        let readiness = Readiness::default();
        assert_eq!(readiness.report(), (false, json!({"status": "starting"})));
        readiness.set_problem("nats", Some("connection refused".to_owned()));
        readiness.set_phase(Phase::Serving);
        assert_eq!(
            readiness.report(),
            (false, json!({"status": "not_ready", "problems": {"nats": "connection refused"}}))
        );
        readiness.set_problem("nats", None);
        assert_eq!(readiness.report(), (true, json!({"status": "ready"})));
        readiness.set_phase(Phase::ShuttingDown);
        assert!(!readiness.report().0);
    }
}
