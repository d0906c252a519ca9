//! `_local/` documents: `GET|PUT|DELETE /{db}/_local/{id}`; what replicators keep their
//! checkpoints in.

use super::auth;
use super::command::{Attempt, Decided, Decision, DocsCommand, Reply, encode, run, text_reply};
use super::error::CouchError;
use super::params::Params;
use super::read;
use crate::body::Incoming;
use crate::database::DbState;
use crate::local::{self, LocalCommand, LocalState, local_rev};
use crate::projection::local_key;
use crate::stored::local_for_client;
use crate::streams;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use palimpsest_events::docs::LocalEvent;
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use serde_json::json;

/// `GET /{db}/_local/{id}`.
pub async fn get(
    State(state): State<AppState>,
    Path((db, doc_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Reply, CouchError> {
    let client = read::client(&state).await?;
    read::database(&client, &db).await?;
    auth::caller(&state, &client, &db, &headers).await?;
    let row = client
        .query_opt(
            "SELECT value FROM docs.kv WHERE db = $1 AND key = $2",
            &[&db, &local_key(&doc_id)],
        )
        .await?
        .ok_or_else(|| CouchError::not_found("missing"))?;
    Ok(text_reply(
        StatusCode::OK,
        local_for_client(&doc_id, row.get(0))?,
    ))
}

async fn local_command(
    state: &AppState,
    request: &CommandRequest,
    db: &str,
    doc_id: &str,
    command: LocalCommand,
    status: StatusCode,
) -> Result<Reply, CouchError> {
    if doc_id.is_empty() || doc_id.contains('\0') {
        return Err(CouchError::bad_request("invalid local document id"));
    }
    let db_stream = streams::database(db).map_err(|e| CouchError::bad_request(e.to_string()))?;
    let command = LocalWrite {
        db_stream,
        doc_id: doc_id.to_owned(),
        command,
        status,
    };
    run(state, request, &command).await
}

struct LocalWrite {
    db_stream: palimpsest_events::StreamName,
    doc_id: String,
    command: LocalCommand,
    status: StatusCode,
}

impl DocsCommand for LocalWrite {
    fn decide<'a>(&'a self, attempt: &'a Attempt) -> Decided<'a> {
        Box::pin(async move {
            let db_state: DbState = attempt.load(&self.db_stream).await?;
            let (incarnation, _) = db_state.live.ok_or_else(CouchError::no_database)?;
            let stream = streams::local(incarnation, &self.doc_id)
                .map_err(|e| CouchError::bad_request(e.to_string()))?;
            let current: LocalState = attempt.load(&stream).await?;
            let events = local::decide(self.command.clone(), &current)?;
            let rev = match events.first() {
                Some(LocalEvent::LocalSaved { number, .. }) => local_rev(*number),
                _ => "0-0".into(),
            };
            let reply = Reply::json(
                self.status,
                &json!({"ok": true, "id": format!("_local/{}", self.doc_id), "rev": rev}),
            );
            Ok(Decision::new(reply)
                .check(self.db_stream.clone())
                .write(stream, encode(&events)?))
        })
    }
}

/// `PUT /{db}/_local/{id}`: saves it (`_rev` must be the current one if it exists).
pub async fn put(
    State(state): State<AppState>,
    Path((db, doc_id)): Path<(String, String)>,
    headers: HeaderMap,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    auth::caller_of(&state, &db, &headers).await?;
    let doc = Incoming::parse(&body)?;
    if doc.body.len() > super::write::MAX_BODY {
        return Err(CouchError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            "Document exceeds the maximum size",
        ));
    }
    let command = LocalCommand::Save {
        db: db.clone(),
        doc_id: doc_id.clone(),
        base: doc.rev,
        body: doc.body,
    };
    local_command(&state, &request, &db, &doc_id, command, StatusCode::CREATED).await
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
    local_command(&state, &request, &db, &doc_id, command, StatusCode::OK).await
}
