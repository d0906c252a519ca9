//! A stand-in for the platform's command runner (`palimpsest_web::command`, issue 7), with the
//! same names and shapes, so the resources deciders plug into the real one by changing one
//! `use` line when it lands in `main`.
//!
//! It loads stream states through a per-process cache (a command folds only the events
//! appended since it last saw a stream), appends every written stream at the version read,
//! decides again on a version conflict (bounded, then 409), waits for the projections, and
//! answers a repeated `Idempotency-Key` with the first reply (kept in this process; the log's
//! own idempotency key makes the repeat append nothing).

use axum::body::Bytes;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use palimpsest_events::{DecodeError, ExpectedVersion, Metadata, NewEvent, RecordedEvent, StreamName};
use palimpsest_log::{AppendError, AppendRequest, EventStore, LogError};
use palimpsest_projections::ProjectionWatch;
use serde::Serialize;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PAGE: i64 = 1000;
const MAX_ATTEMPTS: u32 = 16;
const CACHE_CAPACITY: usize = 50_000;

/// A stream's write-side state, folded from its events (cached per process by the runner).
pub trait StreamState: Clone + Send + Sync + 'static {
    /// The state of a stream with no events.
    fn initial(stream: &StreamName) -> Self;
    /// Folds one recorded event.
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError>;
}

/// Why a stream's state could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A recorded event does not decode.
    #[error("stream {stream}: {source}")]
    Decode {
        /// The stream.
        stream: StreamName,
        /// What did not decode.
        source: DecodeError,
    },
}

type Cache = Mutex<HashMap<(TypeId, StreamName), (i64, Box<dyn Any + Send + Sync>)>>;

/// One try of a command: the streams it read, each with the version read.
pub struct Attempt<'r> {
    store: &'r EventStore,
    cache: &'r Cache,
    versions: HashMap<StreamName, i64>,
}

impl Attempt<'_> {
    /// The current state of `stream`, recording the version read.
    pub async fn load<S: StreamState>(&mut self, stream: &StreamName) -> Result<S, LoadError> {
        let key = (TypeId::of::<S>(), stream.clone());
        let cached = self.cache.lock().ok().and_then(|cache| {
            cache
                .get(&key)
                .and_then(|(v, s)| s.downcast_ref::<S>().map(|s| (*v, s.clone())))
        });
        let (mut version, mut state) = cached.unwrap_or_else(|| (0, S::initial(stream)));
        loop {
            let events = self.store.read_stream(stream, version, PAGE).await?;
            for event in &events {
                state.fold(event).map_err(|source| LoadError::Decode {
                    stream: stream.clone(),
                    source,
                })?;
                version = event.version;
            }
            if (events.len() as i64) < PAGE {
                break;
            }
        }
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
            let newer = cache.get(&key).is_some_and(|(v, _)| *v > version);
            if !newer {
                cache.insert(key, (version, Box::new(state.clone())));
            }
        }
        self.versions.insert(stream.clone(), version);
        Ok(state)
    }

    /// The version `stream` was read at; 0 when it has no event or was not read.
    pub fn version(&self, stream: &StreamName) -> i64 {
        self.versions.get(stream).copied().unwrap_or(0)
    }
}

/// A command's answer: status, content type and body, fully determined by the decision.
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
    pub fn new(status: StatusCode, content_type: impl Into<String>, body: impl Into<Bytes>) -> Self {
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
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let content_type = HeaderValue::from_str(&self.content_type)
            .unwrap_or(HeaderValue::from_static("application/octet-stream"));
        (self.status, [(header::CONTENT_TYPE, content_type)], self.body).into_response()
    }
}

/// What a command decided: events per stream, streams that must not have moved, the reply.
#[derive(Debug, Clone)]
pub struct Decision {
    writes: Vec<(StreamName, Vec<NewEvent>)>,
    checks: Vec<StreamName>,
    reply: Reply,
}

impl Decision {
    /// A decision answering `reply` that writes nothing (yet).
    pub fn new(reply: Reply) -> Self {
        Decision {
            writes: Vec::new(),
            checks: Vec::new(),
            reply,
        }
    }

    /// Appends `events` to `stream`, expected at the version read (new if never read).
    pub fn write(mut self, stream: StreamName, events: Vec<NewEvent>) -> Self {
        if events.is_empty() {
            return self;
        }
        match self.writes.iter_mut().find(|(s, _)| *s == stream) {
            Some((_, existing)) => existing.extend(events),
            None => self.writes.push((stream, events)),
        }
        self
    }

    /// Requires `stream`, read but not written, to be still at the version read.
    pub fn check(mut self, stream: StreamName) -> Self {
        if !self.checks.contains(&stream) {
            self.checks.push(stream);
        }
        self
    }

    /// Replaces the answer.
    pub fn with_reply(mut self, reply: Reply) -> Self {
        self.reply = reply;
        self
    }

    /// How many events the command appends.
    pub fn event_count(&self) -> usize {
        self.writes.iter().map(|(_, e)| e.len()).sum()
    }
}

/// A command that did not succeed; `E` is the context's own refusal.
#[derive(Debug, thiserror::Error)]
pub enum CommandError<E> {
    /// The context refused the command.
    #[error("{0}")]
    Rejected(E),
    /// Other writers kept moving a stream the command read.
    #[error("{stream} kept changing while the command was decided; retry")]
    Conflict {
        /// The stream that moved last.
        stream: StreamName,
    },
    /// The Idempotency-Key was first used for a different request.
    #[error("this Idempotency-Key was already used for a different request")]
    KeyReused,
    /// The log refused the append as malformed.
    #[error("{0}")]
    Refused(String),
    /// The log is unavailable.
    #[error("{0}")]
    Unavailable(String),
    /// A failure the client cannot fix.
    #[error("{0}")]
    Internal(String),
}

impl<E> From<LoadError> for CommandError<E> {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::Log(log) => log_error(log),
            decode @ LoadError::Decode { .. } => {
                tracing::error!(error = %decode, "a recorded event does not decode");
                CommandError::Internal(decode.to_string())
            }
        }
    }
}

fn log_error<E>(e: LogError) -> CommandError<E> {
    match e {
        LogError::Pool(_) | LogError::WriterStopped => {
            CommandError::Unavailable("the event log is unavailable".into())
        }
        other => {
            tracing::error!(error = %other, "the event log failed");
            CommandError::Internal(other.to_string())
        }
    }
}

/// A write request's Idempotency-Key (an axum extractor).
#[derive(Debug, Clone, Default)]
pub struct CommandRequest {
    key: Option<String>,
}

impl CommandRequest {
    /// A request without a key.
    pub fn none() -> Self {
        Self::default()
    }

    /// The client's Idempotency-Key.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for CommandRequest {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let key = parts
            .headers
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok())
            .map(|k| k.trim().to_owned())
            .filter(|k| !k.is_empty() && k.len() <= 200);
        Ok(CommandRequest { key })
    }
}

/// What the runner needs to know of a command besides its decider.
pub struct Command<'a> {
    /// The request's idempotency facts.
    pub request: &'a CommandRequest,
    /// The context.
    pub context: &'static str,
    /// Projections the answer waits for.
    pub projections: &'a [&'static str],
    /// Stored with every event.
    pub metadata: Metadata,
}

/// Runs commands (see the module doc).
#[derive(Clone)]
pub struct CommandRunner {
    store: EventStore,
    watch: ProjectionWatch,
    cache: Arc<Cache>,
    replies: Arc<Mutex<HashMap<String, Reply>>>,
}

impl CommandRunner {
    /// A runner appending to `store` and waiting on `watch`.
    pub fn new(store: EventStore, watch: ProjectionWatch) -> Self {
        CommandRunner {
            store,
            watch,
            cache: Arc::default(),
            replies: Arc::default(),
        }
    }

    /// Runs a command (see the module doc).
    pub async fn run<E>(
        &self,
        command: Command<'_>,
        mut decide: impl AsyncFnMut(&mut Attempt<'_>) -> Result<Decision, CommandError<E>>,
    ) -> Result<Reply, CommandError<E>> {
        let key = command.request.key().map(|k| format!("{}:{k}", command.context));
        if let Some(stored) = key.as_ref().and_then(|k| self.stored(k)) {
            return Ok(stored);
        }
        let mut moved = None;
        for _ in 0..MAX_ATTEMPTS {
            let mut attempt = Attempt {
                store: &self.store,
                cache: &self.cache,
                versions: HashMap::new(),
            };
            let decision = decide(&mut attempt).await?;
            if decision.writes.is_empty() {
                return Ok(decision.reply);
            }
            let mut metadata = command.metadata.clone();
            metadata.idempotency_key = key.clone();
            let request = append_request(&decision, &attempt).metadata(metadata);
            match self.store.append(request).await {
                Ok(appended) => {
                    for projection in command.projections {
                        self.wait_for(projection, appended.last_position).await;
                    }
                    if appended.replayed
                        && let Some(stored) = key.as_ref().and_then(|k| self.stored(k))
                    {
                        return Ok(stored);
                    }
                    if let (Some(k), Ok(mut replies)) = (&key, self.replies.lock()) {
                        replies.insert(k.clone(), decision.reply.clone());
                    }
                    return Ok(decision.reply);
                }
                Err(AppendError::WrongExpectedVersion { stream, .. }) => moved = Some(stream),
                Err(AppendError::Invalid(message)) => return Err(CommandError::Refused(message)),
                Err(AppendError::Log(e)) => return Err(log_error(e)),
            }
        }
        Err(match moved {
            Some(stream) => CommandError::Conflict { stream },
            None => CommandError::Internal("no attempt was made".into()),
        })
    }

    fn stored(&self, key: &str) -> Option<Reply> {
        self.replies.lock().ok().and_then(|r| r.get(key).cloned())
    }

    /// Read-your-writes for one projection.
    pub async fn wait_for(&self, projection: &str, position: i64) {
        if !self
            .watch
            .wait_for(projection, position, Duration::from_secs(5))
            .await
        {
            tracing::warn!(projection, position, "read model did not catch up in time");
        }
    }
}

fn append_request(decision: &Decision, attempt: &Attempt<'_>) -> AppendRequest {
    let expected = |stream: &StreamName| match attempt.version(stream) {
        0 => ExpectedVersion::NoStream,
        v => ExpectedVersion::Exact(v),
    };
    let mut request = AppendRequest::new();
    for (stream, events) in &decision.writes {
        request = request.stream(stream.clone(), expected(stream), events.clone());
    }
    for checked in &decision.checks {
        if !decision.writes.iter().any(|(s, _)| s == checked) {
            request = request.stream(checked.clone(), expected(checked), Vec::new());
        }
    }
    request
}
