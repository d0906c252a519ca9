//! The docs context on the platform's command runner: each write is a [`DocsCommand`] that
//! loads the streams it reads through the runner's attempt and decides; the runner appends,
//! retries, keeps Idempotency-Key replies and waits for the `docs` read model. Platform errors
//! become CouchDB errors here, in one place.

use crate::http::error::CouchError;
use crate::phases::Phases;
use crate::projection::NAME;
use crate::streams::CONTEXT;
use axum::http::StatusCode;
use palimpsest_events::{Metadata, NewEvent};
use palimpsest_web::AppState;
use palimpsest_web::PlatformError;
pub use palimpsest_web::command::{Attempt, Decision};
use palimpsest_web::command::{Command, CommandError, CommandRequest, LoadError, Steps};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

pub use palimpsest_web::command::Reply;

/// What one try of a command returns.
pub type Decided<'a> = Pin<Box<dyn Future<Output = Result<Decision, CouchError>> + Send + 'a>>;

/// A write of the docs context: loads what it reads through the attempt and decides.
pub trait DocsCommand: Send + Sync {
    /// One try: load, decide, say what to write and what to answer.
    fn decide<'a>(&'a self, attempt: &'a Attempt) -> Decided<'a>;
}

/// A JSON answer whose text is already made.
pub fn text_reply(status: StatusCode, body: String) -> Reply {
    Reply::new(status, "application/json", body)
}

/// Runs `command` through the platform's runner.
pub async fn run(
    state: &AppState,
    request: &CommandRequest,
    command: &impl DocsCommand,
) -> Result<Reply, CouchError> {
    run_inner(state, request, command, None).await
}

/// [`run`], lapping `phases` at the runner's return as `append_and_wait`: the time from the
/// last decision's end (the runner's append, its read-your-writes wait and the reply kept under
/// the key), so a route's budget tells its decision apart from what the platform does after.
pub async fn run_timed(
    state: &AppState,
    request: &CommandRequest,
    command: &impl DocsCommand,
    phases: &mut Phases,
) -> Result<Reply, CouchError> {
    let decided = std::sync::Mutex::new(None);
    let reply = run_inner(state, request, command, Some(&decided)).await;
    if let Ok(Some(at)) = decided.into_inner() {
        phases.resume_at(at);
    }
    phases.lap("append_and_wait");
    reply
}

/// [`run`], noting in `decided` (when given) when each decision ended.
async fn run_inner(
    state: &AppState,
    request: &CommandRequest,
    command: &impl DocsCommand,
    decided: Option<&std::sync::Mutex<Option<Instant>>>,
) -> Result<Reply, CouchError> {
    let facts = Command {
        request,
        context: CONTEXT,
        projections: &[NAME],
        metadata: Metadata {
            correlation_id: Some(uuid::Uuid::now_v7()),
            // The caller the request's scope identified: `admin`, `user:<name>` or `guest`.
            actor: crate::access::scope::actor(),
            ..Metadata::default()
        },
    };
    state
        .commands
        .run(facts, |attempt| async move {
            let decision = command.decide(&attempt).await;
            if let Some(Ok(mut at)) = decided.map(|d| d.lock()) {
                *at = Some(Instant::now());
            }
            decision.map_err(|refusal| {
                if attempt.assumed_new() {
                    // Decided on a stream taken as new without reading it: read it and decide
                    // again before answering a refusal (it may exist, and answer otherwise).
                    CommandError::retry(refusal, Duration::ZERO)
                } else {
                    CommandError::Rejected(refusal)
                }
            })
        })
        .await
        .map_err(from_command)
}

/// Runs a call of several commands under `request`'s key (the platform's `run_call`): `work`
/// takes each command's request from the [`Steps`] it is given; the call's answer is kept
/// under the key like a single command's.
pub async fn call<F, Fut>(
    state: &AppState,
    request: &CommandRequest,
    work: F,
) -> Result<Reply, CouchError>
where
    F: FnOnce(Steps) -> Fut,
    Fut: Future<Output = Result<Reply, CouchError>>,
{
    state
        .commands
        .run_call(request, CONTEXT, |steps| async move {
            work(steps).await.map_err(CommandError::Rejected)
        })
        .await
        .map_err(from_command)
}

/// A command's failure as CouchDB answers it: the refusal, or the platform's failure.
fn from_command(e: CommandError<CouchError>) -> CouchError {
    match e.into_refusal() {
        Ok(refusal) => refusal,
        Err(platform) => platform.into(),
    }
}

impl From<LoadError> for CouchError {
    fn from(e: LoadError) -> Self {
        PlatformError::from(e).into()
    }
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
