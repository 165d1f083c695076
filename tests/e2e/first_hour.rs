//! What a newcomer meets in the first hour (issue 55): refusals that say what would work instead.

use serde_json::{json, Value};

use crate::helpers::{spawn_app, token_for};

#[tokio::test]
async fn a_staff_token_in_authorization_is_told_where_it_goes() {
    let app = spawn_app(&[]).await;
    let staff = token_for(&app, "staff", "brand-h", None).await;
    let body = json!({"parent_business_id": "brand-h", "business_id": "outlet-1"});
    let url = format!("{}/crm_api/wallet/balance", app.base);
    let refused = app.client.post(&url).header("authorization", &staff).json(&body).send().await.unwrap();
    assert_eq!(refused.status(), 403);
    let answer: Value = refused.json().await.unwrap();
    assert_eq!(answer["message"], "invalid credentials", "the spec's message stays");
    let hint = answer["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("`token` header") && hint.contains("engage tokens create"), "{answer}");
    // no token at all, or a wrong one: no hint about a header that was not used
    let wrong = app.client.post(&url).header("token", "nope").json(&body).send().await.unwrap();
    let answer: Value = wrong.json().await.unwrap();
    assert!(answer.get("hint").is_none(), "{answer}");
    // in the right header it works
    let ok = app.client.post(&url).header("token", &staff).json(&body).send().await.unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn an_invalid_request_names_every_issue_once_and_cleanly() {
    let app = spawn_app(&[]).await;
    let (status, body) = app.post_json("/injestion/platform", &json!({"parentBusinessId": 5})).await;
    assert_eq!((status, body["error_code"].clone()), (400, json!("xE_102")), "{body}");
    let message = body["error_message"].as_str().unwrap();
    let issues = body["errors"].as_array().unwrap();
    assert!(issues.len() >= 4, "{body}");
    for issue in issues.iter().take(10) {
        let said = issue["message"].as_str().unwrap();
        assert!(message.contains(said), "{said:?} missing from {message:?}");
    }
    assert!(!message.contains(": :") && !message.contains("::"), "{message}");
    // a body that is not JSON: the message alone, no empty pointer before it
    let (status, body) = app.post_raw("/injestion/platform", "not json").await;
    assert_eq!(status, 400, "{body}");
    assert!(!body["error_message"].as_str().unwrap().contains(": :"), "{body}");
}

#[tokio::test]
async fn an_item_spelled_two_ways_is_one_item_under_its_usual_spelling() {
    let app = spawn_app(&[]).await;
    let brand = "items-brand";
    let staff = token_for(&app, "staff", brand, None).await;
    let spellings = [("Filter Coffee", 3), ("filter coffee", 1), ("FILTER  coffee ", 1), ("Idli", 2)];
    for (n, (name, qty)) in spellings.iter().enumerate() {
        let body = json!({"parentBusinessId": brand, "businessId": "o1", "orderId": format!("I-{n}"),
            "customer": {"name": "Asha", "phone": format!("98765{n:05}")},
            "items": [{"name": name, "qty": qty, "price": 40}], "amount": 40 * qty,
            "orderTime": "2026-10-05 09:00:00"});
        assert_eq!(app.post_json("/injestion/platform", &body).await.0, 200);
    }
    let period = json!({"parent_business_id": brand, "start": "2026-10-05", "end": "2026-10-05"});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let top = loop {
        let top = crate::stats::stats(&app, &staff, "/stats/metrics/top-items", period.clone()).await;
        let sold: i64 = top["by_quantity"].as_array().unwrap().iter().map(|i| i["quantity"].as_i64().unwrap()).sum();
        if sold == 7 {
            break top;
        }
        assert!(std::time::Instant::now() < deadline, "orders never all counted: {top}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let names: Vec<(&str, i64)> = top["by_quantity"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["name"].as_str().unwrap(), i["quantity"].as_i64().unwrap()))
        .collect();
    assert_eq!(names, vec![("Filter Coffee", 5), ("Idli", 2)], "{top}");
}
