//! An author as its stream folds: whether it exists, its pads and sessions.

use palimpsest_events::pads::{AuthorEvent, AuthorName};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// The state of one author stream.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Author {
    /// Whether the author exists (authors are never deleted).
    pub exists: bool,
    /// The name.
    pub name: Option<String>,
    /// The pads the author is linked to, in link order.
    pub pads: Vec<String>,
    /// The author's sessions.
    pub sessions: Vec<String>,
}

impl Author {
    /// Whether the author is linked to `pad_id`.
    pub fn has_pad(&self, pad_id: &str) -> bool {
        self.pads.iter().any(|p| p == pad_id)
    }

    /// Folds one event into the state.
    pub fn apply(&mut self, event: &AuthorEvent) {
        match event {
            AuthorEvent::AuthorCreated { name, .. } => {
                self.exists = true;
                self.name = match name {
                    AuthorName::Text(n) => Some(n.clone()),
                    AuthorName::Absent | AuthorName::Null => None,
                };
            }
            AuthorEvent::AuthorNameSet { name } => self.name = Some(name.clone()),
            AuthorEvent::AuthorSeen { .. } => {}
            AuthorEvent::AuthorPadLinked { pad_id } => {
                if !self.has_pad(pad_id) {
                    self.pads.push(pad_id.clone());
                }
            }
            AuthorEvent::AuthorPadUnlinked { pad_id } => self.pads.retain(|p| p != pad_id),
            AuthorEvent::AuthorSessionAdded { session_id } => {
                if !self.sessions.contains(session_id) {
                    self.sessions.push(session_id.clone());
                }
            }
            AuthorEvent::AuthorSessionRemoved { session_id } => {
                self.sessions.retain(|s| s != session_id)
            }
        }
    }
}

impl StreamState for Author {
    fn initial(_: &StreamName) -> Self {
        Author::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.apply(&AuthorEvent::decode(event)?);
        Ok(())
    }
}
