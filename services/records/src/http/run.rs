//! Running an operation: load the documents' streams and the unique locks they touch, decide at
//! the operation's time, append every stream at the version read in one request, wait for the
//! read model, answer.
//!
//! A `REGVER` decides again with a new time; a stream that moved between load and append
//! (another writer, a lost unique race) decides again from fresh state, a few times, then
//! answers 409. A request repeated with its `Idempotency-Key` gets the first answer and appends
//! nothing: the key (scoped by caller) is stored with the events by the log, and the answer is
//! rebuilt from those events.
//!
//! This is the shape of the platform's command runner (issue 7): when it lands, the loop below
//! becomes its `run`, the deciders stay as they are.

use crate::document::{Prepared, View, Write, decide, prepare, unique_locks};
use crate::http::auth::Caller;
use crate::http::classes::Found;
use crate::http::context::Records;
use crate::http::failure::Failure;
use crate::projection::NAME;
use crate::seal::Nonces;
use crate::streams;
use palimpsest_events::records::{ClassEvent, DocumentEvent};
use palimpsest_events::{DomainEvent, ExpectedVersion, Metadata, NewEvent, RecordedEvent};
use palimpsest_log::{AppendError, AppendRequest};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

/// How many times an operation is decided before giving up.
const ATTEMPTS: usize = 8;

/// The largest sealed data (base64url) an event may carry: the relay's 1 MiB NATS limit with
/// room for the envelope.
const MAX_SEALED: usize = 800_000;

/// One operation to run: its writes (classes already found) and who asks.
pub struct Operation<'a> {
    /// Who asks.
    pub caller: &'a Caller,
    /// The request's `Idempotency-Key`, if any.
    pub idempotency_key: Option<String>,
    /// The writes, with the classes they use.
    pub writes: Vec<(Found, Write)>,
}

/// The version a stream must still be at.
pub fn expected(version: i64) -> ExpectedVersion {
    if version == 0 {
        ExpectedVersion::NoStream
    } else {
        ExpectedVersion::Exact(version)
    }
}

/// Runs the operation; answers each write's stored data (with `pk`), `null` for a purge.
pub async fn run(records: &Records, op: Operation<'_>) -> Result<Vec<Value>, Failure> {
    let key = op
        .idempotency_key
        .as_ref()
        .map(|k| format!("records:{}:{k}", op.caller.actor()));
    if let Some(key) = &key
        && let Some(events) = replayed(records, key).await?
    {
        return replies(records, &events);
    }
    let pending: Vec<_> = op
        .writes
        .iter()
        .filter(|(found, _)| found.pending)
        .map(|(found, _)| found.class.clone())
        .collect();
    let writes: Vec<Write> = op.writes.into_iter().map(|(_, w)| w).collect();
    let prepared = prepare(writes)?;
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let time = records.now();
        let view = load(records, &prepared).await?;
        let mut nonces = Nonces::fresh(2 * prepared.len());
        let outcome = match decide(time, &prepared, &view.view, &records.key, &mut nonces) {
            Ok(outcome) => outcome,
            Err(e @ crate::RecordsError::Regver { stored, .. }) => {
                let wait = (stored + 1 - records.now()).clamp(1, 50) as u64;
                tokio::time::sleep(Duration::from_millis(wait)).await;
                last = Some(Failure::from(e));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let mut request = AppendRequest::new().metadata(Metadata {
            actor: Some(op.caller.actor()),
            correlation_id: Some(uuid::Uuid::now_v7()),
            idempotency_key: key.clone(),
            ..Metadata::default()
        });
        for (doc, event) in &outcome.documents {
            check_size(event)?;
            let version = view.doc_versions.get(doc).copied().unwrap_or(0);
            request = request.stream(doc.stream(), expected(version), vec![encode(event)?]);
        }
        for (lock, events) in &outcome.uniques {
            let version = view.unique_versions.get(lock).copied().unwrap_or(0);
            let events = events.iter().map(encode).collect::<Result<_, _>>()?;
            request = request.stream(lock.stream(), expected(version), events);
        }
        let mut declared = std::collections::HashSet::new();
        for class in &pending {
            if declared.insert(class.clazz.clone()) {
                let event = encode(&ClassEvent::ClassDeclared {
                    declaration: (**class).clone(),
                })?;
                request = request.stream(streams::class(&class.clazz), ExpectedVersion::NoStream, vec![event]);
            }
        }
        match records.app.store.append(request).await {
            Ok(appended) => {
                records.app.wait_for(NAME, appended.last_position).await;
                if appended.replayed {
                    return replies(records, &appended.events);
                }
                return Ok(outcome.replies);
            }
            Err(e @ AppendError::WrongExpectedVersion { .. }) => {
                tracing::debug!(error = %e, "records: operation raced, deciding again");
                last = Some(Failure::from(e));
                continue;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.unwrap_or_else(|| Failure::internal("operation not attempted")))
}

/// The documents' and locks' states at the versions read.
async fn load(records: &Records, prepared: &[Prepared]) -> Result<Loaded, Failure> {
    let store = &records.app.store;
    let mut loaded = Loaded::default();
    for p in prepared {
        let (state, version) = records.docs.load(store, &p.key.stream()).await?;
        loaded.doc_versions.insert(p.key.clone(), version);
        loaded.view.docs.insert(p.key.clone(), state);
    }
    for lock in unique_locks(prepared, &loaded.view.docs) {
        let (state, version) = records.uniques.load(store, &lock.stream()).await?;
        loaded.unique_versions.insert(lock.clone(), version);
        loaded.view.uniques.insert(lock, state);
    }
    Ok(loaded)
}

/// States with the stream versions they were read at.
#[derive(Default)]
struct Loaded {
    view: View,
    doc_versions: HashMap<crate::streams::DocKey, i64>,
    unique_versions: HashMap<crate::streams::UniqueKey, i64>,
}

fn encode<E: DomainEvent>(event: &E) -> Result<NewEvent, Failure> {
    event.encode().map_err(Failure::internal)
}

fn check_size(event: &DocumentEvent) -> Result<(), Failure> {
    let size = match event {
        DocumentEvent::DocumentCreated { row } | DocumentEvent::DocumentUpdated { row, .. } => {
            row.data.len()
        }
        _ => 0,
    };
    if size > MAX_SEALED {
        return Err(Failure::bad(format!(
            "data is too large: {size} bytes sealed, at most {MAX_SEALED}"
        )));
    }
    Ok(())
}

/// The events a previous run of this key appended, if any.
async fn replayed(records: &Records, key: &str) -> Result<Option<Vec<RecordedEvent>>, Failure> {
    let client = records.app.store.pool().get().await?;
    let row = client
        .query_opt(
            "SELECT first_position, last_position FROM log.idempotency WHERE key = $1",
            &[&key],
        )
        .await?;
    let Some(row) = row else { return Ok(None) };
    let (first, last): (i64, i64) = (row.get(0), row.get(1));
    let events = records
        .app
        .store
        .read_all(first - 1, last - first + 1)
        .await?;
    Ok(Some(events))
}

/// The answer of a recorded operation: each document event's data, opened.
fn replies(records: &Records, events: &[RecordedEvent]) -> Result<Vec<Value>, Failure> {
    let mut out = Vec::new();
    for event in events.iter().filter(|e| e.stream.category == "doc") {
        let reply = match DocumentEvent::decode(event).map_err(Failure::internal)? {
            DocumentEvent::DocumentCreated { row }
            | DocumentEvent::DocumentUpdated { row, .. }
            | DocumentEvent::DocumentZombified { row } => {
                let data = records.key.open(&row.data).map_err(Failure::internal)?;
                crate::document::decide::with_pk(data, &row.pk)
            }
            DocumentEvent::DocumentPurged { .. } => Value::Null,
        };
        out.push(reply);
    }
    Ok(out)
}
