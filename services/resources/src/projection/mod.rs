//! The resources projector: Deki's `resources` (with the head-revision mirror), `resourcerevs`
//! and `resourcecontents` in schema `resources`.
//!
//! Deterministic: every value comes from the event (ids included, allocated when the command
//! was decided), so a replay from position 0 writes the same rows.

mod rows;
pub mod schema;

use crate::streams::CONTEXT;
use deadpool_postgres::Transaction;
use palimpsest_events::resources::{ContentEvent, ResourceEvent};
use palimpsest_events::{DomainEvent, RecordedEvent};
use palimpsest_projections::{Projection, ProjectionError};
use std::sync::Arc;

/// The projection's name, also its Postgres schema.
pub const NAME: &str = "resources";

/// The resources read model.
pub struct ResourcesProjection;

/// The resources projector, for the runtime.
pub fn projection() -> Arc<dyn Projection> {
    Arc::new(ResourcesProjection)
}

#[async_trait::async_trait]
impl Projection for ResourcesProjection {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Every other context's events are ignored (see `apply`).
    fn context(&self) -> Option<&'static str> {
        Some(CONTEXT)
    }

    async fn create_tables(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
    ) -> Result<(), ProjectionError> {
        tx.batch_execute(&schema::ddl(schema)).await?;
        Ok(())
    }

    async fn apply(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
        event: &RecordedEvent,
    ) -> Result<(), ProjectionError> {
        if event.stream.context != CONTEXT {
            return Ok(());
        }
        match event.stream.category.as_str() {
            "resource" => resource(tx, schema, event).await,
            "content" => {
                let ContentEvent::ContentStored {
                    rescontent_id,
                    res_id,
                    res_rev,
                    size,
                    mimetype,
                    stored,
                    ..
                } = ContentEvent::decode(event)?;
                rows::content(
                    tx,
                    schema,
                    rescontent_id,
                    res_id,
                    res_rev,
                    size,
                    &mimetype,
                    &stored,
                )
                .await
            }
            "name" | "ids" => Ok(()),
            other => Err(ProjectionError::Invalid(format!(
                "unknown resources stream category `{other}`"
            ))),
        }
    }
}

async fn resource(
    tx: &Transaction<'_>,
    schema: &str,
    event: &RecordedEvent,
) -> Result<(), ProjectionError> {
    let res_id: i64 = event.stream.key.parse().map_err(|_| {
        ProjectionError::Invalid(format!("resource stream key `{}`", event.stream.key))
    })?;
    match ResourceEvent::decode(event)? {
        ResourceEvent::RevisionAdded(revision) => rows::revision(tx, schema, &revision).await,
        ResourceEvent::RevisionsHidden { revs, hidden, .. } => {
            rows::hidden(tx, schema, res_id, &revs, hidden).await
        }
        ResourceEvent::ResourceWiped { .. } => rows::wiped(tx, schema, res_id).await,
    }
}
