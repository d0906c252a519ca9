//! The map query: live geometries in a bbox (optionally at a year, of an entity), as a GeoJSON
//! FeatureCollection — from the live tables, or from the history tables as of a time.

use crate::hashing::{geometry_hash, links_hash};
use crate::read::SCHEMA as S;
use crate::read::error::{ReadError, stored_json};
use chrono::{DateTime, Utc};
use palimpsest_events::atlas::{Bbox, GeometryRow, Timestamp};
use serde_json::{Value, json};
use tokio_postgres::{GenericClient, Row};

/// The parameters of `GET /geometries`.
#[derive(Debug, Clone, PartialEq)]
pub struct MapQuery {
    /// `minLng`.
    pub min_lng: f64,
    /// `minLat`.
    pub min_lat: f64,
    /// `maxLng`.
    pub max_lng: f64,
    /// `maxLat`.
    pub max_lat: f64,
    /// `time`: a year the geometry must cover.
    pub time: Option<i64>,
    /// `entity_id`: only geometries linked to this live entity.
    pub entity_id: Option<String>,
    /// `time_as_of`: the map as it was published at that instant.
    pub as_of: Option<DateTime<Utc>>,
}

/// Geometry `type` tokens of old data that say nothing about what is drawn: the primary
/// entity's `type_id` is shown instead (as is a missing type).
pub const LEGACY_TYPES: [&str; 2] = ["line", "path"];

const ROW_COLUMNS: &str = "g.type, g.is_deleted, g.draw_geometry, g.binding, g.time_start, \
     g.time_end, g.bbox_min_lng, g.bbox_min_lat, g.bbox_max_lng, g.bbox_max_lat, g.created_at, g.updated_at";

const BOX: &str = "box(point(g.bbox_min_lng, g.bbox_min_lat), point(g.bbox_max_lng, g.bbox_max_lat)) \
     && box(point($1, $2), point($3, $4)) \
     AND g.bbox_max_lng >= $1 AND g.bbox_min_lng <= $3 AND g.bbox_max_lat >= $2 AND g.bbox_min_lat <= $4 \
     AND ($6::bigint IS NULL OR ((g.time_start IS NULL OR g.time_start <= $6) \
          AND (g.time_end IS NULL OR g.time_end >= $6)))";

fn live_sql() -> String {
    format!(
        "SELECT g.id, {ROW_COLUMNS}, \
         COALESCE((SELECT jsonb_agg(jsonb_build_object('id', e.id, 'name', e.name, 'slug', e.slug, \
           'type_id', e.type_id) ORDER BY eg.created_at, e.id) \
           FROM {S}.entity_geometries eg JOIN {S}.entities e ON e.id = eg.entity_id AND e.is_deleted = 0 \
           WHERE eg.geometry_id = g.id), '[]'::jsonb) AS entities, \
         COALESCE((SELECT jsonb_agg(eg.entity_id ORDER BY eg.entity_id) FROM {S}.entity_geometries eg \
           WHERE eg.geometry_id = g.id), '[]'::jsonb) AS links, \
         COALESCE((SELECT h.entity_ids FROM {S}.geometry_history h \
           WHERE h.geometry_id = g.id AND h.valid_to IS NULL), '[]'::jsonb) AS link_order \
         FROM {S}.geometries g \
         WHERE g.is_deleted = 0 AND $5::timestamptz IS NULL AND {BOX} \
         AND ($7::text IS NULL OR EXISTS (SELECT 1 FROM {S}.entity_geometries eg JOIN {S}.entities e \
           ON e.id = eg.entity_id AND e.is_deleted = 0 WHERE eg.geometry_id = g.id AND eg.entity_id = $7)) \
         ORDER BY g.id"
    )
}

fn as_of_sql() -> String {
    format!(
        "SELECT g.geometry_id AS id, {ROW_COLUMNS}, \
         COALESCE((SELECT jsonb_agg(jsonb_build_object('id', e.entity_id, 'name', e.name, 'slug', e.slug, \
           'type_id', e.type_id) ORDER BY e.entity_id) \
           FROM jsonb_array_elements_text(g.entity_ids) AS l(id) JOIN {S}.entity_history e \
           ON e.entity_id = l.id AND e.is_deleted = 0 AND tstzrange(e.valid_from, e.valid_to) @> $5::timestamptz), \
           '[]'::jsonb) AS entities, \
         g.entity_ids AS links, g.entity_ids AS link_order \
         FROM {S}.geometry_history g \
         WHERE g.is_deleted = 0 AND tstzrange(g.valid_from, g.valid_to) @> $5::timestamptz AND {BOX} \
         AND ($7::text IS NULL OR (g.entity_ids @> jsonb_build_array($7::text) AND EXISTS ( \
           SELECT 1 FROM {S}.entity_history e WHERE e.entity_id = $7 AND e.is_deleted = 0 \
           AND tstzrange(e.valid_from, e.valid_to) @> $5::timestamptz))) \
         ORDER BY g.geometry_id"
    )
}

/// Runs the map query and answers a GeoJSON FeatureCollection.
pub async fn feature_collection(
    client: &impl GenericClient,
    q: &MapQuery,
) -> Result<Value, ReadError> {
    let sql = if q.as_of.is_some() {
        as_of_sql()
    } else {
        live_sql()
    };
    let rows = client
        .query(
            &sql,
            &[
                &q.min_lng,
                &q.min_lat,
                &q.max_lng,
                &q.max_lat,
                &q.as_of,
                &q.time,
                &q.entity_id,
            ],
        )
        .await?;
    let features = rows
        .iter()
        .map(feature)
        .collect::<Result<Vec<Value>, _>>()?;
    Ok(json!({"type": "FeatureCollection", "features": features}))
}

/// A geometry row's fields as the domain knows them (for its hash); a stored JSON text that does
/// not parse is an error, never a null.
pub fn geometry_row(row: &Row) -> Result<GeometryRow, ReadError> {
    let id: String = row.get("id");
    let text: String = row.get("draw_geometry");
    let binding: Option<String> = row.get("binding");
    let bbox = match (
        row.get::<_, Option<f64>>("bbox_min_lng"),
        row.get::<_, Option<f64>>("bbox_min_lat"),
        row.get::<_, Option<f64>>("bbox_max_lng"),
        row.get::<_, Option<f64>>("bbox_max_lat"),
    ) {
        (Some(min_lng), Some(min_lat), Some(max_lng), Some(max_lat)) => Some(Bbox {
            min_lng,
            min_lat,
            max_lng,
            max_lat,
        }),
        _ => None,
    };
    let time = |column: &str| {
        row.get::<_, Option<String>>(column)
            .as_deref()
            .and_then(Timestamp::parse)
            .unwrap_or_else(|| Timestamp::new(DateTime::<Utc>::UNIX_EPOCH))
    };
    Ok(GeometryRow {
        kind: row.get("type"),
        is_deleted: row.get("is_deleted"),
        draw_geometry: stored_json(&text, "geometries.draw_geometry", &id)?,
        binding: match binding {
            Some(b) => Some(stored_json(&b, "geometries.binding", &id)?),
            None => None,
        },
        time_start: row.get("time_start"),
        time_end: row.get("time_end"),
        bbox,
        created_at: time("created_at"),
        updated_at: time("updated_at"),
        id,
    })
}

/// The type a map feature shows: the geometry's own `type`, unless it is missing, blank or a
/// legacy token (`line`, `path`); then the `type_id` of its primary entity — the first of its
/// links, in the order the link scope listed them, whose entity is live. This is the original's
/// rule (its links are rows inserted in `entity_ids` order, and it takes the first active one),
/// and the one rule for live reads and `time_as_of` reads alike.
pub fn shown_type(
    kind: Option<&str>,
    link_order: &[String],
    live_entities: &Value,
) -> Option<String> {
    match kind {
        Some(t) if !t.trim().is_empty() && !LEGACY_TYPES.contains(&t) => Some(t.to_owned()),
        _ => primary_type(link_order, live_entities).or(kind.map(str::to_owned)),
    }
}

fn primary_type(link_order: &[String], live_entities: &Value) -> Option<String> {
    let entities = live_entities.as_array()?;
    link_order.iter().find_map(|id| {
        entities
            .iter()
            .find(|e| e.get("id").and_then(Value::as_str) == Some(id))
            .and_then(|e| e.get("type_id"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    })
}

fn id_list(row: &Row, column: &'static str, id: &str) -> Result<Vec<String>, ReadError> {
    serde_json::from_value(row.get::<_, Value>(column))
        .map_err(|e| ReadError::corrupt(column, id, &e))
}

fn feature(row: &Row) -> Result<Value, ReadError> {
    let g = geometry_row(row)?;
    let entities: Value = row.get("entities");
    let link_ids = id_list(row, "links", &g.id)?;
    let link_order = id_list(row, "link_order", &g.id)?;
    let shown_type = shown_type(g.kind.as_deref(), &link_order, &entities);
    Ok(json!({
        "type": "Feature",
        "id": g.id,
        "geometry": g.draw_geometry,
        "properties": {
            "id": g.id,
            "type": shown_type,
            "binding": g.binding.clone().unwrap_or_default(),
            "time_start": g.time_start,
            "time_end": g.time_end,
            "bbox": g.bbox,
            "entity_ids": link_ids,
            "entities": entities,
            "created_at": row.get::<_, Option<String>>("created_at"),
            "updated_at": row.get::<_, Option<String>>("updated_at"),
            "hash": geometry_hash(&g),
            "links_hash": links_hash(&link_ids),
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_primary_entity_is_the_first_live_link_in_link_scope_order() {
        let live = json!([{"id": "a", "type_id": "river"}, {"id": "b", "type_id": "kingdom"}]);
        assert_eq!(
            shown_type(Some("line"), &links(&["b", "a"]), &live).as_deref(),
            Some("kingdom"),
            "the order the links were given, not the ids' order"
        );
        assert_eq!(
            shown_type(None, &links(&["gone", "a"]), &live).as_deref(),
            Some("river"),
            "a link to an entity that is not live is passed over"
        );
        assert_eq!(
            shown_type(Some("path"), &links(&["gone"]), &live).as_deref(),
            Some("path"),
            "without a live entity the stored token stays"
        );
        assert_eq!(
            shown_type(Some("country"), &links(&["b"]), &live).as_deref(),
            Some("country"),
            "a real type is never replaced"
        );
    }
}
