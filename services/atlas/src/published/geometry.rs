//! A published geometry's state, folded from its stream (`atlas/geometry/<id>`): its row and
//! its entity links.

use palimpsest_events::atlas::{GeometryEvent, GeometryRow};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// The geometry as published now; `row` is `None` while the stream is empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GeometryState {
    /// The published row.
    pub row: Option<GeometryRow>,
    /// Its linked entities (`entity_geometries`), in the order the link scope gave them.
    pub links: Vec<String>,
}

impl GeometryState {
    /// Whether the geometry exists and is not deleted.
    pub fn is_active(&self) -> bool {
        self.row.as_ref().is_some_and(|r| r.is_deleted == 0)
    }
}

/// Applies one event.
pub fn evolve(mut state: GeometryState, event: &GeometryEvent) -> GeometryState {
    match event {
        GeometryEvent::GeometryCreated { geometry, .. }
        | GeometryEvent::GeometryUpdated { geometry, .. } => {
            state.row = Some(geometry.clone());
        }
        GeometryEvent::GeometryDeleted { at, .. } => {
            if let Some(row) = &mut state.row {
                row.is_deleted = 1;
                row.updated_at = *at;
            }
            state.links.clear();
        }
        GeometryEvent::GeometryLinksReplaced { entity_ids, .. } => {
            state.links = entity_ids.clone();
        }
    }
    state
}

/// How the platform's runner loads a geometry stream: each event folded with [`evolve`].
impl StreamState for GeometryState {
    fn initial(_: &StreamName) -> Self {
        GeometryState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        let event = GeometryEvent::decode(event)?;
        *self = evolve(std::mem::take(self), &event);
        Ok(())
    }
}
