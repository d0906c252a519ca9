//! The state of a name's stream: which live resource holds the name.

use palimpsest_events::resources::NameEvent;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// Who holds a name now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NameState {
    /// The live resource holding it, if any.
    pub holder: Option<i64>,
}

/// The name's state after `event`.
pub fn evolve(mut state: NameState, event: &NameEvent) -> NameState {
    match event {
        NameEvent::NameClaimed { res_id } => state.holder = Some(*res_id),
        NameEvent::NameReleased { res_id } if state.holder == Some(*res_id) => state.holder = None,
        NameEvent::NameReleased { .. } => {}
    }
    state
}

impl StreamState for NameState {
    fn initial(_: &StreamName) -> Self {
        NameState::default()
    }

    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = evolve(*self, &NameEvent::decode(event)?);
        Ok(())
    }
}
