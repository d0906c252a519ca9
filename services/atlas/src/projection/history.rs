//! The temporal history tables: each published change closes the row's current version
//! (`valid_to = change time`) and opens a new one holding the row as it now is.

use deadpool_postgres::Transaction;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{PublicationSource, Timestamp};
use palimpsest_projections::ProjectionError;
use serde_json::Value;

/// What made a new version: the kind of change and the approval behind it.
pub struct Change<'a> {
    /// `created`, `updated`, `deleted`, `links_replaced`, `binding_stripped`, `entity_unlinked`.
    pub kind: &'static str,
    /// For `binding_stripped` / `entity_unlinked`: the deleted geometry or entity.
    pub detail: Option<String>,
    /// The approval.
    pub source: &'a PublicationSource,
    /// When (the row's `updated_at`, or the links' `created_at`).
    pub at: Timestamp,
}

/// Records the entity's new version from its live row.
pub async fn entity_version(
    tx: &Transaction<'_>,
    schema: &str,
    event: &RecordedEvent,
    change: &Change<'_>,
) -> Result<(), ProjectionError> {
    let id = event.stream.key.as_str();
    let valid_from = change.at.instant();
    tx.execute(
        &format!(
            "UPDATE {schema}.entity_history SET valid_to = $2 WHERE entity_id = $1 AND valid_to IS NULL"
        ),
        &[&id, &valid_from],
    )
    .await?;
    let inserted = tx
        .execute(
            &format!(
                "INSERT INTO {schema}.entity_history (entity_id, version, position, change, submission_id, \
                 section_id, reviewed_by, changed_at, valid_from, valid_to, name, slug, description, \
                 type_id, status, is_deleted, created_at, updated_at) \
                 SELECT id, $2, $3, $4, $5, $6, $7, $8, $9, NULL, name, slug, description, type_id, \
                 status, is_deleted, created_at, updated_at FROM {schema}.entities WHERE id = $1"
            ),
            &[
                &id,
                &event.version,
                &event.position,
                &change.kind,
                &change.source.submission_id,
                &change.source.section_id,
                &change.source.reviewed_by,
                &change.at.to_iso(),
                &valid_from,
            ],
        )
        .await?;
    if inserted != 1 {
        return Err(ProjectionError::Invalid(format!(
            "entity {id} has no row to record a version of"
        )));
    }
    Ok(())
}

/// Records the geometry's new version from its live row; `entity_ids` are its links after the
/// change (`None`: unchanged from the previous version).
pub async fn geometry_version(
    tx: &Transaction<'_>,
    schema: &str,
    event: &RecordedEvent,
    change: &Change<'_>,
    entity_ids: Option<&[String]>,
) -> Result<(), ProjectionError> {
    let id = event.stream.key.as_str();
    let valid_from = change.at.instant();
    let links: Option<Value> = entity_ids.map(|ids| Value::from(ids.to_vec()));
    tx.execute(
        &format!(
            "UPDATE {schema}.geometry_history SET valid_to = $2 WHERE geometry_id = $1 AND valid_to IS NULL"
        ),
        &[&id, &valid_from],
    )
    .await?;
    let inserted = tx
        .execute(
            &format!(
                "INSERT INTO {schema}.geometry_history (geometry_id, version, position, change, detail, \
                 submission_id, section_id, reviewed_by, changed_at, valid_from, valid_to, type, \
                 is_deleted, draw_geometry, binding, time_start, time_end, bbox_min_lng, bbox_min_lat, \
                 bbox_max_lng, bbox_max_lat, created_at, updated_at, entity_ids) \
                 SELECT g.id, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, g.type, g.is_deleted, \
                 g.draw_geometry, g.binding, g.time_start, g.time_end, g.bbox_min_lng, g.bbox_min_lat, \
                 g.bbox_max_lng, g.bbox_max_lat, g.created_at, g.updated_at, \
                 COALESCE($11::jsonb, (SELECT h.entity_ids FROM {schema}.geometry_history h \
                   WHERE h.geometry_id = g.id ORDER BY h.version DESC LIMIT 1), '[]'::jsonb) \
                 FROM {schema}.geometries g WHERE g.id = $1"
            ),
            &[
                &id,
                &event.version,
                &event.position,
                &change.kind,
                &change.detail,
                &change.source.submission_id,
                &change.source.section_id,
                &change.source.reviewed_by,
                &change.at.to_iso(),
                &valid_from,
                &links,
            ],
        )
        .await?;
    if inserted != 1 {
        return Err(ProjectionError::Invalid(format!(
            "geometry {id} has no row to record a version of"
        )));
    }
    Ok(())
}
