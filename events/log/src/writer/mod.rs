//! The group-commit appender.
//!
//! One task per process owns the write path. It takes every command waiting at the moment and
//! writes them in one transaction under the global append lock: each command is checked against
//! the stream heads (as moved by the commands before it in the batch), its events get gapless
//! positions and chained hashes, and one commit serves all. Each command keeps its own outcome:
//! a version conflict in one does not touch the others.
//!
//! The appender's concerns, one module each:
//!
//! - [`batch`]: the commands one transaction carries.
//! - [`line`]: a batch planned from what the appender remembers ([`known`]) goes out in one
//!   round trip, pipelined behind the batches in flight.
//! - [`alone`]: any other batch runs alone, from heads read under the lock, and carefully
//!   ([`care`]) when a repeat may hide in it; after a failure of the whole, command by command.
//! - [`transaction`]: what the append sends: one call of `log.append_batch` (migration 0007).
//! - [`outcome`]: what a committed batch tells this process and each command.
//! - [`durability`]: when callers are told: at their commit, or after a later flush.

mod alone;
mod batch;
mod care;
mod durability;
mod known;
mod line;
mod outcome;
mod transaction;

pub(crate) use durability::durable;

use crate::budget::Budget;
use crate::durable::DurableWatch;
use crate::head::HeadWatch;
use crate::plan::{Plan, Planner, Rows, Seen};
use crate::recent::RecentEvents;
use crate::store::AppendOptions;
use crate::tree::LogSigner;
use crate::{AppendError, AppendRequest, Appended, LogError};
use care::Mode;
use chrono::{SubsecRound, Utc};
use deadpool_postgres::{Object, Pool};
use durability::Commit;
use known::{Known, MAX_REMEMBERED_STREAMS};
use line::Sent;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, oneshot};

/// Where a command's outcome goes: to the caller waiting in [`WriterHandle::submit`].
type Reply = oneshot::Sender<Result<Appended, AppendError>>;
/// A queued command: the request, who waits for it, and when it was queued.
type Job = (AppendRequest, Reply, Instant);

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

/// Starts the appender task.
pub(crate) fn spawn(
    pool: Pool,
    head: HeadWatch,
    durable: DurableWatch,
    recent: RecentEvents,
    budget: Arc<Budget>,
    options: AppendOptions,
) -> WriterHandle {
    let (jobs, queue) = mpsc::channel::<Job>(4096);
    let appender = Appender {
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
        one_call: options.one_call,
        signer: options.signer,
    };
    tokio::spawn(appender.serve(queue));
    WriterHandle { jobs }
}

/// The appender task's state: the pool, what it tells this process (head, durability, recent
/// events), what it remembers of the log, and the line with the batches in flight on it.
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
    /// See [`AppendOptions::one_call`].
    one_call: bool,
    /// See [`AppendOptions::signer`].
    signer: Option<LogSigner>,
}

/// What woke the appender.
enum Wake {
    Done(Result<(), AppendError>),
    Job(Option<Job>),
}

impl Appender {
    /// The task: answers a sent batch as soon as it commits, or takes the next commands as one
    /// batch; when every handle is gone, settles the line and stops.
    async fn serve(mut self, mut queue: mpsc::Receiver<Job>) {
        let mut last_batch = 1usize;
        loop {
            let first = match self.in_flight.front_mut() {
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
                    self.settle_oldest(done).await;
                    continue;
                }
                Wake::Job(Some(job)) => job,
                Wake::Job(None) => return self.drain().await,
            };
            let (batch, events) = batch::gather(&mut queue, first, last_batch).await;
            last_batch = batch.len();
            let started = Instant::now();
            let waited = batch.iter().map(|j| started - j.2).sum();
            self.budget.batch(batch.len(), events, waited);
            // Nothing waits behind this batch: holding the lock across its fsync delays nobody.
            let commit = match self.flush_when_alone && queue.is_empty() {
                true => Commit::Flushed,
                false => Commit::Deferred,
            };
            self.take(batch, commit).await;
        }
    }

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

    /// Plans `requests` from `start` on the heads the appender knows, with the keys and ids
    /// `seen` before; gives each command's plan and the log's head after them.
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

    /// Signs `rows`' leaves with the log's key, if this store signs and the batch has events.
    fn sign(&self, rows: &mut Rows) {
        if let (Some(signer), Some(&first)) = (&self.signer, rows.position.first()) {
            rows.signature = Some(signer.sign_batch(first as u64, &rows.hash));
        }
    }
}
