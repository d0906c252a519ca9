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
//! If the batch's transaction fails as a whole (say, an event id already stored under another
//! stream), each command is retried alone so that only the faulty one fails.

use crate::head::HeadWatch;
use crate::rows::{COLUMNS, to_events};
use crate::{APPEND_LOCK_KEY, AppendError, AppendRequest, Appended, LOG_CHANNEL, LogError};
use chrono::{DateTime, SubsecRound, Utc};
use deadpool_postgres::{Pool, Transaction};
use palimpsest_events::canonical::chain_hash;
use palimpsest_events::envelope::content_for_hash;
use palimpsest_events::{RecordedEvent, StreamName};
use std::collections::HashMap;
use tokio::sync::{mpsc, oneshot};
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

/// Starts the appender task.
pub(crate) fn spawn(pool: Pool, head: HeadWatch) -> WriterHandle {
    let (jobs, mut queue) = mpsc::channel::<(AppendRequest, Reply)>(4096);
    tokio::spawn(async move {
        while let Some(first) = queue.recv().await {
            let mut events = first.0.event_count();
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH_COMMANDS && events < MAX_BATCH_EVENTS {
                match queue.try_recv() {
                    Ok(job) => {
                        events += job.0.event_count();
                        batch.push(job);
                    }
                    Err(_) => break,
                }
            }
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
            for (reply, outcome) in replies.into_iter().zip(outcomes) {
                let _ = reply.send(outcome);
            }
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
                        outcomes.pop().unwrap_or(Err(AppendError::Log(LogError::WriterStopped)))
                    }
                    Err(e) => Err(e),
                };
                let _ = reply.send(outcome);
            }
        }
    }
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
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&APPEND_LOCK_KEY])
        .await?;
    let recorded_at = Utc::now().trunc_subsecs(6);
    let start: i64 = tx
        .query_one("SELECT position FROM log.head WHERE id = 1", &[])
        .await?
        .get(0);

    let mut heads = load_heads(&tx, requests).await?;
    let mut seen_keys = load_idempotency(&tx, requests).await?;
    let seen_ids = load_event_ids(&tx, requests).await?;

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
    let mut keys: (Vec<String>, Vec<i64>, Vec<i64>) = Default::default();
    for (req, p) in requests.iter().zip(&plans) {
        if let Plan::Write(events) = p {
            for e in events {
                push_row(&mut rows, e)?;
            }
            if let (Some(key), Some(first), Some(last)) = (
                &req.metadata.idempotency_key,
                events.first(),
                events.last(),
            ) {
                keys.0.push(key.clone());
                keys.1.push(first.position);
                keys.2.push(last.position);
            }
        }
    }
    if position > start {
        insert_events(&tx, &rows).await?;
        upsert_heads(&tx, &rows).await?;
        if !keys.0.is_empty() {
            tx.execute(
                "INSERT INTO log.idempotency (key, first_position, last_position) \
                 SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])",
                &[&keys.0, &keys.1, &keys.2],
            )
            .await?;
        }
        tx.execute("UPDATE log.head SET position = $1 WHERE id = 1", &[&position])
            .await?;
        tx.execute(
            "SELECT pg_notify($1, $2)",
            &[&LOG_CHANNEL, &position.to_string()],
        )
        .await?;
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
                let rows = tx
                    .query(
                        &format!(
                            "SELECT {COLUMNS} FROM log.events WHERE position BETWEEN $1 AND $2 \
                             ORDER BY position"
                        ),
                        &[&first, &last],
                    )
                    .await?;
                Ok(Appended {
                    events: to_events(&rows)?,
                    last_position: position.max(last),
                    replayed: true,
                })
            }
            Plan::Refused(e) => Err(e),
        });
    }
    tx.commit().await?;
    Ok((outcomes, position))
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

async fn load_heads(
    tx: &Transaction<'_>,
    requests: &[AppendRequest],
) -> Result<HashMap<StreamName, Head>, AppendError> {
    let (mut ctx, mut cat, mut key) = (Vec::new(), Vec::new(), Vec::new());
    for s in requests.iter().flat_map(|r| &r.streams) {
        ctx.push(s.stream.context.as_str());
        cat.push(s.stream.category.as_str());
        key.push(s.stream.key.as_str());
    }
    let rows = tx
        .query(
            "SELECT s.context, s.category, s.stream_key, s.version, s.last_hash \
             FROM log.streams s JOIN unnest($1::text[], $2::text[], $3::text[]) AS w(c, k, s) \
             ON s.context = w.c AND s.category = w.k AND s.stream_key = w.s",
            &[&ctx, &cat, &key],
        )
        .await?;
    let mut heads = HashMap::with_capacity(rows.len());
    for r in rows {
        let name = StreamName::new(r.get::<_, String>(0), r.get::<_, String>(1), r.get::<_, String>(2))
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

async fn load_idempotency(
    tx: &Transaction<'_>,
    requests: &[AppendRequest],
) -> Result<HashMap<String, (i64, i64)>, AppendError> {
    let keys: Vec<&str> = requests
        .iter()
        .filter_map(|r| r.metadata.idempotency_key.as_deref())
        .collect();
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = tx
        .query(
            "SELECT key, first_position, last_position FROM log.idempotency WHERE key = ANY($1)",
            &[&keys],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2))))
        .collect())
}

async fn load_event_ids(
    tx: &Transaction<'_>,
    requests: &[AppendRequest],
) -> Result<HashMap<Uuid, i64>, AppendError> {
    let ids: Vec<Uuid> = requests
        .iter()
        .flat_map(|r| r.streams.iter().flat_map(|s| s.events.iter().map(|e| e.event_id)))
        .collect();
    let rows = tx
        .query(
            "SELECT event_id, position FROM log.events WHERE event_id = ANY($1)",
            &[&ids],
        )
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
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
    rows.idempotency_key.push(e.metadata.idempotency_key.clone());
    rows.recorded_at.push(e.recorded_at);
    rows.prev_hash
        .push(e.prev_hash.as_deref().map(decode).transpose()?);
    rows.hash.push(decode(&e.hash)?);
    Ok(())
}

async fn insert_events(tx: &Transaction<'_>, r: &Rows) -> Result<(), AppendError> {
    let payload: Vec<tokio_postgres::types::Json<&serde_json::Value>> =
        r.payload.iter().map(tokio_postgres::types::Json).collect();
    tx.execute(
        "INSERT INTO log.events (position, event_id, context, category, stream_key, version, \
         event_type, schema_version, payload, actor, correlation_id, causation_id, \
         idempotency_key, recorded_at, prev_hash, hash) \
         SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[], $5::text[], \
         $6::bigint[], $7::text[], $8::int[], $9::json[], $10::text[], $11::uuid[], $12::uuid[], \
         $13::text[], $14::timestamptz[], $15::bytea[], $16::bytea[])",
        &[
            &r.position,
            &r.event_id,
            &r.context,
            &r.category,
            &r.stream_key,
            &r.version,
            &r.event_type,
            &r.schema_version,
            &payload,
            &r.actor,
            &r.correlation_id,
            &r.causation_id,
            &r.idempotency_key,
            &r.recorded_at,
            &r.prev_hash,
            &r.hash,
        ],
    )
    .await?;
    Ok(())
}

/// Writes each touched stream's last version and hash (the last row of each stream wins).
async fn upsert_heads(tx: &Transaction<'_>, r: &Rows) -> Result<(), AppendError> {
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
    let (mut c, mut k, mut s, mut v, mut h) = (vec![], vec![], vec![], vec![], vec![]);
    for ((ctx, cat, key), i) in last {
        c.push(ctx);
        k.push(cat);
        s.push(key);
        v.push(r.version[i]);
        h.push(r.hash[i].as_slice());
    }
    tx.execute(
        "INSERT INTO log.streams (context, category, stream_key, version, last_hash) \
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bytea[]) \
         ON CONFLICT (context, category, stream_key) \
         DO UPDATE SET version = excluded.version, last_hash = excluded.last_hash",
        &[&c, &k, &s, &v, &h],
    )
    .await?;
    Ok(())
}
