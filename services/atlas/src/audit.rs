//! A stream's state as JSON after some of its events, for the binary's `audit stream --at`:
//! the same folds the deciders use, shaped like the read API's rows.

use crate::published::{entity, geometry};
use crate::read::rows::{CommitRow, SectionRow, SubmissionRow};
use crate::section::{SectionState, evolve};
use crate::streams::CONTEXT;
use palimpsest_events::atlas::{EntityEvent, GeometryEvent, PublicationEvent, SectionEvent};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use serde_json::{Value, json};

/// The state of an atlas `stream` after `events`; `None` for a stream that is not atlas's.
pub fn state_at(stream: &StreamName, events: &[RecordedEvent]) -> Option<Value> {
    if stream.context != CONTEXT {
        return None;
    }
    let folded = match stream.category.as_str() {
        "section" => section(events),
        "entity" => decode_all::<EntityEvent>(events).map(|evs| {
            let state = evs
                .iter()
                .fold(entity::EntityState::default(), entity::evolve);
            json!({ "entity": state.row })
        }),
        "geometry" => decode_all::<GeometryEvent>(events).map(|evs| {
            let state = evs
                .iter()
                .fold(geometry::GeometryState::default(), geometry::evolve);
            json!({ "geometry": state.row, "entity_ids": state.links })
        }),
        "publication" => decode_all::<PublicationEvent>(events)
            .map(|evs| json!({ "publications": evs.len(), "last": evs.last() })),
        _ => return None,
    };
    Some(folded.unwrap_or_else(|e| json!({ "error": e.to_string() })))
}

fn decode_all<E: DomainEvent>(events: &[RecordedEvent]) -> Result<Vec<E>, DecodeError> {
    events.iter().map(E::decode).collect()
}

fn section(events: &[RecordedEvent]) -> Result<Value, DecodeError> {
    let state = decode_all::<SectionEvent>(events)?
        .iter()
        .fold(SectionState::default(), evolve);
    let Some(row) = SectionRow::from_state(&state) else {
        return Ok(Value::Null);
    };
    let commits: Vec<CommitRow> = state
        .commits
        .iter()
        .map(|c| CommitRow::from_commit(&row.id, c))
        .collect();
    let submissions: Vec<SubmissionRow> = state
        .submissions
        .iter()
        .map(|s| SubmissionRow::from_submission(&row.id, s))
        .collect();
    Ok(json!({ "section": row, "commits": commits, "submissions": submissions }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorded::recorded;
    use palimpsest_events::atlas::Timestamp;

    #[test]
    fn folds_a_section_stream_into_its_rows() {
        let stream = crate::streams::section("s1").expect("stream");
        let at = Timestamp::parse("2026-04-19T10:00:00Z").expect("time");
        let events = [
            SectionEvent::SectionCreated {
                section_id: "s1".into(),
                title: "t".into(),
                description: None,
                user_id: None,
                created_by: None,
                created_at: at,
            },
            SectionEvent::SectionLocked {
                locked_by: "ann".into(),
                locked_at: at,
                lock_expires_at: at.plus_seconds(900),
            },
        ];
        let recorded: Vec<RecordedEvent> = events
            .iter()
            .enumerate()
            .map(|(i, e)| recorded(&stream, i as i64 + 1, i as i64 + 1, e))
            .collect();
        let state = state_at(&stream, &recorded).expect("atlas stream");
        assert_eq!(state["section"]["state"]["locked_by"], "ann");
        assert_eq!(state["commits"], json!([]));
        let just_created = state_at(&stream, &recorded[..1]).expect("atlas stream");
        assert_eq!(just_created["section"]["state"]["locked_by"], Value::Null);
        let other = StreamName::new("pads", "pad", "x").expect("stream");
        assert_eq!(state_at(&other, &recorded), None);
    }
}
