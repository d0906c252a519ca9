//! Session commands: `createSession`, `deleteSession`.

use super::Session;
use crate::author::Author;
use crate::error::DomainError;
use crate::group::Group;
use crate::outcome::Outcome;
use palimpsest_events::pads::{AuthorEvent, GroupEvent, SessionEvent};

/// `createSession(groupID, authorID, validUntil)`. `valid_until` is the parsed field (or
/// Etherpad's message for a bad one, reported only once group and author exist, as Etherpad
/// checks in that order); `now_seconds` is the current unix time.
pub fn create_session(
    session_id: &str,
    (group_id, group): (&str, &Group),
    (author_id, author): (&str, &Author),
    valid_until: Result<i64, String>,
    now_seconds: i64,
) -> Result<Outcome, DomainError> {
    if !group.exists {
        return Err(DomainError::GroupMissing);
    }
    if !author.exists {
        return Err(DomainError::AuthorMissing);
    }
    let valid_until = valid_until.map_err(DomainError::Invalid)?;
    if valid_until < now_seconds {
        return Err(DomainError::ValidUntilInPast);
    }
    let mut outcome = Outcome::none();
    outcome.session(
        session_id,
        SessionEvent::SessionCreated {
            session_id: session_id.to_owned(),
            group_id: group_id.to_owned(),
            author_id: author_id.to_owned(),
            valid_until,
        },
    );
    outcome.group(
        group_id,
        GroupEvent::GroupSessionAdded {
            session_id: session_id.to_owned(),
        },
    );
    outcome.author(
        author_id,
        AuthorEvent::AuthorSessionAdded {
            session_id: session_id.to_owned(),
        },
    );
    Ok(outcome)
}

/// `deleteSession(sessionID)`: both session lists are updated before the session goes.
pub fn delete_session(
    session_id: &str,
    session: &Session,
    group: &Group,
) -> Result<Outcome, DomainError> {
    if !session.exists {
        return Err(DomainError::SessionMissing);
    }
    let mut outcome = Outcome::none();
    if group.exists {
        outcome.group(
            &session.group_id,
            GroupEvent::GroupSessionRemoved {
                session_id: session_id.to_owned(),
            },
        );
    }
    outcome.author(
        &session.author_id,
        AuthorEvent::AuthorSessionRemoved {
            session_id: session_id.to_owned(),
        },
    );
    outcome.session(
        session_id,
        SessionEvent::SessionDeleted {
            session_id: session_id.to_owned(),
        },
    );
    Ok(outcome)
}
