//! What the relay is doing, for `/readyz` and the logs: publishing, interrupted (it retries on
//! its own) or blocked (it will not publish until an operator acts, and says why).

use serde::Serialize;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

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

/// A shared view of the relay's state: the relay writes it, `/readyz` reads it.
#[derive(Debug, Clone)]
pub struct RelayHealth {
    state: Arc<Mutex<RelayState>>,
}

impl Default for RelayHealth {
    fn default() -> Self {
        RelayHealth {
            state: Arc::new(Mutex::new(RelayState::Starting)),
        }
    }
}

impl RelayHealth {
    /// The current state.
    pub fn state(&self) -> RelayState {
        match self.state.lock() {
            Ok(state) => state.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Whether the relay refuses to publish (readiness fails).
    pub fn blocked(&self) -> Option<Blocked> {
        match self.state() {
            RelayState::Blocked { blocked, .. } => Some(blocked),
            _ => None,
        }
    }

    pub(crate) fn set(&self, next: RelayState) {
        match self.state.lock() {
            Ok(mut state) => *state = next,
            Err(poisoned) => *poisoned.into_inner() = next,
        }
    }
}
