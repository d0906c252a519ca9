//! A database's stream: created (a fresh incarnation with its configuration), configured,
//! compacted, its tombstones purged, and deleted.

pub mod command;
mod state;

use palimpsest_events::docs::DatabaseEvent;
use uuid::Uuid;

/// Sync Gateway's default `revs_limit`.
pub const DEFAULT_REVS_LIMIT: u32 = 1000;

/// A database's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbState {
    /// The live incarnation and its `revs_limit`; `None` when the database does not exist.
    pub live: Option<(Uuid, u32)>,
    /// The sync function's source; `None`: the default.
    pub sync: Option<String>,
    /// The guest's channels; `None`: the guest is disabled.
    pub guest: Option<Vec<String>>,
    /// The highest tombstone purge horizon so far.
    pub purged_up_to: i64,
    /// The design documents' `validate_doc_update` functions, by design document id: what
    /// every write of a document is checked by (decided from this stream, never a read model).
    pub validators: std::collections::BTreeMap<String, String>,
}

/// What a client asks of a database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbCommand {
    /// `PUT /{db}`, with a fresh incarnation id chosen by the handler.
    Create {
        /// The name.
        name: String,
        /// The new incarnation.
        incarnation: Uuid,
        /// How many ancestors per leaf the read model keeps.
        revs_limit: u32,
        /// The sync function's source, if not the default.
        sync: Option<String>,
        /// The guest's channels; `None`: disabled.
        guest: Option<Vec<String>>,
    },
    /// `DELETE /{db}`.
    Delete,
    /// Purges tombstones up to a horizon (a log position the handler derived from the
    /// retention).
    PurgeTombstones {
        /// The horizon.
        up_to_seq: i64,
    },
    /// `POST /{db}/_compact`: old revisions' bodies leave the read model.
    Compact,
    /// Sets (or with `None` resets) the sync function.
    SetSync {
        /// The JavaScript source.
        sync: Option<String>,
    },
}

/// Why a database command was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DbError {
    /// CouchDB's 412 `file_exists`.
    #[error("The database could not be created, the file already exists.")]
    Exists,
    /// CouchDB's 404 `not_found`.
    #[error("Database does not exist.")]
    Missing,
}

/// Decides a creation or deletion.
pub fn decide(command: DbCommand, state: &DbState) -> Result<Vec<DatabaseEvent>, DbError> {
    match (command, state.live) {
        (DbCommand::Create { .. }, Some(_)) => Err(DbError::Exists),
        (
            DbCommand::Create {
                name,
                incarnation,
                revs_limit,
                sync,
                guest,
            },
            None,
        ) => Ok(vec![DatabaseEvent::DatabaseCreated {
            name,
            incarnation,
            revs_limit,
            sync,
            guest,
        }]),
        (DbCommand::SetSync { sync }, Some((incarnation, _))) => {
            Ok(vec![DatabaseEvent::SyncFunctionSet { incarnation, sync }])
        }
        (DbCommand::SetSync { .. }, None) => Err(DbError::Missing),
        (DbCommand::PurgeTombstones { up_to_seq }, Some((incarnation, _))) => {
            if up_to_seq <= state.purged_up_to {
                return Ok(Vec::new());
            }
            Ok(vec![DatabaseEvent::TombstonesPurged {
                incarnation,
                up_to_seq,
            }])
        }
        (DbCommand::PurgeTombstones { .. }, None) => Err(DbError::Missing),
        (DbCommand::Compact, Some((incarnation, _))) => {
            Ok(vec![DatabaseEvent::RevisionBodiesCompacted { incarnation }])
        }
        (DbCommand::Compact, None) => Err(DbError::Missing),
        (DbCommand::Delete, Some((incarnation, _))) => {
            Ok(vec![DatabaseEvent::DatabaseDeleted { incarnation }])
        }
        (DbCommand::Delete, None) => Err(DbError::Missing),
    }
}

/// The events that keep `state.validators` equal to `written` (design document id → its
/// winner's `validate_doc_update`, `None` when it has none or is deleted) after a write of
/// those design documents.
pub fn validators_after(
    state: &DbState,
    written: &std::collections::BTreeMap<String, Option<String>>,
) -> Vec<DatabaseEvent> {
    let Some((incarnation, _)) = state.live else {
        return Vec::new();
    };
    written
        .iter()
        .filter(|(design, validate)| state.validators.get(*design) != validate.as_ref())
        .map(|(design, validate)| DatabaseEvent::ValidatorSet {
            incarnation,
            design: design.clone(),
            validate: validate.clone(),
        })
        .collect()
}

/// Folds one event.
pub fn evolve(mut state: DbState, event: &DatabaseEvent) -> DbState {
    match event {
        DatabaseEvent::DatabaseCreated {
            incarnation,
            revs_limit,
            sync,
            guest,
            ..
        } => {
            state.live = Some((*incarnation, *revs_limit));
            state.purged_up_to = 0;
            state.sync = sync.clone();
            state.guest = guest.clone();
            state.validators.clear();
        }
        DatabaseEvent::DatabaseDeleted { .. } => {
            state.live = None;
            state.sync = None;
            state.guest = None;
            state.validators.clear();
        }
        DatabaseEvent::ValidatorSet {
            design, validate, ..
        } => match validate {
            Some(source) => {
                state.validators.insert(design.clone(), source.clone());
            }
            None => {
                state.validators.remove(design);
            }
        },
        DatabaseEvent::SyncFunctionSet { sync, .. } => state.sync = sync.clone(),
        DatabaseEvent::TombstonesPurged { up_to_seq, .. } => {
            state.purged_up_to = state.purged_up_to.max(*up_to_seq);
        }
        DatabaseEvent::RevisionBodiesCompacted { .. } => {}
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(incarnation: Uuid) -> DbCommand {
        DbCommand::Create {
            name: "db".into(),
            incarnation,
            revs_limit: DEFAULT_REVS_LIMIT,
            sync: None,
            guest: None,
        }
    }

    #[test]
    fn creating_an_existing_database_is_refused() {
        let first = Uuid::nil();
        let state = decide(create(first), &DbState::default())
            .expect("created")
            .iter()
            .fold(DbState::default(), evolve);
        assert_eq!(decide(create(Uuid::max()), &state), Err(DbError::Exists));
    }

    #[test]
    fn compacting_a_live_database_is_an_event_and_a_missing_one_is_refused() {
        let state = decide(create(Uuid::nil()), &DbState::default())
            .expect("created")
            .iter()
            .fold(DbState::default(), evolve);
        assert_eq!(
            decide(DbCommand::Compact, &state),
            Ok(vec![DatabaseEvent::RevisionBodiesCompacted {
                incarnation: Uuid::nil()
            }])
        );
        assert_eq!(
            decide(DbCommand::Compact, &DbState::default()),
            Err(DbError::Missing)
        );
    }

    #[test]
    fn a_design_documents_validator_is_set_changed_and_removed_only_when_it_differs() {
        let mut state = decide(create(Uuid::nil()), &DbState::default())
            .expect("created")
            .iter()
            .fold(DbState::default(), evolve);
        let written = |source: Option<&str>| {
            [("_design/v".to_owned(), source.map(str::to_owned))]
                .into_iter()
                .collect()
        };
        let set = validators_after(&state, &written(Some("function (doc) {}")));
        assert_eq!(set.len(), 1);
        state = set.iter().fold(state, evolve);
        assert_eq!(state.validators["_design/v"], "function (doc) {}");
        assert!(validators_after(&state, &written(Some("function (doc) {}"))).is_empty());
        state = validators_after(&state, &written(None))
            .iter()
            .fold(state, evolve);
        assert!(state.validators.is_empty());
        assert!(validators_after(&state, &written(None)).is_empty());
    }

    #[test]
    fn a_deleted_database_comes_back_as_a_new_incarnation() {
        let events = [
            DatabaseEvent::DatabaseCreated {
                name: "db".into(),
                incarnation: Uuid::nil(),
                revs_limit: 5,
                sync: None,
                guest: None,
            },
            DatabaseEvent::DatabaseDeleted {
                incarnation: Uuid::nil(),
            },
        ];
        let state = events.iter().fold(DbState::default(), evolve);
        assert_eq!(decide(DbCommand::Delete, &state), Err(DbError::Missing));
        let again = decide(create(Uuid::max()), &state).expect("created");
        assert_eq!(
            again.iter().fold(state, evolve).live,
            Some((Uuid::max(), DEFAULT_REVS_LIMIT))
        );
    }
}
