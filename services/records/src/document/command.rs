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

use crate::caller::Caller;
use crate::class::lookup::Found;
use crate::class::{ClassState, decide_declaration};
use crate::coded_error::CodedError;
use crate::command::{command, encode, failure, opened, rejected, sealed_reply};
use crate::context::Records;
use crate::document::{
    DocumentState, Outcome, Prepared, UniqueState, View, Write, decide, prepare, unique_locks,
};
use crate::error::RecordsError;
use crate::seal::Nonces;
use crate::streams;
use palimpsest_events::records::ClassDeclaration;
use palimpsest_web::command::{Answer, Attempt, CommandError, CommandRequest, Decision};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

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
                let iv = nonces
                    .take()
                    .map_err(|e| rejected(CodedError::internal(e)))?;
                Decision::new(sealed_reply(&records.key, caller, &result, iv)?).with_value(result)
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
) -> Result<Decision<Value>, CommandError<CodedError>> {
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
