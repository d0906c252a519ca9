//! The write-side states commands decide from, as the platform's runner loads them: how each
//! atlas stream folds, plus the stream names and event encoding handlers need.

use crate::published::{EntityState, GeometryState};
use crate::section::{SectionState, evolve};
use crate::user::UserState;
use palimpsest_events::atlas::{EntityEvent, GeometryEvent, SectionEvent, UserEvent};
use palimpsest_events::{DecodeError, DomainEvent, NewEvent, RecordedEvent, StreamName};
use palimpsest_web::ApiError;
use palimpsest_web::command::StreamState;

/// A stream name from an id taken from a request: a bad id is the client's error.
pub fn stream_of(
    make: fn(&str) -> Result<StreamName, palimpsest_events::StreamNameError>,
    id: &str,
) -> Result<StreamName, ApiError> {
    make(id).map_err(|e| ApiError::bad_request(format!("invalid id: {e}")))
}

/// Encodes typed events for the log.
pub fn encode<E: DomainEvent>(events: &[E]) -> Result<Vec<NewEvent>, ApiError> {
    events
        .iter()
        .map(|e| e.encode().map_err(ApiError::internal))
        .collect()
}

/// Folds one recorded event into `state` with the stream kind's `evolve`.
fn fold_with<E: DomainEvent, S: Default>(
    state: &mut S,
    event: &RecordedEvent,
    evolve: fn(S, &E) -> S,
) -> Result<(), DecodeError> {
    let event = E::decode(event)?;
    *state = evolve(std::mem::take(state), &event);
    Ok(())
}

impl StreamState for SectionState {
    fn initial(_: &StreamName) -> Self {
        SectionState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        fold_with::<SectionEvent, _>(self, event, evolve)
    }
}

impl StreamState for EntityState {
    fn initial(_: &StreamName) -> Self {
        EntityState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        fold_with::<EntityEvent, _>(self, event, crate::published::entity::evolve)
    }
}

impl StreamState for GeometryState {
    fn initial(_: &StreamName) -> Self {
        GeometryState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        fold_with::<GeometryEvent, _>(self, event, crate::published::geometry::evolve)
    }
}

impl StreamState for UserState {
    fn initial(_: &StreamName) -> Self {
        UserState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        fold_with::<UserEvent, _>(self, event, crate::user::evolve)
    }
}
