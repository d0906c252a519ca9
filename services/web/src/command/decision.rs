//! What a command decided: its events per stream, and the answer to give (and to repeat to a
//! retried request with the same Idempotency-Key).

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use palimpsest_events::{NewEvent, StreamName};
use serde::Serialize;

/// A command's answer: status, content type and body. It is fully determined by the decision
/// (never by log positions), so the same bytes can be stored and answered again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body's media type.
    pub content_type: String,
    /// The body.
    pub body: Bytes,
}

impl Reply {
    /// An answer with any body.
    pub fn new(
        status: StatusCode,
        content_type: impl Into<String>,
        body: impl Into<Bytes>,
    ) -> Self {
        Reply {
            status,
            content_type: content_type.into(),
            body: body.into(),
        }
    }

    /// A JSON answer.
    pub fn json(status: StatusCode, body: &impl Serialize) -> Self {
        match serde_json::to_vec(body) {
            Ok(bytes) => Reply::new(status, "application/json", bytes),
            Err(e) => {
                tracing::error!(error = %e, "reply did not serialise");
                Reply::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "application/json",
                    br#"{"error":"internal error"}"#.to_vec(),
                )
            }
        }
    }

    /// The body read as JSON (for callers inside the process, e.g. tests and composition).
    pub fn json_body<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let content_type = HeaderValue::from_str(&self.content_type)
            .unwrap_or(HeaderValue::from_static("application/octet-stream"));
        (
            self.status,
            [(header::CONTENT_TYPE, content_type)],
            self.body,
        )
            .into_response()
    }
}

/// The events of one stream a command writes.
#[derive(Debug, Clone)]
pub(crate) struct StreamWrite {
    pub(crate) stream: StreamName,
    pub(crate) events: Vec<NewEvent>,
}

/// A command's outcome: the streams it writes (in order), the streams it only read but whose
/// version must still hold, its answer to keep under the request's key, and the value it hands
/// back to its caller (`T`; `()` for a command whose reply is all it answers).
#[derive(Debug, Clone)]
pub struct Decision<T = ()> {
    pub(crate) writes: Vec<StreamWrite>,
    pub(crate) checks: Vec<StreamName>,
    pub(crate) reply: Option<Reply>,
    pub(crate) value: T,
}

impl Decision {
    /// A decision that answers `reply` and (so far) writes nothing.
    pub fn new(reply: Reply) -> Self {
        Decision {
            writes: Vec::new(),
            checks: Vec::new(),
            reply: Some(reply),
            value: (),
        }
    }
}

impl<T> Decision<T> {
    /// A decision whose answer is `value` alone, handed back to the caller and kept nowhere:
    /// for a request without Idempotency-Key, which has no key to keep a reply under (a keyed
    /// request deciding so is an internal error: its repeat would have nothing to answer).
    pub fn unstored(value: T) -> Self {
        Decision {
            writes: Vec::new(),
            checks: Vec::new(),
            reply: None,
            value,
        }
    }

    /// The same decision handing `value` back to its caller beside its reply
    /// ([`super::CommandRunner::run_for`]).
    pub fn with_value<V>(self, value: V) -> Decision<V> {
        Decision {
            writes: self.writes,
            checks: self.checks,
            reply: self.reply,
            value,
        }
    }

    /// Appends `events` to `stream`. The stream is expected at the version the attempt read
    /// it at; a stream the attempt never loaded must be new. Writing the same stream twice
    /// adds to its events.
    pub fn write(mut self, stream: StreamName, events: Vec<NewEvent>) -> Self {
        if events.is_empty() {
            return self;
        }
        match self.writes.iter_mut().find(|w| w.stream == stream) {
            Some(write) => write.events.extend(events),
            None => self.writes.push(StreamWrite { stream, events }),
        }
        self
    }

    /// Requires `stream`, read but not written, to be still at the version read when the
    /// append commits (the command's decision depended on it).
    pub fn check(mut self, stream: StreamName) -> Self {
        if !self.checks.contains(&stream) {
            self.checks.push(stream);
        }
        self
    }

    /// Replaces the answer.
    pub fn with_reply(mut self, reply: Reply) -> Self {
        self.reply = Some(reply);
        self
    }

    /// Whether the command writes nothing (its answer is given without an append).
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// How many events the command appends.
    pub fn event_count(&self) -> usize {
        self.writes.iter().map(|w| w.events.len()).sum()
    }
}

/// What [`super::CommandRunner::run_for`] answers: the value decided by this very call, or the
/// reply kept under the key by an earlier call with the same Idempotency-Key (a repeat decides
/// nothing, so it has no value).
#[derive(Debug, Clone)]
pub enum Answer<T> {
    /// Decided now: the decider's value, and the reply kept under the key (`None` when the
    /// request had no key and the decision answered its value only).
    Decided {
        /// What the decider handed back.
        value: T,
        /// Its reply, if it made one.
        reply: Option<Reply>,
    },
    /// A repeat: the reply the first call kept.
    Repeated(Reply),
}
