//! The replicator's batch routes: `_bulk_docs`, `_bulk_get`, `_revs_diff`.

use super::auth::{self, Visibility};
use super::command::{Reply, text_reply};
use super::doc::{open_items, show};
use super::error::CouchError;
use super::params::{Params, flag};
use super::read;
use super::write::{Item, Shape, write};
use crate::body::{Incoming, Members};
use crate::stored::StoredDoc;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
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
/// on its own (`new_edits=false` answers only the failures, as CouchDB 3 does).
pub async fn bulk_docs(
    State(state): State<AppState>,
    Path(db): Path<String>,
    headers: HeaderMap,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let writer = auth::caller_of(&state, &db, &headers).await?.writer();
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
        items.push(Item {
            doc_id,
            doc,
            attachment: None,
        });
    }
    write(
        &state,
        &request,
        &writer,
        &db,
        items,
        new_edits,
        Shape::Bulk { new_edits },
    )
    .await
}

/// Loads the stored documents among `ids`, in one query.
pub async fn load_many(
    client: &Object,
    db: &str,
    ids: &[String],
) -> Result<HashMap<String, StoredDoc>, CouchError> {
    // An id with U+0000 was never stored (the log refuses it) and Postgres text cannot hold it.
    let ids: Vec<&String> = ids.iter().filter(|id| read::storable(id)).collect();
    let rows = client
        .query(
            "SELECT key, value FROM docs.kv WHERE db = $1 AND key = ANY($2) AND seq IS NOT NULL",
            &[&db, &ids],
        )
        .await?;
    let mut out = HashMap::new();
    for row in rows {
        out.insert(row.get(0), StoredDoc::parse(row.get(1))?);
    }
    Ok(out)
}

#[derive(Deserialize)]
struct BulkGet {
    docs: Vec<BulkGetItem>,
}

#[derive(Deserialize)]
struct BulkGetItem {
    id: String,
    #[serde(default)]
    rev: Option<String>,
}

fn missing(id: &str, rev: &str) -> String {
    json!({"error": {"id": id, "rev": rev, "error": "not_found", "reason": "missing"}}).to_string()
}

/// `POST /{db}/_bulk_get` `{docs: [{id, rev?}]}` (JSON): each revision asked for, as
/// `{"ok": doc}` or an error; `latest=true` answers superseded revisions with their leaves.
pub async fn bulk_get(
    State(state): State<AppState>,
    Path(db): Path<String>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let request: BulkGet = serde_json::from_slice(&body)
        .map_err(|e| CouchError::bad_request(format!("expected {{\"docs\": [...]}}: {e}")))?;
    let client = read::client(&state).await?;
    read::database(&client, &db).await?;
    let caller = auth::caller(&state, &client, &db, &headers).await?;
    let ids: Vec<String> = request.docs.iter().map(|d| d.id.clone()).collect();
    let stored = load_many(&client, &db, &ids).await?;
    let mut trees = HashMap::new();
    let mut unseen = HashMap::new();
    for (id, doc) in &stored {
        match caller.sees(&doc.sync) {
            Visibility::Visible => {
                trees.insert(id.clone(), doc.tree()?);
            }
            other => {
                unseen.insert(id.clone(), (other, doc.sync.rev.clone()));
            }
        }
    }
    let show = show(&params)?;
    let atts = if show.attachments {
        read::attachment_data(&state, &client, &read::digests(trees.values())).await?
    } else {
        super::render::Atts::new()
    };
    let latest = flag(&params, "latest")?;
    let mut results = Vec::with_capacity(request.docs.len());
    for item in &request.docs {
        let docs: Vec<String> = match (trees.get(&item.id), &item.rev) {
            (None, _) if unseen.contains_key(&item.id) => match &unseen[&item.id] {
                (Visibility::Removed, rev) => {
                    vec![format!("{{\"ok\":{}}}", auth::removed_doc(&item.id, rev))]
                }
                _ => vec![json!({"error": {"id": item.id, "rev": item.rev, "error": "forbidden", "reason": "missing channel access"}}).to_string()],
            },
            (None, rev) => vec![missing(&item.id, rev.as_deref().unwrap_or("undefined"))],
            (Some(tree), Some(rev)) => open_items(
                &item.id,
                tree,
                std::slice::from_ref(rev),
                latest,
                show,
                &atts,
            )
            .into_iter()
            .map(|r| match r {
                Ok(doc) => format!("{{\"ok\":{doc}}}"),
                Err(rev) => missing(&item.id, &rev),
            })
            .collect(),
            (Some(tree), None) => match tree.winner() {
                Some(winner) => vec![format!(
                    "{{\"ok\":{}}}",
                    super::render::render(&item.id, tree, winner, show, &atts)
                )],
                None => vec![missing(&item.id, "undefined")],
            },
        };
        let mut id = String::new();
        crate::body::push_string(&mut id, &item.id);
        results.push(format!("{{\"id\":{id},\"docs\":[{}]}}", docs.join(",")));
    }
    Ok(text_reply(
        StatusCode::OK,
        format!("{{\"results\":[{}]}}", results.join(",")),
    ))
}

/// `POST /{db}/_revs_diff` `{id: [revs]}`: the revisions the database lacks, per document.
pub async fn revs_diff(
    State(state): State<AppState>,
    Path(db): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let request: HashMap<String, Vec<String>> = serde_json::from_slice(&body)
        .map_err(|e| CouchError::bad_request(format!("expected {{id: [revs]}}: {e}")))?;
    let client = read::client(&state).await?;
    read::database(&client, &db).await?;
    auth::caller(&state, &client, &db, &headers).await?;
    let ids: Vec<String> = request.keys().cloned().collect();
    let stored = load_many(&client, &db, &ids).await?;
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
    Ok(Reply::json(StatusCode::OK, &answer))
}
