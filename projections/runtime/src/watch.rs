//! Waiting for a read model to reach a position: read-your-writes for HTTP handlers.

use crate::PROJECTION_CHANNEL;
use crate::stall::{self, STALL_CHANNEL, Stall};
use deadpool_postgres::Pool;
use palimpsest_log::{LogError, notify};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How often a waiter asks the checkpoint itself, in case a notification was lost while the
/// listening connection reconnected.
const SLOW_POLL: Duration = Duration::from_millis(250);

/// What the watch has learnt of every projection: the position it reached, and the event it is
/// stopped on if it is.
#[derive(Debug, Default)]
struct Seen {
    positions: HashMap<String, i64>,
    stalls: HashMap<String, Stall>,
}

/// Why a wait ended without the projection reaching the position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WaitError {
    /// The projection is stopped on an event at or before the position: it will not get there
    /// until someone fixes it, so the caller answers at once (HTTP 503) instead of waiting.
    #[error("{0}")]
    Stalled(Stall),
    /// The projection did not get there in time (it is slow, or not running).
    #[error("projection {projection} did not reach position {position} in time")]
    TimedOut {
        /// The projection.
        projection: String,
        /// The position waited for.
        position: i64,
    },
}

/// The positions every projection has reached, followed through the runners' notifications.
/// A write handler waits here for its own append before answering, so the client's next read
/// sees it; reads themselves never wait. A projection stopped on an event fails its waiters at
/// once ([`WaitError::Stalled`]).
#[derive(Clone)]
pub struct ProjectionWatch {
    seen: Arc<watch::Sender<Seen>>,
    pool: Pool,
    /// The read models split into partitions, and into how many ([`crate::partition`]).
    partitions: Arc<HashMap<String, u32>>,
}

impl ProjectionWatch {
    /// Starts following the runners' notifications.
    pub fn start(database_url: &str, pool: Pool) -> Result<ProjectionWatch, LogError> {
        let (sender, _) = watch::channel(Seen::default());
        let seen = Arc::new(sender);
        let mut notes = notify::listen(database_url, &[PROJECTION_CHANNEL, STALL_CHANNEL])?;
        let follower = Arc::downgrade(&seen);
        tokio::spawn(async move {
            while let Some(note) = notes.recv().await {
                let Some(seen) = follower.upgrade() else {
                    return;
                };
                if note.channel == STALL_CHANNEL {
                    match serde_json::from_str::<Stall>(&note.payload) {
                        Ok(stall) => stalled(&seen, stall),
                        Err(e) => tracing::warn!(error = %e, "unreadable stall notification"),
                    }
                } else if let Some((name, pos)) = note.payload.rsplit_once(':')
                    && let Ok(pos) = pos.parse::<i64>()
                {
                    advance(&seen, name, pos);
                }
            }
        });
        Ok(ProjectionWatch {
            seen,
            pool,
            partitions: Arc::default(),
        })
    }

    /// The same watch, knowing which read models are split into partitions and into how many:
    /// a wait for such a read model waits for its partitions' checkpoints (every one, or only
    /// those of the streams written: [`ProjectionWatch::wait_until_written`]).
    pub fn with_partitions(mut self, partitions: HashMap<String, u32>) -> ProjectionWatch {
        self.partitions = Arc::new(partitions);
        self
    }

    /// Into how many partitions read model `name` is split, if it is.
    pub fn partitions(&self, name: &str) -> Option<u32> {
        self.partitions.get(name).copied()
    }

    /// Waits until projection `name` has applied `position`, at most `timeout`. Returns whether
    /// it did (a projection that is not running makes the caller answer without the guarantee).
    pub async fn wait_for(&self, name: &str, position: i64, timeout: Duration) -> bool {
        self.wait_until_applied(name, position, timeout)
            .await
            .is_ok()
    }

    /// Waits until projection `name` has applied `position`, at most `timeout`; fails at once
    /// when the projection is stopped on an event at or before `position`. A read model split
    /// into partitions has applied it when every partition has.
    pub async fn wait_until_applied(
        &self,
        name: &str,
        position: i64,
        timeout: Duration,
    ) -> Result<(), WaitError> {
        match self.partitions(name) {
            None => self.wait_one(name, position, timeout).await,
            Some(count) => {
                self.wait_partitions(name, 0..count, count, position, timeout)
                    .await
            }
        }
    }

    /// [`ProjectionWatch::wait_until_applied`] for a write to `streams` that ended at
    /// `position`: for a read model split into partitions, only the partitions of those streams
    /// are waited for (the others may lag without holding the writer).
    pub async fn wait_until_written(
        &self,
        name: &str,
        streams: &[palimpsest_events::StreamName],
        position: i64,
        timeout: Duration,
    ) -> Result<(), WaitError> {
        let Some(count) = self.partitions(name) else {
            return self.wait_one(name, position, timeout).await;
        };
        let mut written: Vec<u32> = streams
            .iter()
            .map(|s| crate::partition::partition_of(s, count))
            .collect();
        written.sort_unstable();
        written.dedup();
        self.wait_partitions(name, written, count, position, timeout)
            .await
    }

    /// Waits until each of `partitions` (of `count`) of read model `name` has applied
    /// `position`, all within `timeout`.
    async fn wait_partitions(
        &self,
        name: &str,
        partitions: impl IntoIterator<Item = u32>,
        count: u32,
        position: i64,
        timeout: Duration,
    ) -> Result<(), WaitError> {
        let deadline = tokio::time::Instant::now() + timeout;
        for index in partitions {
            let partition = crate::partition::partition_name(name, index, count);
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            self.wait_one(&partition, position, left).await?;
        }
        Ok(())
    }

    /// Waits until the checkpoint named `name` (a read model's, or one partition's) shows
    /// `position`, at most `timeout`.
    async fn wait_one(
        &self,
        name: &str,
        position: i64,
        timeout: Duration,
    ) -> Result<(), WaitError> {
        let mut rx = self.seen.subscribe();
        // The timers are made once, not at every wake: under load each commit wakes every
        // waiting write, most of them to wait again.
        let deadline = tokio::time::sleep(timeout);
        let poll = tokio::time::sleep(SLOW_POLL);
        tokio::pin!(deadline, poll);
        let mut asked_db = false;
        let mut polled = false;
        loop {
            let seen = {
                let seen = rx.borrow_and_update();
                let reached = seen.positions.get(name).copied();
                if reached.unwrap_or(0) >= position {
                    return Ok(());
                }
                if let Some(stall) = seen.stalls.get(name)
                    && stall.position <= position
                {
                    return Err(WaitError::Stalled(stall.clone()));
                }
                reached
            };
            // Once a notification of `name` has been seen, later ones will wake us: the
            // database is asked only before the first (it may have come before we started) and
            // on the slow poll (one may be lost while the listening connection reconnects).
            // Asking on every wait made each write cost a query under load.
            if !asked_db && (seen.is_none() || polled) {
                // A notification may have come before we subscribed: ask the checkpoint once.
                asked_db = true;
                if self.read_checkpoint(name).await {
                    continue;
                }
            }
            let timed_out = || WaitError::TimedOut {
                projection: name.to_owned(),
                position,
            };
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return Err(timed_out()) },
                _ = &mut poll => {
                    (asked_db, polled) = (false, true);
                    poll.as_mut().reset(tokio::time::Instant::now() + SLOW_POLL);
                }
                _ = &mut deadline => return Err(timed_out()),
            }
        }
    }

    /// Tells this process's waiters that projection `name` has committed `position`: what
    /// the runner of this process calls at each commit (other processes' commits are heard
    /// through their `NOTIFY`).
    pub fn applied(&self, name: &str, position: i64) {
        advance(&self.seen, name, position);
    }

    /// The position projection `name` is known here to stand at (told by its runner in this
    /// process, or by a notification), if any: past its committed checkpoint when the runner
    /// passed over other contexts' events.
    pub fn reached(&self, name: &str) -> Option<i64> {
        self.seen.borrow().positions.get(name).copied()
    }

    /// The stall of projection `name` this process knows of, if any.
    pub fn stall(&self, name: &str) -> Option<Stall> {
        self.seen.borrow().stalls.get(name).cloned()
    }

    /// Reads the projection's checkpoint and stall record into the watch; whether it could.
    async fn read_checkpoint(&self, name: &str) -> bool {
        // `name` goes into the statement as its schema: a read model's name, or a partition's
        // (`stream_heads/3-of-8`, in the schema before the slash).
        if !name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'/' | b'-')
        }) {
            return false;
        }
        let schema = crate::partition::schema_of(name);
        let Ok(client) = self.pool.get().await else {
            return false;
        };
        let position = match client
            .query_opt(
                &format!("SELECT position FROM {schema}.projection_checkpoint WHERE name = $1"),
                &[&name],
            )
            .await
        {
            Ok(Some(row)) => row.get::<_, i64>(0),
            _ => return false,
        };
        advance(&self.seen, name, position);
        match stall::of_schema(&client, schema).await {
            Ok(Some(stall)) => stalled(&self.seen, stall),
            Ok(None) => {}
            Err(e) => tracing::warn!(projection = name, error = %e, "cannot read stall record"),
        }
        true
    }
}

fn advance(seen: &watch::Sender<Seen>, name: &str, position: i64) {
    seen.send_if_modified(|seen| {
        let entry = seen.positions.entry(name.to_owned()).or_insert(0);
        if position <= *entry {
            return false;
        }
        *entry = position;
        if seen
            .stalls
            .get(name)
            .is_some_and(|s| s.position <= position)
        {
            seen.stalls.remove(name);
        }
        true
    });
}

fn stalled(seen: &watch::Sender<Seen>, stall: Stall) {
    seen.send_if_modified(|seen| {
        let reached = seen.positions.get(&stall.projection).copied().unwrap_or(0);
        if stall.position <= reached || seen.stalls.get(&stall.projection) == Some(&stall) {
            return false;
        }
        seen.stalls.insert(stall.projection.clone(), stall);
        true
    });
}
