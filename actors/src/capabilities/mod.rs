//! The capabilities of a tenant actor, one module each: its typed queries and replies, its rows
//! (through [`crate::keys`]), its order reactions, and its tests. They work on a
//! [`crate::tenant_core::Tenant`]; `tenant.rs` only dispatches to them.
//!
//! | capability | queries | order reaction |
//! |---|---|---|
//! | [`orders`] | (bus events: [`orders::apply`]) | runs the reactions |
//! | [`branding`] | (names and colour the customer pages show) | |
//! | [`business`] | [`business::BusinessQuery`] (`/crm_api/add_b_config`) | |
//! | [`customers`] | [`customers::CustomersQuery`] | |
//! | [`loyalty`] | [`loyalty::LoyaltyQuery`] | [`loyalty::EarnPoints`] |
//! | [`redemption`] | [`redemption::RedemptionQuery`] | [`redemption::ConfirmPendingRedemption`] |
//! | [`rewards`] | [`rewards::RewardsQuery`] | [`rewards::ConfirmPendingCoupon`] |
//! | [`referral`] | (customer events) | [`referral::RewardReferral`] |
//! | [`otp`] | [`otp::OtpQuery`] | |
//! | [`fraud`] | [`fraud::FraudQuery`] | |
//! | [`journeys`] | [`journeys::JourneysQuery`] (journey configurations) | [`journeys::SendWelcome`] |
//! | [`bills`] | [`bills::BillsQuery`] (configurations, widgets, funnel, generation pages) | [`bills::GenerateBill`] |
//! | [`feedback`] | [`feedback::FeedbackQuery`] (configurations, the form, the funnel) | [`feedback::SendFeedback`] |
//! | [`stats`] | [`stats::StatsQuery`] (the twelve metrics, special days) | [`stats::KeepRollups`] |
//! | [`wallet`] | [`wallet::WalletQuery`], [`wallet::queue_send`] (every paid message) | |
//! | [`ledger`] | (the points ledger the others write) | |
//! | [`consent`] | [`consent::ConsentQuery`] (subscriptions, keywords, opt-out imports) | |
//! | [`senders`] | [`senders::SendersQuery`] (a brand's own senders; its webhooks, answered by [`webhooks`]) | |
//! | [`webhooks`] | (providers' webhooks, verified with the brand's secret) | |
//! | [`receipts`] | (providers' delivery receipts applied to sends) | |
//!
//! A capability that outgrew one file is a folder with the same file names (bills, feedback,
//! journeys, stats): `mod.rs` (the module list and `handle`), `rows.rs` (what the brand keeps),
//! `query.rs` (the questions and their reply types), `reaction.rs` (what it does on an order),
//! `answers.rs` (the answers), `tests.rs`, plus a file per larger piece (`runs.rs`, `roi.rs`, …).
//!
//! Every question is a struct that names its reply ([`crate::query::Question`]), wrapped by its
//! area enum's variant (the variant's name is the wire tag), and listed in `tenant.rs`'s
//! `questions!` so that [`crate::rpc::TenantGateway::ask`] takes it and answers the reply type:
//!
//! ```ignore
//! question! {
//!     /// A customer's points: [`PointsBalance`].
//!     pub struct Balance {
//!         /// Customer phone.
//!         pub phone: String,
//!         /// Bill amount, when known.
//!         pub bill: Option<String>,
//!     } -> PointsBalance;
//! }
//! // LoyaltyQuery::Balance(Balance), and `Balance` in `questions!`
//! let points = gateway.ask(&tenant, loyalty::Balance { phone, bill: None }).await?;
//! ```

use std::sync::Arc;

use crate::reaction::OrderReaction;

pub mod bills;
pub mod branding;
pub mod business;
pub mod consent;
pub mod customers;
pub mod feedback;
pub mod fraud;
pub mod journeys;
pub mod ledger;
pub mod loyalty;
pub mod orders;
pub mod otp;
pub mod receipts;
pub mod redemption;
pub mod referral;
pub mod rewards;
pub mod rights;
pub mod senders;
pub mod stats;
pub mod wallet;
pub mod webhooks;

/// What applying an order runs, in this order. A capability that reacts to orders adds one line.
pub fn order_reactions() -> Vec<Arc<dyn OrderReaction>> {
    vec![
        Arc::new(loyalty::EarnPoints),
        Arc::new(referral::RewardReferral),
        Arc::new(rewards::ConfirmPendingCoupon),
        Arc::new(redemption::ConfirmPendingRedemption),
        Arc::new(journeys::SendWelcome),
        Arc::new(bills::GenerateBill),
        Arc::new(feedback::SendFeedback),
        Arc::new(stats::KeepRollups),
    ]
}
