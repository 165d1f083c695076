//! `engage customers export|erase --parent BRAND --phone NUMBER`: a customer's data rights for
//! requests that arrive by mail or phone, through the running server's `/admin/customers/*`
//! (loopback and the admin key, like every admin command). `export` prints the document (JSON),
//! `erase` what it removed.

use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;

use engage::Settings;

use crate::{admin_call, out};

/// What `engage customers` does.
#[derive(Subcommand)]
pub enum CustomersAction {
    /// Print everything a brand holds about one customer (profile, orders, points, coupons,
    /// bills, feedback, subscriptions, messages) as one JSON document.
    Export {
        /// The brand (parent business id).
        #[arg(long)]
        parent: String,
        /// The customer's number (ten digits, or with +91).
        #[arg(long)]
        phone: String,
    },
    /// Erase a customer's personal data in a brand (docs/consent.md): rows deleted or
    /// anonymised, unsent messages cancelled and credited back, parked and retained bus messages
    /// removed, an audit row kept. Erasing twice changes nothing.
    Erase {
        /// The brand (parent business id).
        #[arg(long)]
        parent: String,
        /// The customer's number (ten digits, or with +91).
        #[arg(long)]
        phone: String,
        /// Who asked, for the audit row (e.g. the ticket of the request); `cli` if not given.
        #[arg(long)]
        by: Option<String>,
    },
}

/// Runs `engage customers …`.
pub async fn run(settings: Settings, action: CustomersAction) -> Result<ExitCode, ExitCode> {
    match action {
        CustomersAction::Export { parent, phone } => {
            let body = json!({"parent": parent, "phone": phone});
            let answer = admin_call(&settings, reqwest::Method::POST, "/admin/customers/export", Some(body)).await?;
            out(serde_json::to_string_pretty(&answer).unwrap_or_default());
        }
        CustomersAction::Erase { parent, phone, by } => {
            let body = json!({"parent": parent, "phone": phone, "by": by});
            let answer = admin_call(&settings, reqwest::Method::POST, "/admin/customers/erase", Some(body)).await?;
            out(format!(
                "erased in {parent}: {} rows deleted, {} anonymised, {} unsent messages cancelled, {} bus messages removed",
                answer["deleted"], answer["anonymised"], answer["cancelled"], answer["bus_messages"]
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
