//! Payloads of the `resources` context (MindTouch Deki "Lyons"): files and properties with
//! revisions, and the content they point at.
//!
//! | stream | payload enum | what it holds |
//! |---|---|---|
//! | `resources/resource/<res_id>` | [`ResourceEvent`] | one resource: every revision (a full copy of the head with the change applied), hidden revisions, its wipe |
//! | `resources/content/<sha256 hex>` | [`ContentEvent`] | one stored content, once per digest: its id, where it is, who first stored it |
//! | `resources/name/<type>@<parent>/<name>` | [`NameEvent`] | which live resource holds a name under a parent |
//! | `resources/ids/counters` | [`IdsEvent`] | the blocks of integer ids (`res_id`, `resrev_id`, `rescontent_id`, changeset id) each process leased |
//!
//! Ids are integers as Deki's tables have them, allocated when a command is decided from the
//! counter stream, so they are in the events and a replay gives the same ids.
//!
//! Times are UTC with whole seconds (Deki's `datetime`).

use crate::DomainEvent;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Deki's change mask bits (`resrev_change_mask`): which columns a revision changed.
pub mod mask {
    /// The content changed.
    pub const CONTENT: u8 = 1;
    /// The name changed.
    pub const NAME: u8 = 2;
    /// The language changed.
    pub const LANGUAGE: u8 = 4;
    /// The meta XML changed.
    pub const META: u8 = 8;
    /// The deleted flag changed (a delete or a restore).
    pub const DELETEFLAG: u8 = 16;
    /// The parent changed (a move).
    pub const PARENT: u8 = 32;
    /// Every bit.
    pub const ALL: u8 = CONTENT | NAME | LANGUAGE | META | DELETEFLAG | PARENT;
}

/// Deki's resource types (`res_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResourceType {
    /// A file attached to a page (2).
    File,
    /// A property of a page, file, user or the site (4).
    Property,
}

impl ResourceType {
    /// The number Deki stores.
    pub fn code(self) -> i16 {
        match self {
            ResourceType::File => 2,
            ResourceType::Property => 4,
        }
    }

    /// The word used in stream keys and URLs.
    pub fn word(self) -> &'static str {
        match self {
            ResourceType::File => "file",
            ResourceType::Property => "property",
        }
    }
}

/// What a resource hangs under; Deki's parent types PAGE 1, FILE 2, USER 3, SITE 5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", content = "id", rename_all = "lowercase")]
pub enum Parent {
    /// A page, by page id (pages live outside this context).
    Page(i64),
    /// A file resource, by its `res_id`.
    File(i64),
    /// A user, by user id.
    User(i64),
    /// The site.
    Site,
}

impl Parent {
    /// Deki's parent type number.
    pub fn code(self) -> i16 {
        match self {
            Parent::Page(_) => 1,
            Parent::File(_) => 2,
            Parent::User(_) => 3,
            Parent::Site => 5,
        }
    }

    /// `resrev_parent_id`: the parent resource's id (a file's), else 0.
    pub fn resource_id(self) -> i64 {
        match self {
            Parent::File(id) => id,
            _ => 0,
        }
    }

    /// `resrev_parent_page_id`.
    pub fn page_id(self) -> Option<i64> {
        match self {
            Parent::Page(id) => Some(id),
            _ => None,
        }
    }

    /// `resrev_parent_user_id`.
    pub fn user_id(self) -> Option<i64> {
        match self {
            Parent::User(id) => Some(id),
            _ => None,
        }
    }
}

impl std::fmt::Display for Parent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Parent::Page(id) => write!(f, "page:{id}"),
            Parent::File(id) => write!(f, "file:{id}"),
            Parent::User(id) => write!(f, "user:{id}"),
            Parent::Site => f.write_str("site"),
        }
    }
}

/// The content a revision points at (`resrev_content_id` and the copies Deki keeps beside it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContentRef {
    /// `rescontent_id`.
    pub rescontent_id: i64,
    /// sha256 of the bytes, lower-case hex: the content's identity.
    pub sha256: String,
    /// Size in bytes.
    pub size: i64,
}

/// One revision of a resource: the whole row of `resourcerevs`, a copy of the previous head
/// with the command's change applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Revision {
    /// `resrev_res_id`.
    pub res_id: i64,
    /// `resrev_id`, unique across every revision of every resource.
    pub resrev_id: i64,
    /// `resrev_rev`: 1 for the first revision, then +1 each.
    pub rev: i64,
    /// `res_type`.
    pub res_type: ResourceType,
    /// `resrev_change_mask`, see [`mask`].
    pub change_mask: u8,
    /// `resrev_name`: file name or property key.
    pub name: String,
    /// The parent (`resrev_parent_id`, `resrev_parent_page_id`, `resrev_parent_user_id`).
    pub parent: Parent,
    /// `resrev_language`.
    pub language: Option<String>,
    /// `resrev_meta`.
    pub meta: Option<String>,
    /// `resrev_mimetype`.
    pub mimetype: String,
    /// `resrev_content_id` and `resrev_size`.
    pub content: ContentRef,
    /// `resrev_change_description`.
    pub change_description: Option<String>,
    /// `resrev_user_id`: who made the change.
    pub user_id: i64,
    /// `resrev_timestamp`.
    pub timestamp: DateTime<Utc>,
    /// `resrev_changeset_id`: every revision of one operation shares it.
    pub changeset_id: i64,
    /// `resrev_deleted`.
    pub deleted: bool,
}

/// Events of `resources/resource/<res_id>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum ResourceEvent {
    /// A new revision became the head.
    RevisionAdded(Revision),
    /// Revisions were hidden or shown again (Deki's `resrev_is_hidden`; admin only).
    RevisionsHidden {
        /// The revision numbers.
        revs: Vec<i64>,
        /// Hidden (true) or shown again (false).
        hidden: bool,
        /// The admin who did it.
        user_id: i64,
        /// When.
        timestamp: DateTime<Utc>,
    },
    /// A deleted resource was removed from the archive for good (its rows leave the read model;
    /// the log keeps its history).
    ResourceWiped {
        /// The admin who did it.
        user_id: i64,
        /// When.
        timestamp: DateTime<Utc>,
    },
}

impl DomainEvent for ResourceEvent {}

/// Where stored bytes are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Stored {
    /// In the event and in `rescontent_value`, base64 (standard alphabet, padded).
    Inline {
        /// The bytes, base64.
        base64: String,
    },
    /// In the content store at `rescontent_location` (relative to the store's folder).
    Location {
        /// The path inside the store.
        location: String,
    },
}

/// Events of `resources/content/<sha256>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum ContentEvent {
    /// Content was stored for the first time; later revisions with the same digest share it.
    ContentStored {
        /// `rescontent_id`.
        rescontent_id: i64,
        /// `rescontent_res_id`: the resource that first stored it.
        res_id: i64,
        /// `rescontent_res_rev`: that resource's revision.
        res_rev: i64,
        /// sha256, lower-case hex.
        sha256: String,
        /// `rescontent_size`.
        size: i64,
        /// `rescontent_mimetype`.
        mimetype: String,
        /// Where the bytes are.
        stored: Stored,
    },
}

impl DomainEvent for ContentEvent {}

/// Events of `resources/name/<type>@<parent>/<name>`: the name index that lets a command know
/// whether a name is taken without a read model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum NameEvent {
    /// A live resource took the name.
    NameClaimed {
        /// Its `res_id`.
        res_id: i64,
    },
    /// The resource left the name (renamed, moved or deleted).
    NameReleased {
        /// Its `res_id`.
        res_id: i64,
    },
}

impl DomainEvent for NameEvent {}

/// A range of ids, `first..=last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IdRange {
    /// The first id taken.
    pub first: i64,
    /// The last id taken.
    pub last: i64,
}

/// Events of `resources/ids/counters`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum IdsEvent {
    /// One command's ids, taken inside that command's own append (written by versions before
    /// id blocks; still folded, so a log that has them continues after them). A kind it took
    /// none of is `None`.
    IdsAllocated {
        /// `res_id`s of new resources.
        res: Option<IdRange>,
        /// `resrev_id`s of new revisions.
        resrev: Option<IdRange>,
        /// `rescontent_id`s of newly stored contents.
        rescontent: Option<IdRange>,
        /// The changeset id of the operation.
        changeset: Option<i64>,
    },
    /// A block of ids leased by one process, which hands them out to its commands without
    /// touching this stream again until the block is used up. A kind not leased is `None`;
    /// ids of a block its process did not hand out (it stopped) are never used.
    IdsLeased {
        /// `res_id`s.
        res: Option<IdRange>,
        /// `resrev_id`s.
        resrev: Option<IdRange>,
        /// `rescontent_id`s.
        rescontent: Option<IdRange>,
        /// Changeset ids.
        changeset: Option<IdRange>,
    },
}

impl DomainEvent for IdsEvent {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_round_trips_through_the_envelope() {
        let event = ResourceEvent::RevisionAdded(Revision {
            res_id: 1,
            resrev_id: 7,
            rev: 1,
            res_type: ResourceType::File,
            change_mask: mask::NAME | mask::CONTENT | mask::PARENT,
            name: "a.png".into(),
            parent: Parent::Page(3),
            language: None,
            meta: None,
            mimetype: "image/png".into(),
            content: ContentRef {
                rescontent_id: 2,
                sha256: "ab".into(),
                size: 4,
            },
            change_description: None,
            user_id: 9,
            timestamp: DateTime::from_timestamp(1_700_000_000, 0).expect("time"),
            changeset_id: 5,
            deleted: false,
        });
        let new = event.encode().expect("encode");
        assert_eq!(new.event_type, "RevisionAdded");
        assert_eq!(
            new.payload["parent"],
            serde_json::json!({"kind": "page", "id": 3})
        );
        let back: ResourceEvent =
            crate::domain::decode_parts(&new.event_type, 1, &new.payload).expect("decode");
        assert_eq!(back, event);
    }
}
