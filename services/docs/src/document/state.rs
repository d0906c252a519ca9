//! How a document's stream folds from the log for the command runner: its events through
//! [`super::evolve`] into a [`DocState`].

use super::{DocState, evolve};
use palimpsest_events::docs::DocumentEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

impl StreamState for DocState {
    fn initial(_: &StreamName) -> Self {
        DocState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = evolve(std::mem::take(self), &DocumentEvent::decode(event)?);
        Ok(())
    }
}
