//! A document's write-side state, folded from its stream.

use palimpsest_events::records::{DocumentEvent, Row, UniqueEvent};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;

/// What a command needs to know of one document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocumentState {
    /// The current row (live or zombie); `None` when absent or purged.
    pub row: Option<Row>,
    /// True when the row is a zombie (`x` = 1).
    pub zombie: bool,
    /// The highest version ever written, kept after a purge so versions never regress.
    pub last_v: i64,
    /// Each of its `del` rows still stored: its version (= its `z`) and sealed data.
    pub left: Vec<(i64, String)>,
}

impl DocumentState {
    /// The `x` of the row: 0 live, 1 zombie.
    pub fn x(&self) -> u8 {
        u8::from(self.zombie)
    }
}

/// The state after `event`.
pub fn evolve(mut state: DocumentState, event: &DocumentEvent) -> DocumentState {
    match event {
        DocumentEvent::DocumentCreated { row } => {
            state.last_v = state.last_v.max(row.v);
            state.row = Some(row.clone());
            state.zombie = false;
        }
        DocumentEvent::DocumentUpdated { row, left } => {
            state.last_v = state.last_v.max(row.v);
            state.row = Some(row.clone());
            state.zombie = false;
            if let Some(left) = left {
                state.left.push((row.v, left.data.clone()));
            }
        }
        DocumentEvent::DocumentZombified { row } => {
            state.last_v = state.last_v.max(row.v);
            state.row = Some(row.clone());
            state.zombie = true;
        }
        DocumentEvent::DocumentPurged { .. } => {
            state.row = None;
            state.zombie = false;
            state.left.clear();
        }
        DocumentEvent::LeftRowsPurged { before, .. } => state.left.retain(|(z, _)| z >= before),
        DocumentEvent::DocumentResealed { data, left, .. } => {
            if let Some(row) = &mut state.row {
                row.data = data.clone();
            }
            for seal in left {
                if let Some(kept) = state.left.iter_mut().find(|(v, _)| *v == seal.v) {
                    kept.1 = seal.data.clone();
                }
            }
        }
    }
    state
}

/// The owner of one unique value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UniqueState {
    /// `[org, clazz, pk]` of the holder, if any.
    pub owner: Option<[String; 3]>,
}

/// The lock's state after `event`.
pub fn evolve_unique(
    mut state: UniqueState,
    event: &palimpsest_events::records::UniqueEvent,
) -> UniqueState {
    use palimpsest_events::records::UniqueEvent;
    match event {
        UniqueEvent::UniqueClaimed { owner } => state.owner = Some(owner.clone()),
        UniqueEvent::UniqueReleased { .. } => state.owner = None,
    }
    state
}

impl StreamState for DocumentState {
    fn initial(_: &StreamName) -> Self {
        DocumentState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = evolve(std::mem::take(self), &DocumentEvent::decode(event)?);
        Ok(())
    }
}

impl StreamState for UniqueState {
    fn initial(_: &StreamName) -> Self {
        UniqueState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = evolve_unique(std::mem::take(self), &UniqueEvent::decode(event)?);
        Ok(())
    }
}
