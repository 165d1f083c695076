//! `engage dead-letters list|show|replay|drop`: the parked events of the running server, through
//! its loopback admin routes (`/admin/dead-letters`; `docs/operations.md`, "A parked event").

use std::process::ExitCode;

use clap::Subcommand;

use engage::Settings;

use crate::{admin_call, list_lines, out};

/// What `engage dead-letters` does.
#[derive(Subcommand)]
pub enum DeadLettersAction {
    /// One line per parked event, oldest first: id, brand, attempts, last failure, error.
    List,
    /// A parked event whole (JSON), its envelope included.
    Show {
        /// The event id (from `list`).
        id: String,
    },
    /// Publish the event again (once its cause is fixed); its effects count once.
    Replay {
        /// The event id.
        id: String,
    },
    /// Forget the event.
    Drop {
        /// The event id.
        id: String,
    },
}

/// Runs `engage dead-letters …`.
pub async fn run(settings: Settings, action: DeadLettersAction) -> Result<ExitCode, ExitCode> {
    use reqwest::Method;
    let path = |id: &str, tail: &str| format!("/admin/dead-letters/{id}{tail}");
    match action {
        DeadLettersAction::List => {
            let answer = admin_call(&settings, Method::GET, "/admin/dead-letters", None).await?;
            let empty = "no parked events: every event was processed (or replayed or dropped)";
            list_lines(&answer["dead_letters"], empty, |letter| {
                format!(
                    "{}\t{}\tattempts={}\tlast={}\t{}",
                    letter["id"].as_str().unwrap_or_default(),
                    letter["tenant"].as_str().unwrap_or_default(),
                    letter["attempts"],
                    letter["last_failure"].as_str().unwrap_or_default(),
                    letter["error"].as_str().unwrap_or_default(),
                )
            });
        }
        DeadLettersAction::Show { id } => {
            let answer = admin_call(&settings, Method::GET, &path(&id, ""), None).await?;
            outln!("{}", serde_json::to_string_pretty(&answer).unwrap_or_default());
        }
        DeadLettersAction::Replay { id } => {
            admin_call(&settings, Method::POST, &path(&id, "/replay"), None).await?;
            outln!("replayed {id}");
        }
        DeadLettersAction::Drop { id } => {
            admin_call(&settings, Method::DELETE, &path(&id, ""), None).await?;
            outln!("dropped {id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
