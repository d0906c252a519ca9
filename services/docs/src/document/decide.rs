//! The document decider: CouchDB's rules for new edits and replicated revisions.

use super::{DocCommand, DocError, DocState, Routing};
use crate::rev::RevId;
use palimpsest_events::docs::DocumentEvent;

/// Decides the events of `command` against the document's tree.
///
/// - A new edit must start from a leaf (`base`), or, without `base`, from nothing or from a
///   deleted winner (re-creating a deleted document); anything else is a conflict. A deletion
///   without `base` of a document that does not exist (or is deleted) stores a tombstone, as
///   CouchDB does.
/// - A replicated revision is never a conflict: a revision already held changes nothing, any
///   other is stored with its ancestry cut after the first ancestor the tree holds.
pub fn decide(command: DocCommand, state: &DocState) -> Result<Vec<DocumentEvent>, DocError> {
    match command {
        DocCommand::Edit {
            db,
            doc_id,
            base,
            body,
            deleted,
        } => {
            let parent = edit_parent(state, base.as_ref())?;
            let rev = RevId::next(parent.as_ref(), &body, deleted);
            Ok(vec![DocumentEvent::RevisionStored {
                db,
                doc_id,
                rev: rev.to_string(),
                ancestry: parent.iter().map(ToString::to_string).collect(),
                body,
                deleted,
                channels: Vec::new(),
                access: Default::default(),
                roles: Default::default(),
            }])
        }
        DocCommand::Replicate {
            db,
            doc_id,
            rev,
            ancestry,
            body,
            deleted,
        } => {
            if state.tree.contains(&rev) {
                return Ok(Vec::new());
            }
            let cut = ancestry
                .iter()
                .position(|a| state.tree.contains(a))
                .map_or(ancestry.len(), |k| k + 1);
            Ok(vec![DocumentEvent::RevisionStored {
                db,
                doc_id,
                rev: rev.to_string(),
                ancestry: ancestry[..cut].iter().map(ToString::to_string).collect(),
                body,
                deleted,
                channels: Vec::new(),
                access: Default::default(),
                roles: Default::default(),
            }])
        }
    }
}

/// The revision a new edit extends, `None` for a new root.
fn edit_parent(state: &DocState, base: Option<&RevId>) -> Result<Option<RevId>, DocError> {
    let winner = state.tree.winner();
    match base {
        Some(base) if state.tree.is_leaf(base) => Ok(Some(base.clone())),
        Some(_) => Err(DocError::Conflict),
        None => match winner {
            None => Ok(None),
            Some(w) if w.deleted => Ok(Some(w.rev.clone())),
            Some(_) => Err(DocError::Conflict),
        },
    }
}

/// Purges the document (admin `_purge`): one that was never written (or is already purged) is
/// not found.
pub fn purge(db: &str, doc_id: &str, state: &DocState) -> Result<Vec<DocumentEvent>, DocError> {
    if state.tree.is_empty() {
        return Err(DocError::NotFound);
    }
    Ok(vec![DocumentEvent::DocumentPurged {
        db: db.to_owned(),
        doc_id: doc_id.to_owned(),
    }])
}

/// Routes the document as `rerun` (the sync function run again over the live winner) says,
/// when that differs from how it is routed now; a tombstone or an unchanged routing appends
/// nothing.
pub fn resync(db: &str, doc_id: &str, state: &DocState, rerun: Routing) -> Vec<DocumentEvent> {
    let Some(winner) = state.tree.winner().filter(|w| !w.deleted) else {
        return Vec::new();
    };
    if rerun == state.routing {
        return Vec::new();
    }
    vec![DocumentEvent::DocumentResynced {
        db: db.to_owned(),
        doc_id: doc_id.to_owned(),
        rev: winner.rev.to_string(),
        channels: rerun.channels,
        access: rerun.access,
        roles: rerun.roles,
    }]
}

/// Folds one event into the state. Rev ids in the log were checked before the append; one that
/// does not parse is skipped with an error log rather than breaking the stream's fold.
pub fn evolve(mut state: DocState, event: &DocumentEvent) -> DocState {
    match event {
        DocumentEvent::RevisionStored {
            rev,
            ancestry,
            body,
            deleted,
            channels,
            access,
            roles,
            ..
        } => {
            let parsed = RevId::parse(rev).and_then(|rev| {
                let ancestry = ancestry
                    .iter()
                    .map(|a| RevId::parse(a))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok((rev, ancestry))
            });
            match parsed {
                Ok((rev, ancestry)) => {
                    state
                        .tree
                        .insert(rev.clone(), &ancestry, body.clone(), *deleted);
                    if state.tree.winner().is_some_and(|w| w.rev == rev) {
                        if !*deleted {
                            state.routing.channels = channels.clone();
                        }
                        state.routing.access = access.clone();
                        state.routing.roles = roles.clone();
                    }
                }
                Err(e) => tracing::error!(error = %e, "stored revision does not parse; skipped"),
            }
        }
        DocumentEvent::DocumentResynced {
            channels,
            access,
            roles,
            ..
        } => {
            state.routing = Routing {
                channels: channels.clone(),
                access: access.clone(),
                roles: roles.clone(),
            };
        }
        DocumentEvent::DocumentPurged { .. } => state = DocState::default(),
    }
    state
}
