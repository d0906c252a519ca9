//! CouchDB attachments in a body: inline base64 data becomes a stub naming its digest, the
//! bytes go to content-addressed storage (`_sync:att:sha1-…`), and stubs sent back by a
//! client are resolved against the parent revision.
//!
//! Two digests per attachment: the storage key is Sync Gateway's `sha1-<base64>`; the digest a
//! client sees is CouchDB's `md5-<base64>` (PouchDB compares it with its own).

use crate::body::Members;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::HashMap;

/// Raw attachments above this are refused (their event must stay under NATS' 1 MiB payload).
pub const MAX_ATTACHMENT: usize = 600_000;

/// An attachment whose bytes are to be stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAttachment {
    /// `sha1-<base64>`: the storage key.
    pub sha1: String,
    /// `md5-<base64>`: the client-facing digest.
    pub md5: String,
    /// The bytes.
    pub data: Vec<u8>,
}

impl NewAttachment {
    /// Digests `data`.
    pub fn of(data: Vec<u8>) -> NewAttachment {
        let sha1 = format!("sha1-{}", STANDARD.encode(sha1::Sha1::digest(&data)));
        let md5 = format!("md5-{}", STANDARD.encode(Md5::digest(&data)));
        NewAttachment { sha1, md5, data }
    }

    /// The storage stream's key: the SHA-1 as hex (safe in a NATS subject).
    pub fn stream_key(&self) -> String {
        hex::encode(sha1::Sha1::digest(&self.data))
    }
}

/// A stored attachment entry: CouchDB's stub.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stub {
    /// The media type.
    pub content_type: String,
    /// `md5-<base64>`.
    pub digest: String,
    /// Bytes.
    pub length: u64,
    /// The generation that added it.
    pub revpos: u64,
    /// Always true in storage.
    pub stub: bool,
}

/// An entry as a client may send it.
#[derive(Debug, Deserialize)]
struct Sent {
    #[serde(default)]
    content_type: Option<String>,
    #[serde(default)]
    data: Option<String>,
    #[serde(default)]
    stub: bool,
    #[serde(default)]
    follows: bool,
    #[serde(default)]
    digest: Option<String>,
    #[serde(default)]
    length: Option<u64>,
    #[serde(default)]
    revpos: Option<u64>,
}

/// Why a body's attachments were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttachmentError {
    /// Malformed `_attachments`.
    #[error("invalid attachment `{0}`: {1}")]
    Invalid(String, String),
    /// A stub names an attachment the parent revision does not have (CouchDB's 412).
    #[error("Invalid attachment stub in {0}")]
    MissingStub(String),
    /// Too large to carry.
    #[error("attachment `{0}` is larger than {MAX_ATTACHMENT} bytes")]
    TooLarge(String),
}

/// The stubs of a body's `_attachments`, by name.
pub fn stubs(body: &str) -> HashMap<String, Stub> {
    let Ok(members) = serde_json::from_str::<Members>(body) else {
        return HashMap::new();
    };
    members
        .0
        .iter()
        .find(|(k, _)| k == "_attachments")
        .and_then(|(_, v)| serde_json::from_str(v.get()).ok())
        .unwrap_or_default()
}

fn raw(value: &impl Serialize) -> Result<Box<RawValue>, AttachmentError> {
    serde_json::value::to_raw_value(value)
        .map_err(|e| AttachmentError::Invalid("_attachments".into(), e.to_string()))
}

/// Replaces inline data by stubs (returning the bytes to store) and completes stubs from
/// `parent` (the body the revision descends from). `revpos` is the new revision's generation.
pub fn prepare(
    body: &str,
    parent: Option<&str>,
    revpos: u64,
) -> Result<(String, Vec<NewAttachment>), AttachmentError> {
    let Ok(mut members) = serde_json::from_str::<Members>(body) else {
        return Ok((body.to_owned(), Vec::new()));
    };
    let Some(slot) = members.0.iter().position(|(k, _)| k == "_attachments") else {
        return Ok((body.to_owned(), Vec::new()));
    };
    let sent: Vec<(String, Sent)> = serde_json::from_str::<Members>(members.0[slot].1.get())
        .map_err(|e| AttachmentError::Invalid("_attachments".into(), e.to_string()))?
        .0
        .into_iter()
        .map(|(name, v)| {
            serde_json::from_str::<Sent>(v.get())
                .map(|s| (name.clone(), s))
                .map_err(|e| AttachmentError::Invalid(name, e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    let inherited = parent.map(stubs).unwrap_or_default();
    let mut stored = Vec::new();
    let mut out = Vec::new();
    for (name, entry) in sent {
        let stub = resolve(&name, entry, &inherited, revpos, &mut stored)?;
        out.push((name, raw(&stub)?));
    }
    members.0[slot].1 = RawValue::from_string(Members(out).to_json())
        .map_err(|e| AttachmentError::Invalid("_attachments".into(), e.to_string()))?;
    Ok((members.to_json(), stored))
}

fn resolve(
    name: &str,
    entry: Sent,
    inherited: &HashMap<String, Stub>,
    revpos: u64,
    stored: &mut Vec<NewAttachment>,
) -> Result<Stub, AttachmentError> {
    let content_type = entry
        .content_type
        .clone()
        .unwrap_or_else(|| "application/octet-stream".into());
    if let Some(data) = entry.data {
        let bytes = STANDARD
            .decode(data.as_bytes())
            .map_err(|e| AttachmentError::Invalid(name.to_owned(), e.to_string()))?;
        if bytes.len() > MAX_ATTACHMENT {
            return Err(AttachmentError::TooLarge(name.to_owned()));
        }
        let new = NewAttachment::of(bytes);
        let stub = Stub {
            content_type,
            digest: new.md5.clone(),
            length: new.data.len() as u64,
            revpos: entry.revpos.unwrap_or(revpos),
            stub: true,
        };
        stored.push(new);
        return Ok(stub);
    }
    if entry.follows {
        return Err(AttachmentError::Invalid(
            name.to_owned(),
            "multipart uploads are not supported; send the data inline".into(),
        ));
    }
    if !entry.stub {
        return Err(AttachmentError::Invalid(
            name.to_owned(),
            "needs data or stub".into(),
        ));
    }
    match (inherited.get(name), entry.digest, entry.length) {
        (Some(parent), digest, _) if digest.as_ref().is_none_or(|d| *d == parent.digest) => {
            Ok(parent.clone())
        }
        (_, Some(digest), Some(length)) => Ok(Stub {
            content_type,
            digest,
            length,
            revpos: entry.revpos.unwrap_or(revpos),
            stub: true,
        }),
        _ => Err(AttachmentError::MissingStub(name.to_owned())),
    }
}

/// The body with every attachment's data inline (`data` in place of `stub`), from `data` by
/// md5 digest; entries whose bytes are unknown stay stubs.
pub fn inline(body: &str, data: &HashMap<String, Vec<u8>>) -> String {
    let Ok(mut members) = serde_json::from_str::<Members>(body) else {
        return body.to_owned();
    };
    let Some(slot) = members.0.iter().position(|(k, _)| k == "_attachments") else {
        return body.to_owned();
    };
    let entries: Vec<(String, Stub)> = stubs(body).into_iter().collect();
    let mut out = serde_json::Map::new();
    let mut names: Vec<&(String, Stub)> = entries.iter().collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, stub) in names {
        let value = match data.get(&stub.digest) {
            Some(bytes) => serde_json::json!({
                "content_type": stub.content_type, "digest": stub.digest, "length": stub.length,
                "revpos": stub.revpos, "data": STANDARD.encode(bytes)
            }),
            None => serde_json::to_value(stub).unwrap_or_default(),
        };
        out.insert(name.clone(), value);
    }
    match serde_json::value::to_raw_value(&out) {
        Ok(value) => members.0[slot].1 = value,
        Err(e) => tracing::error!(error = %e, "attachments did not serialise"),
    }
    members.to_json()
}

/// `body` with attachment `name` set to `entry` (inline data), or removed when `None`.
pub fn set(body: &str, name: &str, entry: Option<serde_json::Value>) -> String {
    let mut members = serde_json::from_str::<Members>(body).unwrap_or_default();
    let slot = match members.0.iter().position(|(k, _)| k == "_attachments") {
        Some(slot) => slot,
        None => {
            let empty = RawValue::from_string("{}".into());
            match empty {
                Ok(empty) => members.0.push(("_attachments".into(), empty)),
                Err(e) => tracing::error!(error = %e, "empty object did not parse"),
            }
            members.0.len() - 1
        }
    };
    let mut entries = serde_json::from_str::<Members>(members.0[slot].1.get()).unwrap_or_default();
    entries.0.retain(|(k, _)| k != name);
    if let Some(entry) = entry
        && let Ok(raw) = serde_json::value::to_raw_value(&entry)
    {
        entries.0.push((name.to_owned(), raw));
    }
    if entries.0.is_empty() {
        members.0.remove(slot);
    } else if let Ok(raw) = RawValue::from_string(entries.to_json()) {
        members.0[slot].1 = raw;
    }
    members.to_json()
}

/// Base64 of bytes (for events).
pub fn encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Bytes of base64 (from events).
pub fn decode(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    STANDARD.decode(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_data_becomes_a_stub_with_couchdbs_md5_digest() {
        let body =
            r#"{"a":1,"_attachments":{"hi.txt":{"content_type":"text/plain","data":"aGVsbG8="}}}"#;
        let (stored_body, stored) = prepare(body, None, 2).expect("valid");
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].md5, "md5-XUFAKrxLKna5cZ2REBfFkg==");
        assert_eq!(stored[0].sha1, "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=");
        assert_eq!(
            stored_body,
            r#"{"a":1,"_attachments":{"hi.txt":{"content_type":"text/plain","digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","length":5,"revpos":2,"stub":true}}}"#
        );
    }

    #[test]
    fn a_stub_is_completed_from_the_parent_and_an_unknown_stub_is_refused() {
        let parent = r#"{"_attachments":{"x":{"content_type":"text/plain","digest":"md5-a","length":1,"revpos":1,"stub":true}}}"#;
        let (body, stored) =
            prepare(r#"{"_attachments":{"x":{"stub":true}}}"#, Some(parent), 2).expect("valid");
        assert!(stored.is_empty());
        assert_eq!(stubs(&body)["x"].revpos, 1);
        assert_eq!(
            prepare(r#"{"_attachments":{"y":{"stub":true}}}"#, Some(parent), 2),
            Err(AttachmentError::MissingStub("y".into()))
        );
    }

    #[test]
    fn inlining_puts_the_bytes_back() {
        let body = r#"{"_attachments":{"x":{"content_type":"text/plain","digest":"md5-a","length":2,"revpos":1,"stub":true}}}"#;
        let data = HashMap::from([("md5-a".to_owned(), b"hi".to_vec())]);
        assert_eq!(
            inline(body, &data),
            r#"{"_attachments":{"x":{"content_type":"text/plain","data":"aGk=","digest":"md5-a","length":2,"revpos":1}}}"#
        );
    }
}
