//! Synchronous questions to the node that owns a tenant, by NATS request-reply on
//! `engage.rpc.<partition>.<tenant token>`. Owners subscribe per owned partition (queue group
//! `engage-rpc`, so one answers even while a partition changes hands). Requests and answers are
//! JSON: `{"tenant", "query"}` and the [`WireReply`]. A question asked on the node that owns the
//! tenant is answered with its own reply type, never encoded ([`crate::ask`]).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use engage_streams::subject::{partition_of, token};

use crate::ask::{awaited, to_json, undelivered, Answer, Answered, Asked, Asking, WireReply, NO_OWNER};
use crate::tenant::{QueryError, TenantQuery};

/// The tenants this node runs: what the RPC side needs of the engine (which implements it), so
/// that this module does not depend on the engine that starts it.
#[async_trait::async_trait]
pub trait LocalTenants: Send + Sync {
    /// Whether `partition` is processed here.
    fn owns(&self, partition: u32) -> bool;
    /// Puts a question in the mailbox of the tenant's actor on this node (its port gets the
    /// answer).
    async fn deliver(&self, tenant: &str, asked: Box<dyn Asked>) -> Result<(), QueryError>;
}

/// How long a question waits for its answer unless its asker says otherwise (the HTTP routes'
/// questions).
pub const RPC_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a job's question waits for its answer: a job's question is bulk work (a page of
/// 1,000 customers sent to, a brand's bills), which on a networked store under load takes
/// longer than an interactive question may.
pub const JOB_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest wait an asker on another node may ask for.
const LONGEST_WAIT: Duration = Duration::from_secs(600);

/// How long a partition's RPC subscription stays after the partition stopped here: long enough
/// for a cluster's servers to learn of the unsubscribe, and no longer, since while it stays it is
/// still one of the `engage-rpc` queue group and takes questions it can only answer "not owned
/// here" (asked again, each costing its asker a pause: at 1.5 s, reads of a moving brand took up
/// to 1.6 s).
const RPC_LINGER: Duration = Duration::from_millis(250);

/// Pause before asking again a question that reached no actor (its partition is moving), doubled
/// up to [`MOST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MOST_PAUSE: Duration = Duration::from_millis(400);

#[derive(Serialize, Deserialize)]
struct Request {
    tenant: String,
    query: TenantQuery,
    /// How long the asker waits, in milliseconds (absent from older nodes: [`RPC_TIMEOUT`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    within_ms: Option<u64>,
}

fn subject(partition: u32, tenant: &str) -> String {
    format!("engage.rpc.{partition}.{}", token(tenant))
}

/// Answers questions for one owned partition until `stop` flips.
pub async fn serve_partition(
    client: async_nats::Client,
    partition: u32,
    engine: Arc<dyn LocalTenants>,
    mut stop: watch::Receiver<bool>,
) {
    let mut subscription =
        match client.queue_subscribe(format!("engage.rpc.{partition}.*"), "engage-rpc".to_owned()).await {
            Ok(subscription) => subscription,
            Err(error) => {
                tracing::error!(partition, %error, "cannot subscribe for RPC");
                return;
            }
        };
    // after the stop, the subscription stays a moment (RPC_LINGER): a request NATS still routes
    // here (a cluster learns of an unsubscribe a little later) is answered "not owned here", so
    // its asker tries again at once instead of waiting out its time
    let lingering = tokio::time::sleep(LONGEST_WAIT);
    tokio::pin!(lingering);
    let mut stopping = false;
    loop {
        let message = tokio::select! {
            message = subscription.next() => message,
            _ = stop.wait_for(|s| *s), if !stopping => {
                stopping = true;
                lingering.as_mut().reset(tokio::time::Instant::now() + RPC_LINGER);
                continue;
            }
            () = &mut lingering, if stopping => break,
        };
        let Some(message) = message else { break };
        answer(message, &engine, &client);
    }
    // unsubscribed through a drain: the requests the server sent before it saw the unsubscribe
    // are still answered ("not owned here": their askers try again), none is dropped unanswered
    if subscription.drain().await.is_ok() {
        while let Ok(Some(message)) = tokio::time::timeout(RPC_LINGER, subscription.next()).await {
            answer(message, &engine, &client);
        }
    }
}

/// Answers one RPC request (the owner's answer, or why there is none) on its own task.
fn answer(message: async_nats::Message, engine: &Arc<dyn LocalTenants>, client: &async_nats::Client) {
    let Some(reply_to) = message.reply.clone() else { return };
    let (engine, client) = (engine.clone(), client.clone());
    tokio::spawn(async move {
        let answer: WireReply = match serde_json::from_slice::<Request>(&message.payload) {
            Ok(request) => {
                let within = request.within_ms.map_or(RPC_TIMEOUT, Duration::from_millis).min(LONGEST_WAIT);
                let (port, answer) = tokio::sync::oneshot::channel();
                let asked = request.query.into_asked(port);
                awaited(engine.deliver(&request.tenant, asked), answer, within).await
            }
            Err(error) => Err(QueryError::Invalid(format!("bad RPC request: {error}"))),
        };
        let body = serde_json::to_vec(&answer).unwrap_or_default();
        let _ = client.publish(reply_to, body.into()).await;
    });
}

/// Routes questions to a tenant's owner: this node's engine when it owns the partition, else
/// NATS request-reply.
#[derive(Clone)]
pub struct TenantGateway {
    engine: Option<Arc<dyn LocalTenants>>,
    nats: Option<async_nats::Client>,
    partitions: u32,
}

impl TenantGateway {
    /// A gateway; an ingress-only node has no engine, an embedded node no NATS.
    pub fn new(engine: Option<Arc<dyn LocalTenants>>, nats: Option<async_nats::Client>, partitions: u32) -> Self {
        Self { engine, nats, partitions }
    }

    /// Asks `tenant`'s actor `question` wherever it runs; the answer is the question's own reply
    /// type ([`crate::query::Question::Reply`]): the value itself from an actor of this node,
    /// decoded from JSON when another node answered.
    pub async fn ask<Q: Answer + Into<TenantQuery>>(&self, tenant: &str, question: Q) -> Answered<Q> {
        self.ask_within(tenant, question, RPC_TIMEOUT).await
    }

    /// Like [`TenantGateway::ask`], waiting up to `within` for the answer (the jobs wait
    /// [`JOB_TIMEOUT`]); `Unavailable` after that, while the actor still finishes the question.
    ///
    /// A question that reached no actor because its brand's partition is moving between nodes
    /// ([`undelivered`]) is asked again, after 50 ms and then up to 400 ms apart, until it is
    /// answered or `within` is spent: a read of a moving brand waits for the hand-over (about a
    /// second, `docs/operations.md`, "Planned moves"), not for its whole time.
    pub async fn ask_within<Q: Answer + Into<TenantQuery>>(
        &self,
        tenant: &str,
        question: Q,
        within: Duration,
    ) -> Answered<Q> {
        let deadline = tokio::time::Instant::now() + within;
        let mut pause = FIRST_PAUSE;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let answered = self.ask_once(tenant, question.clone(), left).await;
            match answered {
                Err(error) if undelivered(&error) && tokio::time::Instant::now() + pause < deadline => {
                    metrics::counter!("engage_questions_asked_again_total").increment(1);
                    tracing::debug!(tenant, %error, "the brand's partition is moving: asking again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(MOST_PAUSE);
                }
                answered => return answered,
            }
        }
    }

    /// One try of [`TenantGateway::ask_within`].
    async fn ask_once<Q: Answer + Into<TenantQuery>>(
        &self,
        tenant: &str,
        question: Q,
        within: Duration,
    ) -> Answered<Q> {
        let partition = partition_of(tenant, self.partitions);
        if let Some(engine) = &self.engine {
            if engine.owns(partition) || self.nats.is_none() {
                let (port, answer) = tokio::sync::oneshot::channel();
                return awaited(engine.deliver(tenant, Asking::local(question, port)), answer, within).await;
            }
        }
        let json = self.ask_remote(tenant, partition, question.into(), within).await?;
        serde_json::from_value(json).map_err(|e| QueryError::Failed(format!("unexpected reply shape: {e}")))
    }

    /// Asks `tenant`'s actor wherever it runs; the answer as JSON.
    pub async fn ask_json<Q: Answer + Into<TenantQuery>>(&self, tenant: &str, question: Q) -> WireReply {
        to_json(self.ask(tenant, question).await)
    }

    /// Asks the owner of `partition` (another node) over NATS.
    async fn ask_remote(&self, tenant: &str, partition: u32, query: TenantQuery, within: Duration) -> WireReply {
        let Some(client) = &self.nats else {
            return Err(QueryError::Unavailable("no engine and no NATS".to_owned()));
        };
        let within_ms = u64::try_from(within.as_millis()).unwrap_or(u64::MAX);
        let body = serde_json::to_vec(&Request { tenant: tenant.to_owned(), query, within_ms: Some(within_ms) })
            .map_err(|e| QueryError::Invalid(e.to_string()))?;
        // not the client's own request time-out (async-nats' default is 10 s): the reply is
        // awaited here, up to `within`
        let request = client
            .send_request(subject(partition, tenant), async_nats::Request::new().payload(body.into()).timeout(None));
        match tokio::time::timeout(within, request).await {
            Ok(Ok(message)) => serde_json::from_slice::<WireReply>(&message.payload)
                .unwrap_or_else(|e| Err(QueryError::Failed(format!("bad RPC answer: {e}")))),
            Ok(Err(error)) => Err(QueryError::Unavailable(format!("{NO_OWNER} {partition}: {error}"))),
            Err(_) => {
                Err(QueryError::Unavailable(format!("the owner of partition {partition} did not answer in time")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::customers::Details;

    /// Answers every question after `delay`, with an error that names it.
    struct Slow {
        delay: Duration,
    }

    #[async_trait::async_trait]
    impl LocalTenants for Slow {
        fn owns(&self, _partition: u32) -> bool {
            true
        }

        async fn deliver(&self, _tenant: &str, asked: Box<dyn Asked>) -> Result<(), QueryError> {
            let delay = self.delay;
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                asked.refuse(QueryError::Invalid("answered late".to_owned()));
            });
            Ok(())
        }
    }

    async fn connect(request_timeout: Duration) -> async_nats::Client {
        let url = std::env::var("ENGAGE_TEST_NATS_URL")
            .expect("ENGAGE_TEST_NATS_URL is not set: run scripts/test.sh, which starts nats-server -js");
        async_nats::ConnectOptions::new().request_timeout(Some(request_timeout)).connect(url).await.expect("connects")
    }

    /// A job waits for a slow answer from another node as long as it says, whatever the NATS
    /// client's own request time-out, and the owner waits as long as the asker does.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_remote_question_waits_as_long_as_its_asker_says() {
        let owner = connect(Duration::from_secs(10)).await;
        let (stop, stop_rx) = watch::channel(false);
        let engine: Arc<dyn LocalTenants> = Arc::new(Slow { delay: Duration::from_millis(600) });
        // a partition number of its own: tests sharing the server do not answer each other
        let partition = 7_000 + std::process::id() % 1_000;
        let served = tokio::spawn(serve_partition(owner.clone(), partition, engine, stop_rx));
        // the asker's client gives up on requests after 100 ms unless told otherwise
        let asker = TenantGateway::new(None, Some(connect(Duration::from_millis(100)).await), 1);
        let question = || Details { phone: "9000000001".to_owned() };
        let tenant = "brand-rpc";
        let body = |within_ms: Option<u64>| {
            serde_json::to_vec(&Request { tenant: tenant.to_owned(), query: question().into(), within_ms }).unwrap()
        };
        // wait until the owner's subscription is in place
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while owner.request(subject(partition, tenant), body(None).into()).await.is_err() {
            assert!(std::time::Instant::now() < deadline, "the owner never subscribed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        let answer = asker.ask_remote(tenant, partition, question().into(), Duration::from_secs(3)).await;
        assert!(matches!(answer, Err(QueryError::Invalid(ref m)) if m == "answered late"), "{answer:?}");
        let answer = asker.ask_remote(tenant, partition, question().into(), Duration::from_millis(200)).await;
        assert!(matches!(answer, Err(QueryError::Unavailable(ref m)) if m.contains("in time")), "{answer:?}");

        // the owner gives up when the asker would: it answers that it did not answer in time
        let reply = owner.request(subject(partition, tenant), body(Some(150)).into()).await.unwrap();
        let reply: WireReply = serde_json::from_slice(&reply.payload).unwrap();
        assert!(matches!(reply, Err(QueryError::Unavailable(ref m)) if m.contains("in time")), "{reply:?}");
        // an older node's question (no wait given) waits the default
        let reply = owner.request(subject(partition, tenant), body(None).into()).await.unwrap();
        let reply: WireReply = serde_json::from_slice(&reply.payload).unwrap();
        assert!(matches!(reply, Err(QueryError::Invalid(_))), "{reply:?}");

        let _ = stop.send(true);
        served.await.unwrap();
    }
}
