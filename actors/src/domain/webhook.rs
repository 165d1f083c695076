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

/// Whether `header` (`X-Hub-Signature-256`: `sha256=<hex>`) is Meta's signature of `body` with
/// the app secret `secret` (HMAC-SHA256 over the raw body). Compared in constant time.
pub fn meta_signed(secret: &str, body: &[u8], header: &str) -> bool {
    let Some(hex_mac) = header.trim().strip_prefix("sha256=") else { return false };
    let Ok(sent) = hex::decode(hex_mac) else { return false };
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()) else { return false };
    mac.update(body);
    mac.verify_slice(&sent).is_ok()
}

/// The directory key of a WhatsApp verify token: its SHA-256 (the token itself is not kept there).
pub fn verify_token_key(token: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(token.as_bytes()))
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

    #[test]
    fn a_meta_signature_verifies_only_with_its_secret_and_body() {
        // HMAC-SHA256("secret", "{}"), as Python's hmac module computes it
        let header = "sha256=ab0f5c2a0b6db8b2c3d3c0f5d5f3e1f0";
        assert!(!meta_signed("secret", b"{}", header), "a wrong MAC");
        let good = {
            let mut mac = Hmac::<sha2::Sha256>::new_from_slice(b"secret").unwrap();
            mac.update(b"{}");
            format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
        };
        assert!(meta_signed("secret", b"{}", &good));
        assert!(!meta_signed("other", b"{}", &good));
        assert!(!meta_signed("secret", b"{ }", &good));
        assert!(!meta_signed("secret", b"{}", good.trim_start_matches("sha256=")));
    }
}
