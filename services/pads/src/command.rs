//! The pads context on the platform's command runner: loading the context's streams for a
//! command ([`Load`]; each aggregate's `command.rs` adds the loading of its own stream), and
//! [`Pads::run`], which hands a command's pure outcome to the runner (expected versions,
//! retries, the Idempotency-Key and read-your-writes live there) and answers in Etherpad's
//! envelope.
//!
//! A command is load → decide, in the `command.rs` of the aggregate it writes; its handler in
//! [`crate::http`] reads the parameters, runs it here and gives the answer's `data`:
//!
//! ```ignore
//! c.pads.run(&c.request, |load| async move {
//!     let outcome = pad::command::delete_pad(&load, id).await?;
//!     Ok((outcome, Data::null()))
//! }).await
//! ```

use crate::export::pool::ExportPool;
use crate::http::envelope::{self, Data, EnvelopeError, envelope};
use crate::outcome::Outcome;
use crate::projection::NAME as PROJECTION;
use crate::streams::stream;
use deadpool_postgres::Pool;
use palimpsest_events::Metadata;
use palimpsest_events::pads::CONTEXT;
use palimpsest_web::AppState;
use palimpsest_web::command::{
    Attempt, Command, CommandError, CommandRequest, Decision, Reply, StreamState,
};
use std::future::Future;
use std::sync::Arc;

/// `Metadata.actor` of every pads event: Etherpad's API has one principal, the holder of its
/// API key (the ext routes are authorized by that key too); the author a call acts for is a
/// claim of the request, kept in the payload as Etherpad keeps it, not an authenticated name.
pub const API_KEY_HOLDER: &str = "apikey";

/// The context's shared state: the platform's, and the API key.
#[derive(Clone)]
pub struct Pads {
    /// The platform's state (log, command runner, read pool).
    pub state: AppState,
    /// The API key every call must carry.
    pub apikey: Arc<String>,
    /// Where heavy exports run: off the request threads, a bounded number at once.
    pub exports: ExportPool,
}

/// Loads the context's streams for one try of a command (each read is remembered by the
/// runner with its version).
#[derive(Clone)]
pub struct Load {
    pub(crate) attempt: Attempt,
    pub(crate) read: Pool,
}

impl Load {
    /// Loads the state of stream (`category`, `key`); a key no stream can have (empty, too
    /// long) names nothing ever recorded.
    pub(crate) async fn state<S: StreamState + Default>(
        &self,
        category: &str,
        key: &str,
    ) -> Result<S, EnvelopeError> {
        match stream(category, key) {
            Ok(name) => self
                .attempt
                .load(&name)
                .await
                .map_err(EnvelopeError::internal),
            Err(_) => Ok(S::default()),
        }
    }
}

impl Pads {
    /// Runs a command: `decide` loads what it reads through [`Load`] and returns its decision
    /// with the `data` to answer; the runner appends it (retrying from fresh state when a
    /// stream moved) and the answer is Etherpad's envelope, kept under the Idempotency-Key.
    pub async fn run<F, Fut>(
        &self,
        request: &CommandRequest,
        mut decide: F,
    ) -> Result<Data, EnvelopeError>
    where
        F: FnMut(Load) -> Fut,
        Fut: Future<Output = Result<(Outcome, Data), EnvelopeError>>,
    {
        let command = Command {
            request,
            context: CONTEXT,
            projections: &[PROJECTION],
            metadata: Metadata {
                actor: Some(API_KEY_HOLDER.into()),
                correlation_id: Some(uuid::Uuid::now_v7()),
                ..Metadata::default()
            },
        };
        // The write side reads the read database itself, never a replica (decision 0022).
        let read = self.state.read.read_database().clone();
        let reply = self
            .state
            .commands
            .run(command, |attempt| {
                let decided = decide(Load {
                    attempt,
                    read: read.clone(),
                });
                async move {
                    let (outcome, data) = decided.await.map_err(CommandError::Rejected)?;
                    runner_decision(&outcome, &data).map_err(CommandError::Rejected)
                }
            })
            .await
            .map_err(failure)?;
        Data::from_reply(&reply)
    }
}

/// A pads outcome as the runner takes it: each stream's events, the read-only streams to
/// check, and the envelope to answer.
fn runner_decision(outcome: &Outcome, data: &Data) -> Result<Decision, EnvelopeError> {
    let (status, body) = envelope(&Ok(data.clone()));
    let reply = Reply::new(status, envelope::CONTENT_TYPE, body);
    let mut out = Decision::new(reply);
    for write in &outcome.writes {
        let (category, key) = write.stream();
        let name =
            stream(category, key).map_err(|e| EnvelopeError::api(format!("invalid id: {e}")))?;
        out = out.write(name, write.encode().map_err(EnvelopeError::internal)?);
    }
    for (category, key) in &outcome.checks {
        if let Ok(name) = stream(category, key) {
            out = out.check(name);
        }
    }
    Ok(out)
}

/// The runner's failures in Etherpad's envelope ([`EnvelopeError`]'s `From<PlatformError>`).
fn failure(e: CommandError<EnvelopeError>) -> EnvelopeError {
    match e.into_refusal() {
        Ok(refusal) => refusal,
        Err(platform) => platform.into(),
    }
}
