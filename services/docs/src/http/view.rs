//! `GET|POST /{db}/_design/{ddoc}/_view/{view}`: a view of a design document, computed per
//! query over the documents the caller may read ([`crate::design::view`], decision 0032).

use super::error::CouchError;
use super::params::Params;
use super::render::{Atts, Show, render};
use crate::access::auth::{self, Caller, Visibility};
use crate::design::view::{Query, Source, answer};
use crate::design::{DesignDoc, PREFIX, missing};
use crate::read;
use crate::stored::StoredDoc;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query as QueryString, State};
use axum::http::HeaderMap;
use deadpool_postgres::Object;
use palimpsest_web::AppState;
use serde::Deserialize;

/// `GET /{db}/_design/{ddoc}/_view/{view}`.
pub async fn get(
    State(state): State<AppState>,
    Path((db, ddoc, view)): Path<(String, String, String)>,
    QueryString(params): QueryString<Params>,
    headers: HeaderMap,
) -> Result<Json<serde_json::Value>, CouchError> {
    let query = Query::parse(&params, None)?;
    query_view(&state, &db, &ddoc, &view, query, &headers).await
}

#[derive(Deserialize, Default)]
struct KeysBody {
    #[serde(default)]
    keys: Option<Vec<serde_json::Value>>,
}

/// `POST /{db}/_design/{ddoc}/_view/{view}` with `{"keys": [...]}`.
pub async fn post(
    State(state): State<AppState>,
    Path((db, ddoc, view)): Path<(String, String, String)>,
    QueryString(params): QueryString<Params>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<serde_json::Value>, CouchError> {
    let body: KeysBody = super::params::body_or_default(&body)?;
    let query = Query::parse(&params, body.keys)?;
    query_view(&state, &db, &ddoc, &view, query, &headers).await
}

async fn query_view(
    state: &AppState,
    db: &str,
    ddoc: &str,
    view: &str,
    query: Query,
    headers: &HeaderMap,
) -> Result<Json<serde_json::Value>, CouchError> {
    let client = read::client(state).await?;
    read::database(&client, db).await?;
    let caller = auth::caller(state, &client, db, headers).await?;
    let design = design_doc(&client, db, ddoc).await?;
    let source = design
        .view(view)
        .ok_or_else(|| missing("missing_named_view"))?;
    let sources = readable_documents(&client, db, &caller).await?;
    drop(client);
    let answered = tokio::task::spawn_blocking(move || answer(&source, &sources, &query))
        .await
        .map_err(CouchError::internal)??;
    Ok(Json(answered))
}

/// The live design document `_design/{name}` of `db`: its definitions (the administrator
/// wrote it; the caller need not be able to read its channels to use it).
pub async fn design_doc(client: &Object, db: &str, name: &str) -> Result<DesignDoc, CouchError> {
    let stored = read::document(client, db, &format!("{PREFIX}{name}"))
        .await?
        .filter(|stored| !stored.sync.deleted)
        .ok_or_else(|| missing("missing"))?;
    Ok(DesignDoc::parse(&stored.body))
}

/// Every live document of `db` but the design documents that the caller may read, as a map
/// function sees it (the winner with `_conflicts`), by id.
async fn readable_documents(
    client: &Object,
    db: &str,
    caller: &Caller,
) -> Result<Vec<Source>, CouchError> {
    let rows = client
        .query(
            "SELECT key, value FROM docs.kv WHERE db = $1 AND seq IS NOT NULL AND NOT deleted \
             AND key NOT LIKE '\\_design/%' ORDER BY key COLLATE \"C\"",
            &[&db],
        )
        .await?;
    let mut sources = Vec::with_capacity(rows.len());
    for row in rows {
        let id: String = row.get(0);
        let stored = StoredDoc::parse(row.get(1))?;
        if caller.sees(&stored.sync) != Visibility::Visible {
            continue;
        }
        if let Some(doc) = map_input(&id, &stored)? {
            sources.push(Source { id, doc });
        }
    }
    Ok(sources)
}

/// A stored document as a design function sees it: the winner with `_id`, `_rev`,
/// `_deleted` when deleted, and `_conflicts` (as CouchDB's indexer opens it).
pub fn map_input(id: &str, stored: &StoredDoc) -> Result<Option<String>, CouchError> {
    let tree = stored.tree()?;
    let show = Show {
        conflicts: true,
        ..Show::default()
    };
    Ok(tree
        .winner()
        .map(|winner| render(id, &tree, winner, show, &Atts::new())))
}
