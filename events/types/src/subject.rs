//! NATS subjects: `<prefix>.<context>.<category>.<encoded key>`, the prefix `palimpsest` unless
//! a deployment chooses another (`PALIMPSEST_NATS_SUBJECT_PREFIX`), so that several deployments
//! share one NATS account, each with its own stream and subjects.
//!
//! Subject tokens may not contain `.`, `*`, `>` or white space, but stream keys may contain
//! anything. Keys are therefore encoded: ASCII letters, digits and `-` stand as they are, every
//! other byte of the UTF-8 key becomes `_` followed by two upper-case hex digits. The encoding is
//! reversible ([`decode_key`]) and keeps ordinary ids readable (`a.x1` → `a_2Ex1`).

use crate::StreamName;

/// The prefix of every subject the relay publishes when the deployment names no other; the
/// JetStream stream's subject filter is then `palimpsest.>`.
pub const DEFAULT_PREFIX: &str = "palimpsest";

/// Why a subject prefix was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrefixError {
    /// A token is empty (a blank prefix, or `..`, or a `.` at either end).
    #[error("subject prefix `{0}`: empty token (tokens are separated by single dots)")]
    EmptyToken(String),
    /// A token holds something other than ASCII letters, digits, `-` and `_` (NATS wildcards,
    /// white space and `.` inside a token would change what the subjects match).
    #[error(
        "subject prefix `{prefix}`: token `{token}` may hold only ASCII letters, digits, `-` and `_`"
    )]
    BadToken {
        /// The prefix.
        prefix: String,
        /// The offending token.
        token: String,
    },
    /// The prefix ends in `-log`: `<prefix>-log.>` carries the tree heads of the deployment
    /// whose prefix is the same without `-log` ([`heads_subject`]), so its stream would take
    /// them in.
    #[error(
        "subject prefix `{0}` ends in `-log`: subjects `<prefix>-log.…` carry another \
         deployment's tree heads; choose another prefix"
    )]
    LogSuffix(String),
}

/// Checks that `prefix` is a legal subject prefix: one or more tokens of ASCII letters, digits,
/// `-` and `_`, separated by `.`, the last one not ending in `-log`. The binary refuses to start
/// with any other.
pub fn validate_prefix(prefix: &str) -> Result<(), PrefixError> {
    for token in prefix.split('.') {
        if token.is_empty() {
            return Err(PrefixError::EmptyToken(prefix.to_owned()));
        }
        if !token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(PrefixError::BadToken {
                prefix: prefix.to_owned(),
                token: token.to_owned(),
            });
        }
    }
    if prefix.ends_with("-log") {
        return Err(PrefixError::LogSuffix(prefix.to_owned()));
    }
    Ok(())
}

/// The JetStream stream's subject filter for `prefix`: `<prefix>.>`, every event.
pub fn filter(prefix: &str) -> String {
    format!("{prefix}.>")
}

/// The core NATS subject the tree maker publishes the signed heads of log `log_id` on:
/// `<prefix>-log.<log_id>.head`, outside the stream's filter `<prefix>.>` (heads are not events
/// and would break sequence = position).
pub fn heads_subject(prefix: &str, log_id: impl std::fmt::Display) -> String {
    format!("{prefix}-log.{log_id}.head")
}

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

/// The subject an event of `stream` is published on, under `prefix` ([`DEFAULT_PREFIX`] unless
/// the deployment chose another).
pub fn for_stream(prefix: &str, stream: &StreamName) -> String {
    format!(
        "{prefix}.{}.{}.{}",
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
        assert_eq!(
            for_stream(DEFAULT_PREFIX, &s),
            "palimpsest.pads.pad.g_2Eabc_24my_20pad"
        );
        assert_eq!(
            for_stream("acme.eu", &s),
            "acme.eu.pads.pad.g_2Eabc_24my_20pad"
        );
    }

    #[test]
    fn prefixes_are_dot_separated_tokens_of_safe_characters() {
        for good in [DEFAULT_PREFIX, "acme.eu-1", "a_b", "x.y.z", "catalog"] {
            assert_eq!(validate_prefix(good), Ok(()), "{good}");
        }
        for bad in [
            "", ".a", "a.", "a..b", "a.*", "a.>", "a b", "é", "acme-log", "a.b-log",
        ] {
            assert!(validate_prefix(bad).is_err(), "{bad}");
        }
        assert_eq!(filter("acme"), "acme.>");
        assert!(!heads_subject("acme", "id").starts_with("acme."));
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
