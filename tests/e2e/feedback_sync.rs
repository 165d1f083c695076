//! Feedback's background work end to end: the brand's configuration copied to its outlets, the
//! app-store review sync, the legacy feedback SMS drain, and the form link of an external
//! feedback service.

use crate::feedback::*;
use crate::helpers::spawn_app;
use crate::journey_runs::{ist, run};
use crate::platform::wait_customer;
use chrono::Utc;
use serde_json::{json, Value};

#[tokio::test]
async fn the_config_sync_copies_the_brand_record_and_orders_summary_counts_numbers() {
    let app = spawn_app(&[]).await;
    let b = brand(&app, "brand-fb-sync").await;
    b.staff("/crm_api/save/feedback/config", json!({"feedback_flow": 1, "feedback_sms": "true", "feedback_time": 15}))
        .await;
    b.staff("/crm_api/save/feedback/config", json!({"child_business_id": "outlet-2", "feedback_flow": 0})).await;
    for outlet in ["outlet-1", "outlet-3"] {
        b.staff("/crm_api/wallet/recharge", json!({"business_id": outlet, "amount": 1, "reference": outlet})).await;
    }
    for _ in 0..2 {
        let synced = run(&app, "feedback_config_sync", Utc::now()).await["outcome"].clone();
        assert_eq!((&synced["copied"], &synced["own"]), (&json!(2), &json!(1)), "{synced}");
    }
    let copy = b.staff("/crm_api/get/feedback/config", json!({"child_business_id": "outlet-3"})).await;
    assert_eq!((&copy["data"]["feedback_sms"], &copy["data"]["feedback_time"]), (&json!("true"), &json!(15)));
    assert!(copy["data"]["copied_from_brand_at"].is_string(), "{copy}");
    let own = b.staff("/crm_api/get/feedback/config", json!({"child_business_id": "outlet-2"})).await;
    assert_eq!(own["data"]["feedback_flow"], 0, "an outlet's own record is left alone");

    // orders: each once (its latest version), valid and invalid numbers counted
    order(&b, "outlet-1", "S-1", "9811900031").await;
    order(&b, "outlet-1", "S-2", "9876543210").await;
    let update = json!({"parentBusinessId": b.name, "businessId": "outlet-1", "orderId": "S-1",
        "customer": {"name": "Meera", "phone": "9811900031"}, "amount": 450});
    assert_eq!(app.post_json("/injestion/platform", &update).await.0, 200);
    wait_customer(&app, b.name, "9811900031", |c| c["lifetime_value"] == 450.0).await;
    wait_customer(&app, b.name, "9876543210", |c| c["total_orders"] == 1).await;
    let today = ist(Utc::now())[..10].to_owned();
    let summary = b.staff("/crm_api/orders_summary", json!({"start": today, "end": today})).await;
    assert_eq!(
        (&summary["total_orders"], &summary["valid_numbers"], &summary["invalid_numbers"]),
        (&json!(2), &json!(1), &json!(1)),
        "{summary}"
    );
    let s1 = summary["data"].as_array().unwrap().iter().find(|o| o["order_id"] == "S-1").unwrap().clone();
    assert_eq!((&s1["amount"], &s1["valid_number"]), (&json!("450"), &json!(true)), "{summary}");
    // a longer period keeps its last 32 days; one end alone is a week
    for body in [json!({"start": "2026-01-01", "end": "2026-03-01"}), json!({"start": "2026-01-01"})] {
        let (status, answer) = staff_status(&b, "/crm_api/orders_summary", body).await;
        assert_eq!(status, 200, "{answer}");
    }
}

/// A fake app store on a loopback port, with both stores' shapes: pages of `page` reviews newest
/// first, a 429 (with `Retry-After: 0`) before every third request, and reviews the test can change.
#[derive(Clone)]
struct FakeStore {
    url: String,
    reviews: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    requests: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// While set, every answer is a 503.
    down: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

async fn fake_store(count: usize) -> FakeStore {
    use axum::extract::{Path, Query, State};
    use axum::response::IntoResponse;
    use std::sync::atomic::Ordering;
    // review n modified n minutes after 2026-11-01 00:00 UTC: n = count is the newest
    let reviews: Vec<Value> = (1..=count)
        .map(|n| {
            json!({"reviewId": format!("r{n:03}"), "reviewer": format!("User {n}"), "comment": format!("Review {n}"),
                   "reply": "", "starRating": 1 + n % 5,
                   "createTime": format!("2026-11-01T{:02}:{:02}:00Z", n / 60, n % 60),
                   "lastModified": format!("2026-11-01T{:02}:{:02}:00Z", n / 60, n % 60)})
        })
        .collect();
    type S = (
        std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
        std::sync::Arc<std::sync::atomic::AtomicUsize>,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    );
    async fn serve(
        State((reviews, requests, down)): State<S>,
        store: &str,
        app: String,
        query: std::collections::HashMap<String, String>,
    ) -> axum::response::Response {
        if down.load(Ordering::SeqCst) {
            return axum::http::StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
        if requests.fetch_add(1, Ordering::SeqCst) % 3 == 2 {
            return (axum::http::StatusCode::TOO_MANY_REQUESTS, [("retry-after", "0")]).into_response();
        }
        assert_eq!(app, "com.brand.app");
        let mut all = reviews.lock().unwrap().clone();
        all.sort_by(|a, b| b["lastModified"].as_str().cmp(&a["lastModified"].as_str()));
        let size: usize = query.get(if store == "a" { "pageSize" } else { "limit" }).unwrap().parse().unwrap();
        assert_eq!(size, 200);
        let from: usize =
            query.get(if store == "a" { "pageToken" } else { "cursor" }).map_or(0, |t| t.parse().unwrap());
        // the fake pages by 25 to make the client page
        let page: Vec<Value> = all.iter().skip(from).take(25).cloned().collect();
        let next = (from + 25 < all.len()).then(|| (from + 25).to_string());
        if store == "a" {
            axum::Json(json!({"reviews": page, "nextPageToken": next})).into_response()
        } else {
            let data: Vec<Value> = page
                .iter()
                .map(|r| {
                    json!({"id": r["reviewId"], "type": "customerReviews", "attributes": {
                    "rating": r["starRating"], "body": r["comment"], "reviewerNickname": r["reviewer"],
                    "createdDate": r["createTime"], "lastModified": r["lastModified"], "response": r["reply"]}})
                })
                .collect();
            axum::Json(json!({"data": data, "next": next})).into_response()
        }
    }
    let state: S =
        (std::sync::Arc::new(std::sync::Mutex::new(reviews)), std::sync::Arc::default(), std::sync::Arc::default());
    let app =
        axum::Router::new()
            .route(
                "/a/apps/{app}/reviews",
                axum::routing::get(
                    |s: State<S>,
                     Path(app): Path<String>,
                     Query(q): Query<std::collections::HashMap<String, String>>| async move {
                        serve(s, "a", app, q).await
                    },
                ),
            )
            .route(
                "/b/apps/{app}/customerReviews",
                axum::routing::get(
                    |s: State<S>,
                     Path(app): Path<String>,
                     Query(q): Query<std::collections::HashMap<String, String>>| async move {
                        serve(s, "b", app, q).await
                    },
                ),
            )
            .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    FakeStore { url, reviews: state.0, requests: state.1, down: state.2 }
}

#[tokio::test]
async fn the_review_sync_pages_retries_throttling_and_updates_only_what_changed() {
    let store = fake_store(60).await;
    let (a, b_url) = (format!("{}/a", store.url), format!("{}/b", store.url));
    let app =
        spawn_app(&[("ENGAGE_STORE_A_URL", &a), ("ENGAGE_STORE_B_URL", &b_url), ("ENGAGE_STORE_A_TOKEN", "t")]).await;
    let b = brand(&app, "brand-reviews").await;
    b.staff(
        "/crm_api/save/feedback/config",
        json!({"feedback_flow": 0, "store_a_app_id": "com.brand.app", "store_b_app_id": "com.brand.app"}),
    )
    .await;
    // first run: every review of both stores (3 pages of 25 each), through the throttling
    let first = run(&app, "review_sync", Utc::now()).await["outcome"].clone();
    for store in ["a", "b"] {
        assert_eq!(
            (&first[store]["read"], &first[store]["inserted"], &first[store]["pages"]),
            (&json!(60), &json!(60), &json!(3)),
            "{first}"
        );
    }
    assert!(first["a"]["retried"].as_u64().unwrap() + first["b"]["retried"].as_u64().unwrap() >= 1, "{first}");
    let list = b.staff("/crm_api/get/rating_list", json!({"source": 3})).await;
    assert_eq!(
        (&list["total"], &list["data"][0]["reviewId"], &list["data"][0]["parent_business_id"]),
        (&json!(60), &json!("r060"), &json!("brand-reviews")),
        "{list}"
    );
    let list_b = b.staff("/crm_api/get/rating_list", json!({"source": 4})).await;
    assert_eq!(
        (&list_b["total"], &list_b["data"][0]["appId"], &list_b["data"][0]["attributes"]["body"]),
        (&json!(60), &json!("com.brand.app"), &json!("Review 60")),
        "{list_b}"
    );

    // the brand replies to an old review: it comes first; only it is updated, one page is read
    {
        let mut reviews = store.reviews.lock().unwrap();
        let old = reviews.iter_mut().find(|r| r["reviewId"] == "r005").unwrap();
        old["reply"] = json!("Thank you!");
        old["lastModified"] = json!("2026-11-02T09:00:00Z");
    }
    let second = run(&app, "review_sync", Utc::now()).await["outcome"].clone();
    for store in ["a", "b"] {
        assert_eq!(
            (&second[store]["updated"], &second[store]["inserted"], &second[store]["pages"]),
            (&json!(1), &json!(0), &json!(1)),
            "{second}"
        );
    }
    let list = b.staff("/crm_api/get/rating_list", json!({"source": 3})).await;
    assert_eq!((&list["data"][0]["reviewId"], &list["data"][0]["reply"]), (&json!("r005"), &json!("Thank you!")));
    // nothing new: one page read, nothing written
    let third = run(&app, "review_sync", Utc::now()).await["outcome"].clone();
    assert_eq!(
        (&third["a"]["updated"], &third["a"]["inserted"], &third["a"]["pages"]),
        (&json!(0), &json!(0), &json!(1))
    );
    assert!(store.requests.load(std::sync::atomic::Ordering::SeqCst) > 10);

    // a new review while the store is down: the run fails (after its retries) and keeps the
    // marker; the next run, with the store back, resumes from it and stores just that review
    store.reviews.lock().unwrap().push(json!({"reviewId": "r061", "reviewer": "New", "comment": "Great",
        "reply": "", "starRating": 5, "createTime": "2026-11-03T00:00:00Z", "lastModified": "2026-11-03T00:00:00Z"}));
    store.down.store(true, std::sync::atomic::Ordering::SeqCst);
    let key = std::fs::read_to_string(app.dir.path().join("admin.key")).unwrap();
    let failed = app
        .client
        .post(format!("{}/admin/jobs/run", app.base))
        .header("x-admin-key", key.trim())
        .json(&json!({"name": "review_sync"}))
        .send()
        .await
        .unwrap();
    assert_eq!(failed.status(), 500);
    let message = failed.text().await.unwrap();
    assert!(message.contains("brand-reviews/a") && message.contains("brand-reviews/b"), "{message}");
    store.down.store(false, std::sync::atomic::Ordering::SeqCst);
    let resumed = run(&app, "review_sync", Utc::now()).await["outcome"].clone();
    for store in ["a", "b"] {
        assert_eq!(
            (&resumed[store]["inserted"], &resumed[store]["updated"], &resumed[store]["pages"]),
            (&json!(1), &json!(0), &json!(1)),
            "{resumed}"
        );
    }
}

#[tokio::test]
async fn the_legacy_feedback_drain_calls_each_url_once_retries_failures_and_gives_up() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    // a gateway: /ok answers 200; /flaky 503 the first time, then 200; /down always 500
    let calls: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let flaky = Arc::new(AtomicUsize::new(0));
    let gateway = axum::Router::new().route(
        "/{kind}",
        axum::routing::get({
            let (calls, flaky) = (calls.clone(), flaky.clone());
            move |axum::extract::Path(kind): axum::extract::Path<String>| {
                let (calls, flaky) = (calls.clone(), flaky.clone());
                async move {
                    calls.lock().unwrap().push(kind.clone());
                    match kind.as_str() {
                        "ok" => axum::http::StatusCode::OK,
                        "flaky" if flaky.fetch_add(1, Ordering::SeqCst) > 0 => axum::http::StatusCode::OK,
                        "flaky" => axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        _ => axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    }
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, gateway).await });
    let app = spawn_app(&[]).await;
    let b = brand(&app, "brand-legacy").await;
    for kind in ["ok", "flaky", "down"] {
        let queued = b.staff("/crm_api/legacy/feedback_sms", json!({"url": format!("{base}/{kind}")})).await;
        assert_eq!(queued["status"], 1, "{queued}");
    }
    let (status, _) = staff_status(&b, "/crm_api/legacy/feedback_sms", json!({"url": "ftp://x"})).await;
    assert_eq!(status, 400);
    let first = run(&app, "legacy_feedback_drain", Utc::now()).await["outcome"].clone();
    assert_eq!(first, json!({"sent": 1, "retrying": 2, "given_up": 0}));
    let second = run(&app, "legacy_feedback_drain", Utc::now()).await["outcome"].clone();
    assert_eq!(second, json!({"sent": 1, "retrying": 1, "given_up": 0}));
    for _ in 0..3 {
        run(&app, "legacy_feedback_drain", Utc::now()).await;
    }
    let last = run(&app, "legacy_feedback_drain", Utc::now()).await["outcome"].clone();
    assert_eq!(last, json!({"sent": 0, "retrying": 0, "given_up": 0}), "nothing is left to call");
    let calls = calls.lock().unwrap().clone();
    let count = |kind: &str| calls.iter().filter(|c| *c == kind).count();
    assert_eq!((count("ok"), count("flaky"), count("down")), (1, 2, 5), "{calls:?}");
}

#[tokio::test]
async fn with_a_feedback_service_the_link_is_its_url_with_the_signed_token() {
    let app = spawn_app(&[("ENGAGE_FEEDBACK_SERVICE_URL", "https://feedback.example.test/form")]).await;
    let b = brand(&app, "brand-fb-service").await;
    b.staff("/crm_api/save/feedback/config", json!({"feedback_flow": 1, "feedback_sms": "true"})).await;
    b.staff("/crm_api/wallet/recharge", json!({"business_id": "outlet-1", "amount": 1, "reference": "s"})).await;
    order(&b, "outlet-1", "FS-1", "9811900041").await;
    wait_customer(&app, b.name, "9811900041", |c| c["total_orders"] == 1).await;
    let sent = b.staff("/crm_api/fetch_feedback_customers", json!({})).await;
    let url = sent["data"][0]["url"].as_str().unwrap().to_owned();
    let token = url.strip_prefix("https://feedback.example.test/form?token=").unwrap_or_else(|| panic!("{url}"));
    // the token is engage's signed one: engage's own form accepts it too
    let form = app.client.get(format!("{}/f/{token}", app.base)).send().await.unwrap();
    assert_eq!(form.status(), 200);
}
