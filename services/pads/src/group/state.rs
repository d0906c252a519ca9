//! A group as its stream folds: whether it exists, its pads, sessions and mappers.

use palimpsest_events::pads::GroupEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// The state of one group stream.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Group {
    /// Whether the group exists now.
    pub exists: bool,
    /// The group's pads.
    pub pads: Vec<String>,
    /// The group's sessions.
    pub sessions: Vec<String>,
    /// The mappers naming the group.
    pub mappers: Vec<String>,
}

impl Group {
    /// Folds one event into the state.
    pub fn apply(&mut self, event: &GroupEvent) {
        match event {
            GroupEvent::GroupCreated { .. } => {
                *self = Group {
                    exists: true,
                    ..Group::default()
                }
            }
            GroupEvent::GroupMapperAdded { mapper } => {
                if !self.mappers.contains(mapper) {
                    self.mappers.push(mapper.clone());
                }
            }
            GroupEvent::GroupPadAdded { pad_id } => {
                if !self.pads.contains(pad_id) {
                    self.pads.push(pad_id.clone());
                }
            }
            GroupEvent::GroupPadRemoved { pad_id } => self.pads.retain(|p| p != pad_id),
            GroupEvent::GroupSessionAdded { session_id } => {
                if !self.sessions.contains(session_id) {
                    self.sessions.push(session_id.clone());
                }
            }
            GroupEvent::GroupSessionRemoved { session_id } => {
                self.sessions.retain(|s| s != session_id)
            }
            GroupEvent::GroupDeleted { .. } => *self = Group::default(),
        }
    }
}

impl StreamState for Group {
    fn initial(_: &StreamName) -> Self {
        Group::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&GroupEvent::decode(event)?);
        Ok(())
    }
}
