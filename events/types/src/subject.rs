//! NATS subjects: `palimpsest.<context>.<category>.<encoded key>`.
//!
//! Subject tokens may not contain `.`, `*`, `>` or white space, but stream keys may contain
//! anything. Keys are therefore encoded: ASCII letters, digits and `-` stand as they are, every
//! other byte of the UTF-8 key becomes `_` followed by two upper-case hex digits. The encoding is
//! reversible ([`decode_key`]) and keeps ordinary ids readable (`a.x1` → `a_2Ex1`).

use crate::StreamName;

/// The prefix of every subject the relay publishes, and the JetStream stream's subject filter
/// is `palimpsest.>`.
pub const PREFIX: &str = "palimpsest";

/// Encodes a stream key into one safe subject token.
pub fn encode_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' {
            out.push(b as char);
        } else {
            out.push('_');
            out.push_str(&format!("{b:02X}"));
        }
    }
    out
}

/// Decodes a token made by [`encode_key`]; `None` if it is not such a token.
pub fn decode_key(token: &str) -> Option<String> {
    let bytes = token.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'_' {
            let hex = token.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The subject an event of `stream` is published on.
pub fn for_stream(stream: &StreamName) -> String {
    format!(
        "{PREFIX}.{}.{}.{}",
        stream.context,
        stream.category,
        encode_key(&stream.key)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ordinary_ids_stay_readable() {
        let s = StreamName::new("pads", "pad", "g.abc$my pad").expect("valid");
        assert_eq!(for_stream(&s), "palimpsest.pads.pad.g_2Eabc_24my_20pad");
    }

    proptest! {
        #[test]
        fn any_key_round_trips_and_is_one_safe_token(key in "\\PC{1,40}") {
            let token = encode_key(&key);
            prop_assert!(!token.is_empty());
            prop_assert!(token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
            prop_assert_eq!(decode_key(&token), Some(key));
        }
    }
}
