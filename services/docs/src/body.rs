//! Document JSON in and out, byte-faithful.
//!
//! A body is kept as JSON text: its top-level members in the order the client sent them, each
//! value exactly as sent (a [`RawValue`]), so numbers, nested member order and `\u0000` escapes
//! round-trip. Incoming documents are split into CouchDB's special members and the body;
//! outgoing ones are the body with `_id`, `_rev` and the asked-for specials spliced in, so no
//! member the client did not send or CouchDB does not define (`_sync` above all) reaches it.

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// A JSON object's members in order, each value as its exact text.
#[derive(Debug, Default)]
pub struct Members(pub Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut out = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Box<RawValue>>()? {
                    out.push((key, value));
                }
                Ok(Members(out))
            }
        }
        deserializer.deserialize_map(Ordered)
    }
}

impl Members {
    /// The object's JSON text: `{"k":v,...}` with each value as sent.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{");
        for (i, (key, value)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_string(&mut out, key);
            out.push(':');
            out.push_str(value.get());
        }
        out.push('}');
        out
    }
}

/// Appends `text` as a JSON string.
pub fn push_string(out: &mut String, text: &str) {
    match serde_json::to_string(text) {
        Ok(quoted) => out.push_str(&quoted),
        Err(e) => tracing::error!(error = %e, "a string did not serialise"),
    }
}

/// The largest whole number an `f64` holds exactly (2^53).
const MAX_EXACT_FLOAT: f64 = 9_007_199_254_740_992.0;

/// A non-negative whole number, also when written with a fraction (`3.0`): JSON does not tell
/// `3` from `3.0` (JSON Schema's `integer` is both), so neither do we.
pub fn whole_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let number = serde_json::Number::deserialize(deserializer)?;
    if let Some(whole) = number.as_u64() {
        return Ok(whole);
    }
    match number.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 && f <= MAX_EXACT_FLOAT => Ok(f as u64),
        _ => Err(serde::de::Error::custom(format!(
            "expected a non-negative whole number, got {number}"
        ))),
    }
}

/// An optional [`whole_number`] that fits a `u32` (`revs_limit`).
pub fn optional_whole_u32<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u32>, D::Error> {
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let whole = whole_number(number).map_err(serde::de::Error::custom)?;
    u32::try_from(whole)
        .map(Some)
        .map_err(|_| serde::de::Error::custom(format!("{whole} is over {}", u32::MAX)))
}

/// `_revisions`: the ancestry a replicator sends, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Revisions {
    /// The generation of `ids[0]`.
    #[serde(deserialize_with = "whole_number")]
    pub start: u64,
    /// Digests, newest first.
    pub ids: Vec<String>,
}

/// An incoming document split into CouchDB's special members and its body.
#[derive(Debug)]
pub struct Incoming {
    /// `_id`.
    pub id: Option<String>,
    /// `_rev`.
    pub rev: Option<String>,
    /// `_revisions`.
    pub revisions: Option<Revisions>,
    /// `_deleted`.
    pub deleted: bool,
    /// The body as JSON text (`_attachments` stays in it, as sent).
    pub body: String,
}

/// Why an incoming document was refused (CouchDB's 400 `bad_request` / `doc_validation`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// Not a JSON object.
    #[error("Document must be a JSON object: {0}")]
    NotObject(String),
    /// An underscore member CouchDB does not define.
    #[error("Bad special document member: {0}")]
    BadSpecial(String),
    /// A special member of the wrong type.
    #[error("{0} has the wrong type")]
    BadType(&'static str),
    /// Objects and arrays nested deeper than [`MAX_DEPTH`].
    #[error("Document nests objects and arrays deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

/// The deepest nesting of objects and arrays a document may have (the document itself is
/// level 1). Every later step may walk a body recursively (the sync function's `JSON.parse`,
/// serde), so a bound checked first, by a scan that does not recurse, keeps a hostile body
/// from exhausting a stack: it is answered 400 instead.
pub const MAX_DEPTH: usize = 100;

/// The deepest nesting of objects and arrays in JSON text (strings skipped), found without
/// recursion; stops counting once past `limit`.
pub fn nesting_depth(text: &str, limit: usize) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > limit {
                    return deepest;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Special members CouchDB accepts on input and drops.
const IGNORED: [&str; 5] = [
    "_conflicts",
    "_deleted_conflicts",
    "_revs_info",
    "_local_seq",
    "_removed",
];

impl Incoming {
    /// Parses a document from its JSON text.
    pub fn parse(text: &[u8]) -> Result<Incoming, BodyError> {
        let members: Members =
            serde_json::from_slice(text).map_err(|e| BodyError::NotObject(e.to_string()))?;
        Self::from_members(members)
    }

    /// Splits parsed members.
    pub fn from_members(members: Members) -> Result<Incoming, BodyError> {
        let mut doc = Incoming {
            id: None,
            rev: None,
            revisions: None,
            deleted: false,
            body: String::new(),
        };
        // The members are one level below the document.
        let too_deep = |value: &RawValue| nesting_depth(value.get(), MAX_DEPTH - 1) >= MAX_DEPTH;
        if members.0.iter().any(|(_, value)| too_deep(value)) {
            return Err(BodyError::TooDeep);
        }
        let mut body = Vec::new();
        for (key, value) in members.0 {
            match key.as_str() {
                "_id" => doc.id = Some(field(&value, "_id")?),
                "_rev" => doc.rev = Some(field(&value, "_rev")?),
                "_revisions" => doc.revisions = Some(field(&value, "_revisions")?),
                "_deleted" => doc.deleted = field(&value, "_deleted")?,
                "_attachments" => body.push((key, value)),
                // CouchDB's replicator keeps its state in these members; they stay in the body.
                kept if kept.starts_with("_replication_") => body.push((key, value)),
                ignored if IGNORED.contains(&ignored) => {}
                special if special.starts_with('_') => {
                    return Err(BodyError::BadSpecial(key));
                }
                _ => body.push((key, value)),
            }
        }
        doc.body = Members(body).to_json();
        Ok(doc)
    }
}

fn field<T: serde::de::DeserializeOwned>(
    value: &RawValue,
    name: &'static str,
) -> Result<T, BodyError> {
    serde_json::from_str(value.get()).map_err(|_| BodyError::BadType(name))
}

/// Builds an outgoing document: `_id`, `_rev`, the body's members, then specials.
pub struct Outgoing {
    text: String,
}

impl Outgoing {
    /// Starts `{"_id":id,"_rev":rev,<body members>`.
    pub fn new(id: &str, rev: &str, body: &str) -> Outgoing {
        let mut text = String::from("{\"_id\":");
        push_string(&mut text, id);
        text.push_str(",\"_rev\":");
        push_string(&mut text, rev);
        let inner = body
            .trim()
            .strip_prefix('{')
            .and_then(|b| b.strip_suffix('}'))
            .unwrap_or("")
            .trim();
        if !inner.is_empty() {
            text.push(',');
            text.push_str(inner);
        }
        Outgoing { text }
    }

    /// Adds a special member whose value is already JSON.
    pub fn member(mut self, key: &str, value_json: &str) -> Outgoing {
        self.text.push(',');
        push_string(&mut self.text, key);
        self.text.push(':');
        self.text.push_str(value_json);
        self
    }

    /// Adds a special member serialised from `value`.
    pub fn value(self, key: &str, value: &impl serde::Serialize) -> Outgoing {
        match serde_json::to_string(value) {
            Ok(json) => self.member(key, &json),
            Err(e) => {
                tracing::error!(error = %e, key, "a special member did not serialise");
                self
            }
        }
    }

    /// The finished JSON text.
    pub fn finish(mut self) -> String {
        self.text.push('}');
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_keeps_member_order_numbers_and_nul_escapes() {
        let text = br#"{"_id":"a","z":1.50,"a":{"y":[1,2],"\u0000":"x\u0000y"},"_rev":"1-x","big":12345678901234567890123}"#;
        let doc = Incoming::parse(text).expect("valid");
        assert_eq!(doc.id.as_deref(), Some("a"));
        assert_eq!(doc.rev.as_deref(), Some("1-x"));
        assert_eq!(
            doc.body,
            r#"{"z":1.50,"a":{"y":[1,2],"\u0000":"x\u0000y"},"big":12345678901234567890123}"#
        );
        let out = Outgoing::new("a", "1-x", &doc.body).finish();
        assert_eq!(
            out,
            r#"{"_id":"a","_rev":"1-x","z":1.50,"a":{"y":[1,2],"\u0000":"x\u0000y"},"big":12345678901234567890123}"#
        );
    }

    #[test]
    fn a_nul_in_a_top_level_key_round_trips() {
        let doc = Incoming::parse(br#"{"k\u0000":true}"#).expect("valid");
        assert_eq!(doc.body, r#"{"k\u0000":true}"#);
    }

    #[test]
    fn unknown_underscore_members_are_refused_and_known_ones_dropped() {
        assert_eq!(
            Incoming::parse(br#"{"_sync":{}}"#).map(|d| d.body),
            Err(BodyError::BadSpecial("_sync".into()))
        );
        let doc = Incoming::parse(br#"{"_conflicts":["1-a"],"a":1}"#).expect("valid");
        assert_eq!(doc.body, r#"{"a":1}"#);
    }

    #[test]
    fn the_replicators_state_members_stay_in_the_body() {
        let doc = Incoming::parse(br#"{"_replication_state":"triggered","a":1}"#).expect("valid");
        assert_eq!(doc.body, r#"{"_replication_state":"triggered","a":1}"#);
    }

    #[test]
    fn revisions_and_deleted_are_read() {
        let doc = Incoming::parse(br#"{"_deleted":true,"_revisions":{"start":2,"ids":["b","a"]}}"#)
            .expect("valid");
        assert!(doc.deleted);
        assert_eq!(
            doc.revisions,
            Some(Revisions {
                start: 2,
                ids: vec!["b".into(), "a".into()]
            })
        );
        assert_eq!(doc.body, "{}");
    }

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn nesting_is_measured_without_counting_brackets_inside_strings() {
        assert_eq!(nesting_depth(r#"{"a":[{"b":"[[[{{"}]}"#, 10), 3);
        assert_eq!(nesting_depth(r#"{"a":"\"[[["}"#, 10), 1);
        assert_eq!(nesting_depth("1", 10), 0);
        assert_eq!(
            nesting_depth(&nested(20_000), 100),
            101,
            "stops past the limit"
        );
    }

    #[test]
    fn a_document_nested_deeper_than_the_limit_is_refused_and_one_at_it_accepted() {
        let at_limit = format!(r#"{{"a":{}}}"#, nested(MAX_DEPTH - 1));
        assert!(Incoming::parse(at_limit.as_bytes()).is_ok());
        let over = format!(r#"{{"a":{}}}"#, nested(MAX_DEPTH));
        assert_eq!(
            Incoming::parse(over.as_bytes()).map(|d| d.body),
            Err(BodyError::TooDeep)
        );
        let hostile = format!(r#"{{"a":{}}}"#, nested(20_000));
        assert_eq!(
            Incoming::parse(hostile.as_bytes()).map(|d| d.body),
            Err(BodyError::TooDeep)
        );
    }

    #[test]
    fn an_empty_body_gets_only_id_and_rev() {
        assert_eq!(
            Outgoing::new("a", "1-b", "{}").finish(),
            r#"{"_id":"a","_rev":"1-b"}"#
        );
    }
}
