//! Sync Gateway's admin maintenance of documents: `POST /_admin/{db}/_purge` removes documents
//! from the read model entirely, `POST /_admin/{db}/_resync` reruns the current sync function
//! over every document's winning revision. Both are commands on the documents' streams: the
//! log keeps every revision and records the purge or the new routing.

use super::error::CouchError;
use crate::command::Reply;
use crate::document::maintenance::{purge_all, resync_all};
use crate::read;
use axum::body::Bytes;
use axum::extract::{Path, State};
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use serde_json::{Value, json};

/// `POST /_admin/{db}/_purge` `{"doc id": ["*"], …}`: each named document (every revision:
/// Sync Gateway takes only `["*"]`) leaves the read model; answers `{"purged": {"id": ["*"]}}`
/// with the documents purged (an entry that is not `["*"]` or names no document is skipped, as
/// Sync Gateway does).
pub async fn purge(
    State(state): State<AppState>,
    Path(db): Path<String>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, CouchError> {
    let asked: serde_json::Map<String, Value> = serde_json::from_slice(&body).map_err(|_| {
        CouchError::bad_request("_purge document ID's must be passed as a JSON object")
    })?;
    let ids = asked
        .into_iter()
        .filter(|(_, revs)| *revs == json!(["*"]))
        .map(|(id, _)| id)
        .filter(|id| read::storable(id))
        .collect();
    purge_all(&state, &request, db, ids).await
}

/// `POST /_admin/{db}/_resync`: reruns the database's current sync function (as an admin, no
/// `oldDoc`) over every live document's winning revision and records the new channels, access
/// and role grants of those it routes differently, a chunk of documents per command under the
/// request's key. Answers Sync Gateway's resync status when done: `{"status": "completed",
/// "docs_changed", "docs_processed", …}`.
pub async fn resync(
    State(state): State<AppState>,
    Path(db): Path<String>,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    let client = read::client(&state).await?;
    read::database(&client, &db).await?;
    let ids: Vec<String> = client
        .query(
            "SELECT key FROM docs.kv WHERE db = $1 AND seq IS NOT NULL AND NOT coalesce(deleted, false) \
             ORDER BY key COLLATE \"C\"",
            &[&db],
        )
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    drop(client);
    resync_all(&state, &request, db, ids).await
}
