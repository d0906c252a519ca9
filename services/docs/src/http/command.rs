//! Running a command: load the streams it reads, decide, append every written stream at the
//! version read (and every checked stream unchanged) in one request, retry from fresh state when
//! another writer got there first, wait for the read model, answer.
//!
//! Shaped like the platform's command runner (`StreamState`, `Attempt`, `Decision`) so that
//! the deciders plug into it unchanged once it lands; until then this is the context's own.

use super::error::CouchError;
use crate::projection::NAME;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use palimpsest_events::{
    DecodeError, ExpectedVersion, Metadata, NewEvent, RecordedEvent, StreamName,
};
use palimpsest_log::{AppendError, AppendRequest};
use palimpsest_web::AppState;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

/// How many times a command is decided again after losing a race.
const ATTEMPTS: usize = 8;
/// Events are read in pages of this many.
const PAGE: i64 = 1000;

/// A stream's write-side state, folded from its events.
pub trait StreamState: Clone + Send + Sync + 'static {
    /// The state of a stream with no event.
    fn initial(stream: &StreamName) -> Self;
    /// Folds one recorded event.
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError>;
}

/// One try of a command: the streams it loaded and the versions it read.
pub struct Attempt {
    state: AppState,
    versions: BTreeMap<StreamName, i64>,
}

impl Attempt {
    /// Loads `stream`'s state and records the version read.
    pub async fn load<S: StreamState>(&mut self, stream: &StreamName) -> Result<S, CouchError> {
        let mut folded = S::initial(stream);
        let mut version = 0;
        loop {
            let page = self.state.store.read_stream(stream, version, PAGE).await?;
            let done = (page.len() as i64) < PAGE;
            for event in &page {
                folded.fold(event)?;
                version = event.version;
            }
            if done {
                break;
            }
        }
        self.versions.insert(stream.clone(), version);
        Ok(folded)
    }

    /// The version read of `stream` (0: no event).
    pub fn version(&self, stream: &StreamName) -> i64 {
        self.versions.get(stream).copied().unwrap_or(0)
    }
}

/// An answer: status and JSON text.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status.
    pub status: StatusCode,
    /// The JSON body.
    pub body: String,
}

impl Reply {
    /// A JSON answer.
    pub fn json(status: StatusCode, body: &impl serde::Serialize) -> Reply {
        match serde_json::to_string(body) {
            Ok(body) => Reply { status, body },
            Err(e) => Reply::text(CouchError::internal(e).status, "{}".into()),
        }
    }

    /// An answer whose JSON text is already made.
    pub fn text(status: StatusCode, body: String) -> Reply {
        Reply { status, body }
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        (
            self.status,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            self.body,
        )
            .into_response()
    }
}

/// What a command decided: its events per stream, the streams that must not have moved, and
/// the reply.
pub struct Decision {
    reply: Reply,
    writes: Vec<(StreamName, Vec<NewEvent>)>,
    checks: Vec<StreamName>,
}

impl Decision {
    /// A decision answering `reply`, writing nothing yet.
    pub fn new(reply: Reply) -> Decision {
        Decision {
            reply,
            writes: Vec::new(),
            checks: Vec::new(),
        }
    }

    /// Appends `events` to `stream` (at the version the attempt read).
    pub fn write(mut self, stream: StreamName, events: Vec<NewEvent>) -> Decision {
        if !events.is_empty() {
            self.writes.push((stream, events));
        }
        self
    }

    /// Requires `stream` not to have moved since it was read.
    pub fn check(mut self, stream: StreamName) -> Decision {
        self.checks.push(stream);
        self
    }
}

/// The request's `Idempotency-Key`, stored with the events: a retried request appends nothing.
pub fn idempotency_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 200)
        .map(str::to_owned)
}

fn expected(version: i64) -> ExpectedVersion {
    if version == 0 {
        ExpectedVersion::NoStream
    } else {
        ExpectedVersion::Exact(version)
    }
}

/// What one try of a command returns.
pub type Decided<'a> = Pin<Box<dyn Future<Output = Result<Decision, CouchError>> + Send + 'a>>;

/// A command: loads what it reads through the attempt and decides.
pub trait Command: Send + Sync {
    /// One try: load, decide, say what to write and what to answer.
    fn decide<'a>(&'a self, attempt: &'a mut Attempt) -> Decided<'a>;
}

/// Runs a command: its writes are appended at the versions its try read.
pub async fn run(
    state: &AppState,
    key: Option<String>,
    command: &impl Command,
) -> Result<Reply, CouchError> {
    for _ in 0..ATTEMPTS {
        let mut attempt = Attempt {
            state: state.clone(),
            versions: BTreeMap::new(),
        };
        let decision = command.decide(&mut attempt).await?;
        if decision.writes.is_empty() {
            return Ok(decision.reply);
        }
        let mut request = AppendRequest::new().metadata(Metadata {
            correlation_id: Some(uuid::Uuid::now_v7()),
            idempotency_key: key.clone(),
            ..Metadata::default()
        });
        for (stream, events) in decision.writes {
            let version = expected(attempt.version(&stream));
            request = request.stream(stream, version, events);
        }
        for stream in decision.checks {
            let version = expected(attempt.version(&stream));
            request = request.stream(stream, version, Vec::new());
        }
        match state.store.append(request).await {
            Ok(appended) => {
                state.wait_for(NAME, appended.last_position).await;
                return Ok(decision.reply);
            }
            Err(AppendError::WrongExpectedVersion { stream, .. }) => {
                tracing::debug!(%stream, "lost a race; deciding again");
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(CouchError::conflict())
}

/// Encodes typed events for the log.
pub fn encode<E: palimpsest_events::DomainEvent>(
    events: &[E],
) -> Result<Vec<NewEvent>, CouchError> {
    events
        .iter()
        .map(|e| e.encode().map_err(CouchError::internal))
        .collect()
}
