//! How a `_local/` document's stream folds from the log for the command runner: its events
//! through [`super::evolve`] into a [`LocalState`].

use super::{LocalState, evolve};
use palimpsest_events::docs::LocalEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

impl StreamState for LocalState {
    fn initial(_: &StreamName) -> Self {
        LocalState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = evolve(std::mem::take(self), &LocalEvent::decode(event)?);
        Ok(())
    }
}
