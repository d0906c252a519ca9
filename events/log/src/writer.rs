//! The group-commit appender.
//!
//! One task per process owns the write path. It takes every command waiting at the moment and
//! writes them in one transaction under the global append lock: each command is checked against
//! the stream heads (as moved by the commands before it in the batch), its events get gapless
//! positions and chained hashes, and one commit serves all. Each command keeps its own outcome:
//! a version conflict in one does not touch the others.
//!
//! **One round trip when warm.** The appender remembers the log's head position and the heads
//! of the streams it wrote. When every stream of a batch is remembered (or is new to it and
//! expected new or at any version), the batch is planned in memory before any I/O — hashing and
//! encoding happen outside the lock — and sent as one pipeline: `BEGIN`, the lock, a guard
//! (`log.expect_head`: nobody else has appended since), the writes, `COMMIT`. The guard aborts
//! the transaction if another process wrote meanwhile; the batch is then planned again from
//! heads read under the lock (two round trips). Idempotency keys and event ids are not looked up
//! first: their unique indexes refuse a repeat, and the batch is then re-run carefully, with the
//! keys and ids read under the lock, so a repeat returns its first result.
//!
//! **Durability off the lock when busy.** A batch with commands queued behind it commits with
//! `synchronous_commit = off`, so the lock is not held across an fsync while they wait; its
//! callers are answered only after a later synchronous commit has been flushed ([`durable`]),
//! and concurrent waits share fsyncs. A batch with nothing queued behind it commits
//! synchronously instead and is answered when its `COMMIT` returns: one round trip, not two
//! ([`Commit`]). After a crash only events nobody was told about can be missing.
//!
//! If the batch's transaction fails as a whole for another reason, each command is retried
//! alone, carefully, so that only the faulty one fails.

use crate::budget::{Budget, Phase};
use crate::durable::DurableWatch;
use crate::head::HeadWatch;
use crate::plan::{Head, Plan, Planner, Rows, Seen, decode_heads, stream_columns};
use crate::recent::RecentEvents;
use crate::rows::{COLUMNS, to_events};
use crate::store::AppendOptions;
use crate::{APPEND_LOCK_KEY, AppendError, AppendRequest, Appended, LOG_CHANNEL, LogError};
use chrono::{SubsecRound, Utc};
use deadpool_postgres::{Client, Object, Pool};
use palimpsest_events::{ExpectedVersion, StreamName};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

/// Most commands one transaction carries.
const MAX_BATCH_COMMANDS: usize = 512;
/// Most events one transaction carries (a single larger command still goes alone).
const MAX_BATCH_EVENTS: usize = 8192;
/// Most stream heads remembered; past it they are forgotten (and read again when needed).
const MAX_REMEMBERED_STREAMS: usize = 65_536;

type Reply = oneshot::Sender<Result<Appended, AppendError>>;
/// A queued command: the request, who waits for it, and when it was queued.
type Job = (AppendRequest, Reply, Instant);
/// Each command's outcome, and the log's head after the batch.
type Outcomes = (Vec<Result<Appended, AppendError>>, i64);

/// The sending side of the appender task.
#[derive(Clone)]
pub(crate) struct WriterHandle {
    jobs: mpsc::Sender<Job>,
}

impl WriterHandle {
    /// Queues a command for the next batch and waits for its outcome.
    pub(crate) async fn submit(&self, req: AppendRequest) -> Result<Appended, AppendError> {
        let (reply, outcome) = oneshot::channel();
        self.jobs
            .send((req, reply, Instant::now()))
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
pub(crate) fn spawn(
    pool: Pool,
    head: HeadWatch,
    durable: DurableWatch,
    recent: RecentEvents,
    budget: Arc<Budget>,
    options: AppendOptions,
) -> WriterHandle {
    let (jobs, mut queue) = mpsc::channel::<Job>(4096);
    let mut appender = Appender {
        pool,
        head,
        durable,
        recent,
        budget,
        known: Known::default(),
        line: None,
        in_flight: VecDeque::new(),
        depth: options.pipeline_depth.max(1),
        flush_when_alone: options.flush_when_alone,
    };
    tokio::spawn(async move {
        let mut last_batch = 1usize;
        loop {
            let first = match appender.in_flight.front_mut() {
                // Answer a sent batch as soon as it commits, or take the next commands.
                Some(oldest) => tokio::select! {
                    biased;
                    done = &mut oldest.io => Wake::Done(done),
                    job = queue.recv() => Wake::Job(job),
                },
                None => Wake::Job(queue.recv().await),
            };
            let first = match first {
                Wake::Done(done) => {
                    appender.settle_oldest(done).await;
                    continue;
                }
                Wake::Job(Some(job)) => job,
                Wake::Job(None) => return appender.drain().await,
            };
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
            let started = Instant::now();
            let waited = batch.iter().map(|j| started - j.2).sum();
            appender.budget.batch(batch.len(), events, waited);
            // Nothing waits behind this batch: holding the lock across its fsync delays nobody.
            let commit = match appender.flush_when_alone && queue.is_empty() {
                true => Commit::Flushed,
                false => Commit::Deferred,
            };
            appender.take(batch, commit).await;
        }
    });
    WriterHandle { jobs }
}

/// Waits until everything committed so far is on disk: a transaction that wrote WAL commits
/// synchronously, and its WAL flush covers every commit record written before it. Concurrent
/// callers share fsyncs through Postgres' own group commit.
///
/// The transaction must write WAL itself: Postgres commits a transaction that has an xid but
/// wrote nothing *asynchronously* (`RecordTransactionCommit` flushes only when
/// `XactLastRecEnd` was set before the commit record), so `SELECT pg_current_xact_id()` alone
/// flushes nothing, and an immediate stop lost acknowledged appends (found by `just chaos`,
/// postgres-stop). A transactional logical message is a WAL record with no table and no lock;
/// it works at every `wal_level` and is executable by every role.
pub(crate) async fn durable(pool: &Pool) -> Result<(), LogError> {
    let client = pool.get().await?;
    client.batch_execute(DURABLE_SQL).await?;
    Ok(())
}

/// One synchronous commit that writes WAL (see [`durable`]), synchronous whatever the
/// server's default.
const DURABLE_SQL: &str = "BEGIN; SET LOCAL synchronous_commit = on; \
     SELECT pg_logical_emit_message(true, 'palimpsest.durable', ''); COMMIT";

/// How a batch's transaction commits, and so what its callers wait for before they are told.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Commit {
    /// `synchronous_commit = off`: the lock is not held across an fsync, and the callers wait
    /// for a later [`durable`] commit (shared with concurrent batches). For a busy appender.
    Deferred,
    /// Synchronously: the commit's own WAL flush makes the batch — and every commit record
    /// before it — durable, so its callers are answered without the separate durability round
    /// trip. Taken when nothing is queued behind the batch, so the fsync under the lock delays
    /// no other command of this process.
    Flushed,
}

impl Commit {
    /// What starts the batch's transaction: the commit mode is set explicitly either way, so
    /// the server's default cannot make a `Flushed` batch asynchronous.
    fn begin_sql(self) -> &'static str {
        match self {
            Commit::Deferred => BEGIN_SQL,
            Commit::Flushed => BEGIN_FLUSHED_SQL,
        }
    }

    /// Whether a batch that commits `rows` this way is durable when its `COMMIT` returns. A
    /// transaction that wrote nothing (every command refused, or repeats of earlier commands
    /// whose own flush may still be pending) writes no WAL, so Postgres commits it without a
    /// flush: its callers wait for [`durable`] like those of a deferred batch.
    fn flushes(self, rows: &Rows) -> bool {
        self == Commit::Flushed && !(rows.position.is_empty() && rows.keys.key.is_empty())
    }
}

/// What the appender remembers of the log between batches: the head position after its last
/// commit and the heads of streams it read or wrote. Valid only while nobody else appends,
/// which the guard of each warm batch checks.
#[derive(Default)]
struct Known {
    position: Option<i64>,
    /// The id of the event at `position`, when this appender wrote it.
    last_event: Option<Uuid>,
    heads: HashMap<StreamName, Head>,
}

impl Known {
    fn forget(&mut self) {
        self.position = None;
        self.last_event = None;
        self.heads.clear();
    }

    /// Moves the log's end past a batch planned (or written) by this appender.
    fn advance(&mut self, position: i64, rows: &Rows) {
        if let Some(id) = rows.event_id.last() {
            self.last_event = Some(*id);
        }
        self.position = Some(position);
    }

    /// Whether a batch can be planned from memory: the position is known and every stream is
    /// remembered, or is unknown here and, if it exists after all, the insert of its version 1
    /// will collide with the stored one (so it has events, and any version is acceptable or none).
    fn covers(&self, requests: &[AppendRequest]) -> bool {
        self.position.is_some()
            && requests.iter().flat_map(|r| &r.streams).all(|s| {
                self.heads.contains_key(&s.stream)
                    || (!s.events.is_empty()
                        && matches!(s.expected, ExpectedVersion::Any | ExpectedVersion::NoStream))
            })
    }
}

/// A refusal planned without the keys and ids read may hide a repeat (a retried command whose
/// first run moved the stream): such a batch is planned again, carefully.
fn needs_care(plans: &[Plan]) -> bool {
    plans.iter().any(|p| matches!(p, Plan::Refused(_)))
}

/// How a batch is run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// Stream heads read under the lock first (two round trips).
    Read,
    /// Heads, idempotency keys and event ids read under the lock first: repeats are found.
    Careful,
}

struct Appender {
    pool: Pool,
    head: HeadWatch,
    /// What this process knows is on disk: moved when a batch's own commit flushed it, or when
    /// the durability commit its callers wait for returns.
    durable: DurableWatch,
    /// Where each batch's new events go for this process's readers ([`crate::recent`]).
    recent: RecentEvents,
    budget: Arc<Budget>,
    known: Known,
    /// The connection warm batches are pipelined on, in order, with their statements prepared.
    line: Option<Arc<Object>>,
    /// Warm batches sent and not yet settled, oldest first.
    in_flight: VecDeque<Sent>,
    /// Most batches in flight (see [`AppendOptions::pipeline_depth`]).
    depth: usize,
    /// See [`AppendOptions::flush_when_alone`].
    flush_when_alone: bool,
}

/// A warm batch on the line.
struct Sent {
    requests: Vec<AppendRequest>,
    replies: Vec<Reply>,
    plans: Vec<Plan>,
    position: i64,
    /// Durable once committed (see [`Commit::flushes`]).
    flushed: bool,
    io: JoinHandle<Result<(), AppendError>>,
}

/// What woke the appender.
enum Wake {
    Done(Result<Result<(), AppendError>, tokio::task::JoinError>),
    Job(Option<Job>),
}

impl Appender {
    /// Runs or sends a batch: warm ones go on the line behind those in flight; others wait for
    /// the line to settle and run alone.
    #[tracing::instrument(skip_all, fields(commands = batch.len(), ?commit))]
    async fn take(&mut self, batch: Vec<Job>, commit: Commit) {
        let (requests, replies): (Vec<_>, Vec<_>) = batch.into_iter().map(|j| (j.0, j.1)).unzip();
        metrics::histogram!("palimpsest_append_batch_commands").record(requests.len() as f64);
        if self.known.heads.len() > MAX_REMEMBERED_STREAMS {
            self.drain().await;
            self.known.heads.clear();
        }
        // A batch behind others on the line would hold the lock across its fsync while they
        // wait for nothing: only a batch with nothing in flight commits flushed.
        let commit = match self.in_flight.is_empty() {
            true => commit,
            false => Commit::Deferred,
        };
        if !self.known.covers(&requests) {
            self.drain().await;
            return self.run(requests, replies, Mode::Read, commit).await;
        }
        if let Some((requests, replies)) = self.send(requests, replies, commit).await {
            self.drain().await;
            return self.run(requests, replies, Mode::Careful, commit).await;
        }
        // While Postgres writes one batch, the next is planned, encoded and queued behind it,
        // so the backend goes from one batch to the next without waiting for this process.
        while self.in_flight.len() >= self.depth {
            let Some(oldest) = self.in_flight.front_mut() else {
                break;
            };
            let done = (&mut oldest.io).await;
            self.settle_oldest(done).await;
        }
    }

    /// Plans a warm batch from memory and queues it on the line; gives it back when it must be
    /// planned carefully instead (a refusal may hide a repeat) or the line cannot be had.
    async fn send(
        &mut self,
        requests: Vec<AppendRequest>,
        replies: Vec<Reply>,
        commit: Commit,
    ) -> Option<(Vec<AppendRequest>, Vec<Reply>)> {
        let Some(expected) = self.known.position else {
            return Some((requests, replies));
        };
        let last_event = self.known.last_event;
        let planning = Instant::now();
        let (plans, position) = self.plan(&requests, expected, Seen::default());
        let rows = match Rows::of(&requests, &plans, expected) {
            Ok(rows) if !needs_care(&plans) => rows,
            _ => {
                self.known.forget();
                return Some((requests, replies));
            }
        };
        self.budget.add(Phase::Plan, planning.elapsed());
        let line = match self.line().await {
            Ok(line) => line,
            Err(e) => {
                tracing::warn!(error = %e, "no connection for the append line");
                self.known.forget();
                return Some((requests, replies));
            }
        };
        self.known.advance(position, &rows);
        let flushed = commit.flushes(&rows);
        let budget = self.budget.clone();
        let mut io = Box::pin(async move {
            let sent = Instant::now();
            let guard = (expected, last_event);
            let result = one_round_trip(&line, &rows, guard, position, commit, &budget).await;
            budget.add(Phase::Writes, sent.elapsed());
            result
        });
        // Polled once here, every statement of this batch is queued on the line before any of
        // the next batch's.
        let io = match futures::poll!(&mut io) {
            std::task::Poll::Ready(result) => tokio::spawn(async move { result }),
            std::task::Poll::Pending => tokio::spawn(io),
        };
        self.in_flight.push_back(Sent {
            requests,
            replies,
            plans,
            position,
            flushed,
            io,
        });
        None
    }

    /// The line's connection, taken from the pool and its statements prepared (so that sending
    /// a batch never waits halfway).
    async fn line(&mut self) -> Result<Arc<Object>, AppendError> {
        if let Some(line) = &self.line {
            return Ok(line.clone());
        }
        let client = self.pool.get().await?;
        for sql in LINE_STATEMENTS {
            client.prepare_cached(sql).await?;
        }
        let line = Arc::new(client);
        self.line = Some(line.clone());
        Ok(line)
    }

    /// Settles the oldest batch on the line, whose outcome is `done`. After a failure, every
    /// later batch was planned on it: they are settled first (their guard fails them), then the
    /// failed ones run again from the database.
    async fn settle_oldest(
        &mut self,
        done: Result<Result<(), AppendError>, tokio::task::JoinError>,
    ) {
        let Some(sent) = self.in_flight.pop_front() else {
            return;
        };
        let result =
            done.unwrap_or_else(|e| Err(AppendError::Log(LogError::Corrupt(e.to_string()))));
        let failure = match result {
            Ok(()) => return self.settle_written(sent).await,
            Err(e) => (sent, e),
        };
        self.known.forget();
        self.line = None;
        let mut failed = vec![failure];
        while let Some(later) = self.in_flight.pop_front() {
            let result = match later.io.await {
                Ok(result) => result,
                Err(e) => Err(AppendError::Log(LogError::Corrupt(e.to_string()))),
            };
            let later = Sent {
                io: tokio::spawn(async { Ok(()) }),
                ..later
            };
            match result {
                Ok(()) => self.settle_written(later).await,
                Err(e) => failed.push((later, e)),
            }
        }
        for (sent, e) in failed {
            tracing::debug!(error = %e, "batch on the line failed; planning it again");
            let mode = mode_after(&e);
            self.run(sent.requests, sent.replies, mode, Commit::Deferred)
                .await;
        }
    }

    async fn settle_written(&mut self, sent: Sent) {
        let repeats = sent.plans.iter().any(|p| matches!(p, Plan::Replay(..)));
        let outcome = match repeats {
            // A key repeated within the batch: its events are read back.
            true => match self.pool.get().await {
                Ok(client) => replay(&client, (sent.plans, sent.position)).await,
                Err(e) => Err(e.into()),
            },
            false => Ok(written(sent.plans, sent.position)),
        };
        match outcome {
            Ok((outcomes, last)) => {
                self.committed(&sent.requests, &outcomes, last);
                self.answer(sent.replies, outcomes, sent.flushed, last);
            }
            Err(e) => {
                self.head.advance(sent.position);
                let message = e.to_string();
                for reply in sent.replies {
                    let _ =
                        reply.send(Err(AppendError::Log(LogError::NotDurable(message.clone()))));
                }
            }
        }
    }

    /// Settles every batch on the line.
    async fn drain(&mut self) {
        while let Some(oldest) = self.in_flight.front_mut() {
            let done = (&mut oldest.io).await;
            self.settle_oldest(done).await;
        }
    }

    /// Runs a batch alone, from heads read under the lock, more carefully after each failure.
    async fn run(
        &mut self,
        requests: Vec<AppendRequest>,
        replies: Vec<Reply>,
        mut mode: Mode,
        commit: Commit,
    ) {
        loop {
            match self.commit(&requests, mode, commit).await {
                Ok(None) => mode = Mode::Careful,
                Ok(Some(((outcomes, last), flushed))) => {
                    self.committed(&requests, &outcomes, last);
                    self.answer(replies, outcomes, flushed, last);
                    return;
                }
                Err(e) if mode != Mode::Careful => {
                    mode = mode_after(&e);
                    tracing::debug!(error = %e, ?mode, "batch re-planned");
                }
                Err(e) if requests.len() == 1 => {
                    let _ = replies.into_iter().next().map(|r| r.send(Err(e)));
                    return;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "batch failed as a whole; retrying its commands one by one");
                    return self.one_by_one(requests, replies).await;
                }
            }
        }
    }

    /// Makes a committed batch known in this process: its new events to the readers that keep
    /// up with it, then the head, which wakes them.
    fn committed(
        &self,
        requests: &[AppendRequest],
        outcomes: &[Result<Appended, AppendError>],
        last: i64,
    ) {
        let new = requests
            .iter()
            .zip(outcomes)
            .filter_map(|(req, o)| match o {
                Ok(appended) if !appended.replayed => {
                    Some((appended.events.clone(), req.measured_bytes))
                }
                _ => None,
            });
        self.recent.record(new);
        self.head.advance(last);
    }

    /// Answers a batch's callers: at once when its own commit flushed it, otherwise when
    /// durable.
    fn answer(
        &self,
        replies: Vec<Reply>,
        outcomes: Vec<Result<Appended, AppendError>>,
        flushed: bool,
        last: i64,
    ) {
        if !flushed {
            return self.answer_when_durable(replies, outcomes);
        }
        self.durable.advance(last);
        for (reply, outcome) in replies.into_iter().zip(outcomes) {
            let _ = reply.send(outcome);
        }
    }

    /// Durability is awaited off the write path: the next batch may take the lock meanwhile.
    fn answer_when_durable(
        &self,
        replies: Vec<Reply>,
        outcomes: Vec<Result<Appended, AppendError>>,
    ) {
        let (pool, budget) = (self.pool.clone(), self.budget.clone());
        let (head, on_disk) = (self.head.clone(), self.durable.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            // Every position the head shows has committed (this batch's among them), so the
            // durability commit takes it to disk.
            let committed = head.current();
            let flushed = durable(&pool).await;
            budget.add(Phase::Durable, started.elapsed());
            if flushed.is_ok() {
                on_disk.advance(committed);
            }
            for (reply, outcome) in replies.into_iter().zip(outcomes) {
                let outcome = match &flushed {
                    Ok(()) => outcome,
                    Err(e) => Err(AppendError::Log(LogError::NotDurable(e.to_string()))),
                };
                let _ = reply.send(outcome);
            }
        });
    }

    async fn one_by_one(&mut self, requests: Vec<AppendRequest>, replies: Vec<Reply>) {
        for (req, reply) in requests.into_iter().zip(replies) {
            let alone = std::slice::from_ref(&req);
            let outcome = match self.commit(alone, Mode::Careful, Commit::Deferred).await {
                Ok(None) => Err(AppendError::Log(LogError::WriterStopped)),
                Ok(Some(((mut outcomes, last), _))) => {
                    self.committed(alone, &outcomes, last);
                    match durable(&self.pool).await {
                        Ok(()) => {
                            self.durable.advance(last);
                            outcomes
                                .pop()
                                .unwrap_or(Err(AppendError::Log(LogError::WriterStopped)))
                        }
                        Err(e) => Err(AppendError::Log(LogError::NotDurable(e.to_string()))),
                    }
                }
                Err(e) => Err(e),
            };
            let _ = reply.send(outcome);
        }
    }

    /// Runs a batch in `mode`; `None` when it must be planned again carefully (nothing written).
    /// With the outcomes, whether the batch was durable when it committed.
    async fn commit(
        &mut self,
        requests: &[AppendRequest],
        mode: Mode,
        commit: Commit,
    ) -> Result<Option<(Outcomes, bool)>, AppendError> {
        let started = Instant::now();
        let client = self.pool.get().await?;
        self.budget.add(Phase::Pool, started.elapsed());
        let result = self
            .commit_read(&client, requests, mode == Mode::Careful, commit)
            .await;
        let result = match result {
            Ok(Some((plans, flushed))) => replay(&client, plans)
                .await
                .map(|outcomes| Some((outcomes, flushed))),
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        };
        if !matches!(result, Ok(Some(_))) {
            // Whatever failed, leave no transaction open on a pooled connection, and trust
            // nothing remembered: the batch may have moved heads in memory that never committed.
            self.known.forget();
            let _ = client.batch_execute("ROLLBACK").await;
        }
        result
    }

    /// Two round trips: heads (and, carefully, keys and event ids) read under the lock, then
    /// planned, written and committed.
    async fn commit_read(
        &mut self,
        client: &Client,
        requests: &[AppendRequest],
        careful: bool,
        commit: Commit,
    ) -> Result<Option<((Vec<Plan>, i64), bool)>, AppendError> {
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
        self.budget.add(Phase::Reads, sent.elapsed());
        self.budget
            .add(Phase::LockWait, locked.1.saturating_duration_since(begun.1));
        let planning = Instant::now();
        let start: i64 = head_row.get(0);
        if self.known.position != Some(start) {
            self.known.forget();
            self.known.position = Some(start);
        }
        for (name, head) in decode_heads(&head_rows)? {
            self.known.heads.insert(name, head);
        }
        for s in requests.iter().flat_map(|r| &r.streams) {
            // Read under the lock and absent: the stream has no event.
            self.known
                .heads
                .entry(s.stream.clone())
                .or_insert(Head::EMPTY);
        }
        let seen = Seen {
            keys: key_rows
                .iter()
                .map(|r| (r.get(0), (r.get(1), r.get(2))))
                .collect(),
            ids: id_rows.iter().map(|r| (r.get(0), r.get(1))).collect(),
        };
        let (plans, position) = self.plan(requests, start, seen);
        if !careful && needs_care(&plans) {
            return Ok(None);
        }
        let rows = Rows::of(requests, &plans, start)?;
        self.budget.add(Phase::Plan, planning.elapsed());
        let sent = Instant::now();
        write(client, &rows, position).await?;
        self.budget.add(Phase::Writes, sent.elapsed());
        self.known.advance(position, &rows);
        Ok(Some(((plans, position), commit.flushes(&rows))))
    }

    fn plan(&mut self, requests: &[AppendRequest], start: i64, seen: Seen) -> (Vec<Plan>, i64) {
        let mut planner = Planner {
            heads: &mut self.known.heads,
            seen,
            position: start,
            recorded_at: Utc::now().trunc_subsecs(6),
        };
        let plans = requests.iter().map(|r| planner.plan(r)).collect();
        (plans, planner.position)
    }
}

/// The batch's writes, pipelined with `COMMIT`. Should one of them fail, Postgres turns the
/// `COMMIT` into a rollback, and the failed write's error is what this returns.
async fn write(client: &Client, rows: &Rows, position: i64) -> Result<(), AppendError> {
    let remember = client.prepare_cached(REMEMBER_KEYS_SQL).await?;
    let keys = &rows.keys;
    let remember_params: [&(dyn ToSql + Sync); 7] = [
        &keys.key,
        &keys.first,
        &keys.last,
        &keys.request_hash,
        &keys.status,
        &keys.content_type,
        &keys.body,
    ];
    if rows.position.is_empty() {
        // No event: at most answers stored alone under their keys (pipelined with `COMMIT`,
        // which a failed insert turns into a rollback, as below).
        if keys.key.is_empty() {
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
    let (c, k, s, v, h) = rows.last_of_each_stream();
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
        &rows.payload,
        &rows.actor,
        &rows.correlation_id,
        &rows.causation_id,
        &rows.idempotency_key,
        &rows.recorded_at,
        &rows.prev_hash,
        &rows.hash,
    ];
    let upsert_params: [&(dyn ToSql + Sync); 5] = [&c, &k, &s, &v, &h];
    let advance_params: [&(dyn ToSql + Sync); 1] = [&position];
    let notify_params: [&(dyn ToSql + Sync); 2] = [&LOG_CHANNEL, &position_text];
    tokio::try_join!(
        client.execute(&insert, &insert_params),
        client.execute(&upsert, &upsert_params),
        client.execute(&remember, &remember_params),
        client.execute(&advance, &advance_params),
        client.execute(&notify, &notify_params),
        client.batch_execute("COMMIT"),
    )?;
    Ok(())
}

/// Each command's outcome when none is a repeat.
fn written(plans: Vec<Plan>, position: i64) -> Outcomes {
    let outcomes = plans
        .into_iter()
        .map(|p| match p {
            Plan::Write(events) => Ok(Appended {
                events: events.into(),
                last_position: position,
                replayed: false,
            }),
            Plan::Refused(e) => Err(e),
            Plan::Replay(..) => Err(AppendError::Log(LogError::WriterStopped)),
        })
        .collect();
    (outcomes, position)
}

/// Each command's outcome; a repeat's events are read back (immutable, so after the commit).
async fn replay(
    client: &Client,
    (plans, position): (Vec<Plan>, i64),
) -> Result<Outcomes, AppendError> {
    let mut outcomes = Vec::with_capacity(plans.len());
    for p in plans {
        outcomes.push(match p {
            Plan::Write(events) => Ok(Appended {
                events: events.into(),
                last_position: position,
                replayed: false,
            }),
            Plan::Replay(first, last) => {
                let stmt = client.prepare_cached(&replay_sql()).await?;
                let rows = client.query(&stmt, &[&first, &last]).await?;
                Ok(Appended {
                    events: to_events(&rows)?.into(),
                    last_position: position.max(last),
                    replayed: true,
                })
            }
            Plan::Refused(e) => Err(e),
        });
    }
    Ok((outcomes, position))
}

fn keys_and_ids(requests: &[AppendRequest]) -> (Vec<&str>, Vec<Uuid>) {
    let keys = requests
        .iter()
        .filter_map(|r| r.metadata.idempotency_key.as_deref())
        .collect();
    let ids = requests
        .iter()
        .flat_map(|r| {
            r.streams
                .iter()
                .flat_map(|s| s.events.iter().map(|e| e.event_id))
        })
        .collect();
    (keys, ids)
}

/// How to run a batch again after `e`: another writer moved the log (the guard) needs fresh
/// heads; anything else, such as a key or an event id seen before (a unique index), needs care.
fn mode_after(e: &AppendError) -> Mode {
    match db_state(e) {
        Some(s) if *s == SqlState::T_R_SERIALIZATION_FAILURE => Mode::Read,
        _ => Mode::Careful,
    }
}

/// A warm batch in one round trip: `BEGIN`, the lock, the guard, the writes, `COMMIT`.
async fn one_round_trip(
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

fn db_state(e: &AppendError) -> Option<&SqlState> {
    match e {
        AppendError::Log(LogError::Db(e)) => e.code(),
        _ => None,
    }
}

/// Awaits `f` and notes when it finished (pipelined statements answer one after another).
async fn timed<T, E>(f: impl Future<Output = Result<T, E>>) -> Result<(T, Instant), E> {
    let value = f.await?;
    Ok((value, Instant::now()))
}

/// Commit without waiting for the WAL flush, so the append lock is held for the batch's round
/// trips and not for an fsync; `durable` is awaited before anyone is told (see the module).
const BEGIN_SQL: &str = "BEGIN; SET LOCAL synchronous_commit = off";
/// A batch with nothing queued behind it commits synchronously (see [`Commit::Flushed`]).
const BEGIN_FLUSHED_SQL: &str = "BEGIN; SET LOCAL synchronous_commit = on";
const LOCK_SQL: &str = "SELECT pg_advisory_xact_lock($1)";
const GUARD_SQL: &str = "SELECT log.expect_head($1, $2)";
const NOTIFY_SQL: &str = "SELECT pg_notify($1, $2)";
/// What a warm batch sends, prepared on the line before its first batch.
const LINE_STATEMENTS: [&str; 7] = [
    LOCK_SQL,
    GUARD_SQL,
    INSERT_SQL,
    UPSERT_HEADS_SQL,
    REMEMBER_KEYS_SQL,
    ADVANCE_SQL,
    NOTIFY_SQL,
];
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

/// Reads back a replayed command's events (they are immutable, so after the commit is fine).
fn replay_sql() -> String {
    format!("SELECT {COLUMNS} FROM log.events WHERE position BETWEEN $1 AND $2 ORDER BY position")
}
