//! The state of a digest's content stream (`resources/content/<sha256>`): whether and as which
//! `rescontent_id` that content was stored, so identical uploads share one row.

use palimpsest_events::resources::ContentEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// A digest's stored content, if it was stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentState {
    /// `rescontent_id` and size of the stored content.
    pub stored: Option<(i64, i64)>,
}

impl StreamState for ContentState {
    fn initial(_: &StreamName) -> Self {
        ContentState::default()
    }

    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        let ContentEvent::ContentStored {
            rescontent_id,
            size,
            ..
        } = ContentEvent::decode(event)?;
        self.stored = Some((rescontent_id, size));
        Ok(())
    }
}
