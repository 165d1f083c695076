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

/// `engage partitions set` (what `cli` printed, and whether it succeeded).
fn set_count(cwd: &std::path::Path, env: &[(&str, &str)], count: &str) -> (bool, String) {
    let output = cli(cwd, env, &["partitions", "set", count]);
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), said)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_drained_cluster_changes_its_count_with_engage_partitions_set() {
    let nats = NatsServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let url = nats.url.as_str();
    let nats_env = [("ENGAGE_NATS_URL", url)];
    let node_env = [("ENGAGE_NATS_URL", url), ("ENGAGE_PARTITIONS", "8"), ("ENGAGE_PARTITION_LEASE_SECS", "3")];
    let mut node = Engage::start(&dir.path().join("node-1"), free_port(), &node_env).await;
    let mut ingress = Engage::start(
        &dir.path().join("ingress"),
        free_port(),
        &[("ENGAGE_NATS_URL", url), ("ENGAGE_ROLE", "ingress")],
    )
    .await;
    let client = reqwest::Client::new();
    let post = |base: String, brand: &'static str, id: &'static str| {
        let client = client.clone();
        async move {
            let response = client
                .post(format!("{base}/injestion/platform"))
                .json(&order(brand, id, "9810000001"))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200);
        }
    };
    post(ingress.base.clone(), "set-brand-a", "set-1").await;
    let first = [("set-brand-a".to_owned(), "9810000001".to_owned())];
    wait_each_counted_once(&client, &node.base, &first, Duration::from_secs(30)).await;

    // refused while a node runs, naming it
    let (changed, said) = set_count(dir.path(), &nats_env, "16");
    assert!(!changed && said.contains("nodes still run"), "{said}");

    // refused while an order waits, naming its partition's consumer
    node.terminate();
    assert!(node.wait_exit(Duration::from_secs(30)).await, "{}", node.stderr());
    post(ingress.base.clone(), "set-brand-b", "set-2").await;
    let waiting = format!("engage-p{}: 1", partition_of("set-brand-b", 8));
    let (changed, said) = set_count(dir.path(), &nats_env, "16");
    assert!(!changed && said.contains("orders not processed yet") && said.contains(&waiting), "{said}");

    // a node with the old count processes it; with every process stopped the change goes through
    let mut node = Engage::start(&dir.path().join("node-2"), free_port(), &node_env).await;
    let second = [("set-brand-b".to_owned(), "9810000001".to_owned())];
    wait_each_counted_once(&client, &node.base, &second, Duration::from_secs(30)).await;
    node.terminate();
    assert!(node.wait_exit(Duration::from_secs(30)).await, "{}", node.stderr());
    ingress.terminate();
    assert!(ingress.wait_exit(Duration::from_secs(30)).await, "{}", ingress.stderr());
    let (changed, said) = set_count(dir.path(), &nats_env, "16");
    assert!(changed && said.contains("partition count: 16 (was 8)"), "{said}");

    // a process given none now runs 16; a brand on a partition the old count never had is
    // applied, and the brands' rows from before are all there
    let node = Engage::start(&dir.path().join("node-3"), free_port(), &nats_env).await;
    let brand = (0..40).map(|i| format!("set-brand-new-{i}")).find(|b| partition_of(b, 16) >= 8).unwrap();
    let response = client
        .post(format!("{}/injestion/platform", node.base))
        .json(&order(&brand, "set-3", "9810000001"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let all = [first[0].clone(), second[0].clone(), (brand, "9810000001".to_owned())];
    wait_each_counted_once(&client, &node.base, &all, Duration::from_secs(30)).await;
    let running = crate::cluster_kit::metric(&client, &node.base, "engage_partitions_running").await;
    assert_eq!(running, 16.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_single_node_changes_its_count_with_engage_partitions_set() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut node = Engage::start(&data, free_port(), &[("ENGAGE_PARTITIONS", "8")]).await;
    // refused while the node holds its data dir
    let data_text = data.to_string_lossy().into_owned();
    let env = [("ENGAGE_DATA_DIR", data_text.as_str())];
    let (changed, said) = set_count(dir.path(), &env, "16");
    assert!(!changed && said.contains("in use by another engage process"), "{said}");
    node.terminate();
    assert!(node.wait_exit(Duration::from_secs(30)).await, "{}", node.stderr());
    let (changed, said) = set_count(dir.path(), &env, "0");
    assert!(!changed && said.contains("1 to 4096"), "{said}");
    let (changed, said) = set_count(dir.path(), &env, "16");
    assert!(changed && said.contains("partition count: 16 (was 8)"), "{said}");
    // `engage partitions` reads the count the stopped node's data dir keeps
    let listed = String::from_utf8(cli(dir.path(), &env, &["partitions"]).stdout).unwrap();
    assert!(listed.contains("owns all 16 partitions (the count its data dir keeps)"), "{listed}");
    let node = Engage::start(&data, free_port(), &[]).await;
    let client = reqwest::Client::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while crate::cluster_kit::metric(&client, &node.base, "engage_partitions_running").await != 16.0 {
        assert!(std::time::Instant::now() < deadline, "the node does not run the data dir's new 16 partitions");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
