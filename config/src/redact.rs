//! Credentials kept out of logs and errors: URLs with their user info hidden.

#[allow(unused_imports)]
use super::*;

/// Byte range of the user info (`user:password`, a token) in `url`'s authority, if it has one.
pub(super) fn userinfo_range(url: &str) -> Option<std::ops::Range<usize>> {
    let start = url.find("://")? + 3;
    let rest = &url[start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..authority_end].rfind('@')?;
    (at > 0).then_some(start..start + at)
}

/// `url` with its user info (user name, password, token) replaced by `***`, for printing.
pub fn redact_url(url: &str) -> String {
    // a server list (`ENGAGE_NATS_URL`): each one on its own
    if url.contains(',') && url.matches("://").count() > 1 {
        return url.split(',').map(redact_url).collect::<Vec<_>>().join(",");
    }
    match userinfo_range(url) {
        Some(range) => format!("{}***{}", &url[..range.start], &url[range.end..]),
        None => url.to_owned(),
    }
}

/// `text` with the user info of `url` (when it has any) replaced by `***`: for error messages of
/// libraries that quote the address they were given.
pub fn redact_in(text: &str, url: &str) -> String {
    let Some(range) = userinfo_range(url) else { return text.to_owned() };
    let userinfo = &url[range];
    let mut out = text.replace(userinfo, "***");
    for part in userinfo.split(':').filter(|p| p.len() >= 3) {
        out = out.replace(part, "***");
    }
    out
}
