//! Every event a test appended matches its schema: the envelope's, and its payload's for its
//! event type and schema version (`events/schemas/`, generated from the payload types). A
//! [`TestApp`](crate::TestApp) checks its whole log when it stops, so every test of the suite
//! checks the events it made; an event of a context the schemas cover but of no known type,
//! or one that does not match, fails the test, named.

use jsonschema::Validator;
use palimpsest_events::schema::{self, EventSchema};
use palimpsest_events::{RecordedEvent, StreamName};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

/// The compiled schemas: the envelope's and each (context, event type, schema version)'s.
struct Schemas {
    envelope: Validator,
    payloads: HashMap<(String, String, i32), Validator>,
    contexts: BTreeSet<&'static str>,
}

static SCHEMAS: LazyLock<Schemas> = LazyLock::new(|| Schemas {
    envelope: compile(&schema::envelope_schema(), "the envelope"),
    payloads: schema::event_schemas().iter().map(compiled).collect(),
    contexts: schema::contexts().into_iter().collect(),
});

fn compiled(e: &EventSchema) -> ((String, String, i32), Validator) {
    let key = (e.context.to_owned(), e.event_type.clone(), e.schema_version);
    (key, compile(&e.schema, &e.path()))
}

fn compile(schema: &Value, name: &str) -> Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|e| panic!("schema {name} does not compile: {e}"))
}

/// Why each of `events` (but those of `skipped` streams) does not match its schema; empty
/// when all do. Events of contexts the schemas do not cover (tests' own) have only their
/// envelope checked.
pub fn mismatches(events: &[RecordedEvent], skipped: &BTreeSet<StreamName>) -> Vec<String> {
    events
        .iter()
        .filter(|e| !skipped.contains(&e.stream))
        .filter_map(|e| mismatch(e).map(|why| describe(e, &why)))
        .collect()
}

fn describe(e: &RecordedEvent, why: &str) -> String {
    format!(
        "event {} ({} in {}, schema_version {}): {why}",
        e.position, e.event_type, e.stream, e.schema_version
    )
}

fn mismatch(event: &RecordedEvent) -> Option<String> {
    let schemas = &*SCHEMAS;
    let published = serde_json::to_value(event).unwrap_or(Value::Null);
    if let Some(why) = errors(&schemas.envelope, &published) {
        return Some(format!("envelope: {why}"));
    }
    if !schemas.contexts.contains(event.stream.context.as_str()) {
        return None;
    }
    let key = (
        event.stream.context.clone(),
        event.event_type.clone(),
        event.schema_version,
    );
    match schemas.payloads.get(&key) {
        Some(validator) => errors(validator, &event.payload).map(|why| format!("payload: {why}")),
        None => Some("no schema for this event type and schema version".to_owned()),
    }
}

/// The validation errors of `instance`, joined; `None` when it is valid.
fn errors(validator: &Validator, instance: &Value) -> Option<String> {
    let found: Vec<String> = validator
        .iter_errors(instance)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    (!found.is_empty()).then(|| found.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use palimpsest_events::{DomainEvent, pads::PadEvent};

    fn recorded(event_type: &str, payload: Value) -> RecordedEvent {
        serde_json::from_value(serde_json::json!({
            "event_id": uuid::Uuid::now_v7(),
            "stream": {"context": "pads", "category": "pad", "key": "p"},
            "version": 1, "position": 7,
            "event_type": event_type, "schema_version": 1,
            "payload": payload, "metadata": {},
            "recorded_at": "2026-11-27T15:00:00.250000Z",
            "prev_hash": null, "hash": "00",
        }))
        .expect("an envelope")
    }

    #[test]
    fn a_payload_that_its_type_would_not_read_is_named() {
        let good = PadEvent::PadCreated { pad_id: "p".into() }
            .encode()
            .expect("encode");
        let none = BTreeSet::new();
        assert!(mismatches(&[recorded("PadCreated", good.payload)], &none).is_empty());
        let bad = recorded("PadCreated", serde_json::json!({"pad_id": 3}));
        let found = mismatches(std::slice::from_ref(&bad), &none);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("event 7 (PadCreated in pads/pad/p"),
            "{found:?}"
        );
        let unknown = recorded("PadExploded", serde_json::json!({}));
        assert_eq!(mismatches(&[unknown], &none).len(), 1);
        let skipped = [bad.stream.clone()].into();
        assert!(mismatches(&[bad], &skipped).is_empty());
    }
}
