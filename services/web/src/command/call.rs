//! A call made of several commands (a bulk purge, an import in chunks, a key rotation) answered
//! once under its `Idempotency-Key`, like a single command.
//!
//! The call holds the key's turn in this process from start to answer (a concurrent repeat
//! waits for it, then gets its answer). Each of its commands runs through the runner as a
//! *step* keyed `"{key}#{n}.{identity}"` with the call's fingerprint, so a call retried after a
//! crash replays the steps that were appended (the same step: same position in the call, same
//! work) and carries out the rest. Its final answer is then stored under the key itself by an
//! append with no event ([`palimpsest_log::AppendRequest::stores_answer_only`]): a repeat is
//! answered from the log and appends nothing; the key reused for another request is a 422.

use super::decision::Reply;
use super::error::{CommandError, log_error};
use super::request::CommandRequest;
use super::runner::CommandRunner;
use axum::http::StatusCode;
use palimpsest_events::Metadata;
use palimpsest_log::{AppendError, AppendRequest, StoredReply};
use sha2::{Digest, Sha256};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The requests of a call's commands, one per step (a cheap handle: clones count steps
/// together). A call without an Idempotency-Key gives keyless steps.
#[derive(Clone, Debug)]
pub struct Steps {
    call: Option<(String, Vec<u8>)>,
    taken: Arc<AtomicU64>,
}

impl Steps {
    /// The request of the call's next command. `identity` names its work (e.g. the documents
    /// of a chunk): a retried call whose n-th step is the same work replays it, while other
    /// work at that place (the list it was cut from changed meanwhile) runs as new.
    pub fn next(&self, identity: &[u8]) -> CommandRequest {
        let n = self.taken.fetch_add(1, Ordering::Relaxed);
        match &self.call {
            None => CommandRequest::none(),
            Some((key, fingerprint)) => {
                let work = hex::encode(&Sha256::digest(identity)[..8]);
                CommandRequest::keyed(format!("{key}#{n}.{work}"), fingerprint.clone())
            }
        }
    }
}

impl CommandRunner {
    /// Runs a call of several commands under `request`'s key: answers a repeat with the stored
    /// answer (another request under the key: [`CommandError::KeyReused`]); otherwise runs
    /// `work`, whose commands take their requests from the [`Steps`] it is given, and keeps
    /// its answer under the key. A refusal is not kept (as for a single command): a retry runs
    /// again, replaying the steps already appended.
    #[tracing::instrument(name = "call", skip_all, fields(context = context, key = request.key()))]
    pub async fn run_call<E, F, Fut>(
        &self,
        request: &CommandRequest,
        context: &'static str,
        work: F,
    ) -> Result<Reply, CommandError<E>>
    where
        F: FnOnce(Steps) -> Fut,
        Fut: Future<Output = Result<Reply, CommandError<E>>>,
    {
        let Some(key) = request.key().map(|k| format!("{context}:{k}")) else {
            return work(Steps {
                call: None,
                taken: Arc::default(),
            })
            .await;
        };
        let _turn = self.turn(&key).await;
        if let Some(stored) = self.stored_reply(&key, request).await? {
            return Ok(stored);
        }
        let fingerprint = request.fingerprint();
        let steps = Steps {
            call: request.key().map(|k| (k.to_owned(), fingerprint.clone())),
            taken: Arc::default(),
        };
        let reply = work(steps).await?;
        match self
            .keep_answer(&key, request, fingerprint, reply.clone())
            .await?
        {
            Kept::Ours => Ok(reply),
            Kept::First(first) => Ok(first),
        }
    }

    /// Stores `reply` alone under `key` (a call's final answer, or a single command's that
    /// changed nothing); says whether it was kept, or whose answer another process kept first.
    pub(super) async fn keep_answer<E>(
        &self,
        key: &str,
        request: &CommandRequest,
        fingerprint: Vec<u8>,
        reply: Reply,
    ) -> Result<Kept, CommandError<E>> {
        let append = AppendRequest::new()
            .metadata(Metadata {
                idempotency_key: Some(key.to_owned()),
                ..Metadata::default()
            })
            .reply(StoredReply {
                request_hash: fingerprint,
                status: reply.status.as_u16(),
                content_type: reply.content_type,
                body: reply.body.to_vec(),
            });
        match self.store.append(append).await {
            Ok(appended) if appended.replayed => match self.stored_reply(key, request).await? {
                Some(first) => Ok(Kept::First(first)),
                None => Err(CommandError::Internal(format!(
                    "the answer under {key} was stored and cannot be read"
                ))),
            },
            Ok(_) => Ok(Kept::Ours),
            Err(AppendError::Log(e)) => Err(log_error(e)),
            Err(other) => Err(CommandError::Internal(format!(
                "an answer under {key} was refused by the log: {other}"
            ))),
        }
    }
}

/// What became of an answer kept under a key.
pub(super) enum Kept {
    /// This one was kept.
    Ours,
    /// Another process kept its answer first: this is the answer.
    First(Reply),
}

/// The answer a call's step gives as a count (e.g. `{"changed": 3}`), read back by the call.
pub fn count_reply(count: u64) -> Reply {
    Reply::json(StatusCode::OK, &serde_json::json!({ "changed": count }))
}

/// The count of a step answered with [`count_reply`].
pub fn count_of<E>(reply: &Reply) -> Result<u64, CommandError<E>> {
    reply
        .json_body::<serde_json::Value>()
        .ok()
        .and_then(|body| body["changed"].as_u64())
        .ok_or_else(|| {
            tracing::error!(body = ?reply.body, "a step's answer is not a count");
            CommandError::Internal("a step's answer is not a count".into())
        })
}
