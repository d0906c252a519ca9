//! Payloads of the `records` context: organisation-scoped documents of declared classes whose
//! `data` the host cannot read.
//!
//! | stream | payload enum | what it holds |
//! |---|---|---|
//! | `records/class/<Clazz>` | [`ClassEvent`] | the class's declaration (once; identical redeclarations append nothing) |
//! | `records/doc/<org>:<Clazz>:<pk>` | [`DocumentEvent`] | one document: created, updated, zombified, purged |
//! | `records/unique/<G or O.org>:<Clazz>:<index>:<sha16>` | [`UniqueEvent`] | who owns one value of a unique index |
//! | `records/token/<org>` | [`TokenEvent`] | the organisation's bearer tokens (their sha32, never the token) |
//! | `records/ftp/<org>` | [`FtpEvent`] | the organisation's files to purge from storage |
//! | `records/task/<org>:<k0>` | [`TaskEvent`] | one deferred task |
//!
//! What an event shows is exactly what the spec lets the database host see: keys (`pk`, the
//! sha16 of collection values, `uniq`/`hash` index values as sha16), the `string`/`int`/`float`/
//! `list` index values, `v` and `z`. The document's `data` is msgpack sealed with the site key
//! (AES-256-GCM, `IV ‖ ciphertext ‖ tag`) and carried as base64url: nothing else of it is readable
//! on the log or on NATS.

use crate::DomainEvent;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A class of documents as declared (schema file or `declareClass`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassDeclaration {
    /// The class name, starting with an upper-case letter (`Article`).
    pub clazz: String,
    /// SYNC (true): deletion makes a zombie, collections can be subscribed to; NOSYNC: purge.
    pub sync: bool,
    /// The primary-key properties `p1 p2 …`; `pk` is the sha16 of their values joined by `/`.
    #[serde(default)]
    pub pk: Vec<String>,
    /// The synchronisable sub-collections, numbered by `ik` in this order.
    #[serde(default)]
    pub collections: Vec<CollectionDeclaration>,
    /// The indexed properties `i0 i1 …`.
    #[serde(default)]
    pub indexes: Vec<IndexDeclaration>,
}

/// One synchronisable sub-collection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectionDeclaration {
    /// The row's column name.
    pub name: String,
    /// The identifying properties: one list property (`list`), or string properties joined by `/`.
    pub props: Vec<String>,
    /// True when the one property is a list of strings (`L` in the spec).
    #[serde(default)]
    pub list: bool,
}

/// One indexed property.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexDeclaration {
    /// The applicative property indexed, also the row's column name.
    pub name: String,
    /// How the value is kept and filtered.
    #[serde(rename = "type")]
    pub kind: IndexKind,
    /// Global (admin only) or per organisation (default).
    #[serde(default)]
    pub scope: Scope,
}

/// The types of index the spec names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IndexKind {
    /// sha16 of a string, unique across documents of its scope; equality only.
    Uniq,
    /// sha16 of a string; equality only.
    Hash,
    /// The string as is; equality and order.
    String,
    /// An integer as is; equality and order.
    Int,
    /// A float as is; equality and order.
    Float,
    /// A list of strings as is; `in` only.
    List,
}

/// The scope of an index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Scope {
    /// Across every organisation: usable by administration only.
    G,
    /// Within one organisation (the default).
    #[default]
    O,
}

/// Events of a `records/class/<Clazz>` stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum ClassEvent {
    /// The class exists with this shape; its row table is created by the projector.
    ClassDeclared {
        /// The declaration.
        declaration: ClassDeclaration,
    },
}

impl DomainEvent for ClassEvent {}

/// A collection column's value: one sha16, or a list of sha16 for a list collection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CollectionKey {
    /// sha16 of the identifying values joined by `/`.
    One(String),
    /// sha16 of each value of the list property.
    Many(Vec<String>),
}

/// An index column's value, tagged by its column type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IndexValue {
    /// `uniq`, `hash` (a sha16) or `string` index.
    Text(String),
    /// `int` index.
    Int(i64),
    /// `float` index.
    Float(f64),
    /// `list` index.
    List(Vec<String>),
}

/// The row of a document as the SQL provider stores it, minus the technical `x z ck del`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Row {
    /// The organisation code (`""` for `Hdr`).
    pub org: String,
    /// The document's class.
    pub clazz: String,
    /// The primary key (sha16, the org code for `Org`, `1` for `Hdr`).
    pub pk: String,
    /// The version: the time (UTC epoch ms) of the operation that wrote it.
    pub v: i64,
    /// Collection columns by name; absent when the identifying properties are.
    #[serde(default)]
    pub collections: BTreeMap<String, CollectionKey>,
    /// Index columns by name; absent when the property is.
    #[serde(default)]
    pub indexes: BTreeMap<String, IndexValue>,
    /// The sealed data, base64url without padding.
    pub data: String,
}

/// The `del` row written beside an update that took the document out of some collections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LeftRow {
    /// The old values of the collections the document left (removed values for a list).
    pub collections: BTreeMap<String, CollectionKey>,
    /// The sealed minimal data: `v`, the primary-key properties and `del`.
    pub data: String,
}

/// A `del` row's resealed data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LeftSeal {
    /// The `del` row's version.
    pub v: i64,
    /// Its sealed minimal data.
    pub data: String,
}

/// Events of a `records/doc/<org>:<Clazz>:<pk>` stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum DocumentEvent {
    /// The document was inserted (`x` = 0).
    DocumentCreated {
        /// Its row.
        row: Row,
    },
    /// The document was updated (or a zombie revived); `left` is the `del` row when a
    /// collection's identifying value changed.
    DocumentUpdated {
        /// Its new row.
        row: Row,
        /// The `del` row (same pk and v, `z` = v).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        left: Option<LeftRow>,
    },
    /// A SYNC document was deleted: it stays as a zombie (`x` = 1, `z` = v, minimal data,
    /// collections kept so subscribers learn of it, indexes dropped).
    DocumentZombified {
        /// The zombie's row.
        row: Row,
    },
    /// The document and its `del` rows are physically gone (NOSYNC delete, or purge).
    DocumentPurged {
        /// Its organisation.
        org: String,
        /// Its class.
        clazz: String,
        /// Its primary key.
        pk: String,
    },
    /// The document's sealed data (its row's and its `del` rows') sealed again with the
    /// current site key: key rotation, by a new event.
    DocumentResealed {
        /// Its organisation.
        org: String,
        /// Its class.
        clazz: String,
        /// Its primary key.
        pk: String,
        /// The row's data, resealed.
        data: String,
        /// Each `del` row's data, resealed, by the row's version.
        #[serde(default)]
        left: Vec<LeftSeal>,
    },
    /// The document's `del` rows older than `before` (their `z`) are gone (a purge of old
    /// zombies and `del` rows).
    LeftRowsPurged {
        /// Its organisation.
        org: String,
        /// Its class.
        clazz: String,
        /// Its primary key.
        pk: String,
        /// `del` rows with `z` < this are gone.
        before: i64,
    },
}

impl DomainEvent for DocumentEvent {}

/// Events of a `records/ftp/<org>` stream: the organisation's files to purge from storage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum FtpEvent {
    /// File `path` may be purged from storage after day `p`.
    FtpSet {
        /// The organisation.
        org: String,
        /// `folderId/fid`.
        path: String,
        /// The day of purge.
        p: i64,
    },
    /// File `path` is no longer listed.
    FtpPurged {
        /// The organisation.
        org: String,
        /// `folderId/fid`.
        path: String,
    },
}

impl DomainEvent for FtpEvent {}

/// Events of a `records/task/<org>:<k0>` stream: one deferred task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum TaskEvent {
    /// The task is due at `i0` (`AAAAMMJJhhmmssmmm`) with this sealed data (created,
    /// rescheduled, counted down, or its last exception recorded).
    TaskScheduled {
        /// The organisation.
        org: String,
        /// sha16 of `process/pk…`.
        k0: String,
        /// When it is due.
        i0: String,
        /// The sealed task data.
        data: String,
    },
    /// The task is finished (or deleted).
    TaskDone {
        /// The organisation.
        org: String,
        /// Its key.
        k0: String,
    },
}

impl DomainEvent for TaskEvent {}

/// Events of a `records/unique/…` stream: the owner `[org, clazz, pk]` of one unique value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum UniqueEvent {
    /// The value now belongs to this document.
    UniqueClaimed {
        /// `[org, clazz, pk]`.
        owner: [String; 3],
    },
    /// The document no longer holds the value.
    UniqueReleased {
        /// `[org, clazz, pk]`.
        owner: [String; 3],
    },
}

impl DomainEvent for UniqueEvent {}

/// Events of a `records/token/<org>` stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum TokenEvent {
    /// A bearer token scoped to the organisation was issued; only its sha32 is kept.
    OrgTokenIssued {
        /// The organisation.
        org: String,
        /// sha32 of the token.
        hash: String,
    },
}

impl DomainEvent for TokenEvent {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_values_say_their_type() {
        let v = serde_json::to_value(IndexValue::Int(3)).expect("json");
        assert_eq!(v, serde_json::json!({"int": 3}));
        let f: IndexValue = serde_json::from_value(serde_json::json!({"float": 3})).expect("float");
        assert_eq!(f, IndexValue::Float(3.0));
    }

    #[test]
    fn declarations_read_the_issue_shape() {
        let d: ClassDeclaration = serde_json::from_value(serde_json::json!({
            "clazz": "Article", "sync": true, "pk": ["p1"],
            "collections": [{"name": "auteurs", "props": ["auteurs"], "list": true}],
            "indexes": [{"name": "taille", "type": "int", "scope": "O"}, {"name": "code", "type": "uniq"}]
        }))
        .expect("declaration");
        assert_eq!(d.indexes[1].scope, Scope::O);
        assert_eq!(d.indexes[0].kind, IndexKind::Int);
    }
}
