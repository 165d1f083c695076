//! The `engage` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use engage::{Application, LogFormat, Settings};

/// engage: structured-log ingestion and customer engagement, one binary.
#[derive(Parser)]
#[command(name = "engage", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the service (settings: defaults < --config FILE < ENGAGE_* environment).
    Serve {
        /// Optional TOML settings file.
        #[arg(long, value_name = "PATH")]
        config: Option<PathBuf>,
    },
    /// Print the effective settings as TOML-like lines and exit (checks them, starts nothing).
    Config {
        /// Optional TOML settings file.
        #[arg(long, value_name = "PATH")]
        config: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { config } => {
            let settings = match Settings::load(config.as_deref()) {
                Ok(settings) => settings,
                Err(error) => {
                    eprintln!("engage: {error}");
                    return ExitCode::from(2);
                }
            };
            init_tracing(&settings);
            let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
                Ok(runtime) => runtime,
                Err(error) => {
                    eprintln!("engage: cannot start the runtime: {error}");
                    return ExitCode::FAILURE;
                }
            };
            let result = runtime.block_on(async {
                let app = Application::build(settings).await?;
                app.run_until(engage::shutdown_signal()).await
            });
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    tracing::error!("{error:#}");
                    eprintln!("engage: {error:#}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Config { config } => match Settings::load(config.as_deref()) {
            Ok(settings) => {
                println!("{settings:#?}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("engage: {error}");
                ExitCode::from(2)
            }
        },
    }
}

fn init_tracing(settings: &Settings) {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&settings.log_level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match settings.log_format {
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(false).init(),
        LogFormat::Text => builder.init(),
    }
}
