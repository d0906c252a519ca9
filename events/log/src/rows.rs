//! Rows of `log.events` to envelopes, for the log and for readers that select events inside
//! their own transaction (projectors).

use crate::LogError;
use palimpsest_events::{Metadata, RecordedEvent, StreamName};
use tokio_postgres::Row;

/// The column list every read of `log.events` selects, in the order [`to_event`] expects.
pub const COLUMNS: &str = "position, event_id, context, category, stream_key, version, \
    event_type, schema_version, payload, actor, correlation_id, causation_id, idempotency_key, \
    recorded_at, prev_hash, hash";

/// Decodes one row selected with [`COLUMNS`].
pub fn to_event(row: &Row) -> Result<RecordedEvent, LogError> {
    let stream = StreamName::new(
        row.try_get::<_, String>(2)?,
        row.try_get::<_, String>(3)?,
        row.try_get::<_, String>(4)?,
    )
    .map_err(|e| LogError::Corrupt(e.to_string()))?;
    let prev_hash: Option<Vec<u8>> = row.try_get(14)?;
    let hash: Vec<u8> = row.try_get(15)?;
    Ok(RecordedEvent {
        position: row.try_get(0)?,
        event_id: row.try_get(1)?,
        stream,
        version: row.try_get(5)?,
        event_type: row.try_get(6)?,
        schema_version: row.try_get(7)?,
        payload: row.try_get(8)?,
        metadata: Metadata {
            actor: row.try_get(9)?,
            correlation_id: row.try_get(10)?,
            causation_id: row.try_get(11)?,
            idempotency_key: row.try_get(12)?,
        },
        recorded_at: row.try_get(13)?,
        prev_hash: prev_hash.map(hex::encode),
        hash: hex::encode(hash),
    })
}

/// Decodes many rows.
pub fn to_events(rows: &[Row]) -> Result<Vec<RecordedEvent>, LogError> {
    rows.iter().map(to_event).collect()
}
