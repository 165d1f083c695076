use super::*;
use serde_json::json;

fn order(amount: &str, hour: u8) -> Contribution {
    let payload = json!({"businessId": "o1", "orderId": "1", "amount": amount, "discount": 5,
            "items": [{"name": "dosa", "qty": 2, "price": 60.125}, {"name": "tea", "qty": 0, "price": 10}],
            "channel": "Delivery", "customer": {"city": "Pune"}, "prepMinutes": 12});
    let time = format!("2026-10-02 {hour:02}:30:00");
    let amount = Decimal::from_str_exact(amount).unwrap_or_default();
    Contribution::of(&payload, "o1", Some(&time), Utc::now(), amount)
}

#[test]
fn a_contribution_leaves_out_its_defaults_and_reads_back_the_same() {
    let payload = json!({"businessId": "o1", "orderId": "2", "amount": 10});
    let bare = Contribution::of(&payload, "o1", Some("2026-10-02 09:30:00"), Utc::now(), Decimal::TEN);
    let row = serde_json::to_value(&bare).unwrap();
    let fields: Vec<&str> = row.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(fields, ["amount", "channel", "city", "day", "hour", "outlet", "pincode"]);
    assert_eq!(serde_json::from_value::<Contribution>(row).unwrap(), bare);
    // every field set survives, and a row written with the defaults spelled out still reads
    let mut full = order("115.25", 9);
    full.new_customer = true;
    full.points_earned = 3;
    full.points_redeemed = 2;
    full.delivery_minutes = Some(Decimal::ONE);
    assert_eq!(serde_json::from_slice::<Contribution>(&serde_json::to_vec(&full).unwrap()).unwrap(), full);
    let mut old = serde_json::to_value(&bare).unwrap();
    for (field, value) in [
        ("discount", json!("0")),
        ("new_customer", json!(false)),
        ("points_earned", json!(0)),
        ("points_redeemed", json!(0)),
        ("items", json!([])),
        ("prep_minutes", json!(null)),
        ("delivery_minutes", json!(null)),
    ] {
        old[field] = value;
    }
    assert_eq!(serde_json::from_value::<Contribution>(old).unwrap(), bare);
}

#[test]
fn an_order_taken_back_leaves_nothing_and_a_row_survives_its_encoding() {
    let first = order("115.25", 9);
    assert_eq!((first.day.as_str(), first.hour, first.channel.as_str()), ("2026-10-02", 9, "delivery"));
    assert_eq!(first.items.len(), 1, "a line of quantity 0 is no sale");
    assert_eq!(first.items[0].revenue, Decimal::from_str_exact("120.25").unwrap_or_default());
    let mut row = Figures::default();
    row.add(&first, 1, true);
    let second = order("99.9999", 21);
    row.add(&second, 1, true);
    assert_eq!(decode(&encode(&row)).ok(), Some(row.clone()));
    assert_eq!(row.outlets["o1"].n, 2);
    assert_eq!(row.items["dosa"].n, 4);
    assert_eq!(row.revenue(), Decimal::from_str_exact("215.2499").unwrap_or_default());
    let mut huge = order("79228162514264337593543950335", 3);
    huge.items[0].qty = i64::MAX;
    let mut saturated = row.clone();
    saturated.add(&huge, 1, true);
    saturated.add(&huge, 1, true);
    assert_eq!(saturated.revenue_units, i64::MAX, "an absurd amount saturates; nothing panics");
    row.add(&first, -1, true);
    row.add(&second, -1, true);
    assert_eq!(row, Figures::default(), "every map entry and hour is gone");
    assert!(decode(b"{\"orders\": 1}").is_err());
}

#[test]
fn refunds_count_apart_and_rows_of_the_old_format_still_read() {
    let mut row = Figures::default();
    let mut partial = order("100", 9);
    (partial.amount, partial.refunded) = (Decimal::from(60), Decimal::from(40));
    let mut void = order("80", 10);
    (void.amount, void.refunded, void.void) = (Decimal::ZERO, Decimal::from(80), true);
    row.add(&partial, 1, true);
    row.add(&void, 1, true);
    assert_eq!((row.orders, row.refunded_orders), (1, 1), "a void order counts only as refunded");
    assert_eq!((row.revenue(), row.refunds()), (Decimal::from(60), Decimal::from(120)));
    assert_eq!(decode(&encode(&row)).ok(), Some(row.clone()));
    // a row written before refunds were counted (format 1: the figures alone)
    let mut old = vec![1u8];
    old.extend(postcard::to_allocvec(&row).unwrap());
    let read = decode(&old).unwrap();
    assert_eq!((read.orders, read.refunded_orders, read.refunded_units), (1, 0, 0));
    row.add(&void, -1, true);
    row.add(&partial, -1, true);
    assert_eq!(row, Figures::default());
}

#[test]
fn money_is_kept_to_four_places() {
    assert_eq!(money::units(Decimal::from_str_exact("1.23456").unwrap_or_default()), 12_346);
    assert_eq!(money::decimal(12_346).to_string(), "1.2346");
    assert_eq!(money::decimal(10_000).to_string(), "1");
}
