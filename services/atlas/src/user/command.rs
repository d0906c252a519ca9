//! What the administrator asks of a user stream, and how it runs through the platform's
//! command runner: load the user stream, decide, answer from the user before and after.

use crate::command::{command, encode, now, rejected, stream_of};
use crate::streams;
use crate::user::{Caller, UserState, decide, evolve};
use palimpsest_events::atlas::Timestamp;
use palimpsest_web::command::{Answer, CommandError, CommandRequest, Decision, Reply};
use palimpsest_web::{ApiError, AppState};

/// An administrator's command on one user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserCommand {
    /// Issue (or reissue) the user a token with these roles.
    Issue {
        /// The user's id.
        user_id: String,
        /// Role names as the request gave them.
        roles: Vec<String>,
        /// SHA-256 (lowercase hex) of the freshly generated token.
        token_sha256: String,
        /// The request's time.
        now: Timestamp,
    },
    /// Revoke the user's token.
    Revoke {
        /// The request's time.
        now: Timestamp,
    },
}

/// Decides `command_at(now)` against user `user_id`'s stream, appends its events (naming
/// `caller`, the administrator, as their actor) and answers what `answer` makes of the user
/// before and after them: [`Answer::Decided`] with that reply when this call decided,
/// [`Answer::Repeated`] with the kept one when it repeats an earlier call's Idempotency-Key.
pub async fn run(
    state: &AppState,
    request: &CommandRequest,
    user_id: &str,
    caller: &Caller,
    command_at: impl Fn(Timestamp) -> UserCommand,
    answer: impl Fn(&UserState, &UserState) -> Result<Reply, ApiError>,
) -> Result<Answer<Reply>, ApiError> {
    let stream = &stream_of(streams::user, user_id)?;
    let (command_at, answer) = (&command_at, &answer);
    let answer = state
        .commands
        .run_for(command(request, caller.actor()), |attempt| async move {
            let user: UserState = attempt.load(stream).await?;
            let events = decide(command_at(now()), &user).map_err(rejected)?;
            let after = events.iter().fold(user.clone(), evolve);
            let reply = answer(&user, &after).map_err(CommandError::Rejected)?;
            let events = encode(&events).map_err(rejected)?;
            Ok(Decision::new(reply.clone())
                .write(stream.clone(), events)
                .with_value(reply))
        })
        .await?;
    Ok(answer)
}
