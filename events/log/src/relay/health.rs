//! What the relay is doing, for `/readyz` and the logs: publishing, interrupted (it retries on
//! its own) or blocked (it will not publish until an operator acts, and says why). An
//! interruption that repeats the same error without progress for longer than `stuck_after`
//! is stuck ([`RelayHealth::stuck`]): retrying alone will not fix it, so readiness fails too.

use chrono::{DateTime, Utc};
use serde::Serialize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How long the same failure may repeat before readiness fails, unless configured
/// (`--relay-stuck-after`).
pub const DEFAULT_STUCK_AFTER: Duration = Duration::from_secs(30);

/// Why the relay refuses to publish. It never skips an event: it waits, retrying now and then,
/// until the cause is removed (a stream reset, a larger `max_payload`, the right database).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Blocked {
    /// The JetStream stream carries the events of another log (another database, or one
    /// recreated or restored): publishing would interleave two logs under one sequence.
    #[error(
        "JetStream stream {stream} holds the events of another log ({found}), not of this log \
         ({log_id}); to publish this log there, run `palimpsest relay --reset-stream` (it deletes \
         the stream's messages) or choose another stream with --stream-name"
    )]
    ForeignStream {
        /// The JetStream stream.
        stream: String,
        /// This log's identity.
        log_id: Uuid,
        /// What the stream holds instead (another log id, or the mismatch found).
        found: String,
    },
    /// The stream holds more events than the log: the database lost events NATS consumers saw
    /// (restored from an older backup?).
    #[error(
        "JetStream stream {stream} is at sequence {stream_last} but this log ({log_id}) ends at \
         position {log_head}: the stream is ahead of the log; restore the database, or run \
         `palimpsest relay --reset-stream` to publish this log anew"
    )]
    StreamAhead {
        /// The JetStream stream.
        stream: String,
        /// This log's identity.
        log_id: Uuid,
        /// The stream's last sequence.
        stream_last: u64,
        /// The log's head position.
        log_head: i64,
    },
    /// An event is larger than the NATS server accepts (its `max_payload`).
    #[error(
        "event {event_id} at position {position} is {size} bytes with its headers, over the NATS \
         server's max_payload of {max_payload}; raise max_payload (the log accepts events up to \
         its configured limit)"
    )]
    TooLarge {
        /// The event's position.
        position: i64,
        /// The event's id.
        event_id: Uuid,
        /// Its size as a NATS message.
        size: usize,
        /// The server's limit.
        max_payload: usize,
    },
}

/// The relay's state as readiness reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RelayState {
    /// Not connected yet.
    Starting,
    /// Connected and publishing; the stream's last sequence.
    Publishing {
        /// The last position NATS acknowledged.
        published: i64,
    },
    /// NATS or the log failed; the relay reconnects and resumes by itself.
    Interrupted {
        /// The failure.
        error: String,
        /// Since when this same failure repeats without the relay making progress.
        since: DateTime<Utc>,
    },
    /// The relay refuses to publish until an operator acts.
    Blocked {
        /// Why, typed.
        #[serde(flatten)]
        blocked: Blocked,
        /// The same, in words.
        message: String,
    },
}

/// Since when one failure repeats, unchanged and without progress in between.
#[derive(Debug, Clone)]
struct Failing {
    error: String,
    since: DateTime<Utc>,
    at: Instant,
}

#[derive(Debug)]
struct Inner {
    state: RelayState,
    failing: Option<Failing>,
}

/// The relay is stuck: the same failure for longer than `stuck_after` (readiness fails).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stuck {
    /// The failure, as the relay last saw it.
    pub error: String,
    /// Since when it repeats.
    pub since: DateTime<Utc>,
    /// For how many whole seconds.
    pub seconds: u64,
}

/// A shared view of the relay's state: the relay writes it, `/readyz` reads it.
#[derive(Debug, Clone)]
pub struct RelayHealth {
    inner: Arc<Mutex<Inner>>,
    stuck_after: Duration,
}

impl Default for RelayHealth {
    fn default() -> Self {
        RelayHealth::new(DEFAULT_STUCK_AFTER)
    }
}

impl RelayHealth {
    /// A health that calls the relay stuck once one failure repeats for longer than
    /// `stuck_after`.
    pub fn new(stuck_after: Duration) -> Self {
        RelayHealth {
            inner: Arc::new(Mutex::new(Inner {
                state: RelayState::Starting,
                failing: None,
            })),
            stuck_after,
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        match self.inner.lock() {
            Ok(mut inner) => f(&mut inner),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// The current state.
    pub fn state(&self) -> RelayState {
        self.with(|inner| inner.state.clone())
    }

    /// Whether the relay refuses to publish (readiness fails).
    pub fn blocked(&self) -> Option<Blocked> {
        match self.state() {
            RelayState::Blocked { blocked, .. } => Some(blocked),
            _ => None,
        }
    }

    /// The failure that has repeated for longer than `stuck_after` while the relay is
    /// interrupted, if any (readiness fails, naming it).
    pub fn stuck(&self) -> Option<Stuck> {
        let stuck_after = self.stuck_after;
        self.with(|inner| {
            let RelayState::Interrupted { .. } = inner.state else {
                return None;
            };
            let failing = inner.failing.as_ref()?;
            let elapsed = failing.at.elapsed();
            (elapsed > stuck_after).then(|| Stuck {
                error: failing.error.clone(),
                since: failing.since,
                seconds: elapsed.as_secs(),
            })
        })
    }

    pub(crate) fn set(&self, next: RelayState) {
        self.with(|inner| inner.state = next);
    }

    /// The relay failed with `error` and will retry: the state is interrupted, since the first
    /// time this same error came without progress in between.
    pub(crate) fn interrupted(&self, error: String) {
        self.with(|inner| {
            let failing = match inner.failing.take() {
                Some(f) if f.error == error => f,
                _ => Failing {
                    error: error.clone(),
                    since: Utc::now(),
                    at: Instant::now(),
                },
            };
            inner.state = RelayState::Interrupted {
                error,
                since: failing.since,
            };
            inner.failing = Some(failing);
        });
    }

    /// The relay published (or had nothing left to publish): a repeating failure ends.
    pub(crate) fn progressed(&self) {
        self.with(|inner| inner.failing = None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_failure_without_progress_for_longer_than_stuck_after_is_stuck() {
        let health = RelayHealth::new(Duration::from_millis(50));
        health.interrupted("subjects overlap".into());
        assert_eq!(health.stuck(), None);
        std::thread::sleep(Duration::from_millis(60));
        health.interrupted("subjects overlap".into());
        let stuck = health.stuck().expect("stuck");
        assert_eq!(stuck.error, "subjects overlap");
        // Another failure starts the count anew; so does progress.
        health.interrupted("timed out".into());
        assert_eq!(health.stuck(), None);
        std::thread::sleep(Duration::from_millis(60));
        assert!(health.stuck().is_some());
        health.progressed();
        health.set(RelayState::Publishing { published: 3 });
        assert_eq!(health.stuck(), None);
        health.interrupted("timed out".into());
        assert_eq!(health.stuck(), None);
    }
}
