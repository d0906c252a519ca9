//! A projection stopped on an event it cannot apply: recorded, announced and shown, never
//! skipped.
//!
//! When a projector fails on one event for a reason that is not a lost connection (a decode
//! error, a value its tables refuse), it cannot go past it without leaving the read model wrong.
//! It records the [`Stall`] beside its checkpoint (column `stalled` of its
//! `projection_checkpoint` row), announces it on [`STALL_CHANNEL`] so that every process's
//! [`crate::ProjectionWatch`] fails the writes waiting for it at once, and keeps retrying slowly,
//! so a fixed binary (or a fixed database) resumes from that event. The next checkpoint it
//! writes clears the record.

use crate::{ProjectionError, ReadDatabase};
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use palimpsest_events::RecordedEvent;
use serde::{Deserialize, Serialize};

/// The Postgres channel on which a runner announces a stall (the payload is the [`Stall`] as
/// JSON).
pub const STALL_CHANNEL: &str = "palimpsest_projection_stalled";

/// A projection stopped on an event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stall {
    /// The projection (its schema).
    pub projection: String,
    /// The position of the event it cannot apply (its checkpoint is just before it).
    pub position: i64,
    /// The event's id.
    pub event_id: String,
    /// The event's type.
    pub event_type: String,
    /// The event's stream, `context/category/key` (escaped as in the NATS header).
    pub stream: String,
    /// Why it could not apply it.
    pub error: String,
    /// When the runner stopped on it.
    pub since: DateTime<Utc>,
}

impl Stall {
    /// The stall of `projection` on `event` for `error`.
    pub fn at(projection: &str, event: &RecordedEvent, error: &ProjectionError) -> Stall {
        Stall {
            projection: projection.to_owned(),
            position: event.position,
            event_id: event.event_id.to_string(),
            event_type: event.event_type.clone(),
            stream: palimpsest_events::subject::stream_header(&event.stream),
            error: describe(error),
            since: Utc::now(),
        }
    }
}

/// The text of `error` as a stall records it: Postgres jsonb holds no U+0000, so an error text
/// quoting one is shown escaped.
pub(crate) fn describe(error: &ProjectionError) -> String {
    error.to_string().replace('\0', "\\u0000")
}

impl std::fmt::Display for Stall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "projection {} stopped at position {} (event {} {} of {}): {}",
            self.projection, self.position, self.event_id, self.event_type, self.stream, self.error
        )
    }
}

/// Makes a projection's stop on an event loud: the lag (`lag` events, the stopped one
/// included) and the stall in its metrics; once per event and error (`known`: the stall already
/// announced, if any) an error line, a counted stall, and the record beside its checkpoint
/// ([`record`]), announced to every process.
pub(crate) async fn announce(read: &ReadDatabase, stall: &Stall, lag: i64, known: Option<&Stall>) {
    let name = stall.projection.clone();
    metrics::gauge!("palimpsest_projection_lag_events", "projection" => name.clone())
        .set(lag.max(0) as f64);
    metrics::gauge!("palimpsest_projection_stalled", "projection" => name.clone()).set(1.0);
    if known.is_some_and(|s| s.position == stall.position && s.error == stall.error) {
        return;
    }
    metrics::counter!("palimpsest_projection_stalls_total", "projection" => name.clone())
        .increment(1);
    tracing::error!(
        projection = %name,
        position = stall.position,
        event_id = %stall.event_id,
        event_type = %stall.event_type,
        stream = %stall.stream,
        error = %stall.error,
        "projection stopped: it cannot apply this event and skips nothing; fix the cause \
         (or the binary) and it resumes from this event"
    );
    match read.pool().get().await {
        Ok(client) => {
            if let Err(e) = record(&client, stall).await {
                tracing::error!(projection = %name, error = %e, "cannot record the stall");
            }
        }
        Err(e) => tracing::error!(projection = %name, error = %e, "cannot record the stall"),
    }
}

/// Ends `stall`, if any, once a batch past it committed: the gauge back to 0 and a line saying
/// so (the committed checkpoint cleared the record).
pub(crate) fn resumed(projection: &str, stall: Option<Stall>) {
    if let Some(stall) = stall {
        metrics::gauge!("palimpsest_projection_stalled", "projection" => projection.to_owned())
            .set(0.0);
        tracing::info!(projection, position = stall.position, "projection resumed");
    }
}

/// Records the stall beside the projection's checkpoint (a partition's beside its own) and
/// announces it.
pub async fn record(client: &impl GenericClient, stall: &Stall) -> Result<(), ProjectionError> {
    let name = &stall.projection;
    let schema = crate::partition::schema_of(name);
    let json = serde_json::to_value(stall)
        .map_err(|e| ProjectionError::Invalid(format!("stall record: {e}")))?;
    let mut note = serde_json::to_string(stall)
        .map_err(|e| ProjectionError::Invalid(format!("stall record: {e}")))?;
    if note.len() > 7000 {
        // NOTIFY payloads are limited to 8000 bytes; the full record is in the table.
        let mut short = stall.clone();
        short.error = short.error.chars().take(2000).collect();
        note = serde_json::to_string(&short)
            .map_err(|e| ProjectionError::Invalid(format!("stall record: {e}")))?;
    }
    client
        .execute(
            &format!("UPDATE {schema}.projection_checkpoint SET stalled = $2 WHERE name = $1"),
            &[name, &json],
        )
        .await?;
    client
        .execute("SELECT pg_notify($1, $2)", &[&STALL_CHANNEL, &note])
        .await?;
    Ok(())
}

/// Every recorded stall of every live read model in the database (schemas holding a
/// `projection_checkpoint` table, rebuilds in progress left out), for readiness.
pub async fn all(client: &impl GenericClient) -> Result<Vec<Stall>, ProjectionError> {
    let mut stalls = Vec::new();
    for schema in crate::checkpoint::live_schemas(client).await? {
        stalls.extend(of_schema(client, &schema).await?);
    }
    Ok(stalls)
}

/// The recorded stall of the projection whose checkpoint is in `schema`, if any. Reads the
/// column through `to_jsonb` so that a checkpoint table from before the column reads as none.
pub async fn of_schema(
    client: &impl GenericClient,
    schema: &str,
) -> Result<Option<Stall>, ProjectionError> {
    let row = client
        .query_opt(
            &format!(
                "SELECT to_jsonb(c) -> 'stalled' FROM {schema}.projection_checkpoint c \
                 WHERE to_jsonb(c) -> 'stalled' <> 'null'::jsonb LIMIT 1"
            ),
            &[],
        )
        .await?;
    let Some(row) = row else { return Ok(None) };
    match serde_json::from_value(row.get::<_, serde_json::Value>(0)) {
        Ok(stall) => Ok(Some(stall)),
        Err(e) => Err(ProjectionError::Invalid(format!(
            "unreadable stall record in {schema}.projection_checkpoint: {e}"
        ))),
    }
}
