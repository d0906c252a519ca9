//! A user stream folded: its roles and current token hash.

use palimpsest_events::atlas::{Timestamp, UserEvent};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// A user as its events leave it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserState {
    /// The user's id, once issued.
    pub user_id: Option<String>,
    /// Its roles, sorted.
    pub roles: Vec<String>,
    /// SHA-256 of the token that authenticates it; `None` once revoked.
    pub token_sha256: Option<String>,
    /// When the current (or last) token was issued.
    pub issued_at: Option<Timestamp>,
    /// When it was revoked, if it is.
    pub revoked_at: Option<Timestamp>,
}

impl UserState {
    /// Whether the user's token authenticates.
    pub fn active(&self) -> bool {
        self.token_sha256.is_some()
    }
}

/// The state after `event`.
pub fn evolve(mut state: UserState, event: &UserEvent) -> UserState {
    match event {
        UserEvent::UserTokenIssued {
            user_id,
            roles,
            token_sha256,
            issued_at,
        } => {
            state.user_id = Some(user_id.clone());
            state.roles = roles.clone();
            state.token_sha256 = Some(token_sha256.clone());
            state.issued_at = Some(*issued_at);
            state.revoked_at = None;
        }
        UserEvent::UserRevoked { revoked_at, .. } => {
            state.token_sha256 = None;
            state.revoked_at = Some(*revoked_at);
        }
    }
    state
}

/// How the platform's runner loads a user stream: each event folded with [`evolve`].
impl StreamState for UserState {
    fn initial(_: &StreamName) -> Self {
        UserState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        let event = UserEvent::decode(event)?;
        *self = evolve(std::mem::take(self), &event);
        Ok(())
    }
}
