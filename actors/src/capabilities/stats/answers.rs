//! The arithmetic of the twelve metrics, over rollup rows by IST day. Money is summed as decimals
//! and shown as JSON numbers; averages and money are rounded to 2 places, percentages to 1.

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde_json::{json, Value};

use super::rollup::{weekday, Figures, Tally};
use super::{Extras, Metric};

/// Meal bands by IST hour: name, first hour, last hour (a band may wrap past midnight).
pub const MEAL_BANDS: [(&str, u8, u8); 5] =
    [("breakfast", 6, 10), ("lunch", 11, 14), ("snacks", 15, 18), ("dinner", 19, 22), ("late_night", 23, 5)];

/// An outlet is underperforming when its revenue is below the brand's median by more than this.
pub const UNDERPERFORMING_MARGIN: Decimal = Decimal::from_parts(2, 0, 0, false, 1);

const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// The period asked for and the one before it (as many days, just before).
#[derive(Clone, Debug)]
pub struct Period {
    /// First day.
    pub start: String,
    /// Last day.
    pub end: String,
    /// Days in it.
    pub days: i64,
    /// First day of the previous period.
    pub previous_start: String,
    /// Last day of the previous period.
    pub previous_end: String,
}

fn date(day: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()
}

fn text(day: NaiveDate) -> String {
    day.format("%Y-%m-%d").to_string()
}

impl Period {
    /// `start..=end` (`YYYY-MM-DD`); `None` when either is no day or end is before start.
    pub fn of(start: &str, end: &str) -> Option<Self> {
        let (first, last) = (date(start)?, date(end)?);
        let days = (last - first).num_days() + 1;
        if days < 1 {
            return None;
        }
        let previous_end = first.pred_opt()?;
        let previous_start = previous_end - chrono::Duration::days(days - 1);
        Some(Self {
            start: start.to_owned(),
            end: end.to_owned(),
            days,
            previous_start: text(previous_start),
            previous_end: text(previous_end),
        })
    }

    /// Every day of the period, in order.
    pub fn each_day(&self) -> Vec<String> {
        let Some(first) = date(&self.start) else { return Vec::new() };
        (0..self.days).map(|n| text(first + chrono::Duration::days(n))).collect()
    }

    fn json(&self) -> Value {
        json!({"start": self.start, "end": self.end, "days": self.days,
               "previous": {"start": self.previous_start, "end": self.previous_end}})
    }
}

/// A decimal as a JSON number, rounded to 2 places.
pub fn money(value: Decimal) -> Value {
    json!(value.round_dp(2).to_f64().unwrap_or_default())
}

fn ratio(part: Decimal, whole: Decimal) -> Decimal {
    if whole.is_zero() {
        Decimal::ZERO
    } else {
        part / whole
    }
}

/// `part` as a percentage of `whole`, 1 place (0 when `whole` is 0).
pub fn share(part: Decimal, whole: Decimal) -> Value {
    json!((ratio(part, whole) * Decimal::ONE_HUNDRED).round_dp(1).to_f64().unwrap_or_default())
}

/// The change from `before` to `now` in percent, 1 place; `null` when `before` is 0.
pub fn change(now: Decimal, before: Decimal) -> Value {
    if before.is_zero() {
        Value::Null
    } else {
        json!(((now - before) / before * Decimal::ONE_HUNDRED).round_dp(1).to_f64().unwrap_or_default())
    }
}

fn average(total: Decimal, count: i64) -> Decimal {
    ratio(total, Decimal::from(count))
}

/// The sum of the rows of the days `start..=end`.
pub fn sum(rows: &BTreeMap<String, Figures>, start: &str, end: &str) -> Figures {
    let mut total = Figures::default();
    for (_, figures) in rows.range(start.to_owned()..=end.to_owned()) {
        total.merge(figures);
    }
    total
}

/// The headline figures of a sum.
pub fn totals(f: &Figures) -> Value {
    json!({
        "orders": f.orders,
        "revenue": money(f.revenue()),
        "average_order_value": money(average(f.revenue(), f.orders)),
        "discounts": money(f.discounts()),
        "new_customers": f.new_customers,
        "returning_orders": f.returning_orders,
        "points_earned": f.points_earned,
        "points_redeemed": f.points_redeemed,
        "refunded_orders": f.refunded_orders,
        "refunded_amount": money(f.refunds()),
        "gross_revenue": money(f.revenue() + f.refunds()),
    })
}

fn changes(now: &Figures, before: &Figures) -> Value {
    json!({
        "orders": change(now.orders.into(), before.orders.into()),
        "revenue": change(now.revenue(), before.revenue()),
        "average_order_value": change(average(now.revenue(), now.orders), average(before.revenue(), before.orders)),
        "new_customers": change(now.new_customers.into(), before.new_customers.into()),
        "returning_orders": change(now.returning_orders.into(), before.returning_orders.into()),
    })
}

/// Tallies by name, most first (`key` picks the order), as `{<label>, orders|quantity, revenue, share}`.
fn ranked(map: &BTreeMap<String, Tally>, label: &str, count: &str, by_revenue: bool, whole: Decimal) -> Vec<Value> {
    let mut entries: Vec<(&String, &Tally)> = map.iter().collect();
    if by_revenue {
        entries.sort_by(|a, b| b.1.revenue().cmp(&a.1.revenue()).then(b.1.n.cmp(&a.1.n)).then(a.0.cmp(b.0)));
    } else {
        entries.sort_by(|a, b| b.1.n.cmp(&a.1.n).then(b.1.units.cmp(&a.1.units)).then(a.0.cmp(b.0)));
    }
    entries
        .into_iter()
        .map(|(name, tally)| {
            json!({label: name, count: tally.n, "revenue": money(tally.revenue()), "share": share(tally.revenue(), whole)})
        })
        .collect()
}

/// Items whose names differ only in case and spacing (`filter coffee`, `Filter  Coffee`) as one,
/// under the spelling sold most (by quantity; then revenue; then the first in order): POS systems
/// and staff spell an item many ways, and a brand sells one.
fn same_items(items: &BTreeMap<String, Tally>) -> BTreeMap<String, Tally> {
    let mut groups: BTreeMap<String, (Tally, &String, &Tally)> = BTreeMap::new();
    for (name, tally) in items {
        let key = name.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        let group = groups.entry(key).or_insert_with(|| (Tally::default(), name, tally));
        group.0.merge(tally);
        if (tally.n, tally.units) > (group.2.n, group.2.units) {
            (group.1, group.2) = (name, tally);
        }
    }
    groups.into_values().map(|(tally, name, _)| (name.trim().to_owned(), tally)).collect()
}

fn median(values: &mut [Decimal]) -> Decimal {
    values.sort();
    match values.len() {
        0 => Decimal::ZERO,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / Decimal::TWO,
    }
}

fn in_band(hour: u8, first: u8, last: u8) -> bool {
    if first <= last {
        (first..=last).contains(&hour)
    } else {
        hour >= first || hour <= last
    }
}

/// Marks the outlet a metric was asked for (`business_id`) among the outlets it ranks: each entry
/// gets `selected`, the body `selected_business_id`.
/// Names each ranked outlet (`name`: its configured `business_name`, null when none is set).
pub fn name_outlets(body: &mut Value, names: &BTreeMap<String, String>) {
    if let Some(outlets) = body.get_mut("outlets").and_then(Value::as_array_mut) {
        for entry in outlets {
            let name = entry["business_id"].as_str().and_then(|id| names.get(id));
            entry["name"] = json!(name);
        }
    }
}

pub fn mark_chosen(body: &mut Value, chosen: &str) {
    if let Some(outlets) = body.get_mut("outlets").and_then(Value::as_array_mut) {
        for entry in outlets {
            let selected = entry["business_id"] == chosen;
            entry["selected"] = json!(selected);
        }
    }
    body["selected_business_id"] = json!(chosen);
}

fn sum_rows(rows: &[&Value], field: &str) -> u64 {
    rows.iter().filter_map(|row| row.get(field).and_then(Value::as_u64)).sum()
}

/// One metric's answer. `rows` covers the previous period and the period.
pub fn answer(
    metric: Metric,
    period: &Period,
    rows: &BTreeMap<String, Figures>,
    extras: &Extras,
    limit: usize,
) -> Value {
    let now = sum(rows, &period.start, &period.end);
    let before = sum(rows, &period.previous_start, &period.previous_end);
    let mut body = match metric {
        Metric::Summary => {
            let best = rows
                .range(period.start.clone()..=period.end.clone())
                .filter(|(_, f)| f.orders > 0)
                .max_by(|a, b| a.1.revenue_units.cmp(&b.1.revenue_units).then(b.0.cmp(a.0)))
                .map(|(day, f)| json!({"date": day, "orders": f.orders, "revenue": money(f.revenue())}));
            json!({
                "totals": totals(&now),
                "previous": totals(&before),
                "change": changes(&now, &before),
                "best_day": best,
                "active_outlets": now.outlets.len(),
            })
        }
        Metric::Orders => {
            let series: Vec<Value> = period
                .each_day()
                .into_iter()
                .map(|day| {
                    let f = rows.get(&day).cloned().unwrap_or_default();
                    let mut entry = totals(&f);
                    entry["date"] = json!(day);
                    entry
                })
                .collect();
            json!({"series": series, "totals": totals(&now), "previous": totals(&before), "change": changes(&now, &before)})
        }
        Metric::Fulfillment => {
            let mut channels: Vec<(&String, &super::Fulfilment)> = now.channels.iter().collect();
            channels.sort_by(|a, b| b.1.orders.cmp(&a.1.orders).then(a.0.cmp(b.0)));
            let channels: Vec<Value> = channels
                .into_iter()
                .map(|(name, c)| {
                    let minutes = |sum: Decimal, n: i64| if n == 0 { Value::Null } else { money(average(sum, n)) };
                    json!({
                        "channel": name, "orders": c.orders, "revenue": money(c.revenue()),
                        "share": share(c.orders.into(), now.orders.into()),
                        "average_order_value": money(average(c.revenue(), c.orders)),
                        "avg_prep_minutes": minutes(c.prep_minutes(), c.prep_orders),
                        "avg_delivery_minutes": minutes(c.delivery_minutes(), c.delivery_orders),
                    })
                })
                .collect();
            json!({"channels": channels, "orders": now.orders})
        }
        Metric::Outlets => {
            let mut revenues: Vec<Decimal> = now.outlets.values().map(|t| t.revenue()).collect();
            let median = median(&mut revenues);
            let outlets: Vec<Value> = ranked(&now.outlets, "business_id", "orders", true, now.revenue())
                .into_iter()
                .enumerate()
                .map(|(rank, mut entry)| {
                    let id = entry["business_id"].as_str().unwrap_or_default().to_owned();
                    let (tally, previous) = (&now.outlets[&id], before.outlets.get(&id).cloned().unwrap_or_default());
                    entry["rank"] = json!(rank + 1);
                    entry["average_order_value"] = money(average(tally.revenue(), tally.n));
                    entry["previous_revenue"] = money(previous.revenue());
                    entry["change"] = change(tally.revenue(), previous.revenue());
                    entry["underperforming"] =
                        json!(tally.revenue() < median * (Decimal::ONE - UNDERPERFORMING_MARGIN));
                    entry
                })
                .collect();
            json!({"outlets": outlets, "median_revenue": money(median)})
        }
        Metric::HourHeatmap => {
            let mut cells = vec![vec![Tally::default(); 24]; 7];
            for (day, f) in rows.range(period.start.clone()..=period.end.clone()) {
                let Some(weekday) = weekday(day) else { continue };
                for (hour, tally) in f.hours.iter().enumerate().take(24) {
                    cells[weekday as usize][hour].merge(tally);
                }
            }
            let mut peak: Option<(usize, usize, i64)> = None;
            let mut out = Vec::new();
            for (weekday, hours) in cells.iter().enumerate() {
                for (hour, tally) in hours.iter().enumerate() {
                    if tally.n > 0 && peak.is_none_or(|(_, _, n)| tally.n > n) {
                        peak = Some((weekday, hour, tally.n));
                    }
                    out.push(json!({"weekday": weekday, "day_name": WEEKDAYS[weekday], "hour": hour,
                                    "orders": tally.n, "revenue": money(tally.revenue())}));
                }
            }
            let peak = peak.map(|(w, h, n)| json!({"weekday": w, "day_name": WEEKDAYS[w], "hour": h, "orders": n}));
            json!({"cells": out, "peak": peak})
        }
        Metric::MealBreakdown => {
            let bands: Vec<Value> = MEAL_BANDS
                .iter()
                .map(|(band, first, last)| {
                    let mut tally = Tally::default();
                    for (hour, t) in now.hours.iter().enumerate() {
                        if in_band(hour as u8, *first, *last) {
                            tally.merge(t);
                        }
                    }
                    json!({"band": band, "from_hour": first, "to_hour": last, "orders": tally.n,
                           "revenue": money(tally.revenue()), "share": share(tally.n.into(), now.orders.into())})
                })
                .collect();
            json!({"bands": bands, "orders": now.orders})
        }
        Metric::Items => {
            let items = same_items(&now.items);
            let whole = items.values().map(|t| t.revenue()).sum();
            json!({"items": ranked(&items, "name", "quantity", true, whole), "item_revenue": money(whole)})
        }
        Metric::TopItems => {
            let items = same_items(&now.items);
            let whole = items.values().map(|t| t.revenue()).sum();
            let top = |by_revenue| {
                let mut list = ranked(&items, "name", "quantity", by_revenue, whole);
                list.truncate(limit);
                list
            };
            json!({"limit": limit, "by_quantity": top(false), "by_revenue": top(true)})
        }
        Metric::Geo => json!({
            "cities": ranked(&now.cities, "city", "orders", false, now.revenue()),
            "pincodes": ranked(&now.pincodes, "pincode", "orders", false, now.revenue()),
        }),
        Metric::SpecialDays => {
            let marked: BTreeMap<&str, &str> =
                extras.special.iter().map(|d| (d.date.as_str(), d.label.as_str())).collect();
            let (mut special, mut ordinary) = ((0i64, Figures::default()), (0i64, Figures::default()));
            let mut days = Vec::new();
            for day in period.each_day() {
                let f = rows.get(&day).cloned().unwrap_or_default();
                let label = marked
                    .get(day.as_str())
                    .map(|l| (*l).to_owned())
                    .or_else(|| weekday(&day).filter(|w| *w >= 5).map(|w| WEEKDAYS[w as usize].to_owned()));
                let slot = if label.is_some() { &mut special } else { &mut ordinary };
                slot.0 += 1;
                slot.1.merge(&f);
                if let Some(label) = label {
                    days.push(json!({"date": day, "label": label, "orders": f.orders, "revenue": money(f.revenue())}));
                }
            }
            let side = |(count, f): &(i64, Figures)| {
                json!({"days": count, "orders": f.orders, "revenue": money(f.revenue()),
                       "orders_per_day": money(average(f.orders.into(), *count)),
                       "revenue_per_day": money(average(f.revenue(), *count)),
                       "average_order_value": money(average(f.revenue(), f.orders))})
            };
            let per_day = |(count, f): &(i64, Figures)| average(f.revenue(), *count);
            json!({"special": side(&special), "ordinary": side(&ordinary),
                   "revenue_per_day_lift": change(per_day(&special), per_day(&ordinary)), "days": days})
        }
        Metric::Underperforming => {
            let names: BTreeSet<&String> = now.outlets.keys().chain(before.outlets.keys()).collect();
            let mut revenues: Vec<Decimal> =
                names.iter().map(|id| now.outlets.get(*id).map_or(Decimal::ZERO, |t| t.revenue())).collect();
            let median = median(&mut revenues);
            let threshold = median * (Decimal::ONE - UNDERPERFORMING_MARGIN);
            let mut outlets: Vec<(Decimal, Value)> = names
                .iter()
                .filter_map(|id| {
                    let tally = now.outlets.get(*id).cloned().unwrap_or_default();
                    (tally.revenue() < threshold).then(|| {
                        let gap = ratio(median - tally.revenue(), median);
                        (
                            tally.revenue(),
                            json!({"business_id": id, "orders": tally.n, "revenue": money(tally.revenue()),
                               "below_median": share(median - tally.revenue(), median), "gap": gap.round_dp(4).to_f64()}),
                        )
                    })
                })
                .collect();
            outlets.sort_by_key(|a| a.0);
            json!({"figure": "revenue", "margin": UNDERPERFORMING_MARGIN.to_f64(), "median": money(median),
                   "threshold": money(threshold), "outlets_compared": names.len(),
                   "outlets": outlets.into_iter().map(|(_, v)| v).collect::<Vec<_>>()})
        }
        Metric::Campaigns => {
            let bills: Vec<&Value> = extras.bills.iter().collect();
            let feedback: Vec<&Value> = extras.feedback.iter().collect();
            let (sent, opened) = (sum_rows(&bills, "total_bill_sent"), sum_rows(&bills, "unique_clicks"));
            let (asked, answered) =
                (sum_rows(&feedback, "total_feedback_sent"), sum_rows(&feedback, "total_submitted"));
            let mut by_type: BTreeMap<String, [u64; 4]> = BTreeMap::new();
            let mut revenue_by_type: BTreeMap<String, Decimal> = BTreeMap::new();
            let mut holdout = [0u64; 2];
            for (kind, row) in &extras.journeys {
                if row.mode == "holdout" {
                    holdout[0] += u64::from(row.customers);
                    holdout[1] += u64::from(row.converted);
                    continue;
                }
                let entry = by_type.entry(kind.clone()).or_default();
                for (slot, value) in entry.iter_mut().zip([row.customers, row.delivered, row.converted, row.orders]) {
                    *slot += u64::from(value);
                }
                *revenue_by_type.entry(kind.clone()).or_default() += row.revenue;
            }
            let journeys: Vec<Value> = by_type
                .iter()
                .map(|(kind, [customers, delivered, converted, orders])| {
                    let revenue = revenue_by_type.get(kind).copied().unwrap_or_default();
                    json!({"campaign_type": kind, "customers": customers, "delivered": delivered,
                           "converted": converted, "orders": orders, "revenue": money(revenue),
                           "conversion_rate": share((*converted).into(), (*customers).into())})
                })
                .collect();
            let all = by_type.values().fold([0u64; 4], |mut acc, row| {
                for (a, v) in acc.iter_mut().zip(row) {
                    *a += v;
                }
                acc
            });
            let skips: Vec<&Value> = extras.consent_skips.iter().collect();
            let skipped = [sum_rows(&skips, "sms"), sum_rows(&skips, "chat"), sum_rows(&skips, "push")];
            let receipts: Vec<&Value> = extras.receipts.iter().collect();
            let by_channel = |channel: &str| {
                let [delivered, read, failed] =
                    ["delivered", "read", "failed"].map(|status| sum_rows(&receipts, &format!("{channel}_{status}")));
                json!({"delivered": delivered, "read": read, "failed": failed})
            };
            let (sms, chat) = (by_channel("sms"), by_channel("chat"));
            let total = |status: &str| sms[status].as_u64().unwrap_or(0) + chat[status].as_u64().unwrap_or(0);
            json!({
                "receipts": {"delivered": total("delivered"), "read": total("read"), "failed": total("failed"),
                             "sms": sms, "chat": chat},
                "skipped_for_consent": {"total": skipped.iter().sum::<u64>(), "sms": skipped[0], "chat": skipped[1],
                                        "push": skipped[2]},
                "bills": {"sent": sent, "sms": sum_rows(&bills, "total_sms_sent"), "chat": sum_rows(&bills, "total_chat_sent"),
                          "opens": sum_rows(&bills, "total_clicks"), "unique_opens": opened,
                          "open_rate": share(opened.into(), sent.into())},
                "feedback": {"sent": asked, "opens": sum_rows(&feedback, "total_clicks"),
                             "unique_opens": sum_rows(&feedback, "unique_clicks"), "submitted": answered,
                             "response_rate": share(answered.into(), asked.into())},
                "journeys": {"customers": all[0], "delivered": all[1], "converted": all[2], "orders": all[3],
                             "revenue": money(revenue_by_type.values().copied().sum()),
                             "conversion_rate": share(all[2].into(), all[0].into()),
                             "holdout": {"customers": holdout[0], "converted": holdout[1],
                                         "conversion_rate": share(holdout[1].into(), holdout[0].into())},
                             "by_type": journeys},
            })
        }
    };
    body["period"] = period.json();
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_spelled_many_ways_is_one_under_the_spelling_sold_most() {
        let items: BTreeMap<String, Tally> = [
            ("filter coffee", (2, 200)),
            ("Filter Coffee", (5, 500)),
            ("FILTER  coffee ", (1, 100)),
            ("Idli", (3, 90)),
        ]
        .into_iter()
        .map(|(name, figures)| (name.to_owned(), Tally::from(figures)))
        .collect();
        let same = same_items(&items);
        assert_eq!(same.len(), 2, "{same:?}");
        assert_eq!(same["Filter Coffee"], Tally::from((8, 800)));
        assert_eq!(same["Idli"], Tally::from((3, 90)));
    }
}
