//! Where a replication request's time goes, phase by phase.
//!
//! PouchDB's push costs `/docs` a `_revs_diff`, a `_bulk_docs` and a checkpoint per batch, and
//! issue #28 needs each of them budgeted: the routes lap a [`Phases`] clock at each phase's end
//! (the caller's check, parsing, loading the streams, deciding, the runner's append and
//! read-your-writes wait) into the histogram [`METRIC`], labelled by route and phase. The
//! replication and docs benches print its sums beside the log's own append timings, and an
//! operator reads the same figures from `/metrics`. A lap costs one histogram record.

use std::time::Instant;

/// The histogram: seconds per phase, labels `route` and `phase`.
pub const METRIC: &str = "palimpsest_docs_phase_seconds";

/// A clock over one request's phases: each [`Phases::lap`] records the time since the last lap
/// (or the start) as that phase's.
pub struct Phases {
    route: &'static str,
    since: Instant,
}

impl Phases {
    /// Starts the clock of a request to `route` (a label such as `_bulk_docs`).
    pub fn start(route: &'static str) -> Phases {
        Phases {
            route,
            since: Instant::now(),
        }
    }

    /// The route the clock times.
    pub fn route(&self) -> &'static str {
        self.route
    }

    /// Records the time since the last lap as `phase`'s, and starts the next phase.
    pub fn lap(&mut self, phase: &'static str) {
        let now = Instant::now();
        metrics::histogram!(METRIC, "route" => self.route, "phase" => phase)
            .record(now.duration_since(self.since).as_secs_f64());
        self.since = now;
    }

    /// Starts the next phase at `at` instead of the last lap (a phase that began inside a
    /// closure the clock did not follow, such as the runner's append after the decision).
    pub fn resume_at(&mut self, at: Instant) {
        self.since = at;
    }
}
