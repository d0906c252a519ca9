//! Payloads of the `docs` context (Couchbase Sync Gateway's document model behind CouchDB's
//! replication API).
//!
//! Six kinds of stream carry them (context `docs`):
//!
//! | stream | payload enum | what it holds |
//! |---|---|---|
//! | `docs/database/<db>` | [`DatabaseEvent`] | a database's creations (each a fresh *incarnation*) and deletions |
//! | `docs/document/<incarnation>/<doc id>` | [`DocumentEvent`] | every revision of one document, in the order they were stored |
//! | `docs/local/<incarnation>/<doc id>` | [`LocalEvent`] | one `_local/` document: saves and deletions, no revision tree |
//! | `docs/attachment/<sha1 hex>` | [`AttachmentEvent`] | one attachment's bytes, content-addressed |
//! | `docs/user/<incarnation>/<name>` | [`UserEvent`] | one user: password hash, admin channels and roles, email, disabled |
//! | `docs/role/<incarnation>/<name>` | [`RoleEvent`] | one role: its admin channels |
//!
//! A database that is deleted and created again gets a new incarnation (a uuid chosen by the
//! creating request), so its documents start in new streams and the old ones stay in the log.
//! In stream keys the document id is escaped: `%` and control characters become `%XX`
//! (the relay builds NATS subjects and headers from keys); the payload carries the id as sent.
//!
//! Bodies are JSON text (an object without the `_id`, `_rev`, `_revisions`, `_deleted` members),
//! kept as a string so that member order, numbers and `\u0000` escapes round-trip byte for byte.

use crate::DomainEvent;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Events of a database stream `docs/database/<db>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum DatabaseEvent {
    /// `PUT /docs/{db}`: the database exists from now on, as a fresh incarnation.
    DatabaseCreated {
        /// The database's name as the client spelt it.
        name: String,
        /// Names the streams of this incarnation's documents.
        incarnation: Uuid,
        /// How many ancestors of each leaf the read model keeps (Sync Gateway's default 1000).
        revs_limit: u32,
        /// The sync function's JavaScript source; `None`: Sync Gateway's default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sync: Option<String>,
        /// The channels an anonymous client may read (`["*"]`: all, CouchDB's admin party);
        /// `None`: the guest is disabled and every request must log in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guest: Option<Vec<String>>,
    },
    /// `PUT /docs/_admin/{db}/_config/sync`: the sync function changes for later writes.
    SyncFunctionSet {
        /// The incarnation it applies to.
        incarnation: Uuid,
        /// The JavaScript source; `None`: back to the default.
        sync: Option<String>,
    },
    /// A design document's `validate_doc_update` changed (the design document was written
    /// with a new one, or without one, or deleted): the writes after it are checked by the
    /// database's functions as they stand, read from this stream by the write command.
    ValidatorSet {
        /// The incarnation it applies to.
        incarnation: Uuid,
        /// The design document's id (`_design/<name>`).
        design: String,
        /// The function's JavaScript source; `None`: the design document has none any more.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        validate: Option<String>,
    },
    /// `POST /docs/_admin/{db}/_compact`: tombstones whose last change is at or before
    /// `up_to_seq` leave the read model (the log keeps them); a `_changes` checkpoint older than
    /// the newest purged one must start over.
    TombstonesPurged {
        /// The incarnation.
        incarnation: Uuid,
        /// The horizon: a log position.
        up_to_seq: i64,
    },
    /// `POST /docs/{db}/_compact` (CouchDB's compaction): the bodies of revisions that are no
    /// longer leaves, which the read model keeps from the moment a revision gains a child (as
    /// CouchDB keeps them until compaction), leave it. The log keeps every body.
    RevisionBodiesCompacted {
        /// The incarnation compacted.
        incarnation: Uuid,
    },
    /// `DELETE /docs/{db}`: the database and every document of this incarnation are gone.
    DatabaseDeleted {
        /// The incarnation that ends.
        incarnation: Uuid,
    },
}

impl DomainEvent for DatabaseEvent {}

/// Events of a document stream `docs/document/<incarnation>/<doc id>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum DocumentEvent {
    /// One revision joined the document's revision tree, with the ancestors it brought.
    RevisionStored {
        /// The database the document belongs to.
        db: String,
        /// The document id as the client sent it.
        doc_id: String,
        /// The new revision, `generation-digest`.
        rev: String,
        /// Its ancestry, parent first, down to the first revision the tree already held (which
        /// is included) or to the root of what the client sent. Revisions not yet in the tree are
        /// grafted in this order; empty for a new root.
        ancestry: Vec<String>,
        /// The revision's body as JSON text.
        body: String,
        /// Whether the revision is a deletion (a tombstone).
        deleted: bool,
        /// The channels the sync function routed the revision to.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        channels: Vec<String>,
        /// The access the sync function granted: user (or `role:` name) → channels.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        access: BTreeMap<String, Vec<String>>,
        /// The roles the sync function granted (`role()`): user → roles.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        roles: BTreeMap<String, Vec<String>>,
    },
    /// `POST /docs/_admin/{db}/_resync`: the database's current sync function, run again over
    /// the winning revision, routes it differently from before; these replace the document's
    /// channels, access and role grants (the revision itself is unchanged).
    DocumentResynced {
        /// The database the document belongs to.
        db: String,
        /// The document id as the client sent it.
        doc_id: String,
        /// The winning revision the function ran on.
        rev: String,
        /// The channels it now belongs to.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        channels: Vec<String>,
        /// The access it now grants: user (or `role:` name) → channels.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        access: BTreeMap<String, Vec<String>>,
        /// The roles it now grants: user → roles.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        roles: BTreeMap<String, Vec<String>>,
    },
    /// `POST /docs/_admin/{db}/_purge`: the document leaves the read model entirely (reads are
    /// 404, `_changes` no longer lists it, its grants end); the log keeps its history. A later
    /// write of the same id starts a new revision tree.
    DocumentPurged {
        /// The database the document belongs to.
        db: String,
        /// The document id as the client sent it.
        doc_id: String,
    },
}

impl DomainEvent for DocumentEvent {}

/// Events of a local document stream `docs/local/<incarnation>/<doc id>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum LocalEvent {
    /// The local document was written; its `_rev` is now `0-<number>`.
    LocalSaved {
        /// The database it belongs to.
        db: String,
        /// The id without the `_local/` prefix.
        doc_id: String,
        /// The revision number (the `N` of `0-N`).
        number: u64,
        /// The body as JSON text.
        body: String,
    },
    /// The local document was deleted.
    LocalDeleted {
        /// The database it belongs to.
        db: String,
        /// The id without the `_local/` prefix.
        doc_id: String,
    },
}

impl DomainEvent for LocalEvent {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_round_trips_through_its_envelope() {
        let event = DocumentEvent::RevisionStored {
            db: "db".into(),
            doc_id: "a b".into(),
            rev: "2-abc".into(),
            ancestry: vec!["1-def".into()],
            body: r#"{"k\u0000":"v"}"#.into(),
            deleted: false,
            channels: vec![],
            access: BTreeMap::new(),
            roles: BTreeMap::new(),
        };
        let encoded = event.encode().expect("encode");
        assert_eq!(encoded.event_type, "RevisionStored");
        let back: DocumentEvent =
            crate::domain::decode_parts("RevisionStored", 1, &encoded.payload).expect("decode");
        assert_eq!(back, event);
    }

    #[test]
    fn purges_and_resyncs_round_trip_and_say_their_type() {
        let events = [
            DocumentEvent::DocumentPurged {
                db: "db".into(),
                doc_id: "a".into(),
            },
            DocumentEvent::DocumentResynced {
                db: "db".into(),
                doc_id: "a".into(),
                rev: "2-abc".into(),
                channels: vec!["c".into()],
                access: BTreeMap::new(),
                roles: [("ann".to_owned(), vec!["role:r".to_owned()])].into(),
            },
        ];
        for (event, kind) in events.iter().zip(["DocumentPurged", "DocumentResynced"]) {
            let encoded = event.encode().expect("encode");
            assert_eq!(encoded.event_type, kind);
            let back: DocumentEvent =
                crate::domain::decode_parts(kind, 1, &encoded.payload).expect("decode");
            assert_eq!(&back, event);
        }
    }
}

/// Events of an attachment stream `docs/attachment/<sha1 hex>`: content-addressed, so one
/// attachment is stored once however many documents and revisions refer to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum AttachmentEvent {
    /// The attachment's bytes, stored under Sync Gateway's key `_sync:att:<sha1>`.
    AttachmentStored {
        /// `sha1-` + base64 of the SHA-1 of the bytes: the storage key.
        sha1: String,
        /// `md5-` + base64 of the MD5 of the bytes: the digest clients see, as CouchDB's.
        md5: String,
        /// The length in bytes.
        length: u64,
        /// The bytes, base64, when small enough to travel in the event (exactly one of `data`
        /// and `location` is set).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// Where larger bytes are in the attachment folder (`<sha1 hex[0..2]>/<sha1 hex>`,
        /// relative to it): they never travel in an event.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        location: Option<String>,
    },
}

impl DomainEvent for AttachmentEvent {}

/// Events of a user stream `docs/user/<incarnation>/<name>` (Sync Gateway's `user:` entries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum UserEvent {
    /// The user was created or changed through the admin API.
    UserSaved {
        /// The database.
        db: String,
        /// The user's name.
        name: String,
        /// The bcrypt hash of the password in the clear: only events written before hashes
        /// were sealed carry it (they still load); new events carry `password_sealed`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        password_hash: Option<String>,
        /// The bcrypt hash of the password (never the password) sealed with the server's
        /// password key (AES-256-GCM, base64url `IV ‖ ciphertext ‖ tag`): destroying the key
        /// shreds it in every copy of the log. `None` (and no `password_hash`): no password login.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        password_sealed: Option<String>,
        /// Channels granted by an administrator.
        admin_channels: Vec<String>,
        /// Roles granted by an administrator.
        admin_roles: Vec<String>,
        /// The user's email.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        email: Option<String>,
        /// A disabled user cannot log in.
        disabled: bool,
    },
    /// A session of the user ended at its logout (`DELETE /{db}/_session`): its cookie is
    /// refused from then on.
    SessionEnded {
        /// The database.
        db: String,
        /// The user's name.
        name: String,
        /// The session's id (the random part of its cookie, never the whole cookie).
        session: String,
        /// When the session would have expired (unix seconds): its record may go after that.
        expires: i64,
    },
    /// The user was deleted.
    UserDeleted {
        /// The database.
        db: String,
        /// The user's name.
        name: String,
    },
}

impl DomainEvent for UserEvent {}

/// Events of a role stream `docs/role/<incarnation>/<name>` (Sync Gateway's `role:` entries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum RoleEvent {
    /// The role was created or changed.
    RoleSaved {
        /// The database.
        db: String,
        /// The role's name.
        name: String,
        /// Channels granted by an administrator to every user with the role.
        admin_channels: Vec<String>,
    },
    /// The role was deleted.
    RoleDeleted {
        /// The database.
        db: String,
        /// The role's name.
        name: String,
    },
}

impl DomainEvent for RoleEvent {}
