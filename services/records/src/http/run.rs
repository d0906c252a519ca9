//! Running an operation through the platform's command runner: load the documents' streams and
//! the unique locks they touch, decide at the operation's time, append every stream at the
//! version read in one request, wait for the read model, answer.
//!
//! A `REGVER` asks the runner to decide again a millisecond later, with a new time
//! ([`CommandError::Retry`]); a stream that moved between load and append (another writer, a
//! lost unique race) decides again from fresh state; past the runner's bound it is the
//! `REGVER` itself, or a 409. Replies are stored by the runner under the `Idempotency-Key`:
//! since they hold decrypted data, records stores them sealed with the site key
//! ([`sealed_reply`]) and opens them only for a repeat. The result itself comes back from the
//! runner as the decision's value ([`Answer`]); a call without a key keeps no reply at all.

use crate::document::{
    DocumentState, Outcome, Prepared, UniqueState, View, Write, decide, prepare, unique_locks,
};
use crate::error::RecordsError;
use crate::http::admin::{ClassState, decide_declaration};
use crate::http::auth::Caller;
use crate::http::classes::Found;
use crate::http::context::Records;
use crate::http::failure::Failure;
use crate::projection::NAME;
use crate::seal::{Nonces, SiteKey};
use crate::streams::{self, CONTEXT};
use axum::http::StatusCode;
use palimpsest_events::records::ClassDeclaration;
use palimpsest_events::{DomainEvent, Metadata, NewEvent};
use palimpsest_web::command::{
    Answer, Attempt, Command, CommandError, CommandRequest, Decision, Reply, Steps,
};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

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
pub fn failure(e: CommandError<Failure>) -> Failure {
    match e.into_refusal() {
        Ok(refusal) => refusal,
        Err(platform) => platform.into(),
    }
}

/// A refusal inside a decider.
pub fn rejected(f: impl Into<Failure>) -> CommandError<Failure> {
    CommandError::Rejected(f.into())
}

/// An event ready to append.
pub fn encode<E: DomainEvent>(event: &E) -> Result<NewEvent, CommandError<Failure>> {
    event.encode().map_err(|e| rejected(Failure::internal(e)))
}

/// `{"result": result}` sealed for the reply store, with the caller it was for (the platform
/// keys replies by context, so a key reused by another caller must not get this answer) and an
/// IV drawn at the edge.
pub fn sealed_reply(
    key: &SiteKey,
    caller: &Caller,
    result: Value,
    iv: [u8; 12],
) -> Result<Reply, CommandError<Failure>> {
    let body = key
        .seal_bytes(
            &serde_json::json!({ "caller": caller.actor(), "result": result }),
            iv,
        )
        .map_err(|e| rejected(Failure::internal(e)))?;
    Ok(Reply::new(StatusCode::OK, SEALED_REPLY, body))
}

/// `result` sealed for `caller` under a fresh IV: the reply every records command stores.
pub fn sealed_for(
    records: &Records,
    caller: &Caller,
    result: Value,
) -> Result<Reply, CommandError<Failure>> {
    let iv = Nonces::fresh(1)
        .take()
        .map_err(|e| rejected(Failure::internal(e)))?;
    sealed_reply(&records.key, caller, result, iv)
}

/// The reply as the client gets it: a sealed one opened back into JSON; a reply stored for
/// another caller is refused like a reused key.
pub fn opened(key: &SiteKey, caller: &Caller, reply: Reply) -> Result<Value, Failure> {
    if reply.content_type != SEALED_REPLY {
        return Err(Failure::internal(format!(
            "unexpected stored reply of type {}",
            reply.content_type
        )));
    }
    let body = key.open_bytes(&reply.body).map_err(Failure::internal)?;
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
) -> Result<Value, Failure>
where
    F: FnOnce(Steps) -> Fut,
    Fut: std::future::Future<Output = Result<Value, Failure>>,
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
pub async fn run(records: &Records, op: Operation<'_>) -> Result<Value, Failure> {
    let pending: Vec<Arc<ClassDeclaration>> = op
        .writes
        .iter()
        .filter(|(found, _)| found.pending)
        .map(|(found, _)| found.class.clone())
        .collect();
    let writes: Vec<Write> = op.writes.into_iter().map(|(_, w)| w).collect();
    let prepared = prepare(writes)?;
    let keyed = op.request.key().is_some();
    let (prepared, pending, caller, single) = (&prepared, &pending, op.caller, op.single);
    let answer = records
        .app
        .commands
        .run_for(command(op.request, caller), |attempt| async move {
            let view = load(&attempt, prepared).await?;
            let mut nonces = Nonces::fresh(2 * prepared.len() + 1);
            let outcome = match decide(records.now(), prepared, &view, &records.key, &mut nonces) {
                Ok(outcome) => outcome,
                // The clock has not passed a stored version yet: decide again at a new time.
                Err(e @ RecordsError::Regver { .. }) => {
                    return Err(CommandError::retry(e.into(), REGVER_PAUSE));
                }
                // Decided on a document taken as new without reading it: read it and decide
                // again before answering a refusal (it may exist: EXISTS, not what this saw).
                Err(e) if attempt.assumed_new() => {
                    return Err(CommandError::retry(e.into(), Duration::ZERO));
                }
                Err(e) => return Err(rejected(e)),
            };
            let result = if single {
                outcome.replies.first().cloned().unwrap_or(Value::Null)
            } else {
                Value::Array(outcome.replies.clone())
            };
            let decision = if keyed {
                let iv = nonces.take().map_err(|e| rejected(Failure::internal(e)))?;
                Decision::new(sealed_reply(&records.key, caller, result.clone(), iv)?)
                    .with_value(result)
            } else {
                Decision::unstored(result)
            };
            with_writes(decision, &attempt, &outcome, pending).await
        })
        .await
        .map_err(failure)?;
    match answer {
        Answer::Decided { value, .. } => Ok(value),
        Answer::Repeated(reply) => opened(&records.key, caller, reply),
    }
}

/// How long a `REGVER` waits before deciding again: the clock's resolution, so that the next
/// time is past the one that was not.
const REGVER_PAUSE: Duration = Duration::from_millis(1);

/// `decision` with the operation's writes: each document's event, each unique lock's, and the
/// declaration of every class this operation uses first.
async fn with_writes(
    mut decision: Decision<Value>,
    attempt: &Attempt,
    outcome: &Outcome,
    pending: &[Arc<ClassDeclaration>],
) -> Result<Decision<Value>, CommandError<Failure>> {
    for (doc, event) in &outcome.documents {
        decision = decision.write(doc.stream(), vec![encode(event)?]);
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
    Ok(decision)
}

/// The documents' and locks' states, read through the attempt (which records their versions).
async fn load(attempt: &Attempt, prepared: &[Prepared]) -> Result<View, CommandError<Failure>> {
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
