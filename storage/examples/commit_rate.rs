//! Durable single-row batches per second on the embedded store, with C concurrent writers:
//! `cargo run --release -p engage-storage --example commit_rate -- [WRITERS=32] [BATCHES=20000]`.
//! Prints `writers=C batches=N secs=S batches/s=R`.

use std::sync::Arc;
use std::time::Instant;

use engage_storage::{EmbeddedStore, Store};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let writers: usize = args.next().map_or(Ok(32), |a| a.parse())?;
    let batches: usize = args.next().map_or(Ok(20_000), |a| a.parse())?;
    let dir = std::env::temp_dir().join(format!("engage-commit-rate-{}", std::process::id()));
    let store: Arc<dyn Store> = Arc::new(EmbeddedStore::open(&dir)?);
    let started = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in (w..batches).step_by(writers) {
                    store.put("bench", &format!("p{}", i % 64), &(i as u64).to_be_bytes(), vec![0u8; 400]).await?;
                }
                Ok::<_, engage_storage::StoreError>(())
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    let secs = started.elapsed().as_secs_f64();
    println!("writers={writers} batches={batches} secs={secs:.2} batches/s={:.0}", batches as f64 / secs);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
