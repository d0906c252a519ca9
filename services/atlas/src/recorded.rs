//! Events as the log records them, for the crate's unit tests: a decider's or projector's test
//! starts from recorded events without a log.

use palimpsest_events::{DomainEvent, Metadata, RecordedEvent, StreamName};

/// `event` as the log records it at `version` of `stream` and at `position`.
pub(crate) fn recorded(
    stream: &StreamName,
    version: i64,
    position: i64,
    event: &impl DomainEvent,
) -> RecordedEvent {
    let new = event.encode().expect("encode");
    RecordedEvent {
        event_id: new.event_id,
        stream: stream.clone(),
        version,
        position,
        event_type: new.event_type,
        schema_version: new.schema_version,
        payload: new.payload,
        metadata: Metadata::default(),
        recorded_at: chrono::Utc::now(),
        prev_hash: None,
        hash: String::new(),
    }
}
