//! A NATS cluster keeps the partition count it was made with (the orders stream's metadata,
//! `streams/src/bus/partition_count.rs`): a process given another count refuses to start and says
//! both, one given none takes the cluster's, so no brand's orders go to a partition nobody
//! reads. Real `nats-server -js`, real engage processes.

use std::time::Duration;

use engage_streams::subject::partition_of;

use crate::cluster_kit::{order, wait_each_counted_once};
use crate::procs::{cli, free_port, Engage, NatsServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_keeps_its_partition_count_and_a_process_with_another_one_does_not_start() {
    let nats = NatsServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let url = nats.url.as_str();
    let node =
        Engage::start(&dir.path().join("node"), free_port(), &[("ENGAGE_NATS_URL", url), ("ENGAGE_PARTITIONS", "8")])
            .await;

    // the stream says so, for operators and every later process
    let jetstream = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
    // (what `nats stream info ENGAGE_ORDERS` shows)
    let info: serde_json::Value = jetstream.request("STREAM.INFO.ENGAGE_ORDERS", &serde_json::json!({})).await.unwrap();
    assert_eq!(info["config"]["metadata"]["engage_partitions"], "8", "{info}");

    // an ingress given 16 stops at once, naming both counts; it never answered an order
    let mut wrong = Engage::spawn(
        &dir.path().join("wrong"),
        free_port(),
        &[("ENGAGE_NATS_URL", url), ("ENGAGE_ROLE", "ingress"), ("ENGAGE_PARTITIONS", "16")],
    );
    assert!(!wrong.wait_exit(Duration::from_secs(30)).await, "a process with another count must fail");
    let said = wrong.stderr();
    assert!(said.contains("ENGAGE_PARTITIONS is 16") && said.contains("made with 8 partitions"), "{said}");

    // an ingress given no count takes the cluster's 8: brands whose partition among 64 (the
    // default) is one no consumer of 8 reads are still applied by the node
    let ingress = Engage::start(
        &dir.path().join("ingress"),
        free_port(),
        &[("ENGAGE_NATS_URL", url), ("ENGAGE_ROLE", "ingress")],
    )
    .await;
    let brands: Vec<String> =
        (0..40).map(|i| format!("count-brand-{i}")).filter(|b| partition_of(b, 64) >= 8).take(5).collect();
    assert_eq!(brands.len(), 5);
    let client = reqwest::Client::new();
    let mut orders = Vec::new();
    for (i, brand) in brands.iter().enumerate() {
        let phone = format!("98100000{i:02}");
        let response = client
            .post(format!("{}/injestion/platform", ingress.base))
            .json(&order(brand, &format!("pc-{i}"), &phone))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        orders.push((brand.clone(), phone));
    }
    wait_each_counted_once(&client, &node.base, &orders, Duration::from_secs(30)).await;

    // `engage partitions` without a count lists the cluster's 8
    let output = cli(dir.path(), &[("ENGAGE_NATS_URL", url)], &["partitions"]);
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{printed}{}", String::from_utf8_lossy(&output.stderr));
    assert!(printed.contains("partitions: 8"), "{printed}");
    assert_eq!(printed.lines().filter(|line| line.contains('\t')).count(), 8, "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_node_keeps_the_partition_count_its_data_dir_was_made_with() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut first = Engage::start(&data, free_port(), &[("ENGAGE_PARTITIONS", "8")]).await;
    first.terminate();
    assert!(first.wait_exit(Duration::from_secs(30)).await, "{}", first.stderr());

    let mut wrong = Engage::spawn(&data, free_port(), &[("ENGAGE_PARTITIONS", "16")]);
    assert!(!wrong.wait_exit(Duration::from_secs(30)).await, "a node with another count must fail");
    let said = wrong.stderr();
    assert!(said.contains("ENGAGE_PARTITIONS is 16") && said.contains("this data dir was made with 8"), "{said}");

    // unset, it takes the data dir's 8: /metrics says 8 partitions run
    let node = Engage::start(&data, free_port(), &[]).await;
    let client = reqwest::Client::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let running = crate::cluster_kit::metric(&client, &node.base, "engage_partitions_running").await;
        if running == 8.0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{running} partitions run, not the data dir's 8");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
