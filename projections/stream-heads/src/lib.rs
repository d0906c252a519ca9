//! The `stream_heads` read model: one row per stream with its context, category, key, version,
//! last event type and time. It is the platform's own proof that projections rebuild exactly,
//! and answers "which streams exist, and how far along are they" for operators.

use async_trait::async_trait;
use deadpool_postgres::Transaction;
use palimpsest_events::RecordedEvent;
use palimpsest_projections::{Projection, ProjectionError};
use std::collections::HashMap;

/// The projection; its schema and table are both named `stream_heads`.
pub struct StreamHeads;

#[async_trait]
impl Projection for StreamHeads {
    fn name(&self) -> &'static str {
        "stream_heads"
    }

    /// A row per stream, written from that stream's events alone (the upsert keeps the row of
    /// the highest position): it may be split into partitions of its streams.
    fn partitionable(&self) -> bool {
        true
    }

    async fn create_tables(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
    ) -> Result<(), ProjectionError> {
        tx.batch_execute(&format!(
            "CREATE TABLE {schema}.stream_heads (
                 context text NOT NULL,
                 category text NOT NULL,
                 stream_key text NOT NULL,
                 version bigint NOT NULL,
                 last_event_type text NOT NULL,
                 last_position bigint NOT NULL,
                 last_event_at timestamptz NOT NULL,
                 PRIMARY KEY (context, category, stream_key));
             CREATE INDEX ON {schema}.stream_heads (last_event_at);"
        ))
        .await?;
        Ok(())
    }

    async fn apply(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
        event: &RecordedEvent,
    ) -> Result<(), ProjectionError> {
        self.apply_batch(tx, schema, std::slice::from_ref(event))
            .await
    }

    /// One upsert per batch: the last event of each stream in the batch wins.
    async fn apply_batch(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
        events: &[RecordedEvent],
    ) -> Result<(), ProjectionError> {
        let mut last: HashMap<&palimpsest_events::StreamName, &RecordedEvent> = HashMap::new();
        for e in events {
            last.insert(&e.stream, e);
        }
        let (mut ctx, mut cat, mut key, mut ver, mut typ, mut pos, mut at) =
            (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
        for e in last.values() {
            ctx.push(e.stream.context.as_str());
            cat.push(e.stream.category.as_str());
            key.push(e.stream.key.as_str());
            ver.push(e.version);
            typ.push(e.event_type.as_str());
            pos.push(e.position);
            at.push(e.recorded_at);
        }
        // Prepared once per connection and schema: unprepared, every batch paid a second round
        // trip (parse, then execute) and a fresh plan.
        let upsert = tx
            .prepare_cached(&format!(
                "INSERT INTO {schema}.stream_heads AS h
                 SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::timestamptz[])
                 ON CONFLICT (context, category, stream_key) DO UPDATE SET
                     version = excluded.version, last_event_type = excluded.last_event_type,
                     last_position = excluded.last_position, last_event_at = excluded.last_event_at
                 WHERE h.last_position < excluded.last_position"
            ))
            .await?;
        tx.execute(&upsert, &[&ctx, &cat, &key, &ver, &typ, &pos, &at])
            .await?;
        Ok(())
    }
}
