//! Other contexts' events, passed over by a live runner without a transaction.
//!
//! A write of one context appends events every runner hears of; a read model of another context
//! ([`Projection::context`](crate::Projection::context)) would only take its lock, read them,
//! move its checkpoint and commit: three or four round trips and a WAL record that change none
//! of its rows, on the same two cores the write waits on. Instead, when this process's log
//! still holds the events after the runner's position ([`RecentEvents`]) and none of them is the
//! read model's, the runner notes how far it has passed and tells this process's waiters (its
//! rows are those of every position up to there). The checkpoint is committed past them later:
//! with the next batch of its own events, or, in a quiet moment, by an ordinary batch once the
//! oldest passed-over event has waited [`COMMIT_AFTER`] or [`COMMIT_AT`] events have been
//! passed. Until then a restart reads them again (and ignores them again), and another process
//! waiting on this checkpoint for one of them waits that much longer; no read model row is ever
//! behind the events of its own context.
//!
//! [`RecentEvents`]: palimpsest_log::recent::RecentEvents

use crate::ProjectionWatch;
use palimpsest_log::EventStore;
use std::time::{Duration, Instant};

/// How long a passed-over event waits, at most, before the checkpoint is committed past it.
pub(crate) const COMMIT_AFTER: Duration = Duration::from_millis(100);

/// How many passed-over events make the checkpoint be committed past them at once.
pub(crate) const COMMIT_AT: i64 = 1_000;

/// What a live runner of a one-context read model has passed over beyond its committed
/// checkpoint, and what it needs to pass over more.
pub(crate) struct PassedOver {
    /// The read model's name.
    name: &'static str,
    /// Its context; `None`: it passes over nothing.
    context: Option<&'static str>,
    store: EventStore,
    /// This process's waiters, told how far the read model stands.
    watch: Option<ProjectionWatch>,
    marks: Marks,
}

impl PassedOver {
    /// Nothing passed over yet by the runner of read model `name` (of `context`, if one).
    pub(crate) fn new(
        name: &'static str,
        context: Option<&'static str>,
        store: EventStore,
        watch: Option<ProjectionWatch>,
    ) -> PassedOver {
        PassedOver {
            name,
            context,
            store,
            watch,
            marks: Marks::default(),
        }
    }

    /// Passes over the events after where the runner stands (past `committed`, the checkpoint
    /// it last left) when this process's log holds them in memory and none is the read
    /// model's. Whether the runner may go on waiting: it passed over them all, or an earlier
    /// pass already covered them. Never once the checkpoint is due to be committed.
    pub(crate) fn pass(&mut self, committed: Option<i64>) -> bool {
        let Some(context) = self.context else {
            return false;
        };
        let Some(from) = self.marks.position(committed) else {
            return false;
        };
        if self.marks.commit_due(committed) {
            return false;
        }
        if self.store.head().current() <= from {
            return self.marks.to.is_some();
        }
        let Some(to) = foreign_run(&self.store, context, from) else {
            return false;
        };
        self.marks.passed(to);
        if let Some(watch) = &self.watch {
            watch.applied(self.name, to);
        }
        let lag = (self.store.head().current() - to).max(0) as f64;
        metrics::gauge!("palimpsest_projection_lag_events", "projection" => self.name).set(lag);
        metrics::counter!("palimpsest_projection_passed_over_total", "projection" => self.name)
            .increment(1);
        true
    }

    /// Forgets what a batch committed at `position` covers.
    pub(crate) fn committed(&mut self, position: Option<i64>) {
        self.marks.committed(position);
    }

    /// How long an idle runner may wait for the log to move before it commits what it passed
    /// over (`idle`: how long it waits otherwise).
    pub(crate) fn idle_wait(&self, idle: Duration) -> Duration {
        self.marks.idle_wait(idle)
    }
}

/// The last position of the run of events after `from` that this process's log holds in
/// memory, when none of them belongs to `context`; `None` when one does, when there are none,
/// or when they must be read from the log.
fn foreign_run(store: &EventStore, context: &str, from: i64) -> Option<i64> {
    let slices = store.recent().after(from, crate::runner::BATCH as usize)?;
    let mut last = None;
    for event in slices.iter().flat_map(|slice| slice.iter()) {
        if event.stream.context == context {
            return None;
        }
        last = Some(event.position);
    }
    last
}

/// How far past its committed checkpoint a runner has passed over events, and since when.
#[derive(Debug, Default)]
struct Marks {
    /// The last position passed over, when beyond the checkpoint.
    to: Option<i64>,
    /// When the first event not yet under a committed checkpoint was passed over.
    since: Option<Instant>,
}

impl Marks {
    /// The position the runner stands at: past the checkpoint `committed` it last left, when
    /// it has passed over events beyond it; `None` before its first batch.
    fn position(&self, committed: Option<i64>) -> Option<i64> {
        let committed = committed?;
        Some(self.to.map_or(committed, |to| to.max(committed)))
    }

    /// Notes that the events up to `to` were passed over.
    fn passed(&mut self, to: i64) {
        self.to = Some(to);
        self.since.get_or_insert_with(Instant::now);
    }

    /// Forgets what a batch committed at `position` covers.
    fn committed(&mut self, position: Option<i64>) {
        if position.is_some_and(|p| self.to.is_none_or(|to| to <= p)) {
            *self = Marks::default();
        }
    }

    /// Whether the checkpoint `committed` should now be committed past the events passed over.
    fn commit_due(&self, committed: Option<i64>) -> bool {
        let Some(to) = self.to else {
            return false;
        };
        self.since.is_some_and(|t| t.elapsed() >= COMMIT_AFTER)
            || committed.is_none_or(|c| to - c >= COMMIT_AT)
    }

    /// How long an idle runner may wait before it commits what it passed over.
    fn idle_wait(&self, idle: Duration) -> Duration {
        match self.since {
            Some(t) => COMMIT_AFTER.saturating_sub(t.elapsed()).min(idle),
            None => idle,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: Duration = Duration::from_secs(1);

    #[test]
    fn nothing_passed_over_stands_at_the_checkpoint_and_commits_nothing_early() {
        let marks = Marks::default();
        assert_eq!(marks.position(Some(7)), Some(7));
        assert_eq!(marks.position(None), None, "no pass before a first batch");
        assert!(!marks.commit_due(Some(7)));
        assert_eq!(marks.idle_wait(IDLE), IDLE);
    }

    #[test]
    fn passing_over_moves_the_position_until_a_batch_commits_past_it() {
        let mut marks = Marks::default();
        marks.passed(12);
        assert_eq!(marks.position(Some(7)), Some(12));
        assert!(!marks.commit_due(Some(7)));
        assert!(marks.idle_wait(IDLE) <= COMMIT_AFTER);
        marks.committed(Some(9));
        assert_eq!(
            marks.position(Some(9)),
            Some(12),
            "the batch stopped short of it"
        );
        marks.committed(None);
        assert_eq!(marks.position(Some(9)), Some(12));
        marks.committed(Some(12));
        assert_eq!(marks.position(Some(12)), Some(12));
        assert!(!marks.commit_due(Some(12)));
        assert_eq!(marks.idle_wait(IDLE), IDLE);
    }

    #[test]
    fn many_events_or_an_old_one_make_the_commit_due() {
        let mut marks = Marks::default();
        marks.passed(7 + COMMIT_AT);
        assert!(marks.commit_due(Some(7)));
        let old = Marks {
            to: Some(8),
            since: Instant::now().checked_sub(COMMIT_AFTER),
        };
        assert!(old.commit_due(Some(7)));
        assert_eq!(old.idle_wait(IDLE), Duration::ZERO);
    }
}
