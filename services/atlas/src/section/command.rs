//! What a client can ask of a section, and how a section command runs. Every command carries
//! `now` (the runner's attempt reads the clock, the decider never does) and the ids it will
//! create (the handler generates them).
//!
//! [`execute`] runs one through the platform's command runner: load the section stream, decide,
//! and answer with what the state after the events shows. A concurrent append to the same
//! section makes the runner load and decide again, so the client gets the real outcome — for
//! example a clear "locked by" — rather than a version error; after the runner's bounded
//! retries it is a 409, as the History Map's clients expect for a section that changed.

use crate::command::{command, encode, now, rejected, stream_of};
use crate::section::{SectionState, decide, evolve};
use crate::streams;
use crate::user::Caller;
use palimpsest_events::atlas::Timestamp;
use palimpsest_web::command::{CommandError, CommandRequest, Decision, Reply};
use palimpsest_web::{ApiError, AppState};
use serde_json::Value;

/// The optional optimistic checks of a commit, restore or submit: the client read the section
/// at this `version` / with this head and wants the command refused if it moved since.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectations {
    /// `expected_version`.
    pub version: Option<i64>,
    /// `expected_head_commit_id` (`Some(None)`: the client expects no commit yet).
    pub head_commit_id: Option<Option<String>>,
}

/// A command on one section stream.
#[derive(Debug, Clone, PartialEq)]
pub enum SectionCommand {
    /// `POST /sections`.
    Create {
        /// The new section's id.
        section_id: String,
        /// `title` (must not be blank).
        title: String,
        /// `description`.
        description: Option<String>,
        /// `user_id`.
        user_id: Option<String>,
        /// `created_by`.
        created_by: Option<String>,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /sections/:id/lock`, or `GET /sections/:id/editor?user_id=`.
    Lock {
        /// Who takes the lock.
        actor: String,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /sections/:id/unlock`.
    Unlock {
        /// Who releases it (`None`: anonymous, which can only release a free or lapsed lock).
        actor: Option<String>,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /sections/:id/commits`.
    Commit {
        /// The new commit's id.
        commit_id: String,
        /// Who commits (takes or holds the lock).
        actor: String,
        /// `title`.
        title: Option<String>,
        /// `note`.
        note: Option<String>,
        /// The full snapshot.
        snapshot: Value,
        /// Optional optimistic checks.
        expected: Expectations,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /sections/:id/restore`.
    Restore {
        /// The new commit's id.
        commit_id: String,
        /// Who restores (takes or holds the lock).
        actor: String,
        /// The commit whose snapshot is copied.
        source_commit_id: String,
        /// `title`.
        title: Option<String>,
        /// `note`.
        note: Option<String>,
        /// Optional optimistic checks.
        expected: Expectations,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /sections/:id/submit`.
    Submit {
        /// The new submission's id.
        submission_id: String,
        /// Who submits.
        actor: String,
        /// The commit to submit; the head when `None`.
        commit_id: Option<String>,
        /// Optional optimistic checks.
        expected: Expectations,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /submissions/:id/reject`.
    Reject {
        /// The submission.
        submission_id: String,
        /// The reviewer.
        reviewer: Option<String>,
        /// `review_note`.
        note: Option<String>,
        /// The time of the request.
        now: Timestamp,
    },
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
        .run(command(request, caller.actor()), |attempt| async move {
            let section: SectionState = attempt.load(stream).await?;
            let events = decide(command_at(now()), &section).map_err(rejected)?;
            let after = events.iter().fold(section, evolve);
            let reply = answer(&after).map_err(CommandError::Rejected)?;
            Ok(Decision::new(reply).write(stream.clone(), encode(&events).map_err(rejected)?))
        })
        .await?;
    Ok(reply)
}
