//! What every page engage shows a person shares: the HTML shell (viewport, favicon, base style),
//! escaping, a text colour readable on any brand colour, money in ₹ and times in IST, the
//! favicon itself, and [`html_errors`], which answers a browser's page request that fails with an
//! HTML page instead of the API's JSON error.
//!
//! The pages themselves: [`crate::platform::pages::bill_page`] (`/b/{bill_id}`),
//! [`crate::platform::pages::feedback_page`] (`/f/{token}`) and [`crate::platform::pages::dashboard`]
//! (`/dashboard`).

use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, NaiveDateTime, Utc};
use engage_actors::domain::time::ist;
use rust_decimal::Decimal;

/// The default colour of a brand that configured none.
pub const DEFAULT_COLOR: &str = "#1f6feb";

/// The icon of every page (an SVG: a speech bubble in engage's blue).
pub const FAVICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 32 32\"><rect width=\"32\" height=\"32\" rx=\"7\" fill=\"#1f3a5f\"/>\
<path d=\"M8 9h16a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2h-9l-5 4v-4H8a2 2 0 0 1-2-2v-9a2 2 0 0 1 2-2z\" fill=\"#fff\"/></svg>";

/// The base style of the customer pages (the bill and the feedback form).
const BASE_STYLE: &str = "*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;background:#f4f5f7;color:#1d2330}\
main{max-width:480px;margin:0 auto;padding:0 0 24px}header.brand{padding:20px 16px}header.brand h1{margin:0;font-size:21px}\
header.brand p{margin:4px 0 0;font-size:15px}section{background:#fff;margin:12px;border-radius:12px;padding:16px;box-shadow:0 1px 3px rgba(0,0,0,.08)}\
h2{font-size:17px;margin:0 0 8px}.muted{color:#4b5563;font-size:14px}a{color:#1a56c4}\
a.btn,button.btn{display:block;width:100%;text-align:center;text-decoration:none;border:0;border-radius:8px;padding:12px;font:inherit;font-weight:600;margin-top:10px;cursor:pointer}\
a:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible,select:focus-visible{outline:3px solid #1d2330;outline-offset:2px}";

/// `text` safe inside HTML text and quoted attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A brand colour: `color` when it is `#rrggbb`, else [`DEFAULT_COLOR`].
pub fn brand_color(color: Option<&str>) -> &str {
    color.filter(|c| engage_actors::capabilities::branding::hex_color(c)).unwrap_or(DEFAULT_COLOR)
}

/// WCAG relative luminance of `#rrggbb` (0 for anything else).
fn luminance(color: &str) -> f64 {
    let channel = |i: usize| {
        let v = color.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()).unwrap_or(0) as f64 / 255.0;
        if v <= 0.03928 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
}

/// The WCAG contrast ratio of two `#rrggbb` colours.
pub fn contrast(a: &str, b: &str) -> f64 {
    let (x, y) = (luminance(a), luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

/// The text colour to write on `background`: white or near-black, whichever reads better.
pub fn text_on(background: &str) -> &'static str {
    if contrast(background, "#ffffff") >= contrast(background, "#111827") {
        "#ffffff"
    } else {
        "#111827"
    }
}

/// `amount` in rupees, two decimals, Indian digit grouping: `₹1,23,456.50`.
pub fn rupees(amount: Decimal) -> String {
    let fixed = format!("{:.2}", amount.round_dp(2).abs());
    let (whole, cents) = fixed.split_once('.').unwrap_or((&fixed, "00"));
    let mut grouped = String::new();
    let digits: Vec<char> = whole.chars().collect();
    let n = digits.len();
    for (i, d) in digits.iter().enumerate() {
        let rest = n - i - 1;
        grouped.push(*d);
        if rest == 3 || (rest > 3 && (rest - 3).is_multiple_of(2)) {
            grouped.push(',');
        }
    }
    let sign = if amount.is_sign_negative() && !amount.round_dp(2).is_zero() { "-" } else { "" };
    format!("{sign}\u{20b9}{grouped}.{cents}")
}

/// An order time as people read it, in IST: `25 Nov 2026, 5:11 pm`. A time with an offset (RFC
/// 3339) is converted; one without (`2026-11-25 17:11:12`, what POS systems send) is taken as IST
/// already. `None` for a text that is no time.
pub fn ist_time(text: &str) -> Option<String> {
    let text = text.trim();
    let local =
        DateTime::parse_from_rfc3339(text).map(|t| t.with_timezone(&ist()).naive_local()).ok().or_else(|| {
            ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M"]
                .iter()
                .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        })?;
    Some(local.format("%-d %b %Y, %-I:%M %P").to_string())
}

/// `at` in IST as [`ist_time`] writes it.
pub fn ist_instant(at: DateTime<Utc>) -> String {
    at.with_timezone(&ist()).format("%-d %b %Y, %-I:%M %P").to_string()
}

/// A whole customer page: `title`, the shared style plus `style`, `body` inside `<main>`.
pub fn shell(title: &str, style: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{title}</title>\
<link rel=\"icon\" href=\"/favicon.ico\" type=\"image/svg+xml\"><style>{BASE_STYLE}{style}</style></head>\
<body>{body}</body></html>",
        title = escape(title)
    )
}

/// A page that only says something: a heading, a text, and (optionally) a link onwards.
pub fn message(title: &str, text: &str, link: Option<(&str, &str)>) -> String {
    let link = link
        .map(|(href, label)| format!("<p><a href=\"{}\">{}</a></p>", escape(href), escape(label)))
        .unwrap_or_default();
    shell(
        title,
        "",
        &format!(
            "<main><section><h1 style=\"font-size:20px;margin:0 0 8px\">{}</h1><p>{}</p>{link}</section></main>",
            escape(title),
            escape(text)
        ),
    )
}

/// `GET /favicon.ico`: [`FAVICON`] (browsers take an SVG there).
pub async fn favicon() -> Response {
    ([(header::CONTENT_TYPE, "image/svg+xml"), (header::CACHE_CONTROL, "public, max-age=86400")], FAVICON)
        .into_response()
}

/// Whether a request is a browser asking for a page: `GET`/`HEAD` whose `Accept` names
/// `text/html` (API clients send `application/json`, `*/*` or nothing).
fn wants_page(method: &Method, headers: &HeaderMap) -> bool {
    (method == Method::GET || method == Method::HEAD)
        && headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).any(|v| v.contains("text/html"))
}

/// Turns a JSON error answer to a browser's page request into an HTML page with the same status
/// (and `Allow`/`Retry-After`): a person who types a wrong address sees words, not JSON. API
/// callers (no `text/html` in `Accept`) get the JSON of their route's family unchanged.
pub async fn html_errors(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let page = wants_page(request.method(), request.headers());
    let response = next.run(request).await;
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !page || !json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (title, text) = match status {
        StatusCode::NOT_FOUND => ("Page not found", "There is no page at this address. Check the link you followed."),
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            ("Not signed in", "This address is for programs with a credential, not a page to open in a browser.")
        }
        StatusCode::METHOD_NOT_ALLOWED => ("Not a page", "This address takes requests from programs, not a browser."),
        s if s.is_server_error() => ("Something went wrong", "Please try again in a moment."),
        _ => ("This address is not a page", "It answers requests from programs; check the link you followed."),
    };
    let mut html = (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        message(title, text, Some(("/dashboard", "Go to the dashboard"))),
    )
        .into_response();
    for name in [header::ALLOW, header::RETRY_AFTER] {
        if let Some(value) = response.headers().get(&name) {
            html.headers_mut().insert(name, value.clone());
        }
    }
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_links_are_escaped() {
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    #[test]
    fn text_colour_reads_on_light_and_dark_brands() {
        for color in ["#facc15", "#ffffff", "#a3e635", "#1f6feb", "#000000", "#7c3aed", "#f97316", "#22c55e"] {
            let text = text_on(color);
            assert!(contrast(color, text) >= 4.5, "{color} with {text}: {:.2}", contrast(color, text));
        }
        assert_eq!(text_on("#facc15"), "#111827");
        assert_eq!(text_on("#1f3a5f"), "#ffffff");
    }

    #[test]
    fn rupees_have_two_decimals_and_indian_grouping() {
        let d = |s: &str| s.parse::<Decimal>().unwrap_or_default();
        assert_eq!(rupees(d("0")), "\u{20b9}0.00");
        assert_eq!(rupees(d("5.5")), "\u{20b9}5.50");
        assert_eq!(rupees(d("999.999")), "\u{20b9}1,000.00");
        assert_eq!(rupees(d("123456.78")), "\u{20b9}1,23,456.78");
        assert_eq!(rupees(d("12345678")), "\u{20b9}1,23,45,678.00");
        assert_eq!(rupees(d("-250")), "-\u{20b9}250.00");
    }

    #[test]
    fn order_times_read_as_ist() {
        assert_eq!(ist_time("2026-11-25 17:11:12").as_deref(), Some("25 Nov 2026, 5:11 pm"));
        assert_eq!(ist_time("2026-11-25T11:41:12Z").as_deref(), Some("25 Nov 2026, 5:11 pm"));
        assert_eq!(ist_time("2026-01-05T09:00:00+05:30").as_deref(), Some("5 Jan 2026, 9:00 am"));
        assert_eq!(ist_time("soon"), None);
    }
}
