//! Baseline for BENCHMARKS.md: raw JetStream publishes with awaited acks, as fast as `concurrency`
//! publishers can go, of an envelope-sized JSON payload to a scratch stream. Prints
//! `msgs_per_sec=<n>`. Usage: `jetstream-publish NATS_URL SECONDS CONCURRENCY`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "nats://127.0.0.1:4222".to_owned());
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let concurrency: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(32);
    let client = async_nats::connect(&url).await?;
    let jetstream = async_nats::jetstream::new(client);
    let _ = jetstream.delete_stream("BENCH_RAW").await;
    jetstream
        .create_stream(async_nats::jetstream::stream::Config {
            name: "BENCH_RAW".to_owned(),
            subjects: vec!["bench.raw.>".to_owned()],
            storage: async_nats::jetstream::stream::StorageType::File,
            ..Default::default()
        })
        .await?;
    let payload = bytes::Bytes::from(
        serde_json::json!({
            "id": "0123456789abcdef0123456789abcdef", "source": "platform", "source_id": 1, "kind": "order",
            "tenant": "brand-1", "received_at": "2026-11-21T10:00:00.000Z", "trace_id": "0b5f6c1e-8d0a-4c4e-9a59-3f3f6a1d2c11",
            "payload": {"parentBusinessId": "brand-1", "businessId": "o1", "orderId": "1", "customer": {"phone": "9800000001"},
                        "amount": 12.5, "orderTime": "2026-11-21 10:00:00"}
        })
        .to_string(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|i| {
            let (jetstream, payload, stop, sent) = (jetstream.clone(), payload.clone(), stop.clone(), sent.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let ack = jetstream.publish(format!("bench.raw.{}", i % 64), payload.clone()).await;
                    if let Ok(ack) = ack {
                        if ack.await.is_ok() {
                            sent.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = task.await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!("msgs_per_sec={:.0}", sent.load(Ordering::Relaxed) as f64 / elapsed);
    let _ = jetstream.delete_stream("BENCH_RAW").await;
    Ok(())
}
