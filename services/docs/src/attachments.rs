//! CouchDB attachments in a body: inline base64 data becomes a stub naming its digest, the
//! bytes go to content-addressed storage (`_sync:att:sha1-…`), and stubs sent back by a
//! client are resolved against the parent revision.
//!
//! Two digests per attachment: the storage key is Sync Gateway's `sha1-<base64>`; the digest a
//! client sees is CouchDB's `md5-<base64>` (PouchDB compares it with its own). Both are
//! computed in one pass while the bytes stream into the platform's content store
//! ([`palimpsest_web::content`]): up to the inline size (64 KiB unless configured) the bytes
//! travel in the attachment's event; above it they are moved into the attachment folder under
//! their SHA-1 (stored once however many documents share them) and the event carries the
//! location, so an attachment of any size (up to the upload limit) is accepted without ever
//! being whole in memory on the standalone route.
//!
//! Receiving is I/O, so it happens at the edge, before the command: [`receive`] for a
//! standalone upload, [`receive_inline`] for the `data` members of a JSON body (`PUT` doc,
//! `_bulk_docs`). The pure [`prepare`] then turns the body's entries into stubs.

use crate::body::Members;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use futures::Stream;
use md5::{Digest, Md5};
use palimpsest_events::docs::AttachmentEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;
use palimpsest_web::content::{self, Content, ContentError, ContentStore, Hasher, Received};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::HashMap;

/// Default largest attachment kept inline (in its event and the table row): 64 KiB
/// ([`crate::Settings::inline_max`]).
pub const DEFAULT_INLINE_MAX: u64 = 64 * 1024;

/// SHA-1 and MD5 over the bytes as they stream in: one pass gives the storage key and the
/// client's digest.
#[derive(Default)]
pub struct AttachmentHasher {
    sha1: sha1::Sha1,
    md5: Md5,
}

/// The digests of an attachment's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digests {
    /// `sha1-<base64>`: the storage key.
    pub sha1: String,
    /// `md5-<base64>`: the client-facing digest.
    pub md5: String,
    /// The SHA-1 as hex: the storage stream's key and the file's name (safe in a NATS subject
    /// and a path).
    pub sha1_hex: String,
}

impl Hasher for AttachmentHasher {
    type Digests = Digests;

    fn update(&mut self, chunk: &[u8]) {
        self.sha1.update(chunk);
        self.md5.update(chunk);
    }

    fn finish(self) -> Digests {
        let sha1 = self.sha1.finalize();
        Digests {
            sha1: format!("sha1-{}", STANDARD.encode(sha1)),
            md5: format!("md5-{}", STANDARD.encode(self.md5.finalize())),
            sha1_hex: hex::encode(sha1),
        }
    }

    fn key(digests: &Digests) -> String {
        digests.sha1_hex.clone()
    }
}

/// An attachment received into the store, to be named by its event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAttachment {
    /// Its digests.
    pub digests: Digests,
    /// Bytes.
    pub length: u64,
    /// The bytes (small) or their location in the attachment folder.
    pub content: Content,
}

impl NewAttachment {
    fn of(received: Received<Digests>) -> NewAttachment {
        NewAttachment {
            digests: received.digests,
            length: received.size,
            content: received.content,
        }
    }

    /// The storage stream's key: the SHA-1 as hex (safe in a NATS subject).
    pub fn stream_key(&self) -> &str {
        &self.digests.sha1_hex
    }
}

/// Streams a standalone upload's body into the store, one chunk at a time.
pub async fn receive<S, E>(store: &ContentStore, body: S) -> Result<NewAttachment, ContentError>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: std::fmt::Display,
{
    let received = content::receive(store, body, AttachmentHasher::default()).await?;
    Ok(NewAttachment::of(received))
}

/// Stores bytes already in memory (an attachment decoded from a JSON body).
pub async fn receive_bytes(
    store: &ContentStore,
    bytes: Vec<u8>,
) -> Result<NewAttachment, ContentError> {
    let received = content::receive_bytes(store, bytes, AttachmentHasher::default()).await?;
    Ok(NewAttachment::of(received))
}

/// An attachment received before the command, with what its entry said about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uploaded {
    /// The media type.
    pub content_type: String,
    /// The `revpos` the client sent (a replicated revision keeps its own).
    pub revpos: Option<u64>,
    /// The bytes, received.
    pub attachment: NewAttachment,
}

impl Uploaded {
    /// The stub the body keeps in place of the bytes (`revpos` the given one unless sent).
    fn stub(&self, revpos: u64) -> Stub {
        Stub {
            content_type: self.content_type.clone(),
            digest: self.attachment.digests.md5.clone(),
            length: self.attachment.length,
            revpos: self.revpos.unwrap_or(revpos),
            stub: true,
        }
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
    /// The attachment folder could not be written.
    #[error("attachment store: {0}")]
    Store(String),
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

/// A body's members and its `_attachments` entries as sent.
struct Parsed {
    /// The body's members.
    members: Members,
    /// Where `_attachments` is among them.
    slot: usize,
    /// Its entries, by name.
    sent: Vec<(String, Sent)>,
}

/// The attachments named in `_attachments` as sent (`None`: not an object, or none).
fn sent(body: &str) -> Result<Option<Parsed>, AttachmentError> {
    let Ok(members) = serde_json::from_str::<Members>(body) else {
        return Ok(None);
    };
    let Some(slot) = members.0.iter().position(|(k, _)| k == "_attachments") else {
        return Ok(None);
    };
    let sent = serde_json::from_str::<Members>(members.0[slot].1.get())
        .map_err(|e| AttachmentError::Invalid("_attachments".into(), e.to_string()))?
        .0
        .into_iter()
        .map(|(name, v)| {
            serde_json::from_str::<Sent>(v.get())
                .map(|s| (name.clone(), s))
                .map_err(|e| AttachmentError::Invalid(name, e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    Ok(Some(Parsed {
        members,
        slot,
        sent,
    }))
}

/// Takes every inline `data` out of `body` into the store (the edge of a `PUT` or a
/// `_bulk_docs`): the body keeps a stub in its place and the received attachments come back
/// by name, for [`prepare`]. A body without attachments (or not an object) is left as it is.
pub async fn receive_inline(
    store: &ContentStore,
    body: &str,
) -> Result<(String, Vec<(String, Uploaded)>), AttachmentError> {
    let Some(Parsed {
        mut members,
        slot,
        sent,
    }) = sent(body)?
    else {
        return Ok((body.to_owned(), Vec::new()));
    };
    if sent.iter().all(|(_, entry)| entry.data.is_none()) {
        return Ok((body.to_owned(), Vec::new()));
    }
    let mut uploaded = Vec::new();
    let mut entries = serde_json::from_str::<Members>(members.0[slot].1.get())
        .map_err(|e| AttachmentError::Invalid("_attachments".into(), e.to_string()))?;
    for (name, entry) in sent {
        let Some(data) = entry.data else { continue };
        let bytes = STANDARD
            .decode(data.as_bytes())
            .map_err(|e| AttachmentError::Invalid(name.clone(), e.to_string()))?;
        let attachment = receive_bytes(store, bytes)
            .await
            .map_err(|e| AttachmentError::Store(e.to_string()))?;
        let upload = Uploaded {
            content_type: entry
                .content_type
                .unwrap_or_else(|| "application/octet-stream".into()),
            revpos: entry.revpos,
            attachment,
        };
        if let Some(slot) = entries.0.iter_mut().find(|(k, _)| *k == name) {
            slot.1 = raw(&upload.stub(0))?;
        }
        uploaded.push((name, upload));
    }
    members.0[slot].1 = RawValue::from_string(entries.to_json())
        .map_err(|e| AttachmentError::Invalid("_attachments".into(), e.to_string()))?;
    Ok((members.to_json(), uploaded))
}

/// Turns every entry of the body's `_attachments` into a stored stub: those in `uploaded`
/// (received at the edge) name their new bytes, stubs are completed from `parent` (the body
/// the revision descends from). `revpos` is the new revision's generation: a new edit gives
/// it to every attachment whose bytes it sends (CouchDB does, whatever `revpos` was sent); a
/// replicated revision (`new_edit` false) keeps the one it sent. A name starting with `_` is
/// refused, as CouchDB refuses it.
pub fn prepare(
    body: &str,
    parent: Option<&str>,
    revpos: u64,
    uploaded: &[(&str, &Uploaded)],
    new_edit: bool,
) -> Result<String, AttachmentError> {
    let Some(Parsed {
        mut members,
        slot,
        sent,
    }) = sent(body)?
    else {
        return Ok(body.to_owned());
    };
    let inherited = parent.map(stubs).unwrap_or_default();
    let mut out = Vec::new();
    for (name, entry) in sent {
        if name.starts_with('_') {
            return Err(AttachmentError::Invalid(
                name,
                "Attachment name can't start with '_'".into(),
            ));
        }
        let stub = match uploaded.iter().find(|(n, _)| *n == name) {
            Some((_, upload)) => {
                check_content_type(&name, &upload.content_type)?;
                let mut stub = upload.stub(revpos);
                if new_edit {
                    stub.revpos = revpos;
                }
                stub
            }
            None => resolve(&name, entry, &inherited)?,
        };
        out.push((name, raw(&stub)?));
    }
    members.0[slot].1 = RawValue::from_string(Members(out).to_json())
        .map_err(|e| AttachmentError::Invalid("_attachments".into(), e.to_string()))?;
    Ok(members.to_json())
}

/// The stored stub a sent stub stands for: the parent's attachment of that name (and digest,
/// when the stub names one), or CouchDB's `missing_stub`.
fn resolve(
    name: &str,
    entry: Sent,
    inherited: &HashMap<String, Stub>,
) -> Result<Stub, AttachmentError> {
    if entry.data.is_some() {
        return Err(AttachmentError::Invalid(
            name.to_owned(),
            "inline data must be received into the store first".into(),
        ));
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
    // Only the parent's own attachment resolves a stub: a digest is never looked up anywhere
    // else (another document's, another database's, or none at all), as CouchDB and Sync
    // Gateway answer `missing_stub`.
    match inherited.get(name) {
        Some(parent) if entry.digest.as_ref().is_none_or(|d| *d == parent.digest) => {
            Ok(parent.clone())
        }
        _ => Err(AttachmentError::MissingStub(name.to_owned())),
    }
}

/// Whether a media type can be sent back as a `Content-Type` header: printable ASCII only (a
/// CR, LF or other control character would make every later download fail).
fn check_content_type(name: &str, content_type: &str) -> Result<(), AttachmentError> {
    if content_type
        .bytes()
        .all(|byte| (0x20..0x7f).contains(&byte))
    {
        return Ok(());
    }
    Err(AttachmentError::Invalid(
        name.to_owned(),
        "content_type must be printable ASCII (no control characters)".into(),
    ))
}

/// The body with every attachment's data inline (`data` in place of `stub`: CouchDB's
/// `{content_type, digest, revpos, data}`, without `length`), from `data` by md5 digest;
/// entries whose bytes are unknown stay stubs.
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
                "content_type": stub.content_type, "digest": stub.digest,
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

/// Whether an attachment's content-addressed stream holds its bytes: the write side's view of
/// the store, so each content is stored once however many documents share it.
#[derive(Debug, Clone, Default)]
pub struct AttachmentState {
    /// The bytes are stored.
    pub stored: bool,
}

impl StreamState for AttachmentState {
    fn initial(_: &StreamName) -> Self {
        AttachmentState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        let AttachmentEvent::AttachmentStored { .. } = AttachmentEvent::decode(event)?;
        self.stored = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_store(inline_max: u64) -> ContentStore {
        let dir = std::env::temp_dir().join(format!("docs-attachments-{}", uuid::Uuid::new_v4()));
        ContentStore::new(dir, inline_max)
    }

    #[tokio::test]
    async fn inline_data_becomes_a_stub_with_couchdbs_md5_digest() {
        let store = temp_store(DEFAULT_INLINE_MAX);
        let body =
            r#"{"a":1,"_attachments":{"hi.txt":{"content_type":"text/plain","data":"aGVsbG8="}}}"#;
        let (received_body, uploaded) = receive_inline(&store, body).await.expect("valid");
        assert_eq!(uploaded.len(), 1);
        let attachment = &uploaded[0].1.attachment;
        assert_eq!(attachment.digests.md5, "md5-XUFAKrxLKna5cZ2REBfFkg==");
        assert_eq!(attachment.digests.sha1, "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=");
        assert_eq!(attachment.content, Content::Inline(b"hello".to_vec()));
        let named: Vec<(&str, &Uploaded)> = uploaded.iter().map(|(n, u)| (n.as_str(), u)).collect();
        assert_eq!(
            prepare(&received_body, None, 2, &named, false).expect("prepared"),
            r#"{"a":1,"_attachments":{"hi.txt":{"content_type":"text/plain","digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","length":5,"revpos":2,"stub":true}}}"#
        );
        assert!(!store.dir.exists(), "inline bytes touch no file");
    }

    #[tokio::test]
    async fn large_inline_data_goes_to_the_folder_under_its_sha1() {
        let store = temp_store(4);
        let body = r#"{"_attachments":{"x":{"data":"aGVsbG8=","revpos":3}}}"#;
        let (_, uploaded) = receive_inline(&store, body).await.expect("valid");
        let attachment = &uploaded[0].1.attachment;
        let location = format!("aa/{}", attachment.digests.sha1_hex);
        assert_eq!(attachment.content, Content::Location(location.clone()));
        assert_eq!(
            std::fs::read(store.path_of(&location).expect("path")).expect("file"),
            b"hello"
        );
        assert_eq!(uploaded[0].1.stub(9).revpos, 3, "a sent revpos is kept");
        let named: Vec<(&str, &Uploaded)> = vec![("x", &uploaded[0].1)];
        let body = r#"{"_attachments":{"x":{"stub":true}}}"#;
        let edited = prepare(body, None, 9, &named, true).expect("prepared");
        assert_eq!(
            stubs(&edited)["x"].revpos,
            9,
            "a new edit's data is at its generation"
        );
        let replicated = prepare(body, None, 9, &named, false).expect("prepared");
        assert_eq!(
            stubs(&replicated)["x"].revpos,
            3,
            "a replicated revision keeps its own"
        );
        assert!(
            prepare(
                r#"{"_attachments":{"_x":{"stub":true}}}"#,
                None,
                9,
                &named,
                true
            )
            .is_err(),
            "a name starting with _ is refused"
        );
        std::fs::remove_dir_all(&store.dir).expect("cleanup");
    }

    #[test]
    fn a_stub_is_completed_from_the_parent_and_an_unknown_stub_is_refused() {
        let parent = r#"{"_attachments":{"x":{"content_type":"text/plain","digest":"md5-a","length":1,"revpos":1,"stub":true}}}"#;
        let body = prepare(
            r#"{"_attachments":{"x":{"stub":true}}}"#,
            Some(parent),
            2,
            &[],
            true,
        )
        .expect("valid");
        assert_eq!(stubs(&body)["x"].revpos, 1);
        assert_eq!(
            prepare(
                r#"{"_attachments":{"y":{"stub":true}}}"#,
                Some(parent),
                2,
                &[],
                true
            ),
            Err(AttachmentError::MissingStub("y".into()))
        );
    }

    #[test]
    fn a_stub_resolves_only_to_the_parents_attachment_of_that_name_and_digest() {
        let parent = r#"{"_attachments":{"x":{"content_type":"text/plain","digest":"md5-a","length":1,"revpos":1,"stub":true}}}"#;
        let elsewhere =
            r#"{"_attachments":{"x":{"stub":true,"digest":"md5-b","length":7,"revpos":1}}}"#;
        assert_eq!(
            prepare(elsewhere, Some(parent), 2, &[], false),
            Err(AttachmentError::MissingStub("x".into())),
            "a digest the parent does not hold under that name"
        );
        assert_eq!(
            prepare(elsewhere, None, 1, &[], false),
            Err(AttachmentError::MissingStub("x".into())),
            "a new document has no attachment to point at"
        );
        let renamed = r#"{"_attachments":{"y":{"stub":true,"digest":"md5-a","length":1}}}"#;
        assert_eq!(
            prepare(renamed, Some(parent), 2, &[], false),
            Err(AttachmentError::MissingStub("y".into())),
            "the parent's digest under another name"
        );
        let same = r#"{"_attachments":{"x":{"stub":true,"digest":"md5-a"}}}"#;
        assert_eq!(
            stubs(&prepare(same, Some(parent), 2, &[], false).expect("held"))["x"].digest,
            "md5-a"
        );
    }

    #[tokio::test]
    async fn a_content_type_with_control_characters_is_refused() {
        let store = temp_store(DEFAULT_INLINE_MAX);
        let body =
            r#"{"_attachments":{"x":{"content_type":"text/plain\r\nX-Evil: 1","data":"aGk="}}}"#;
        let (received, uploaded) = receive_inline(&store, body).await.expect("received");
        let named: Vec<(&str, &Uploaded)> = uploaded.iter().map(|(n, u)| (n.as_str(), u)).collect();
        assert!(matches!(
            prepare(&received, None, 1, &named, false),
            Err(AttachmentError::Invalid(name, _)) if name == "x"
        ));
        assert_eq!(check_content_type("x", "text/plain; charset=utf-8"), Ok(()));
        assert!(check_content_type("x", "text/plain\u{7f}").is_err());
        assert!(check_content_type("x", "text/pl\u{e4}in").is_err());
    }

    #[test]
    fn inlining_puts_the_bytes_back() {
        let body = r#"{"_attachments":{"x":{"content_type":"text/plain","digest":"md5-a","length":2,"revpos":1,"stub":true}}}"#;
        let data = HashMap::from([("md5-a".to_owned(), b"hi".to_vec())]);
        assert_eq!(
            inline(body, &data),
            r#"{"_attachments":{"x":{"content_type":"text/plain","data":"aGk=","digest":"md5-a","revpos":1}}}"#
        );
    }
}
