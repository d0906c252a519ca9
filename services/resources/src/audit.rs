//! A stream's state as JSON after some of its events, for the binary's `audit stream --at`:
//! the same folds the deciders use.

use crate::ids::{self, Counters};
use crate::name::{self, NameState};
use crate::resource::{self, ResourceState};
use crate::streams::CONTEXT;
use palimpsest_events::resources::{ContentEvent, IdsEvent, NameEvent, ResourceEvent};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use serde_json::{Value, json};

/// The state of a resources `stream` after `events`; `None` for another context's stream.
pub fn state_at(stream: &StreamName, events: &[RecordedEvent]) -> Option<Value> {
    if stream.context != CONTEXT {
        return None;
    }
    let folded = match stream.category.as_str() {
        "resource" => decode_all::<ResourceEvent>(events).map(|all| {
            let state = all.iter().fold(ResourceState::default(), resource::evolve);
            json!({"head": state.head, "creator": state.creator, "hidden": state.hidden, "wiped": state.wiped})
        }),
        "name" => decode_all::<NameEvent>(events).map(|all| {
            let state = all.iter().fold(NameState::default(), name::evolve);
            json!({"holder": state.holder})
        }),
        "content" => decode_all::<ContentEvent>(events).map(|all| json!({"stored": all.first()})),
        "ids" => decode_all::<IdsEvent>(events).map(|all| {
            let c = all.iter().fold(Counters::default(), ids::evolve);
            json!({"res": c.res, "resrev": c.resrev, "rescontent": c.rescontent, "changeset": c.changeset})
        }),
        _ => return None,
    };
    Some(folded.unwrap_or_else(|e| json!({ "error": e.to_string() })))
}

fn decode_all<E: DomainEvent>(events: &[RecordedEvent]) -> Result<Vec<E>, DecodeError> {
    events.iter().map(E::decode).collect()
}
