//! Standalone attachments: `GET|PUT|DELETE /{db}/{doc}/{name}` (`?rev=` names the revision).

use super::auth;
use super::command::Reply;
use super::error::CouchError;
use super::params::Params;
use super::read;
use super::write::{AttachmentEdit, Item, Shape, write};
use crate::attachments::stubs;
use crate::body::Incoming;
use crate::rev::RevId;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;

/// `GET /{db}/{doc}/{name}`: the attachment's bytes with its media type.
pub async fn get(
    State(state): State<AppState>,
    Path((db, doc_id, name)): Path<(String, String, String)>,
    Query(params): Query<Params>,
    headers: HeaderMap,
) -> Result<Response, CouchError> {
    let client = read::client(&state).await?;
    read::database(&client, &db).await?;
    let caller = auth::caller(&state, &client, &db, &headers).await?;
    let stored = read::document(&client, &db, &doc_id)
        .await?
        .ok_or_else(|| CouchError::not_found("missing"))?;
    if caller.sees(&stored.sync) != auth::Visibility::Visible {
        return Err(auth::forbidden());
    }
    let tree = stored.tree()?;
    let node = match params.get("rev") {
        Some(rev) => {
            let rev = RevId::parse(rev).map_err(|e| CouchError::bad_request(e.to_string()))?;
            tree.get(&rev).filter(|n| n.body.is_some()).cloned()
        }
        None => tree.winner().filter(|w| !w.deleted).cloned(),
    }
    .ok_or_else(|| CouchError::not_found("missing"))?;
    let stub = node
        .body
        .as_deref()
        .map(stubs)
        .and_then(|mut all| all.remove(&name))
        .ok_or_else(|| CouchError::not_found("Document is missing attachment"))?;
    let data = read::attachment_data(&client, std::slice::from_ref(&stub.digest))
        .await?
        .remove(&stub.digest)
        .ok_or_else(|| CouchError::internal(format!("attachment bytes {} missing", stub.digest)))?;
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, stub.content_type),
            (header::ETAG, format!("\"{}\"", stub.digest)),
        ],
        data,
    )
        .into_response())
}

fn base_rev(params: &Params, headers: &HeaderMap) -> Option<String> {
    params.get("rev").cloned().or_else(|| {
        headers
            .get(header::IF_MATCH)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim_matches('"').to_owned())
    })
}

fn item(doc_id: String, rev: Option<String>, edit: AttachmentEdit) -> Item {
    Item {
        doc_id,
        doc: Incoming {
            id: None,
            rev,
            revisions: None,
            deleted: false,
            body: "{}".into(),
        },
        attachment: Some(edit),
    }
}

/// `PUT /{db}/{doc}/{name}?rev=`: a new revision with this attachment (the body's bytes).
pub async fn put(
    State(state): State<AppState>,
    Path((db, doc_id, name)): Path<(String, String, String)>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_owned();
    let edit = AttachmentEdit::Put {
        name,
        content_type,
        data: body.to_vec(),
    };
    let writer = auth::caller_of(&state, &db, &headers).await?.writer();
    let items = vec![item(doc_id, base_rev(&params, &headers), edit)];
    write(
        &state,
        &request,
        &writer,
        &db,
        items,
        true,
        Shape::Single(StatusCode::CREATED),
    )
    .await
}

/// `DELETE /{db}/{doc}/{name}?rev=`: a new revision without it.
pub async fn delete(
    State(state): State<AppState>,
    Path((db, doc_id, name)): Path<(String, String, String)>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    let rev = base_rev(&params, &headers).ok_or_else(CouchError::conflict)?;
    let writer = auth::caller_of(&state, &db, &headers).await?.writer();
    let items = vec![item(doc_id, Some(rev), AttachmentEdit::Delete { name })];
    write(
        &state,
        &request,
        &writer,
        &db,
        items,
        true,
        Shape::Single(StatusCode::OK),
    )
    .await
}
