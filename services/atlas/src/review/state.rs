//! The publication stream (`atlas/publication/map`) as an approval needs it.

use palimpsest_events::{DecodeError, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// The publication stream as an approval needs it: where its last event stands in the log, so
/// the read model can be waited for up to it.
#[derive(Debug, Clone, Default)]
pub struct PublicationHead {
    /// The log position of the stream's last event (0 while it is empty).
    pub last_position: i64,
}

/// How the platform's runner loads the publication stream: only where it stands.
impl StreamState for PublicationHead {
    fn initial(_: &StreamName) -> Self {
        PublicationHead::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.last_position = event.position;
        Ok(())
    }
}
