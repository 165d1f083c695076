//! A customer's phone number: the one rule every door that names a customer by phone applies
//! (orders and the other events, the staff, integration and admin routes, CSV uploads, campaign
//! recipient files, the keyword webhook), and the one form a brand's rows are keyed by.
//!
//! **The rule.** Optional spaces, then an optional `+`, then 7 to 15 digits that may be separated
//! by spaces, hyphens and parentheses (`+91 98111-10008`, `(0) 98111 10008`). Anything else is
//! not a phone number ([`parse`] says why).
//!
//! **The form kept.** The digits alone, without `+` or separators; an Indian mobile written
//! `+91…`, `91…` (12 digits) or `0…` (11 digits) with a national number starting 6–9 is its ten
//! digits. So `+919811110008`, `919811110008`, `09811110008`, `98111 10008` and `9811110008` are
//! one customer, `9811110008`.

/// The rule as a JSON Schema `pattern` (ECMA 262): the request schemas use it, so a body the
/// schema accepts is one [`parse`] accepts.
pub const PATTERN: &str = r"^ *\+?[ ()-]*([0-9][ ()-]*){7,15}$";

/// Fewest digits.
pub const MIN_DIGITS: usize = 7;
/// Most digits (E.164).
pub const MAX_DIGITS: usize = 15;

fn separator(c: char) -> bool {
    matches!(c, ' ' | '-' | '(' | ')')
}

/// `text` as the brand's rows key it (see the module), or why it is not a phone number.
pub fn parse(text: &str) -> Result<String, String> {
    let trimmed = text.trim_start_matches(' ');
    let rest = trimmed.strip_prefix('+').unwrap_or(trimmed);
    let mut digits = String::with_capacity(rest.len());
    for c in rest.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else if !separator(c) {
            return Err(format!("{:?} is not a phone number (+ and 7 to 15 digits)", shown(text)));
        }
    }
    if !(MIN_DIGITS..=MAX_DIGITS).contains(&digits.len()) {
        return Err(format!(
            "{:?} has {} digits; a phone number has {MIN_DIGITS} to {MAX_DIGITS}",
            shown(text),
            digits.len()
        ));
    }
    Ok(national(&digits).unwrap_or(digits))
}

/// `text` in the kept form when it is a phone number, else `text` unchanged (rows written before
/// the rule, or by a producer the edge did not check, keep their own key).
pub fn canonical(text: &str) -> String {
    parse(text).unwrap_or_else(|_| text.to_owned())
}

/// An Indian mobile's ten digits (`[6-9]\d{9}`, written in any of the forms [`parse`] accepts),
/// or `None` (campaign recipients and the spec's phone fields must be one).
pub fn indian_mobile(text: &str) -> Option<String> {
    parse(text).ok().filter(|digits| is_indian_mobile(digits))
}

fn is_indian_mobile(digits: &str) -> bool {
    digits.len() == 10 && digits.bytes().all(|b| b.is_ascii_digit()) && (b'6'..=b'9').contains(&digits.as_bytes()[0])
}

/// The ten digits of an Indian mobile written with its country code or trunk zero.
fn national(digits: &str) -> Option<String> {
    let rest = match digits.len() {
        12 => digits.strip_prefix("91")?,
        11 => digits.strip_prefix('0')?,
        _ => return None,
    };
    is_indian_mobile(rest).then(|| rest.to_owned())
}

fn shown(text: &str) -> String {
    let mut shown: String = text.chars().take(20).collect();
    if text.chars().count() > 20 {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_written_form_of_an_indian_mobile_is_its_ten_digits() {
        for form in [
            "9811110008",
            "+919811110008",
            "919811110008",
            "09811110008",
            "98111 10008",
            "+91 98111-10008",
            "  +91 (981) 111 0008",
            "091 9811 110008",
        ] {
            let expected = if form == "091 9811 110008" { "0919811110008" } else { "9811110008" };
            assert_eq!(parse(form).as_deref(), Ok(expected), "{form:?}");
        }
    }

    #[test]
    fn other_numbers_keep_their_digits_and_the_bounds_are_seven_to_fifteen() {
        assert_eq!(parse("+14155550123").as_deref(), Ok("14155550123"));
        assert_eq!(parse("12345678").as_deref(), Ok("12345678"));
        assert_eq!(parse("1234567").as_deref(), Ok("1234567"));
        assert_eq!(parse("123456789012345").as_deref(), Ok("123456789012345"));
        // 12 digits starting 91 but not a mobile after it: kept as given
        assert_eq!(parse("911234567890").as_deref(), Ok("911234567890"));
        for refused in
            ["12345", "123456", "1234567890123456", "", "+", "98111x0008", "++9811110008", "9811110008+", "98.11"]
        {
            assert!(parse(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn the_schema_pattern_accepts_exactly_what_parse_accepts() {
        let pattern = regex_lite::Regex::new(PATTERN).unwrap();
        for text in [
            "9811110008",
            "+91 98111-10008",
            " +(91) 9811110008 ",
            "12345",
            "1234567",
            "1234567890123456",
            "98111x0008",
            "++9811110008",
            "+",
            "",
            "1 2 3 4 5 6 7",
            "(((1234567)))",
            "- 1234567",
            "9811110008\t",
        ] {
            assert_eq!(pattern.is_match(text), parse(text).is_ok(), "{text:?}");
        }
    }

    #[test]
    fn indian_mobiles_are_ten_digits_starting_six_to_nine() {
        assert_eq!(indian_mobile("+91 98111 10008").as_deref(), Some("9811110008"));
        assert_eq!(indian_mobile("5811110008"), None);
        assert_eq!(indian_mobile("+14155550123"), None);
    }
}
