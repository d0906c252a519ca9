//! Sync Gateway's admin maintenance of documents as commands on their streams: a purge takes
//! documents out of the read model entirely, a resync reruns the current sync function over
//! every document's winning revision. The log keeps every revision and records the purge or the
//! new routing.

use super::{DocState, Routing};
use crate::body::Outgoing;
use crate::command::{Attempt, Decided, Decision, DocsCommand, Reply, call, encode, run};
use crate::database::DbState;
use crate::http::error::CouchError;
use crate::streams;
use crate::sync::{self, Writer};
use axum::http::StatusCode;
use palimpsest_events::{NewEvent, StreamName};
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use serde_json::{Value, json};
use uuid::Uuid;

/// The database's live incarnation and its state, or CouchDB's 404.
async fn live(attempt: &Attempt, db: &str) -> Result<(StreamName, Uuid, DbState), CouchError> {
    let stream = streams::database(db).map_err(|e| CouchError::bad_request(e.to_string()))?;
    let state: DbState = attempt.load(&stream).await?;
    let (incarnation, _) = state.live.ok_or_else(CouchError::no_database)?;
    Ok((stream, incarnation, state))
}

/// A document's stream and state; `None` for an id that names no stream.
async fn load(
    attempt: &Attempt,
    incarnation: Uuid,
    doc_id: &str,
) -> Result<Option<(StreamName, DocState)>, CouchError> {
    let Ok(stream) = streams::document(incarnation, doc_id) else {
        return Ok(None);
    };
    let state: DocState = attempt.load(&stream).await?;
    Ok(Some((stream, state)))
}

/// The purge of the named documents of one database, as one command.
struct Purge {
    db: String,
    ids: Vec<String>,
}

impl DocsCommand for Purge {
    fn decide<'a>(&'a self, attempt: &'a Attempt) -> Decided<'a> {
        Box::pin(async move {
            let (db_stream, incarnation, _) = live(attempt, &self.db).await?;
            let mut writes: Vec<(StreamName, Vec<NewEvent>)> = Vec::new();
            let mut purged = serde_json::Map::new();
            for doc_id in &self.ids {
                let Some((stream, state)) = load(attempt, incarnation, doc_id).await? else {
                    continue;
                };
                match super::purge(&self.db, doc_id, &state) {
                    Ok(events) => {
                        writes.push((stream, encode(&events)?));
                        purged.insert(doc_id.clone(), json!(["*"]));
                    }
                    Err(e) => tracing::info!(doc_id, reason = %e, "not purged"),
                }
            }
            let reply = Reply::json(StatusCode::OK, &json!({ "purged": purged }));
            let mut decision = Decision::new(reply).check(db_stream);
            for (stream, events) in writes {
                decision = decision.write(stream, events);
            }
            Ok(decision)
        })
    }
}

/// Purges the documents `ids` of `db` (those that name no document are skipped), as one
/// command; answers `{"purged": {"id": ["*"]}}`.
pub async fn purge_all(
    state: &AppState,
    request: &CommandRequest,
    db: String,
    ids: Vec<String>,
) -> Result<Reply, CouchError> {
    run(state, request, &Purge { db, ids }).await
}

/// One command of a resync: the documents of one chunk.
struct Resync {
    db: String,
    ids: Vec<String>,
}

/// The counts a resync command answers, summed by the call.
const COUNTS: [&str; 3] = ["docs_changed", "docs_processed", "docs_errored"];

/// The routing the sync function gives `doc_id`'s live winner now; `None` for a tombstone or a
/// document the function refuses or fails on (logged).
fn rerun(source: Option<&str>, doc_id: &str, state: &DocState) -> Option<Routing> {
    let winner = state.tree.winner().filter(|w| !w.deleted)?;
    let body = winner.body.as_deref().unwrap_or("{}");
    let doc = Outgoing::new(doc_id, &winner.rev.to_string(), body).finish();
    let admin = Writer {
        admin: true,
        ..Writer::default()
    };
    match sync::run_or_default(source, &doc, None, &admin) {
        Ok(outcome) => Some(Routing {
            channels: outcome.channels,
            access: outcome.access,
            roles: outcome.roles,
        }),
        Err(e) => {
            tracing::warn!(doc_id, error = %e, "resync: the sync function refused the document");
            None
        }
    }
}

impl DocsCommand for Resync {
    fn decide<'a>(&'a self, attempt: &'a Attempt) -> Decided<'a> {
        Box::pin(async move {
            let (db_stream, incarnation, db) = live(attempt, &self.db).await?;
            let mut writes: Vec<(StreamName, Vec<NewEvent>)> = Vec::new();
            let (mut processed, mut errored) = (0u64, 0u64);
            for doc_id in &self.ids {
                let Some((stream, state)) = load(attempt, incarnation, doc_id).await? else {
                    continue;
                };
                if state.tree.winner().is_none_or(|w| w.deleted) {
                    continue;
                }
                processed += 1;
                let Some(routing) = rerun(db.sync.as_deref(), doc_id, &state) else {
                    errored += 1;
                    continue;
                };
                let events = super::resync(&self.db, doc_id, &state, routing);
                if !events.is_empty() {
                    writes.push((stream, encode(&events)?));
                }
            }
            let reply = Reply::json(
                StatusCode::OK,
                &json!({"docs_changed": writes.len(), "docs_processed": processed, "docs_errored": errored}),
            );
            let mut decision = Decision::new(reply).check(db_stream);
            for (stream, events) in writes {
                decision = decision.write(stream, events);
            }
            Ok(decision)
        })
    }
}

/// How many documents one command of a resync reruns: each is a command of its own (the call
/// stays within the log's append limits whatever the database's size).
const RESYNC_CHUNK: usize = 200;

/// Reruns `db`'s sync function over the documents `ids`, a chunk of them per command under
/// the request's key; answers Sync Gateway's resync status with the summed counts.
pub async fn resync_all(
    state: &AppState,
    request: &CommandRequest,
    db: String,
    ids: Vec<String>,
) -> Result<Reply, CouchError> {
    let start_time = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    call(state, request, |steps| async move {
        let mut totals = [0u64; 3];
        // An empty database is one command all the same: it checks the database exists.
        let chunks: Vec<&[String]> = if ids.is_empty() {
            vec![&[]]
        } else {
            ids.chunks(RESYNC_CHUNK).collect()
        };
        for chunk in chunks {
            let command = Resync {
                db: db.clone(),
                ids: chunk.to_vec(),
            };
            let step = steps.next(chunk.join("\n").as_bytes());
            let reply = run(state, &step, &command).await?;
            let counts: Value = reply.json_body().map_err(CouchError::internal)?;
            for (total, name) in totals.iter_mut().zip(COUNTS) {
                *total += counts[name].as_u64().unwrap_or(0);
            }
        }
        let [changed, processed, errored] = totals;
        Ok(Reply::json(
            StatusCode::OK,
            &json!({
                "status": "completed",
                "start_time": start_time,
                "last_error": "",
                "docs_changed": changed,
                "docs_processed": processed,
                "docs_errored": errored,
            }),
        ))
    })
    .await
}
