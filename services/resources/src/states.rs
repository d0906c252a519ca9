//! The write-side states of the context's streams, as the command runner loads them.

use crate::ids::{self, Counters};
use crate::names::{self, NameState};
use crate::resource::{self, ResourceState};
use palimpsest_events::resources::{ContentEvent, IdsEvent, NameEvent, ResourceEvent};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

impl StreamState for ResourceState {
    fn initial(_: &StreamName) -> Self {
        ResourceState::default()
    }

    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        let event = ResourceEvent::decode(event)?;
        *self = resource::evolve(std::mem::take(self), &event);
        Ok(())
    }
}

impl StreamState for Counters {
    fn initial(_: &StreamName) -> Self {
        Counters::default()
    }

    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = ids::evolve(*self, &IdsEvent::decode(event)?);
        Ok(())
    }
}

impl StreamState for NameState {
    fn initial(_: &StreamName) -> Self {
        NameState::default()
    }

    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = names::evolve(*self, &NameEvent::decode(event)?);
        Ok(())
    }
}

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
