//! How a database's stream folds from the log for the command runner: its events through
//! [`super::evolve`] into a [`DbState`].

use super::{DbState, evolve};
use palimpsest_events::docs::DatabaseEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

impl StreamState for DbState {
    fn initial(_: &StreamName) -> Self {
        DbState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = evolve(std::mem::take(self), &DatabaseEvent::decode(event)?);
        Ok(())
    }
}
