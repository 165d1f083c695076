//! Figures of BENCHMARKS.md for `/stats` (issue 12), driven by `scripts/bench-stats.sh`.
//!
//! - `stats-bench seed DIR BRAND ORDERS OUTLETS`: writes one year (the 365 IST days up to
//!   2026-11-22) of a brand's orders into the embedded store in DIR, as the engine leaves them:
//!   each order's row (`orders`, with what it added to the rollups) and the day rollups
//!   (`stats_days`), built with the same `Figures::add` the order reaction uses. The `/stats`
//!   answers are then timed over HTTP against `engage serve` on DIR.
//! - `stats-bench recompute DIR BRAND OUTLETS START END RUNS`: the summary of START..END
//!   recomputed from the raw order rows (a scan of every outlet's orders, as a dashboard without
//!   rollups would do); prints each run's milliseconds.
//! - `stats-bench throughput DIR ORDERS DAYS RUNS`: orders processed per second by the engine
//!   (embedded bus and store, 16 partitions, 20 brands, order times spread over the last DAYS
//!   days) with every order reaction, and with every reaction but the rollups, alternating;
//!   prints each run.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use chrono::{NaiveDate, Utc};
use futures::StreamExt;
use serde_json::{json, Value};

use engage_actors::capabilities::customers;
use engage_actors::capabilities::stats::{answers, rollup::KeepRollups, Contribution, Extras, Figures, Metric, BRAND};
use engage_actors::inspect::keys;
use engage_actors::inspect::repo::{Repo, ORDERS};
use engage_actors::reaction::OrderReaction;
use engage_actors::{Engine, EngineConfig};
use engage_storage::{EmbeddedStore, Store, WriteOp};
use engage_streams::bus::EmbeddedBus;
use engage_streams::{Bus, Envelope, EventKind};

const ITEMS: [&str; 40] = [
    "masala dosa",
    "plain dosa",
    "rava dosa",
    "idli",
    "vada",
    "pongal",
    "upma",
    "poha",
    "filter coffee",
    "masala chai",
    "lassi",
    "buttermilk",
    "veg thali",
    "mini meals",
    "curd rice",
    "lemon rice",
    "bisibele bath",
    "paneer roll",
    "veg biryani",
    "chicken biryani",
    "paneer tikka",
    "gobi manchurian",
    "veg noodles",
    "fried rice",
    "chole bhature",
    "pav bhaji",
    "vada pav",
    "samosa",
    "kachori",
    "jalebi",
    "gulab jamun",
    "rasmalai",
    "kulfi",
    "falooda",
    "fruit salad",
    "sweet lime juice",
    "mango shake",
    "cold coffee",
    "brownie",
    "ice cream",
];
const CHANNELS: [&str; 3] = ["dine-in", "takeaway", "delivery"];
const CITIES: [&str; 8] = ["Pune", "Mumbai", "Bengaluru", "Chennai", "Hyderabad", "Delhi", "Kolkata", "Jaipur"];

/// A small deterministic generator (xorshift64*): the benchmark needs no crate for it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Order `i` of `count`, of `outlets` outlets, spread evenly over the `days` days up to
/// 2026-11-22.
fn order(rng: &mut Rng, tenant: &str, i: u64, count: u64, outlets: u64, days: u64) -> (String, Value) {
    let last = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap_or_default();
    let day = last - chrono::Duration::days((days - 1 - i * days / count.max(1)) as i64);
    let hour = [8, 9, 12, 13, 13, 14, 17, 19, 20, 20, 21, 22][rng.below(12) as usize];
    let outlet = format!("outlet-{:02}", i % outlets);
    let lines = 1 + rng.below(3);
    let items: Vec<Value> = (0..lines)
        .map(|_| {
            let name = ITEMS[rng.below(ITEMS.len() as u64) as usize];
            json!({"name": name, "qty": 1 + rng.below(2), "price": 40 + 10 * rng.below(20)})
        })
        .collect();
    let amount: u64 = items.iter().map(|l| l["qty"].as_u64().unwrap_or(0) * l["price"].as_u64().unwrap_or(0)).sum();
    let payload = json!({
        "parentBusinessId": tenant, "businessId": outlet, "orderId": format!("B{i}"),
        "customer": {"name": "Guest", "phone": format!("9{:09}", rng.below(200_000)), "city": CITIES[rng.below(8) as usize]},
        "items": items, "amount": amount, "channel": CHANNELS[rng.below(3) as usize],
        "orderTime": format!("{} {hour:02}:{:02}:00", day, rng.below(60)),
    });
    (outlet, payload)
}

fn contribution(payload: &Value, outlet: &str) -> Contribution {
    let amount = payload.get("amount").and_then(engage_actors::domain::order::decimal).unwrap_or_default();
    let time = payload.get("orderTime").and_then(Value::as_str);
    Contribution::of(payload, outlet, time, Utc::now(), amount)
}

async fn seed(dir: &str, tenant: &str, count: u64, outlets: u64) -> anyhow::Result<()> {
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(std::path::Path::new(dir))?);
    let started = Instant::now();
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut rollups: HashMap<(String, String), Figures> = HashMap::new();
    let mut seen = HashSet::new();
    let mut ops: Vec<WriteOp> = Vec::new();
    for i in 0..count {
        let (outlet, payload) = order(&mut rng, tenant, i, count, outlets, 365);
        let mut c = contribution(&payload, &outlet);
        c.new_customer = seen.insert(payload["customer"]["phone"].as_str().unwrap_or_default().to_owned());
        for scope in [outlet.as_str(), BRAND] {
            rollups.entry((scope.to_owned(), c.day.clone())).or_default().add(&c, 1, scope == BRAND);
        }
        let id = format!("B{i}");
        let row = json!({"payload": payload, "version": "seed", "amount": c.amount, "source": 1, "stats": c});
        ops.push(keys::order(tenant, &outlet, &id).put(&row));
        if ops.len() >= 10_000 {
            store.batch(std::mem::take(&mut ops)).await?;
        }
    }
    let rows = rollups.len();
    ops.extend(
        rollups
            .into_iter()
            .map(|((scope, day), f)| engage_actors::capabilities::stats::rollup::put_row(tenant, &scope, &day, &f)),
    );
    for chunk in ops.chunks(10_000) {
        store.batch(chunk.to_vec()).await?;
    }
    println!(
        "seeded {count} orders of {outlets} outlets and {rows} rollup rows for {tenant} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

async fn recompute(dir: &str, tenant: &str, outlets: u64, start: &str, end: &str, runs: usize) -> anyhow::Result<()> {
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(std::path::Path::new(dir))?);
    let repo = Repo::new(store);
    let period = answers::Period::of(start, end).context("a period")?;
    for run in 1..=runs {
        let started = Instant::now();
        let mut rows: BTreeMap<String, Figures> = BTreeMap::new();
        let mut scanned = 0u64;
        for outlet in 0..outlets {
            let outlet = format!("outlet-{outlet:02}");
            repo.visit_json(ORDERS, &format!("{tenant}|{outlet}"), |row| {
                scanned += 1;
                let c = contribution(&row["payload"], &outlet);
                if c.day.as_str() >= period.previous_start.as_str() && c.day.as_str() <= end {
                    rows.entry(c.day.clone()).or_default().add(&c, 1, true);
                }
            })
            .await?;
        }
        let answer = answers::answer(Metric::Summary, &period, &rows, &Extras::default(), 10);
        println!(
            "recompute run {run}: {:.1} ms ({scanned} order rows read; orders {})",
            started.elapsed().as_secs_f64() * 1000.0,
            answer["totals"]["orders"]
        );
    }
    Ok(())
}

/// Orders processed per second by an engine with `reactions`.
async fn process(dir: &std::path::Path, count: u64, days: u64, rollups: bool) -> anyhow::Result<f64> {
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(dir)?);
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::new(store.clone(), 16));
    let reactions: Vec<_> = engage_actors::capabilities::order_reactions()
        .into_iter()
        .filter(|r| rollups || r.name() != KeepRollups.name())
        .collect();
    let config = EngineConfig {
        partitions: 16,
        passivate_after: Duration::from_secs(600),
        fault_panic_order_id: None,
        fault_poison_order_id: None,
        max_deliveries: 5,
        services: engage_actors::Services::default(),
        cached_customers_max: engage_actors::customer_cache::NODE_CACHED_CUSTOMERS_MAX,
    };
    let engine = Engine::with_reactions(store.clone(), bus.clone(), None, config, reactions);
    let tenants: Vec<String> = (0..20).map(|b| format!("bench-brand-{b:02}")).collect();
    let mut rng = Rng(0xfeed_0000_1111_2222);
    let envelopes: Vec<Arc<Envelope>> = (0..count)
        .map(|i| {
            let tenant = &tenants[(i % 20) as usize];
            let (_, payload) = order(&mut rng, tenant, i, count, 50, days);
            Arc::new(Envelope::new(EventKind::Order, "platform", 1, tenant, "bench", payload))
        })
        .collect();
    let published = futures::stream::iter(envelopes.iter().map(|e| bus.publish(e))).buffer_unordered(64);
    let failures = published.filter(|r| std::future::ready(r.is_err())).count().await;
    if failures > 0 {
        bail!("{failures} publishes failed");
    }
    // one last order per brand: once each is applied, every order before it is (a tenant's orders
    // are applied in publish order)
    for tenant in &tenants {
        let payload = json!({"parentBusinessId": tenant, "businessId": "outlet-00", "orderId": "last",
            "customer": {"phone": "9999999999"}, "amount": 1, "orderTime": "2026-11-22 10:00:00"});
        bus.publish(&Arc::new(Envelope::new(EventKind::Order, "platform", 1, tenant, "bench", payload))).await?;
    }
    let started = Instant::now();
    engine.set_owned(&(0..16).collect::<BTreeSet<u32>>()).await;
    for tenant in &tenants {
        loop {
            let question = customers::Details { phone: "9999999999".to_owned() };
            if engine.ask(tenant, question, Duration::from_secs(10)).await.is_ok() {
                break;
            }
            if started.elapsed() > Duration::from_secs(600) {
                bail!("not processed in 600 s");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let rate = (count + tenants.len() as u64) as f64 / started.elapsed().as_secs_f64();
    engine.shutdown().await;
    Ok(rate)
}

async fn throughput(dir: &str, count: u64, days: u64, runs: usize) -> anyhow::Result<()> {
    for run in 1..=runs {
        // alternate which goes first, so neither always meets a warmer (or busier) machine
        let order = if run % 2 == 1 { [true, false] } else { [false, true] };
        // STATS_BENCH_ONLY=on|off runs one of the two (for a profile)
        let only = std::env::var("STATS_BENCH_ONLY").ok();
        for rollups in order.into_iter().filter(|r| only.as_deref().is_none_or(|o| (o == "on") == *r)) {
            let path = std::path::Path::new(dir).join(format!("run-{run}-{rollups}"));
            let rate = process(&path, count, days, rollups).await?;
            let on = if rollups { "on" } else { "off" };
            println!("throughput run {run} days={days} rollups={on} orders_per_sec={rate:.0}");
            let _ = std::fs::remove_dir_all(&path);
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |n: usize| args.get(n).map(String::as_str).unwrap_or_default();
    let number = |n: usize| arg(n).parse::<u64>().with_context(|| format!("argument {n} is a number"));
    match arg(0) {
        "seed" => seed(arg(1), arg(2), number(3)?, number(4)?).await,
        "recompute" => recompute(arg(1), arg(2), number(3)?, arg(4), arg(5), number(6)? as usize).await,
        "throughput" => throughput(arg(1), number(2)?, number(3)?.max(1), number(4)? as usize).await,
        _ => bail!("usage: stats-bench seed|recompute|throughput …"),
    }
}
