//! The bill page engage serves at `GET /b/{bill_id}` when it is its own link service: one
//! mobile-first HTML document with inline CSS and a small inline script, no framework and no
//! external assets of its own (a banner image is the brand's URL). Widgets appear in their
//! `sequence`; the itemized receipt comes first when the business maps no receipt widget. The
//! script reports widget clicks, and the seconds each widget was on screen (when the page is
//! hidden), to `/crm_api/update/widget/insight` with the page's own token.

use std::fmt::Write;

use engage_actors::capabilities::bills::{Bill, BillWidget};
use engage_actors::capabilities::branding::Branding;

pub use crate::pages::escape;
use crate::pages::{brand_color, ist_instant, ist_time, rupees, shell, text_on};

/// Only http(s) links are followed; anything else becomes `#`.
fn href(url: &str) -> String {
    let url = url.trim();
    if url.starts_with("https://") || url.starts_with("http://") {
        escape(url)
    } else {
        "#".to_owned()
    }
}

const STYLE: &str = "header.brand .outlet{margin:0 0 2px;font-size:14px;font-weight:600;letter-spacing:.02em}\
table{width:100%;border-collapse:collapse;font-size:15px}td{padding:6px 0;vertical-align:top}td.n{text-align:right;white-space:nowrap}\
tr.t td{border-top:1px solid #d1d5db;font-weight:600}img{max-width:100%;border-radius:8px;display:block}\
.points{font-size:28px;font-weight:700}footer{margin:12px}";

const SCRIPT: &str = "(function(){var d=document.querySelector('main').dataset,t=d.token,b=d.bill;\
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
            item.qty.normalize(),
            rupees(item.total)
        );
    }
    let order = &bill.order;
    let _ = write!(
        out,
        "<tr class=\"t\"><td>Subtotal</td><td class=\"n\" id=\"subtotal\">{}</td></tr>",
        rupees(order.subtotal)
    );
    if !order.discount.is_zero() {
        let _ =
            write!(out, "<tr><td>Discount</td><td class=\"n\" id=\"discount\">-{}</td></tr>", rupees(order.discount));
    }
    if !order.tax.is_zero() {
        let _ = write!(out, "<tr><td>Tax</td><td class=\"n\" id=\"tax\">{}</td></tr>", rupees(order.tax));
    }
    // a sale that did not happen was never paid: its total is the order's, not a payment
    let whole = bill.refund.as_ref().is_some_and(|r| r.whole);
    let _ = write!(
        out,
        "<tr class=\"t\"><td>{}</td><td class=\"n\" id=\"total\">{}</td></tr>",
        if whole { "Order total" } else { "Total paid" },
        rupees(order.amount)
    );
    match &bill.refund {
        Some(refund) if refund.whole => {
            let _ = write!(
                out,
                "<tr class=\"t\" id=\"refund\"><td>Refunded: this order was cancelled</td><td class=\"n\">-{}</td></tr>\
                 <tr class=\"t\"><td>Net paid</td><td class=\"n\" id=\"net\">{}</td></tr>",
                rupees(refund.amount),
                rupees(rust_decimal::Decimal::ZERO)
            );
        }
        Some(refund) => {
            let _ = write!(
                out,
                "<tr id=\"refund\"><td>Refunded (items returned)</td><td class=\"n\">-{}</td></tr>\
                 <tr class=\"t\"><td>Net paid</td><td class=\"n\" id=\"net\">{}</td></tr>",
                rupees(refund.amount),
                rupees((order.amount - refund.amount).max(rust_decimal::Decimal::ZERO))
            );
        }
        None => {}
    }
    out.push_str("</table></section>");
}

/// A button in the brand's colour, its text readable on it.
fn button(color: &str, href: &str, label: &str) -> String {
    format!(
        "<a class=\"btn\" style=\"background:{color};color:{}\" href=\"{href}\">{}</a>",
        text_on(color),
        escape(label)
    )
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
            let alt = if w.title.is_empty() { "Offer".to_owned() } else { title.clone() };
            let _ = write!(
                out,
                "<section class=\"widget\" id=\"banner\" data-widget=\"{id}\"><a href=\"{}\"><img src=\"{}\" alt=\"{alt}\"></a></section>",
                href(&w.value),
                href(&w.static_banner_link)
            );
        }
        "feedback_link" => {
            let label = if w.title.is_empty() { "Share feedback" } else { w.title.as_str() };
            let _ = write!(
                out,
                "<section class=\"widget\" id=\"feedback\" data-widget=\"{id}\"><h2>How was your order?</h2>{}</section>",
                button(color, &href(&bill.feedback_url), label)
            );
        }
        kind => {
            // upsell, profile completion: a link is the widget's button, labelled with its title;
            // a text is shown under the title
            let fallback = if kind == "upsell" { "See the offer" } else { "Complete your profile" };
            let label = if w.title.is_empty() { fallback } else { w.title.as_str() };
            let inner = if href(&w.value) == "#" {
                format!("<h2>{}</h2><p>{}</p>", escape(label), escape(&w.value))
            } else {
                button(color, &href(&w.value), label)
            };
            let _ =
                write!(out, "<section class=\"widget\" id=\"{}\" data-widget=\"{id}\">{inner}</section>", escape(kind));
        }
    }
}

/// The page of `bill` as `branding` presents it; `token` lets its script report widget events for
/// this bill.
pub fn render(bill: &Bill, branding: &Branding, token: &str) -> String {
    let color = brand_color(branding.color.as_deref().or(Some(bill.brand_color.as_str())));
    let text = text_on(color);
    let mut out = String::with_capacity(8 * 1024);
    let when = bill.order.order_time.as_deref().and_then(ist_time).unwrap_or_else(|| ist_instant(bill.sent_at));
    let raw = bill.order.order_time.clone().unwrap_or_else(|| bill.sent_at.to_rfc3339());
    let outlet =
        branding.outlet_name.as_deref().map(|o| format!("<p class=\"outlet\" id=\"outlet-name\">{}</p>", escape(o)));
    let heading = branding.brand_name.as_deref().unwrap_or("Your bill");
    let cancelled = bill.refund.as_ref().is_some_and(|r| r.whole);
    let _ = write!(
        out,
        "<main data-bill=\"{bill_id}\" data-token=\"{token}\"><header class=\"brand\" style=\"background:{color};color:{text}\">{outlet}\
<h1 id=\"brand-name\">{heading}</h1><p>{greeting}{name}{tail} Order <span id=\"order-id\">{order}</span> &middot; <time id=\"order-time\" datetime=\"{raw}\">{when} IST</time></p>{notice}</header>",
        greeting = if cancelled { "Hello" } else { "Thank you" },
        tail = if cancelled { "." } else { "!" },
        notice = if cancelled {
            "<p id=\"cancelled\" role=\"status\"><strong>This order was cancelled and refunded in full: nothing was paid for it.</strong></p>"
        } else {
            ""
        },
        bill_id = escape(&bill.bill_id),
        token = escape(token),
        outlet = outlet.unwrap_or_default(),
        heading = escape(heading),
        name = if bill.name.is_empty() { String::new() } else { format!(", {}", escape(&bill.name)) },
        order = escape(&bill.order_id),
        raw = escape(&raw),
        when = escape(&when),
    );
    if !bill.widgets.iter().any(|w| w.kind == "itemized_receipt") {
        receipt(bill, &mut out, None);
    }
    for w in &bill.widgets {
        widget(bill, w, color, &mut out);
    }
    if let Some(label) = &bill.footer_button {
        let _ = write!(out, "<footer>{}</footer>", button(color, "javascript:window.print()", label));
    }
    let _ = write!(out, "</main><script>{SCRIPT}</script>");
    let title = match &branding.brand_name {
        Some(name) => format!("{name}: your bill for order {}", bill.order_id),
        None => format!("Your bill for order {}", bill.order_id),
    };
    shell(&title, STYLE, &out)
}

/// A page that only says something (unknown or expired link).
pub fn message_page(title: &str, text: &str) -> String {
    crate::pages::message(title, text, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_links_are_followed() {
        assert_eq!(href("javascript:alert(1)"), "#");
        assert_eq!(href("https://shop.test/?a=1&b=2"), "https://shop.test/?a=1&amp;b=2");
    }
}
