//! `_local/` documents: no revision tree, never replicated, `_rev` is `0-N` counting saves.

pub mod batch;
pub mod command;
mod state;

use palimpsest_events::docs::LocalEvent;

/// A local document's state: its current save, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalState {
    /// The revision number and body of the current save; `None` when absent or deleted.
    pub current: Option<(u64, String)>,
    /// The highest revision number ever saved (a save after a deletion continues from it).
    pub last_number: u64,
}

/// What a client asks of a local document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalCommand {
    /// Save a body; `base` is the `_rev` sent.
    Save {
        /// The database.
        db: String,
        /// The id without `_local/`.
        doc_id: String,
        /// The `_rev` the client had, if any.
        base: Option<String>,
        /// The body as JSON text.
        body: String,
    },
    /// Delete it; `base` is the `rev` sent.
    Delete {
        /// The database.
        db: String,
        /// The id without `_local/`.
        doc_id: String,
        /// The `rev` the client had, if any.
        base: Option<String>,
    },
}

/// Why a local-document command was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocalError {
    /// The `_rev` sent is not the current one.
    #[error("Document update conflict.")]
    Conflict,
    /// Nothing to delete.
    #[error("missing")]
    NotFound,
}

/// The `_rev` of save number `number`.
pub fn local_rev(number: u64) -> String {
    format!("0-{number}")
}

fn base_matches(state: &LocalState, base: Option<&str>) -> bool {
    match (&state.current, base) {
        (Some((number, _)), Some(base)) => base == local_rev(*number),
        (Some(_), None) => false,
        (None, _) => true,
    }
}

/// Decides a save or deletion: a save of an existing document needs its current `_rev`.
pub fn decide(command: LocalCommand, state: &LocalState) -> Result<Vec<LocalEvent>, LocalError> {
    match command {
        LocalCommand::Save {
            db,
            doc_id,
            base,
            body,
        } => {
            if !base_matches(state, base.as_deref()) {
                return Err(LocalError::Conflict);
            }
            Ok(vec![LocalEvent::LocalSaved {
                db,
                doc_id,
                number: state.last_number + 1,
                body,
            }])
        }
        LocalCommand::Delete { db, doc_id, base } => {
            if state.current.is_none() {
                return Err(LocalError::NotFound);
            }
            if !base_matches(state, base.as_deref()) {
                return Err(LocalError::Conflict);
            }
            Ok(vec![LocalEvent::LocalDeleted { db, doc_id }])
        }
    }
}

/// Folds one event.
pub fn evolve(mut state: LocalState, event: &LocalEvent) -> LocalState {
    match event {
        LocalEvent::LocalSaved { number, body, .. } => {
            state.current = Some((*number, body.clone()));
            state.last_number = *number;
        }
        LocalEvent::LocalDeleted { .. } => state.current = None,
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    fn save(base: Option<&str>) -> LocalCommand {
        LocalCommand::Save {
            db: "db".into(),
            doc_id: "cp".into(),
            base: base.map(str::to_owned),
            body: "{}".into(),
        }
    }

    fn given(events: &[LocalEvent]) -> LocalState {
        events.iter().fold(LocalState::default(), evolve)
    }

    fn saved(number: u64) -> LocalEvent {
        LocalEvent::LocalSaved {
            db: "db".into(),
            doc_id: "cp".into(),
            number,
            body: "{}".into(),
        }
    }

    #[test]
    fn a_first_save_is_rev_0_1() {
        let events = decide(save(None), &given(&[])).expect("accepted");
        assert_eq!(events, vec![saved(1)]);
    }

    #[test]
    fn a_save_with_the_current_rev_counts_up() {
        let events = decide(save(Some("0-1")), &given(&[saved(1)])).expect("accepted");
        assert_eq!(events, vec![saved(2)]);
    }

    #[test]
    fn a_save_with_a_stale_or_missing_rev_is_a_conflict() {
        let state = given(&[saved(1), saved(2)]);
        assert_eq!(decide(save(Some("0-1")), &state), Err(LocalError::Conflict));
        assert_eq!(decide(save(None), &state), Err(LocalError::Conflict));
    }

    #[test]
    fn deleting_removes_it_and_a_later_save_continues_the_count() {
        let delete = LocalCommand::Delete {
            db: "db".into(),
            doc_id: "cp".into(),
            base: Some("0-1".into()),
        };
        let events = decide(delete.clone(), &given(&[saved(1)])).expect("accepted");
        let state = events.iter().fold(given(&[saved(1)]), evolve);
        assert_eq!(state.current, None);
        assert_eq!(decide(delete, &state), Err(LocalError::NotFound));
        assert_eq!(decide(save(None), &state), Ok(vec![saved(2)]));
    }
}
