//! `/entities` routes: the published entities (read only), their history, as of any time.

use crate::http::params::{Params, as_of, integer, text};
use crate::read::entities::{self as read, EntityFilter, EntityView};
use crate::read::history;
use axum::Json;
use axum::extract::{Path, Query, State};
use palimpsest_web::{ApiError, AppState};
use serde_json::Value;

/// Default and largest `limit` of `/entities/search`.
const SEARCH_LIMIT: (i64, i64) = (20, 100);

/// `GET /entities?q=&limit=&offset=&time_as_of=`: live entities whose name or slug contains
/// `q` (case-insensitive), by name.
pub async fn list(
    State(state): State<AppState>,
    Query(p): Query<Params>,
) -> Result<Json<Vec<EntityView>>, ApiError> {
    let limit = integer(&p, "limit")?;
    if limit.is_some_and(|l| l < 0) {
        return Err(ApiError::bad_request("limit must not be negative"));
    }
    let filter = EntityFilter {
        q: text(&p, "q"),
        name_only: false,
        limit,
        offset: integer(&p, "offset")?.unwrap_or(0).max(0),
        as_of: as_of(&p)?,
    };
    let client = state.read.get().await?;
    Ok(Json(read::list(&**client, &filter).await?))
}

/// `GET /entities/search?q=&limit=&time_as_of=`: live entities whose name contains `q`;
/// `limit` defaults to 20 and is at most 100.
pub async fn search(
    State(state): State<AppState>,
    Query(p): Query<Params>,
) -> Result<Json<Vec<EntityView>>, ApiError> {
    let limit = integer(&p, "limit")?
        .unwrap_or(SEARCH_LIMIT.0)
        .clamp(1, SEARCH_LIMIT.1);
    let filter = EntityFilter {
        q: text(&p, "q"),
        name_only: true,
        limit: Some(limit),
        offset: 0,
        as_of: as_of(&p)?,
    };
    let client = state.read.get().await?;
    Ok(Json(read::list(&**client, &filter).await?))
}

/// `GET /entities/:id?time_as_of=`: one live entity with `geometry_count`.
pub async fn get_one(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
) -> Result<Json<EntityView>, ApiError> {
    let client = state.read.get().await?;
    read::get(&**client, &id, as_of(&p)?)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("Entity not found"))
}

/// `GET /entities/:id/history`: every published version, oldest first, each naming the
/// submission, section and reviewer that made it.
pub async fn history(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<Value>>, ApiError> {
    let client = state.read.get().await?;
    let versions = history::entity(&**client, &id).await?;
    if versions.is_empty() {
        return Err(ApiError::not_found("Entity not found"));
    }
    Ok(Json(versions))
}
