//! Batching: the commands one transaction carries.
//!
//! The appender takes every command waiting at the moment it wakes, up to a bound, and when
//! fewer are queued than its last batch carried it lingers a little for the rest: commits are
//! serialised by the append lock, so each should carry as many commands as are about to arrive.

use super::Job;
use tokio::sync::mpsc;

/// Most commands one transaction carries.
const MAX_BATCH_COMMANDS: usize = 512;
/// Most events one transaction carries (a single larger command still goes alone).
const MAX_BATCH_EVENTS: usize = 8192;

/// How long a batch may wait for more commands when fewer are queued than the last batch
/// carried. Commits are serialised by the append lock, so every fsync should carry as many
/// commands as are about to arrive: without this, a busy writer alternates one big batch with a
/// tiny one (the commands that came back first), wasting every other fsync.
const LINGER: std::time::Duration = std::time::Duration::from_micros(500);

/// Takes the commands queued behind `first` into its batch, lingering for more when fewer are
/// queued than the last batch carried (`last_batch`). Gives the batch and its events' count.
pub(super) async fn gather(
    queue: &mut mpsc::Receiver<Job>,
    first: Job,
    last_batch: usize,
) -> (Vec<Job>, usize) {
    let mut events = first.0.event_count();
    let mut batch = vec![first];
    let deadline = tokio::time::Instant::now() + LINGER;
    while batch.len() < MAX_BATCH_COMMANDS && events < MAX_BATCH_EVENTS {
        let job = match queue.try_recv() {
            Ok(job) => job,
            Err(_) if batch.len() * 2 < last_batch => {
                match tokio::time::timeout_at(deadline, queue.recv()).await {
                    Ok(Some(job)) => job,
                    _ => break,
                }
            }
            Err(_) => break,
        };
        events += job.0.event_count();
        batch.push(job);
    }
    (batch, events)
}
