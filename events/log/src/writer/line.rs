//! The line: warm batches in one round trip, pipelined.
//!
//! **One round trip when warm.** The appender remembers the log's head position and the heads
//! of the streams it wrote ([`super::known`]). When every stream of a batch is remembered (or is
//! new to it and expected new or at any version), the batch is planned in memory before any
//! I/O — hashing and encoding happen outside the lock — and sent as one statement in
//! autocommit, `log.append_batch` (the lock, a guard that nobody else has appended since, the
//! writes, `NOTIFY`, the commit; [`super::transaction::call`]). The guard aborts the call if
//! another process wrote meanwhile; the batch is then planned again from heads read under the
//! lock (two round trips, [`super::alone`]). While Postgres writes one batch, the next may be
//! planned and queued behind it on the same connection, the line.
//!
//! A batch's round trip is a future the appender task polls itself, not a task of its own: the
//! answer wakes the appender directly, one task switch fewer for every batch.

use super::care::{mode_after, needs_care};
use super::durability::Commit;
use super::outcome::{replay, written};
use super::transaction::{LINE_STATEMENTS, call, one_round_trip};
use super::{Appender, Reply};
use crate::budget::Phase;
use crate::plan::{Plan, Rows, Seen};
use crate::{AppendError, AppendRequest, LogError};
use deadpool_postgres::Object;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

/// A batch's round trip on the line, polled by the appender task.
pub(super) type RoundTrip = Pin<Box<dyn Future<Output = Result<(), AppendError>> + Send>>;

/// A warm batch on the line.
pub(super) struct Sent {
    requests: Vec<AppendRequest>,
    replies: Vec<Reply>,
    plans: Vec<Plan>,
    position: i64,
    /// Durable once committed (see [`Commit::flushes`]).
    flushed: bool,
    /// The batch's round trip, settled oldest first.
    pub(super) io: RoundTrip,
}

impl Appender {
    /// Plans a warm batch from memory and queues it on the line; gives it back when it must be
    /// planned carefully instead (a refusal may hide a repeat) or the line cannot be had.
    pub(super) async fn send(
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
        let mut rows = match Rows::of(&requests, &plans, expected) {
            Ok(rows) if !needs_care(&plans) => rows,
            _ => {
                self.known.forget();
                return Some((requests, replies));
            }
        };
        self.sign(&mut rows);
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
        let one_call = self.one_call;
        let mut io: RoundTrip = Box::pin(async move {
            let sent = Instant::now();
            let guard = (expected, last_event);
            let result = match one_call {
                true => call(&line, &rows, guard, commit).await,
                false => one_round_trip(&line, &rows, guard, position, commit, &budget).await,
            };
            budget.add(Phase::Writes, sent.elapsed());
            result
        });
        // Polled once here, every statement of this batch is queued on the line before any of
        // the next batch's.
        if let std::task::Poll::Ready(result) = futures::poll!(&mut io) {
            io = Box::pin(std::future::ready(result));
        }
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
    pub(super) async fn settle_oldest(&mut self, done: Result<(), AppendError>) {
        let Some(sent) = self.in_flight.pop_front() else {
            return;
        };
        let failure = match done {
            Ok(()) => return self.settle_written(sent).await,
            Err(e) => (sent, e),
        };
        self.known.forget();
        self.line = None;
        let mut failed = vec![failure];
        while let Some(later) = self.in_flight.pop_front() {
            let result = later.io.await;
            let later = Sent {
                io: Box::pin(std::future::ready(Ok(()))),
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

    /// Settles a batch whose transaction committed: tells the process and the callers.
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
    pub(super) async fn drain(&mut self) {
        while let Some(oldest) = self.in_flight.front_mut() {
            let done = (&mut oldest.io).await;
            self.settle_oldest(done).await;
        }
    }
}
