//! Entity events into `entities` and `entity_history`.

use crate::projection::history::{Change, entity_version};
use crate::projection::param;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{EntityEvent, EntityRow};
use palimpsest_projections::statement::{Param, Statement};

/// Plans one entity event: the row, then the entity's new version.
pub fn plan(out: &mut Vec<Statement>, schema: &str, event: &RecordedEvent, payload: &EntityEvent) {
    let change = match payload {
        EntityEvent::EntityCreated { entity, source } => {
            out.push(Statement::dml(
                format!(
                    "INSERT INTO {schema}.entities (id, name, slug, description, type_id, status, \
                     is_deleted, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
                ),
                params(entity),
            ));
            Change {
                kind: "created",
                detail: None,
                source,
                at: entity.updated_at,
            }
        }
        EntityEvent::EntityUpdated { entity, source } => {
            out.push(Statement::dml(
                format!(
                    "UPDATE {schema}.entities SET name = $2, slug = $3, description = $4, type_id = $5, \
                     status = $6, is_deleted = $7, created_at = $8, updated_at = $9 WHERE id = $1"
                ),
                params(entity),
            ));
            Change {
                kind: "updated",
                detail: None,
                source,
                at: entity.updated_at,
            }
        }
        EntityEvent::EntityDeleted {
            entity_id,
            at,
            source,
        } => {
            out.push(Statement::dml(
                format!(
                    "UPDATE {schema}.entities SET is_deleted = 1, updated_at = $2 WHERE id = $1"
                ),
                vec![param(entity_id.clone()), param(at.to_iso())],
            ));
            Change {
                kind: "deleted",
                detail: None,
                source,
                at: *at,
            }
        }
    };
    entity_version(out, schema, event, &change);
}

/// An entity row's parameters, in the columns' order.
fn params(entity: &EntityRow) -> Vec<Param> {
    vec![
        param(entity.id.clone()),
        param(entity.name.clone()),
        param(entity.slug.clone()),
        param(entity.description.clone()),
        param(entity.type_id.clone()),
        param(entity.status),
        param(entity.is_deleted),
        param(entity.created_at.to_iso()),
        param(entity.updated_at.to_iso()),
    ]
}
