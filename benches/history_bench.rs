//! Figures of BENCHMARKS.md for issue 57: a regular's 500th order against a new customer's 5th,
//! side by side in one run, driven by `scripts/bench-history.sh`.
//!
//! `history-bench DIR REGULARS ROUNDS [HISTORY=495]`: one brand on the embedded bus and store (the
//! engine with every order reaction). REGULARS customers place HISTORY orders each and ROUNDS groups
//! of REGULARS customers place 4 each (seeded through the engine, as production leaves them). Then,
//! for each round, alternating which goes first: every regular's next order (with the default their
//! 496th … 500th), and the next group's 5th orders, each batch published while the engine owns no
//! partition and then timed from taking the partitions until its last order is applied. Prints
//! each batch's microseconds per order.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use futures::StreamExt;
use serde_json::json;

use engage_actors::capabilities::customers;
use engage_actors::{Engine, EngineConfig, TenantGateway};
use engage_storage::{EmbeddedStore, Store};
use engage_streams::bus::EmbeddedBus;
use engage_streams::{Bus, Envelope, EventKind};

const BRAND: &str = "history-brand";
const PARTITIONS: u32 = 4;

fn order(phone: &str, order_id: &str, minute: u64) -> Arc<Envelope> {
    let time = format!(
        "2026-{:02}-{:02} {:02}:{:02}:00",
        1 + minute / 40_320 % 12,
        1 + minute / 1440 % 28,
        minute / 60 % 24,
        minute % 60
    );
    let payload = json!({"parentBusinessId": BRAND, "businessId": "outlet-1", "orderId": order_id,
        "customer": {"name": "Regular", "phone": phone}, "amount": 120.5, "orderTime": time});
    Arc::new(Envelope::new(EventKind::Order, "platform", 1, BRAND, "bench", payload))
}

struct Bench {
    bus: Arc<dyn Bus>,
    engine: Arc<Engine>,
    gateway: TenantGateway,
    batches: u64,
}

impl Bench {
    /// Publishes `orders` and a last one while no partition is owned, then takes every partition
    /// and returns the time until the last one is applied (a brand's orders apply in order).
    async fn time(&mut self, orders: Vec<Arc<Envelope>>) -> anyhow::Result<Duration> {
        self.engine.set_owned(&BTreeSet::new()).await;
        let published = futures::stream::iter(orders.iter().map(|e| self.bus.publish(e))).buffer_unordered(64);
        let failures = published.filter(|r| std::future::ready(r.is_err())).count().await;
        if failures > 0 {
            bail!("{failures} publishes failed");
        }
        self.batches += 1;
        let sentinel = format!("99{:08}", self.batches);
        self.bus.publish(&order(&sentinel, &format!("last-{}", self.batches), 0)).await?;
        let started = Instant::now();
        self.engine.set_owned(&(0..PARTITIONS).collect::<BTreeSet<u32>>()).await;
        loop {
            let question = customers::Details { phone: sentinel.clone() };
            if let Ok(view) = self.gateway.ask_json(BRAND, question).await {
                if view["total_orders"] == 1 {
                    return Ok(started.elapsed());
                }
            }
            if started.elapsed() > Duration::from_secs(900) {
                bail!("not processed in 900 s");
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

fn phone(group: u64, n: u64) -> String {
    format!("9{group:03}{n:06}")
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |n: usize| -> anyhow::Result<u64> {
        args.get(n)
            .and_then(|a| a.parse().ok())
            .with_context(|| format!("usage: history-bench DIR REGULARS ROUNDS [HISTORY] (argument {n})"))
    };
    let dir = args.first().context("usage: history-bench DIR REGULARS ROUNDS [HISTORY]")?;
    let (regulars, rounds) = (number(1)?, number(2)?);
    let history = if args.len() > 3 { number(3)? } else { 495 };
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(std::path::Path::new(dir))?);
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::new(store.clone(), PARTITIONS));
    let config = EngineConfig {
        partitions: PARTITIONS,
        passivate_after: Duration::from_secs(3600),
        fault_panic_order_id: None,
        fault_poison_order_id: None,
        max_deliveries: 5,
        services: engage_actors::Services::default(),
        cached_customers_max: engage_actors::customer_cache::NODE_CACHED_CUSTOMERS_MAX,
    };
    let engine = Engine::new(store, bus.clone(), None, config);
    let gateway = TenantGateway::new(Some(engine.clone()), None, PARTITIONS);
    let mut bench = Bench { bus, engine, gateway, batches: 0 };

    // seed: the regulars' first HISTORY orders (group 0), each new customer group's first 4
    let mut seed = Vec::new();
    for k in 0..history {
        for n in 0..regulars {
            seed.push(order(&phone(0, n), &format!("r{n}-{k}"), k * 60 + n % 60));
        }
    }
    for group in 1..=rounds {
        for k in 0..4 {
            for n in 0..regulars {
                seed.push(order(&phone(group, n), &format!("g{group}-{n}-{k}"), k * 60 + n % 60));
            }
        }
    }
    let seeded = seed.len();
    let took = bench.time(seed).await?;
    println!("seed orders={seeded} seconds={:.1}", took.as_secs_f64());

    for round in 1..=rounds {
        let regular_batch: Vec<_> = (0..regulars)
            .map(|n| order(&phone(0, n), &format!("r{n}-{}", history + round - 1), (history + round - 1) * 60 + n % 60))
            .collect();
        let new_batch: Vec<_> =
            (0..regulars).map(|n| order(&phone(round, n), &format!("g{round}-{n}-4"), 4 * 60 + n % 60)).collect();
        let mut figures = Vec::new();
        for regular in if round % 2 == 1 { [true, false] } else { [false, true] } {
            let batch = if regular { regular_batch.clone() } else { new_batch.clone() };
            let took = bench.time(batch).await?;
            let nth = if regular { history + round } else { 5 };
            figures.push((nth, took.as_micros() as f64 / regulars as f64));
        }
        figures.sort_by_key(|(nth, _)| *nth);
        println!("round {round} order_5th_us={:.1} order_{}th_us={:.1}", figures[0].1, figures[1].0, figures[1].1);
    }
    Ok(())
}
