//! Payloads of the `pads` context (Etherpad): pads, groups, authors, sessions and their maps.
//!
//! Every stream lives in context [`CONTEXT`]; its category says what it holds and its key is the
//! id exactly as Etherpad spells it:
//!
//! | category | key | payload type |
//! |---|---|---|
//! | [`PAD`] | pad id (`name` or `g.xxxxxxxxxxxxxxxx$name`) | [`PadEvent`] |
//! | [`GROUP`] | group id (`g.` + 16) | [`GroupEvent`] |
//! | [`AUTHOR`] | author id (`a.` + 16) | [`AuthorEvent`] |
//! | [`SESSION`] | session id (`s.` + 16) | [`SessionEvent`] |
//! | [`TOKEN`] | author token | [`TokenEvent`] |
//! | [`AUTHOR_MAPPER`] | an application's author id | [`AuthorMapperEvent`] |
//! | [`GROUP_MAPPER`] | an application's group id | [`GroupMapperEvent`] |
//!
//! A command that touches several records (a pad deletion, a group deletion, a copy, a move, a
//! session deletion) appends to all their streams in one transaction; the streams are written in
//! the order the records must change (for a move: the destination pad before the source).

use crate::DomainEvent;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The bounded context of every stream below.
pub const CONTEXT: &str = "pads";
/// Category of pad streams: revisions, chat, saved revisions, status, read-only id.
pub const PAD: &str = "pad";
/// Category of group streams: the group's pads, sessions and mappers.
pub const GROUP: &str = "group";
/// Category of author streams: the author record, its pads and its sessions.
pub const AUTHOR: &str = "author";
/// Category of session streams.
pub const SESSION: &str = "session";
/// Category of token streams (`token2author`).
pub const TOKEN: &str = "token";
/// Category of author mapper streams (`mapper2author`).
pub const AUTHOR_MAPPER: &str = "author-mapper";
/// Category of group mapper streams (`mapper2group`).
pub const GROUP_MAPPER: &str = "group-mapper";

/// A text with its attribution, Etherpad's `AText`: `attribs` is a changeset-style op string
/// (`*0+5|1+1`) whose attribute numbers refer to the pad's attribute pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AText {
    /// The text; always ends with `\n`.
    pub text: String,
    /// The attribution of every character of `text`.
    pub attribs: String,
}

/// One `[key, value]` attribute of a pool, e.g. `["author", "a.x"]` or `["bold", "true"]`.
pub type Attribute = (String, String);

/// A revision someone marked as saved (Etherpad's `savedRevisions` entries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SavedRevision {
    /// The saved revision number.
    pub rev_num: i64,
    /// The author who saved it.
    pub saved_by_id: String,
    /// Its label (`Revision N` unless given).
    pub label: String,
    /// When it was saved (ms since the epoch).
    pub timestamp: i64,
    /// A random id (20 hex digits).
    pub id: String,
}

/// The time of a chat message as Etherpad keeps it: milliseconds as a number, or the integer
/// text a client passed to `appendChatMessage`, which Etherpad stores as given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ChatTime {
    /// Milliseconds since the epoch.
    Millis(i64),
    /// An integer as the client wrote it.
    Given(String),
}

/// An author's display name as the record holds it: Etherpad distinguishes a name never given
/// (no `name` key), an explicit `null` (authors made for a mapper or token) and a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum AuthorName {
    /// No name key at all.
    Absent,
    /// `"name": null`.
    Null,
    /// A name.
    Text(String),
}

/// Everything of a pad record a copy carries over (Etherpad's `pad:ID` value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PadSnapshot {
    /// The head text.
    pub atext: AText,
    /// The attribute pool, attribute number = index.
    pub pool: Vec<Attribute>,
    /// The head revision number.
    pub head: i64,
    /// The last chat message number (-1: none).
    pub chat_head: i64,
    /// The public status flag.
    pub public_status: bool,
    /// The saved revisions.
    pub saved_revisions: Vec<SavedRevision>,
}

/// Events of a pad stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum PadEvent {
    /// The pad came into existence (its first revision follows).
    PadCreated {
        /// The pad id.
        pad_id: String,
    },
    /// A revision: `changeset` applied to the previous head gives revision `rev`.
    RevisionAppended {
        /// The new head revision number (0 for the pad's first revision).
        rev: i64,
        /// The changeset, against the pad's attribute pool.
        changeset: String,
        /// The author id, or `""` for none.
        author: String,
        /// When it was appended (ms since the epoch).
        timestamp: i64,
        /// Attributes the changeset brought into the pool before it was applied, in order
        /// (a submitted changeset's own attributes); the author's attribute is added after.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        new_attributes: Vec<Attribute>,
    },
    /// The pad's attribute pool was replaced wholesale (Etherpad's copy without history gives
    /// the new pad a clone of the source's pool).
    AttributePoolReplaced {
        /// The new pool, attribute number = index.
        pool: Vec<Attribute>,
    },
    /// A chat message.
    ChatMessageAppended {
        /// Its number (the new chat head).
        index: i64,
        /// The message.
        text: String,
        /// The author id, `None` when the client gave none.
        author_id: Option<String>,
        /// When it was sent.
        time: ChatTime,
    },
    /// A revision was marked as saved.
    RevisionSaved {
        /// The saved revision.
        saved: SavedRevision,
    },
    /// The public status flag changed.
    PublicStatusSet {
        /// The new flag.
        public_status: bool,
    },
    /// The pad got its read-only id (`r.` + 16).
    ReadOnlyIdAssigned {
        /// The read-only id.
        read_only_id: String,
    },
    /// The pad was created as a copy of another pad with its whole history: revisions and chat
    /// messages are those of `source_id` at the time of the copy.
    PadCopied {
        /// The source pad id.
        source_id: String,
        /// The source pad record at the time of the copy.
        snapshot: PadSnapshot,
    },
    /// The pad was deleted with its revisions, chat messages and read-only mapping.
    PadDeleted {
        /// The pad id.
        pad_id: String,
    },
}

impl DomainEvent for PadEvent {}

/// Events of a group stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum GroupEvent {
    /// A group was created.
    GroupCreated {
        /// The group id.
        group_id: String,
    },
    /// An application's group id was mapped to this group.
    GroupMapperAdded {
        /// The mapper.
        mapper: String,
    },
    /// A pad joined the group.
    GroupPadAdded {
        /// The pad id (`groupID$name`).
        pad_id: String,
    },
    /// A pad left the group (deleted or moved away).
    GroupPadRemoved {
        /// The pad id.
        pad_id: String,
    },
    /// A session was opened in the group.
    GroupSessionAdded {
        /// The session id.
        session_id: String,
    },
    /// A session of the group was deleted.
    GroupSessionRemoved {
        /// The session id.
        session_id: String,
    },
    /// The group was deleted (its pads, sessions and mappings are deleted in the same append).
    GroupDeleted {
        /// The group id.
        group_id: String,
    },
}

impl DomainEvent for GroupEvent {}

/// Events of an author stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum AuthorEvent {
    /// An author was created.
    AuthorCreated {
        /// The author id.
        author_id: String,
        /// The name.
        name: AuthorName,
        /// The color: an index into Etherpad's palette of 64 colors.
        color_id: i64,
        /// When (ms since the epoch).
        timestamp: i64,
    },
    /// The author's name was set.
    AuthorNameSet {
        /// The new name.
        name: String,
    },
    /// The author was looked up again through a mapper or token: Etherpad refreshes its timestamp.
    AuthorSeen {
        /// When (ms since the epoch).
        timestamp: i64,
    },
    /// The author contributed to a pad (or a pad with its contributions was copied).
    AuthorPadLinked {
        /// The pad id.
        pad_id: String,
    },
    /// A pad the author contributed to was deleted.
    AuthorPadUnlinked {
        /// The pad id.
        pad_id: String,
    },
    /// A session was opened for the author.
    AuthorSessionAdded {
        /// The session id.
        session_id: String,
    },
    /// A session of the author was deleted.
    AuthorSessionRemoved {
        /// The session id.
        session_id: String,
    },
}

impl DomainEvent for AuthorEvent {}

/// Events of a session stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum SessionEvent {
    /// A session of an author in a group, valid until a unix time (seconds).
    SessionCreated {
        /// The session id.
        session_id: String,
        /// The group.
        group_id: String,
        /// The author.
        author_id: String,
        /// Unix time in seconds.
        valid_until: i64,
    },
    /// The session was deleted.
    SessionDeleted {
        /// The session id.
        session_id: String,
    },
}

impl DomainEvent for SessionEvent {}

/// Events of a token stream (`token2author`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum TokenEvent {
    /// The token now names this author.
    TokenMapped {
        /// The author id.
        author_id: String,
    },
}

impl DomainEvent for TokenEvent {}

/// Events of an author mapper stream (`mapper2author`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum AuthorMapperEvent {
    /// The mapper now names this author.
    AuthorMapped {
        /// The author id.
        author_id: String,
    },
}

impl DomainEvent for AuthorMapperEvent {}

/// Events of a group mapper stream (`mapper2group`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
pub enum GroupMapperEvent {
    /// The mapper now names this group.
    GroupMapped {
        /// The group id.
        group_id: String,
    },
    /// The mapping was removed because its group was deleted.
    GroupMappingRemoved {
        /// The group that was deleted.
        group_id: String,
    },
}

impl DomainEvent for GroupMapperEvent {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_round_trips_and_omits_empty_attributes() {
        let e = PadEvent::RevisionAppended {
            rev: 3,
            changeset: "Z:1>1+1$x".into(),
            author: "a.x".into(),
            timestamp: 7,
            new_attributes: vec![],
        }
        .encode()
        .expect("encode");
        assert_eq!(e.event_type, "RevisionAppended");
        assert!(e.payload.get("new_attributes").is_none());
        let back: PadEvent =
            crate::domain::decode_parts(&e.event_type, 1, &e.payload).expect("decode");
        assert!(matches!(back, PadEvent::RevisionAppended { rev: 3, .. }));
    }

    #[test]
    fn chat_time_keeps_its_json_type() {
        assert_eq!(
            serde_json::to_string(&ChatTime::Millis(5)).expect("json"),
            "5"
        );
        assert_eq!(
            serde_json::to_string(&ChatTime::Given("5".into())).expect("json"),
            "\"5\""
        );
        let t: ChatTime = serde_json::from_str("\"12\"").expect("json");
        assert_eq!(t, ChatTime::Given("12".into()));
    }
}
