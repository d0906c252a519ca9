//! The group-commit appender.
//!
//! One task per process owns the write path. It takes every command waiting at the moment,
//! opens one transaction, takes the global append lock, checks each command's idempotency key
//! and expected versions against the stream heads (and against the commands before it in the
//! same batch), writes the accepted commands' events with gapless positions and chained hashes,
//! and commits once. Each command gets its own outcome: a version conflict in one does not
//! touch the others. Commands arriving meanwhile form the next batch, so under load a
//! transaction carries many commands and one fsync serves them all.
//!
//! The lock orders commits, so it must not be held across an fsync (that would allow one fsync
//! per batch, whatever the load). The batch therefore commits with `synchronous_commit = off`
//! and its callers are answered only after a synchronous commit that comes later in the WAL has
//! been flushed ([`durable`]); many such waits share one fsync. Readers that publish beyond the
//! database (the relay, the `/v1` API) wait the same way before they do; projectors need not, as
//! their own synchronous commit flushes the events they read. After a crash, only events nobody
//! was told about can be missing.
//!
//! If the batch's transaction fails as a whole (say, an event id already stored under another
//! stream), each command is retried alone so that only the faulty one fails.

use crate::head::HeadWatch;
use crate::rows::{COLUMNS, to_events};
use crate::{APPEND_LOCK_KEY, AppendError, AppendRequest, Appended, LOG_CHANNEL, LogError};
use chrono::{DateTime, SubsecRound, Utc};
use deadpool_postgres::{Client, Pool};
use palimpsest_events::canonical::chain_hash;
use palimpsest_events::envelope::content_for_hash;
use palimpsest_events::{RecordedEvent, StreamName};
use std::collections::HashMap;
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::Row;
use tokio_postgres::types::{Json, ToSql};
use uuid::Uuid;

/// Most commands one transaction carries.
const MAX_BATCH_COMMANDS: usize = 512;
/// Most events one transaction carries (a single larger command still goes alone).
const MAX_BATCH_EVENTS: usize = 8192;

type Reply = oneshot::Sender<Result<Appended, AppendError>>;

/// The sending side of the appender task.
#[derive(Clone)]
pub(crate) struct WriterHandle {
    jobs: mpsc::Sender<(AppendRequest, Reply)>,
}

impl WriterHandle {
    /// Queues a command for the next batch and waits for its outcome.
    pub(crate) async fn submit(&self, req: AppendRequest) -> Result<Appended, AppendError> {
        let (reply, outcome) = oneshot::channel();
        self.jobs
            .send((req, reply))
            .await
            .map_err(|_| LogError::WriterStopped)?;
        outcome.await.map_err(|_| LogError::WriterStopped)?
    }
}

/// How long a batch may wait for more commands when fewer are queued than the last batch
/// carried. Commits are serialised by the append lock, so every fsync should carry as many
/// commands as are about to arrive: without this, a busy writer alternates one big batch with a
/// tiny one (the commands that came back first), wasting every other fsync.
const LINGER: std::time::Duration = std::time::Duration::from_micros(500);

/// Starts the appender task.
pub(crate) fn spawn(pool: Pool, head: HeadWatch) -> WriterHandle {
    let (jobs, mut queue) = mpsc::channel::<(AppendRequest, Reply)>(4096);
    tokio::spawn(async move {
        let mut last_batch = 1usize;
        while let Some(first) = queue.recv().await {
            let mut events = first.0.event_count();
            let mut batch = vec![first];
            let deadline = tokio::time::Instant::now() + LINGER;
            while batch.len() < MAX_BATCH_COMMANDS && events < MAX_BATCH_EVENTS {
                let job = match queue.try_recv() {
                    Ok(job) => job,
                    Err(_) if batch.len() * 2 < last_batch => {
                        match tokio::time::timeout_at(deadline, queue.recv()).await {
                            Ok(Some(job)) => job,
                            _ => break,
                        }
                    }
                    Err(_) => break,
                };
                events += job.0.event_count();
                batch.push(job);
            }
            last_batch = batch.len();
            run_batch(&pool, &head, batch).await;
        }
    });
    WriterHandle { jobs }
}

#[tracing::instrument(skip_all, fields(commands = batch.len()))]
async fn run_batch(pool: &Pool, head: &HeadWatch, batch: Vec<(AppendRequest, Reply)>) {
    let (requests, replies): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
    metrics::histogram!("palimpsest_append_batch_commands").record(requests.len() as f64);
    match commit(pool, &requests).await {
        Ok((outcomes, last)) => {
            head.advance(last);
            // Durability is awaited off the write path: the next batch may take the lock now.
            let pool = pool.clone();
            tokio::spawn(async move {
                let flushed = durable(&pool).await;
                for (reply, outcome) in replies.into_iter().zip(outcomes) {
                    let outcome = match &flushed {
                        Ok(()) => outcome,
                        Err(e) => Err(AppendError::Log(LogError::NotDurable(e.to_string()))),
                    };
                    let _ = reply.send(outcome);
                }
            });
        }
        Err(e) if requests.len() == 1 => {
            let _ = replies.into_iter().next().map(|r| r.send(Err(e)));
        }
        Err(e) => {
            tracing::warn!(error = %e, "batch failed as a whole; retrying its commands one by one");
            for (req, reply) in requests.into_iter().zip(replies) {
                let outcome = match commit(pool, std::slice::from_ref(&req)).await {
                    Ok((mut outcomes, last)) => {
                        head.advance(last);
                        match durable(pool).await {
                            Ok(()) => outcomes
                                .pop()
                                .unwrap_or(Err(AppendError::Log(LogError::WriterStopped))),
                            Err(e) => Err(AppendError::Log(LogError::NotDurable(e.to_string()))),
                        }
                    }
                    Err(e) => Err(e),
                };
                let _ = reply.send(outcome);
            }
        }
    }
}

/// Waits until everything committed so far is on disk: a transaction with a transaction id
/// commits synchronously, and its WAL flush covers every commit record written before it.
/// Concurrent callers share fsyncs through Postgres' own group commit.
pub(crate) async fn durable(pool: &Pool) -> Result<(), LogError> {
    let client = pool.get().await?;
    client
        .batch_execute("BEGIN; SELECT pg_current_xact_id(); COMMIT")
        .await?;
    Ok(())
}

/// A stream's head as the batch sees it: from the database, then moved by earlier commands.
#[derive(Clone)]
struct Head {
    version: i64,
    hash: Option<[u8; 32]>,
}

/// Column arrays for one multi-row insert.
#[derive(Default)]
struct Rows {
    position: Vec<i64>,
    event_id: Vec<Uuid>,
    context: Vec<String>,
    category: Vec<String>,
    stream_key: Vec<String>,
    version: Vec<i64>,
    event_type: Vec<String>,
    schema_version: Vec<i32>,
    payload: Vec<serde_json::Value>,
    actor: Vec<Option<String>>,
    correlation_id: Vec<Option<Uuid>>,
    causation_id: Vec<Option<Uuid>>,
    idempotency_key: Vec<Option<String>>,
    recorded_at: Vec<DateTime<Utc>>,
    prev_hash: Vec<Option<Vec<u8>>>,
    hash: Vec<Vec<u8>>,
}

enum Plan {
    /// Accepted: events to write, at these positions (inclusive range).
    Write(Vec<RecordedEvent>),
    /// Seen before: return the events at these positions.
    Replay(i64, i64),
    Refused(AppendError),
}

async fn commit(
    pool: &Pool,
    requests: &[AppendRequest],
) -> Result<(Vec<Result<Appended, AppendError>>, i64), AppendError> {
    let client = pool.get().await?;
    let result = commit_on(&client, requests).await;
    if result.is_err() {
        // Whatever failed, leave no transaction open on a pooled connection.
        let _ = client.batch_execute("ROLLBACK").await;
    }
    result
}

/// One batch in two round trips: the transaction's reads are pipelined behind `BEGIN` and the
/// append lock, and its writes are pipelined with `COMMIT`.
async fn commit_on(
    client: &Client,
    requests: &[AppendRequest],
) -> Result<(Vec<Result<Appended, AppendError>>, i64), AppendError> {
    let lock = client
        .prepare_cached("SELECT pg_advisory_xact_lock($1)")
        .await?;
    let head_stmt = client
        .prepare_cached("SELECT position FROM log.head WHERE id = 1")
        .await?;
    let (ctx, cat, key) = stream_columns(requests);
    let keys: Vec<&str> = requests
        .iter()
        .filter_map(|r| r.metadata.idempotency_key.as_deref())
        .collect();
    let ids: Vec<Uuid> = requests
        .iter()
        .flat_map(|r| {
            r.streams
                .iter()
                .flat_map(|s| s.events.iter().map(|e| e.event_id))
        })
        .collect();
    let heads_stmt = client.prepare_cached(HEADS_SQL).await?;
    let keys_stmt = client.prepare_cached(KEYS_SQL).await?;
    let ids_stmt = client.prepare_cached(IDS_SQL).await?;
    let lock_params: [&(dyn ToSql + Sync); 1] = [&APPEND_LOCK_KEY];
    let heads_params: [&(dyn ToSql + Sync); 3] = [&ctx, &cat, &key];
    let keys_params: [&(dyn ToSql + Sync); 1] = [&keys];
    let ids_params: [&(dyn ToSql + Sync); 1] = [&ids];
    let (_, _, head_row, head_rows, key_rows, id_rows) = tokio::try_join!(
        // Commit without waiting for the WAL flush, so the append lock is held for two round
        // trips and not for an fsync; `durable` is awaited before anyone is told (see module).
        client.batch_execute("BEGIN; SET LOCAL synchronous_commit = off"),
        client.execute(&lock, &lock_params),
        client.query_one(&head_stmt, &[]),
        client.query(&heads_stmt, &heads_params),
        client.query(&keys_stmt, &keys_params),
        client.query(&ids_stmt, &ids_params),
    )?;
    let start: i64 = head_row.get(0);
    let recorded_at = Utc::now().trunc_subsecs(6);
    let mut heads = decode_heads(&head_rows)?;
    let mut seen_keys: HashMap<String, (i64, i64)> = key_rows
        .iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2))))
        .collect();
    let seen_ids: HashMap<Uuid, i64> = id_rows.iter().map(|r| (r.get(0), r.get(1))).collect();

    let mut position = start;
    let mut plans = Vec::with_capacity(requests.len());
    for req in requests {
        plans.push(plan(
            req,
            &mut heads,
            &mut seen_keys,
            &seen_ids,
            &mut position,
            recorded_at,
        ));
    }

    let mut rows = Rows::default();
    let mut new_keys = RememberedKeys::default();
    for (req, p) in requests.iter().zip(&plans) {
        if let Plan::Write(events) = p {
            for e in events {
                push_row(&mut rows, e)?;
            }
            if let (Some(key), Some(first), Some(last)) =
                (&req.metadata.idempotency_key, events.first(), events.last())
            {
                new_keys.push(key, first.position, last.position, req.reply.as_ref());
            }
        }
    }
    if position > start {
        let insert = client.prepare_cached(INSERT_SQL).await?;
        let upsert = client.prepare_cached(UPSERT_HEADS_SQL).await?;
        let remember = client.prepare_cached(REMEMBER_KEYS_SQL).await?;
        let advance = client
            .prepare_cached("UPDATE log.head SET position = $1 WHERE id = 1")
            .await?;
        let notify = client.prepare_cached("SELECT pg_notify($1, $2)").await?;
        let payload: Vec<Json<&serde_json::Value>> = rows.payload.iter().map(Json).collect();
        let (c, k, s, v, h) = last_of_each_stream(&rows);
        let position_text = position.to_string();
        let insert_params: [&(dyn ToSql + Sync); 16] = [
            &rows.position,
            &rows.event_id,
            &rows.context,
            &rows.category,
            &rows.stream_key,
            &rows.version,
            &rows.event_type,
            &rows.schema_version,
            &payload,
            &rows.actor,
            &rows.correlation_id,
            &rows.causation_id,
            &rows.idempotency_key,
            &rows.recorded_at,
            &rows.prev_hash,
            &rows.hash,
        ];
        let upsert_params: [&(dyn ToSql + Sync); 5] = [&c, &k, &s, &v, &h];
        let remember_params: [&(dyn ToSql + Sync); 7] = [
            &new_keys.key,
            &new_keys.first,
            &new_keys.last,
            &new_keys.request_hash,
            &new_keys.status,
            &new_keys.content_type,
            &new_keys.body,
        ];
        let advance_params: [&(dyn ToSql + Sync); 1] = [&position];
        let notify_params: [&(dyn ToSql + Sync); 2] = [&LOG_CHANNEL, &position_text];
        tokio::try_join!(
            client.execute(&insert, &insert_params),
            client.execute(&upsert, &upsert_params),
            client.execute(&remember, &remember_params),
            client.execute(&advance, &advance_params),
            client.execute(&notify, &notify_params),
            // Pipelined with the writes. Should one of them fail, Postgres turns this COMMIT
            // into a rollback, and the failed write's error is what `try_join!` returns.
            client.batch_execute("COMMIT"),
        )?;
    } else {
        client.batch_execute("COMMIT").await?;
    }

    let mut outcomes = Vec::with_capacity(plans.len());
    for p in plans {
        outcomes.push(match p {
            Plan::Write(events) => Ok(Appended {
                events,
                last_position: position,
                replayed: false,
            }),
            Plan::Replay(first, last) => {
                let stmt = client.prepare_cached(&replay_sql()).await?;
                let rows = client.query(&stmt, &[&first, &last]).await?;
                Ok(Appended {
                    events: to_events(&rows)?,
                    last_position: position.max(last),
                    replayed: true,
                })
            }
            Plan::Refused(e) => Err(e),
        });
    }
    Ok((outcomes, position))
}

/// One index lookup per touched stream (a lateral subquery: a join would let the planner pick
/// a sequential scan of every stream once the plan is generic).
const HEADS_SQL: &str = "SELECT h.context, h.category, h.stream_key, h.version, h.last_hash \
     FROM unnest($1::text[], $2::text[], $3::text[]) AS w(c, k, s) \
     CROSS JOIN LATERAL (SELECT * FROM log.streams s \
     WHERE s.context = w.c AND s.category = w.k AND s.stream_key = w.s) h";
const KEYS_SQL: &str =
    "SELECT key, first_position, last_position FROM log.idempotency WHERE key = ANY($1)";
const IDS_SQL: &str = "SELECT event_id, position FROM log.events WHERE event_id = ANY($1)";
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
const REMEMBER_KEYS_SQL: &str = "INSERT INTO log.idempotency (key, first_position, last_position, \
     request_hash, reply_status, reply_content_type, reply_body) \
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bytea[], $5::int2[], \
     $6::text[], $7::bytea[])";

/// Column arrays for the idempotency rows of a batch: each key with its positions and, when the
/// command gave one, the answer to repeat.
#[derive(Default)]
struct RememberedKeys {
    key: Vec<String>,
    first: Vec<i64>,
    last: Vec<i64>,
    request_hash: Vec<Option<Vec<u8>>>,
    status: Vec<Option<i16>>,
    content_type: Vec<Option<String>>,
    body: Vec<Option<Vec<u8>>>,
}

impl RememberedKeys {
    fn push(&mut self, key: &str, first: i64, last: i64, reply: Option<&crate::StoredReply>) {
        self.key.push(key.to_owned());
        self.first.push(first);
        self.last.push(last);
        self.request_hash
            .push(reply.map(|r| r.request_hash.clone()));
        self.status
            .push(reply.and_then(|r| i16::try_from(r.status).ok()));
        self.content_type
            .push(reply.map(|r| r.content_type.clone()));
        self.body.push(reply.map(|r| r.body.clone()));
    }
}

/// Reads back a replayed command's events (they are immutable, so after the commit is fine).
fn replay_sql() -> String {
    format!("SELECT {COLUMNS} FROM log.events WHERE position BETWEEN $1 AND $2 ORDER BY position")
}

fn plan(
    req: &AppendRequest,
    heads: &mut HashMap<StreamName, Head>,
    seen_keys: &mut HashMap<String, (i64, i64)>,
    seen_ids: &HashMap<Uuid, i64>,
    position: &mut i64,
    recorded_at: DateTime<Utc>,
) -> Plan {
    if let Some(key) = &req.metadata.idempotency_key
        && let Some((first, last)) = seen_keys.get(key)
    {
        return Plan::Replay(*first, *last);
    }
    let ids: Vec<i64> = req
        .streams
        .iter()
        .flat_map(|s| &s.events)
        .filter_map(|e| seen_ids.get(&e.event_id).copied())
        .collect();
    if !ids.is_empty() {
        let (Some(first), Some(last)) = (ids.iter().min(), ids.iter().max()) else {
            return Plan::Refused(AppendError::Invalid("event ids".into()));
        };
        if ids.len() == req.event_count() && (last - first + 1) as usize == ids.len() {
            return Plan::Replay(*first, *last);
        }
        return Plan::Refused(AppendError::Invalid(
            "some of the command's event ids are already stored".into(),
        ));
    }
    for s in &req.streams {
        let actual = heads.get(&s.stream).map(|h| h.version).unwrap_or(0);
        if !s.expected.accepts(actual) {
            return Plan::Refused(AppendError::WrongExpectedVersion {
                stream: s.stream.clone(),
                expected: s.expected,
                actual,
            });
        }
    }
    let mut events = Vec::with_capacity(req.event_count());
    for s in &req.streams {
        let head = heads.entry(s.stream.clone()).or_insert(Head {
            version: 0,
            hash: None,
        });
        for e in &s.events {
            *position += 1;
            head.version += 1;
            let content = content_for_hash(
                e.event_id,
                &s.stream,
                head.version,
                &e.event_type,
                e.schema_version,
                &e.payload,
                &req.metadata,
                recorded_at,
            );
            let hash = chain_hash(head.hash.as_ref(), &content);
            events.push(RecordedEvent {
                event_id: e.event_id,
                stream: s.stream.clone(),
                version: head.version,
                position: *position,
                event_type: e.event_type.clone(),
                schema_version: e.schema_version,
                payload: e.payload.clone(),
                metadata: req.metadata.clone(),
                recorded_at,
                prev_hash: head.hash.map(hex::encode),
                hash: hex::encode(hash),
            });
            head.hash = Some(hash);
        }
    }
    if let (Some(key), Some(first), Some(last)) =
        (&req.metadata.idempotency_key, events.first(), events.last())
    {
        seen_keys.insert(key.clone(), (first.position, last.position));
    }
    Plan::Write(events)
}

fn stream_columns(requests: &[AppendRequest]) -> (Vec<&str>, Vec<&str>, Vec<&str>) {
    let (mut ctx, mut cat, mut key) = (Vec::new(), Vec::new(), Vec::new());
    for s in requests.iter().flat_map(|r| &r.streams) {
        ctx.push(s.stream.context.as_str());
        cat.push(s.stream.category.as_str());
        key.push(s.stream.key.as_str());
    }
    (ctx, cat, key)
}

fn decode_heads(rows: &[Row]) -> Result<HashMap<StreamName, Head>, AppendError> {
    let mut heads = HashMap::with_capacity(rows.len());
    for r in rows {
        let name = StreamName::new(
            r.get::<_, String>(0),
            r.get::<_, String>(1),
            r.get::<_, String>(2),
        )
        .map_err(|e| LogError::Corrupt(e.to_string()))?;
        let hash: Vec<u8> = r.get(4);
        let hash: [u8; 32] = hash
            .try_into()
            .map_err(|_| LogError::Corrupt(format!("stream {name} has a malformed head hash")))?;
        heads.insert(
            name,
            Head {
                version: r.get(3),
                hash: Some(hash),
            },
        );
    }
    Ok(heads)
}

fn push_row(rows: &mut Rows, e: &RecordedEvent) -> Result<(), AppendError> {
    let decode = |h: &str| hex::decode(h).map_err(|e| LogError::Corrupt(e.to_string()));
    rows.position.push(e.position);
    rows.event_id.push(e.event_id);
    rows.context.push(e.stream.context.clone());
    rows.category.push(e.stream.category.clone());
    rows.stream_key.push(e.stream.key.clone());
    rows.version.push(e.version);
    rows.event_type.push(e.event_type.clone());
    rows.schema_version.push(e.schema_version);
    rows.payload.push(e.payload.clone());
    rows.actor.push(e.metadata.actor.clone());
    rows.correlation_id.push(e.metadata.correlation_id);
    rows.causation_id.push(e.metadata.causation_id);
    rows.idempotency_key
        .push(e.metadata.idempotency_key.clone());
    rows.recorded_at.push(e.recorded_at);
    rows.prev_hash
        .push(e.prev_hash.as_deref().map(decode).transpose()?);
    rows.hash.push(decode(&e.hash)?);
    Ok(())
}

type HeadColumns<'a> = (
    Vec<&'a str>,
    Vec<&'a str>,
    Vec<&'a str>,
    Vec<i64>,
    Vec<&'a [u8]>,
);

/// Each touched stream's last version and hash (the last row of each stream wins).
fn last_of_each_stream(r: &Rows) -> HeadColumns<'_> {
    let mut last: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for i in 0..r.position.len() {
        last.insert(
            (
                r.context[i].as_str(),
                r.category[i].as_str(),
                r.stream_key[i].as_str(),
            ),
            i,
        );
    }
    let mut cols: HeadColumns<'_> = Default::default();
    for ((ctx, cat, key), i) in last {
        cols.0.push(ctx);
        cols.1.push(cat);
        cols.2.push(key);
        cols.3.push(r.version[i]);
        cols.4.push(r.hash[i].as_slice());
    }
    cols
}
