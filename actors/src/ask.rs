//! How a question reaches a tenant actor and its answer comes back, typed end to end.
//!
//! A question `Q` is answered by its [`Answer`] impl (written with [`crate::query::answers!`]
//! beside the capability's other code), whose future's output is `Result<Q::Reply, QueryError>`:
//! the compiler checks that each question is answered with its own reply type. Asked on the
//! node that owns the brand, the question travels to the actor together with a typed
//! [`Port`] (`Asking<Q>`) and the reply comes back as the value itself; asked from another node,
//! it arrives as JSON ([`crate::tenant::TenantQuery`]), becomes the same `Asking<Q>` with a wire
//! port, and only that port encodes the reply.

use std::panic::AssertUnwindSafe;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::keys::Key;
use crate::query::{QueryError, Question};
use crate::reaction::Reactions;
use crate::tenant_core::Tenant;

/// What question `Q` is answered with: its reply, or why not.
pub type Answered<Q> = Result<<Q as Question>::Reply, QueryError>;

/// Answer to a question as JSON: the form it takes over NATS request-reply.
pub type WireReply = Result<Value, QueryError>;

/// A question a brand's actor answers. Implemented for every question by
/// [`crate::query::answers!`]; its methods are the actor's side (a caller asks through
/// [`crate::TenantGateway::ask`]).
pub trait Answer: Question + Clone + Send + Sized + 'static {
    /// The answer, in the actor's turn.
    fn answer<'a>(self, tenant: &'a mut Tenant, reactions: &'a Reactions) -> BoxFuture<'a, Answered<Self>>;

    /// Rows the answer reads first, read before the question reaches the actor
    /// ([`crate::read_ahead`]).
    fn reads_ahead(&self, _tenant: &str) -> ReadKeys {
        ReadKeys::default()
    }

    /// Whether [`Answer::beside`] answers this question beside the actor.
    const BESIDE: bool = false;

    /// A long read of committed rows is answered beside the actor, never holding up the brand's
    /// writes: the future to run there, or the question back to answer in the actor's turn.
    fn beside(self, _tenant: &Tenant) -> Result<BoxFuture<'static, Answered<Self>>, Self> {
        Err(self)
    }
}

/// Rows a question reads first ([`Answer::reads_ahead`]).
#[derive(Default)]
pub struct ReadKeys(pub(crate) Vec<Key>);

/// Where a question's answer goes.
pub(crate) enum Port<R> {
    /// A caller on this node: the value itself.
    Local(oneshot::Sender<Result<R, QueryError>>),
    /// Another node (NATS request-reply): the value's JSON.
    Wire(oneshot::Sender<WireReply>),
}

impl<R: Serialize> Port<R> {
    fn send(self, answer: Result<R, QueryError>) {
        match self {
            Port::Local(tx) => {
                let _ = tx.send(answer);
            }
            Port::Wire(tx) => {
                let _ = tx.send(to_json(answer));
            }
        }
    }
}

/// A typed answer as it goes over the wire.
pub fn to_json<R: Serialize>(answer: Result<R, QueryError>) -> WireReply {
    answer.and_then(|reply| {
        serde_json::to_value(reply).map_err(|e| QueryError::Failed(format!("the reply cannot be encoded: {e}")))
    })
}

/// A question with where its answer goes, as it waits in the actor's mailbox. Only
/// `Asking<Q>` implements it, so the answer a port takes is always its question's reply.
pub trait Asked: Send {
    /// Rows to read before the question reaches the actor.
    fn reads_ahead(&self, tenant: &str) -> Vec<Key>;
    /// Answers with `error` without asking.
    fn refuse(self: Box<Self>, error: QueryError);
    /// Starts the answer beside the actor when the question is answered there (`None`), else
    /// gives the question back.
    fn beside(self: Box<Self>, tenant: &Tenant) -> Option<Box<dyn Asked>>;
    /// The answer, in the actor's turn (a panic answers `Failed` and makes the actor forget its
    /// cached state), sealed with its port.
    fn answer<'a>(self: Box<Self>, tenant: &'a mut Tenant, reactions: &'a Reactions) -> BoxFuture<'a, Sealed>;
}

/// Question `Q` and where its answer goes.
pub(crate) struct Asking<Q: Answer> {
    question: Q,
    port: Port<Q::Reply>,
}

impl<Q: Answer> Asking<Q> {
    /// `question`, answered to a caller on this node.
    pub(crate) fn local(question: Q, port: oneshot::Sender<Answered<Q>>) -> Box<dyn Asked> {
        Box::new(Asking { question, port: Port::Local(port) })
    }

    /// `question`, answered as JSON (it came over the wire).
    pub(crate) fn wire(question: Q, port: oneshot::Sender<WireReply>) -> Box<dyn Asked> {
        Box::new(Asking { question, port: Port::Wire(port) })
    }
}

impl<Q: Answer> Asked for Asking<Q> {
    fn reads_ahead(&self, tenant: &str) -> Vec<Key> {
        self.question.reads_ahead(tenant).0
    }

    fn refuse(self: Box<Self>, error: QueryError) {
        self.port.send(Err(error));
    }

    fn beside(self: Box<Self>, tenant: &Tenant) -> Option<Box<dyn Asked>> {
        // most questions are answered in the actor's turn: the box goes on as it is
        if !Q::BESIDE {
            return Some(self);
        }
        let Asking { question, port } = *self;
        match question.beside(tenant) {
            Ok(answer) => {
                tokio::spawn(async move { port.send(answer.await) });
                None
            }
            Err(question) => Some(Box::new(Asking { question, port })),
        }
    }

    fn answer<'a>(self: Box<Self>, tenant: &'a mut Tenant, reactions: &'a Reactions) -> BoxFuture<'a, Sealed> {
        let Asking { question, port } = *self;
        Box::pin(async move {
            let answered = AssertUnwindSafe(question.answer(&mut *tenant, reactions)).catch_unwind().await;
            let answer = match answered {
                Ok(answer) => answer,
                Err(panic) => Err(QueryError::Failed(format!("panicked: {}", panicked(tenant, &*panic)))),
            };
            Sealed(Box::new(move |failure| match failure {
                None => port.send(answer),
                Some(error) => port.send(Err(error)),
            }))
        })
    }
}

/// An answer sealed with its port, sent once the writes it staged are durable.
pub struct Sealed(Box<dyn FnOnce(Option<QueryError>) + Send>);

impl Sealed {
    /// Sends the answer.
    pub(crate) fn send(self) {
        (self.0)(None)
    }

    /// Sends `error` instead of the answer (its writes did not reach the disk).
    pub(crate) fn fail(self, error: QueryError) {
        (self.0)(Some(error))
    }
}

/// Why a question got no answer when its actor stopped with the question still in its mailbox
/// (its partition was released): it never ran ([`undelivered`]).
pub(crate) const STOPPED_BEFORE_ANSWERING: &str = "tenant actor stopped before answering";
/// Why a question was not delivered: its partition is not processed on the node it reached.
pub(crate) const NOT_OWNED_HERE: &str = "not owned by this node";
/// Why a question was not delivered: its partition's supervisor is stopping.
pub(crate) const PARTITION_STOPPING: &str = "partition stopping";
/// The start of the error of a request no node answered (nobody subscribed for its partition).
pub(crate) const NO_OWNER: &str = "no owner answered for partition";

/// Whether `error` says the question reached no actor (its partition was not owned where it
/// went, was stopping, or nobody subscribed for it): asking again cannot run it twice
/// ([`crate::rpc::TenantGateway::ask_within`] does).
pub fn undelivered(error: &QueryError) -> bool {
    match error {
        QueryError::Unavailable(why) => [NOT_OWNED_HERE, PARTITION_STOPPING, NO_OWNER, STOPPED_BEFORE_ANSWERING]
            .iter()
            .any(|reason| why.contains(reason)),
        _ => false,
    }
}

/// The answer on `port` once `delivered` put its question in the actor's mailbox, within
/// `timeout` (else `Unavailable`).
pub(crate) async fn awaited<R>(
    delivered: impl std::future::Future<Output = Result<(), QueryError>>,
    port: oneshot::Receiver<Result<R, QueryError>>,
    timeout: std::time::Duration,
) -> Result<R, QueryError> {
    let answered = async {
        delivered.await?;
        port.await.unwrap_or_else(|_| Err(QueryError::Unavailable(STOPPED_BEFORE_ANSWERING.to_owned())))
    };
    tokio::time::timeout(timeout, answered)
        .await
        .unwrap_or_else(|_| Err(QueryError::Unavailable("tenant actor did not answer in time".to_owned())))
}

/// A panic while handling a message: the brand's cached state may be half-changed, so it is
/// forgotten (rows are read again from the store); the panic is counted like an actor failure
/// (`engage_actor_failures_total`, `engage_actor_panics_total`). Answers the failure's text.
/// The panic's message (counted and logged).
pub(crate) fn panicked(tenant: &mut Tenant, panic: &(dyn std::any::Any + Send)) -> String {
    tenant.forget_all();
    metrics::counter!("engage_actor_failures_total").increment(1);
    metrics::counter!("engage_actor_panics_total").increment(1);
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    tracing::error!(tenant = %tenant.id, panic = %text, "a message panicked; the tenant actor forgot its cached state and goes on");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply type that cannot be encoded: a local answer proves nothing was encoded.
    #[derive(Debug, PartialEq)]
    struct Unencodable(u32);

    impl Serialize for Unencodable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("never encoded"))
        }
    }

    #[tokio::test]
    async fn a_local_port_takes_the_value_itself_and_a_wire_port_its_json() {
        let (tx, rx) = oneshot::channel();
        Port::Local(tx).send(Ok(Unencodable(7)));
        assert_eq!(rx.await.unwrap(), Ok(Unencodable(7)));
        let (tx, rx) = oneshot::channel();
        Port::Wire(tx).send(Ok(Unencodable(7)));
        let wire = rx.await.unwrap();
        assert!(matches!(wire, Err(QueryError::Failed(ref m)) if m.contains("never encoded")), "{wire:?}");
        let (tx, rx) = oneshot::channel();
        Port::Wire(tx).send(Ok(serde_json::json!({"balance": 120})));
        assert_eq!(rx.await.unwrap(), Ok(serde_json::json!({"balance": 120})));
        let (tx, rx) = oneshot::channel::<WireReply>();
        Port::<u8>::Wire(tx).send(Err(QueryError::Blocked));
        assert_eq!(rx.await.unwrap(), Err(QueryError::Blocked));
    }

    #[tokio::test]
    async fn an_answer_that_never_comes_is_unavailable_not_a_hang() {
        let (tx, rx) = oneshot::channel::<Result<u8, QueryError>>();
        drop(tx);
        let answer = awaited(async { Ok(()) }, rx, std::time::Duration::from_secs(1)).await;
        assert!(matches!(answer, Err(QueryError::Unavailable(ref m)) if m.contains("stopped")), "{answer:?}");
        let (_tx, rx) = oneshot::channel::<Result<u8, QueryError>>();
        let answer = awaited(async { Ok(()) }, rx, std::time::Duration::from_millis(20)).await;
        assert!(matches!(answer, Err(QueryError::Unavailable(ref m)) if m.contains("in time")), "{answer:?}");
        let (_tx, rx) = oneshot::channel::<Result<u8, QueryError>>();
        let refused = awaited(async { Err(QueryError::Blocked) }, rx, std::time::Duration::from_secs(1)).await;
        assert_eq!(refused, Err(QueryError::Blocked));
    }
}
