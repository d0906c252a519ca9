//! When a batch must run carefully.
//!
//! Idempotency keys and event ids are not looked up before a warm batch: their unique indexes
//! refuse a repeat, and the batch then runs again carefully, with the keys and ids read under the
//! lock, so a repeat returns its first result. A refusal planned without them may hide a repeat
//! too. A batch whose guard failed (another process appended) needs fresh heads, not care.

use crate::plan::Plan;
use crate::{AppendError, AppendRequest, LogError};
use tokio_postgres::error::SqlState;
use uuid::Uuid;

/// A refusal planned without the keys and ids read may hide a repeat (a retried command whose
/// first run moved the stream): such a batch is planned again, carefully.
pub(super) fn needs_care(plans: &[Plan]) -> bool {
    plans.iter().any(|p| matches!(p, Plan::Refused(_)))
}

/// How a batch is run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Mode {
    /// Stream heads read under the lock first (two round trips).
    Read,
    /// Heads, idempotency keys and event ids read under the lock first: repeats are found.
    Careful,
}

/// The idempotency keys and event ids of a batch, looked up under the lock when it runs
/// carefully.
pub(super) fn keys_and_ids(requests: &[AppendRequest]) -> (Vec<&str>, Vec<Uuid>) {
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
pub(super) fn mode_after(e: &AppendError) -> Mode {
    match db_state(e) {
        Some(s) if *s == SqlState::T_R_SERIALIZATION_FAILURE => Mode::Read,
        _ => Mode::Careful,
    }
}

/// The Postgres error code behind `e`, when it is one.
fn db_state(e: &AppendError) -> Option<&SqlState> {
    match e {
        AppendError::Log(LogError::Db(e)) => e.code(),
        _ => None,
    }
}
