//! The state of an org's token stream: nothing a decision needs beyond its version.

use palimpsest_events::{DecodeError, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// A token stream's state: nothing a decision needs beyond its version (loading it makes the
/// append expect the version seen, so tokens of one org are appended in turn).
#[derive(Debug, Clone, Default)]
pub struct TokenState;

impl StreamState for TokenState {
    fn initial(_: &StreamName) -> Self {
        TokenState
    }
    fn fold(&mut self, _: &RecordedEvent) -> Result<(), DecodeError> {
        Ok(())
    }
}
