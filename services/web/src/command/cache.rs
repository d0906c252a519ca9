//! Stream states kept between commands, so a command loads only the events appended since the
//! state was last seen instead of folding a stream's whole history every time; or none at all,
//! when this process's memory of the log shows every event since (`Attempt::load`).

use palimpsest_events::StreamName;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Mutex;

/// How many states a process keeps; past it, a quarter of them is dropped (any quarter: a
/// dropped state is folded again from the log on its next load, which is only slower).
const CAPACITY: usize = 50_000;

struct Entry {
    version: i64,
    seen_at: i64,
    state: Box<dyn Any + Send + Sync>,
}

/// A kept state: the stream's `version` it reflects, and the log position it was known to be
/// current at (no event of the stream after `version` at or before `seen_at`).
#[derive(Clone)]
pub(crate) struct Cached<S> {
    pub(crate) version: i64,
    pub(crate) seen_at: i64,
    pub(crate) state: S,
}

/// States by (state type, stream), each with the stream version it reflects.
#[derive(Default)]
pub(crate) struct StateCache {
    entries: Mutex<HashMap<(TypeId, StreamName), Entry>>,
}

impl StateCache {
    /// A copy of the cached state of `stream` as `S`.
    pub(crate) fn get<S: Clone + Send + Sync + 'static>(
        &self,
        stream: &StreamName,
    ) -> Option<Cached<S>> {
        let entries = self.entries.lock().ok()?;
        let entry = entries.get(&(TypeId::of::<S>(), stream.clone()))?;
        let state = entry.state.downcast_ref::<S>()?;
        Some(Cached {
            version: entry.version,
            seen_at: entry.seen_at,
            state: state.clone(),
        })
    }

    /// Whether a state of `stream` as `S` is kept (the stream was seen with events).
    pub(crate) fn holds<S: 'static>(&self, stream: &StreamName) -> bool {
        self.entries
            .lock()
            .map(|entries| entries.contains_key(&(TypeId::of::<S>(), stream.clone())))
            .unwrap_or(false)
    }

    /// Keeps `cached` unless a newer state, or the same one known current later, is kept.
    pub(crate) fn put<S: Clone + Send + Sync + 'static>(
        &self,
        stream: &StreamName,
        cached: Cached<S>,
    ) {
        let Cached {
            version,
            seen_at,
            state,
        } = cached;
        let Ok(mut entries) = self.entries.lock() else {
            tracing::warn!("state cache poisoned; state not kept");
            return;
        };
        let key = (TypeId::of::<S>(), stream.clone());
        if entries
            .get(&key)
            .is_some_and(|e| (e.version, e.seen_at) >= (version, seen_at))
        {
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
                seen_at,
                state: Box::new(state),
            },
        );
    }
}
