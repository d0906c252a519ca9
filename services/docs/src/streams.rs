//! The context's stream names.
//!
//! Document ids may hold any character; stream keys must not hold control characters (the
//! relay builds NATS subjects and headers from them), so ids are escaped in keys: `%` and
//! every control character become `%XX` per UTF-8 byte. The payloads carry the ids as sent.
//! An escaped id longer than [`WHOLE_ID`] bytes (keys hold at most 1,024) is cut and followed by
//! `%H` and the SHA-256 of the whole id: escaping never writes `%H`, so such a key names that
//! id alone, and shorter ids keep the keys they always had.

use palimpsest_events::{StreamName, StreamNameError};
use uuid::Uuid;

/// The context's name: its URL prefix, stream context and read-model schema.
pub const CONTEXT: &str = "docs";

/// A database's stream `docs/database/<name>`.
pub fn database(name: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "database", escape(name))
}

/// A document's stream `docs/document/<incarnation>/<id>`.
pub fn document(incarnation: Uuid, doc_id: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(
        CONTEXT,
        "document",
        format!("{incarnation}/{}", id_key(doc_id)),
    )
}

/// A local document's stream `docs/local/<incarnation>/<id without _local/>`.
pub fn local(incarnation: Uuid, doc_id: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(
        CONTEXT,
        "local",
        format!("{incarnation}/{}", id_key(doc_id)),
    )
}

/// The longest escaped id a key holds whole.
pub const WHOLE_ID: usize = 900;

/// How much of a longer escaped id its key keeps before the hash.
const KEPT_OF_LONG_ID: usize = 800;

/// An id as its stream key holds it: escaped, and past [`WHOLE_ID`] bytes cut and hashed.
fn id_key(id: &str) -> String {
    let escaped = escape(id);
    if escaped.len() <= WHOLE_ID {
        return escaped;
    }
    let mut cut = KEPT_OF_LONG_ID;
    while !escaped.is_char_boundary(cut) {
        cut -= 1;
    }
    let digest = <sha2::Sha256 as sha2::Digest>::digest(id.as_bytes());
    format!("{}%H{}", &escaped[..cut], hex::encode(digest))
}

/// An attachment's content-addressed stream `docs/attachment/<sha1 hex>`.
pub fn attachment(sha1_hex: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "attachment", sha1_hex)
}

/// A user's stream `docs/user/<incarnation>/<name>`.
pub fn user(incarnation: Uuid, name: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "user", format!("{incarnation}/{}", escape(name)))
}

/// A role's stream `docs/role/<incarnation>/<name>`.
pub fn role(incarnation: Uuid, name: &str) -> Result<StreamName, StreamNameError> {
    StreamName::new(CONTEXT, "role", format!("{incarnation}/{}", escape(name)))
}

/// Escapes `%` and control characters as `%XX`.
pub fn escape(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for c in id.chars() {
        if c == '%' || c.is_control() {
            let mut buf = [0u8; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_id_is_cut_and_hashed_and_a_short_one_kept_whole() {
        let long = "é".repeat(700);
        let other = format!("{}x", "é".repeat(699));
        let (a, b) = (
            document(Uuid::nil(), &long).expect("valid"),
            document(Uuid::nil(), &other).expect("valid"),
        );
        assert_ne!(
            a.key, b.key,
            "ids sharing their first bytes keep distinct keys"
        );
        assert!(a.key.contains("%H") && a.key.len() <= 1024);
        let short = "a".repeat(WHOLE_ID);
        assert_eq!(id_key(&short), short);
    }

    #[test]
    fn control_characters_and_percent_are_escaped_in_keys() {
        assert_eq!(escape("a%b\nc\u{85}é"), "a%25b%0Ac%C2%85é");
        let stream = document(Uuid::nil(), "x\u{1}").expect("valid");
        assert!(!stream.key.chars().any(char::is_control));
    }
}
