//! Geometry events into `geometries`, `entity_geometries` and `geometry_history`.

use crate::projection::history::{Change, geometry_version};
use crate::projection::{Param, refs};
use deadpool_postgres::Transaction;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{GeometryEvent, GeometryRow, Timestamp};
use palimpsest_events::canonical::to_canonical_string;
use palimpsest_projections::ProjectionError;

/// Applies one geometry event: the row or its links, then the geometry's new version.
pub async fn apply(
    tx: &Transaction<'_>,
    schema: &str,
    event: &RecordedEvent,
    payload: &GeometryEvent,
) -> Result<(), ProjectionError> {
    let id = event.stream.key.as_str();
    match payload {
        GeometryEvent::GeometryCreated { geometry, source } => {
            created(tx, schema, geometry).await?;
            let change = Change {
                kind: "created",
                detail: None,
                source,
                at: geometry.updated_at,
            };
            geometry_version(tx, schema, event, &change, Some(&[])).await
        }
        GeometryEvent::GeometryUpdated {
            geometry,
            stripped_binding,
            source,
        } => {
            updated(tx, schema, geometry).await?;
            let change = Change {
                kind: if stripped_binding.is_some() {
                    "binding_stripped"
                } else {
                    "updated"
                },
                detail: stripped_binding.clone(),
                source,
                at: geometry.updated_at,
            };
            geometry_version(tx, schema, event, &change, None).await
        }
        GeometryEvent::GeometryDeleted { at, source, .. } => {
            deleted(tx, schema, id, at).await?;
            let change = Change {
                kind: "deleted",
                detail: None,
                source,
                at: *at,
            };
            geometry_version(tx, schema, event, &change, Some(&[])).await
        }
        GeometryEvent::GeometryLinksReplaced {
            entity_ids,
            at,
            unlinked_entity,
            source,
            ..
        } => {
            links_replaced(tx, schema, id, entity_ids, at).await?;
            let change = Change {
                kind: if unlinked_entity.is_some() {
                    "entity_unlinked"
                } else {
                    "links_replaced"
                },
                detail: unlinked_entity.clone(),
                source,
                at: *at,
            };
            geometry_version(tx, schema, event, &change, Some(entity_ids)).await
        }
    }
}

/// `GeometryCreated`: the new row.
async fn created(
    tx: &Transaction<'_>,
    schema: &str,
    geometry: &GeometryRow,
) -> Result<(), ProjectionError> {
    tx.execute(
        &format!(
            "INSERT INTO {schema}.geometries (id, type, is_deleted, draw_geometry, binding, time_start, \
             time_end, bbox_min_lng, bbox_min_lat, bbox_max_lng, bbox_max_lat, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        ),
        &refs(&params(geometry)),
    )
    .await?;
    Ok(())
}

/// `GeometryUpdated`: the row as it now is (its binding stripped, for some).
async fn updated(
    tx: &Transaction<'_>,
    schema: &str,
    geometry: &GeometryRow,
) -> Result<(), ProjectionError> {
    tx.execute(
        &format!(
            "UPDATE {schema}.geometries SET type = $2, is_deleted = $3, draw_geometry = $4, binding = $5, \
             time_start = $6, time_end = $7, bbox_min_lng = $8, bbox_min_lat = $9, \
             bbox_max_lng = $10, bbox_max_lat = $11, created_at = $12, updated_at = $13 WHERE id = $1"
        ),
        &refs(&params(geometry)),
    )
    .await?;
    Ok(())
}

/// `GeometryDeleted`: the row marked deleted, its links gone.
async fn deleted(
    tx: &Transaction<'_>,
    schema: &str,
    id: &str,
    at: &Timestamp,
) -> Result<(), ProjectionError> {
    tx.execute(
        &format!("UPDATE {schema}.geometries SET is_deleted = 1, updated_at = $2 WHERE id = $1"),
        &[&id, &at.to_iso()],
    )
    .await?;
    tx.execute(
        &format!("DELETE FROM {schema}.entity_geometries WHERE geometry_id = $1"),
        &[&id],
    )
    .await?;
    Ok(())
}

/// `GeometryLinksReplaced`: the geometry's links, all replaced.
async fn links_replaced(
    tx: &Transaction<'_>,
    schema: &str,
    id: &str,
    entity_ids: &[String],
    at: &Timestamp,
) -> Result<(), ProjectionError> {
    tx.execute(
        &format!("DELETE FROM {schema}.entity_geometries WHERE geometry_id = $1"),
        &[&id],
    )
    .await?;
    tx.execute(
        &format!(
            "INSERT INTO {schema}.entity_geometries (entity_id, geometry_id, created_at) \
             SELECT e, $2, $3 FROM unnest($1::text[]) AS e"
        ),
        &[&entity_ids, &id, &at.to_iso()],
    )
    .await?;
    Ok(())
}

/// A geometry row's parameters; JSON columns hold canonical (RFC 8785) text.
fn params(geometry: &GeometryRow) -> Vec<Param> {
    let binding = geometry
        .binding
        .as_ref()
        .map(|ids| to_canonical_string(&serde_json::Value::from(ids.clone())));
    vec![
        Box::new(geometry.id.clone()),
        Box::new(geometry.kind.clone()),
        Box::new(geometry.is_deleted),
        Box::new(to_canonical_string(&geometry.draw_geometry)),
        Box::new(binding),
        Box::new(geometry.time_start),
        Box::new(geometry.time_end),
        Box::new(geometry.bbox.map(|bbox| bbox.min_lng)),
        Box::new(geometry.bbox.map(|bbox| bbox.min_lat)),
        Box::new(geometry.bbox.map(|bbox| bbox.max_lng)),
        Box::new(geometry.bbox.map(|bbox| bbox.max_lat)),
        Box::new(geometry.created_at.to_iso()),
        Box::new(geometry.updated_at.to_iso()),
    ]
}
