//! The feedback form engage serves at `GET /f/{token}` when no feedback service is set: one
//! mobile-first HTML form (inline CSS, no script needed), stars 1–5, a comment, the brand's
//! questions and "how did you hear about us", posted back to the same URL.

use std::fmt::Write;

use engage_actors::capabilities::feedback::FormView;

use super::bill_page::escape;

/// The answers offered for "How did you hear about us?".
pub const HEARD_FROM: [&str; 6] = ["Friends or family", "Social media", "Search", "Walked by", "Food app", "Other"];

const STYLE: &str = "*{box-sizing:border-box}body{margin:0;font:16px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;background:#f4f5f7;color:#1d2330}\
main{max-width:480px;margin:0 auto;padding:12px}section{background:#fff;border-radius:12px;padding:16px;box-shadow:0 1px 3px rgba(0,0,0,.08)}\
h1{font-size:20px;margin:0 0 12px}label{display:block;margin:12px 0 4px;font-weight:600}textarea,input[type=text],select{width:100%;padding:10px;border:1px solid #cfd3da;border-radius:8px;font:inherit}\
.stars{display:flex;flex-direction:row-reverse;justify-content:flex-end;gap:4px}.stars input{display:none}.stars label{font-size:36px;color:#c9ccd3;margin:0;cursor:pointer}\
.stars input:checked~label,.stars label:hover,.stars label:hover~label{color:#f5a623}button{margin-top:16px;width:100%;padding:12px;border:0;border-radius:8px;background:#1f6feb;color:#fff;font:inherit;font-weight:600}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>{title}</title><style>{STYLE}</style></head><body><main><section>{body}</section></main></body></html>",
        title = escape(title)
    )
}

/// The form of a feedback link (`token` is its own URL's).
pub fn form(view: &FormView, token: &str) -> String {
    let mut body = String::new();
    let greeting = if view.name.is_empty() { String::new() } else { format!(", {}", escape(&view.name)) };
    let _ = write!(body, "<h1>How was your order{greeting}?</h1>");
    if view.is_submitted {
        body.push_str("<p class=\"muted\">You sent us feedback already; sending again replaces it.</p>");
    }
    let _ = write!(
        body,
        "<form method=\"post\" action=\"/f/{}\"><label>Your rating</label><div class=\"stars\">",
        escape(token)
    );
    for star in (1..=5).rev() {
        let _ = write!(
            body,
            "<input type=\"radio\" id=\"s{star}\" name=\"rating\" value=\"{star}\" required><label for=\"s{star}\" title=\"{star} stars\">&#9733;</label>"
        );
    }
    body.push_str("</div><label for=\"comment\">Comments</label><textarea id=\"comment\" name=\"comment\" rows=\"4\" maxlength=\"2000\"></textarea>");
    for (n, question) in view.questions.iter().enumerate() {
        let _ = write!(
            body,
            "<label for=\"q{n}\">{}</label><input type=\"text\" id=\"q{n}\" name=\"q{n}\" maxlength=\"1000\">",
            escape(question),
            n = n + 1
        );
    }
    body.push_str("<label for=\"hear_about_us\">How did you hear about us?</label><select id=\"hear_about_us\" name=\"hear_about_us\"><option value=\"\"></option>");
    for option in HEARD_FROM {
        let _ = write!(body, "<option>{}</option>", escape(option));
    }
    body.push_str("</select><button type=\"submit\">Send feedback</button></form>");
    page("Your feedback", &body)
}

/// A page that only says something.
pub fn message_page(title: &str, text: &str) -> String {
    page(title, &format!("<h1>{}</h1><p>{}</p>", escape(title), escape(text)))
}
