//! The append transaction: every statement it sends, and in what order.
//!
//! A warm batch is one call of `log.append_batch` (migration 0007, decision 0025) in autocommit:
//! the lock, the guard, every write, `NOTIFY` and the commit in one statement and one round trip
//! ([`call`]). Any other batch first reads under the lock — the log's head, its streams' heads
//! and, carefully, the keys and event ids seen before ([`begin_and_read`]) — then sends the same
//! call with `COMMIT` ([`call_and_commit`]). How the transaction commits (synchronously or not)
//! is [`super::durability::Commit`]'s choice, set by `BEGIN` and by the call itself.
//!
//! The nine statements the call replaced ([`one_round_trip`], [`write`]) remain for the bench's
//! comparison ([`crate::AppendOptions::one_call`] off).

use super::care::keys_and_ids;
use super::durability::Commit;
use crate::budget::{Budget, Phase};
use crate::plan::{Rows, stream_columns};
use crate::{APPEND_LOCK_KEY, AppendError, AppendRequest, LOG_CHANNEL};
use deadpool_postgres::Client;
use std::time::Instant;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

/// What a batch run from the database reads under the lock (see [`begin_and_read`]).
pub(super) struct ReadUnderLock {
    /// The row of the log's head position.
    pub(super) head: Row,
    /// The heads of the batch's streams that exist.
    pub(super) heads: Vec<Row>,
    /// The batch's idempotency keys stored before (read only carefully).
    pub(super) keys: Vec<Row>,
    /// The batch's event ids stored before (read only carefully).
    pub(super) ids: Vec<Row>,
}

/// Begins the transaction, takes the lock and reads, in one pipeline: the log's head, the heads
/// of the batch's streams and, when `careful`, the keys and event ids seen before.
pub(super) async fn begin_and_read(
    client: &Client,
    requests: &[AppendRequest],
    careful: bool,
    commit: Commit,
    budget: &Budget,
) -> Result<ReadUnderLock, AppendError> {
    let lock = client.prepare_cached(LOCK_SQL).await?;
    let head_stmt = client.prepare_cached(HEAD_SQL).await?;
    let heads_stmt = client.prepare_cached(HEADS_SQL).await?;
    let keys_stmt = client.prepare_cached(KEYS_SQL).await?;
    let ids_stmt = client.prepare_cached(IDS_SQL).await?;
    let (ctx, cat, key) = stream_columns(requests);
    let (keys, ids) = if careful {
        keys_and_ids(requests)
    } else {
        Default::default()
    };
    let lock_params: [&(dyn ToSql + Sync); 1] = [&APPEND_LOCK_KEY];
    let heads_params: [&(dyn ToSql + Sync); 3] = [&ctx, &cat, &key];
    let keys_params: [&(dyn ToSql + Sync); 1] = [&keys];
    let ids_params: [&(dyn ToSql + Sync); 1] = [&ids];
    let sent = Instant::now();
    let (begun, locked, head_row, head_rows, key_rows, id_rows) = tokio::try_join!(
        timed(client.batch_execute(commit.begin_sql())),
        timed(client.execute(&lock, &lock_params)),
        client.query_one(&head_stmt, &[]),
        client.query(&heads_stmt, &heads_params),
        client.query(&keys_stmt, &keys_params),
        client.query(&ids_stmt, &ids_params),
    )?;
    budget.add(Phase::Reads, sent.elapsed());
    budget.add(Phase::LockWait, locked.1.saturating_duration_since(begun.1));
    Ok(ReadUnderLock {
        head: head_row,
        heads: head_rows,
        keys: key_rows,
        ids: id_rows,
    })
}

/// The batch's writes, pipelined with `COMMIT`. Should one of them fail, Postgres turns the
/// `COMMIT` into a rollback, and the failed write's error is what this returns.
pub(super) async fn write(client: &Client, rows: &Rows, position: i64) -> Result<(), AppendError> {
    let remember = client.prepare_cached(REMEMBER_KEYS_SQL).await?;
    let remember_params = key_columns(rows);
    if rows.position.is_empty() {
        // No event: at most answers stored alone under their keys (pipelined with `COMMIT`,
        // which a failed insert turns into a rollback, as below).
        if rows.keys.key.is_empty() {
            client.batch_execute("COMMIT").await?;
        } else {
            tokio::try_join!(
                client.execute(&remember, &remember_params),
                client.batch_execute("COMMIT"),
            )?;
        }
        return Ok(());
    }
    let insert = client.prepare_cached(INSERT_SQL).await?;
    let upsert = client.prepare_cached(UPSERT_HEADS_SQL).await?;
    let advance = client.prepare_cached(ADVANCE_SQL).await?;
    let notify = client.prepare_cached(NOTIFY_SQL).await?;
    let sign = client.prepare_cached(SIGN_SQL).await?;
    let (c, k, s, v, h) = rows.last_of_each_stream();
    let position_text = position.to_string();
    let insert_params = event_columns(rows);
    let upsert_params: [&(dyn ToSql + Sync); 5] = [&c, &k, &s, &v, &h];
    let advance_params: [&(dyn ToSql + Sync); 1] = [&position];
    let notify_params: [&(dyn ToSql + Sync); 2] = [&LOG_CHANNEL, &position_text];
    let first = rows.position.first();
    let sign_params: [&(dyn ToSql + Sync); 3] = [&first, &position, &rows.signature];
    tokio::try_join!(
        client.execute(&sign, &sign_params),
        client.execute(&insert, &insert_params),
        client.execute(&upsert, &upsert_params),
        client.execute(&remember, &remember_params),
        client.execute(&advance, &advance_params),
        client.execute(&notify, &notify_params),
        client.batch_execute("COMMIT"),
    )?;
    Ok(())
}

/// The whole batch as one call of `log.append_batch`: the lock, the guard (the log still ends at
/// `expected`, with `last_event` there when known), the idempotency rows, the signature, the
/// events, the stream heads, the head and `NOTIFY`. Sent alone it runs in autocommit, so it
/// commits when it returns, synchronously when `commit` is [`Commit::Flushed`]; inside a
/// transaction begun by [`begin_and_read`] it leaves the commit to `COMMIT`.
pub(super) async fn call(
    client: &Client,
    rows: &Rows,
    (expected, last_event): (i64, Option<Uuid>),
    commit: Commit,
) -> Result<(), AppendError> {
    let statement = client.prepare_cached(APPEND_SQL).await?;
    let flushed = commit == Commit::Flushed;
    let (c, k, s, v, h) = rows.last_of_each_stream();
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&expected, &last_event, &flushed];
    params.extend(event_columns(rows));
    params.extend([&c as &(dyn ToSql + Sync), &k, &s, &v, &h]);
    params.extend(key_columns(rows));
    params.push(&rows.signature);
    client.execute(&statement, &params).await?;
    Ok(())
}

/// The columns of the batch's idempotency rows, in `log.idempotency`'s order.
fn key_columns(rows: &Rows) -> [&(dyn ToSql + Sync); 7] {
    let keys = &rows.keys;
    [
        &keys.key,
        &keys.first,
        &keys.last,
        &keys.request_hash,
        &keys.status,
        &keys.content_type,
        &keys.body,
    ]
}

/// The columns of the batch's events, in `log.events`' order.
fn event_columns(rows: &Rows) -> [&(dyn ToSql + Sync); 16] {
    [
        &rows.position,
        &rows.event_id,
        &rows.context,
        &rows.category,
        &rows.stream_key,
        &rows.version,
        &rows.event_type,
        &rows.schema_version,
        &rows.payload,
        &rows.actor,
        &rows.correlation_id,
        &rows.causation_id,
        &rows.idempotency_key,
        &rows.recorded_at,
        &rows.prev_hash,
        &rows.hash,
    ]
}

/// A batch planned from heads read under the lock, in its open transaction: the call, pipelined
/// with `COMMIT`. Should the call fail, Postgres turns the `COMMIT` into a rollback, and the
/// call's error is what this returns.
pub(super) async fn call_and_commit(
    client: &Client,
    rows: &Rows,
    expected: i64,
    commit: Commit,
) -> Result<(), AppendError> {
    tokio::try_join!(call(client, rows, (expected, None), commit), async {
        Ok::<_, AppendError>(client.batch_execute("COMMIT").await?)
    },)?;
    Ok(())
}

/// A warm batch in one round trip: `BEGIN`, the lock, the guard, the writes, `COMMIT`.
pub(super) async fn one_round_trip(
    client: &Client,
    rows: &Rows,
    (expected, last_event): (i64, Option<Uuid>),
    position: i64,
    commit: Commit,
    budget: &Budget,
) -> Result<(), AppendError> {
    let lock = client.prepare_cached(LOCK_SQL).await?;
    let guard = client.prepare_cached(GUARD_SQL).await?;
    let lock_params: [&(dyn ToSql + Sync); 1] = [&APPEND_LOCK_KEY];
    let guard_params: [&(dyn ToSql + Sync); 2] = [&expected, &last_event];
    let (begun, locked, _, _) = tokio::try_join!(
        timed(async { Ok::<_, AppendError>(client.batch_execute(commit.begin_sql()).await?) }),
        timed(async { Ok::<_, AppendError>(client.execute(&lock, &lock_params).await?) }),
        async { Ok::<_, AppendError>(client.execute(&guard, &guard_params).await?) },
        write(client, rows, position),
    )?;
    budget.add(Phase::LockWait, locked.1.saturating_duration_since(begun.1));
    Ok(())
}

/// Awaits `f` and notes when it finished (pipelined statements answer one after another).
async fn timed<T, E>(f: impl Future<Output = Result<T, E>>) -> Result<(T, Instant), E> {
    let value = f.await?;
    Ok((value, Instant::now()))
}

/// Commit without waiting for the WAL flush, so the append lock is held for the batch's round
/// trips and not for an fsync; `durable` is awaited before anyone is told (see
/// [`super::durability`]).
pub(super) const BEGIN_SQL: &str = "BEGIN; SET LOCAL synchronous_commit = off";
/// A batch with nothing queued behind it commits synchronously (see [`Commit::Flushed`]).
pub(super) const BEGIN_FLUSHED_SQL: &str = "BEGIN; SET LOCAL synchronous_commit = on";
const LOCK_SQL: &str = "SELECT pg_advisory_xact_lock($1)";
const GUARD_SQL: &str = "SELECT log.expect_head($1, $2)";
const NOTIFY_SQL: &str = "SELECT pg_notify($1, $2)";
/// The whole append (migration 0007).
const APPEND_SQL: &str = "SELECT log.append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
     $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, \
     $29, $30, $31, $32)";
/// What a warm batch sends, prepared on the line before its first batch.
pub(super) const LINE_STATEMENTS: [&str; 9] = [
    APPEND_SQL,
    LOCK_SQL,
    GUARD_SQL,
    INSERT_SQL,
    UPSERT_HEADS_SQL,
    REMEMBER_KEYS_SQL,
    ADVANCE_SQL,
    NOTIFY_SQL,
    SIGN_SQL,
];
/// The batch's signature, when the store signs (decision 0024).
const SIGN_SQL: &str = "INSERT INTO log.batches (first_position, last_position, signature) \
     SELECT $1::bigint, $2::bigint, $3::bytea WHERE $3::bytea IS NOT NULL";
const HEAD_SQL: &str = "SELECT position FROM log.head WHERE id = 1";
const ADVANCE_SQL: &str = "UPDATE log.head SET position = $1 WHERE id = 1";
/// One index lookup per touched stream (a lateral subquery: a join would let the planner pick
/// a sequential scan of every stream once the plan is generic).
const HEADS_SQL: &str = "SELECT h.context, h.category, h.stream_key, h.version, h.last_hash \
     FROM unnest($1::text[], $2::text[], $3::text[]) AS w(c, k, s) \
     CROSS JOIN LATERAL (SELECT * FROM log.streams s \
     WHERE s.context = w.c AND s.category = w.k AND s.stream_key = w.s) h";
/// Index lookups per key and per id, lateral for the same reason (`= ANY($1)` became a
/// sequential scan of the log under a generic plan).
const KEYS_SQL: &str = "SELECT i.key, i.first_position, i.last_position \
     FROM unnest($1::text[]) AS w(key) \
     CROSS JOIN LATERAL (SELECT * FROM log.idempotency i WHERE i.key = w.key) i";
const IDS_SQL: &str = "SELECT e.event_id, e.position FROM unnest($1::uuid[]) AS w(id) \
     CROSS JOIN LATERAL (SELECT event_id, position FROM log.events e WHERE e.event_id = w.id) e";
const INSERT_SQL: &str = "INSERT INTO log.events (position, event_id, context, category, \
     stream_key, version, event_type, schema_version, payload, actor, correlation_id, \
     causation_id, idempotency_key, recorded_at, prev_hash, hash) \
     SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[], $5::text[], \
     $6::bigint[], $7::text[], $8::int[], $9::json[], $10::text[], $11::uuid[], $12::uuid[], \
     $13::text[], $14::timestamptz[], $15::bytea[], $16::bytea[])";
const UPSERT_HEADS_SQL: &str = "INSERT INTO log.streams (context, category, stream_key, version, \
     last_hash) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bytea[]) \
     ON CONFLICT (context, category, stream_key) \
     DO UPDATE SET version = excluded.version, last_hash = excluded.last_hash";
/// No `ON CONFLICT`: a key stored before makes the batch fail and re-run carefully.
const REMEMBER_KEYS_SQL: &str = "INSERT INTO log.idempotency (key, first_position, last_position, \
     request_hash, reply_status, reply_content_type, reply_body) \
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bytea[], $5::int2[], \
     $6::text[], $7::bytea[])";
