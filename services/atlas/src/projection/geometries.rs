//! Geometry events into `geometries`, `entity_geometries` and `geometry_history`.

use crate::projection::history::{Change, geometry_version};
use crate::projection::param;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{GeometryEvent, GeometryRow, Timestamp};
use palimpsest_events::canonical::to_canonical_string;
use palimpsest_projections::statement::{Param, Statement};

/// Plans one geometry event: the row or its links, then the geometry's new version.
pub fn plan(
    out: &mut Vec<Statement>,
    schema: &str,
    event: &RecordedEvent,
    payload: &GeometryEvent,
) {
    let id = event.stream.key.as_str();
    match payload {
        GeometryEvent::GeometryCreated { geometry, source } => {
            created(out, schema, geometry);
            let change = Change {
                kind: "created",
                detail: None,
                source,
                at: geometry.updated_at,
            };
            geometry_version(out, schema, event, &change, Some(&[]))
        }
        GeometryEvent::GeometryUpdated {
            geometry,
            stripped_binding,
            source,
        } => {
            updated(out, schema, geometry);
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
            geometry_version(out, schema, event, &change, None)
        }
        GeometryEvent::GeometryDeleted { at, source, .. } => {
            deleted(out, schema, id, at);
            let change = Change {
                kind: "deleted",
                detail: None,
                source,
                at: *at,
            };
            geometry_version(out, schema, event, &change, Some(&[]))
        }
        GeometryEvent::GeometryLinksReplaced {
            entity_ids,
            at,
            unlinked_entity,
            source,
            ..
        } => {
            links_replaced(out, schema, id, entity_ids, at);
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
            geometry_version(out, schema, event, &change, Some(entity_ids))
        }
    }
}

/// `GeometryCreated`: the new row.
fn created(out: &mut Vec<Statement>, schema: &str, geometry: &GeometryRow) {
    out.push(Statement::dml(
        format!(
            "INSERT INTO {schema}.geometries (id, type, is_deleted, draw_geometry, binding, time_start, \
             time_end, bbox_min_lng, bbox_min_lat, bbox_max_lng, bbox_max_lat, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        ),
        params(geometry),
    ));
}

/// `GeometryUpdated`: the row as it now is (its binding stripped, for some).
fn updated(out: &mut Vec<Statement>, schema: &str, geometry: &GeometryRow) {
    out.push(Statement::dml(
        format!(
            "UPDATE {schema}.geometries SET type = $2, is_deleted = $3, draw_geometry = $4, binding = $5, \
             time_start = $6, time_end = $7, bbox_min_lng = $8, bbox_min_lat = $9, \
             bbox_max_lng = $10, bbox_max_lat = $11, created_at = $12, updated_at = $13 WHERE id = $1"
        ),
        params(geometry),
    ));
}

/// `GeometryDeleted`: the row marked deleted, its links gone.
fn deleted(out: &mut Vec<Statement>, schema: &str, id: &str, at: &Timestamp) {
    out.push(Statement::dml(
        format!("UPDATE {schema}.geometries SET is_deleted = 1, updated_at = $2 WHERE id = $1"),
        vec![param(id.to_owned()), param(at.to_iso())],
    ));
    out.push(Statement::dml(
        format!("DELETE FROM {schema}.entity_geometries WHERE geometry_id = $1"),
        vec![param(id.to_owned())],
    ));
}

/// `GeometryLinksReplaced`: the geometry's links, all replaced.
fn links_replaced(
    out: &mut Vec<Statement>,
    schema: &str,
    id: &str,
    entity_ids: &[String],
    at: &Timestamp,
) {
    out.push(Statement::dml(
        format!("DELETE FROM {schema}.entity_geometries WHERE geometry_id = $1"),
        vec![param(id.to_owned())],
    ));
    out.push(Statement::dml(
        format!(
            "INSERT INTO {schema}.entity_geometries (entity_id, geometry_id, created_at) \
             SELECT e, $2, $3 FROM unnest($1::text[]) AS e"
        ),
        vec![
            param(entity_ids.to_vec()),
            param(id.to_owned()),
            param(at.to_iso()),
        ],
    ));
}

/// A geometry row's parameters; JSON columns hold canonical (RFC 8785) text.
fn params(geometry: &GeometryRow) -> Vec<Param> {
    let binding = geometry
        .binding
        .as_ref()
        .map(|ids| to_canonical_string(&serde_json::Value::from(ids.clone())));
    vec![
        param(geometry.id.clone()),
        param(geometry.kind.clone()),
        param(geometry.is_deleted),
        param(to_canonical_string(&geometry.draw_geometry)),
        param(binding),
        param(geometry.time_start),
        param(geometry.time_end),
        param(geometry.bbox.map(|bbox| bbox.min_lng)),
        param(geometry.bbox.map(|bbox| bbox.min_lat)),
        param(geometry.bbox.map(|bbox| bbox.max_lng)),
        param(geometry.bbox.map(|bbox| bbox.max_lat)),
        param(geometry.created_at.to_iso()),
        param(geometry.updated_at.to_iso()),
    ]
}
