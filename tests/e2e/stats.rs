//! The `/stats` metrics against a recomputation from the raw orders: random orders over 20 days
//! and 4 outlets, random updates (amount, items, day, hour, channel moved) and replays, then every
//! route's figures compared with what the test computes itself from the final version of each
//! order.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Datelike, NaiveDate};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::loyalty::post;
use crate::platform::create_token;

const ITEMS: [(&str, i64); 8] = [
    ("masala dosa", 12_050),
    ("filter coffee", 4_000),
    ("idli", 6_000),
    ("vada", 5_550),
    ("paneer roll", 15_000),
    ("lassi", 7_000),
    ("thali", 25_000),
    ("gulab jamun", 3_525),
];
const CHANNELS: [Option<&str>; 4] = [Some("dine-in"), Some("takeaway"), Some("Delivery"), None];
const CITIES: [Option<&str>; 3] = [Some("Pune"), Some("Mumbai"), None];

/// One version of an order, money in paise.
#[derive(Clone, Debug)]
struct Version {
    outlet: String,
    id: String,
    phone: String,
    day: NaiveDate,
    hour: u32,
    items: Vec<(&'static str, i64, i64)>,
    discount: i64,
    channel: Option<&'static str>,
    city: Option<&'static str>,
    prep: Option<i64>,
}

fn rupees(paise: i64) -> f64 {
    paise as f64 / 100.0
}

impl Version {
    fn random(rng: &mut StdRng, outlet: String, id: String, phone: String) -> Self {
        let mut v = Self {
            outlet,
            id,
            phone,
            day: NaiveDate::default(),
            hour: 0,
            items: Vec::new(),
            discount: 0,
            channel: None,
            city: None,
            prep: None,
        };
        v.shuffle(rng);
        v
    }

    /// New content: day, hour, items, discount, channel, city.
    fn shuffle(&mut self, rng: &mut StdRng) {
        self.day = NaiveDate::from_ymd_opt(2026, 10, rng.gen_range(1..=20)).unwrap();
        self.hour = rng.gen_range(0..24);
        self.items = (0..rng.gen_range(1..=3))
            .map(|_| {
                let (name, price) = ITEMS[rng.gen_range(0..ITEMS.len())];
                (name, rng.gen_range(1..=3), price)
            })
            .collect();
        self.discount = if rng.gen_bool(0.3) { 1_000 } else { 0 };
        self.channel = CHANNELS[rng.gen_range(0..CHANNELS.len())];
        self.city = CITIES[rng.gen_range(0..CITIES.len())];
        self.prep = rng.gen_bool(0.5).then(|| rng.gen_range(5..40));
    }

    fn gross(&self) -> i64 {
        self.items.iter().map(|(_, qty, price)| qty * price).sum()
    }

    fn amount(&self) -> i64 {
        (self.gross() - self.discount).max(0)
    }

    fn payload(&self, brand: &str) -> Value {
        let mut body = json!({
            "parentBusinessId": brand, "businessId": self.outlet, "orderId": self.id,
            "customer": {"name": "Guest", "phone": self.phone},
            "items": self.items.iter().map(|(name, qty, price)| json!({"name": name, "qty": qty, "price": rupees(*price)})).collect::<Vec<_>>(),
            "amount": rupees(self.amount()), "discount": rupees(self.discount),
            "orderTime": format!("{} {:02}:17:00", self.day, self.hour),
        });
        if let Some(channel) = self.channel {
            body["channel"] = json!(channel);
        }
        if let Some(city) = self.city {
            body["customer"]["city"] = json!(city);
            body["pincode"] = json!(if city == "Pune" { "411001" } else { "400001" });
        }
        if let Some(prep) = self.prep {
            body["prepMinutes"] = json!(prep);
        }
        body
    }
}

/// The orders' final versions, and which of them were each customer's first.
struct Truth {
    orders: BTreeMap<String, Version>,
    first: BTreeSet<String>,
}

/// Sums of a set of orders, in paise.
#[derive(Default, Debug, Clone, Copy, PartialEq)]
struct Sums {
    orders: i64,
    revenue: i64,
    discounts: i64,
    new_customers: i64,
    points: i64,
}

impl Truth {
    fn within(&self, start: &str, end: &str) -> impl Iterator<Item = (&String, &Version)> {
        let (start, end) = (start.parse::<NaiveDate>().unwrap(), end.parse::<NaiveDate>().unwrap());
        self.orders.iter().filter(move |(_, v)| v.day >= start && v.day <= end)
    }

    fn sums<'a>(&self, orders: impl Iterator<Item = (&'a String, &'a Version)>) -> Sums {
        let mut s = Sums::default();
        for (key, v) in orders {
            s.orders += 1;
            s.revenue += v.amount();
            s.discounts += v.discount;
            s.new_customers += i64::from(self.first.contains(key));
            s.points += v.amount() / 1000; // 10% of the amount in rupees, whole points
        }
        s
    }
}

fn close(answer: &Value, paise: i64, what: &str, seed: u64) {
    let got = answer.as_f64().unwrap_or_else(|| panic!("{what}: not a number: {answer} (seed {seed})"));
    assert!((got - rupees(paise)).abs() < 1e-6, "{what}: {got} != {} (seed {seed})", rupees(paise));
}

fn check_totals(totals: &Value, sums: Sums, what: &str, seed: u64) {
    assert_eq!(totals["orders"], json!(sums.orders), "{what} orders (seed {seed}): {totals}");
    close(&totals["revenue"], sums.revenue, &format!("{what} revenue"), seed);
    close(&totals["discounts"], sums.discounts, &format!("{what} discounts"), seed);
    assert_eq!(totals["new_customers"], json!(sums.new_customers), "{what} new (seed {seed})");
    assert_eq!(totals["returning_orders"], json!(sums.orders - sums.new_customers), "{what} returning (seed {seed})");
    assert_eq!(totals["points_earned"], json!(sums.points), "{what} points (seed {seed})");
}

pub(crate) async fn stats(app: &TestApp, staff: &str, path: &str, body: Value) -> Value {
    let (status, answer) = post(app, path, &[("token", staff)], &body).await;
    assert_eq!(status, 200, "{path}: {answer}");
    answer["data"].clone()
}

#[tokio::test]
async fn every_metric_equals_a_recomputation_from_the_raw_orders() {
    // a failure prints its seed; ENGAGE_TEST_STATS_SEED replays it
    let seed: u64 =
        std::env::var("ENGAGE_TEST_STATS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    let mut rng = StdRng::seed_from_u64(seed);
    let app = spawn_app(&[]).await;
    let brand = "stats-brand";
    let staff = create_token(&app, "staff", brand).await;
    let integration = create_token(&app, "integration", brand).await;
    let rules = json!({"parent_business_id": brand, "earn_percent": 10, "min_bill": 0, "min_redeem_points": 1, "max_redeem_percent": 100});
    assert_eq!(post(&app, "/crm_api/add_edit_rules", &[("token", &staff)], &rules).await.0, 200);

    let mut truth = Truth { orders: BTreeMap::new(), first: BTreeSet::new() };
    let mut seen_phones = BTreeSet::new();
    let mut sent = 0;
    let send = |v: &Version| {
        let body = v.payload(brand);
        let app = &app;
        async move {
            let (status, answer) = post(app, "/injestion/platform", &[], &body).await;
            assert_eq!(status, 200, "{answer}");
        }
    };
    for n in 0..300 {
        let key = format!("o{}/{}", rng.gen_range(1..=4), 1000 + n);
        let (outlet, id) = key.split_once('/').unwrap();
        let phone = format!("98{:08}", rng.gen_range(0..40));
        let v = Version::random(&mut rng, outlet.to_owned(), id.to_owned(), phone.clone());
        send(&v).await;
        sent += 1;
        if seen_phones.insert(phone) {
            truth.first.insert(key.clone());
        }
        truth.orders.insert(key, v);
        // now and then an update of an earlier order (new content, new amount) or a replay
        if n % 4 == 3 {
            let keys: Vec<String> = truth.orders.keys().cloned().collect();
            let key = &keys[rng.gen_range(0..keys.len())];
            let mut v = truth.orders[key].clone();
            if rng.gen_bool(0.5) {
                let before = v.amount();
                while v.amount() == before {
                    v.shuffle(&mut rng);
                }
                truth.orders.insert(key.clone(), v.clone());
            }
            send(&v).await;
            sent += 1;
        }
    }
    assert!(sent > 300);
    let all = truth.sums(truth.within("2026-10-01", "2026-10-20"));
    // processing is asynchronous: wait until the whole range adds up, then compare everything
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let summary = stats(
            &app,
            &staff,
            "/stats/dashboard/summary",
            json!({"parent_business_id": brand, "start": "2026-10-01", "end": "2026-10-20"}),
        )
        .await;
        let totals = &summary["totals"];
        if totals["orders"] == json!(all.orders)
            && (totals["revenue"].as_f64().unwrap() - rupees(all.revenue)).abs() < 1e-6
        {
            check_totals(totals, all, "all days", seed);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never added up: {summary} vs {all:?} (seed {seed})");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    let (start, end) = ("2026-10-06", "2026-10-15");
    let period = json!({"parent_business_id": brand, "start": start, "end": end});
    let now = truth.sums(truth.within(start, end));
    let before = truth.sums(truth.within("2026-09-26", "2026-10-05"));

    // summary: the period and the previous one
    let summary = stats(&app, &staff, "/stats/dashboard/summary", period.clone()).await;
    check_totals(&summary["totals"], now, "summary", seed);
    check_totals(&summary["previous"], before, "previous", seed);
    assert_eq!(summary["period"]["previous"], json!({"start": "2026-09-26", "end": "2026-10-05"}));

    // orders: every day of the period
    let orders = stats(&app, &staff, "/stats/metrics/orders", period.clone()).await;
    let series = orders["series"].as_array().unwrap();
    assert_eq!(series.len(), 10);
    for entry in series {
        let day = entry["date"].as_str().unwrap();
        check_totals(entry, truth.sums(truth.within(day, day)), day, seed);
    }

    // one outlet only
    let outlet = stats(
        &app,
        &staff,
        "/stats/dashboard/summary",
        json!({"parent_business_id": brand, "business_id": "o2", "start": start, "end": end}),
    )
    .await;
    check_totals(&outlet["totals"], truth.sums(truth.within(start, end).filter(|(_, v)| v.outlet == "o2")), "o2", seed);

    // outlets ranked by revenue, and the underperforming ones
    let mut by_outlet: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for (_, v) in truth.within(start, end) {
        let e = by_outlet.entry(v.outlet.clone()).or_default();
        e.0 += 1;
        e.1 += v.amount();
    }
    let outlets = stats(&app, &staff, "/stats/metrics/outlets", period.clone()).await;
    let ranked: Vec<(String, i64)> = outlets["outlets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["business_id"].as_str().unwrap().to_owned(), o["orders"].as_i64().unwrap()))
        .collect();
    let mut expected: Vec<(&String, &(i64, i64))> = by_outlet.iter().collect();
    expected.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(b.1 .0.cmp(&a.1 .0)).then(a.0.cmp(b.0)));
    assert_eq!(ranked, expected.iter().map(|(k, v)| ((*k).clone(), v.0)).collect::<Vec<_>>(), "seed {seed}");
    let mut revenues: Vec<i64> = by_outlet.values().map(|v| v.1).collect();
    revenues.sort();
    let median2 = match revenues.len() {
        0 => 0,
        n if n % 2 == 1 => 2 * revenues[n / 2],
        n => revenues[n / 2 - 1] + revenues[n / 2],
    };
    // an even count's median can end in half a paisa: money is rounded half to even, as Decimal's
    // round_dp does
    let half = median2 / 2;
    let median = if median2 % 2 == 1 && half % 2 == 1 { half + 1 } else { half };
    close(&outlets["median_revenue"], median, "median", seed);
    let under = stats(&app, &staff, "/stats/metrics/underperforming", period.clone()).await;
    let flagged: Vec<&str> =
        under["outlets"].as_array().unwrap().iter().map(|o| o["business_id"].as_str().unwrap()).collect();
    // revenue < 0.8 × median, in whole paise × 10 to stay exact
    let mut expected: Vec<(&String, i64)> =
        by_outlet.iter().filter(|(_, v)| v.1 * 20 < median2 * 8).map(|(k, v)| (k, v.1)).collect();
    expected.sort_by_key(|(_, revenue)| *revenue);
    assert_eq!(flagged, expected.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), "seed {seed}: {under}");

    // heatmap: weekday × hour
    let mut cells: BTreeMap<(u32, u32), (i64, i64)> = BTreeMap::new();
    for (_, v) in truth.within(start, end) {
        let e = cells.entry((v.day.weekday().num_days_from_monday(), v.hour)).or_default();
        e.0 += 1;
        e.1 += v.amount();
    }
    let heatmap = stats(&app, &staff, "/stats/metrics/hour-heatmap", period.clone()).await;
    assert_eq!(heatmap["cells"].as_array().unwrap().len(), 168);
    for cell in heatmap["cells"].as_array().unwrap() {
        let at = (cell["weekday"].as_u64().unwrap() as u32, cell["hour"].as_u64().unwrap() as u32);
        let (n, revenue) = cells.get(&at).copied().unwrap_or_default();
        assert_eq!(cell["orders"], json!(n), "cell {at:?} (seed {seed})");
        close(&cell["revenue"], revenue, "cell revenue", seed);
    }

    // meal bands
    let bands = stats(&app, &staff, "/stats/metrics/meal-breakdown", period.clone()).await;
    let band_of = |hour: u32| match hour {
        6..=10 => "breakfast",
        11..=14 => "lunch",
        15..=18 => "snacks",
        19..=22 => "dinner",
        _ => "late_night",
    };
    for band in bands["bands"].as_array().unwrap() {
        let name = band["band"].as_str().unwrap();
        let mine: Vec<&Version> =
            truth.within(start, end).map(|(_, v)| v).filter(|v| band_of(v.hour) == name).collect();
        assert_eq!(band["orders"], json!(mine.len()), "{name} (seed {seed})");
        close(&band["revenue"], mine.iter().map(|v| v.amount()).sum(), name, seed);
    }

    // items and the top items
    let mut items: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    for (_, v) in truth.within(start, end) {
        for (name, qty, price) in &v.items {
            let e = items.entry(name).or_default();
            e.0 += qty;
            e.1 += qty * price;
        }
    }
    let answer = stats(&app, &staff, "/stats/metrics/items", period.clone()).await;
    let listed: BTreeMap<&str, (i64, f64)> = answer["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["name"].as_str().unwrap(), (i["quantity"].as_i64().unwrap(), i["revenue"].as_f64().unwrap())))
        .collect();
    assert_eq!(listed.keys().collect::<Vec<_>>(), items.keys().collect::<Vec<_>>(), "seed {seed}");
    for (name, (qty, revenue)) in &items {
        assert_eq!(listed[name].0, *qty, "{name} quantity (seed {seed})");
        assert!((listed[name].1 - rupees(*revenue)).abs() < 1e-6, "{name} revenue (seed {seed})");
    }
    let top = stats(
        &app,
        &staff,
        "/stats/metrics/top-items",
        json!({"parent_business_id": brand, "start": start, "end": end, "limit": 3}),
    )
    .await;
    let mut by_qty: Vec<(&&str, &(i64, i64))> = items.iter().collect();
    by_qty.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(b.1 .1.cmp(&a.1 .1)).then(a.0.cmp(b.0)));
    let names = |list: &Value| {
        list.as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(
        names(&top["by_quantity"]),
        by_qty.iter().take(3).map(|(n, _)| n.to_string()).collect::<Vec<_>>(),
        "seed {seed}"
    );

    // fulfilment channels (lower case; unspecified when absent) and prep time
    let mut channels: BTreeMap<String, (i64, i64, i64, i64)> = BTreeMap::new();
    for (_, v) in truth.within(start, end) {
        let e = channels.entry(v.channel.map_or("unspecified".to_owned(), str::to_lowercase)).or_default();
        e.0 += 1;
        e.1 += v.amount();
        if let Some(prep) = v.prep {
            e.2 += prep;
            e.3 += 1;
        }
    }
    let fulfilment = stats(&app, &staff, "/stats/metrics/fulfillment", period.clone()).await;
    let got: BTreeMap<String, (i64, f64, Option<f64>)> = fulfilment["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["channel"].as_str().unwrap().to_owned(),
                (c["orders"].as_i64().unwrap(), c["revenue"].as_f64().unwrap(), c["avg_prep_minutes"].as_f64()),
            )
        })
        .collect();
    assert_eq!(got.keys().collect::<Vec<_>>(), channels.keys().collect::<Vec<_>>(), "seed {seed}");
    for (name, (n, revenue, prep, preps)) in &channels {
        assert_eq!(got[name].0, *n, "{name} (seed {seed})");
        assert!((got[name].1 - rupees(*revenue)).abs() < 1e-6);
        match got[name].2 {
            Some(avg) => assert!((avg - *prep as f64 / *preps as f64).abs() < 0.006, "{name} prep (seed {seed})"),
            None => assert_eq!(*preps, 0),
        }
    }

    // geo
    let geo = stats(&app, &staff, "/stats/metrics/geo", period.clone()).await;
    for city in geo["cities"].as_array().unwrap() {
        let name = city["city"].as_str().unwrap();
        let n = truth.within(start, end).filter(|(_, v)| v.city.unwrap_or("unknown") == name).count();
        assert_eq!(city["orders"], json!(n), "{name} (seed {seed})");
    }
    let counted: i64 = geo["cities"].as_array().unwrap().iter().map(|c| c["orders"].as_i64().unwrap()).sum();
    assert_eq!(counted, now.orders);

    // special days: a marked day and the weekends against the rest
    let marked = json!({"parent_business_id": brand, "dates": ["2026-10-08"], "label": "Festival"});
    assert_eq!(stats(&app, &staff, "/stats/special-days", marked).await["days"][0]["label"], "Festival");
    let special = stats(&app, &staff, "/stats/metrics/special-days", period.clone()).await;
    let is_special =
        |d: NaiveDate| d.weekday().num_days_from_monday() >= 5 || d == NaiveDate::from_ymd_opt(2026, 10, 8).unwrap();
    let special_sums = truth.sums(truth.within(start, end).filter(|(_, v)| is_special(v.day)));
    assert_eq!(special["special"]["orders"], json!(special_sums.orders), "seed {seed}");
    close(&special["special"]["revenue"], special_sums.revenue, "special revenue", seed);
    assert_eq!(special["ordinary"]["orders"], json!(now.orders - special_sums.orders), "seed {seed}");
    assert_eq!(special["special"]["days"], json!(3), "a weekend and the festival: {special}");

    // campaigns: none of the capabilities ran for this brand
    let campaigns = stats(&app, &staff, "/stats/metrics/campaigns", period.clone()).await;
    assert_eq!(campaigns["bills"]["sent"], 0);
    assert_eq!(campaigns["journeys"]["customers"], 0);

    // points redeemed count on the day they are redeemed, at the outlet named
    let phone = truth.orders.values().find(|v| v.amount() >= 1000).unwrap().phone.clone();
    let redeem = json!({"customer_number": phone, "points": 1, "order_id": "R-1", "outlet_id": "o3"});
    let (status, answer) =
        post(&app, "/integration/v1/redeem_points", &[("authorization", &integration)], &redeem).await;
    assert_eq!(status, 200, "{answer}");
    let today =
        chrono::Utc::now().with_timezone(&chrono::FixedOffset::east_opt(19_800).unwrap()).date_naive().to_string();
    let day = stats(
        &app,
        &staff,
        "/stats/dashboard/summary",
        json!({"parent_business_id": brand, "business_id": "o3", "date": today}),
    )
    .await;
    assert_eq!(day["totals"]["points_redeemed"], 1, "{day}");

    // the period is read liberally: either order, one end (a week from it, or up to it), a long one
    // keeps its last 731 days; a day that is no date is refused naming it
    for (body, first, last) in [
        (json!({"start": "2026-10-06", "end": "2026-10-01"}), "2026-10-01", "2026-10-06"),
        (json!({"start": "2020-01-01", "end": "2026-10-01"}), "2024-10-01", "2026-10-01"),
        (json!({"start": "2026-10-06"}), "2026-10-06", "2026-10-12"),
        (json!({"end": "2026-10-06"}), "2026-09-30", "2026-10-06"),
    ] {
        let mut body = body;
        body["parent_business_id"] = json!(brand);
        let (status, answer) = post(&app, "/stats/metrics/orders", &[("token", &staff)], &body).await;
        assert_eq!(status, 200, "{body}: {answer}");
        let series = answer["data"]["series"].as_array().unwrap();
        assert_eq!((&series[0]["date"], &series[series.len() - 1]["date"]), (&json!(first), &json!(last)), "{body}");
    }
    let bad = json!({"parent_business_id": brand, "start": "2026-13-06", "end": "2026-10-06"});
    let (status, answer) = post(&app, "/stats/metrics/orders", &[("token", &staff)], &bad).await;
    assert_eq!((status, &answer["errors"][0]["pointer"]), (400, &json!("/start")), "{answer}");
    let (status, _) = post(&app, "/stats/metrics/orders", &[("token", "nope")], &period).await;
    assert_eq!(status, 403);
}
