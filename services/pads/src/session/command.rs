//! How a command loads the session it reads, and `createSession` and `deleteSession` run as
//! load → decide (one try each; the runner, [`crate::command::Pads::run`], tries again from
//! fresh state when a stream moved). Their inputs are the session, group and author ids and
//! the parsed `validUntil`.

use super::Session;
use super::decide;
use crate::command::Load;
use crate::error::DomainError;
use crate::http::envelope::EnvelopeError;
use crate::outcome::Outcome;
use palimpsest_events::pads;

impl Load {
    /// Session `id`.
    pub async fn session(&self, id: &str) -> Result<Session, EnvelopeError> {
        self.state(pads::SESSION, id).await
    }
}

/// `createSession(groupID, authorID, validUntil)`: session `session_id` of author `author_id`
/// in group `group_id`; `until` is the parsed `validUntil` or Etherpad's message for a bad
/// one (refused only once group and author exist).
pub async fn create_session(
    load: &Load,
    session_id: &str,
    (group_id, author_id): (&str, &str),
    until: &Result<i64, String>,
    now_seconds: i64,
) -> Result<Outcome, EnvelopeError> {
    let group = load.group(group_id).await?;
    let author = load.author(author_id).await?;
    Ok(decide::create_session(
        session_id,
        (group_id, &group),
        (author_id, &author),
        until.clone(),
        now_seconds,
    )?)
}

/// `deleteSession(sessionID)`: both session lists first, then the session.
pub async fn delete_session(load: &Load, session_id: &str) -> Result<Outcome, EnvelopeError> {
    let session = load.session(session_id).await?;
    if !session.exists {
        return Err(DomainError::SessionMissing.into());
    }
    let group = load.group(&session.group_id).await?;
    load.author(&session.author_id).await?;
    Ok(decide::delete_session(session_id, &session, &group)?)
}
