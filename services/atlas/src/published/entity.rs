//! A published entity's state, folded from its stream (`atlas/entity/<id>`).

use palimpsest_events::atlas::{EntityEvent, EntityRow};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// The entity as published now; `row` is `None` while the stream is empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EntityState {
    /// The published row.
    pub row: Option<EntityRow>,
}

impl EntityState {
    /// Whether the entity exists and is not deleted.
    pub fn is_active(&self) -> bool {
        self.row.as_ref().is_some_and(|r| r.is_deleted == 0)
    }
}

/// Applies one event.
pub fn evolve(mut state: EntityState, event: &EntityEvent) -> EntityState {
    match event {
        EntityEvent::EntityCreated { entity, .. } | EntityEvent::EntityUpdated { entity, .. } => {
            state.row = Some(entity.clone());
        }
        EntityEvent::EntityDeleted { at, .. } => {
            if let Some(row) = &mut state.row {
                row.is_deleted = 1;
                row.updated_at = *at;
            }
        }
    }
    state
}

/// How the platform's runner loads a entity stream: each event folded with [`evolve`].
impl StreamState for EntityState {
    fn initial(_: &StreamName) -> Self {
        EntityState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        let event = EntityEvent::decode(event)?;
        *self = evolve(std::mem::take(self), &event);
        Ok(())
    }
}
