//! `engage partitions set COUNT`: the one way to change the partition count a cluster or a single
//! node's data dir keeps (`engage_streams::bus::partition_count`), with every process stopped and
//! every order processed. A brand's partition is its hash modulo the count, so an order waiting
//! under the old count would wait on a partition no node of the new count reads: the change is
//! refused while any waits (`docs/operations.md`, "The partition count a cluster keeps").

use anyhow::Context;

use engage_config::{Settings, StoreKind};
use engage_streams::bus::{partition_count, unsettled_partition};
use engage_streams::lease::LEASE_BUCKET;

/// Makes `count` the kept partition count; the count kept before, if any.
pub async fn set_partition_count(settings: &Settings, count: u32) -> anyhow::Result<Option<u32>> {
    let (least, most) = (engage_config::PARTITION_COUNTS.start(), engage_config::PARTITION_COUNTS.end());
    anyhow::ensure!(
        engage_config::PARTITION_COUNTS.contains(&count),
        "a partition count is {least} to {most}, not {count}"
    );
    let Some(url) = &settings.nats_url else {
        anyhow::ensure!(
            settings.store_kind() == StoreKind::Embedded,
            "a single node on ENGAGE_STORE=scylla keeps its count in ScyllaDB: change it there (table bus_meta, row partitions)"
        );
        let store = crate::data_dir::open_data_dir(settings)?;
        let kept = partition_count::kept_in_store(&store).await?.unwrap_or(settings.partitions);
        if let Some(partition) = unsettled_partition(&store, kept).await? {
            anyhow::bail!(
                "partition {partition} of {kept} still holds orders not processed: start engage with the old count until they are (engage_events_processed_total stops moving), stop it, then set the count"
            );
        }
        return Ok(partition_count::record_in_store(&store, count).await?);
    };
    let jetstream = crate::cli_jetstream(url).await?;
    if let Ok(bucket) = jetstream.get_key_value(LEASE_BUCKET).await {
        let nodes = engage_streams::lease::live_nodes(&bucket).await.map_err(anyhow::Error::msg)?;
        anyhow::ensure!(
            nodes.is_empty(),
            "nodes still run ({}): stop every engage process of the cluster first (a node leaves the list when it stops, or a lease after it died)",
            nodes.join(", ")
        );
    }
    let waiting = partition_count::undelivered(&jetstream).await.context("cannot read the partition consumers")?;
    if !waiting.is_empty() {
        let listed: Vec<String> = waiting.iter().map(|(name, n)| format!("{name}: {n}")).collect();
        anyhow::bail!(
            "orders not processed yet ({}): start the nodes with the old count until none is left, stop every process, then set the count",
            listed.join(", ")
        );
    }
    Ok(partition_count::record(&jetstream, count).await?)
}

/// The count a single node's data dir keeps: `None` when it keeps none (or there is no data dir
/// yet); an error when a running node holds it.
pub async fn data_dir_partition_count(settings: &Settings) -> anyhow::Result<Option<u32>> {
    if !settings.data_dir.exists() {
        return Ok(None);
    }
    let store = crate::data_dir::open_data_dir(settings)?;
    Ok(partition_count::kept_in_store(&store).await?)
}
