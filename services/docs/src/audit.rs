//! A stream's state at any point, as JSON, for `palimpsest audit stream --at`.

use crate::database::{self, DbState};
use crate::document::{self, DocState};
use crate::local::{self, LocalState};
use crate::streams::CONTEXT;
use crate::tree::History;
use palimpsest_events::docs::{DatabaseEvent, DocumentEvent, LocalEvent};
use palimpsest_events::{DomainEvent, RecordedEvent, StreamName};
use serde_json::{Value, json};

/// The state of `stream` after `events`; `None` for a stream this context does not fold or an
/// event that does not decode.
pub fn state_at(stream: &StreamName, events: &[RecordedEvent]) -> Option<Value> {
    if stream.context != CONTEXT {
        return None;
    }
    match stream.category.as_str() {
        "database" => {
            let mut state = DbState::default();
            for e in events {
                state = database::evolve(state, &DatabaseEvent::decode(e).ok()?);
            }
            Some(
                json!({"live": state.live.map(|(i, l)| json!({"incarnation": i, "revs_limit": l}))}),
            )
        }
        "document" => {
            let mut state = DocState::default();
            for e in events {
                state = document::evolve(state, &DocumentEvent::decode(e).ok()?);
            }
            let winner = state.tree.winner().map(|w| w.rev.to_string());
            Some(json!({"winner": winner, "history": History::from(&state.tree)}))
        }
        "local" => {
            let mut state = LocalState::default();
            for e in events {
                state = local::evolve(state, &LocalEvent::decode(e).ok()?);
            }
            Some(
                json!({"current": state.current.map(|(n, body)| json!({"rev": local::local_rev(n), "body": body}))}),
            )
        }
        _ => None,
    }
}
