//! When a nightly journey reaches a customer ([`occasion`]): the yearly dates, a lapse, a lot of
//! points about to expire. The occasion is the key a customer is reached once by.

use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};

use super::{JourneyConfig, DAYS_TYPE_OPTIONS};
use crate::domain::customer::Customer;
use crate::domain::time::{instant_key, ist, parse_ist};

/// In steady state a lapse is picked up within this many days of starting (a missed run
/// catches up); the first run after activation takes lapses of any age.
pub const LAPSE_PICKUP_DAYS: i64 = 7;

/// Reads `YYYY-MM-DD`.
fn date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.get(..10)?, "%Y-%m-%d").ok()
}

/// Whether `day` is the yearly return of `date` (29 February falls on the 28th in other years).
fn same_day_of_year(date: NaiveDate, day: NaiveDate) -> bool {
    let leap = NaiveDate::from_ymd_opt(day.year(), 2, 29).is_some();
    match (date.month(), date.day()) {
        (2, 29) if !leap => (day.month(), day.day()) == (2, 28),
        (month, dom) => (day.month(), day.day()) == (month, dom),
    }
}

/// The occasion on which `journey` reaches `customer` in the nightly run at `now`, if any.
///
/// - birthday, anniversary: the date falls on the delivery day (the next IST day) shifted by the
///   journey's `send_days_type` (1 day before: the day after it; 1 day after: today); the
///   occasion is the event's date this year;
/// - lost customers: the last order is more than `days` days old; the lapse started within the
///   last 7 days, or at any time in the first run after activation (`backtrack`); the occasion is
///   the last order's time, so a customer is reached once per lapse;
/// - wallet expiry: points of a lot expire within `days` days; the occasion is the lot.
pub fn occasion(journey: &JourneyConfig, customer: &Customer, now: DateTime<Utc>, backtrack: bool) -> Option<String> {
    let data = &journey.campaign_data;
    match journey.campaign_type.as_str() {
        "birthday" | "anniversary" => {
            let field = if journey.campaign_type == "birthday" { &customer.dob } else { &customer.anniversary };
            let event = date(field.as_deref()?)?;
            let offset = data
                .send_days_type
                .as_deref()
                .and_then(|id| DAYS_TYPE_OPTIONS.iter().find(|(option, _, _)| *option == id))
                .and_then(|(_, _, offset)| *offset)
                .unwrap_or(0);
            let delivery = now.with_timezone(&ist()).date_naive() + Duration::days(1);
            let day = delivery - Duration::days(i64::from(offset));
            same_day_of_year(event, day).then(|| day.format("%Y-%m-%d").to_string())
        }
        "lost_customers" => {
            let last_text = customer.last_order()?;
            let lapse = parse_ist(last_text)? + Duration::days(i64::from(data.days?));
            let fresh = now - lapse < Duration::days(LAPSE_PICKUP_DAYS);
            (lapse <= now && (backtrack || fresh)).then(|| format!("lapse-{}", last_text.replace(' ', "T")))
        }
        "wallet_expiry" => {
            if customer.loyalty_points <= 0 {
                return None;
            }
            let horizon = now + Duration::days(i64::from(data.days?));
            let (expires_at, _) = customer.point_lots.0.iter().find(|(at, points)| **at > now && **points > 0)?;
            (*expires_at <= horizon).then(|| format!("lot-{}", instant_key(*expires_at)))
        }
        _ => None,
    }
}

/// Whether the run at `now` is the first after the journey was turned on (it was turned on
/// within the day before): lost customers are then backtracked, at most 10,000.
pub fn backtracking(journey: &JourneyConfig, now: DateTime<Utc>) -> bool {
    journey.activated_at.is_some_and(|at| at <= now && now - at < Duration::days(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::journeys::runs::in_holdout;
    use crate::capabilities::journeys::CampaignData;
    use rust_decimal::Decimal;

    fn journey(campaign_type: &str, data: CampaignData) -> JourneyConfig {
        let at = Utc::now();
        JourneyConfig {
            campaign_journey_id: "j1".into(),
            parent_business_id: "b".into(),
            child_business_id: "0".into(),
            campaign_type_id: "t".into(),
            campaign_type: campaign_type.into(),
            campaign_data: data,
            campaign_enabled: 1,
            config_enabled: 1,
            activated_at: None,
            created_at: at,
            updated_at: at,
        }
    }

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn birthdays_fall_on_the_next_ist_day_shifted_by_the_send_timing() {
        // 22:00 IST on 22 November
        let now = at("2026-11-22T16:30:00Z");
        let customer = Customer { phone: "1".into(), dob: Some("1990-11-23".into()), ..Customer::default() };
        let on_the_day = journey("birthday", CampaignData::default());
        assert_eq!(occasion(&on_the_day, &customer, now, false), Some("2026-11-23".into()));
        let day_before = journey(
            "birthday",
            CampaignData { send_days_type: Some(DAYS_TYPE_OPTIONS[2].0.into()), ..CampaignData::default() },
        );
        assert_eq!(occasion(&day_before, &customer, now, false), None);
        let born_24th = Customer { dob: Some("1990-11-24".into()), ..customer.clone() };
        assert_eq!(occasion(&day_before, &born_24th, now, false), Some("2026-11-24".into()));
        let leap = Customer { dob: Some("2000-02-29".into()), ..customer };
        assert_eq!(occasion(&on_the_day, &leap, at("2027-02-27T16:30:00Z"), false), Some("2027-02-28".into()));
    }

    #[test]
    fn a_lapse_is_picked_up_within_a_week_or_at_any_age_when_backtracking() {
        let now = at("2026-11-22T16:30:00Z");
        let lost = journey("lost_customers", CampaignData { days: Some(30), ..CampaignData::default() });
        let mut customer = Customer { phone: "1".into(), ..Customer::default() };
        let order = |time: &str| crate::domain::customer::Contribution {
            amount: Decimal::ONE,
            version: "v".into(),
            order_time: Some(time.into()),
            points: 0,
            void: false,
            refunded: Decimal::ZERO,
        };
        customer.orders.insert("o/1".into(), order("2026-10-20 10:00:00"));
        assert_eq!(occasion(&lost, &customer, now, false), Some("lapse-2026-10-20T10:00:00".into()));
        customer.orders.insert("o/1".into(), order("2026-01-01 10:00:00"));
        assert_eq!(occasion(&lost, &customer, now, false), None);
        assert!(occasion(&lost, &customer, now, true).is_some());
        customer.orders.insert("o/2".into(), order("2026-11-01 10:00:00"));
        assert_eq!(occasion(&lost, &customer, now, true), None);
    }

    #[test]
    fn the_holdout_group_is_stable_and_about_its_percentage() {
        let j = journey("birthday", CampaignData { holdout_percent: Some(20), ..CampaignData::default() });
        let held = (0..10_000).filter(|n| in_holdout(&j, &format!("98{n:08}"))).count();
        assert!((1_700..2_300).contains(&held), "{held}");
        assert_eq!(in_holdout(&j, "9800000001"), in_holdout(&j, "9800000001"));
        let none = journey("birthday", CampaignData::default());
        assert!(!(0..1000).any(|n| in_holdout(&none, &format!("98{n:08}"))));
    }
}
