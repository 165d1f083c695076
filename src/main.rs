//! The `engage` command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde_json::{json, Value};
use tracing_subscriber::EnvFilter;

use engage::{Application, LogFormat, Settings};

/// mimalloc instead of glibc malloc: under the log load glibc's `_int_malloc`, `malloc_consolidate`
/// and `_int_free` were ~22% of the server's samples (docs/profiles/logs-one-before.svg).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// engage: structured-log ingestion and customer engagement, one binary.
#[derive(Parser)]
#[command(name = "engage", version, about)]
struct Cli {
    /// Optional TOML settings file (settings: defaults < this file < ENGAGE_* environment).
    #[arg(long, value_name = "PATH", global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the service.
    Serve {
        /// What to run: all (HTTP + actors), ingress (HTTP only), node (actors only). Overrides
        /// ENGAGE_ROLE.
        #[arg(long, value_parser = ["all", "ingress", "node"])]
        role: Option<String>,
    },
    /// Print the effective settings (secrets hidden) and exit.
    Config,
    /// Manage staff, integration, ingestion and app tokens through the running server's loopback
    /// admin routes.
    Tokens {
        #[command(subcommand)]
        action: TokensAction,
    },
    /// Print the partition count and which node owns each partition; `set COUNT` changes the
    /// count a stopped, drained cluster (or single node) keeps.
    Partitions {
        #[command(subcommand)]
        action: Option<PartitionsAction>,
    },
    /// Recharge a business wallet or show its balance, through the running server.
    Wallet {
        #[command(subcommand)]
        action: WalletAction,
    },
    /// List the scheduled jobs or run one now, on the running server.
    Jobs {
        #[command(subcommand)]
        action: JobsAction,
    },
    /// Write reports now, on the running server.
    Reports {
        #[command(subcommand)]
        action: ReportsAction,
    },
    /// The events parked after their last failed delivery: list, show, replay or drop them,
    /// through the running server.
    DeadLetters {
        #[command(subcommand)]
        action: dead_letters_cli::DeadLettersAction,
    },
    /// A customer's data rights: export or erase them in a brand, through the running server.
    Customers {
        #[command(subcommand)]
        action: customers_cli::CustomersAction,
    },
    /// Read the log service's events through the running server (`logs tail`).
    Logs {
        #[command(subcommand)]
        action: logs_cli::LogsAction,
    },
}

#[derive(Subcommand)]
enum JobsAction {
    /// Each job, its cron (IST) and its next run.
    List,
    /// Run a job now and print its outcome.
    Run {
        /// sms_drain, chat_drain, push_drain, pos_revoke, chat_refund, points_expiry, journeys,
        /// abandoned_cart, roi_lost_customers, roi_referral, roi_journeys, roi_abandoned_cart,
        /// roi_welcome, auto_campaign_sync, health_reports, bill_generation or bill_report.
        name: String,
        /// Run as of this time (RFC 3339) instead of now.
        #[arg(long)]
        now: Option<String>,
    },
}

#[derive(Subcommand)]
enum WalletAction {
    /// Credit the wallet; prints the new balance.
    Recharge {
        /// The brand.
        #[arg(long)]
        parent: String,
        /// The outlet whose wallet it is.
        #[arg(long)]
        business: String,
        /// Amount (decimal, e.g. 500 or 99.50).
        #[arg(long)]
        amount: String,
        /// Payment reference: a reference already applied changes nothing.
        #[arg(long)]
        reference: Option<String>,
    },
    /// Print the balance.
    Balance {
        /// The brand.
        #[arg(long)]
        parent: String,
        /// The outlet.
        #[arg(long)]
        business: String,
    },
}

#[derive(Subcommand)]
enum ReportsAction {
    /// The five journey health workbooks of the 7 IST days before today (or before --now's day),
    /// written under the data dir (and mailed when ENGAGE_MAIL_SERVICE_URL is set); prints their
    /// paths.
    Health {
        /// Report as of this time (RFC 3339) instead of now.
        #[arg(long)]
        now: Option<String>,
    },
    /// The digital-bill workbook of one IST day (yesterday unless --date), written under the data
    /// dir (and mailed when ENGAGE_MAIL_SERVICE_URL is set); prints its path.
    Bills {
        /// The IST day reported, YYYY-MM-DD.
        #[arg(long)]
        date: Option<String>,
    },
}

/// What `engage partitions` changes.
#[derive(Subcommand)]
enum PartitionsAction {
    /// Make COUNT the partition count the cluster (or this data dir) keeps. Every engage process
    /// must be stopped and every order processed: it is refused otherwise.
    Set {
        /// The new count (1 to 4096).
        count: u32,
    },
}

#[derive(Subcommand)]
enum TokensAction {
    /// Create a token and print it alone on stdout.
    Create {
        /// staff, integration, ingestion or app (an app token's --business is the customer's number).
        #[arg(long, value_parser = ["staff", "integration", "ingestion", "app"])]
        kind: String,
        /// The parent business (brand) the token acts for.
        #[arg(long)]
        parent: String,
        /// Limit the token to one outlet.
        #[arg(long)]
        business: Option<String>,
    },
    /// List tokens (never their secrets).
    List,
    /// Revoke a token by id.
    Revoke {
        /// The token id (from `list` or `create`'s log).
        id: String,
    },
}

/// `1 brand`, `2 brands`.
fn count(n: &Value, one: &str, many: &str) -> String {
    format!("{n} {}", if n.as_u64() == Some(1) { one } else { many })
}

fn load(config: Option<&Path>, role: Option<&str>) -> Result<Settings, ExitCode> {
    let mut env: Vec<(String, String)> = std::env::vars().filter(|(k, _)| k.starts_with("ENGAGE_")).collect();
    if let Some(role) = role {
        env.push(("ENGAGE_ROLE".to_owned(), role.to_owned()));
    }
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Settings::load_with_env(config, &pairs).map_err(|error| {
        eprintln!("engage: {error}");
        ExitCode::from(2)
    })
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    engage_storage::set_idle_hook(reclaim::collect);
    tokio::runtime::Builder::new_multi_thread().enable_all().on_thread_park(reclaim::when_idle).build().map_err(
        |error| {
            eprintln!("engage: cannot start the runtime: {error}");
            ExitCode::FAILURE
        },
    )
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) | Err(code) => code,
    }
}

fn run(cli: Cli) -> Result<ExitCode, ExitCode> {
    let config = cli.config.as_deref();
    match cli.command {
        Command::Serve { role } => {
            let settings = load(config, role.as_deref())?;
            init_tracing(&settings);
            let json_logs = settings.log_format == LogFormat::Json;
            let result = runtime()?.block_on(async {
                let app = Application::build(settings).await?;
                app.run_until(engage::shutdown_signal()).await
            });
            match result {
                Ok(()) => Ok(ExitCode::SUCCESS),
                // said once: as a JSON log line when logs are JSON, else as a plain line
                Err(error) if json_logs => {
                    tracing::error!("{error:#}");
                    Err(ExitCode::FAILURE)
                }
                Err(error) => Err(fail(format!("{error:#}"))),
            }
        }
        Command::Config => {
            let settings = load(config, None)?;
            out(settings.to_toml_redacted().trim_end());
            Ok(ExitCode::SUCCESS)
        }
        Command::Tokens { action } => {
            let settings = load(config, None)?;
            runtime()?.block_on(tokens(settings, action))
        }
        Command::Partitions { action: None } => {
            let settings = load(config, None)?;
            runtime()?.block_on(partitions(settings))
        }
        Command::Partitions { action: Some(PartitionsAction::Set { count }) } => {
            let settings = load(config, None)?;
            match runtime()?.block_on(engage::set_partition_count(&settings, count)) {
                Ok(before) => {
                    let before = before.map_or_else(|| "none kept".to_owned(), |n| n.to_string());
                    out(format_args!("partition count: {count} (was {before}); start every process with ENGAGE_PARTITIONS={count}, or with it unset"));
                    Ok(ExitCode::SUCCESS)
                }
                Err(error) => Err(fail(format!("{error:#}"))),
            }
        }
        Command::Jobs { action } => {
            let settings = load(config, None)?;
            runtime()?.block_on(jobs(settings, action))
        }
        Command::Wallet { action } => {
            let settings = load(config, None)?;
            runtime()?.block_on(wallet(settings, action))
        }
        Command::DeadLetters { action } => {
            let settings = load(config, None)?;
            runtime()?.block_on(dead_letters_cli::run(settings, action))
        }
        Command::Customers { action } => runtime()?.block_on(customers_cli::run(load(config, None)?, action)),
        Command::Logs { action } => {
            let settings = load(config, None)?;
            runtime()?.block_on(logs_cli::run(settings, action))
        }
        Command::Reports { action: ReportsAction::Health { now } } => {
            let settings = load(config, None)?;
            runtime()?.block_on(health_reports(settings, now))
        }
        Command::Reports { action: ReportsAction::Bills { date } } => {
            let settings = load(config, None)?;
            runtime()?.block_on(bill_report(settings, date))
        }
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("engage: {message}");
    ExitCode::FAILURE
}

/// The admin base URL of the local server: its HTTP address, with an unspecified host replaced
/// by loopback.
fn admin_base(settings: &Settings) -> String {
    let mut addr = settings.http_addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    format!("http://{addr}")
}

/// The server's admin key: `ENGAGE_ADMIN_KEY` when given; else the key file the server names at
/// `GET /admin/key`; else `<data_dir>/admin.key` here. Never creates a key.
async fn find_admin_key(settings: &Settings, client: &reqwest::Client, base: &str) -> Result<String, ExitCode> {
    if let Some(key) = &settings.admin_key {
        return Ok(key.expose().to_owned());
    }
    let answer = send(client.get(format!("{base}/admin/key")), base).await?;
    if answer["key_setting"].is_string() {
        return Err(fail(
            "the server's admin key is set by ENGAGE_ADMIN_KEY: give this command the same ENGAGE_ADMIN_KEY",
        ));
    }
    let mut files: Vec<PathBuf> = answer["key_file"].as_str().map(PathBuf::from).into_iter().collect();
    files.push(settings.admin_key_file());
    for file in &files {
        if let Ok(key) = std::fs::read_to_string(file) {
            return Ok(key.trim().to_owned());
        }
    }
    Err(fail(format!(
        "cannot read the server's admin key ({}): run this as a user who may read it, or set ENGAGE_ADMIN_KEY to the server's key",
        files.first().map(|f| f.display().to_string()).unwrap_or_default()
    )))
}

/// Says what the server refused, in its own words when it gave some.
fn server_refused(status: reqwest::StatusCode, answer: &Value) -> ExitCode {
    match answer["message"].as_str() {
        Some(message) if status == reqwest::StatusCode::FORBIDDEN => fail(format!(
            "the server refused the admin key ({status}: {message}): set ENGAGE_ADMIN_KEY to the server's admin key"
        )),
        Some(message) => fail(format!("the server answered {status}: {message}")),
        None => fail(format!("the server answered {status}: {answer}")),
    }
}

/// Calls the running server's loopback admin route with the admin key; the answer, or the exit
/// code after saying what went wrong.
async fn admin_call(
    settings: &Settings,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> Result<Value, ExitCode> {
    let base = admin_base(settings);
    let client = reqwest::Client::new();
    let key = find_admin_key(settings, &client, &base).await?;
    let mut request = client.request(method, format!("{base}{path}")).header("x-admin-key", key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    send(request, &base).await
}

/// How long an admin command waits for a server that is still starting.
const WAIT_FOR_START: std::time::Duration = std::time::Duration::from_secs(60);

/// Sends an admin request: the JSON answer, or the exit code after saying what went wrong. A
/// server that is still starting (503 `STARTING`) is asked again every 250 ms for up to a minute.
async fn send(request: reqwest::RequestBuilder, base: &str) -> Result<Value, ExitCode> {
    let deadline = std::time::Instant::now() + WAIT_FOR_START;
    loop {
        let attempt = request.try_clone().ok_or_else(|| fail("the request cannot be sent twice"))?;
        let response = attempt.send().await.map_err(|e| {
            fail(format!(
                "cannot reach the engage server at {base} (is `engage serve` running? ENGAGE_HTTP_ADDR names its address): {e}"
            ))
        })?;
        let status = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(answer);
        }
        if answer["error"] != "STARTING" || std::time::Instant::now() >= deadline {
            return Err(server_refused(status, &answer));
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

/// `println!` through [`out`].
macro_rules! outln {
    ($($arg:tt)*) => { out(format_args!($($arg)*)) };
}

mod customers_cli;
mod dead_letters_cli;
mod logs_cli;
mod reclaim;

/// One stdout line per item of a list answer; an empty list says so on stderr instead (stdout
/// stays the items alone, for scripts).
fn list_lines(items: &Value, empty: &str, line: impl Fn(&Value) -> String) {
    let items = items.as_array().map(Vec::as_slice).unwrap_or_default();
    if items.is_empty() {
        eprintln!("{empty}");
    }
    for item in items {
        out(line(item));
    }
}

/// Prints a line on stdout; a closed pipe (`engage tokens list | head -1`) ends the process
/// quietly.
fn out(line: impl std::fmt::Display) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = writeln!(stdout, "{line}") {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("engage: cannot write to stdout: {error}");
        std::process::exit(1);
    }
}

async fn tokens(settings: Settings, action: TokensAction) -> Result<ExitCode, ExitCode> {
    use reqwest::Method;
    match action {
        TokensAction::Create { kind, parent, business } => {
            let body = json!({"kind": kind, "parent": parent, "business": business});
            let answer = admin_call(&settings, Method::POST, "/admin/tokens", Some(body)).await?;
            outln!("{}", answer["token"].as_str().unwrap_or_default());
            eprintln!("token id: {}", answer["id"].as_str().unwrap_or_default());
        }
        TokensAction::List => {
            let answer = admin_call(&settings, Method::GET, "/admin/tokens", None).await?;
            let empty = "no tokens yet: make one with `engage tokens create --kind staff --parent BRAND`";
            list_lines(&answer["tokens"], empty, |token| {
                format!(
                    "{}\t{}\tparent={}\tbusiness={}\tcreated={}\t{}",
                    token["id"].as_str().unwrap_or_default(),
                    token["kind"].as_str().unwrap_or_default(),
                    token["parent"].as_str().unwrap_or_default(),
                    token["business"].as_str().unwrap_or("-"),
                    token["created_at"].as_str().unwrap_or_default(),
                    if token["revoked_at"].is_string() { "revoked" } else { "active" },
                )
            });
        }
        TokensAction::Revoke { id } => {
            admin_call(&settings, Method::DELETE, &format!("/admin/tokens/{id}"), None).await?;
            outln!("revoked {id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn wallet(settings: Settings, action: WalletAction) -> Result<ExitCode, ExitCode> {
    let (path, body) = match &action {
        WalletAction::Recharge { parent, business, amount, reference } => {
            let amount: serde_json::Number =
                amount.parse().map_err(|_| fail(format!("--amount {amount:?} is not a number")))?;
            (
                "/admin/wallet/recharge",
                json!({"parent": parent, "business": business, "amount": amount, "reference": reference}),
            )
        }
        WalletAction::Balance { parent, business } => {
            ("/admin/wallet/balance", json!({"parent": parent, "business": business}))
        }
    };
    let answer = admin_call(&settings, reqwest::Method::POST, path, Some(body)).await?;
    outln!("{}", answer["balance"].as_str().unwrap_or_default());
    Ok(ExitCode::SUCCESS)
}

async fn jobs(settings: Settings, action: JobsAction) -> Result<ExitCode, ExitCode> {
    match action {
        JobsAction::List => {
            let answer = admin_call(&settings, reqwest::Method::GET, "/admin/jobs", None).await?;
            for job in answer["jobs"].as_array().cloned().unwrap_or_default() {
                outln!(
                    "{}\t{}\tnext {}",
                    job["job"].as_str().unwrap_or_default(),
                    job["cron"].as_str().unwrap_or_default(),
                    job["next"].as_str().unwrap_or("-")
                );
            }
        }
        JobsAction::Run { name, now } => {
            let answer = admin_call(
                &settings,
                reqwest::Method::POST,
                "/admin/jobs/run",
                Some(json!({"name": name, "now": now})),
            )
            .await?;
            outln!("{}", answer["outcome"]);
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn health_reports(settings: Settings, now: Option<String>) -> Result<ExitCode, ExitCode> {
    let body = json!({"name": "health_reports", "now": now});
    let answer = admin_call(&settings, reqwest::Method::POST, "/admin/jobs/run", Some(body)).await?;
    let outcome = &answer["outcome"];
    for file in outcome["files"].as_array().cloned().unwrap_or_default() {
        outln!("{}", file.as_str().unwrap_or_default());
    }
    eprintln!(
        "{} to {}: {} journeys; mailed: {}",
        outcome["from"].as_str().unwrap_or_default(),
        outcome["to"].as_str().unwrap_or_default(),
        outcome["journeys"],
        outcome["mailed"]
    );
    Ok(ExitCode::SUCCESS)
}

async fn bill_report(settings: Settings, date: Option<String>) -> Result<ExitCode, ExitCode> {
    // the job reports the day before its `now`: 11:32 IST of the day after `date`
    let now = match date {
        None => None,
        Some(date) => match chrono::NaiveDate::parse_from_str(&date, "%Y-%m-%d") {
            Ok(day) => Some(format!("{}T06:02:00Z", day + chrono::Duration::days(1))),
            Err(_) => {
                eprintln!("--date must be an IST day, YYYY-MM-DD: {date:?}");
                return Err(ExitCode::from(2));
            }
        },
    };
    let body = json!({"name": "bill_report", "now": now});
    let answer = admin_call(&settings, reqwest::Method::POST, "/admin/jobs/run", Some(body)).await?;
    let outcome = &answer["outcome"];
    outln!("{}", outcome["file"].as_str().unwrap_or_default());
    eprintln!(
        "{}: {}, {}, {} with bills on sent none; mailed: {}",
        outcome["date"].as_str().unwrap_or_default(),
        count(&outcome["brands"], "brand", "brands"),
        count(&outcome["outlets"], "outlet", "outlets"),
        count(&outcome["unsent"], "business", "businesses"),
        outcome["mailed"]
    );
    Ok(ExitCode::SUCCESS)
}

async fn partitions(settings: Settings) -> Result<ExitCode, ExitCode> {
    let Some(url) = &settings.nats_url else {
        match engage::data_dir_partition_count(&settings).await {
            Ok(Some(kept)) => outln!("embedded mode: the single node owns all {kept} partitions (the count its data dir keeps)"),
            Ok(None) => outln!("embedded mode: the single node owns all {} partitions (ENGAGE_PARTITIONS; its data dir keeps none yet)", settings.partitions),
            Err(_) => outln!("embedded mode: the single node owns all its partitions (it holds its data dir: engage_partitions_running on its /metrics says how many)"),
        }
        return Ok(ExitCode::SUCCESS);
    };
    let jetstream = engage::cli_jetstream(url).await.map_err(|e| fail(format!("{e:#}")))?;
    // read only: the nodes own the bucket's settings
    let bucket = jetstream.get_key_value(engage_streams::lease::LEASE_BUCKET).await.map_err(|e| {
        fail(format!("no partition leases in NATS yet (has a node started with this ENGAGE_NATS_URL?): {e}"))
    })?;
    let owners = engage_streams::lease::owners(&bucket).await.map_err(fail)?;
    let nodes = engage_streams::lease::live_nodes(&bucket).await.map_err(fail)?;
    // the cluster's own count, whatever this process was given
    let partitions = engage_streams::bus::partition_count::kept(&jetstream).await.map_err(fail)?;
    let partitions = partitions.unwrap_or(settings.partitions);
    outln!("live nodes: {}", if nodes.is_empty() { "none".to_owned() } else { nodes.join(", ") });
    outln!("partitions: {partitions}");
    for partition in 0..partitions {
        outln!("{partition}\t{}", owners.get(&partition).map(String::as_str).unwrap_or("(unowned)"));
    }
    Ok(ExitCode::SUCCESS)
}

fn init_tracing(settings: &Settings) {
    let mut filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&settings.log_level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    // The embedded store's crates log through `log` (bridged): their info lines (one per table at
    // start) stay out unless the filter names them, e.g. `info,fjall=debug` for write stalls.
    let asked = std::env::var("RUST_LOG").unwrap_or_else(|_| settings.log_level.clone());
    for (target, quiet) in [("fjall", "fjall=warn"), ("lsm_tree", "lsm_tree=warn")] {
        if !asked.contains(target) {
            if let Ok(directive) = quiet.parse() {
                filter = filter.add_directive(directive);
            }
        }
    }
    use std::io::IsTerminal;
    // colours only for a person at a terminal, never into files or log collectors
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    match settings.log_format {
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(false).init(),
        LogFormat::Text => builder.init(),
    }
}
