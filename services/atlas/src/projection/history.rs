//! The temporal history tables: each published change closes the row's current version
//! (`valid_to = change time`) and opens a new one holding the row as it now is.
//!
//! The new version is copied from the live row inside SQL (`INSERT … SELECT`), after the row's
//! own statements in the plan. A version with no live row to copy is a bug (or a log written by
//! other code): the copy then fails in Postgres, with its message, and stops the projector, as
//! it did when the projector counted the rows inserted itself (a planned statement's count never
//! comes back to Rust).

use crate::projection::param;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{PublicationSource, Timestamp};
use palimpsest_projections::statement::Statement;
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
pub fn entity_version(
    out: &mut Vec<Statement>,
    schema: &str,
    event: &RecordedEvent,
    change: &Change<'_>,
) {
    let id = event.stream.key.as_str();
    let valid_from = change.at.instant();
    out.push(Statement::dml(
        format!(
            "UPDATE {schema}.entity_history SET valid_to = $2 WHERE entity_id = $1 AND valid_to IS NULL"
        ),
        vec![param(id.to_owned()), param(valid_from)],
    ));
    let copy = format!(
        "INSERT INTO {schema}.entity_history (entity_id, version, position, change, submission_id, \
         section_id, reviewed_by, changed_at, valid_from, valid_to, name, slug, description, \
         type_id, status, is_deleted, created_at, updated_at) \
         SELECT id, $2, $3, $4, $5, $6, $7, $8, $9, NULL, name, slug, description, type_id, \
         status, is_deleted, created_at, updated_at FROM {schema}.entities WHERE id = $1"
    );
    out.push(Statement::dml(
        exactly_one(&copy, 10),
        vec![
            param(id.to_owned()),
            param(event.version),
            param(event.position),
            param(change.kind),
            param(change.source.submission_id.clone()),
            param(change.source.section_id.clone()),
            param(change.source.reviewed_by.clone()),
            param(change.at.to_iso()),
            param(valid_from),
            param(format!("entity {id} has no row to record a version of")),
        ],
    ));
}

/// Records the geometry's new version from its live row; `entity_ids` are its links after the
/// change (`None`: unchanged from the previous version).
pub fn geometry_version(
    out: &mut Vec<Statement>,
    schema: &str,
    event: &RecordedEvent,
    change: &Change<'_>,
    entity_ids: Option<&[String]>,
) {
    let id = event.stream.key.as_str();
    let valid_from = change.at.instant();
    let links: Option<Value> = entity_ids.map(|ids| Value::from(ids.to_vec()));
    out.push(Statement::dml(
        format!(
            "UPDATE {schema}.geometry_history SET valid_to = $2 WHERE geometry_id = $1 AND valid_to IS NULL"
        ),
        vec![param(id.to_owned()), param(valid_from)],
    ));
    let copy = format!(
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
    );
    out.push(Statement::dml(
        exactly_one(&copy, 12),
        vec![
            param(id.to_owned()),
            param(event.version),
            param(event.position),
            param(change.kind),
            param(change.detail.clone()),
            param(change.source.submission_id.clone()),
            param(change.source.section_id.clone()),
            param(change.source.reviewed_by.clone()),
            param(change.at.to_iso()),
            param(valid_from),
            param(links),
            param(format!("geometry {id} has no row to record a version of")),
        ],
    ));
}

/// `copy` (an `INSERT … SELECT` of one live row into a history table) as a statement that fails
/// unless it inserted exactly one row, with the text of parameter `$message` in Postgres' error
/// (an integer cast of it: SQL has no `RAISE` outside a function, and a function would be DDL).
/// The cast sits in a `CASE` branch that depends on the count, so it is never evaluated ahead
/// (Postgres folds constant expressions when it plans, even in a branch not taken).
fn exactly_one(copy: &str, message: usize) -> String {
    format!(
        "WITH version AS ({copy} RETURNING 1) \
         SELECT CASE count(*) WHEN 1 THEN 1 \
         ELSE CAST(concat(${message}::text, ' (', count(*), ' rows)') AS integer) END FROM version"
    )
}
