use std::collections::BTreeMap;

use super::*;

#[test]
fn the_outlet_record_applies_only_when_its_flow_is_on() {
    let config = |child: &str, flow: u8| FeedbackConfig {
        child_business_id: child.to_owned(),
        feedback_flow: flow,
        ..FeedbackConfig::default()
    };
    let mut all = BTreeMap::new();
    all.insert("0".to_owned(), config("0", 1));
    all.insert("o1".to_owned(), config("o1", 0));
    all.insert("o2".to_owned(), config("o2", 1));
    assert_eq!(applicable(&all, "o1").map(|c| c.child_business_id.as_str()), Some("0"));
    assert_eq!(applicable(&all, "o2").map(|c| c.child_business_id.as_str()), Some("o2"));
    all.insert("0".to_owned(), config("0", 0));
    assert!(applicable(&all, "o1").is_none());
    assert_eq!(message(Some("Rate us"), "A", "9", "7", "U"), "Rate us U");
    assert_eq!(message(Some("x_cust_name: x_feedback_url!"), "A", "9", "7", "U"), "A: U!");
}
