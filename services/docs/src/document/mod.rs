//! A document's stream: its state (the revision tree), the commands that add revisions, and the
//! pure `decide` / `evolve` that turn one into events and fold them back.

pub mod command;
mod decide;
pub mod maintenance;
mod state;
#[cfg(test)]
mod tests;

pub use decide::{decide, evolve, purge, resync};

use crate::rev::RevId;
use crate::tree::RevTree;
use std::collections::BTreeMap;

/// A document's write-side state: its whole revision tree (never pruned: the log is complete)
/// and how the sync function routes it as it stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocState {
    /// Every revision stored so far.
    pub tree: RevTree,
    /// The document's channels and grants, as the read model routes it.
    pub routing: Routing,
}

/// What the sync function gave a document: the winner's channels (a tombstone keeps those of
/// the revision it deleted) and the grants of the latest winner. `_resync` compares against it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routing {
    /// `channel()`.
    pub channels: Vec<String>,
    /// `access()`: user (or `role:` name) → channels.
    pub access: BTreeMap<String, Vec<String>>,
    /// `role()`: user → roles.
    pub roles: BTreeMap<String, Vec<String>>,
}

/// What a client asks of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocCommand {
    /// A new edit (`new_edits=true`): the server makes the rev id; `base` is the `_rev` sent.
    Edit {
        /// The database.
        db: String,
        /// The document id.
        doc_id: String,
        /// The revision the edit starts from (`_rev` or `?rev=`), if any.
        base: Option<RevId>,
        /// The new body as JSON text.
        body: String,
        /// Whether the edit deletes the document.
        deleted: bool,
    },
    /// A replicated revision (`new_edits=false`): its id and ancestry come from the client.
    Replicate {
        /// The database.
        db: String,
        /// The document id.
        doc_id: String,
        /// The revision.
        rev: RevId,
        /// Its ancestors from `_revisions`, parent first.
        ancestry: Vec<RevId>,
        /// The body as JSON text.
        body: String,
        /// Whether the revision is a deletion.
        deleted: bool,
    },
}

/// Why a command was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocError {
    /// The edit does not start from a current leaf: CouchDB's 409 `conflict`.
    #[error("Document update conflict.")]
    Conflict,
    /// Deleting a document that does not exist (or is already deleted) without a rev.
    #[error("missing")]
    NotFound,
}
