//! The feedback form engage serves at `GET /f/{token}` when no feedback service is set: one
//! mobile-first HTML form (inline CSS, a small inline script), in the brand's name and colour, posted
//! back to the same URL.
//!
//! The rating is a real radio group (`fieldset`/`legend`, five radios named "1 star" … "5 stars"):
//! Tab reaches it, the arrow keys choose, a screen reader announces it, and touch works on the
//! large star labels. Sending without a rating shows "Choose a rating from 1 to 5 stars" beside it
//! (the script; without a script the browser's own `required` check, and the server's 400 page
//! with a way back). The thank-you page says what happens next.

use std::fmt::Write;

use engage_actors::capabilities::branding::Branding;
use engage_actors::capabilities::feedback::{FormView, Submitted};

use crate::pages::{brand_color, escape, shell, text_on};

/// The answers offered for "How did you hear about us?".
pub const HEARD_FROM: [&str; 6] = ["Friends or family", "Social media", "Search", "Walked by", "Food app", "Other"];

const STYLE: &str = "form{margin:0}label{display:block;margin:14px 0 4px;font-weight:600}\
textarea,input[type=text],select{width:100%;padding:10px;border:1px solid #6b7280;border-radius:8px;font:inherit;background:#fff;color:#1d2330}\
fieldset{border:0;margin:0;padding:0}legend{font-weight:600;padding:0;margin:0 0 4px}\
.stars{display:flex;gap:4px}.stars input{position:absolute;opacity:0;width:1px;height:1px;margin:0}\
.stars label{margin:0;font-size:38px;line-height:1;padding:2px 4px;color:#6b7280;cursor:pointer;border-radius:8px;font-weight:400}\
.stars input:focus-visible+label{outline:3px solid #1d2330;outline-offset:1px}.stars label .sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}\
.error{color:#b42318;font-weight:600;margin:6px 0 0}.chosen{margin:4px 0 0;font-size:14px;color:#4b5563}";

/// The script: stars up to the chosen one lit, "n of 5 stars" said, and the missing-rating message.
const SCRIPT: &str = "(function(){var f=document.getElementById('feedback-form'),g=document.getElementById('rating'),\
e=document.getElementById('rating-error'),c=document.getElementById('rating-chosen'),rs=g.querySelectorAll('input');\
function paint(){var v=0;rs.forEach(function(r){if(r.checked){v=+r.value}});\
rs.forEach(function(r){r.nextElementSibling.style.color=(+r.value<=v)?'#b45309':''});\
c.textContent=v?v+' of 5 stars':'';if(v){e.hidden=true;g.removeAttribute('aria-invalid')}}\
rs.forEach(function(r){r.addEventListener('change',paint)});paint();\
f.addEventListener('submit',function(ev){if(!g.querySelector('input:checked')){ev.preventDefault();e.hidden=false;\
g.setAttribute('aria-invalid','true');rs[0].focus()}})})();";

/// The header of every page of the form: the brand's name (and outlet) on its colour.
fn header(branding: &Branding, heading: &str) -> String {
    let color = brand_color(branding.color.as_deref());
    let mut out = format!("<header class=\"brand\" style=\"background:{color};color:{}\">", text_on(color));
    if let Some(outlet) = &branding.outlet_name {
        let _ = write!(
            out,
            "<p class=\"outlet\" id=\"outlet-name\" style=\"margin:0 0 2px;font-size:14px;font-weight:600\">{}</p>",
            escape(outlet)
        );
    }
    let _ = write!(
        out,
        "<p id=\"brand-name\" style=\"margin:0 0 4px;font-weight:700\">{}</p><h1>{}</h1></header>",
        escape(branding.brand_name.as_deref().unwrap_or("Your feedback")),
        escape(heading)
    );
    out
}

fn title(branding: &Branding, what: &str) -> String {
    match &branding.brand_name {
        Some(name) => format!("{what}: {name}"),
        None => what.to_owned(),
    }
}

/// The form of a feedback link (`token` is its own URL's).
pub fn form(view: &FormView, token: &str) -> String {
    let branding = &view.branding;
    let color = brand_color(branding.color.as_deref());
    let greeting = if view.name.is_empty() { String::new() } else { format!(", {}", view.name) };
    let mut body = format!("<main>{}<section>", header(branding, &format!("How was your order{greeting}?")));
    if view.is_submitted {
        body.push_str("<p class=\"muted\">You sent us feedback already; sending again replaces it.</p>");
    }
    let _ = write!(
        body,
        "<form id=\"feedback-form\" method=\"post\" action=\"/f/{}\" novalidate>\
<fieldset id=\"rating\" aria-describedby=\"rating-error\"><legend>Your rating (required)</legend><div class=\"stars\">",
        escape(token)
    );
    for star in 1..=5 {
        let name = if star == 1 { "1 star".to_owned() } else { format!("{star} stars") };
        let _ = write!(
            body,
            "<input type=\"radio\" id=\"s{star}\" name=\"rating\" value=\"{star}\" required>\
<label for=\"s{star}\" title=\"{name}\"><span aria-hidden=\"true\">&#9733;</span><span class=\"sr\">{name}</span></label>"
        );
    }
    body.push_str(
        "</div><p class=\"chosen\" id=\"rating-chosen\" aria-live=\"polite\"></p>\
<p class=\"error\" id=\"rating-error\" role=\"alert\" hidden>Choose a rating from 1 to 5 stars.</p></fieldset>\
<label for=\"comment\">Comments (optional)</label><textarea id=\"comment\" name=\"comment\" rows=\"4\" maxlength=\"2000\"></textarea>",
    );
    for (n, question) in view.questions.iter().enumerate() {
        let _ = write!(
            body,
            "<label for=\"q{n}\">{}</label><input type=\"text\" id=\"q{n}\" name=\"q{n}\" maxlength=\"1000\">",
            escape(question),
            n = n + 1
        );
    }
    body.push_str("<label for=\"hear_about_us\">How did you hear about us? (optional)</label><select id=\"hear_about_us\" name=\"hear_about_us\"><option value=\"\">Choose one</option>");
    for option in HEARD_FROM {
        let _ = write!(body, "<option>{}</option>", escape(option));
    }
    let _ = write!(
        body,
        "</select><button class=\"btn\" type=\"submit\" style=\"background:{color};color:{}\">Send feedback</button></form></section></main><script>{SCRIPT}</script>",
        text_on(color)
    );
    shell(&title(branding, "Your feedback"), STYLE, &body)
}

/// The page after a submission: thanks, and what happens next.
pub fn thanks(submitted: &Submitted, token: &str) -> String {
    let branding = &submitted.branding;
    let who = branding.outlet_name.as_deref().or(branding.brand_name.as_deref()).unwrap_or("the outlet");
    let stars = submitted.rating.rating;
    let mut body = format!("<main>{}<section>", header(branding, "Thank you!"));
    let _ = write!(
        body,
        "<p>Your feedback was received: <strong>{stars} of 5 stars</strong>. The team at {} reads every answer.</p>",
        escape(who)
    );
    match &submitted.recovery {
        Some(recovery) if recovery.outcome == "sent" => {
            let _ = write!(
                body,
                "<p>We are sorry your order fell short. A coupon (<strong>{}</strong>) is on its way to you by message, and the team may contact you about your order.</p>",
                escape(&recovery.coupon_code)
            );
        }
        Some(_) => {
            body.push_str("<p>We are sorry your order fell short; the team may contact you about your order.</p>")
        }
        None if stars <= 3 => body.push_str("<p>We are sorry your order fell short; the team will look into it.</p>"),
        None => body.push_str("<p>We are glad you enjoyed it, and hope to see you again soon.</p>"),
    }
    let _ = write!(
        body,
        "<p class=\"muted\">You can close this page. Changed your mind? <a href=\"/f/{}\">Change your answer</a> (it replaces this one).</p></section></main>",
        escape(token)
    );
    shell(&title(branding, "Thank you"), STYLE, &body)
}

/// The page for a submission without a rating (a browser without the form's script): what is
/// missing, and the way back to the form.
pub fn rating_missing(token: &str) -> String {
    crate::pages::message(
        "Please choose a rating",
        "Pick one to five stars and send the form again.",
        Some((&format!("/f/{token}"), "Back to the form")),
    )
}

/// A page that only says something.
pub fn message_page(title: &str, text: &str) -> String {
    crate::pages::message(title, text, None)
}
