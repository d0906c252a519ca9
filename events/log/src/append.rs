//! What a command asks the log to append, and what it gets back.

use crate::LogError;
use crate::limits::{self, Limits, Refusal};
use crate::plan::JsonText;
use palimpsest_events::canonical::to_canonical_string;
use palimpsest_events::envelope::canonical_metadata;
use palimpsest_events::{ExpectedVersion, Metadata, NewEvent, RecordedEvent, StreamName};

/// The events of one stream in an append, with the version the command expects the stream at.
/// A stream with no events is a pure check: the append fails unless the stream is at `expected`.
#[derive(Debug, Clone)]
pub struct StreamAppend {
    /// The stream written to.
    pub stream: StreamName,
    /// The version the command decided against.
    pub expected: ExpectedVersion,
    /// The events, in order.
    pub events: Vec<NewEvent>,
}

/// One command's append: every stream it touches, written in one transaction or not at all.
#[derive(Debug, Clone, Default)]
pub struct AppendRequest {
    /// The streams, each with its expected version and events.
    pub streams: Vec<StreamAppend>,
    /// Stored with every event; `idempotency_key` makes a retried command append nothing.
    pub metadata: Metadata,
    /// The command's answer, stored under the idempotency key in the same transaction as its
    /// events, so a repeat of the request gets the first answer back.
    pub reply: Option<StoredReply>,
    /// The size [`AppendRequest::validate`] measured (its events as published), kept so that
    /// what the log holds of them in memory is bounded without measuring them again.
    pub(crate) measured_bytes: usize,
    /// Each event's payload as [`AppendRequest::validate`] wrote it, in the caller's task, in
    /// the order of the streams' events: the appender, one task for the whole process, then
    /// only assembles the hashed text and the rows around them.
    pub(crate) texts: Vec<EventText>,
    /// The metadata's canonical text, as every event's hash covers it (`validate` again).
    pub(crate) metadata_text: Option<String>,
}

/// An event's payload written once, before it reaches the appender.
#[derive(Debug, Clone)]
pub(crate) struct EventText {
    /// Its JSON text, as the `payload` column stores it.
    pub(crate) json: JsonText,
    /// Its canonical text, as its hash covers it.
    pub(crate) canonical: String,
}

/// A command's first answer as the log keeps it under its idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredReply {
    /// Fingerprint of the request that produced it (method, path, body): a repeat must match.
    pub request_hash: Vec<u8>,
    /// The answer's HTTP status.
    pub status: u16,
    /// The answer's content type.
    pub content_type: String,
    /// The answer's body.
    pub body: Vec<u8>,
}

impl AppendRequest {
    /// An empty request, to be filled with [`AppendRequest::stream`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a stream to the request.
    pub fn stream(
        mut self,
        stream: StreamName,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Self {
        self.streams.push(StreamAppend {
            stream,
            expected,
            events,
        });
        self
    }

    /// Sets the metadata stored with every event of the request.
    pub fn metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// Sets the answer stored under the request's idempotency key.
    pub fn reply(mut self, reply: StoredReply) -> Self {
        self.reply = Some(reply);
        self
    }

    /// Checks the request's shape before it reaches the database, and that every reader
    /// downstream can carry its events (see [`crate::limits`]); records the size it measured.
    pub(crate) fn validate(&mut self, limits: &Limits) -> Result<(), AppendError> {
        if self.streams.is_empty() && !self.stores_answer_only() {
            return Err(AppendError::Invalid(
                "an append needs at least one stream, or an idempotency key and a reply".into(),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        let mut ids = std::collections::HashSet::new();
        let mut total = 0usize;
        let mut texts = Vec::with_capacity(self.event_count());
        for s in &self.streams {
            limits::check_stream(&s.stream)?;
            limits::check_metadata(&s.stream, &self.metadata)?;
            if !seen.insert(&s.stream) {
                return Err(AppendError::Invalid(format!(
                    "stream {} appears twice in one append",
                    s.stream
                )));
            }
            for e in &s.events {
                if e.event_type.is_empty()
                    || e.event_type.len() > 128
                    || e.event_type.contains(char::is_control)
                {
                    return Err(AppendError::Invalid(
                        "event type must be 1-128 characters, none a control character".into(),
                    ));
                }
                let json = JsonText::from(e.payload.to_string());
                total += limits::check_sized(&s.stream, e, &self.metadata, limits, json.len())?;
                texts.push(EventText {
                    json,
                    canonical: to_canonical_string(&e.payload),
                });
                if !ids.insert(e.event_id) {
                    return Err(AppendError::Invalid(format!(
                        "event id {} appears twice in one append",
                        e.event_id
                    )));
                }
            }
        }
        if total > limits.max_append_bytes {
            return Err(Refusal::AppendTooLarge {
                size: total,
                max: limits.max_append_bytes,
            }
            .into());
        }
        if let Some(key) = &self.metadata.idempotency_key
            && (key.is_empty() || key.len() > 256)
        {
            return Err(AppendError::Invalid(
                "idempotency key must be 1-256 characters".into(),
            ));
        }
        self.measured_bytes = total;
        self.texts = texts;
        self.metadata_text = Some(canonical_metadata(&self.metadata));
        Ok(())
    }

    /// Whether the request only stores an answer under its idempotency key (no stream): how a
    /// call made of several commands keeps its final answer, which no single command's events
    /// carry. Like any keyed append it is done once; a repeat is answered as replayed.
    pub fn stores_answer_only(&self) -> bool {
        self.streams.is_empty() && self.reply.is_some() && self.metadata.idempotency_key.is_some()
    }

    /// How many events the request appends.
    pub fn event_count(&self) -> usize {
        self.streams.iter().map(|s| s.events.len()).sum()
    }
}

/// The outcome of a successful append.
#[derive(Debug, Clone)]
pub struct Appended {
    /// The recorded events, in position order (for a replayed command: the first run's events).
    /// Shared: the log keeps them for this process's readers too ([`crate::recent`]).
    pub events: std::sync::Arc<[RecordedEvent]>,
    /// The highest global position of the log when the append committed; wait for projections
    /// to reach it to read your own write.
    pub last_position: i64,
    /// True when the idempotency key or the event ids had been seen: nothing new was written.
    pub replayed: bool,
}

/// Why an append wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// A stream was not at the version the command decided against.
    #[error("stream {stream} is at version {actual}, expected {expected:?}")]
    WrongExpectedVersion {
        /// The stream that moved.
        stream: StreamName,
        /// What the command expected.
        expected: ExpectedVersion,
        /// Where the stream is (0: no event).
        actual: i64,
    },
    /// The request itself is malformed.
    #[error("invalid append: {0}")]
    Invalid(String),
    /// The events are well formed but the relay or a read model could not carry them (a key
    /// with a line break, U+0000 in text, too large): refused, nothing written (a 4xx).
    #[error("refused: {0}")]
    Refused(#[from] Refusal),
    /// The log could not be reached or failed.
    #[error(transparent)]
    Log(#[from] LogError),
}

impl From<tokio_postgres::Error> for AppendError {
    fn from(e: tokio_postgres::Error) -> Self {
        AppendError::Log(LogError::Db(e))
    }
}

impl From<deadpool_postgres::PoolError> for AppendError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        AppendError::Log(LogError::Pool(e))
    }
}
