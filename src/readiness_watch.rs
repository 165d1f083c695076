//! Start-up retries and the watchers that keep `/readyz` honest: NATS and ScyllaDB connects retried up to the connect timeout, CloudWatch and the JWKS watched after start.

use engage_ingress::auth::jwks::JwksVerifier;
use engage_ingress::readiness::Readiness;
use engage_storage::logs::cloudwatch::CloudWatchBackend;
use engage_storage::logs::disk::DiskGuard;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[allow(unused_imports)]
use super::*;

/// Least time one attempt is given before it counts as failed (an attempt is given what is left
/// of the connect timeout, and at least this).
const LEAST_ATTEMPT: Duration = Duration::from_secs(10);

/// Runs `attempt` until it succeeds, with backoff (0.25 s doubling to 5 s), logging each failure
/// and listing `dependency` under `/readyz` problems meanwhile; after `timeout` fails naming
/// `target` (the setting and its redacted value). An attempt that does not end within what is
/// left of `timeout` (at least [`LEAST_ATTEMPT`]) fails as "no answer": a server that never
/// answers one request holds start-up for at most that, logged, never silently.
pub(super) async fn with_retry<T, E, F, Fut>(
    dependency: &'static str,
    target: &str,
    secret_url: Option<&str>,
    timeout: Duration,
    readiness: &Readiness,
    mut attempt: F,
) -> anyhow::Result<T>
where
    E: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let started = Instant::now();
    let mut backoff = Duration::from_millis(250);
    let mut number = 0u32;
    loop {
        number += 1;
        let bound = timeout.saturating_sub(started.elapsed()).max(LEAST_ATTEMPT);
        let outcome = match tokio::time::timeout(bound, attempt()).await {
            Ok(outcome) => outcome.map_err(|error| error.to_string()),
            Err(_) => Err(format!("no answer within {} s", bound.as_secs())),
        };
        let error = match outcome {
            Ok(value) => {
                readiness.set_problem(dependency, None);
                if number > 1 {
                    tracing::info!(dependency, target, attempts = number, "connected");
                }
                return Ok(value);
            }
            Err(error) => error,
        };
        let error = match secret_url {
            Some(url) => engage_config::redact_in(&error, url),
            None => error,
        };
        let waited = started.elapsed();
        if waited + backoff > timeout {
            readiness.set_problem(dependency, Some(format!("cannot reach {target}: {error}")));
            anyhow::bail!(
                "could not reach {dependency} at {target} within ENGAGE_CONNECT_TIMEOUT_SECS ({} s, {number} attempts): {error}",
                timeout.as_secs()
            );
        }
        readiness.set_problem(dependency, Some(format!("connecting to {target} (attempt {number}): {error}")));
        tracing::warn!(dependency, target, attempt = number, retry_in = ?backoff, %error, "cannot connect yet; retrying");
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

/// Checks the CloudWatch sink now and then: `/readyz` lists `cloudwatch` with the cause while it
/// is unusable (every 5 s while failing, every 30 s while healthy).
pub(super) fn watch_cloudwatch(backend: Arc<CloudWatchBackend>, readiness: Arc<Readiness>) {
    tokio::spawn(async move {
        let mut was_ok = None;
        loop {
            let result = backend.check(Duration::from_secs(3)).await;
            let ok = result.is_ok();
            match &result {
                Err(cause) if was_ok != Some(false) => {
                    tracing::warn!(%cause, "the CloudWatch Logs sink is unusable: /readyz answers 503 until it recovers");
                }
                Ok(()) if was_ok == Some(false) => tracing::info!("the CloudWatch Logs sink is usable again"),
                _ => {}
            }
            readiness.set_problem("cloudwatch", result.err());
            was_ok = Some(ok);
            tokio::time::sleep(Duration::from_secs(if ok { 30 } else { 5 })).await;
        }
    });
}

/// Checks every second whether `subject` failed for good (`failure` says why): the embedded store
/// after a failed sync of staged writes, the log segments after a failed append. From then on
/// `/readyz` lists `problem` with the cause; it stays so until engage restarts.
pub(super) fn watch_failure<T: ?Sized + Send + Sync + 'static>(
    subject: &Arc<T>,
    problem: &'static str,
    readiness: Arc<Readiness>,
    failure: fn(&T) -> Option<String>,
) {
    let subject = Arc::downgrade(subject);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let Some(subject) = subject.upgrade() else { break };
            if let Some(error) = failure(&subject) {
                tracing::error!(%error, problem, "failed for good: /readyz answers 503; restart engage");
                readiness.set_problem(problem, Some(error));
                break;
            }
        }
    });
}

/// Fetches the JWKS until it succeeds (every 5 s): `/readyz` lists `jwks` with the cause meanwhile.
pub(super) fn watch_jwks(verifier: Arc<JwksVerifier>, first: Result<(), String>, readiness: Arc<Readiness>) {
    if first.is_ok() {
        return;
    }
    readiness.set_problem("jwks", first.err());
    let verifier = Arc::downgrade(&verifier);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(5)).await;
            let Some(verifier) = verifier.upgrade() else { break };
            let result = verifier.refresh().await;
            let ok = result.is_ok();
            readiness.set_problem("jwks", result.err());
            if ok {
                break;
            }
        }
    });
}

/// Checks the log disk's free space every second: `/readyz` lists `log_disk` while it is below
/// `ENGAGE_LOG_MIN_FREE_BYTES` (the log routes then answer 507), and drops it once space is back.
pub(super) fn watch_disk(guard: Arc<DiskGuard>, readiness: Arc<Readiness>) {
    // checked once before this returns (so before the HTTP server starts): a node started on a
    // disk already low is not ready from its first answer
    let problem = guard.problem();
    if let Some(problem) = &problem {
        tracing::error!(%problem, "log disk low: log writes refused");
    }
    let mut low = problem.is_some();
    readiness.set_problem("log_disk", problem);
    let guard = Arc::downgrade(&guard);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let Some(guard) = guard.upgrade() else { break };
            let problem = guard.problem();
            if problem.is_some() != low {
                low = problem.is_some();
                match &problem {
                    Some(problem) => tracing::error!(%problem, "log disk low: log writes refused"),
                    None => tracing::info!("log disk has room again: log writes resume"),
                }
            }
            readiness.set_problem("log_disk", problem);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_attempt_that_never_answers_fails_named_within_the_timeout_and_is_not_a_silent_hang() {
        let readiness = Readiness::default();
        let started = Instant::now();
        let mut attempts = 0;
        let outcome: anyhow::Result<()> =
            with_retry("nats", "the NATS KV bucket engage_store", None, Duration::from_secs(1), &readiness, || {
                attempts += 1;
                std::future::pending::<Result<(), String>>()
            })
            .await;
        let error = outcome.expect_err("a hanging attempt must fail").to_string();
        assert!(
            error.contains("the NATS KV bucket engage_store") && error.contains("no answer within 10 s"),
            "{error}"
        );
        assert_eq!(attempts, 1);
        let took = started.elapsed();
        assert!(took >= LEAST_ATTEMPT && took < LEAST_ATTEMPT + Duration::from_secs(5), "{took:?}");
        let (ready, report) = readiness.report();
        assert!(!ready && report.to_string().contains("no answer"), "{report}");
    }
}
