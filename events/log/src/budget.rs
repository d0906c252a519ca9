//! Where an append's time goes: cumulative timings of the appender's phases.
//!
//! The appender adds to these counters as it works (a few relaxed atomic additions per batch),
//! so an operator or the bench can take two snapshots and divide the difference by the batches
//! or commands in between: the time budget of an append.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A phase of a batch, in the order it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for a pooled connection.
    Pool,
    /// `BEGIN` answered → the append lock granted (another process's batch holds it).
    LockWait,
    /// First round trip: `BEGIN`, lock, heads, keys and ids read (lock wait included).
    Reads,
    /// In-process CPU: version checks, canonical JSON, sha256 chains, building the rows.
    Plan,
    /// Second round trip: the writes and `COMMIT` (the append lock is held until it returns).
    Writes,
    /// The synchronous commit after the batch that makes it durable (off the lock).
    Durable,
}

const PHASES: usize = 6;

/// The counters; one per process, shared by the appender and whoever reads them.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    batches: AtomicU64,
    commands: AtomicU64,
    events: AtomicU64,
    queue_wait_ns: AtomicU64,
    phases_ns: [AtomicU64; PHASES],
}

impl Budget {
    /// Counts one batch of `commands` commands and `events` events, and the summed time its
    /// commands waited in the queue before the batch started.
    pub(crate) fn batch(&self, commands: usize, events: usize, queue_wait: Duration) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.commands.fetch_add(commands as u64, Ordering::Relaxed);
        self.events.fetch_add(events as u64, Ordering::Relaxed);
        self.queue_wait_ns
            .fetch_add(queue_wait.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Adds the time one batch spent in `phase`.
    pub(crate) fn add(&self, phase: Phase, spent: Duration) {
        self.phases_ns[phase as usize].fetch_add(spent.as_nanos() as u64, Ordering::Relaxed);
    }

    /// The totals so far.
    pub(crate) fn snapshot(&self) -> BudgetSnapshot {
        let ns = |a: &AtomicU64| Duration::from_nanos(a.load(Ordering::Relaxed));
        BudgetSnapshot {
            batches: self.batches.load(Ordering::Relaxed),
            commands: self.commands.load(Ordering::Relaxed),
            events: self.events.load(Ordering::Relaxed),
            queue_wait: ns(&self.queue_wait_ns),
            phases: std::array::from_fn(|i| ns(&self.phases_ns[i])),
        }
    }
}

/// Cumulative appender timings since the process started; subtract two to budget an interval.
#[derive(Debug, Clone, Copy, Default)]
pub struct BudgetSnapshot {
    /// Transactions the appender ran.
    pub batches: u64,
    /// Commands they carried.
    pub commands: u64,
    /// Events they carried.
    pub events: u64,
    /// Summed over commands: from `append` to the start of the command's batch.
    pub queue_wait: Duration,
    phases: [Duration; PHASES],
}

impl BudgetSnapshot {
    /// Total time batches spent in `phase`.
    pub fn phase(&self, phase: Phase) -> Duration {
        self.phases[phase as usize]
    }

    /// What happened between `earlier` and this snapshot.
    pub fn since(&self, earlier: &BudgetSnapshot) -> BudgetSnapshot {
        BudgetSnapshot {
            batches: self.batches - earlier.batches,
            commands: self.commands - earlier.commands,
            events: self.events - earlier.events,
            queue_wait: self.queue_wait.saturating_sub(earlier.queue_wait),
            phases: std::array::from_fn(|i| self.phases[i].saturating_sub(earlier.phases[i])),
        }
    }
}
