//! Questions keep their wire form: nodes of the previous build and this one answer each other.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use engage_actors::capabilities::{customers, loyalty, wallet};

/// Questions that are their own types cross NATS in the form they had as enum variants: nodes of
/// the previous build and this one answer each other.
#[test]
fn typed_questions_keep_their_wire_form() {
    use engage_actors::capabilities::{otp, redemption, stats};
    use engage_actors::TenantQuery;
    let wire = |q: TenantQuery| serde_json::to_value(q).unwrap();
    assert_eq!(
        wire(customers::Details { phone: "9000000001".into() }.into()),
        serde_json::json!({"area": "customers", "query": {"query": "details", "phone": "9000000001"}})
    );
    assert_eq!(
        wire(otp::Verify { phone: "9".into(), otp: "123456".into() }.into()),
        serde_json::json!({"area": "otp", "query": {"query": "verify", "phone": "9", "otp": "123456"}})
    );
    let revoke = redemption::Revoke { phone: "9".into(), order_id: "o".into(), now: "t".into(), force: true };
    assert_eq!(
        wire(revoke.into()),
        serde_json::json!({"area": "redemption", "query": {"query": "revoke", "phone": "9", "order_id": "o", "now": "t", "force": true}})
    );
    let days = stats::MarkSpecialDays { dates: vec!["2026-11-27".into()], label: None, remove: false };
    assert_eq!(
        wire(days.into()),
        serde_json::json!({"area": "stats", "query": {"op": "mark_special_days", "dates": ["2026-11-27"], "label": null, "remove": false}})
    );
    let metric: serde_json::Value = wire(
        stats::ReadMetric {
            metric: stats::Metric::Summary,
            business_id: None,
            start: "a".into(),
            end: "b".into(),
            limit: 1,
        }
        .into(),
    );
    assert_eq!(metric["query"]["op"], "metric", "{metric}");
    let used = engage_actors::capabilities::rewards::UseCoupon {
        code: "C1".into(),
        order_id: "o".into(),
        pending_minutes: None,
    };
    assert_eq!(
        wire(used.into()),
        serde_json::json!({"area": "rewards", "query": {"query": "use_coupon", "code": "C1", "order_id": "o", "pending_minutes": null}})
    );
    // a question without fields is its tag alone; a struct named apart from its variant keeps the
    // variant's tag
    assert_eq!(
        wire(loyalty::GetRules {}.into()),
        serde_json::json!({"area": "loyalty", "query": {"query": "get_rules"}})
    );
    assert_eq!(
        wire(loyalty::GetDayWise { from: "2026-11-01".into(), to: "2026-11-27".into() }.into()),
        serde_json::json!({"area": "loyalty", "query": {"query": "day_wise", "from": "2026-11-01", "to": "2026-11-27"}})
    );
    assert_eq!(
        wire(wallet::GetBalance { business: "outlet-1".into() }.into()),
        serde_json::json!({"area": "wallet", "query": {"query": "balance", "business": "outlet-1"}})
    );
    let health = engage_actors::capabilities::journeys::GetHealth { from: "a".into(), to: "b".into() };
    assert_eq!(
        wire(health.into()),
        serde_json::json!({"area": "journeys", "query": {"query": "health", "from": "a", "to": "b"}})
    );
    // and what an older node sends is read as the typed question
    let old = serde_json::json!({"area": "customers", "query": {"query": "details", "phone": "9000000001"}});
    let read: TenantQuery = serde_json::from_value(old).unwrap();
    assert_eq!(wire(read)["query"]["phone"], "9000000001");
    for old in [
        serde_json::json!({"area": "loyalty", "query": {"query": "get_rules"}}),
        serde_json::json!({"area": "wallet", "query": {"query": "get_pricing"}}),
        serde_json::json!({"area": "journeys", "query": {"query": "tags"}}),
        serde_json::json!({"area": "bills", "query": {"query": "mis", "business_id": null, "start": "2026-11-01", "end": "2026-11-27"}}),
    ] {
        let read: TenantQuery = serde_json::from_value(old.clone()).unwrap();
        assert_eq!(wire(read), old);
    }
}
