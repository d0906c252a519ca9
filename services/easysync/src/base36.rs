//! Base-36 numbers, the way Etherpad writes lengths, newline counts and attribute numbers
//! (`parseInt(s, 36)` / `n.toString(36)`), without JavaScript's silent loss of precision.

use crate::error::{Error, Result};

/// Parses a lower-case base-36 number (`[0-9a-z]+`).
///
/// Fails on an empty string, any other character, or a value that does not fit in `usize`.
/// Leading zeros are accepted here; canonical-form checks refuse them where Etherpad would
/// never write them.
pub fn parse_num(s: &str) -> Result<usize> {
    if s.is_empty() {
        return Err(Error::BadNumber(String::new()));
    }
    let mut n: usize = 0;
    for b in s.bytes() {
        let digit = digit_value(b).ok_or_else(|| Error::BadNumber(truncate(s)))?;
        n = n
            .checked_mul(36)
            .and_then(|n| n.checked_add(digit))
            .ok_or_else(|| Error::BadNumber(truncate(s)))?;
    }
    Ok(n)
}

/// Writes a number in lower-case base 36, as Etherpad's `numToString`.
pub fn num_to_string(n: usize) -> String {
    let mut out = String::new();
    push_num(&mut out, n);
    out
}

/// Appends `n` in base 36 to `out` (no allocation besides `out` growing).
pub(crate) fn push_num(out: &mut String, mut n: usize) {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    // 64-bit numbers need at most 13 base-36 digits.
    let mut buf = [0u8; 16];
    let mut i = buf.len();
    loop {
        i -= 1;
        if let (Some(slot), Some(&digit)) = (buf.get_mut(i), DIGITS.get(n % 36)) {
            *slot = digit;
        }
        n /= 36;
        if n == 0 || i == 0 {
            break;
        }
    }
    for &b in buf.get(i..).unwrap_or(&[]) {
        out.push(char::from(b));
    }
}

/// Whether `b` is a base-36 digit byte.
pub(crate) fn is_digit(b: u8) -> bool {
    digit_value(b).is_some()
}

/// Whether a base-36 digit string is written the way Etherpad writes it (no leading zero).
pub(crate) fn is_canonical(s: &str) -> bool {
    s == "0" || !s.starts_with('0')
}

fn digit_value(b: u8) -> Option<usize> {
    match b {
        b'0'..=b'9' => Some(usize::from(b - b'0')),
        b'a'..=b'z' => Some(usize::from(b - b'a') + 10),
        _ => None,
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(20).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_known_values() {
        for (n, s) in [
            (0, "0"),
            (5, "5"),
            (35, "z"),
            (36, "10"),
            (1295, "zz"),
            (46, "1a"),
        ] {
            assert_eq!(num_to_string(n), s);
            assert_eq!(parse_num(s).unwrap(), n);
        }
    }

    #[test]
    fn rejects_bad_digits_and_overflow() {
        assert!(parse_num("").is_err());
        assert!(parse_num("A").is_err());
        assert!(parse_num("1-").is_err());
        assert!(parse_num("zzzzzzzzzzzzzzzzzzzzzz").is_err());
    }

    #[test]
    fn canonical_means_no_leading_zero() {
        assert!(is_canonical("0"));
        assert!(is_canonical("10"));
        assert!(!is_canonical("01"));
        assert!(!is_canonical("00"));
    }
}
