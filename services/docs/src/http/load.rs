//! How each stream's write-side state folds from the log, for the command runner.

use crate::database::{self, DbState};
use crate::document::{self, DocState};
use crate::local::{self, LocalState};
use palimpsest_events::docs::{AttachmentEvent, DatabaseEvent, DocumentEvent, LocalEvent};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

impl StreamState for DbState {
    fn initial(_: &StreamName) -> Self {
        DbState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = database::evolve(std::mem::take(self), &DatabaseEvent::decode(event)?);
        Ok(())
    }
}

impl StreamState for DocState {
    fn initial(_: &StreamName) -> Self {
        DocState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = document::evolve(std::mem::take(self), &DocumentEvent::decode(event)?);
        Ok(())
    }
}

impl StreamState for LocalState {
    fn initial(_: &StreamName) -> Self {
        LocalState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = local::evolve(std::mem::take(self), &LocalEvent::decode(event)?);
        Ok(())
    }
}

/// Whether an attachment's content-addressed stream holds its bytes.
#[derive(Debug, Clone, Default)]
pub struct AttachmentState {
    /// The bytes are stored.
    pub stored: bool,
}

impl StreamState for AttachmentState {
    fn initial(_: &StreamName) -> Self {
        AttachmentState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        let AttachmentEvent::AttachmentStored { .. } = AttachmentEvent::decode(event)?;
        self.stored = true;
        Ok(())
    }
}
