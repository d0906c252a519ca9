//! records' commands through the platform's runner: their facts (actor, correlation), the
//! mapping of the runner's failures to records' coded errors, and the sealed replies records
//! keeps under an `Idempotency-Key` (they hold decrypted data: sealed with the site key, opened
//! only for a repeat by the same caller). A call of several commands (purges, import, key
//! rotation) keeps one such reply ([`call`]). One write operation of documents is
//! [`crate::document::command`].

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::projection::NAME;
use crate::seal::{Nonces, SiteKey};
use crate::streams::CONTEXT;
use axum::http::StatusCode;
use palimpsest_events::{DomainEvent, Metadata, NewEvent};
use palimpsest_web::command::{Command, CommandError, CommandRequest, Reply, Steps};
use serde_json::Value;

/// The content type of a reply stored sealed (what the log's reply store holds).
pub const SEALED_REPLY: &str = "application/vnd.palimpsest.records-sealed";

/// The runner's facts of a records command.
pub fn command<'a>(request: &'a CommandRequest, caller: &Caller) -> Command<'a> {
    Command {
        request,
        context: CONTEXT,
        projections: &[NAME],
        metadata: Metadata {
            actor: Some(caller.actor()),
            correlation_id: Some(uuid::Uuid::now_v7()),
            ..Metadata::default()
        },
    }
}

/// A platform or context failure as the records API answers it.
pub fn failure(e: CommandError<CodedError>) -> CodedError {
    match e.into_refusal() {
        Ok(refusal) => refusal,
        Err(platform) => platform.into(),
    }
}

/// A refusal inside a decider.
pub fn rejected(f: impl Into<CodedError>) -> CommandError<CodedError> {
    CommandError::Rejected(f.into())
}

/// An event ready to append.
pub fn encode<E: DomainEvent>(event: &E) -> Result<NewEvent, CommandError<CodedError>> {
    event
        .encode()
        .map_err(|e| rejected(CodedError::internal(e)))
}

/// What a kept reply seals: the result and the caller it is for (msgpack of this is the same
/// map as of `{"caller", "result"}`, what [`opened`] reads back).
#[derive(serde::Serialize)]
struct KeptReply<'a> {
    caller: String,
    result: &'a Value,
}

/// `{"result": result}` sealed for the reply store, with the caller it was for (the platform
/// keys replies by context, so a key reused by another caller must not get this answer) and an
/// IV drawn at the edge.
pub fn sealed_reply(
    key: &SiteKey,
    caller: &Caller,
    result: &Value,
    iv: [u8; 12],
) -> Result<Reply, CommandError<CodedError>> {
    let kept = KeptReply {
        caller: caller.actor(),
        result,
    };
    let body = key
        .seal_bytes(&kept, iv)
        .map_err(|e| rejected(CodedError::internal(e)))?;
    Ok(Reply::new(StatusCode::OK, SEALED_REPLY, body))
}

/// `result` sealed for `caller` under a fresh IV: the reply every records command stores.
pub fn sealed_for(
    records: &Records,
    caller: &Caller,
    result: Value,
) -> Result<Reply, CommandError<CodedError>> {
    let iv = Nonces::fresh(1)
        .take()
        .map_err(|e| rejected(CodedError::internal(e)))?;
    sealed_reply(&records.key, caller, &result, iv)
}

/// The reply as the client gets it: a sealed one opened back into JSON; a reply stored for
/// another caller is refused like a reused key.
pub fn opened(key: &SiteKey, caller: &Caller, reply: Reply) -> Result<Value, CodedError> {
    if reply.content_type != SEALED_REPLY {
        return Err(CodedError::internal(format!(
            "unexpected stored reply of type {}",
            reply.content_type
        )));
    }
    let body = key.open_bytes(&reply.body).map_err(CodedError::internal)?;
    if body["caller"] != Value::String(caller.actor()) {
        return Err(failure(CommandError::KeyReused));
    }
    Ok(body.get("result").cloned().unwrap_or(Value::Null))
}

/// Runs a call of several commands (purges, import, key rotation) under the request's key:
/// `work`'s commands take their requests from the [`Steps`] it is given, and its result is kept
/// sealed for `caller` under the key, so a repeat gets that very result and another caller
/// reusing the key is refused.
pub async fn call<F, Fut>(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    work: F,
) -> Result<Value, CodedError>
where
    F: FnOnce(Steps) -> Fut,
    Fut: std::future::Future<Output = Result<Value, CodedError>>,
{
    let reply = records
        .app
        .commands
        .run_call(request, CONTEXT, |steps| async move {
            let result = work(steps).await.map_err(CommandError::Rejected)?;
            sealed_for(records, caller, result)
        })
        .await
        .map_err(failure)?;
    opened(&records.key, caller, reply)
}
