//! `/geometries` routes: the map as GeoJSON, and each geometry's history.

use crate::http::params::{Params, as_of, integer, number, text};
use crate::read::geometries::{MapQuery, feature_collection};
use crate::read::history;
use axum::Json;
use axum::extract::{Path, Query, State};
use palimpsest_web::{ApiError, AppState};
use serde_json::Value;

/// `GET /geometries?minLng&minLat&maxLng&maxLat&time&entity_id&time_as_of`: live geometries
/// whose bbox meets the given one (all four required), covering year `time` if given, linked to
/// live entity `entity_id` if given, as a GeoJSON FeatureCollection.
pub async fn map(
    State(state): State<AppState>,
    Query(p): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    let q = MapQuery {
        min_lng: number(&p, "minLng")?,
        min_lat: number(&p, "minLat")?,
        max_lng: number(&p, "maxLng")?,
        max_lat: number(&p, "maxLat")?,
        time: integer(&p, "time")?,
        entity_id: text(&p, "entity_id"),
        as_of: as_of(&p)?,
    };
    let client = state.read.get().await?;
    Ok(Json(feature_collection(&**client, &q).await?))
}

/// `GET /geometries/:id/history`: every published version, oldest first, each naming the
/// submission, section and reviewer that made it (links included).
pub async fn history(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<Value>>, ApiError> {
    let client = state.read.get().await?;
    let versions = history::geometry(&**client, &id).await?;
    if versions.is_empty() {
        return Err(ApiError::not_found("Geometry not found"));
    }
    Ok(Json(versions))
}
