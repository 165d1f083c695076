//! Checking that a provider's webhook came from the provider (`docs/senders.md`, "Webhooks").

use base64::Engine as _;
use hmac::{Hmac, Mac};

/// Whether `signature` (the `X-Twilio-Signature` header) is Twilio's for a POST of `params` to
/// `url` with the account's auth token `token`: base64 of HMAC-SHA1 over the URL followed by each
/// parameter's name and value, sorted by name. Compared in constant time.
pub fn twilio_signed(token: &str, url: &str, params: &[(String, String)], signature: &str) -> bool {
    let mut sorted: Vec<&(String, String)> = params.iter().collect();
    sorted.sort();
    let Ok(mut mac) = Hmac::<sha1::Sha1>::new_from_slice(token.as_bytes()) else { return false };
    mac.update(url.as_bytes());
    for (name, value) in sorted {
        mac.update(name.as_bytes());
        mac.update(value.as_bytes());
    }
    let Ok(sent) = base64::engine::general_purpose::STANDARD.decode(signature.trim()) else { return false };
    mac.verify_slice(&sent).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of Twilio's security documentation, signed by its own `RequestValidator`.
    #[test]
    fn twilios_documented_example_verifies_and_a_changed_parameter_does_not() {
        let mut params: Vec<(String, String)> = [
            ("CallSid", "CA1234567890ABCDE"),
            ("Caller", "+12349013030"),
            ("Digits", "1234"),
            ("From", "+12349013030"),
            ("To", "+18005551212"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let url = "https://mycompany.com/myapp.php?foo=1&bar=2";
        assert!(twilio_signed("12345", url, &params, "0/KCTR6DLpKmkAf8muzZqo1nDgQ="));
        assert!(!twilio_signed("54321", url, &params, "0/KCTR6DLpKmkAf8muzZqo1nDgQ="), "another account's token");
        params[2].1 = "4321".into();
        assert!(!twilio_signed("12345", url, &params, "0/KCTR6DLpKmkAf8muzZqo1nDgQ="), "a changed parameter");
        assert!(!twilio_signed("12345", url, &params, "not base64!"));
    }
}
