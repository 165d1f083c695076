//! What every capability answers with: [`QueryError`] (why a query failed) and [`QueryReply`], the
//! reply as it crosses the mailbox. Capabilities build typed replies (structs) and turn them into
//! a [`QueryReply`] with [`reply`]: the [`Reply`] carries the typed value itself, and a caller in
//! the same process takes it back as that type without encoding anything
//! ([`Reply::into_typed`]). A reply becomes JSON only where it leaves the process (the NATS
//! request-reply of [`crate::rpc`]), or when a caller reads it as another shape.

use std::any::Any;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    type Reply: DeserializeOwned + Send + 'static;
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

/// Answer to a query as it crosses the mailbox: the capability's typed reply.
pub type QueryReply = Result<Reply, QueryError>;

/// Answer to a query as JSON: the form it takes over NATS request-reply.
pub type WireReply = Result<Value, QueryError>;

/// A capability's typed reply, kept as its own type until a caller takes it back.
pub struct Reply(Box<dyn Typed>);

/// What [`Reply`] needs of a reply type: JSON for the wire, the value itself for a local caller.
trait Typed: Send {
    fn json(&self) -> Result<Value, serde_json::Error>;
    fn type_name(&self) -> &'static str;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Serialize + Send + 'static> Typed for T {
    fn json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<T>()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

impl Reply {
    /// `value` as a reply.
    pub fn new<T: Serialize + Send + 'static>(value: T) -> Self {
        Reply(Box::new(value))
    }

    /// The reply as JSON (for the wire, or a caller that wants JSON).
    pub fn to_json(&self) -> Result<Value, QueryError> {
        self.0.json().map_err(|e| QueryError::Failed(format!("the reply cannot be encoded: {e}")))
    }

    /// The answer to question `Q`: its reply type, taken back without encoding (from another
    /// node: decoded from JSON). A local reply of another type is a capability answering with the
    /// wrong type: debug builds (every test) stop on it, naming both types; a release build reads it
    /// through JSON, as [`Reply::into_typed`] does.
    pub fn answer_to<Q: Question>(self) -> Result<Q::Reply, QueryError> {
        debug_assert!(
            self.0.as_any().is::<Q::Reply>() || self.0.as_any().is::<Value>(),
            "{} was answered with a {}, not its reply type {}",
            std::any::type_name::<Q>(),
            self.0.type_name(),
            std::any::type_name::<Q::Reply>(),
        );
        self.into_typed()
    }

    /// The reply as `T`: the value itself when it is a `T` (no encoding), else through JSON (a
    /// reply that came over the wire, or a caller reading another shape of it).
    pub fn into_typed<T: DeserializeOwned + 'static>(self) -> Result<T, QueryError> {
        match self.take::<T>()? {
            Ok(typed) => Ok(typed),
            Err(reply) => serde_json::from_value(reply.into_json()?)
                .map_err(|e| QueryError::Failed(format!("unexpected reply shape: {e}"))),
        }
    }

    /// The reply as JSON, taken: a reply that came over the wire is JSON already and is moved out,
    /// not copied.
    pub fn into_json(self) -> Result<Value, QueryError> {
        match self.take::<Value>()? {
            Ok(json) => Ok(json),
            Err(reply) => reply.to_json(),
        }
    }

    /// The value itself when the reply is a `T` (`Ok(Ok(value))`), else the reply back
    /// (`Ok(Err(reply))`).
    fn take<T: 'static>(self) -> Result<Result<T, Self>, QueryError> {
        if !self.0.as_any().is::<T>() {
            return Ok(Err(self));
        }
        match self.0.into_any().downcast::<T>() {
            Ok(typed) => Ok(Ok(*typed)),
            Err(_) => Err(QueryError::Failed("the reply changed type".to_owned())),
        }
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.json() {
            Ok(json) => write!(f, "Reply({json})"),
            Err(_) => f.write_str("Reply(<not encodable>)"),
        }
    }
}

/// A typed answer as a [`QueryReply`].
pub fn reply<T: Serialize + Send + 'static>(answer: Result<T, QueryError>) -> QueryReply {
    answer.map(Reply::new)
}

/// A [`QueryReply`] as it goes over the wire.
pub fn to_wire(answer: QueryReply) -> WireReply {
    answer.and_then(Reply::into_json)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply type that cannot be encoded: taking it back proves nothing was encoded.
    #[derive(Debug, PartialEq, Deserialize)]
    struct Unencodable(u32);

    impl Serialize for Unencodable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("never encoded"))
        }
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
    struct Balance {
        business_id: String,
        balance: i64,
    }

    #[test]
    fn a_local_caller_takes_the_typed_reply_back_without_encoding_it() {
        let answer = reply(Ok(Unencodable(7)));
        assert_eq!(answer.and_then(Reply::into_typed::<Unencodable>).unwrap(), Unencodable(7));
        // the same reply cannot go over the wire, and says so
        let wire = to_wire(reply(Ok(Unencodable(7))));
        assert!(matches!(wire, Err(QueryError::Failed(ref m)) if m.contains("never encoded")), "{wire:?}");
    }

    /// A question whose capability is wrongly made to answer a `u8`.
    struct AskBalance;

    impl Question for AskBalance {
        type Reply = Balance;
    }

    #[test]
    fn a_question_takes_its_own_reply_type_back_and_a_wire_reply_through_json() {
        let typed = Balance { business_id: "outlet-1".into(), balance: 120 };
        let local = reply(Ok(Balance { business_id: "outlet-1".into(), balance: 120 })).unwrap();
        assert_eq!(local.answer_to::<AskBalance>().unwrap(), typed);
        let remote = Reply::new(serde_json::json!({"business_id": "outlet-1", "balance": 120}));
        assert_eq!(remote.answer_to::<AskBalance>().unwrap(), typed);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "not its reply type")]
    fn a_capability_answering_another_type_stops_a_debug_build() {
        let _ = reply(Ok(3u8)).unwrap().answer_to::<AskBalance>();
    }

    #[test]
    fn a_reply_read_as_another_shape_or_from_the_wire_goes_through_json() {
        let typed = Balance { business_id: "outlet-1".into(), balance: 120 };
        let json = reply(Ok(Balance { business_id: "outlet-1".into(), balance: 120 }))
            .and_then(Reply::into_typed::<Value>)
            .unwrap();
        assert_eq!(json, serde_json::json!({"business_id": "outlet-1", "balance": 120}));
        // what a node receives over NATS is JSON: read as the type it was
        let wire = to_wire(reply(Ok(Balance { business_id: "outlet-1".into(), balance: 120 })));
        let received = wire.map(Reply::new);
        assert_eq!(received.and_then(Reply::into_typed::<Balance>).unwrap(), typed);
        let wrong = reply(Ok(3u8)).and_then(Reply::into_typed::<Balance>);
        assert!(
            matches!(wrong, Err(QueryError::Failed(ref m)) if m.starts_with("unexpected reply shape")),
            "{wrong:?}"
        );
        let refused: QueryReply = Err(QueryError::Blocked);
        assert_eq!(to_wire(refused), Err(QueryError::Blocked));
    }
}
