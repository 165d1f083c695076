//! `engage logs tail GROUP [--follow] [--since 10m] [--filter TEXT] [--format short|json]`: prints
//! a log group's events through the running server's `GET /v1/logs/tail`, which reads whichever
//! sink the server writes (embedded or CloudWatch). With `--follow` it keeps asking, each request
//! waiting on the server up to 5 s for the next event, and prints each as it arrives; one line
//! per event, flushed, and a closed pipe ends it quietly (`engage logs tail G -f | head -3`).

use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use serde_json::Value;

use engage::Settings;

use crate::{admin_base, fail, out};

/// What `engage logs` does.
#[derive(Subcommand)]
pub enum LogsAction {
    /// Print a log group's events (those of the last 10 minutes unless --since), in the order
    /// the sink gives them; with --follow keep printing new ones as they arrive (Ctrl-C ends).
    Tail {
        /// The log group, e.g. /logs/org/edge/checkout.
        group: String,
        /// Keep printing events as they arrive.
        #[arg(long, short = 'f')]
        follow: bool,
        /// How far back to start: 30s, 10m, 2h, 1d, or an RFC 3339 time.
        #[arg(long, default_value = "10m")]
        since: String,
        /// Only events whose stored JSON text contains this text (case-sensitive).
        #[arg(long)]
        filter: Option<String>,
        /// short: `TIME LEVEL STREAM MESSAGE`; json: each LogEvent as one line of JSON.
        #[arg(long, value_parser = ["short", "json"], default_value = "short")]
        format: String,
        /// Only this stream of the group.
        #[arg(long)]
        stream: Option<String>,
        /// The server's base URL (default: ENGAGE_HTTP_ADDR on loopback).
        #[arg(long)]
        url: Option<String>,
        /// A bearer token, for a server with JWT auth on its log routes (or ENGAGE_LOGS_TOKEN).
        #[arg(long)]
        token: Option<String>,
    },
    /// Print the disk the embedded log uses, the oldest event it keeps, the retention and the
    /// disk guard's figures.
    Usage {
        /// The server's base URL (default: ENGAGE_HTTP_ADDR on loopback).
        #[arg(long)]
        url: Option<String>,
        /// A bearer token, for a server with JWT auth on its log routes (or ENGAGE_LOGS_TOKEN).
        #[arg(long)]
        token: Option<String>,
    },
}

/// Seconds each follow request waits on the server for an event.
const FOLLOW_WAIT_SECS: u64 = 5;

/// Runs `engage logs …`.
pub async fn run(settings: Settings, action: LogsAction) -> Result<ExitCode, ExitCode> {
    let (group, follow, since, filter, format, stream, url, token) = match action {
        LogsAction::Tail { group, follow, since, filter, format, stream, url, token } => {
            (group, follow, since, filter, format, stream, url, token)
        }
        LogsAction::Usage { url, token } => return usage(&settings, url, token).await,
    };
    let since_ms = since_ms(&since, chrono::Utc::now()).map_err(fail)?;
    let base = url.unwrap_or_else(|| admin_base(&settings)).trim_end_matches('/').to_owned();
    let token = token.or_else(|| std::env::var("ENGAGE_LOGS_TOKEN").ok()).filter(|t| !t.is_empty());
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(FOLLOW_WAIT_SECS + 20))
        .build()
        .map_err(|e| fail(format!("cannot make an HTTP client: {e}")))?;
    let mut cursor: Option<String> = None;
    let mut missing_said = false;
    let mut shown = 0usize;
    loop {
        let mut query: Vec<(&str, String)> = vec![("log_group", group.clone()), ("since", since_ms.to_string())];
        query.extend(stream.clone().map(|s| ("log_stream", s)));
        query.extend(filter.clone().map(|f| ("filter", f)));
        query.extend(cursor.clone().map(|c| ("cursor", c)));
        if follow {
            query.push(("wait", FOLLOW_WAIT_SECS.to_string()));
        }
        let url = reqwest::Url::parse_with_params(&format!("{base}/v1/logs/tail"), &query)
            .map_err(|e| fail(format!("--url {base:?} is not a URL: {e}")))?;
        let mut request = client.get(url);
        if let Some(token) = &token {
            request = request.bearer_auth(token);
        }
        let page = match fetch(request, &base).await {
            Ok(page) => page,
            // a follower rides out a server restart or a sink outage
            Err(Retry(message)) if follow => {
                eprintln!("engage: {message}; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            Err(Retry(message)) => return Err(fail(message)),
        };
        let events = page["events"].as_array().cloned().unwrap_or_default();
        for event in &events {
            print_event(event, &format);
        }
        if let Some(next) = page["cursor"].as_str() {
            cursor = Some(next.to_owned());
        }
        if page["group_found"] == Value::Bool(false) && !missing_said {
            // an empty answer is not a quiet group: say so (once), as `tail` and `aws logs tail` do
            missing_said = true;
            let what = match &stream {
                Some(stream) => format!("no log stream {stream:?} in group {group:?}"),
                None => format!("no log group {group:?}"),
            };
            if !follow {
                return Err(fail(format!(
                    "{what} on {base}: nothing was ever written to it, or all of it expired (groups are /logs/<org>/<product>/<service>)"
                )));
            }
            eprintln!("engage: {what} on {base} yet: waiting for its first event");
        }
        shown += events.len();
        if !follow && events.is_empty() {
            if shown == 0 {
                // an empty answer says so (on stderr: stdout stays the events alone)
                let from = chrono::DateTime::from_timestamp_millis(since_ms)
                    .map_or_else(|| since.clone(), |t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
                eprintln!("engage: no events in {group} since {from} (--since widens the window)");
            }
            return Ok(ExitCode::SUCCESS);
        }
    }
}

/// `engage logs usage`.
async fn usage(settings: &Settings, url: Option<String>, token: Option<String>) -> Result<ExitCode, ExitCode> {
    let base = url.unwrap_or_else(|| admin_base(settings)).trim_end_matches('/').to_owned();
    let token = token.or_else(|| std::env::var("ENGAGE_LOGS_TOKEN").ok()).filter(|t| !t.is_empty());
    let mut request = reqwest::Client::new().get(format!("{base}/v1/logs/usage"));
    if let Some(token) = &token {
        request = request.bearer_auth(token);
    }
    let usage = fetch(request, &base).await.map_err(|Retry(message)| fail(message))?;
    let sink = usage["sink"].as_str().unwrap_or("?");
    outln!("sink: {sink}");
    let days = |d: &Value| match d.as_u64() {
        Some(0) => "forever".to_owned(),
        Some(n) => format!("{n} days"),
        None => "?".to_owned(),
    };
    let by_group = usage["retention_by_group"].as_str().map(|g| format!("; per group: {g}")).unwrap_or_default();
    outln!("retention: {}{by_group}", days(&usage["retention_days"]));
    if sink == "embedded" {
        let (bytes, segments) = (usage["disk_bytes"].as_u64().unwrap_or(0), usage["segments"].as_u64().unwrap_or(0));
        outln!("disk used: {} ({bytes} bytes) in {segments} segments", human(bytes));
        outln!("oldest event kept: {}", usage["oldest_event"].as_str().unwrap_or("none"));
        let free = usage["free_bytes"].as_u64().map(human).unwrap_or_else(|| "unknown".to_owned());
        let min_free = usage["min_free_bytes"].as_u64().unwrap_or(0);
        outln!("disk free: {free} (log writes refused below {})", human(min_free));
    } else {
        outln!("CloudWatch keeps the events: disk use and the oldest event are in its console or `aws logs describe-log-groups`");
    }
    Ok(ExitCode::SUCCESS)
}

/// Bytes in binary units: `12.3 MiB`.
fn human(bytes: u64) -> String {
    let mut value = bytes as f64;
    for unit in ["B", "KiB", "MiB", "GiB"] {
        if value < 1024.0 {
            return if unit == "B" { format!("{bytes} B") } else { format!("{value:.1} {unit}") };
        }
        value /= 1024.0;
    }
    format!("{value:.1} TiB")
}

/// A failure worth retrying when following (it is said, then asked again).
struct Retry(String);

async fn fetch(request: reqwest::RequestBuilder, base: &str) -> Result<Value, Retry> {
    let response = request
        .send()
        .await
        .map_err(|e| Retry(format!("cannot reach the engage server at {base} (is `engage serve` running?): {e}")))?;
    let status = response.status();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    if status.is_success() {
        return Ok(answer);
    }
    let said = answer["message"].as_str().map_or_else(|| answer.to_string(), str::to_owned);
    if status.is_client_error() && status != reqwest::StatusCode::TOO_MANY_REQUESTS {
        // a wrong group, token or setting: asking again will not help
        eprintln!("engage: the server answered {status}: {said}");
        std::process::exit(1);
    }
    Err(Retry(format!("the server answered {status}: {said}")))
}

fn print_event(event: &Value, format: &str) {
    let body = &event["event"];
    if format == "json" {
        outln!("{body}");
        return;
    }
    let time = event["timestamp"]
        .as_i64()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default();
    let level = body["level"].as_str().unwrap_or("-");
    let stream = event["log_stream"].as_str().unwrap_or("-");
    let message = match body["message"].as_str() {
        Some(text) => text.replace(['\n', '\r'], " "),
        None => body.to_string(),
    };
    outln!("{time} {level} {stream} {message}");
}

/// `--since`: a duration back from `now` (`90s`, `10m`, `2h`, `1d`, `1w`) or an RFC 3339 time.
fn since_ms(text: &str, now: chrono::DateTime<chrono::Utc>) -> Result<i64, String> {
    let text = text.trim();
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(time.timestamp_millis());
    }
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let seconds = match unit {
        "s" => 1,
        "m" | "" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => 0,
    };
    match number.parse::<i64>() {
        Ok(n) if seconds > 0 => Ok((now.timestamp_millis() - n.saturating_mul(seconds * 1000)).max(0)),
        _ => Err(format!("--since {text:?}: give a duration such as 30s, 10m, 2h, 1d, or an RFC 3339 time")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_reads_durations_and_times() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-26T12:00:00Z").unwrap().to_utc();
        let ms = now.timestamp_millis();
        assert_eq!(since_ms("10m", now), Ok(ms - 600_000));
        assert_eq!(since_ms("30s", now), Ok(ms - 30_000));
        assert_eq!(since_ms("2h", now), Ok(ms - 7_200_000));
        assert_eq!(since_ms("1d", now), Ok(ms - 86_400_000));
        assert_eq!(since_ms("5", now), Ok(ms - 300_000), "minutes when no unit");
        assert_eq!(since_ms("2026-11-26T11:00:00Z", now), Ok(ms - 3_600_000));
        for bad in ["", "ten minutes", "10y", "-5m"] {
            assert!(since_ms(bad, now).is_err(), "{bad}");
        }
    }
}
