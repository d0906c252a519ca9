//! Stream states kept between commands, so a command loads only the events appended since the
//! state was last seen instead of folding a stream's whole history every time.

use palimpsest_events::StreamName;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Mutex;

/// How many states a process keeps; past it, a quarter of them is dropped (any quarter: a
/// dropped state is folded again from the log on its next load, which is only slower).
const CAPACITY: usize = 50_000;

struct Entry {
    version: i64,
    state: Box<dyn Any + Send + Sync>,
}

/// States by (state type, stream), each with the stream version it reflects.
#[derive(Default)]
pub(crate) struct StateCache {
    entries: Mutex<HashMap<(TypeId, StreamName), Entry>>,
}

impl StateCache {
    /// A copy of the cached state of `stream` as `S`, with its version.
    pub(crate) fn get<S: Clone + Send + Sync + 'static>(
        &self,
        stream: &StreamName,
    ) -> Option<(i64, S)> {
        let entries = self.entries.lock().ok()?;
        let entry = entries.get(&(TypeId::of::<S>(), stream.clone()))?;
        let state = entry.state.downcast_ref::<S>()?;
        Some((entry.version, state.clone()))
    }

    /// Whether a state of `stream` as `S` is kept (the stream was seen with events).
    pub(crate) fn holds<S: 'static>(&self, stream: &StreamName) -> bool {
        self.entries
            .lock()
            .map(|entries| entries.contains_key(&(TypeId::of::<S>(), stream.clone())))
            .unwrap_or(false)
    }

    /// Keeps `state` at `version` unless a newer one is already kept.
    pub(crate) fn put<S: Clone + Send + Sync + 'static>(
        &self,
        stream: &StreamName,
        version: i64,
        state: S,
    ) {
        let Ok(mut entries) = self.entries.lock() else {
            tracing::warn!("state cache poisoned; state not kept");
            return;
        };
        let key = (TypeId::of::<S>(), stream.clone());
        if entries.get(&key).is_some_and(|e| e.version >= version) {
            return;
        }
        if entries.len() >= CAPACITY && !entries.contains_key(&key) {
            let victims: Vec<_> = entries.keys().take(CAPACITY / 4).cloned().collect();
            for victim in victims {
                entries.remove(&victim);
            }
        }
        entries.insert(
            key,
            Entry {
                version,
                state: Box::new(state),
            },
        );
    }
}
