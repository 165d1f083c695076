use crate::domain::customer::Customer;

use super::*;

#[test]
fn the_eight_types_have_fixed_distinct_hex_ids() {
    let types = builtin_types();
    assert_eq!(types.len(), 8);
    let mut ids: Vec<&str> = types.iter().map(|t| t.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 8);
    for t in &types {
        assert!(t.id.len() == 24 && t.id.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{}", t.id);
    }
    let id = journey_id("brand", "outlet", &types[0].id);
    assert_eq!((id.len(), id == journey_id("brand", "outlet", &types[0].id)), (24, true));
    assert_ne!(id, journey_id("brand", "other", &types[0].id));
}

#[test]
fn a_save_needs_a_template_per_channel_and_the_types_own_fields() {
    let lost = builtin_types().into_iter().find(|t| t.campaign_type == "lost_customers").unwrap();
    let mut data = CampaignData { channels: vec![JourneyChannel::Sms], ..CampaignData::default() };
    assert_eq!(check(&lost, &data).unwrap_err().0, "sms_template");
    data.sms_template = Some("We miss you x_cust_name".into());
    assert_eq!(check(&lost, &data).unwrap_err().0, "days");
    data.days = Some(30);
    assert_eq!(check(&lost, &data), Ok(()));
    data.send_days_type = Some("nope".into());
    assert_eq!(check(&lost, &data).unwrap_err().0, "send_days_type");
}

#[test]
fn templates_are_filled_and_the_outlets_journey_comes_before_the_brands() {
    let customer = Customer {
        phone: "9876543210".into(),
        name: Some("Asha".into()),
        email: Some("asha@example.com".into()),
        ..Customer::default()
    };
    assert_eq!(fill("Hi x_cust_name, x_cust_mobile, x_cust_eid", &customer), "Hi Asha, 9876543210, asha@example.com");
    let at = Utc::now();
    let journey = |id: &str, child: &str, enabled: u8| JourneyConfig {
        campaign_journey_id: id.into(),
        parent_business_id: "b".into(),
        child_business_id: child.into(),
        campaign_type_id: "t".into(),
        campaign_type: "welcome".into(),
        campaign_data: CampaignData::default(),
        campaign_enabled: enabled,
        config_enabled: 1,
        activated_at: None,
        created_at: at,
        updated_at: at,
    };
    let all = vec![journey("brand", "0", 1), journey("o1", "o1", 1), journey("o2", "o2", 0)];
    assert_eq!(applicable(&all, "welcome", "o1", "b").map(|j| j.campaign_journey_id.as_str()), Some("o1"));
    assert_eq!(applicable(&all, "welcome", "o2", "b").map(|j| j.campaign_journey_id.as_str()), Some("brand"));
    assert!(applicable(&all, "birthday", "o1", "b").is_none());
}
