//! JavaScript's number conversions, as Etherpad's API applies them to request fields.
//!
//! Etherpad validates `rev`, `validUntil`, `time` and the like with `parseInt`, `parseFloat`,
//! `Number()` and `isNaN`, whose quirks decide which inputs are accepted (`parseInt("12abc")` is
//! 12, `Number("")` is 0). The functions here reproduce them so that the same requests succeed
//! and fail with the same messages.

/// Whether `c` is white space as JavaScript understands it (`\s`, `trim`, number parsing):
/// ASCII blanks, NBSP, BOM, the Unicode space separators and the line terminators.
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// The length of the longest prefix of `s` made of digits of `radix`.
fn digits_prefix(s: &str, radix: u32) -> usize {
    s.char_indices()
        .find(|(_, c)| !c.is_digit(radix))
        .map(|(i, _)| i)
        .unwrap_or(s.len())
}

/// The value of a digit string in `radix`, as a float (JavaScript keeps large values inexactly).
fn digits_value(digits: &str, radix: u32) -> f64 {
    digits
        .chars()
        .filter_map(|c| c.to_digit(radix))
        .fold(0.0, |acc, d| acc * f64::from(radix) + f64::from(d))
}

/// `parseInt(s, radix)`: leading white space and a sign are skipped, then the longest run of
/// digits is read; `None` radix means 10 unless the text starts with `0x`. NaN if no digit.
pub fn parse_int(s: &str, radix: Option<u32>) -> f64 {
    let s = s.trim_start_matches(is_js_space);
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, rest) = match radix {
        Some(16) | None if rest.starts_with("0x") || rest.starts_with("0X") => (16, &rest[2..]),
        Some(r) => (r, rest),
        None => (10, rest),
    };
    let end = digits_prefix(rest, radix);
    if end == 0 {
        return f64::NAN;
    }
    let v = digits_value(&rest[..end], radix);
    if negative { -v } else { v }
}

/// The length of the longest prefix of `s` that is a decimal literal (`12`, `1.5`, `.5e3`).
fn decimal_prefix(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    let int_digits = digits_prefix(s, 10);
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        frac_digits = digits_prefix(&s[i + 1..], 10);
        if int_digits > 0 || frac_digits > 0 {
            i += 1 + frac_digits;
        }
    }
    if int_digits == 0 && frac_digits == 0 {
        return 0;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp = digits_prefix(&s[j..], 10);
        if exp > 0 {
            i = j + exp;
        }
    }
    i
}

/// Reads a signed decimal literal or `Infinity` at the start of `s` (after a sign); returns the
/// value and how many bytes it took, or `None`.
fn signed_decimal(s: &str) -> Option<(f64, usize)> {
    let (negative, sign_len) = match s.as_bytes().first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let rest = &s[sign_len..];
    let (v, len) = if rest.starts_with("Infinity") {
        (f64::INFINITY, 8)
    } else {
        let len = decimal_prefix(rest);
        if len == 0 {
            return None;
        }
        (rest[..len].parse::<f64>().ok()?, len)
    };
    Some((if negative { -v } else { v }, sign_len + len))
}

/// `parseFloat(s)`: the longest decimal prefix after leading white space, NaN if none.
pub fn parse_float(s: &str) -> f64 {
    signed_decimal(s.trim_start_matches(is_js_space))
        .map(|(v, _)| v)
        .unwrap_or(f64::NAN)
}

/// `Number(s)` for a string: the whole trimmed text must be a number (`""` is 0).
pub fn number(s: &str) -> f64 {
    let t = s.trim_matches(is_js_space);
    if t.is_empty() {
        return 0.0;
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ] {
        if let Some(digits) = t.strip_prefix(prefix) {
            if !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix)) {
                return digits_value(digits, radix);
            }
            return f64::NAN;
        }
    }
    match signed_decimal(t) {
        Some((v, len)) if len == t.len() => v,
        _ => f64::NAN,
    }
}

/// `String(n)` of a number, for the integers and simple values Etherpad's checks look at.
fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else if n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{n:.0}")
    } else {
        // Non-integers and huge values: the exact digits do not matter to the checks below,
        // only that the text is not a plain integer (it has a '.' or an exponent).
        let s = format!("{n:e}");
        if n.abs() < 1e21 && !s.contains('e') {
            s
        } else {
            s.replace('e', "e+")
        }
    }
}

/// Etherpad's `isInt(value)` for a number: `parseFloat(String(v)) === parseInt(String(v), 10)`
/// and not NaN, which holds for finite integers below 1e21.
pub fn is_int_number(n: f64) -> bool {
    let s = number_to_string(n);
    let (f, i) = (parse_float(&s), parse_int(&s, Some(10)));
    f == i && !n.is_nan()
}

/// Etherpad's `isInt(value)` for a string: `parseFloat(v) === parseInt(v, 10) && !isNaN(v)`.
pub fn is_int_text(s: &str) -> bool {
    let (f, i) = (parse_float(s), parse_int(s, Some(10)));
    f == i && !number(s).is_nan()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_int_reads_a_digit_prefix() {
        assert_eq!(parse_int("12abc", Some(10)), 12.0);
        assert_eq!(parse_int("  -7", Some(10)), -7.0);
        assert_eq!(parse_int("1.9", Some(10)), 1.0);
        assert_eq!(parse_int("0x10", None), 16.0);
        assert_eq!(parse_int("0x10", Some(10)), 0.0);
        assert!(parse_int("abc", Some(10)).is_nan());
        assert!(parse_int("", None).is_nan());
    }

    #[test]
    fn number_needs_the_whole_text() {
        assert_eq!(number(""), 0.0);
        assert_eq!(number(" 12 "), 12.0);
        assert_eq!(number("1e3"), 1000.0);
        assert_eq!(number("0x10"), 16.0);
        assert!(number("12abc").is_nan());
        assert!(number("-0x10").is_nan());
    }

    #[test]
    fn is_int_follows_etherpad() {
        assert!(is_int_text("1359199533759"));
        assert!(is_int_text(" 12"));
        assert!(!is_int_text("1e3"));
        assert!(!is_int_text(""));
        assert!(!is_int_text("12abc"));
        assert!(!is_int_text("1.5"));
        assert!(is_int_text("0x10"));
        assert!(is_int_number(5.0));
        assert!(!is_int_number(1.5));
        assert!(!is_int_number(1e21));
        assert!(!is_int_number(f64::NAN));
    }

    #[test]
    fn parse_float_reads_a_decimal_prefix() {
        assert_eq!(parse_float("1.5abc"), 1.5);
        assert_eq!(parse_float(".5"), 0.5);
        assert_eq!(parse_float("1e3x"), 1000.0);
        assert_eq!(parse_float("-Infinity"), f64::NEG_INFINITY);
        assert!(parse_float("x1").is_nan());
    }
}
