//! A live batch whose lock was taken before the wait.
//!
//! A runner that has just applied a batch is likely to be woken again soon: a client that
//! writes and reads its writes wakes it at every write. Its next transaction then takes the
//! projection's lock and reads the checkpoint *before* it waits for the log to move, off the
//! path of the write that wakes it; once woken, it takes the events after that checkpoint from
//! this process's memory when this process appended them ([`RecentEvents`]), and from the log
//! otherwise. The round trip that took the lock and read the events leaves the write's path,
//! and the lock keeps the checkpoint where it was read until the batch commits.
//!
//! A runner holds the lock while it waits only [`HELD_WAIT`] after its last batch, and at most
//! that long: a rebuild's swap, a process starting up, or another process's runner of the same
//! read model waits no longer than that for it. A quiet runner waits without the lock, as
//! [`crate::runner`] does (the lock and the events in one round trip after the wake-up).
//!
//! [`RecentEvents`]: palimpsest_log::recent::RecentEvents

use crate::runner::{Committed, OPENING, checkpoint_locked, commit_and_record};
use crate::{Projection, ProjectionError, ReadDatabase};
use palimpsest_events::RecordedEvent;
use palimpsest_log::EventStore;
use std::time::Duration;

/// How long after its last batch a runner still takes its next batch's lock before the wait,
/// and the longest it holds it idle.
pub(crate) const HELD_WAIT: Duration = Duration::from_millis(100);

/// Takes the lock and reads the checkpoint, waits for `ready`, and applies the events after
/// that checkpoint (none: `None`, the transaction rolled back). `None` too when `ready` says
/// not to go on.
#[tracing::instrument(skip_all, fields(projection = projection.name()))]
pub(crate) async fn apply_when_ready(
    store: &EventStore,
    read: &ReadDatabase,
    projection: &dyn Projection,
    limit: i64,
    ready: impl std::future::Future<Output = bool>,
) -> Result<Option<Committed>, ProjectionError> {
    let name = projection.name();
    let mut client = read.pool().get().await?;
    let tx = client.transaction().await?;
    let checkpoint = checkpoint_locked(&tx, OPENING, name).await?;
    if !ready.await || store.head().current() <= checkpoint {
        return Ok(None);
    }
    let (events, appended_here) = events_after(store, checkpoint, limit).await?;
    commit_and_record(store, tx, projection, &events, appended_here).await
}

/// The events after `checkpoint`, up to about `limit`: from memory when this process appended
/// them (then `true`), else from the log.
async fn events_after(
    store: &EventStore,
    checkpoint: i64,
    limit: i64,
) -> Result<(Vec<RecordedEvent>, bool), ProjectionError> {
    let kept = store
        .recent()
        .after(checkpoint, usize::try_from(limit).unwrap_or(1));
    Ok(match kept {
        Some(slices) => {
            let events = slices.iter().flat_map(|s| s.iter().cloned()).collect();
            (events, true)
        }
        None => (store.read_all(checkpoint, limit).await?, false),
    })
}
