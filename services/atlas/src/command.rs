//! What every atlas command shares on its way through the platform's command runner: the
//! request's time, the metadata its events carry, read-your-writes through the atlas
//! projection, stream names from request ids, event encoding, and how a refusal is answered.
//! Each aggregate's `command.rs` runs its own commands with these.

use crate::projection::NAME;
use crate::streams::CONTEXT;
use palimpsest_events::atlas::Timestamp;
use palimpsest_events::{DomainEvent, Metadata, NewEvent, StreamName};
use palimpsest_web::ApiError;
use palimpsest_web::command::{Command, CommandError, CommandRequest};

/// The request's time, as commands carry it.
pub fn now() -> Timestamp {
    Timestamp::new(chrono::Utc::now())
}

/// The metadata stored with a command's events: every one names the caller that caused it.
pub fn metadata(actor: &str) -> Metadata {
    Metadata {
        actor: Some(actor.to_owned()),
        correlation_id: Some(uuid::Uuid::now_v7()),
        ..Metadata::default()
    }
}

/// The runner's facts of an atlas command by `actor` (the caller's [`crate::user::Caller::actor`]):
/// read your writes through the atlas projection.
pub fn command<'a>(request: &'a CommandRequest, actor: &str) -> Command<'a> {
    Command {
        request,
        context: CONTEXT,
        projections: &[NAME],
        metadata: metadata(actor),
    }
}

/// A refusal as the atlas answers it.
pub fn rejected(e: impl Into<ApiError>) -> CommandError<ApiError> {
    CommandError::Rejected(e.into())
}

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
