//! Canonical JSON (RFC 8785, JCS) and the sha256 forms computed over it.
//!
//! Hashes must not depend on how a value happened to be serialised: object keys are sorted by
//! their UTF-16 code units, there is no white space, strings use the shortest JSON escapes and
//! numbers are printed as ECMAScript's `Number.prototype.toString` prints them. Integers that do
//! not fit an f64 exactly are printed as their exact digits (JCS would round them; we keep what
//! we were given, and no context stores such numbers).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical (JCS) text of a JSON value.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// `sha256:<lower-case hex>` of the canonical text of `value`, the form the atlas context
/// stores in `snapshot_hash`, `base_hash` and `base_links_hash`.
pub fn sha256_tagged(value: &Value) -> String {
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(to_canonical_string(value).as_bytes()))
    )
}

/// The link of a stream's hash chain: `sha256(previous hash ‖ canonical event text)`, where the
/// previous hash of a stream's first event is 32 zero bytes.
pub fn chain_hash(previous: Option<&[u8; 32]>, canonical_event: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(previous.unwrap_or(&[0u8; 32]));
    h.update(canonical_event.as_bytes());
    h.finalize().into()
}

/// Appends the canonical text of `value` to `out`.
pub fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else if let Some(f) = n.as_f64() {
                out.push_str(&es6_number(f));
            } else {
                out.push_str(&n.to_string());
            }
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| utf16_order(a.0, b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, v);
            }
            out.push('}');
        }
    }
}

/// The order of `a` and `b` by their UTF-16 code units, as JCS sorts keys, without encoding
/// them: UTF-8 bytes sort as code points do, and code points sort as UTF-16 units do except
/// where a character above U+FFFF (a surrogate pair, D800–DBFF first) meets one of
/// U+E000–U+FFFF. Both show in their first differing byte: lead bytes F0–F4 against EE–EF.
fn utf16_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let Some(i) = x.iter().zip(y).position(|(p, q)| p != q) else {
        return x.len().cmp(&y.len());
    };
    let (p, q) = (x[i], y[i]);
    let supplementary = |byte: u8| (0xF0..=0xF4).contains(&byte);
    let high_bmp = |byte: u8| byte == 0xEE || byte == 0xEF;
    if (supplementary(p) && high_bmp(q)) || (high_bmp(p) && supplementary(q)) {
        q.cmp(&p)
    } else {
        p.cmp(&q)
    }
}

/// Appends the canonical text of the string `s` to `out`: runs that need no escape are copied
/// whole (only `"`, `\\` and control characters are escaped, all ASCII).
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, byte) in s.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            0x0c => "\\f",
            b'\r' => "\\r",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            out.push_str(&format!("\\u{byte:04x}"));
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// ECMAScript's Number-to-String for a finite f64 (JSON has no NaN or infinities).
fn es6_number(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    if !f.is_finite() {
        return "null".into();
    }
    let sci = format!("{:e}", f.abs()); // shortest round-trip digits, e.g. "1.2345e-7"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp.parse::<i32>().unwrap_or(0) + 1;
    let mut s = String::new();
    if f < 0.0 {
        s.push('-');
    }
    if k <= n && n <= 21 {
        s.push_str(&digits);
        s.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        s.push_str(&digits[..n as usize]);
        s.push('.');
        s.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        s.push_str("0.");
        s.extend(std::iter::repeat_n('0', (-n) as usize));
        s.push_str(&digits);
    } else {
        s.push_str(&digits[..1]);
        if k > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push(if n > 0 { '+' } else { '-' });
        s.push_str(&(n - 1).abs().to_string());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorts_keys_and_drops_white_space() {
        let v = json!({"b": [1, {"z": null, "a": true}], "a": "x"});
        assert_eq!(
            to_canonical_string(&v),
            r#"{"a":"x","b":[1,{"a":true,"z":null}]}"#
        );
    }

    #[test]
    fn numbers_follow_ecmascript() {
        let cases = [
            (1.0, "1"),
            (1.5, "1.5"),
            (-0.25, "-0.25"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (123.456e-10, "1.23456e-8"),
        ];
        for (f, want) in cases {
            assert_eq!(es6_number(f), want, "{f}");
        }
    }

    #[test]
    fn rfc8785_sample_strings_and_key_order() {
        // Keys sort by UTF-16 code units: "\u{10000}" (surrogates D800..) sorts before "\u{FB33}".
        let v = json!({"\u{FB33}": 1, "\u{10000}": 2, "\r": 3, "1": 4, "\u{80}": 5});
        assert_eq!(
            to_canonical_string(&v),
            "{\"\\r\":3,\"1\":4,\"\u{80}\":5,\"\u{10000}\":2,\"\u{FB33}\":1}"
        );
        assert_eq!(
            to_canonical_string(&json!("a\u{1}\"/")),
            "\"a\\u0001\\\"/\""
        );
    }

    #[test]
    fn keys_sort_as_their_utf16_units_do() {
        let keys = [
            "",
            "a",
            "ab",
            "b",
            "\u{7f}",
            "\u{80}",
            "\u{7ff}",
            "\u{800}",
            "\u{d7ff}",
            "\u{e000}",
            "\u{fb33}",
            "\u{ffff}",
            "\u{10000}",
            "\u{1f600}",
            "\u{10ffff}",
            "a\u{e000}",
            "a\u{10000}",
            "\u{e000}a",
            "\u{10000}a",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(
                    utf16_order(a, b),
                    a.encode_utf16().cmp(b.encode_utf16()),
                    "{a:?} against {b:?}"
                );
            }
        }
    }

    #[test]
    fn strings_escape_only_quotes_backslashes_and_controls() {
        let mut out = String::new();
        write_string(
            &mut out,
            "a\"b\\c\u{1}d\u{1f}\u{7f}é\u{10000}\n\t\r\u{8}\u{c}",
        );
        assert_eq!(
            out,
            "\"a\\\"b\\\\c\\u0001d\\u001f\u{7f}é\u{10000}\\n\\t\\r\\b\\f\""
        );
    }

    #[test]
    fn tagged_hash_is_stable_across_key_order() {
        let a = json!({"x": 1, "y": [true]});
        let b: Value = serde_json::from_str(r#"{ "y": [ true ], "x": 1 }"#).expect("json");
        assert_eq!(sha256_tagged(&a), sha256_tagged(&b));
        assert!(sha256_tagged(&a).starts_with("sha256:"));
        assert_eq!(sha256_tagged(&a).len(), 7 + 64);
    }

    #[test]
    fn chain_depends_on_previous_link() {
        let first = chain_hash(None, "{}");
        let second = chain_hash(Some(&first), "{}");
        assert_ne!(first, second);
        assert_eq!(second, chain_hash(Some(&first), "{}"));
    }
}
