//! A user's or a role's change through the platform's runner: loads the database (it must be
//! live) and the principal's stream, decides with the pure rules of [`super`] and answers
//! `{"ok": true}`. Password hashes are sealed here, with the router's key, before any event
//! holds them.

use super::state::{RoleStream, UserStream};
use super::{PrincipalState, StoredPassword, UserFields};
use crate::access::auth::SessionClaim;
use crate::command::{Attempt, Decided, Decision, DocsCommand, Reply, encode, run, text_reply};
use crate::database::DbState;
use crate::http::error::CouchError;
use crate::streams;
use axum::http::StatusCode;
use palimpsest_events::docs::RoleEvent;
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;

/// What a principal command does.
pub enum Change {
    /// Creates or updates a user.
    SaveUser(UserFields),
    /// Ends one of the user's sessions (its logout), until the session would have expired.
    EndSession {
        /// The session's id.
        id: String,
        /// When it would have expired (Unix seconds).
        expires: i64,
    },
    /// Deletes a user.
    DeleteUser,
    /// Creates or updates a role with its admin channels.
    SaveRole(Vec<String>),
    /// Deletes a role.
    DeleteRole,
}

/// One change of the principal `name` of the database `db`, as one command.
struct PrincipalCommand {
    db: String,
    name: String,
    change: Change,
}

/// Runs `change` on the principal `name` of `db` through the runner.
pub async fn change(
    state: &AppState,
    request: &CommandRequest,
    db: String,
    name: String,
    change: Change,
) -> Result<Reply, CouchError> {
    run(state, request, &PrincipalCommand { db, name, change }).await
}

impl DocsCommand for PrincipalCommand {
    fn decide<'a>(&'a self, attempt: &'a Attempt) -> Decided<'a> {
        Box::pin(async move {
            let db_stream =
                streams::database(&self.db).map_err(|e| CouchError::bad_request(e.to_string()))?;
            let db: DbState = attempt.load(&db_stream).await?;
            let (incarnation, _) = db.live.ok_or_else(CouchError::no_database)?;
            let bad =
                |e: palimpsest_events::StreamNameError| CouchError::bad_request(e.to_string());
            let (stream, events) = match &self.change {
                Change::SaveUser(fields) => {
                    let stream = streams::user(incarnation, &self.name).map_err(bad)?;
                    let UserStream(state) = attempt.load(&stream).await?;
                    let fields = resealed(fields, &state)?;
                    (stream, encode(&super::save_user(fields, &state))?)
                }
                Change::EndSession { id, expires } => {
                    let stream = streams::user(incarnation, &self.name).map_err(bad)?;
                    let UserStream(state) = attempt.load(&stream).await?;
                    let events = super::end_session(
                        self.db.clone(),
                        self.name.clone(),
                        id.clone(),
                        *expires,
                        &state,
                    );
                    (stream, encode(&events)?)
                }
                Change::DeleteUser => {
                    let stream = streams::user(incarnation, &self.name).map_err(bad)?;
                    let UserStream(state) = attempt.load(&stream).await?;
                    let events = super::delete_user(self.db.clone(), self.name.clone(), &state)?;
                    (stream, encode(&events)?)
                }
                Change::SaveRole(channels) => {
                    let stream = streams::role(incarnation, &self.name).map_err(bad)?;
                    let event = RoleEvent::RoleSaved {
                        db: self.db.clone(),
                        name: self.name.clone(),
                        admin_channels: channels.clone(),
                    };
                    (stream, encode(&[event])?)
                }
                Change::DeleteRole => {
                    let stream = streams::role(incarnation, &self.name).map_err(bad)?;
                    let RoleStream(state) = attempt.load(&stream).await?;
                    let events = super::delete_role(self.db.clone(), self.name.clone(), &state)?;
                    (stream, encode(&events)?)
                }
            };
            let reply = text_reply(StatusCode::OK, "{\"ok\":true}".into());
            Ok(Decision::new(reply).check(db_stream).write(stream, events))
        })
    }
}

/// The fields to save: a save that keeps a hash the last event held in the clear seals it,
/// so that no new event carries it in the clear.
fn resealed(fields: &UserFields, state: &PrincipalState) -> Result<UserFields, CouchError> {
    let mut fields = fields.clone();
    if fields.password_sealed.is_none()
        && let Some(StoredPassword::Plain(hash)) = &state.password
    {
        fields.password_sealed = Some(seal(hash)?);
    }
    Ok(fields)
}

/// A bcrypt hash sealed with the router's password key.
pub fn seal(hash: &str) -> Result<String, CouchError> {
    crate::access::scope::access()?
        .keys()?
        .seal(hash.as_bytes(), palimpsest_web::seal::fresh_iv())
        .map_err(CouchError::internal)
}

/// Ends a user's session at its logout: a `SessionEnded` event on the user's stream, after
/// which the session's cookie is refused.
pub async fn end_session(
    state: &AppState,
    request: &CommandRequest,
    db: &str,
    claim: &SessionClaim,
) -> Result<Reply, CouchError> {
    let change = Change::EndSession {
        id: claim.id.clone(),
        expires: claim.expires,
    };
    let command = PrincipalCommand {
        db: db.to_owned(),
        name: claim.name.clone(),
        change,
    };
    run(state, request, &command).await
}
