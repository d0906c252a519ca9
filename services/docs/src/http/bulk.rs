//! The replicator's batch routes: `_bulk_docs`, `_revs_diff` (and [`super::bulk_get`]).

use super::error::CouchError;
use crate::access::auth;
use crate::body::{Incoming, Members};
use crate::command::Reply;
use crate::document::command::{Item, Shape, Write, check_id, write_timed};
use crate::local::batch::is_local;
use crate::phases::Phases;
use crate::read;
use crate::stored::StoredDoc;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use deadpool_postgres::Object;
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;

#[derive(Deserialize)]
struct BulkDocs {
    docs: Vec<Members>,
    #[serde(default)]
    new_edits: Option<bool>,
}

/// `POST /{db}/_bulk_docs` `{docs, new_edits?}`: every document in one append; each answered
/// on its own (`new_edits=false` answers only the failures, as CouchDB 3 does). A document
/// CouchDB cannot even read (an invalid id; with `new_edits=false`, no revision) fails the
/// whole request with a 400 before anything is decided, as CouchDB does. `_local/` documents
/// are saved (or deleted) as local documents.
pub async fn bulk_docs(
    State(state): State<AppState>,
    Path(db): Path<String>,
    headers: HeaderMap,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let mut phases = Phases::start("_bulk_docs");
    let writer = auth::caller_of(&state, &db, &headers).await?.writer();
    phases.lap("caller");
    let batch: BulkDocs = serde_json::from_slice(&body)
        .map_err(|e| CouchError::bad_request(format!("expected {{\"docs\": [...]}}: {e}")))?;
    let new_edits = batch.new_edits.unwrap_or(true);
    let mut items = Vec::with_capacity(batch.docs.len());
    for members in batch.docs {
        let doc = Incoming::from_members(members)?;
        let doc_id = doc
            .id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
        readable(&doc_id, &doc, new_edits)?;
        items.push(Item {
            doc_id,
            doc,
            attachment: None,
        });
    }
    phases.lap("parse");
    let write = Write {
        writer: &writer,
        db: &db,
        new_edits,
        shape: Shape::Bulk { new_edits },
    };
    write_timed(&state, &request, write, items, &mut phases).await
}

/// Refuses, for the whole batch, a document CouchDB could not read: an id it does not allow,
/// or (`new_edits=false`) no revision at all (a malformed one is that document's own error).
fn readable(doc_id: &str, doc: &Incoming, new_edits: bool) -> Result<(), CouchError> {
    if is_local(doc_id) {
        return Ok(());
    }
    check_id(doc_id)?;
    if !new_edits && doc.rev.is_none() && doc.revisions.is_none() {
        return Err(CouchError::bad_request(
            "_rev or _revisions is required with new_edits=false",
        ));
    }
    Ok(())
}

/// Loads the stored documents among `ids`, in one query ([`read::DOCUMENTS_BY_ID`]).
pub async fn load_many(
    client: &Object,
    db: &str,
    ids: &[String],
) -> Result<HashMap<String, StoredDoc>, CouchError> {
    // An id with U+0000 was never stored (the log refuses it) and Postgres text cannot hold it.
    let ids: Vec<&String> = ids.iter().filter(|id| read::storable(id)).collect();
    let statement = client.prepare_cached(read::DOCUMENTS_BY_ID).await?;
    let rows = client.query(&statement, &[&db, &ids]).await?;
    let mut out = HashMap::new();
    for row in rows {
        out.insert(row.get(0), StoredDoc::parse(row.get(1))?);
    }
    Ok(out)
}

/// `POST /{db}/_revs_diff` `{id: [revs]}`: the revisions the database lacks, per document.
pub async fn revs_diff(
    State(state): State<AppState>,
    Path(db): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let mut phases = Phases::start("_revs_diff");
    let request: HashMap<String, Vec<String>> = serde_json::from_slice(&body)
        .map_err(|e| CouchError::bad_request(format!("expected {{id: [revs]}}: {e}")))?;
    phases.lap("parse");
    let client = read::client(&state).await?;
    phases.lap("connection");
    read::database(&client, &db).await?;
    phases.lap("database");
    auth::caller(&state, &client, &db, &headers).await?;
    phases.lap("caller");
    let ids: Vec<String> = request.keys().cloned().collect();
    let stored = load_many(&client, &db, &ids).await?;
    phases.lap("load");
    let mut answer = serde_json::Map::new();
    for (id, revs) in request {
        let tree = stored.get(&id).map(StoredDoc::tree).transpose()?;
        let missing: Vec<&String> = revs
            .iter()
            .filter(|rev| {
                let known = crate::rev::RevId::parse(rev)
                    .ok()
                    .zip(tree.as_ref())
                    .is_some_and(|(rev, tree)| tree.contains(&rev));
                !known
            })
            .collect();
        if !missing.is_empty() {
            answer.insert(id, json!({"missing": missing}));
        }
    }
    let reply = Reply::json(StatusCode::OK, &answer);
    phases.lap("diff");
    Ok(reply)
}
