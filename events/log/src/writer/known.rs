//! What the appender remembers of the log between batches.
//!
//! Remembering the log's head position and the heads of the streams it wrote lets the appender
//! plan a batch in memory, before any I/O, and send it in one round trip ([`super::line`]). The
//! memory is only a guess: each such batch carries a guard that aborts it if anyone else has
//! appended meanwhile, and the appender forgets everything after any failure.

use crate::AppendRequest;
use crate::plan::{Head, Rows};
use palimpsest_events::{ExpectedVersion, StreamName};
use std::collections::HashMap;
use uuid::Uuid;

/// Most stream heads remembered; past it they are forgotten (and read again when needed).
pub(super) const MAX_REMEMBERED_STREAMS: usize = 65_536;

/// What the appender remembers of the log between batches: the head position after its last
/// commit and the heads of streams it read or wrote. Valid only while nobody else appends,
/// which the guard of each warm batch checks.
#[derive(Default)]
pub(super) struct Known {
    /// The log's head position after the last batch this appender planned, when known.
    pub(super) position: Option<i64>,
    /// The id of the event at `position`, when this appender wrote it.
    pub(super) last_event: Option<Uuid>,
    /// The heads of the streams this appender read or wrote.
    pub(super) heads: HashMap<StreamName, Head>,
}

impl Known {
    /// Trusts nothing remembered: after any failure, or when another writer moved the log.
    pub(super) fn forget(&mut self) {
        self.position = None;
        self.last_event = None;
        self.heads.clear();
    }

    /// Moves the log's end past a batch planned (or written) by this appender.
    pub(super) fn advance(&mut self, position: i64, rows: &Rows) {
        if let Some(id) = rows.event_id.last() {
            self.last_event = Some(*id);
        }
        self.position = Some(position);
    }

    /// Whether a batch can be planned from memory: the position is known and every stream is
    /// remembered, or is unknown here and, if it exists after all, the insert of its version 1
    /// will collide with the stored one (so it has events, and any version is acceptable or none).
    pub(super) fn covers(&self, requests: &[AppendRequest]) -> bool {
        self.position.is_some()
            && requests.iter().flat_map(|r| &r.streams).all(|s| {
                self.heads.contains_key(&s.stream)
                    || (!s.events.is_empty()
                        && matches!(s.expected, ExpectedVersion::Any | ExpectedVersion::NoStream))
            })
    }
}
