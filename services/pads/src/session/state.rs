//! A session as its stream folds.

use palimpsest_events::pads::SessionEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// The state of one session stream.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Session {
    /// Whether the session exists now.
    pub exists: bool,
    /// Its group.
    pub group_id: String,
    /// Its author.
    pub author_id: String,
    /// Unix seconds.
    pub valid_until: i64,
}

impl Session {
    /// Folds one event into the state.
    pub fn apply(&mut self, event: &SessionEvent) {
        match event {
            SessionEvent::SessionCreated {
                group_id,
                author_id,
                valid_until,
                ..
            } => {
                *self = Session {
                    exists: true,
                    group_id: group_id.clone(),
                    author_id: author_id.clone(),
                    valid_until: *valid_until,
                }
            }
            SessionEvent::SessionDeleted { .. } => *self = Session::default(),
        }
    }
}

impl StreamState for Session {
    fn initial(_: &StreamName) -> Self {
        Session::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&SessionEvent::decode(event)?);
        Ok(())
    }
}
