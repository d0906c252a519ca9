//! Batches run alone, from the database.
//!
//! A batch the appender cannot plan from memory, or whose warm run failed, waits for the line to
//! settle and runs alone: its heads (and, carefully, its keys and event ids) are read under the
//! lock, then it is planned, and written and committed by the same call a warm batch sends
//! (two round trips). If its transaction fails
//! as a whole, each command is retried alone, carefully, so that only the faulty one fails.

use super::care::{Mode, mode_after, needs_care};
use super::durability::{Commit, durable};
use super::outcome::{Outcomes, replay};
use super::transaction::{begin_and_read, call_and_commit, write};
use super::{Appender, Reply};
use crate::budget::Phase;
use crate::plan::{Head, Plan, Rows, Seen, decode_heads};
use crate::{AppendError, AppendRequest, LogError};
use deadpool_postgres::Client;
use std::time::Instant;

impl Appender {
    /// Runs a batch alone, from heads read under the lock, more carefully after each failure.
    pub(super) async fn run(
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

    /// Runs each command of a batch that failed as a whole alone, carefully, so that only the
    /// faulty one fails.
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
        let read = begin_and_read(client, requests, careful, commit, &self.budget).await?;
        let planning = Instant::now();
        let start: i64 = read.head.get(0);
        if self.known.position != Some(start) {
            self.known.forget();
            self.known.position = Some(start);
        }
        for (name, head) in decode_heads(&read.heads)? {
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
            keys: read
                .keys
                .iter()
                .map(|r| (r.get(0), (r.get(1), r.get(2))))
                .collect(),
            ids: read.ids.iter().map(|r| (r.get(0), r.get(1))).collect(),
        };
        let (plans, position) = self.plan(requests, start, seen);
        if !careful && needs_care(&plans) {
            return Ok(None);
        }
        let mut rows = Rows::of(requests, &plans, start)?;
        self.sign(&mut rows);
        self.budget.add(Phase::Plan, planning.elapsed());
        let sent = Instant::now();
        match self.one_call {
            true => call_and_commit(client, &rows, start, commit).await?,
            false => write(client, &rows, position).await?,
        }
        self.budget.add(Phase::Writes, sent.elapsed());
        self.known.advance(position, &rows);
        Ok(Some(((plans, position), commit.flushes(&rows))))
    }
}
