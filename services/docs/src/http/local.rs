//! `_local/` documents: `GET|PUT|DELETE /{db}/_local/{id}`; what replicators keep their
//! checkpoints in.

use super::error::CouchError;
use super::params::Params;
use crate::access::auth;
use crate::body::Incoming;
use crate::command::{Reply, text_reply};
use crate::local::batch::{PREFIX, command_of};
use crate::local::{LocalCommand, command::local_command};
use crate::phases::Phases;
use crate::projection::local_key;
use crate::read;
use crate::stored::local_for_client;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;

/// `GET /{db}/_local/{id}`.
pub async fn get(
    State(state): State<AppState>,
    Path((db, doc_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Reply, CouchError> {
    let mut phases = Phases::start("GET _local");
    let client = read::client(&state).await?;
    phases.lap("connection");
    read::database(&client, &db).await?;
    phases.lap("database");
    auth::caller(&state, &client, &db, &headers).await?;
    phases.lap("caller");
    if doc_id.contains('/') {
        // `_local/{id}/{attachment}`: CouchDB's answer, a local document holds none.
        return Err(CouchError::bad_request(
            "_local documents do not accept attachments.",
        ));
    }
    // Prepared once per connection: a replicator reads its checkpoint every batch.
    let statement = client
        .prepare_cached("SELECT value FROM docs.kv WHERE db = $1 AND key = $2")
        .await?;
    let row = client
        .query_opt(&statement, &[&db, &local_key(&doc_id)])
        .await?
        .ok_or_else(|| CouchError::not_found("missing"))?;
    let reply = text_reply(StatusCode::OK, local_for_client(&doc_id, row.get(0))?);
    phases.lap("read");
    Ok(reply)
}

/// `PUT /{db}/_local/{id}`: saves it (`_rev` must be the current one if it exists); with
/// `"_deleted": true` deletes it, as CouchDB does. `_attachments` are dropped (a local document
/// holds none; PouchDB's suite expects none back).
pub async fn put(
    State(state): State<AppState>,
    Path((db, doc_id)): Path<(String, String)>,
    headers: HeaderMap,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let mut phases = Phases::start("PUT _local");
    auth::caller_of(&state, &db, &headers).await?;
    phases.lap("caller");
    let doc = Incoming::parse(&body)?;
    if doc.body.len() > crate::document::command::MAX_BODY {
        return Err(CouchError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            "Document exceeds the maximum size",
        ));
    }
    let command = command_of(&db, &format!("{PREFIX}{doc_id}"), &doc)?;
    let status = match command {
        LocalCommand::Delete { .. } => StatusCode::OK,
        LocalCommand::Save { .. } => StatusCode::CREATED,
    };
    phases.lap("parse");
    local_command(&state, &request, &db, &doc_id, command, status, &mut phases).await
}

/// `DELETE /{db}/_local/{id}?rev=`.
pub async fn delete(
    State(state): State<AppState>,
    Path((db, doc_id)): Path<(String, String)>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    auth::caller_of(&state, &db, &headers).await?;
    let command = LocalCommand::Delete {
        db: db.clone(),
        doc_id: doc_id.clone(),
        base: params.get("rev").cloned(),
    };
    let mut phases = Phases::start("DELETE _local");
    local_command(
        &state,
        &request,
        &db,
        &doc_id,
        command,
        StatusCode::OK,
        &mut phases,
    )
    .await
}
