//! Payloads of the `atlas` context (Ultimate History Map): sections and the published map.
//!
//! Five kinds of stream carry them (context `atlas`):
//!
//! | stream | payload enum | what it holds |
//! |---|---|---|
//! | `atlas/section/<section id>` | [`SectionEvent`] | a section's creation, locks, commits, restores, submissions and their reviews |
//! | `atlas/entity/<entity id>` | [`EntityEvent`] | one published entity: created, updated, deleted |
//! | `atlas/geometry/<geometry id>` | [`GeometryEvent`] | one published geometry: created, updated, deleted, its entity links replaced |
//! | `atlas/publication/map` | [`PublicationEvent`] | one event per approved submission: the order in which the map was published |
//! | `atlas/user/<user id>` | [`UserEvent`] | a user's bearer token (its SHA-256 only) and roles, issued and revoked by the administrator |
//!
//! Published rows change only through an approval: every entity, geometry and publication event
//! of one approval is appended in the same transaction as the section's `SubmissionApproved`, and
//! each names the submission, section and reviewer ([`PublicationSource`]).
//!
//! Times are [`Timestamp`]s: UTC, millisecond precision, written as JavaScript's
//! `Date.prototype.toISOString` writes them (`2026-04-19T10:00:00.000Z`), the form the original
//! stored in its TEXT columns.

use crate::DomainEvent;
use chrono::{DateTime, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A UTC instant with millisecond precision, serialised as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
///
/// It exists so that every time the context stores (`created_at`, `lock_expires_at`, ...) has one
/// textual form: clients send `updated_at` back as `base_updated_at`, and the form must not
/// depend on which code path wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    /// The instant, truncated to whole milliseconds.
    pub fn new(at: DateTime<Utc>) -> Self {
        let millis = at.timestamp_millis();
        Timestamp(DateTime::from_timestamp_millis(millis).unwrap_or(at))
    }

    /// Parses any RFC 3339 time (the offset is converted to UTC, precision cut to milliseconds).
    pub fn parse(text: &str) -> Option<Self> {
        DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| Timestamp::new(t.with_timezone(&Utc)))
    }

    /// The instant as a chrono time.
    pub fn instant(&self) -> DateTime<Utc> {
        self.0
    }

    /// This instant plus a number of seconds.
    pub fn plus_seconds(&self, seconds: i64) -> Self {
        Timestamp(self.0 + chrono::Duration::seconds(seconds))
    }

    /// The ISO text, e.g. `2026-04-19T10:00:00.000Z`.
    pub fn to_iso(&self) -> String {
        self.0.to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_iso())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_iso())
    }
}

/// Published as the text [`Timestamp::to_iso`] writes: an RFC 3339 UTC time with milliseconds.
impl JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A UTC instant with millisecond precision, as JavaScript's toISOString writes it.",
            "type": "string",
            "format": "date-time",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$"
        })
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Timestamp::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("not an RFC 3339 time: {text}")))
    }
}

/// A commit of a section: a full snapshot, never a diff. Shared by manual commits
/// ([`SectionEvent::SectionCommitted`], kind `manual`) and restores
/// ([`SectionEvent::SectionRestored`], kind `restore`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommitRecorded {
    /// The commit's id (uuid).
    pub commit_id: String,
    /// Its number in the section: 1 for the first commit, then +1 each.
    pub commit_no: i64,
    /// The section's head commit before this one, if any.
    pub parent_commit_id: Option<String>,
    /// For a restore: the commit whose snapshot was copied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_from_commit_id: Option<String>,
    /// Who made the commit (it held the section's lock).
    pub created_by: String,
    /// When.
    pub created_at: Timestamp,
    /// The commit's title, if given.
    pub title: Option<String>,
    /// The commit's note, if given.
    pub note: Option<String>,
    /// The whole snapshot, as the editor sent it (or as copied from the restored commit).
    pub snapshot: Value,
    /// `sha256:<hex>` over the snapshot's RFC 8785 canonical JSON.
    pub snapshot_hash: String,
}

/// Events of a section stream, `atlas/section/<section id>`: the editor/review workflow.
///
/// Statuses: `editing` → (`SectionSubmitted`) `submitted` → `approved` | `rejected` | `conflicted`;
/// a commit or restore brings a `rejected` or `conflicted` section back to `editing`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum SectionEvent {
    /// A section was created; it starts `editing`, version 0, unlocked, without commits.
    SectionCreated {
        /// The section's id (uuid).
        section_id: String,
        /// Its title (never empty).
        title: String,
        /// Its description.
        description: Option<String>,
        /// The owner or user it concerns.
        user_id: Option<String>,
        /// Who created it.
        created_by: Option<String>,
        /// When.
        created_at: Timestamp,
    },
    /// An editor took (or renewed) the section's lock; it lasts until `lock_expires_at`.
    SectionLocked {
        /// The lock holder.
        locked_by: String,
        /// When the lock was taken.
        locked_at: Timestamp,
        /// When it lapses (15 minutes after `locked_at`).
        lock_expires_at: Timestamp,
    },
    /// The lock was released explicitly.
    SectionUnlocked {
        /// Who released it.
        unlocked_by: Option<String>,
        /// When.
        at: Timestamp,
    },
    /// A manual commit: new head, version + 1, status `editing`.
    SectionCommitted(CommitRecorded),
    /// A restore: a new commit copying an older commit's snapshot; new head, version + 1, `editing`.
    SectionRestored(CommitRecorded),
    /// A commit was submitted for review: a `pending` submission holding a copy of the commit's
    /// snapshot; the section becomes `submitted`, version + 1, and its lock is released.
    SectionSubmitted {
        /// The submission's id (uuid).
        submission_id: String,
        /// The submitted commit.
        commit_id: String,
        /// Who submitted.
        submitted_by: String,
        /// When.
        submitted_at: Timestamp,
        /// The commit's snapshot, copied whole.
        snapshot: Value,
        /// The commit's snapshot hash, copied.
        snapshot_hash: String,
    },
    /// A reviewer approved a pending submission and its snapshot was published in the same
    /// append; the submission and the section become `approved`, version + 1.
    SubmissionApproved {
        /// The submission.
        submission_id: String,
        /// The reviewer.
        reviewed_by: Option<String>,
        /// When.
        reviewed_at: Timestamp,
        /// The reviewer's note.
        review_note: Option<String>,
    },
    /// A reviewer rejected a pending submission; nothing was published; the submission and
    /// the section become `rejected`, version + 1.
    SubmissionRejected {
        /// The submission.
        submission_id: String,
        /// The reviewer.
        reviewed_by: Option<String>,
        /// When.
        reviewed_at: Timestamp,
        /// The reviewer's note.
        review_note: Option<String>,
    },
    /// An approval found the snapshot could not be applied to the published map (a base
    /// mismatch, a missing or deleted row, a slug taken, a bad hash); nothing was published.
    /// The submission and the section become `conflicted`, version + 1; `message` is stored as
    /// the submission's `review_note`.
    SubmissionConflicted {
        /// The submission.
        submission_id: String,
        /// The reviewer who tried to approve.
        reviewed_by: Option<String>,
        /// When.
        reviewed_at: Timestamp,
        /// Why the snapshot could not be applied.
        message: String,
    },
}

impl DomainEvent for SectionEvent {}

/// Which approval made a published change: every entity and geometry event carries it, so each
/// row's history names its submission and reviewer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PublicationSource {
    /// The approved submission.
    pub submission_id: String,
    /// Its section.
    pub section_id: String,
    /// The reviewer who approved it.
    pub reviewed_by: Option<String>,
}

/// A published entity's fields, as the `entities` table holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EntityRow {
    /// The entity's id (chosen by the editor's snapshot).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its slug, unique among all entities (deleted ones included).
    pub slug: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// Its semantic type (`country` unless the snapshot says otherwise).
    pub type_id: String,
    /// Its business status: 1 when the snapshot leaves it out, `None` (SQL NULL, which the spec's
    /// `status INTEGER DEFAULT 1` allows) when the snapshot sends `"status": null`. Events written
    /// before it could be null carry an integer, which still reads.
    pub status: Option<i64>,
    /// 1 once soft-deleted.
    pub is_deleted: i64,
    /// When it was first published.
    pub created_at: Timestamp,
    /// When it was last changed.
    pub updated_at: Timestamp,
}

/// Events of a published entity's stream, `atlas/entity/<entity id>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum EntityEvent {
    /// A snapshot's `create` published a new entity.
    EntityCreated {
        /// The new row.
        entity: EntityRow,
        /// The approval that published it.
        source: PublicationSource,
    },
    /// A snapshot's `update`/`replace` changed the entity; `entity` is the whole new row.
    EntityUpdated {
        /// The row after the change.
        entity: EntityRow,
        /// The approval that published it.
        source: PublicationSource,
    },
    /// A snapshot's `delete` soft-deleted the entity (`is_deleted = 1`, `updated_at = at`). Its
    /// links are removed by `GeometryLinksReplaced` events of the same append.
    EntityDeleted {
        /// The entity.
        entity_id: String,
        /// When (the new `updated_at`).
        at: Timestamp,
        /// The approval that deleted it.
        source: PublicationSource,
    },
}

impl DomainEvent for EntityEvent {}

/// A geometry's bounding box, in degrees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bbox {
    /// West edge.
    pub min_lng: f64,
    /// South edge.
    pub min_lat: f64,
    /// East edge.
    pub max_lng: f64,
    /// North edge.
    pub max_lat: f64,
}

/// A published geometry's fields, as the `geometries` table holds them (links apart).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GeometryRow {
    /// The geometry's id (chosen by the editor's snapshot).
    pub id: String,
    /// Its semantic type, used by the map to render it.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// 1 once soft-deleted.
    pub is_deleted: i64,
    /// The GeoJSON geometry.
    pub draw_geometry: Value,
    /// Ids of geometries bound to it: strings, no empties, no duplicates, never its own id.
    pub binding: Option<Vec<String>>,
    /// First year it applies to.
    pub time_start: Option<i64>,
    /// Last year it applies to.
    pub time_end: Option<i64>,
    /// Its bounding box, sent by the snapshot or computed from `draw_geometry`.
    pub bbox: Option<Bbox>,
    /// When it was first published.
    pub created_at: Timestamp,
    /// When it was last changed.
    pub updated_at: Timestamp,
}

/// Events of a published geometry's stream, `atlas/geometry/<geometry id>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum GeometryEvent {
    /// A snapshot's `create` published a new geometry.
    GeometryCreated {
        /// The new row.
        geometry: GeometryRow,
        /// The approval that published it.
        source: PublicationSource,
    },
    /// The geometry changed; `geometry` is the whole new row.
    GeometryUpdated {
        /// The row after the change.
        geometry: GeometryRow,
        /// `None` for a snapshot's `update`/`replace`; `Some(id)` when the only change is that the
        /// deleted geometry `id` was stripped from this geometry's `binding`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stripped_binding: Option<String>,
        /// The approval that published it.
        source: PublicationSource,
    },
    /// A snapshot's `delete` soft-deleted the geometry and removed all its links.
    GeometryDeleted {
        /// The geometry.
        geometry_id: String,
        /// When (the new `updated_at`).
        at: Timestamp,
        /// The approval that deleted it.
        source: PublicationSource,
    },
    /// The geometry's entity links are now exactly `entity_ids` (all old links removed).
    GeometryLinksReplaced {
        /// The geometry.
        geometry_id: String,
        /// The linked entities, in the order given; may be empty when a deleted entity's link
        /// was the last one.
        entity_ids: Vec<String>,
        /// When (the links' `created_at`).
        at: Timestamp,
        /// `None` for a snapshot's link scope; `Some(id)` when the only change is that the deleted
        /// entity `id` was unlinked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unlinked_entity: Option<String>,
        /// The approval that published it.
        source: PublicationSource,
    },
}

impl DomainEvent for GeometryEvent {}

/// Events of `atlas/publication/map`: one per approval that published anything. Every approval
/// appends here with an exact expected version, so approvals are serialised: the second of two
/// concurrent approvals re-decides against the first one's published state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum PublicationEvent {
    /// A submission's snapshot was applied to the published map.
    SubmissionPublished {
        /// The approval that published.
        source: PublicationSource,
        /// When.
        at: Timestamp,
        /// Entities whose stream received an event, sorted.
        entity_ids: Vec<String>,
        /// Geometries whose stream received an event, sorted.
        geometry_ids: Vec<String>,
    },
}

impl DomainEvent for PublicationEvent {}

/// Events of a user's stream, `atlas/user/<user id>`: who may call the section workflow, and as
/// what. The token itself is never stored: only its SHA-256, so the log cannot be replayed into
/// credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum UserEvent {
    /// The administrator issued the user a new token (a reissue replaces the previous one).
    UserTokenIssued {
        /// The user's id: what the spec's `created_by`, `locked_by`, `reviewed_by` … hold.
        user_id: String,
        /// Its roles (`editor`, `reviewer`), sorted, never empty.
        roles: Vec<String>,
        /// Lowercase hex SHA-256 of the token.
        token_sha256: String,
        /// When.
        issued_at: Timestamp,
    },
    /// The administrator revoked the user: its token no longer authenticates.
    UserRevoked {
        /// The user's id.
        user_id: String,
        /// When.
        revoked_at: Timestamp,
    },
}

impl DomainEvent for UserEvent {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::decode_parts;

    #[test]
    fn timestamps_print_like_javascript_and_truncate_to_millis() {
        let t = Timestamp::parse("2026-04-19T10:00:00.123456+07:00").expect("parses");
        assert_eq!(t.to_iso(), "2026-04-19T03:00:00.123Z");
        assert_eq!(
            serde_json::to_value(t).expect("ser"),
            "2026-04-19T03:00:00.123Z"
        );
        assert_eq!(t.plus_seconds(900).to_iso(), "2026-04-19T03:15:00.123Z");
        assert!(Timestamp::parse("yesterday").is_none());
    }

    #[test]
    fn section_events_round_trip_through_envelopes() {
        let at = Timestamp::parse("2026-04-19T10:00:00Z").expect("time");
        let ev = SectionEvent::SectionLocked {
            locked_by: "ann".into(),
            locked_at: at,
            lock_expires_at: at.plus_seconds(900),
        };
        let new = ev.encode().expect("encode");
        assert_eq!(new.event_type, "SectionLocked");
        assert_eq!(
            new.payload["lock_expires_at"],
            serde_json::json!("2026-04-19T10:15:00.000Z")
        );
        let back: SectionEvent =
            decode_parts(&new.event_type, new.schema_version, &new.payload).expect("decode");
        assert_eq!(back, ev);
    }

    #[test]
    fn geometry_rows_name_their_kind_type() {
        let at = Timestamp::parse("2026-04-19T10:00:00Z").expect("time");
        let row = GeometryRow {
            id: "g".into(),
            kind: Some("country".into()),
            is_deleted: 0,
            draw_geometry: serde_json::json!({"type": "Point", "coordinates": [1, 2]}),
            binding: None,
            time_start: None,
            time_end: None,
            bbox: None,
            created_at: at,
            updated_at: at,
        };
        let v = serde_json::to_value(&row).expect("ser");
        assert_eq!(v["type"], "country");
        assert_eq!(serde_json::from_value::<GeometryRow>(v).expect("de"), row);
    }
}
