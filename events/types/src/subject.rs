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

/// The value of the `Palimpsest-Stream` header of an event of `stream`: `context/category/key`,
/// with `%` and control characters of the key written `%XX` per UTF-8 byte, so that any key the
/// log ever held (even one from before the log refused control characters) fits in a header
/// line and decodes back exactly ([`decode_stream_header`]).
pub fn stream_header(stream: &StreamName) -> String {
    let mut out = format!("{}/{}/", stream.context, stream.category);
    for c in stream.key.chars() {
        if c == '%' || c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes a `Palimpsest-Stream` header made by [`stream_header`]; `None` if it is not one.
pub fn decode_stream_header(value: &str) -> Option<StreamName> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    StreamName::parse(&String::from_utf8(out).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn headers_keep_ordinary_names_as_they_are_and_escape_line_breaks() {
        let s = StreamName::new("pads", "pad", "g.abc$my pad").expect("valid");
        assert_eq!(stream_header(&s), "pads/pad/g.abc$my pad");
        let s = StreamName::new("pads", "mapper", "a\r\n%b").expect("readable");
        assert_eq!(stream_header(&s), "pads/mapper/a%0D%0A%25b");
        assert_eq!(decode_stream_header(&stream_header(&s)), Some(s));
    }

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

        #[test]
        fn any_key_fits_in_a_header_line_and_round_trips(key in "\\PC{0,20}[\\r\\n\\x00%]?\\PC{1,20}") {
            let s = StreamName::new("pads", "pad", key).expect("valid");
            let header = stream_header(&s);
            prop_assert!(!header.contains(['\r', '\n']));
            prop_assert_eq!(decode_stream_header(&header), Some(s));
        }
    }
}
