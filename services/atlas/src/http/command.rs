//! Running a section command through the platform's command runner: load the section stream,
//! decide, and answer with what the state after the events shows. A concurrent append to the
//! same section makes the runner load and decide again, so the client gets the real outcome —
//! for example a clear "locked by" — rather than a version error; after the runner's bounded
//! retries it is a 409, as the History Map's clients expect for a section that changed.

use crate::http::auth::Caller;
use crate::http::load::{encode, stream_of};
use crate::projection::NAME;
use crate::section::{SectionCommand, SectionState, decide, evolve};
use crate::streams;
use crate::streams::CONTEXT;
use palimpsest_events::Metadata;
use palimpsest_events::atlas::Timestamp;
use palimpsest_web::command::{Command, CommandError, CommandRequest, Decision, Reply};
use palimpsest_web::{ApiError, AppState};

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

/// The runner's facts of an atlas command: read your writes through the atlas projection.
pub fn command<'a>(request: &'a CommandRequest, actor: Option<&str>) -> Command<'a> {
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

/// Decides `command(now)` against section `id`, appends its events (naming `caller` as their
/// actor) and answers what `answer` makes of the state after.
pub async fn execute(
    state: &AppState,
    request: &CommandRequest,
    id: &str,
    caller: &Caller,
    command_at: impl Fn(Timestamp) -> SectionCommand,
    answer: impl Fn(&SectionState) -> Result<Reply, ApiError>,
) -> Result<Reply, ApiError> {
    let stream = &stream_of(streams::section, id)?;
    let (command_at, answer) = (&command_at, &answer);
    let reply = state
        .commands
        .run(
            command(request, Some(caller.actor())),
            |attempt| async move {
                let section: SectionState = attempt.load(stream).await?;
                let events = decide(command_at(now()), &section).map_err(rejected)?;
                let after = events.iter().fold(section, evolve);
                let reply = answer(&after).map_err(CommandError::Rejected)?;
                Ok(Decision::new(reply).write(stream.clone(), encode(&events).map_err(rejected)?))
            },
        )
        .await?;
    Ok(reply)
}
