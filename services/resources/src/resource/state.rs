//! A resource's write-side state, folded from its events.

use palimpsest_events::resources::{ResourceEvent, Revision};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;
use std::collections::BTreeSet;

/// What a command needs to know of a resource: its head revision (a full copy, so the next
/// revision can start from it), who created it (who may change it), which revisions are
/// hidden, and whether it was wiped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceState {
    /// The head revision; `None` before the first.
    pub head: Option<Revision>,
    /// The user who made revision 1 (`res_create_user_id`); `None` before it.
    pub creator: Option<i64>,
    /// Hidden revision numbers.
    pub hidden: BTreeSet<i64>,
    /// Removed from the archive for good: the id names nothing any more.
    pub wiped: bool,
}

impl ResourceState {
    /// The head of a resource that exists (not wiped, has a revision).
    pub fn existing(&self) -> Option<&Revision> {
        if self.wiped { None } else { self.head.as_ref() }
    }

    /// The head of a resource that exists and is not deleted.
    pub fn live(&self) -> Option<&Revision> {
        self.existing().filter(|head| !head.deleted)
    }
}

/// The state after `event`.
pub fn evolve(mut state: ResourceState, event: &ResourceEvent) -> ResourceState {
    match event {
        ResourceEvent::RevisionAdded(revision) => {
            state.creator.get_or_insert(revision.user_id);
            state.head = Some(revision.clone());
        }
        ResourceEvent::RevisionsHidden { revs, hidden, .. } => {
            for rev in revs {
                if *hidden {
                    state.hidden.insert(*rev);
                } else {
                    state.hidden.remove(rev);
                }
            }
        }
        ResourceEvent::ResourceWiped { .. } => state.wiped = true,
    }
    state
}

impl StreamState for ResourceState {
    fn initial(_: &StreamName) -> Self {
        ResourceState::default()
    }

    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        let event = ResourceEvent::decode(event)?;
        *self = evolve(std::mem::take(self), &event);
        Ok(())
    }
}
