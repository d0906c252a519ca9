//! The position this process knows is on disk.
//!
//! An append commits before it is durable when its batch defers the flush (a later durability
//! commit makes it durable; see `writer/durability.rs`). Until then a crash can take it back, so
//! nobody may be shown it: its writer is answered after the flush, the relay flushes before it
//! publishes, and a projector that commits asynchronously waits for this position (or flushes
//! itself) before its rows, made of those events, become visible.

use crate::head::forward;
use std::time::Duration;
use tokio::sync::watch;

/// The highest global position known to be on disk in this process; every position below it
/// is too, since positions commit in order and a flush takes every commit before it.
#[derive(Clone)]
pub struct DurableWatch {
    sender: watch::Sender<i64>,
}

impl DurableWatch {
    /// Knows nothing on disk yet (a first reader flushes once to learn it).
    pub(crate) fn new() -> DurableWatch {
        let (sender, _) = watch::channel(0);
        DurableWatch { sender }
    }

    /// Records that everything up to `position` is on disk (never moves back).
    pub(crate) fn advance(&self, position: i64) {
        forward(&self.sender, position);
    }

    /// The highest position known to be on disk.
    pub fn current(&self) -> i64 {
        *self.sender.borrow()
    }

    /// Waits up to `within` for `position` to be known on disk (the appender's durability
    /// commit for it is usually under way); whether it is.
    pub async fn reached(&self, position: i64, within: Duration) -> bool {
        let mut receiver = self.sender.subscribe();
        let reached = receiver.wait_for(|p| *p >= position);
        matches!(tokio::time::timeout(within, reached).await, Ok(Ok(_)))
    }
}
