//! What every capability answers with: [`QueryError`] (why a question failed), the [`Question`]
//! trait naming each question's reply type, and the macros that declare questions
//! ([`question!`]) and answer them ([`answers!`]). How a question travels to its actor and back
//! is [`crate::ask`].

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use engage_storage::StoreError;

use crate::domain::fraud::TransitionRefused;
use crate::domain::loyalty::RedeemError;
use crate::domain::wallet::InsufficientBalance;

/// Why a query failed.
#[derive(Clone, Debug, Serialize, Deserialize, thiserror::Error, PartialEq, Eq, schemars::JsonSchema)]
pub enum QueryError {
    /// No such customer.
    #[error("not found")]
    NotFound,
    /// No such thing of another kind (the text names it: "reward r-1").
    #[error("{0} not found")]
    Missing(String),
    /// The thing to create exists already (a tag, a widget of that kind): the text says which.
    #[error("{0}")]
    Duplicate(String),
    /// The tenant cannot answer now (restarting, not owned here, time-out).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The request cannot be processed.
    #[error("invalid: {0}")]
    Invalid(String),
    /// The store failed.
    #[error("failed: {0}")]
    Failed(String),
    /// A redemption was refused.
    #[error("refused: {0}")]
    Redeem(RedeemError),
    /// The customer is blocked (blocklist or a block by staff): loyalty actions are denied.
    #[error("the customer is blocked")]
    Blocked,
    /// A velocity limit was breached: a flag was raised and the action denied.
    #[error("{fraud_type} breached; flag {flag_id} raised")]
    Fraud {
        /// Which limit.
        fraud_type: String,
        /// The flag raised (or already open).
        flag_id: String,
    },
    /// A flag transition was refused.
    #[error("{0}")]
    Transition(TransitionRefused),
    /// The wallet cannot pay for the send.
    #[error("{0}")]
    Insufficient(InsufficientBalance),
    /// The customer did not consent to marketing on the channel: nothing was queued or debited.
    #[error("the customer is unsubscribed from marketing on {0:?}")]
    NoConsent(crate::domain::wallet::Channel),
    /// The brand's own sender on the channel would refuse the send (an SMS template without its
    /// DLT id on a DLT gateway): nothing was queued or debited. The text says why.
    #[error("the brand's sender cannot send this: {0}")]
    Unsendable(String),
    /// A one-time password is missing, wrong, expired or used up.
    #[error("one-time password: {0}")]
    Otp(String),
}

impl From<StoreError> for QueryError {
    fn from(error: StoreError) -> Self {
        QueryError::Failed(error.to_string())
    }
}

/// A question to a tenant actor that names what it is answered with: asked through
/// [`crate::rpc::TenantGateway::ask`], it answers `Result<Self::Reply, QueryError>` and the caller
/// picks no type. Each capability declares its questions' replies beside them (`query.rs`).
pub trait Question {
    /// The answer.
    type Reply: Serialize + DeserializeOwned + Send + 'static;
}

/// Declares a question: the struct (its fields are what goes on the wire, tagged by its area
/// enum's variant) and the [`Question`] impl naming its reply:
///
/// ```ignore
/// question! {
///     /// A customer's points: [`PointsBalance`].
///     pub struct Balance {
///         /// Customer phone.
///         pub phone: String,
///     } -> PointsBalance;
/// }
/// ```
macro_rules! question {
    ($(#[$meta:meta])* pub struct $name:ident {
        $($(#[$field_meta:meta])* pub $field:ident : $ty:ty),* $(,)?
    } -> $reply:ty;) => {
        $(#[$meta])*
        #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty),*
        }

        impl $crate::query::Question for $name {
            type Reply = $reply;
        }
    };
}
pub(crate) use question;

/// Answers each question of an area in the actor's turn: one [`crate::ask::Answer`] impl per
/// question, whose body must give `Result<Q::Reply, QueryError>` (checked by the compiler).
///
/// ```ignore
/// answers! {
///     (tenant, _reactions) let now = Utc::now();
///     Balance: Balance { phone } => balance(tenant, &phone, now).await,
///     Ledger: question => ledger(tenant, question).await,
/// }
/// ```
///
/// `tenant` (and the reactions, for the few questions that apply an order) are the names the
/// bodies use; the optional `let` before the first question runs before each answer; each
/// question is written `Type: pattern => body`, then optionally `; ahead(question, tenant_id) =>
/// keys` (rows read before the question reaches the actor) and `; beside(tenant) => future` (a
/// long read of committed rows, answered beside the actor: the body is then never run in its turn).
macro_rules! answers {
    (($tenant:ident, $reactions:pat) let $prelude:pat = $value:expr;
        $($ty:ty : $pattern:pat => $body:expr
            $(; ahead($asked:ident, $id:ident) => $keys:expr)?
            $(; beside($beside_tenant:ident) => $beside:expr)?),* $(,)?) => {$(
        impl $crate::ask::Answer for $ty {
            #[allow(unused_variables)]
            fn answer<'a>(
                self,
                $tenant: &'a mut $crate::tenant_core::Tenant,
                $reactions: &'a $crate::reaction::Reactions,
            ) -> futures::future::BoxFuture<'a, $crate::ask::Answered<Self>> {
                Box::pin(async move {
                    let $prelude = $value;
                    let $pattern = self;
                    let answer: $crate::ask::Answered<Self> = $body;
                    answer
                })
            }
            $(
            fn reads_ahead(&self, $id: &str) -> $crate::ask::ReadKeys {
                let $asked = self;
                $crate::ask::ReadKeys($keys)
            }
            )?
            $(
            const BESIDE: bool = { let _ = stringify!($beside_tenant); true };

            fn beside(
                self,
                $beside_tenant: &$crate::tenant_core::Tenant,
            ) -> Result<futures::future::BoxFuture<'static, $crate::ask::Answered<Self>>, Self> {
                let $pattern = self;
                Ok(Box::pin($beside))
            }
            )?
        }
    )*};
    (($tenant:ident, $reactions:pat) $($rest:tt)*) => {
        $crate::query::answers! { ($tenant, $reactions) let () = (); $($rest)* }
    };
}
pub(crate) use answers;

/// Page `page` (from 1; 0 counts as 1) of `items`, `size` a page.
pub fn page_of<T>(items: Vec<T>, page: u64, size: usize) -> Vec<T> {
    items.into_iter().skip((page.max(1) as usize - 1).saturating_mul(size)).take(size).collect()
}

/// One page of a list: `{data, total, page, page_size}`.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Page<T> {
    /// The items of the page.
    pub data: Vec<T>,
    /// All items.
    pub total: u64,
    /// Page, from 1.
    pub page: u64,
    /// Per page.
    pub page_size: u64,
}

impl<T> Page<T> {
    /// Page `page` (from 1) of `items`, `size` a page.
    pub fn of(items: Vec<T>, page: u64, size: usize) -> Self {
        let total = items.len() as u64;
        let page = page.max(1);
        Self { data: page_of(items, page, size), total, page, page_size: size as u64 }
    }
}

/// Whether IST day `day` (`YYYY-MM-DD`) is within `start..=end` (each end open when absent).
pub fn within(day: &str, start: Option<&str>, end: Option<&str>) -> bool {
    start.is_none_or(|s| day >= s) && end.is_none_or(|e| day <= e)
}
