//! Geometry events into `geometries`, `entity_geometries` and `geometry_history`.

use crate::projection::history::{Change, geometry_version};
use crate::projection::{Param, refs};
use deadpool_postgres::Transaction;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{GeometryEvent, GeometryRow};
use palimpsest_events::canonical::to_canonical_string;
use palimpsest_projections::ProjectionError;

/// Applies one geometry event.
pub async fn apply(
    tx: &Transaction<'_>,
    s: &str,
    event: &RecordedEvent,
    payload: &GeometryEvent,
) -> Result<(), ProjectionError> {
    let id = event.stream.key.as_str();
    match payload {
        GeometryEvent::GeometryCreated { geometry, source } => {
            let p = params(geometry);
            tx.execute(
                &format!(
                    "INSERT INTO {s}.geometries (id, type, is_deleted, draw_geometry, binding, time_start, \
                     time_end, bbox_min_lng, bbox_min_lat, bbox_max_lng, bbox_max_lat, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
                ),
                &refs(&p),
            )
            .await?;
            let change = Change {
                kind: "created",
                detail: None,
                source,
                at: geometry.updated_at,
            };
            geometry_version(tx, s, event, &change, Some(&[])).await
        }
        GeometryEvent::GeometryUpdated {
            geometry,
            stripped_binding,
            source,
        } => {
            let p = params(geometry);
            tx.execute(
                &format!(
                    "UPDATE {s}.geometries SET type = $2, is_deleted = $3, draw_geometry = $4, binding = $5, \
                     time_start = $6, time_end = $7, bbox_min_lng = $8, bbox_min_lat = $9, \
                     bbox_max_lng = $10, bbox_max_lat = $11, created_at = $12, updated_at = $13 WHERE id = $1"
                ),
                &refs(&p),
            )
            .await?;
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
            geometry_version(tx, s, event, &change, None).await
        }
        GeometryEvent::GeometryDeleted { at, source, .. } => {
            tx.execute(
                &format!("UPDATE {s}.geometries SET is_deleted = 1, updated_at = $2 WHERE id = $1"),
                &[&id, &at.to_iso()],
            )
            .await?;
            tx.execute(
                &format!("DELETE FROM {s}.entity_geometries WHERE geometry_id = $1"),
                &[&id],
            )
            .await?;
            let change = Change {
                kind: "deleted",
                detail: None,
                source,
                at: *at,
            };
            geometry_version(tx, s, event, &change, Some(&[])).await
        }
        GeometryEvent::GeometryLinksReplaced {
            entity_ids,
            at,
            unlinked_entity,
            source,
            ..
        } => {
            tx.execute(
                &format!("DELETE FROM {s}.entity_geometries WHERE geometry_id = $1"),
                &[&id],
            )
            .await?;
            tx.execute(
                &format!(
                    "INSERT INTO {s}.entity_geometries (entity_id, geometry_id, created_at) \
                     SELECT e, $2, $3 FROM unnest($1::text[]) AS e"
                ),
                &[entity_ids, &id, &at.to_iso()],
            )
            .await?;
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
            geometry_version(tx, s, event, &change, Some(entity_ids)).await
        }
    }
}

/// A geometry row's parameters; JSON columns hold canonical (RFC 8785) text.
fn params(g: &GeometryRow) -> Vec<Param> {
    let binding = g
        .binding
        .as_ref()
        .map(|b| to_canonical_string(&serde_json::Value::from(b.clone())));
    vec![
        Box::new(g.id.clone()),
        Box::new(g.kind.clone()),
        Box::new(g.is_deleted),
        Box::new(to_canonical_string(&g.draw_geometry)),
        Box::new(binding),
        Box::new(g.time_start),
        Box::new(g.time_end),
        Box::new(g.bbox.map(|b| b.min_lng)),
        Box::new(g.bbox.map(|b| b.min_lat)),
        Box::new(g.bbox.map(|b| b.max_lng)),
        Box::new(g.bbox.map(|b| b.max_lat)),
        Box::new(g.created_at.to_iso()),
        Box::new(g.updated_at.to_iso()),
    ]
}
