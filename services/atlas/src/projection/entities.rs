//! Entity events into `entities` and `entity_history`.

use crate::projection::history::{Change, entity_version};
use crate::projection::{Param, refs};
use deadpool_postgres::Transaction;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{EntityEvent, EntityRow};
use palimpsest_projections::ProjectionError;

/// Applies one entity event.
pub async fn apply(
    tx: &Transaction<'_>,
    schema: &str,
    event: &RecordedEvent,
    payload: &EntityEvent,
) -> Result<(), ProjectionError> {
    let change = match payload {
        EntityEvent::EntityCreated { entity, source } => {
            tx.execute(
                &format!(
                    "INSERT INTO {schema}.entities (id, name, slug, description, type_id, status, \
                     is_deleted, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
                ),
                &refs(&params(entity)),
            )
            .await?;
            Change {
                kind: "created",
                detail: None,
                source,
                at: entity.updated_at,
            }
        }
        EntityEvent::EntityUpdated { entity, source } => {
            tx.execute(
                &format!(
                    "UPDATE {schema}.entities SET name = $2, slug = $3, description = $4, type_id = $5, \
                     status = $6, is_deleted = $7, created_at = $8, updated_at = $9 WHERE id = $1"
                ),
                &refs(&params(entity)),
            )
            .await?;
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
            tx.execute(
                &format!(
                    "UPDATE {schema}.entities SET is_deleted = 1, updated_at = $2 WHERE id = $1"
                ),
                &[entity_id, &at.to_iso()],
            )
            .await?;
            Change {
                kind: "deleted",
                detail: None,
                source,
                at: *at,
            }
        }
    };
    entity_version(tx, schema, event, &change).await
}

/// An entity row's parameters, in the columns' order.
fn params(entity: &EntityRow) -> Vec<Param> {
    vec![
        Box::new(entity.id.clone()),
        Box::new(entity.name.clone()),
        Box::new(entity.slug.clone()),
        Box::new(entity.description.clone()),
        Box::new(entity.type_id.clone()),
        Box::new(entity.status),
        Box::new(entity.is_deleted),
        Box::new(entity.created_at.to_iso()),
        Box::new(entity.updated_at.to_iso()),
    ]
}
