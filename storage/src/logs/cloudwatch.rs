//! The CloudWatch Logs sink (`aws-sdk-cloudwatchlogs`).
//!
//! Log groups and streams are created on first use (an existing one is fine) and remembered; when
//! PutLogEvents says one is missing (deleted behind our back) it is created again. Throttling,
//! 5xx answers, time-outs and connection failures are retried with exponential backoff until the
//! configured deadline; then the chunk fails and its requests get `WRITE_FAILED`. The SDK's own
//! retries are off so that this deadline is the only one.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::BehaviorVersion;
use aws_sdk_cloudwatchlogs::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_cloudwatchlogs::types::InputLogEvent;
use aws_sdk_cloudwatchlogs::Client;

use engage_config::LogRetention;

use super::{BackendError, Chunk, LogBackend, Rejected};

/// First backoff delay; doubled per attempt up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Writes chunks with PutLogEvents.
pub struct CloudWatchBackend {
    client: Client,
    deadline: Duration,
    /// (group, stream) pairs known to exist; std `Mutex`, never held across an await.
    known: Mutex<HashSet<(String, String)>>,
    /// The retention set on groups, and whether groups engage did not create get it too.
    retention: Option<(LogRetention, bool)>,
    /// Groups whose retention this process has dealt with.
    retained: Mutex<HashSet<String>>,
    /// Groups created here whose retention could not be set yet.
    owed: Mutex<HashSet<String>>,
}

impl CloudWatchBackend {
    /// Builds a client from the standard AWS environment (region, credentials), with `endpoint`
    /// overriding the service address when given.
    pub async fn connect(endpoint: Option<&str>, deadline: Duration) -> Self {
        let mut loader =
            aws_config::defaults(BehaviorVersion::latest()).retry_config(RetryConfig::disabled()).timeout_config(
                TimeoutConfig::builder()
                    .connect_timeout(Duration::from_secs(2))
                    .operation_attempt_timeout(Duration::from_secs(5))
                    .build(),
            );
        if let Some(endpoint) = endpoint {
            loader = loader.endpoint_url(endpoint);
        }
        let config = loader.load().await;
        Self {
            client: Client::new(&config),
            deadline,
            known: Mutex::new(HashSet::new()),
            retention: None,
            retained: Mutex::new(HashSet::new()),
            owed: Mutex::new(HashSet::new()),
        }
    }

    /// Sets `retention` on the groups this sink creates (PutRetentionPolicy), and on groups that
    /// already exist when `reconcile` (else an existing group's retention is left as it is).
    pub fn with_retention(mut self, retention: LogRetention, reconcile: bool) -> Self {
        self.retention = Some((retention, reconcile));
        self
    }

    /// Applies the retention to `group` once per process: always when `created`, else when
    /// reconciling. A failure is logged and counted; the events are written all the same.
    async fn retain(&self, group: &str, created: bool) {
        let Some((retention, reconcile)) = &self.retention else { return };
        let owed = self.owed.lock().is_ok_and(|owed| owed.contains(group));
        if !(created || owed || *reconcile) || self.retained.lock().is_ok_and(|done| done.contains(group)) {
            return;
        }
        let days = retention.days_for(group);
        // (error code, cause) of a failed call
        let call: Result<(), (Option<String>, String)> = match days {
            0 => self
                .client
                .delete_retention_policy()
                .log_group_name(group)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| (e.code().map(str::to_owned), cause(&e))),
            days => self
                .client
                .put_retention_policy()
                .log_group_name(group)
                .retention_in_days(days as i32)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| (e.code().map(str::to_owned), cause(&e))),
        };
        match call {
            Ok(()) => {
                tracing::info!(group, days, created, "log group retention set");
                if let Ok(mut done) = self.retained.lock() {
                    done.insert(group.to_owned());
                }
                if let Ok(mut owed) = self.owed.lock() {
                    owed.remove(group);
                }
            }
            // a group that never had a policy has none to delete
            Err((code, _)) if days == 0 && code.as_deref() == Some("ResourceNotFoundException") => {}
            Err((_, cause)) => {
                metrics::counter!("engage_log_retention_failures_total").increment(1);
                tracing::warn!(group, days, %cause, "cannot set the log group's retention; retried with the group's next new stream");
                if created {
                    if let Ok(mut owed) = self.owed.lock() {
                        owed.insert(group.to_owned());
                    }
                }
            }
        }
    }

    /// Checks that the sink is usable now (region, credentials, endpoint reachable) with one
    /// `DescribeLogGroups` call, bounded by `within`; the cause when it is not.
    pub async fn check(&self, within: Duration) -> Result<(), String> {
        let call = self.client.describe_log_groups().limit(1).send();
        match tokio::time::timeout(within, call).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(cause(&error)),
            Err(_) => Err(format!("connection: no answer from CloudWatch Logs within {within:?}")),
        }
    }

    fn is_known(&self, group: &str, stream: &str) -> bool {
        self.known.lock().map(|k| k.contains(&(group.to_owned(), stream.to_owned()))).unwrap_or(false)
    }

    fn remember(&self, group: &str, stream: &str, exists: bool) {
        if let Ok(mut known) = self.known.lock() {
            let key = (group.to_owned(), stream.to_owned());
            if exists {
                known.insert(key);
            } else {
                known.remove(&key);
            }
        }
    }

    async fn ensure(&self, group: &str, stream: &str) -> Result<(), BackendError> {
        if self.is_known(group, stream) {
            return Ok(());
        }
        let created = match self.client.create_log_group().log_group_name(group).send().await {
            Ok(_) => true,
            Err(error) if error.code() == Some("ResourceAlreadyExistsException") => false,
            Err(error) => return Err(classify(error)),
        };
        self.retain(group, created).await;
        if let Err(error) = self.client.create_log_stream().log_group_name(group).log_stream_name(stream).send().await {
            if error.code() != Some("ResourceAlreadyExistsException") {
                return Err(classify(error));
            }
        }
        tracing::info!(group, stream, "created CloudWatch log group/stream");
        self.remember(group, stream, true);
        Ok(())
    }

    async fn put_once(&self, chunk: &Chunk, events: &[InputLogEvent]) -> Result<Rejected, BackendError> {
        self.ensure(&chunk.group, &chunk.stream).await?;
        let output = self
            .client
            .put_log_events()
            .log_group_name(&chunk.group)
            .log_stream_name(&chunk.stream)
            .set_log_events(Some(events.to_vec()))
            .send()
            .await;
        match output {
            Ok(output) => Ok(output.rejected_log_events_info().map_or_else(Rejected::default, |info| Rejected {
                too_new_start: index(info.too_new_log_event_start_index()),
                too_old_end: index(info.too_old_log_event_end_index()),
                expired_end: index(info.expired_log_event_end_index()),
            })),
            Err(error) => {
                if error.code() == Some("ResourceNotFoundException") {
                    self.remember(&chunk.group, &chunk.stream, false);
                }
                Err(classify(error))
            }
        }
    }

    async fn put_chunk(&self, chunk: &Chunk) -> Result<Rejected, BackendError> {
        let events = chunk
            .events
            .iter()
            .map(|(ts, message)| InputLogEvent::builder().timestamp(*ts).message(message).build())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| BackendError::Fatal(e.to_string()))?;
        let deadline = Instant::now() + self.deadline;
        let mut backoff = FIRST_BACKOFF;
        let mut recreated = false;
        loop {
            match self.put_once(chunk, &events).await {
                Ok(rejected) => return Ok(rejected),
                Err(BackendError::Fatal(message)) if message.contains("ResourceNotFoundException") && !recreated => {
                    // The group or stream vanished: create it again, once, right away.
                    recreated = true;
                }
                Err(BackendError::Retryable(message)) => {
                    let now = Instant::now();
                    if now + backoff >= deadline {
                        return Err(BackendError::Retryable(format!("gave up after {:?}: {message}", self.deadline)));
                    }
                    metrics::counter!("engage_log_sink_retries_total", "sink" => "cloudwatch").increment(1);
                    tracing::warn!(group = %chunk.group, stream = %chunk.stream, %message, ?backoff, "PutLogEvents retry");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
                Err(fatal) => return Err(fatal),
            }
        }
    }
}

/// One event read back with FilterLogEvents.
#[derive(Clone, Debug)]
pub struct FilteredEvent {
    /// Its stream.
    pub stream: String,
    /// Its timestamp, ms since the epoch.
    pub timestamp: i64,
    /// CloudWatch's id of the event.
    pub id: String,
    /// The message as stored.
    pub message: String,
}

/// Pages of FilterLogEvents one tail read follows at most.
const FILTER_PAGES: usize = 10;

impl CloudWatchBackend {
    /// Events of `group` (of one stream, or all) at or after `start_ms`, oldest first, at most
    /// about `max` (whole pages of FilterLogEvents). None when the group (or the stream) does not
    /// exist (yet).
    pub async fn filter_events(
        &self,
        group: &str,
        stream: Option<&str>,
        start_ms: i64,
        max: usize,
    ) -> Result<Option<Vec<FilteredEvent>>, String> {
        let mut events = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..FILTER_PAGES {
            let mut call = self
                .client
                .filter_log_events()
                .log_group_name(group)
                .start_time(start_ms.max(0))
                .limit(max.clamp(1, 10_000) as i32)
                .set_next_token(token.take());
            if let Some(stream) = stream {
                call = call.log_stream_names(stream);
            }
            let page = match call.send().await {
                Ok(page) => page,
                Err(error) if error.code() == Some("ResourceNotFoundException") => return Ok(None),
                Err(error) => return Err(cause(&error)),
            };
            events.extend(page.events().iter().map(|event| FilteredEvent {
                stream: event.log_stream_name().unwrap_or_default().to_owned(),
                timestamp: event.timestamp().unwrap_or_default(),
                id: event.event_id().unwrap_or_default().to_owned(),
                message: event.message().unwrap_or_default().to_owned(),
            }));
            token = page.next_token().map(str::to_owned).filter(|t| !t.is_empty());
            if token.is_none() || events.len() >= max {
                break;
            }
        }
        events.sort_by(|a, b| (a.timestamp, &a.id).cmp(&(b.timestamp, &b.id)));
        Ok(Some(events))
    }
}

fn index(value: Option<i32>) -> Option<usize> {
    value.and_then(|v| usize::try_from(v).ok())
}

/// Why a call failed, for logs and `/readyz`: `throttled`, `auth`, `connection`, `configuration`
/// or `service`, then the SDK's whole error context.
pub fn cause<E, R>(error: &SdkError<E, R>) -> String
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    let detail = DisplayErrorContext(error).to_string();
    format!("{}: {detail}", kind_of(error.code(), &detail))
}

/// The kind of a failure from its error code and message.
pub fn kind_of(code: Option<&str>, detail: &str) -> &'static str {
    let lower = detail.to_lowercase();
    match code.unwrap_or_default() {
        "ThrottlingException" | "LimitExceededException" => "throttled",
        "UnrecognizedClientException"
        | "InvalidSignatureException"
        | "AccessDeniedException"
        | "ExpiredTokenException"
        | "InvalidClientTokenId"
        | "MissingAuthenticationToken" => "auth",
        _ if lower.contains("region") => "configuration (no AWS region: set AWS_REGION)",
        _ if lower.contains("credential") => "auth (no AWS credentials)",
        _ if lower.contains("dispatch")
            || lower.contains("connect")
            || lower.contains("timeout")
            || lower.contains("timed out") =>
        {
            "connection"
        }
        _ => "service",
    }
}

/// Throttling, 5xx, time-outs and connection failures are retryable; the rest is not.
fn classify<E, R>(error: SdkError<E, R>) -> BackendError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug + HasStatus,
{
    let code = error.code().unwrap_or_default().to_owned();
    let status = error.raw_response().map(HasStatus::status_code);
    let message = format!("{code} {}", cause(&error));
    let retryable = match &error {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => true,
        SdkError::ServiceError(_) => {
            status.is_some_and(|s| s >= 500 || s == 429)
                || matches!(
                    code.as_str(),
                    "ThrottlingException" | "ServiceUnavailableException" | "LimitExceededException"
                )
        }
        _ => false,
    };
    if retryable {
        BackendError::Retryable(message)
    } else {
        BackendError::Fatal(message)
    }
}

/// The HTTP status of a raw response.
trait HasStatus {
    fn status_code(&self) -> u16;
}

impl HasStatus for aws_sdk_cloudwatchlogs::config::http::HttpResponse {
    fn status_code(&self) -> u16 {
        self.status().as_u16()
    }
}

#[async_trait]
impl LogBackend for CloudWatchBackend {
    fn name(&self) -> &'static str {
        "cloudwatch"
    }

    async fn put_chunks(&self, chunks: &[Chunk]) -> Vec<Result<Rejected, BackendError>> {
        futures::future::join_all(chunks.iter().map(|chunk| self.put_chunk(chunk))).await
    }
}
