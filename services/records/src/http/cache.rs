//! Stream states kept between commands: each use reads only the events appended since the
//! cached version (usually none, one indexed query), so a long-lived document is not refolded.

use crate::http::failure::Failure;
use palimpsest_events::{DomainEvent, StreamName};
use palimpsest_log::EventStore;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Entries kept before the cache starts over (a bound on memory, not a correctness matter).
const CAPACITY: usize = 100_000;
const PAGE: i64 = 1000;

/// Folded states of one kind of stream, with the version each was folded to.
#[derive(Clone)]
pub struct StreamCache<S: Folded> {
    states: Arc<Mutex<HashMap<StreamName, (S, i64)>>>,
    step: fn(S, &<S as Folded>::Event) -> S,
}

/// A state folded from one payload type.
pub trait Folded: Clone + Default + Send + 'static {
    /// The payload type of its stream.
    type Event: DomainEvent;
}

impl Folded for crate::document::DocumentState {
    type Event = palimpsest_events::records::DocumentEvent;
}

impl Folded for crate::document::UniqueState {
    type Event = palimpsest_events::records::UniqueEvent;
}

impl<S: Folded> StreamCache<S> {
    /// An empty cache folding with `step`.
    pub fn new(step: fn(S, &S::Event) -> S) -> Self {
        StreamCache {
            states: Arc::default(),
            step,
        }
    }

    /// The stream's state and version as the log has it now.
    pub async fn load(&self, store: &EventStore, stream: &StreamName) -> Result<(S, i64), Failure> {
        let cached = self.cached(stream);
        let (mut state, mut version) = cached.unwrap_or_default();
        loop {
            let page = store.read_stream(stream, version, PAGE).await?;
            let done = (page.len() as i64) < PAGE;
            for event in &page {
                let payload = S::Event::decode(event).map_err(Failure::internal)?;
                state = (self.step)(state, &payload);
                version = event.version;
            }
            if done {
                break;
            }
        }
        self.keep(stream, &state, version);
        Ok((state, version))
    }

    fn cached(&self, stream: &StreamName) -> Option<(S, i64)> {
        match self.states.lock() {
            Ok(map) => map.get(stream).cloned(),
            Err(poisoned) => poisoned.into_inner().get(stream).cloned(),
        }
    }

    fn keep(&self, stream: &StreamName, state: &S, version: i64) {
        let mut map = match self.states.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        };
        if map.len() >= CAPACITY {
            map.clear();
        }
        let newer = map.get(stream).is_none_or(|(_, v)| *v < version);
        if newer {
            map.insert(stream.clone(), (state.clone(), version));
        }
    }
}
