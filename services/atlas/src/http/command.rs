//! Running a section command: load the stream, decide, append with the expected version,
//! wait for the read model, answer with the new state. A concurrent append to the same section
//! makes it reload and decide again (a few times), so the client gets the real outcome — for
//! example a clear "locked by" — rather than a version error.

use crate::http::load::{self, encode, expected, stream_of};
use crate::projection::NAME;
use crate::section::{SectionCommand, SectionState, decide, evolve};
use crate::streams;
use palimpsest_events::Metadata;
use palimpsest_events::atlas::Timestamp;
use palimpsest_log::{AppendError, AppendRequest};
use palimpsest_web::{ApiError, AppState};

/// How many times a command is decided again after losing a race.
pub const ATTEMPTS: usize = 5;

/// The request's time, as commands carry it.
pub fn now() -> Timestamp {
    Timestamp::new(chrono::Utc::now())
}

/// The metadata stored with a command's events.
pub fn metadata(actor: Option<&str>) -> Metadata {
    Metadata {
        actor: actor.map(str::to_owned),
        correlation_id: Some(uuid::Uuid::now_v7()),
        ..Metadata::default()
    }
}

/// Decides `command(now)` against section `id` and appends its events; returns the state after.
pub async fn execute(
    state: &AppState,
    id: &str,
    actor: Option<&str>,
    command: impl Fn(Timestamp) -> SectionCommand,
) -> Result<SectionState, ApiError> {
    let stream = stream_of(streams::section, id)?;
    for _ in 0..ATTEMPTS {
        let (section, version) = load::section(&state.store, id).await?;
        let events = decide(command(now()), &section)?;
        if events.is_empty() {
            return Ok(section);
        }
        let request = AppendRequest::new()
            .stream(stream.clone(), expected(version), encode(&events)?)
            .metadata(metadata(actor));
        match state.store.append(request).await {
            Ok(appended) => {
                state.wait_for(NAME, appended.last_position).await?;
                return Ok(events.iter().fold(section, evolve));
            }
            Err(AppendError::WrongExpectedVersion { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::conflict(
        "the section kept changing while the command was decided; retry",
    ))
}
