//! The event store: connecting, appending through the group-commit writer, reading.

use crate::budget::{Budget, BudgetSnapshot};
use crate::durable::DurableWatch;
use crate::recent::RecentEvents;
use crate::rows::{COLUMNS, to_events};
use crate::tree::LogSigner;
use crate::writer::{self, WriterHandle};
use crate::{AppendError, AppendRequest, Appended, Limits, LogError, head::HeadWatch, migrations};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use palimpsest_events::{RecordedEvent, StreamName};
use std::sync::Arc;
use tokio_postgres::NoTls;
use uuid::Uuid;

/// How the appender runs.
#[derive(Clone)]
pub struct AppendOptions {
    /// Most batches sent on the append line before the oldest has committed (1: one at a time).
    pub pipeline_depth: usize,
    /// Whether a batch with nothing queued behind it commits synchronously and is answered when
    /// its `COMMIT` returns (one round trip), instead of committing asynchronously and waiting
    /// for a separate durability commit (two). Either way an answered append is durable.
    pub flush_when_alone: bool,
    /// The log's key, which signs every batch the appender commits (decision 0024); `None`
    /// only for a store that appends what no tree maker will check (tests of the log alone).
    pub signer: Option<LogSigner>,
    /// Whether a batch is written by one call of `log.append_batch` (migration 0007), warm
    /// batches in autocommit: one statement and one round trip (decision 0025). Off, the nine
    /// statements it replaced are sent instead, in a transaction of their own: kept so the
    /// bench can put the two side by side in one run.
    pub one_call: bool,
}

impl Default for AppendOptions {
    fn default() -> Self {
        // Measured on the 2-core box (`just bench`, "option" lines): pipelining made batches
        // smaller, and per-transaction costs outweighed the hidden round trips; a lone batch
        // committed synchronously saves the durability round trip of a single writer.
        AppendOptions {
            pipeline_depth: 1,
            flush_when_alone: true,
            signer: None,
            one_call: true,
        }
    }
}

/// The log of every context: cheap to clone, shared by handlers, the relay and projectors.
#[derive(Clone)]
pub struct EventStore {
    inner: Arc<Inner>,
    limits: Limits,
}

struct Inner {
    pool: Pool,
    log_id: Uuid,
    writer: WriterHandle,
    head: HeadWatch,
    durable: DurableWatch,
    recent: RecentEvents,
    budget: Arc<Budget>,
}

/// Builds a connection pool for `database_url` with the log's session settings: a transaction
/// left idle is ended after a minute so it can never hold readers of the log back for long.
///
/// The pool hands out the connection returned last (LIFO), not the one idle longest: a
/// projector's batch, a durability commit or a read then runs on a backend whose caches are
/// warm, instead of going round every backend of the pool in turn. Measured with the records
/// bench (64 clients, `insertDoc`): 5,561–5,687 documents/s against 4,777–5,376/s in FIFO order,
/// 240–254 µs of machine CPU a write against 255–288.
pub fn pool(database_url: &str, max_size: usize) -> Result<Pool, LogError> {
    let mut config: tokio_postgres::Config = database_url
        .parse()
        .map_err(|e: tokio_postgres::Error| LogError::Config(e.to_string()))?;
    config.options("-c idle_in_transaction_session_timeout=60000");
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(max_size)
        .queue_mode(deadpool_postgres::QueueMode::Lifo)
        .build()
        .map_err(|e| LogError::Config(e.to_string()))
}

/// Creates the database `database_url` names if it does not exist yet (so `palimpsest run`
/// works on a fresh server), connecting to the server's `postgres` database to do it.
pub async fn create_database_if_missing(database_url: &str) -> Result<(), LogError> {
    let config: tokio_postgres::Config = database_url
        .parse()
        .map_err(|e: tokio_postgres::Error| LogError::Config(e.to_string()))?;
    let Some(name) = config.get_dbname().map(str::to_owned) else {
        return Ok(());
    };
    if config.connect(NoTls).await.is_ok() {
        return Ok(());
    }
    let mut admin = config.clone();
    admin.dbname("postgres");
    let (client, connection) = admin.connect(NoTls).await?;
    tokio::spawn(connection);
    let exists = client
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
        .await?
        .is_some();
    if !exists {
        let quoted = format!("\"{}\"", name.replace('"', "\"\""));
        client
            .batch_execute(&format!("CREATE DATABASE {quoted}"))
            .await?;
        tracing::info!(database = %name, "created database");
    }
    Ok(())
}

impl EventStore {
    /// Connects, runs the log's migrations and starts the appender task.
    pub async fn connect(database_url: &str) -> Result<EventStore, LogError> {
        let pool = pool(database_url, 16)?;
        Self::with_pool(database_url, pool).await
    }

    /// Like [`EventStore::connect`], signing every batch with `signer`: what every process of
    /// the server uses, so the tree maker accepts what it appends.
    pub async fn connect_signed(
        database_url: &str,
        signer: LogSigner,
    ) -> Result<EventStore, LogError> {
        let pool = pool(database_url, 16)?;
        let options = AppendOptions {
            signer: Some(signer),
            ..AppendOptions::default()
        };
        Self::with_options(database_url, pool, options).await
    }

    /// Like [`EventStore::connect`] with a pool the caller built (its size, its settings).
    pub async fn with_pool(database_url: &str, pool: Pool) -> Result<EventStore, LogError> {
        Self::with_options(database_url, pool, AppendOptions::default()).await
    }

    /// Like [`EventStore::with_pool`], with the appender tuned (the bench compares settings).
    pub async fn with_options(
        database_url: &str,
        pool: Pool,
        options: AppendOptions,
    ) -> Result<EventStore, LogError> {
        migrations::migrate(&pool).await?;
        let log_id = pool
            .get()
            .await?
            .query_one("SELECT log_id FROM log.identity", &[])
            .await?
            .get(0);
        let head = HeadWatch::start(database_url, pool.clone()).await?;
        let budget = Arc::new(Budget::default());
        let durable = DurableWatch::new();
        let recent = RecentEvents::default();
        let writer = writer::spawn(
            pool.clone(),
            head.clone(),
            durable.clone(),
            recent.clone(),
            budget.clone(),
            options,
        );
        Ok(EventStore {
            inner: Arc::new(Inner {
                pool,
                log_id,
                writer,
                head,
                durable,
                recent,
                budget,
            }),
            limits: Limits::default(),
        })
    }

    /// The same store, refusing appends over `limits` instead of the defaults.
    pub fn with_limits(mut self, limits: Limits) -> EventStore {
        self.limits = limits;
        self
    }

    /// The log's identity, made once when its database was set up: the relay refuses to publish
    /// into a JetStream stream that carries another log's events.
    pub fn log_id(&self) -> Uuid {
        self.inner.log_id
    }

    /// The sizes this store accepts.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The pool the store reads and writes through.
    pub fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// The appender's cumulative phase timings: subtract two snapshots to see where the
    /// appends between them spent their time.
    pub fn budget(&self) -> BudgetSnapshot {
        self.inner.budget.snapshot()
    }

    /// Follows the log's head position: wakes the relay and projectors when events commit.
    pub fn head(&self) -> &HeadWatch {
        &self.inner.head
    }

    /// Appends a command's events to all its streams in one transaction, or nothing.
    #[tracing::instrument(skip_all, fields(streams = req.streams.len(), events = req.event_count()))]
    pub async fn append(&self, mut req: AppendRequest) -> Result<Appended, AppendError> {
        if let Err(e) = req.validate(&self.limits) {
            metrics::counter!("palimpsest_appends_refused_total").increment(1);
            return Err(e);
        }
        let started = std::time::Instant::now();
        let result = self.inner.writer.submit(req).await;
        metrics::histogram!("palimpsest_append_seconds").record(started.elapsed().as_secs_f64());
        match &result {
            Ok(a) if !a.replayed => {
                metrics::counter!("palimpsest_events_appended_total")
                    .increment(a.events.len() as u64);
            }
            Ok(_) => metrics::counter!("palimpsest_appends_replayed_total").increment(1),
            Err(AppendError::WrongExpectedVersion { .. }) => {
                metrics::counter!("palimpsest_append_conflicts_total").increment(1)
            }
            Err(_) => metrics::counter!("palimpsest_append_errors_total").increment(1),
        }
        result
    }

    /// The events of one stream with a version above `after_version`, oldest first. Like every
    /// read here, its statement is prepared once per connection: a query sent as text is
    /// prepared anew each time, a round trip of its own before the one that runs it.
    pub async fn read_stream(
        &self,
        stream: &StreamName,
        after_version: i64,
        limit: i64,
    ) -> Result<Vec<RecordedEvent>, LogError> {
        let client = self.inner.pool.get().await?;
        let read = client
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM log.events WHERE context = $1 AND category = $2 \
                 AND stream_key = $3 AND version > $4 ORDER BY version LIMIT $5"
            ))
            .await?;
        let rows = client
            .query(
                &read,
                &[
                    &stream.context,
                    &stream.category,
                    &stream.key,
                    &after_version,
                    &limit,
                ],
            )
            .await?;
        to_events(&rows)
    }

    /// The events of several streams in one query: for each `(stream, after_version)`, at most
    /// `limit` of its events above that version, in version order; streams follow each other in
    /// the order asked. A command that reads a hundred streams (a `_bulk_docs` batch) pays one
    /// round trip instead of a hundred. Each stream is an index probe of its own (`LATERAL`),
    /// never an `= ANY` whose generic plan may scan the log.
    pub async fn read_streams(
        &self,
        streams: &[(StreamName, i64)],
        limit: i64,
    ) -> Result<Vec<RecordedEvent>, LogError> {
        if streams.is_empty() {
            return Ok(Vec::new());
        }
        let contexts: Vec<&str> = streams.iter().map(|(s, _)| s.context.as_str()).collect();
        let categories: Vec<&str> = streams.iter().map(|(s, _)| s.category.as_str()).collect();
        let keys: Vec<&str> = streams.iter().map(|(s, _)| s.key.as_str()).collect();
        let after: Vec<i64> = streams.iter().map(|(_, v)| *v).collect();
        let client = self.inner.pool.get().await?;
        let read = client
            .prepare_cached(&format!(
                "SELECT e.* FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) \
                   WITH ORDINALITY AS s(context, category, stream_key, after_version, n) \
                 CROSS JOIN LATERAL ( \
                   SELECT {COLUMNS} FROM log.events WHERE context = s.context \
                   AND category = s.category AND stream_key = s.stream_key \
                   AND version > s.after_version ORDER BY version LIMIT $5) e \
                 ORDER BY s.n, e.version"
            ))
            .await?;
        let rows = client
            .query(&read, &[&contexts, &categories, &keys, &after, &limit])
            .await?;
        to_events(&rows)
    }

    /// The version of a stream's last event; 0 when it has none.
    pub async fn stream_version(&self, stream: &StreamName) -> Result<i64, LogError> {
        let client = self.inner.pool.get().await?;
        let read = client
            .prepare_cached(
                "SELECT version FROM log.streams WHERE context = $1 AND category = $2 \
                 AND stream_key = $3",
            )
            .await?;
        let row = client
            .query_opt(&read, &[&stream.context, &stream.category, &stream.key])
            .await?;
        Ok(row.map(|r| r.get(0)).unwrap_or(0))
    }

    /// Events with a global position above `after_position`, in position order. Positions are
    /// gapless and commit in order, so reading on from the last position seen never skips one.
    pub async fn read_all(
        &self,
        after_position: i64,
        limit: i64,
    ) -> Result<Vec<RecordedEvent>, LogError> {
        let client = self.inner.pool.get().await?;
        read_all_with(&client, after_position, limit).await
    }

    /// Waits until every event committed so far is on disk; call it before showing events
    /// outside the database (the relay does, before publishing).
    pub async fn wait_durable(&self) -> Result<(), LogError> {
        // Every position the head shows has committed, so the flush below takes it.
        let committed = self.inner.head.current();
        crate::writer::durable(&self.inner.pool).await?;
        self.inner.durable.advance(committed);
        Ok(())
    }

    /// The events this process appended last, for its readers to take instead of reading
    /// them back (see [`crate::recent`]).
    pub fn recent(&self) -> &RecentEvents {
        &self.inner.recent
    }

    /// The position this process knows is on disk (see [`crate::durable`]).
    pub fn durable(&self) -> &DurableWatch {
        &self.inner.durable
    }

    /// The answer stored with the command appended under idempotency key `key`, if any; the
    /// outer `None` means no command was appended under the key.
    pub async fn command_reply(
        &self,
        key: &str,
    ) -> Result<Option<Option<crate::StoredReply>>, LogError> {
        Ok(self.kept_command(key).await?.map(|kept| kept.reply))
    }

    /// The command appended under idempotency key `key`, if any: its stored answer and the last
    /// position it wrote, which a repeat of the command must let its client read.
    pub async fn kept_command(&self, key: &str) -> Result<Option<KeptCommand>, LogError> {
        let client = self.inner.pool.get().await?;
        let read = client
            .prepare_cached(
                "SELECT request_hash, reply_status, reply_content_type, reply_body, last_position \
                 FROM log.idempotency WHERE key = $1",
            )
            .await?;
        let row = client.query_opt(&read, &[&key]).await?;
        Ok(row.map(|r| {
            let status: Option<i16> = r.get(1);
            let reply = match (r.get(0), status, r.get(2), r.get(3)) {
                (Some(request_hash), Some(status), Some(content_type), Some(body)) => {
                    Some(crate::StoredReply {
                        request_hash,
                        status: u16::try_from(status).unwrap_or(500),
                        content_type,
                        body,
                    })
                }
                _ => None,
            };
            KeptCommand {
                reply,
                last_position: r.get(4),
            }
        }))
    }

    /// The highest committed global position (0 for an empty log).
    pub async fn head_position(&self) -> Result<i64, LogError> {
        let client = self.inner.pool.get().await?;
        let row = client
            .query_one("SELECT position FROM log.head WHERE id = 1", &[])
            .await?;
        Ok(row.get(0))
    }
}

/// [`EventStore::read_all`] on a connection or transaction the caller holds, so a projector can
/// read and write in one transaction.
pub async fn read_all_with(
    client: &impl deadpool_postgres::GenericClient,
    after_position: i64,
    limit: i64,
) -> Result<Vec<RecordedEvent>, LogError> {
    let read = client
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM log.events WHERE position > $1 ORDER BY position LIMIT $2"
        ))
        .await?;
    let rows = client.query(&read, &[&after_position, &limit]).await?;
    to_events(&rows)
}

/// A command appended under an idempotency key, as the log keeps it ([`EventStore::kept_command`]).
#[derive(Debug, Clone)]
pub struct KeptCommand {
    /// Its first answer; `None` for an append made without one (an import's, say).
    pub reply: Option<crate::StoredReply>,
    /// The last position it appended (0 when it appended no event, only its answer).
    pub last_position: i64,
}
