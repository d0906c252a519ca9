//! How a user's and a role's streams fold from the log for the command runner: their events
//! through [`super::evolve_user`] and [`super::evolve_role`] into a [`PrincipalState`] each.

use super::{PrincipalState, evolve_role, evolve_user};
use palimpsest_events::docs::{RoleEvent, UserEvent};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// A user's stream state.
#[derive(Debug, Clone, Default)]
pub struct UserStream(pub PrincipalState);

impl StreamState for UserStream {
    fn initial(_: &StreamName) -> Self {
        UserStream::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.0 = evolve_user(std::mem::take(&mut self.0), &UserEvent::decode(event)?);
        Ok(())
    }
}

/// A role's stream state.
#[derive(Debug, Clone, Default)]
pub struct RoleStream(pub PrincipalState);

impl StreamState for RoleStream {
    fn initial(_: &StreamName) -> Self {
        RoleStream::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.0 = evolve_role(std::mem::take(&mut self.0), &RoleEvent::decode(event)?);
        Ok(())
    }
}
