//! Running an operation through the platform's command runner: load the documents' streams and
//! the unique locks they touch, decide at the operation's time, append every stream at the
//! version read in one request, wait for the read model, answer.
//!
//! A `REGVER` decides again with a new time (the runner's retry); a stream that moved between
//! load and append (another writer, a lost unique race) decides again from fresh state; past the
//! runner's bound it is a 409 (`REGVER` if the clock never passed a stored version). Replies are
//! stored by the runner under the `Idempotency-Key`: since they hold decrypted data, records
//! stores them sealed with the site key ([`sealed_reply`]) and opens them before answering. A
//! call without a key has its reply stored nowhere, so its result is handed back as decided,
//! never sealed ([`UNSTORED_REPLY`]).

use crate::document::{
    DocumentState, Prepared, UniqueState, View, Write, decide, prepare, unique_locks,
};
use crate::error::RecordsError;
use crate::http::admin::{ClassState, decide_declaration};
use crate::http::auth::Caller;
use crate::http::classes::Found;
use crate::http::context::Records;
use crate::http::failure::CodedError;
use crate::projection::NAME;
use crate::seal::{Nonces, SiteKey};
use crate::streams::{self, CONTEXT};
use axum::http::StatusCode;
use palimpsest_events::records::{DocumentEvent, UniqueEvent};
use palimpsest_events::{DecodeError, DomainEvent, Metadata, NewEvent, RecordedEvent, StreamName};
use palimpsest_web::command::{
    Attempt, Command, CommandError, CommandRequest, Decision, Reply, Steps, StreamState,
};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// The content type of a reply stored sealed (what the log's reply store holds).
pub const SEALED_REPLY: &str = "application/vnd.palimpsest.records-sealed";

/// The content type of the placeholder reply of a call without `Idempotency-Key`: the runner
/// keeps it nowhere, so it carries nothing and the result goes back to the handler as decided.
const UNSTORED_REPLY: &str = "application/vnd.palimpsest.records-unstored";

/// The largest payload an event may carry: the relay's 1 MiB NATS limit with room for the
/// envelope.
const MAX_PAYLOAD: usize = 800_000;

impl StreamState for DocumentState {
    fn initial(_: &StreamName) -> Self {
        DocumentState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = crate::document::evolve(std::mem::take(self), &DocumentEvent::decode(event)?);
        Ok(())
    }
}

impl StreamState for UniqueState {
    fn initial(_: &StreamName) -> Self {
        UniqueState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = crate::document::evolve_unique(std::mem::take(self), &UniqueEvent::decode(event)?);
        Ok(())
    }
}

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
    match e {
        CommandError::Rejected(f) => f,
        CommandError::Conflict { stream } => RecordsError::Conflict(format!(
            "{stream} kept changing while the operation was decided; retry"
        ))
        .into(),
        CommandError::KeyReused => CodedError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            code: "BADREQUEST",
            message: "this Idempotency-Key was already used for a different request".into(),
        },
        CommandError::Refused(m) => CodedError::bad(m),
        CommandError::Unavailable(m) => CodedError::unavailable(m),
        CommandError::Internal(m) => CodedError::internal(m),
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

/// `{"result": result}` sealed for the reply store, with the caller it was for (the platform
/// keys replies by context, so a key reused by another caller must not get this answer) and an
/// IV drawn at the edge.
pub fn sealed_reply(
    key: &SiteKey,
    caller: &Caller,
    result: Value,
    iv: [u8; 12],
) -> Result<Reply, CommandError<CodedError>> {
    let body = key
        .seal_bytes(
            &serde_json::json!({ "caller": caller.actor(), "result": result }),
            iv,
        )
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
    sealed_reply(&records.key, caller, result, iv)
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

/// One operation to run: its writes (classes already found) and who asks.
pub struct Operation<'a> {
    /// Who asks.
    pub caller: &'a Caller,
    /// The request's idempotency facts.
    pub request: &'a CommandRequest,
    /// The writes, with the classes they use.
    pub writes: Vec<(Found, Write)>,
    /// Answer the one write's data rather than the list of every write's.
    pub single: bool,
}

/// Runs the operation; answers each write's stored data (with `pk`), `null` for a purge.
pub async fn run(records: &Records, op: Operation<'_>) -> Result<Value, CodedError> {
    let pending: Vec<_> = op
        .writes
        .iter()
        .filter(|(found, _)| found.pending)
        .map(|(found, _)| found.class.clone())
        .collect();
    let writes: Vec<Write> = op.writes.into_iter().map(|(_, w)| w).collect();
    let prepared = prepare(writes)?;
    let regver: Arc<Mutex<Option<RecordsError>>> = Arc::default();
    let unstored: Arc<Mutex<Option<Value>>> = Arc::default();
    let keyed = op.request.key().is_some();
    let (prepared, pending, single, regver_seen, decided) =
        (&prepared, &pending, op.single, &regver, &unstored);
    let reply = records
        .app
        .commands
        .run(command(op.request, op.caller), |attempt| async move {
            let view = load(&attempt, prepared).await?;
            let time = records.now();
            let mut nonces = Nonces::fresh(2 * prepared.len() + 1);
            let outcome = match decide(time, prepared, &view, &records.key, &mut nonces) {
                Ok(outcome) => outcome,
                Err(e @ RecordsError::Regver { .. }) => {
                    let stream = streams::parse_doc(regver_key(&e))
                        .map(|k| k.stream())
                        .unwrap_or_else(|| streams::class("Regver"));
                    if let Ok(mut seen) = regver_seen.lock() {
                        *seen = Some(e);
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    return Err(CommandError::Conflict { stream });
                }
                // Decided on a document taken as new without reading it: read it and decide
                // again before answering a refusal (it may exist: EXISTS, not what this saw).
                Err(_) if attempt.assumed_new() => {
                    let stream = prepared
                        .first()
                        .map(|p| p.key.stream())
                        .unwrap_or_else(|| streams::class("Document"));
                    return Err(CommandError::Conflict { stream });
                }
                Err(e) => return Err(rejected(e)),
            };
            let result = if single {
                outcome.replies.first().cloned().unwrap_or(Value::Null)
            } else {
                Value::Array(outcome.replies.clone())
            };
            let iv = nonces
                .take()
                .map_err(|e| rejected(CodedError::internal(e)))?;
            let (reply, unsealed) = if keyed {
                (sealed_reply(&records.key, op.caller, result, iv)?, None)
            } else {
                let reply = Reply::new(StatusCode::OK, UNSTORED_REPLY, Vec::new());
                (reply, Some(result))
            };
            let mut decision = Decision::new(reply);
            for (doc, event) in &outcome.documents {
                let event = encode(event)?;
                check_size(&event).map_err(rejected)?;
                decision = decision.write(doc.stream(), vec![event]);
            }
            for (lock, events) in &outcome.uniques {
                let events = events.iter().map(encode).collect::<Result<_, _>>()?;
                decision = decision.write(lock.stream(), events);
            }
            for class in pending {
                let stream = streams::class(&class.clazz);
                let recorded: ClassState = attempt.load(&stream).await?;
                let events = decide_declaration(class, &recorded).map_err(rejected)?;
                let events = events.iter().map(encode).collect::<Result<Vec<_>, _>>()?;
                decision = decision.write(stream, events);
            }
            // The last decision is the one the runner appended: its result is the answer.
            if let Ok(mut slot) = decided.lock() {
                *slot = unsealed;
            }
            Ok(decision)
        })
        .await;
    match reply {
        // Without a key there is no stored reply: the answer is the decision's result.
        Ok(_) if !keyed => unstored
            .lock()
            .ok()
            .and_then(|mut slot| slot.take())
            .ok_or_else(|| CodedError::internal("the operation's result was not kept")),
        Ok(reply) => opened(&records.key, op.caller, reply),
        Err(CommandError::Conflict { stream }) => {
            let seen = regver.lock().ok().and_then(|mut s| s.take());
            match seen {
                Some(e) if stream.category == "doc" => Err(e.into()),
                _ => Err(failure(CommandError::Conflict { stream })),
            }
        }
        Err(e) => Err(failure(e)),
    }
}

fn regver_key(e: &RecordsError) -> &str {
    match e {
        RecordsError::Regver { key, .. } => key,
        _ => "",
    }
}

/// The documents' and locks' states, read through the attempt (which records their versions).
async fn load(attempt: &Attempt, prepared: &[Prepared]) -> Result<View, CommandError<CodedError>> {
    let mut view = View::default();
    for p in prepared {
        let stream = p.key.stream();
        // A creation expects its document absent: it need not read it first.
        let state: DocumentState = match (&p.change, p.read) {
            (Some(_), None) => attempt.load_expecting_new(&stream).await?,
            _ => attempt.load(&stream).await?,
        };
        view.docs.insert(p.key.clone(), state);
    }
    for lock in unique_locks(prepared, &view.docs) {
        let state: UniqueState = attempt.load(&lock.stream()).await?;
        view.uniques.insert(lock, state);
    }
    Ok(view)
}

fn check_size(event: &NewEvent) -> Result<(), CodedError> {
    let size = palimpsest_log::limits::json_len(&event.payload);
    if size > MAX_PAYLOAD {
        return Err(CodedError::bad(format!(
            "the document is too large: its event would be {size} bytes, at most {MAX_PAYLOAD}"
        )));
    }
    Ok(())
}
