//! Loading streams and folding them: the state a command decides against, with the version to
//! expect when appending.

use crate::http::error::corrupt;
use crate::published::{EntityState, GeometryState};
use crate::section::{SectionState, evolve};
use crate::streams;
use palimpsest_events::atlas::{EntityEvent, GeometryEvent, SectionEvent};
use palimpsest_events::{DomainEvent, ExpectedVersion, NewEvent, RecordedEvent, StreamName};
use palimpsest_log::EventStore;
use palimpsest_web::ApiError;

const PAGE: i64 = 1000;

/// Every event of a stream, oldest first.
pub async fn read_all(
    store: &EventStore,
    stream: &StreamName,
) -> Result<Vec<RecordedEvent>, ApiError> {
    let mut all = Vec::new();
    loop {
        let after = all.last().map(|e: &RecordedEvent| e.version).unwrap_or(0);
        let page = store.read_stream(stream, after, PAGE).await?;
        let done = (page.len() as i64) < PAGE;
        all.extend(page);
        if done {
            return Ok(all);
        }
    }
}

/// The version to expect: none yet, or exactly the one read.
pub fn expected(version: i64) -> ExpectedVersion {
    if version == 0 {
        ExpectedVersion::NoStream
    } else {
        ExpectedVersion::Exact(version)
    }
}

/// A stream name from an id taken from a request: a bad id is the client's error.
pub fn stream_of(
    make: fn(&str) -> Result<StreamName, palimpsest_events::StreamNameError>,
    id: &str,
) -> Result<StreamName, ApiError> {
    make(id).map_err(|e| ApiError::bad_request(format!("invalid id: {e}")))
}

async fn fold<E: DomainEvent, S>(
    store: &EventStore,
    stream: &StreamName,
    init: S,
    step: fn(S, &E) -> S,
) -> Result<(S, i64), ApiError> {
    let events = read_all(store, stream).await?;
    let version = events.last().map(|e| e.version).unwrap_or(0);
    let mut state = init;
    for e in &events {
        state = step(state, &E::decode(e).map_err(corrupt)?);
    }
    Ok((state, version))
}

/// A section's state and version.
pub async fn section(store: &EventStore, id: &str) -> Result<(SectionState, i64), ApiError> {
    let stream = stream_of(streams::section, id)?;
    fold::<SectionEvent, _>(store, &stream, SectionState::default(), evolve).await
}

/// A published entity's state and version.
pub async fn entity(store: &EventStore, id: &str) -> Result<(EntityState, i64), ApiError> {
    let stream = stream_of(streams::entity, id)?;
    fold::<EntityEvent, _>(
        store,
        &stream,
        EntityState::default(),
        crate::published::entity::evolve,
    )
    .await
}

/// A published geometry's state and version.
pub async fn geometry(store: &EventStore, id: &str) -> Result<(GeometryState, i64), ApiError> {
    let stream = stream_of(streams::geometry, id)?;
    fold::<GeometryEvent, _>(
        store,
        &stream,
        GeometryState::default(),
        crate::published::geometry::evolve,
    )
    .await
}

/// Encodes typed events for the log.
pub fn encode<E: DomainEvent>(events: &[E]) -> Result<Vec<NewEvent>, ApiError> {
    events
        .iter()
        .map(|e| e.encode().map_err(ApiError::internal))
        .collect()
}
