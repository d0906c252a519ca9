//! `audit stream --at`: a records stream's write-side state as JSON (rows show only what the
//! host may see: `data` stays sealed).

use crate::document::{DocumentState, UniqueState, evolve, evolve_unique};
use crate::streams::CONTEXT;
use palimpsest_events::records::{ClassEvent, DocumentEvent, UniqueEvent};
use palimpsest_events::{DomainEvent, RecordedEvent, StreamName};
use serde_json::{Value, json};

/// The state of `stream` after `events`, or `None` for a stream records does not fold.
pub fn state_at(stream: &StreamName, events: &[RecordedEvent]) -> Option<Value> {
    if stream.context != CONTEXT {
        return None;
    }
    match stream.category.as_str() {
        "doc" => {
            let mut state = DocumentState::default();
            for e in events {
                state = evolve(state, &DocumentEvent::decode(e).ok()?);
            }
            Some(json!({"row": state.row, "x": state.x(), "last_v": state.last_v}))
        }
        "unique" => {
            let mut state = UniqueState::default();
            for e in events {
                state = evolve_unique(state, &UniqueEvent::decode(e).ok()?);
            }
            Some(json!({"owner": state.owner}))
        }
        "class" => {
            let last = events.last()?;
            let ClassEvent::ClassDeclared { declaration } = ClassEvent::decode(last).ok()?;
            Some(json!({"declaration": declaration}))
        }
        _ => None,
    }
}

/// Reads a schema file: a JSON list of class declarations (the `declareClass` shape), each
/// checked as `declareClass` would.
pub fn load_schema(
    path: &std::path::Path,
) -> Result<Vec<palimpsest_events::records::ClassDeclaration>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("records schema {}: {e}", path.display()))?;
    let classes: Vec<palimpsest_events::records::ClassDeclaration> = serde_json::from_str(&text)
        .map_err(|e| format!("records schema {}: {e}", path.display()))?;
    for (i, class) in classes.iter().enumerate() {
        crate::class::validate(class)
            .map_err(|e| format!("records schema {} [{i}]: {e}", path.display()))?;
    }
    Ok(classes)
}
