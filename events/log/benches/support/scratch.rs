//! Scratch copies of `log.events` for weighing the sequencer design (schema `weigh`, dropped
//! after each pass), and the rows of one 10-event command as the appender sends them.
//!
//! - `weigh.events`: `LIKE log.events INCLUDING ALL` (the same columns, `CHECK`, primary key
//!   and the two unique constraints), its `position` drawn from a sequence instead of the
//!   append lock: what parallel backends could insert at most.
//! - `weigh.events_x`: the same plus what a sequencer needs to find settled rows, the inserting
//!   transaction's `xid8` and an index on `(tx, position)`.
//! - `weigh.positions`: the sequencer's output, `(position, event)` with one index.

use chrono::{DateTime, Utc};
use tokio_postgres::Client;
use uuid::Uuid;

/// Events in one command, as the bench's 10-event commands.
pub const EVENTS: usize = 10;

/// The scratch tables, empty, or holding the log's rows when `copy_log` (the grown pass).
pub async fn create(client: &Client, copy_log: bool) {
    client
        .batch_execute(
            "DROP SCHEMA IF EXISTS weigh CASCADE; CREATE SCHEMA weigh;
             CREATE SEQUENCE weigh.seq;
             CREATE TABLE weigh.events (LIKE log.events INCLUDING ALL);
             ALTER TABLE weigh.events ALTER position SET DEFAULT nextval('weigh.seq');
             CREATE TABLE weigh.events_x (LIKE weigh.events INCLUDING ALL,
                 tx xid8 NOT NULL DEFAULT pg_current_xact_id());
             CREATE INDEX ON weigh.events_x (tx, position);
             CREATE TABLE weigh.positions (position bigint PRIMARY KEY, event bigint NOT NULL);",
        )
        .await
        .expect("scratch tables");
    if copy_log {
        client
            .batch_execute(
                "INSERT INTO weigh.events SELECT * FROM log.events;
                 INSERT INTO weigh.events_x SELECT * FROM log.events;
                 SELECT setval('weigh.seq', (SELECT max(position) FROM log.events));
                 ANALYZE weigh.events; ANALYZE weigh.events_x;",
            )
            .await
            .expect("copy the log");
    }
}

/// Drops the scratch schema.
pub async fn drop(client: &Client) {
    client
        .batch_execute("DROP SCHEMA IF EXISTS weigh CASCADE")
        .await
        .expect("drop scratch tables");
}

/// The appender's multi-row insert (`writer/transaction.rs`, `INSERT_SQL`) into `table`,
/// `position` left to the sequence (and `tx` to its default).
pub fn insert_sql(table: &str) -> String {
    format!(
        "INSERT INTO {table} (event_id, context, category, stream_key, version, event_type, \
         schema_version, payload, actor, correlation_id, causation_id, idempotency_key, \
         recorded_at, prev_hash, hash) \
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bigint[], \
         $6::text[], $7::int[], $8::json[], $9::text[], $10::uuid[], $11::uuid[], $12::text[], \
         $13::timestamptz[], $14::bytea[], $15::bytea[])"
    )
}

/// The column arrays of one command's events on one stream, as the appender binds them:
/// UUIDv7 ids, no metadata, a 32-byte hash chained to the previous one.
pub struct Command {
    event_id: Vec<Uuid>,
    context: Vec<&'static str>,
    category: Vec<&'static str>,
    stream_key: Vec<String>,
    version: Vec<i64>,
    event_type: Vec<&'static str>,
    schema_version: Vec<i32>,
    payload: Vec<serde_json::Value>,
    none_text: Vec<Option<String>>,
    none_uuid: Vec<Option<Uuid>>,
    recorded_at: Vec<DateTime<Utc>>,
    prev_hash: Vec<Option<Vec<u8>>>,
    hash: Vec<Vec<u8>>,
}

impl Command {
    /// The next command on stream `key`, whose last version is `*version` (moved past it).
    pub fn next(key: &str, version: &mut i64, payload: fn(u64) -> serde_json::Value) -> Command {
        let now = Utc::now();
        let mut c = Command {
            event_id: Vec::with_capacity(EVENTS),
            context: vec!["bench"; EVENTS],
            category: vec!["thing"; EVENTS],
            stream_key: vec![key.to_owned(); EVENTS],
            version: Vec::with_capacity(EVENTS),
            event_type: vec!["Happened"; EVENTS],
            schema_version: vec![1; EVENTS],
            payload: Vec::with_capacity(EVENTS),
            none_text: vec![None; EVENTS],
            none_uuid: vec![None; EVENTS],
            recorded_at: vec![now; EVENTS],
            prev_hash: Vec::with_capacity(EVENTS),
            hash: Vec::with_capacity(EVENTS),
        };
        for i in 0..EVENTS {
            *version += 1;
            let id = Uuid::now_v7();
            c.prev_hash.push(
                c.hash
                    .last()
                    .cloned()
                    .or_else(|| (*version > 1).then(|| [id.as_bytes().as_slice(); 2].concat())),
            );
            c.event_id.push(id);
            c.version.push(*version);
            c.payload.push(payload(i as u64));
            c.hash
                .push([id.as_bytes().as_slice(), Uuid::new_v4().as_bytes()].concat());
        }
        c
    }

    /// The parameters of [`insert_sql`].
    pub fn params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 15] {
        [
            &self.event_id,
            &self.context,
            &self.category,
            &self.stream_key,
            &self.version,
            &self.event_type,
            &self.schema_version,
            &self.payload,
            &self.none_text,
            &self.none_uuid,
            &self.none_uuid,
            &self.none_text,
            &self.recorded_at,
            &self.prev_hash,
            &self.hash,
        ]
    }
}
