//! The pads context on the platform's command runner: loading the context's streams for a
//! command ([`Load`]), and [`Pads::run`], which hands a handler's pure decision to the runner
//! (expected versions, retries, the Idempotency-Key and read-your-writes live there) and
//! answers in Etherpad's envelope.
//!
//! A command handler is load → decide → answer:
//!
//! ```ignore
//! c.pads.run(&c.request, |load| async move {
//!     let pad = load.pad(pad_id).await?;
//!     let decision = decide(&pad, ...)?;
//!     Ok((decision, Data::null()))
//! }).await
//! ```

pub mod exports;
pub mod folding;
pub mod repository;

use crate::api::envelope::{Data, Failure, envelope};
use crate::domain::{Author, Authors, Decision, Group, Mapping, Pad, Session};
use crate::projection::NAME as PROJECTION;
use deadpool_postgres::Pool;
use palimpsest_events::Metadata;
use palimpsest_events::pads::{self, CONTEXT};
use palimpsest_web::AppState;
use palimpsest_web::command::{Attempt, Command, CommandError, CommandRequest, Reply, StreamState};
use repository::{pad_from_store, stream};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// The context's shared state: the platform's, and the API key.
#[derive(Clone)]
pub struct Pads {
    /// The platform's state (log, command runner, read pool).
    pub state: AppState,
    /// The API key every call must carry.
    pub apikey: Arc<String>,
    /// Where heavy exports run: off the request threads, a bounded number at once.
    pub exports: exports::ExportPool,
}

/// Loads the context's streams for one try of a command (each read is remembered by the
/// runner with its version).
#[derive(Clone)]
pub struct Load {
    attempt: Attempt,
    read: Pool,
}

impl Load {
    /// Loads the state of stream (`category`, `key`); a key no stream can have (empty, too
    /// long) names nothing ever recorded.
    async fn state<S: StreamState + Default>(
        &self,
        category: &str,
        key: &str,
    ) -> Result<S, Failure> {
        match stream(category, key) {
            Ok(name) => self.attempt.load(&name).await.map_err(Failure::internal),
            Err(_) => Ok(S::default()),
        }
    }

    /// Pad `id`; a process that has never seen it starts from its store record.
    pub async fn pad(&self, id: &str) -> Result<Pad, Failure> {
        let Ok(name) = stream(pads::PAD, id) else {
            return Ok(Pad::absent(id));
        };
        let seed = pad_from_store(&self.read, id);
        self.attempt
            .load_seeded(&name, seed)
            .await
            .map_err(Failure::internal)
    }

    /// Author `id`.
    pub async fn author(&self, id: &str) -> Result<Author, Failure> {
        self.state(pads::AUTHOR, id).await
    }

    /// Group `id`.
    pub async fn group(&self, id: &str) -> Result<Group, Failure> {
        self.state(pads::GROUP, id).await
    }

    /// Session `id`.
    pub async fn session(&self, id: &str) -> Result<Session, Failure> {
        self.state(pads::SESSION, id).await
    }

    /// The token, author mapper or group mapper `key`.
    pub async fn mapping(&self, category: &'static str, key: &str) -> Result<Mapping, Failure> {
        self.state(category, key).await
    }

    /// The authors `ids` (skipping empty ids).
    pub async fn authors(&self, ids: impl IntoIterator<Item = String>) -> Result<Authors, Failure> {
        let mut map = HashMap::new();
        for id in ids {
            if id.is_empty() || map.contains_key(&id) {
                continue;
            }
            let author = self.author(&id).await?;
            map.insert(id, author);
        }
        Ok(Authors::new(map))
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
    ) -> Result<Data, Failure>
    where
        F: FnMut(Load) -> Fut,
        Fut: Future<Output = Result<(Decision, Data), Failure>>,
    {
        let command = Command {
            request,
            context: CONTEXT,
            projections: &[PROJECTION],
            metadata: Metadata {
                actor: Some("pads-api".into()),
                correlation_id: Some(uuid::Uuid::now_v7()),
                ..Metadata::default()
            },
        };
        let read = self.state.read.clone();
        let reply = self
            .state
            .commands
            .run(command, |attempt| {
                let decided = decide(Load {
                    attempt,
                    read: read.clone(),
                });
                async move {
                    let (decision, data) = decided.await.map_err(CommandError::Rejected)?;
                    runner_decision(&decision, &data).map_err(CommandError::Rejected)
                }
            })
            .await
            .map_err(failure)?;
        Data::from_reply(&reply)
    }
}

/// A pads decision as the runner takes it: each stream's events, the read-only streams to
/// check, and the envelope to answer.
fn runner_decision(
    decision: &Decision,
    data: &Data,
) -> Result<palimpsest_web::command::Decision, Failure> {
    let (status, body) = envelope(&Ok(data.clone()));
    let reply = Reply::new(status, crate::api::envelope::CONTENT_TYPE, body);
    let mut out = palimpsest_web::command::Decision::new(reply);
    for write in &decision.writes {
        let (category, key) = write.stream();
        let name = stream(category, key).map_err(|e| Failure::api(format!("invalid id: {e}")))?;
        out = out.write(name, write.encode().map_err(Failure::internal)?);
    }
    for (category, key) in &decision.checks {
        if let Ok(name) = stream(category, key) {
            out = out.check(name);
        }
    }
    Ok(out)
}

/// The runner's failures in Etherpad's envelope ([`Failure`]'s `From<PlatformError>`).
fn failure(e: CommandError<Failure>) -> Failure {
    match e.into_refusal() {
        Ok(refusal) => refusal,
        Err(platform) => platform.into(),
    }
}
