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
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
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

/// Appends the canonical text of the string `s` to `out`.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
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
