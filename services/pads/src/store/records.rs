//! The values of Etherpad's store, in the JSON shape and property order Etherpad writes them.
//!
//! Field order here is the order of the properties in Etherpad's objects, so serialising with
//! serde_json (no white space) gives the bytes `JSON.stringify` gives.

use crate::js_object::JsObject;
use palimpsest_events::pads::{AText, Attribute, ChatTime, SavedRevision};
use serde::{Deserialize, Deserializer, Serialize};

/// An attributed text, `{text, attribs}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ATextRecord {
    /// The text.
    pub text: String,
    /// Its attribution.
    pub attribs: String,
}

impl From<&AText> for ATextRecord {
    fn from(a: &AText) -> Self {
        ATextRecord {
            text: a.text.clone(),
            attribs: a.attribs.clone(),
        }
    }
}

impl From<ATextRecord> for AText {
    fn from(a: ATextRecord) -> Self {
        AText {
            text: a.text,
            attribs: a.attribs,
        }
    }
}

/// A pool as `AttributePool.toJsonable()` gives it (the pad record's `pool`):
/// `{numToAttrib, nextNum}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolRecord {
    /// Attribute number → `[key, value]`.
    #[serde(rename = "numToAttrib")]
    pub num_to_attrib: JsObject<Attribute>,
    /// The next attribute number.
    #[serde(rename = "nextNum")]
    pub next_num: i64,
}

impl PoolRecord {
    /// The record of a pool whose attribute `n` is `attributes[n]`.
    pub fn from_attributes(attributes: &[Attribute]) -> Self {
        let mut num_to_attrib = JsObject::new();
        for (n, a) in attributes.iter().enumerate() {
            num_to_attrib.insert(&n.to_string(), a.clone());
        }
        PoolRecord {
            num_to_attrib,
            next_num: attributes.len() as i64,
        }
    }

    /// The attributes in number order (Etherpad's pools are dense: 0 to nextNum − 1).
    pub fn attributes(&self) -> Vec<Attribute> {
        (0..self.next_num.max(0))
            .filter_map(|n| self.num_to_attrib.get(&n.to_string()).cloned())
            .collect()
    }
}

/// A whole `AttributePool` object serialised as it is (a key revision's `meta.pool`, the
/// `getAttributePool` answer): `{numToAttrib, attribToNum, nextNum}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FullPoolRecord {
    /// Attribute number → `[key, value]`.
    #[serde(rename = "numToAttrib")]
    pub num_to_attrib: JsObject<Attribute>,
    /// `"key,value"` → attribute number.
    #[serde(rename = "attribToNum")]
    pub attrib_to_num: JsObject<i64>,
    /// The next attribute number.
    #[serde(rename = "nextNum")]
    pub next_num: i64,
}

impl FullPoolRecord {
    /// The full record of a pool whose attribute `n` is `attributes[n]`.
    pub fn from_attributes(attributes: &[Attribute]) -> Self {
        let PoolRecord {
            num_to_attrib,
            next_num,
        } = PoolRecord::from_attributes(attributes);
        let mut attrib_to_num = JsObject::new();
        for (n, (k, v)) in attributes.iter().enumerate() {
            attrib_to_num.insert(&format!("{k},{v}"), n as i64);
        }
        FullPoolRecord {
            num_to_attrib,
            attrib_to_num,
            next_num,
        }
    }
}

/// A saved revision entry, `{revNum, savedById, label, timestamp, id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedRevisionRecord {
    /// The revision.
    #[serde(rename = "revNum")]
    pub rev_num: i64,
    /// Who saved it.
    #[serde(rename = "savedById")]
    pub saved_by_id: String,
    /// Its label.
    pub label: String,
    /// When.
    pub timestamp: i64,
    /// Its id.
    pub id: String,
}

impl From<&SavedRevision> for SavedRevisionRecord {
    fn from(s: &SavedRevision) -> Self {
        SavedRevisionRecord {
            rev_num: s.rev_num,
            saved_by_id: s.saved_by_id.clone(),
            label: s.label.clone(),
            timestamp: s.timestamp,
            id: s.id.clone(),
        }
    }
}

impl From<SavedRevisionRecord> for SavedRevision {
    fn from(s: SavedRevisionRecord) -> Self {
        SavedRevision {
            rev_num: s.rev_num,
            saved_by_id: s.saved_by_id,
            label: s.label,
            timestamp: s.timestamp,
            id: s.id,
        }
    }
}

/// `pad:P`: `{atext, pool, head, chatHead, publicStatus, savedRevisions}` (the `Pad` object's
/// own properties minus `id` and `db`, pool as `toJsonable()`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PadRecord {
    /// The head text.
    pub atext: ATextRecord,
    /// The pool.
    pub pool: PoolRecord,
    /// The head revision number.
    pub head: i64,
    /// The last chat message number.
    #[serde(rename = "chatHead", default = "minus_one")]
    pub chat_head: i64,
    /// The public status flag.
    #[serde(rename = "publicStatus", default)]
    pub public_status: bool,
    /// The saved revisions.
    #[serde(rename = "savedRevisions", default)]
    pub saved_revisions: Vec<SavedRevisionRecord>,
}

fn minus_one() -> i64 {
    -1
}

impl PadRecord {
    /// The record of a pad not yet given its first revision (`new Pad(id)`).
    pub fn empty() -> Self {
        PadRecord {
            atext: ATextRecord {
                text: "\n".into(),
                attribs: "|1+1".into(),
            },
            pool: PoolRecord::from_attributes(&[]),
            head: -1,
            chat_head: -1,
            public_status: false,
            saved_revisions: Vec::new(),
        }
    }
}

/// A revision's `meta`: `{author, timestamp}` plus `pool` and `atext` on key revisions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionMeta {
    /// The author id or `""`.
    pub author: String,
    /// When (ms).
    pub timestamp: i64,
    /// The pool after this revision (key revisions only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<FullPoolRecord>,
    /// The text after this revision (key revisions only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atext: Option<ATextRecord>,
}

/// `pad:P:revs:N`: `{changeset, meta}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionRecord {
    /// The changeset.
    pub changeset: String,
    /// Who, when, and on key revisions the pool and text.
    pub meta: RevisionMeta,
}

/// `pad:P:chat:N`: `{text, authorId, time}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatRecord {
    /// The message.
    pub text: String,
    /// The author, `null` when none was given.
    #[serde(rename = "authorId", default)]
    pub author_id: Option<String>,
    /// The time, a number or the integer text the client gave.
    pub time: ChatTime,
}

/// Reads a present key as `Some(value)` (so `null` becomes `Some(None)`), absent stays `None`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(Option::deserialize(d)?))
}

/// An author's `colorId`: an index into Etherpad's palette (what `createAuthor` draws), or a
/// colour of its own (what Etherpad's editor stores when the user picks one, e.g. `"#ff8800"`).
/// The spec allows both (`Number/String`); a store holding either reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ColorId {
    /// An index into the palette.
    Palette(i64),
    /// A CSS colour, as the editor stored it.
    Hex(String),
}

/// Etherpad's author colour palette (`AuthorManager.getColorPalette`), in index order.
pub const PALETTE: [&str; 64] = [
    "#ffc7c7", "#fff1c7", "#e3ffc7", "#c7ffd5", "#c7ffff", "#c7d5ff", "#e3c7ff", "#ffc7f1",
    "#ffa8a8", "#ffe699", "#cfff9e", "#99ffb3", "#a3ffff", "#99b3ff", "#cc99ff", "#ff99e5",
    "#e7b1b1", "#e9dcAf", "#cde9af", "#bfedcc", "#b1e7e7", "#c3cdee", "#d2b8ea", "#eec3e6",
    "#e9cece", "#e7e0ca", "#d3e5c7", "#bce1c5", "#c1e2e2", "#c1c9e2", "#cfc1e2", "#e0bdd9",
    "#baded3", "#a0f8eb", "#b1e7e0", "#c3c8e4", "#cec5e2", "#b1d5e7", "#cda8f0", "#f0f0a8",
    "#f2f2a6", "#f5a8eb", "#c5f9a9", "#ececbb", "#e7c4bc", "#daf0b2", "#b0a0fd", "#bce2e7",
    "#cce2bb", "#ec9afe", "#edabbd", "#aeaeea", "#c4e7b1", "#d722bb", "#f3a5e7", "#ffa8a8",
    "#d8c0c5", "#eaaedd", "#adc6eb", "#bedad1", "#dee9af", "#e9afc2", "#f8d2a0", "#b3b3e6",
];

impl ColorId {
    /// The CSS colour: the palette's entry for an index (`None` past its end), the text itself
    /// for a colour of the author's own.
    pub fn css(&self) -> Option<&str> {
        match self {
            ColorId::Palette(i) => usize::try_from(*i)
                .ok()
                .and_then(|i| PALETTE.get(i).copied()),
            ColorId::Hex(colour) => Some(colour),
        }
    }
}

/// `globalAuthor:A`: `{colorId, name, timestamp, padIDs}`; `name` may be missing or `null`,
/// `padIDs` appears with the author's first pad.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorRecord {
    /// A palette index or a colour ([`ColorId`]).
    #[serde(rename = "colorId")]
    pub color_id: ColorId,
    /// The name: absent, `null` or a text.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<Option<String>>,
    /// Last activity (ms).
    pub timestamp: i64,
    /// The pads the author contributed to.
    #[serde(rename = "padIDs", default, skip_serializing_if = "Option::is_none")]
    pub pad_ids: Option<JsObject<i64>>,
}

/// `group:G`: `{pads, mappings}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupRecord {
    /// The group's pads.
    pub pads: JsObject<i64>,
    /// The mappers naming the group.
    #[serde(default)]
    pub mappings: JsObject<i64>,
}

/// `session:S`: `{groupID, authorID, validUntil}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The group.
    #[serde(rename = "groupID")]
    pub group_id: String,
    /// The author.
    #[serde(rename = "authorID")]
    pub author_id: String,
    /// Unix seconds.
    #[serde(rename = "validUntil")]
    pub valid_until: i64,
}

/// `author2sessions:A` and `group2sessions:G`: `{sessionIDs}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SessionListRecord {
    /// The session ids.
    #[serde(rename = "sessionIDs")]
    pub session_ids: JsObject<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json<T: Serialize>(v: &T) -> String {
        serde_json::to_string(v).expect("json")
    }

    #[test]
    fn pad_record_has_etherpads_property_order() {
        let mut r = PadRecord::empty();
        r.atext = ATextRecord {
            text: "hi\n".into(),
            attribs: "*0+2|1+1".into(),
        };
        r.pool = PoolRecord::from_attributes(&[("author".into(), "a.x".into())]);
        r.head = 0;
        assert_eq!(
            json(&r),
            r#"{"atext":{"text":"hi\n","attribs":"*0+2|1+1"},"pool":{"numToAttrib":{"0":["author","a.x"]},"nextNum":1},"head":0,"chatHead":-1,"publicStatus":false,"savedRevisions":[]}"#
        );
        let back: PadRecord = serde_json::from_str(&json(&r)).expect("parse");
        assert_eq!(back, r);
    }

    #[test]
    fn key_revision_pool_carries_attrib_to_num() {
        let pool = FullPoolRecord::from_attributes(&[
            ("author".into(), "a.x".into()),
            ("bold".into(), "true".into()),
        ]);
        assert_eq!(
            json(&pool),
            r#"{"numToAttrib":{"0":["author","a.x"],"1":["bold","true"]},"attribToNum":{"author,a.x":0,"bold,true":1},"nextNum":2}"#
        );
    }

    #[test]
    fn author_name_distinguishes_absent_null_and_text() {
        let mut a = AuthorRecord {
            color_id: ColorId::Palette(3),
            name: None,
            timestamp: 9,
            pad_ids: None,
        };
        assert_eq!(json(&a), r#"{"colorId":3,"timestamp":9}"#);
        a.name = Some(None);
        assert_eq!(json(&a), r#"{"colorId":3,"name":null,"timestamp":9}"#);
        let back: AuthorRecord = serde_json::from_str(&json(&a)).expect("parse");
        assert_eq!(back.name, Some(None));
        a.name = Some(Some("john".into()));
        a.pad_ids = Some(JsObject::new());
        assert_eq!(
            json(&a),
            r#"{"colorId":3,"name":"john","timestamp":9,"padIDs":{}}"#
        );
    }

    #[test]
    fn color_id_is_a_palette_index_or_a_colour() {
        let indexed: AuthorRecord =
            serde_json::from_str(r#"{"colorId":37,"name":"x","timestamp":1}"#).expect("index");
        assert_eq!(indexed.color_id, ColorId::Palette(37));
        let own: AuthorRecord =
            serde_json::from_str(r##"{"colorId":"#ff8800","timestamp":1}"##).expect("colour");
        assert_eq!(own.color_id, ColorId::Hex("#ff8800".into()));
        assert_eq!(json(&own), r##"{"colorId":"#ff8800","timestamp":1}"##);
        assert_eq!(own.color_id.css(), Some("#ff8800"));
        assert_eq!(ColorId::Palette(0).css(), Some("#ffc7c7"));
        assert_eq!(ColorId::Palette(64).css(), None);
    }

    #[test]
    fn chat_and_session_shapes() {
        let c = ChatRecord {
            text: "hi".into(),
            author_id: None,
            time: ChatTime::Given("12".into()),
        };
        assert_eq!(json(&c), r#"{"text":"hi","authorId":null,"time":"12"}"#);
        let s = SessionRecord {
            group_id: "g.x".into(),
            author_id: "a.y".into(),
            valid_until: 5,
        };
        assert_eq!(
            json(&s),
            r#"{"groupID":"g.x","authorID":"a.y","validUntil":5}"#
        );
    }
}
