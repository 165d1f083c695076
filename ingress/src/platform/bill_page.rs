//! The bill page engage serves at `GET /b/{bill_id}` when it is its own link service: one
//! mobile-first HTML document with inline CSS and a small inline script, no framework and no
//! external assets of its own (a banner image is the brand's URL). Widgets appear in their
//! `sequence`; the itemized receipt comes first when the business maps no receipt widget. The
//! script reports widget clicks, and the seconds each widget was on screen (when the page is
//! hidden), to `/crm_api/update/widget/insight` with the page's own token.

use std::fmt::Write;

use rust_decimal::Decimal;

use engage_actors::capabilities::bills::{Bill, BillWidget};

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

/// Only http(s) links are followed; anything else becomes `#`.
fn href(url: &str) -> String {
    let url = url.trim();
    if url.starts_with("https://") || url.starts_with("http://") {
        escape(url)
    } else {
        "#".to_owned()
    }
}

fn money(amount: Decimal) -> String {
    format!("{:.2}", amount.round_dp(2))
}

const STYLE: &str = "*{box-sizing:border-box}body{margin:0;font:16px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;background:#f4f5f7;color:#1d2330}\
main{max-width:480px;margin:0 auto;padding:0 0 24px}header{color:#fff;padding:20px 16px}header h1{margin:0;font-size:20px}\
header p{margin:4px 0 0;opacity:.9;font-size:14px}section{background:#fff;margin:12px;border-radius:12px;padding:16px;box-shadow:0 1px 3px rgba(0,0,0,.08)}\
h2{font-size:16px;margin:0 0 8px}table{width:100%;border-collapse:collapse;font-size:14px}td{padding:6px 0;vertical-align:top}\
td.n{text-align:right;white-space:nowrap}tr.t td{border-top:1px solid #e3e5ea;font-weight:600}.muted{color:#6b7280;font-size:13px}\
a.btn{display:block;text-align:center;color:#fff;text-decoration:none;border-radius:8px;padding:12px;font-weight:600;margin-top:8px}\
img{max-width:100%;border-radius:8px;display:block}.points{font-size:28px;font-weight:700}footer{margin:12px;text-align:center}";

const SCRIPT: &str = "(function(){var d=document.body.dataset,t=d.token,b=d.bill;\
function send(w,e,s){var body={bill_id:b,widget_id:+w,event_type:e};if(e==='watch'){body.watch_time=s}\
try{fetch('/crm_api/update/widget/insight',{method:'POST',keepalive:true,headers:{'Content-Type':'application/json','Authorization':'Bearer '+t},body:JSON.stringify(body)})}catch(_){}}\
var els=document.querySelectorAll('[data-widget]'),seen={},since={};\
els.forEach(function(el){el.addEventListener('click',function(){send(el.dataset.widget,'click')})});\
if('IntersectionObserver' in window){var io=new IntersectionObserver(function(es){var now=Date.now();es.forEach(function(e){var w=e.target.dataset.widget;\
if(e.isIntersecting){since[w]=since[w]||now}else if(since[w]){seen[w]=(seen[w]||0)+now-since[w];delete since[w]}})});els.forEach(function(el){io.observe(el)})}\
document.addEventListener('visibilitychange',function(){if(document.visibilityState!=='hidden'){return}var now=Date.now();\
Object.keys(since).forEach(function(w){seen[w]=(seen[w]||0)+now-since[w];since[w]=now});\
Object.keys(seen).forEach(function(w){var s=Math.round(seen[w]/1000);if(s>0){send(w,'watch',s)}})})})();";

fn receipt(bill: &Bill, out: &mut String, widget: Option<&BillWidget>) {
    let title = widget.map_or("Your bill", |w| if w.title.is_empty() { "Your bill" } else { &w.title });
    let id = widget.map(|w| format!(" data-widget=\"{}\"", w.widget_id)).unwrap_or_default();
    let _ = write!(out, "<section id=\"receipt\"{id}><h2>{}</h2><table>", escape(title));
    for item in &bill.items {
        let _ = write!(
            out,
            "<tr class=\"item\"><td>{} &times; {}</td><td class=\"n\">{}</td></tr>",
            escape(&item.name),
            item.qty,
            money(item.total)
        );
    }
    let order = &bill.order;
    let _ = write!(
        out,
        "<tr class=\"t\"><td>Subtotal</td><td class=\"n\" id=\"subtotal\">{}</td></tr>",
        money(order.subtotal)
    );
    if !order.discount.is_zero() {
        let _ =
            write!(out, "<tr><td>Discount</td><td class=\"n\" id=\"discount\">-{}</td></tr>", money(order.discount));
    }
    if !order.tax.is_zero() {
        let _ = write!(out, "<tr><td>Tax</td><td class=\"n\" id=\"tax\">{}</td></tr>", money(order.tax));
    }
    let _ = write!(
        out,
        "<tr class=\"t\"><td>Total paid</td><td class=\"n\" id=\"total\">{}</td></tr></table></section>",
        money(order.amount)
    );
}

fn widget(bill: &Bill, w: &BillWidget, color: &str, out: &mut String) {
    let id = w.widget_id;
    let title = escape(&w.title);
    match w.kind.as_str() {
        "itemized_receipt" => receipt(bill, out, Some(w)),
        "loyalty_info" => {
            let _ = write!(
                out,
                "<section class=\"widget\" id=\"loyalty\" data-widget=\"{id}\"><h2>{title}</h2><div class=\"points\">{}</div><div class=\"muted\">points earned on this order</div></section>",
                bill.order.loyalty_points
            );
        }
        "static_banner" => {
            let _ = write!(
                out,
                "<section class=\"widget\" id=\"banner\" data-widget=\"{id}\"><a href=\"{}\"><img src=\"{}\" alt=\"{title}\"></a></section>",
                href(&w.value),
                href(&w.static_banner_link)
            );
        }
        "feedback_link" => {
            let _ = write!(
                out,
                "<section class=\"widget\" id=\"feedback\" data-widget=\"{id}\"><h2>{title}</h2><a class=\"btn\" style=\"background:{color}\" href=\"{}\">Share feedback</a></section>",
                href(&bill.feedback_url)
            );
        }
        kind => {
            // upsell, profile completion: a title, a text, and a button when the value is a link
            let text = if href(&w.value) == "#" { format!("<p>{}</p>", escape(&w.value)) } else { String::new() };
            let button = if href(&w.value) == "#" {
                String::new()
            } else {
                format!("<a class=\"btn\" style=\"background:{color}\" href=\"{}\">Open</a>", href(&w.value))
            };
            let _ = write!(
                out,
                "<section class=\"widget\" id=\"{}\" data-widget=\"{id}\"><h2>{title}</h2>{text}{button}</section>",
                escape(kind)
            );
        }
    }
}

/// The page of `bill`; `token` lets its script report widget events for this bill.
pub fn render(bill: &Bill, token: &str) -> String {
    let color = if bill.brand_color.len() == 7
        && bill.brand_color.starts_with('#')
        && bill.brand_color[1..].bytes().all(|b| b.is_ascii_hexdigit())
    {
        bill.brand_color.as_str()
    } else {
        "#1f6feb"
    };
    let mut out = String::with_capacity(8 * 1024);
    let _ = write!(
        out,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>Bill {order}</title><style>{STYLE}</style></head><body data-bill=\"{bill_id}\" data-token=\"{token}\"><main>\
<header style=\"background:{color}\"><h1>Thank you{name}</h1><p>Order <span id=\"order-id\">{order}</span>{time}</p></header>",
        order = escape(&bill.order_id),
        bill_id = escape(&bill.bill_id),
        token = escape(token),
        name = if bill.name.is_empty() { String::new() } else { format!(", {}", escape(&bill.name)) },
        time = bill.order.order_time.as_deref().map(|t| format!(" &middot; {}", escape(t))).unwrap_or_default(),
    );
    if !bill.widgets.iter().any(|w| w.kind == "itemized_receipt") {
        receipt(bill, &mut out, None);
    }
    for w in &bill.widgets {
        widget(bill, w, color, &mut out);
    }
    if let Some(label) = &bill.footer_button {
        let _ = write!(
            out,
            "<footer><a class=\"btn\" style=\"background:{color}\" href=\"javascript:window.print()\">{}</a></footer>",
            escape(label)
        );
    }
    let _ = write!(out, "</main><script>{SCRIPT}</script></body></html>");
    out
}

/// A page that only says something (unknown or expired link).
pub fn message_page(title: &str, text: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>{title}</title><style>{STYLE}</style></head><body><main><section><h2>{title}</h2><p>{text}</p></section></main></body></html>",
        title = escape(title),
        text = escape(text)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_links_are_escaped() {
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(href("javascript:alert(1)"), "#");
        assert_eq!(href("https://shop.test/?a=1&b=2"), "https://shop.test/?a=1&amp;b=2");
    }
}
