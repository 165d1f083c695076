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

use crate::ask::{awaited, to_json, Answer, Answered, Asked, Asking, WireReply};
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

/// Longest time an RPC may take.
pub const RPC_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Serialize, Deserialize)]
struct Request {
    tenant: String,
    query: TenantQuery,
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
    loop {
        let message = tokio::select! {
            message = subscription.next() => message,
            _ = stop.wait_for(|s| *s) => break,
        };
        let Some(message) = message else { break };
        let Some(reply_to) = message.reply.clone() else { continue };
        let engine = engine.clone();
        let client = client.clone();
        tokio::spawn(async move {
            let answer: WireReply = match serde_json::from_slice::<Request>(&message.payload) {
                Ok(request) => {
                    let (port, answer) = tokio::sync::oneshot::channel();
                    let asked = request.query.into_asked(port);
                    awaited(engine.deliver(&request.tenant, asked), answer, RPC_TIMEOUT).await
                }
                Err(error) => Err(QueryError::Invalid(format!("bad RPC request: {error}"))),
            };
            let body = serde_json::to_vec(&answer).unwrap_or_default();
            let _ = client.publish(reply_to, body.into()).await;
        });
    }
    let _ = subscription.unsubscribe().await;
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
        let partition = partition_of(tenant, self.partitions);
        if let Some(engine) = &self.engine {
            if engine.owns(partition) || self.nats.is_none() {
                let (port, answer) = tokio::sync::oneshot::channel();
                return awaited(engine.deliver(tenant, Asking::local(question, port)), answer, RPC_TIMEOUT).await;
            }
        }
        let json = self.ask_remote(tenant, partition, question.into()).await?;
        serde_json::from_value(json).map_err(|e| QueryError::Failed(format!("unexpected reply shape: {e}")))
    }

    /// Asks `tenant`'s actor wherever it runs; the answer as JSON.
    pub async fn ask_json<Q: Answer + Into<TenantQuery>>(&self, tenant: &str, question: Q) -> WireReply {
        to_json(self.ask(tenant, question).await)
    }

    /// Asks the owner of `partition` (another node) over NATS.
    async fn ask_remote(&self, tenant: &str, partition: u32, query: TenantQuery) -> WireReply {
        let Some(client) = &self.nats else {
            return Err(QueryError::Unavailable("no engine and no NATS".to_owned()));
        };
        let body = serde_json::to_vec(&Request { tenant: tenant.to_owned(), query })
            .map_err(|e| QueryError::Invalid(e.to_string()))?;
        let request = client.request(subject(partition, tenant), body.into());
        match tokio::time::timeout(RPC_TIMEOUT, request).await {
            Ok(Ok(message)) => serde_json::from_slice::<WireReply>(&message.payload)
                .unwrap_or_else(|e| Err(QueryError::Failed(format!("bad RPC answer: {e}")))),
            Ok(Err(error)) => {
                Err(QueryError::Unavailable(format!("no owner answered for partition {partition}: {error}")))
            }
            Err(_) => {
                Err(QueryError::Unavailable(format!("the owner of partition {partition} did not answer in time")))
            }
        }
    }
}
