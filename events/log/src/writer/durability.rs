//! Durability: when a batch's callers are told.
//!
//! **Durability off the lock when busy.** A batch with commands queued behind it commits with
//! `synchronous_commit = off`, so the lock is not held across an fsync while they wait; its
//! callers are answered only after a later synchronous commit has been flushed ([`durable`]),
//! and concurrent waits share fsyncs. A batch with nothing queued behind it commits
//! synchronously instead and is answered when its `COMMIT` returns: one round trip, not two
//! ([`Commit`]). After a crash only events nobody was told about can be missing.

use super::transaction::{BEGIN_FLUSHED_SQL, BEGIN_SQL};
use super::{Appender, Reply};
use crate::budget::Phase;
use crate::plan::Rows;
use crate::{AppendError, Appended, LogError};
use deadpool_postgres::Pool;
use std::time::Instant;

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
pub(super) enum Commit {
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
    pub(super) fn begin_sql(self) -> &'static str {
        match self {
            Commit::Deferred => BEGIN_SQL,
            Commit::Flushed => BEGIN_FLUSHED_SQL,
        }
    }

    /// Whether a batch that commits `rows` this way is durable when its `COMMIT` returns. A
    /// transaction that wrote nothing (every command refused, or repeats of earlier commands
    /// whose own flush may still be pending) writes no WAL, so Postgres commits it without a
    /// flush: its callers wait for [`durable`] like those of a deferred batch.
    pub(super) fn flushes(self, rows: &Rows) -> bool {
        self == Commit::Flushed && !(rows.position.is_empty() && rows.keys.key.is_empty())
    }
}

impl Appender {
    /// Answers a batch's callers: at once when its own commit flushed it, otherwise when
    /// durable.
    pub(super) fn answer(
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
}
