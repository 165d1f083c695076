//! Tokens on NATS are checked from memory while a watch of the token table runs
//! (`ingress/src/platform/edge/grant_cache.rs`): a token revoked through one ingress must be
//! refused by another as soon as the change reaches it, and a token made after a check must
//! work at once. Two engage processes on one real `nats-server -js`.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::procs::{free_port, Engage, NatsServer};

/// Runs `engage tokens …` against `engage` (its data dir holds the admin key); (stdout, stderr).
fn tokens(engage: &Engage, data: &std::path::Path, args: &[&str]) -> (String, String) {
    let args: Vec<&str> = std::iter::once("tokens").chain(args.iter().copied()).collect();
    let output = engage.cli(data, &args);
    (String::from_utf8(output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap())
}

/// The status of an integration call with `token` on `base`.
async fn rewards_status(client: &reqwest::Client, base: &str, token: &str) -> u16 {
    client
        .post(format!("{base}/integration/v1/get_rewards"))
        .header("Authorization", token)
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_through_one_ingress_is_refused_by_another_at_once() {
    let nats = NatsServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (data_a, data_b) = (dir.path().join("a"), dir.path().join("b"));
    let url = nats.url.as_str();
    let a = Engage::start(&data_a, free_port(), &[("ENGAGE_NATS_URL", url), ("ENGAGE_PARTITIONS", "8")]).await;
    let b = Engage::start(
        &data_b,
        free_port(),
        &[("ENGAGE_NATS_URL", url), ("ENGAGE_ROLE", "ingress"), ("ENGAGE_PARTITIONS", "8")],
    )
    .await;
    let client = reqwest::Client::new();

    let (token, created) = tokens(&a, &data_a, &["create", "--kind", "integration", "--parent", "brand-rev"]);
    let token = token.trim().to_owned();
    let id = created.lines().find_map(|line| line.strip_prefix("token id: ")).unwrap().trim().to_owned();
    // checked on b again and again: from the second call on, from b's memory
    for _ in 0..5 {
        assert_eq!(rewards_status(&client, &b.base, &token).await, 200);
    }
    assert_eq!(rewards_status(&client, &b.base, "eng_integration_not-a-token").await, 401);
    // four of the five from memory: the watch runs
    let from_memory = "engage_token_checks_total{answered=\"memory\"}";
    assert_eq!(crate::cluster_kit::metric(&client, &b.base, from_memory).await, 4.0);

    // a checks it too, so that a keeps it in memory as well
    for _ in 0..3 {
        assert_eq!(rewards_status(&client, &a.base, &token).await, 200);
    }
    let (revoked, _) = tokens(&a, &data_a, &["revoke", &id]);
    assert!(revoked.contains(&id), "{revoked}");
    // the process the revocation went through refuses it at once
    assert_eq!(rewards_status(&client, &a.base, &token).await, 401);
    let since = Instant::now();
    let mut status = rewards_status(&client, &b.base, &token).await;
    while status == 200 && since.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(5)).await;
        status = rewards_status(&client, &b.base, &token).await;
    }
    assert_eq!(status, 401, "b still took the token revoked through a after {:?}", since.elapsed());
    println!("revoked through a, refused by b after {:?}", since.elapsed());
    // and from then on, on both
    for base in [&a.base, &b.base] {
        assert_eq!(rewards_status(&client, base, &token).await, 401);
    }

    // a token made after b's checks works on b at once (refusals are not kept)
    let (fresh, _) = tokens(&a, &data_a, &["create", "--kind", "integration", "--parent", "brand-rev"]);
    assert_eq!(rewards_status(&client, &b.base, fresh.trim()).await, 200);
}
