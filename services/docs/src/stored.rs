//! A document as the read model stores it: Sync Gateway's form, the winning revision's body
//! with a hidden `_sync` member holding the revision tree and the document's sequence.
//!
//! The winner's body is the document's own members, so its `history.bodies` entry is null;
//! other leaves keep theirs in `history.bodies`. `_sync` is added last and taken out again
//! before anything reaches a client.

use crate::body::{Members, Outgoing, push_string};
use crate::tree::{History, RevTree};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `_sync`: the hidden metadata of a stored document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncData {
    /// The winning revision.
    pub rev: String,
    /// Whether the winner is a deletion.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    /// The sequence of the document's last change (its database's count of changes then).
    pub sequence: i64,
    /// The revision tree (pruned to the database's `revs_limit`).
    pub history: History,
    /// The channels the document is in (null) or left (`{rev, seq}`).
    #[serde(default)]
    pub channels: BTreeMap<String, Option<Removal>>,
    /// The access the winning revision grants: user (or `role:` name) → channels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub access: BTreeMap<String, Vec<String>>,
    /// The roles the winning revision grants (`role()`): user → roles (Sync Gateway's
    /// `role_access`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub role_access: BTreeMap<String, Vec<String>>,
    /// Each leaf revision's channels (Sync Gateway keeps them per revision in its history):
    /// a read returns a revision only to a caller in one of them, whichever revision wins
    /// (see `access::revisions`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rev_channels: BTreeMap<String, Vec<String>>,
}

/// When a document left a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Removal {
    /// The revision that removed it.
    pub rev: String,
    /// That revision's sequence.
    pub seq: i64,
}

/// A stored document: the winner's body and `_sync`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDoc {
    /// The winning revision's body (JSON text, without `_sync`).
    pub body: String,
    /// The hidden metadata.
    pub sync: SyncData,
}

/// Why a stored value could not be read (the read model is corrupt: a bug).
#[derive(Debug, thiserror::Error)]
pub enum StoredError {
    /// Not JSON, or `_sync` missing or malformed.
    #[error("stored document is malformed: {0}")]
    Malformed(String),
}

impl StoredDoc {
    /// The stored form of a tree whose last change had sequence `sequence`; `None` for an
    /// empty tree.
    pub fn of_tree(tree: &RevTree, sequence: i64) -> Option<StoredDoc> {
        let winner = tree.winner()?;
        let mut history = History::from(tree);
        let winner_rev = winner.rev.to_string();
        if let Some(i) = history.revs.iter().position(|r| *r == winner_rev) {
            history.bodies[i] = None;
        }
        Some(StoredDoc {
            body: winner.body.clone().unwrap_or_else(|| "{}".into()),
            sync: SyncData {
                rev: winner_rev,
                deleted: winner.deleted,
                sequence,
                history,
                channels: BTreeMap::new(),
                access: BTreeMap::new(),
                role_access: BTreeMap::new(),
                rev_channels: BTreeMap::new(),
            },
        })
    }

    /// The revision tree, the winner's body put back in its place.
    pub fn tree(&self) -> Result<RevTree, StoredError> {
        let mut history = self.sync.history.clone();
        if let Some(i) = history.revs.iter().position(|r| *r == self.sync.rev) {
            history.bodies[i] = Some(self.body.clone());
        }
        RevTree::try_from(&history).map_err(|e| StoredError::Malformed(e.to_string()))
    }

    /// The key-value text: the body's members then `"_sync":{...}`.
    pub fn to_text(&self) -> Result<String, StoredError> {
        let sync =
            serde_json::to_string(&self.sync).map_err(|e| StoredError::Malformed(e.to_string()))?;
        let body = self.body.trim_end();
        let mut text = body.strip_suffix('}').unwrap_or(body).to_owned();
        if text.trim() != "{" {
            text.push(',');
        }
        push_string(&mut text, "_sync");
        text.push(':');
        text.push_str(&sync);
        text.push('}');
        Ok(text)
    }

    /// Reads the key-value text back.
    pub fn parse(text: &str) -> Result<StoredDoc, StoredError> {
        let members: Members =
            serde_json::from_str(text).map_err(|e| StoredError::Malformed(e.to_string()))?;
        let mut sync = None;
        let mut body = Vec::new();
        for (key, value) in members.0 {
            if key == "_sync" {
                sync = Some(
                    serde_json::from_str(value.get())
                        .map_err(|e| StoredError::Malformed(e.to_string()))?,
                );
            } else {
                body.push((key, value));
            }
        }
        Ok(StoredDoc {
            body: Members(body).to_json(),
            sync: sync.ok_or_else(|| StoredError::Malformed("no _sync".into()))?,
        })
    }
}

/// A local document's key-value text: its body then `"_rev":"0-N"`.
pub fn local_text(body: &str, rev: &str) -> String {
    let inner = body
        .trim()
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .unwrap_or("")
        .trim();
    let mut text = String::from("{");
    if !inner.is_empty() {
        text.push_str(inner);
        text.push(',');
    }
    text.push_str("\"_rev\":");
    push_string(&mut text, rev);
    text.push('}');
    text
}

/// A local document for a client: `_id`, `_rev`, then its members (the stored `_rev` dropped).
pub fn local_for_client(doc_id: &str, text: &str) -> Result<String, StoredError> {
    let members: Members =
        serde_json::from_str(text).map_err(|e| StoredError::Malformed(e.to_string()))?;
    let mut rev = String::new();
    let mut body = Vec::new();
    for (key, value) in members.0 {
        if key == "_rev" {
            rev = serde_json::from_str(value.get()).unwrap_or_default();
        } else {
            body.push((key, value));
        }
    }
    Ok(Outgoing::new(&format!("_local/{doc_id}"), &rev, &Members(body).to_json()).finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rev::RevId;

    fn rev(text: &str) -> RevId {
        RevId::parse(text).expect("valid")
    }

    #[test]
    fn a_stored_document_round_trips_and_hides_the_winner_body_in_history() {
        let mut tree = RevTree::default();
        tree.insert(rev("1-a"), &[], r#"{"a":1}"#.into(), false);
        tree.insert(
            rev("2-b"),
            &[rev("1-a")],
            r#"{"k\u0000":"b"}"#.into(),
            false,
        );
        tree.insert(rev("2-c"), &[rev("1-a")], r#"{"c":{"d":{}}}"#.into(), false);
        let stored = StoredDoc::of_tree(&tree, 42).expect("has a winner");
        let text = stored.to_text().expect("text");
        assert_eq!(
            text,
            r#"{"c":{"d":{}},"_sync":{"rev":"2-c","sequence":42,"history":{"revs":["1-a","2-b","2-c"],"parents":[-1,0,0],"bodies":[null,"{\"k\\u0000\":\"b\"}",null],"deleted":[]},"channels":{}}}"#
        );
        let back = StoredDoc::parse(&text).expect("parses");
        assert_eq!(back, stored);
        assert_eq!(back.tree().expect("tree"), tree);
    }

    #[test]
    fn a_local_document_keeps_its_rev_inside_and_shows_it_first() {
        let text = local_text(r#"{"last_seq":"5"}"#, "0-3");
        assert_eq!(text, r#"{"last_seq":"5","_rev":"0-3"}"#);
        assert_eq!(
            local_for_client("cp", &text).expect("valid"),
            r#"{"_id":"_local/cp","_rev":"0-3","last_seq":"5"}"#
        );
        assert_eq!(local_text("{}", "0-1"), r#"{"_rev":"0-1"}"#);
    }
}
