//! The replica count of the JetStream streams and buckets engage creates (the store and lease
//! buckets, the bus's streams): set when one is created, reconciled when an existing one differs.

use async_nats::jetstream::Context;

/// Makes stream `name` (a bucket `B` is the stream `KV_B`) keep `replicas` copies when it has
/// another count, with a log line saying so. A change the servers refuse (fewer servers than
/// replicas, a server down) is logged as an error and the stream keeps its count: engage runs on
/// it as it is, and the next start tries again.
pub async fn reconcile(jetstream: &Context, name: &str, replicas: usize) {
    let mut stream = match jetstream.get_stream(name).await {
        Ok(stream) => stream,
        Err(error) => {
            tracing::warn!(stream = name, %error, "cannot read the stream to check its replica count");
            return;
        }
    };
    let config = match stream.info().await {
        Ok(info) => info.config.clone(),
        Err(error) => {
            tracing::warn!(stream = name, %error, "cannot read the stream to check its replica count");
            return;
        }
    };
    let had = config.num_replicas.max(1);
    if had == replicas {
        return;
    }
    let mut wanted = config;
    wanted.num_replicas = replicas;
    match jetstream.update_stream(wanted).await {
        Ok(_) => tracing::info!(
            stream = name,
            from = had,
            to = replicas,
            "stream replica count changed to the setting (ENGAGE_NATS_REPLICAS / ENGAGE_NATS_REPLICAS_BY_NAME)"
        ),
        Err(error) => tracing::error!(
            stream = name,
            from = had,
            to = replicas,
            %error,
            "the servers refused the stream's new replica count; it keeps its current one"
        ),
    }
}
