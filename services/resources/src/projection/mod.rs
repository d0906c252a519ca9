//! The resources projector: Deki's `resources` (with the head-revision mirror), `resourcerevs`
//! and `resourcecontents` in schema `resources`.
//!
//! Deterministic: every value comes from the event (ids included, allocated when the command
//! was decided), so a replay from position 0 writes the same rows; and no write depends on a
//! read, so the projection is planned ([`Planner`]): a live batch takes one round trip.

mod rows;
pub mod schema;

use crate::streams::CONTEXT;
use deadpool_postgres::Transaction;
use palimpsest_events::resources::{ContentEvent, ResourceEvent};
use palimpsest_events::{DomainEvent, RecordedEvent};
use palimpsest_projections::statement::Statement;
use palimpsest_projections::{Planner, Projection, ProjectionError};
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

    /// Every row written comes from its event: the runtime sends a live batch in one round trip.
    fn planner(&self) -> Option<&dyn Planner> {
        Some(self)
    }
}

impl Planner for ResourcesProjection {
    fn plan(
        &self,
        schema: &str,
        events: &[RecordedEvent],
        out: &mut Vec<Statement>,
    ) -> Result<(), ProjectionError> {
        events.iter().try_for_each(|event| plan(out, schema, event))
    }
}

/// The statements of one event, appended to `out` in the order they must run; events of other
/// contexts plan none.
fn plan(
    out: &mut Vec<Statement>,
    schema: &str,
    event: &RecordedEvent,
) -> Result<(), ProjectionError> {
    if event.stream.context != CONTEXT {
        return Ok(());
    }
    match event.stream.category.as_str() {
        "resource" => resource(out, schema, event),
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
            let content = rows::Content {
                rescontent_id,
                res_id,
                res_rev,
                size,
                mimetype: &mimetype,
                stored: &stored,
            };
            rows::content(out, schema, content)
        }
        "name" | "ids" => Ok(()),
        other => Err(ProjectionError::Invalid(format!(
            "unknown resources stream category `{other}`"
        ))),
    }
}

fn resource(
    out: &mut Vec<Statement>,
    schema: &str,
    event: &RecordedEvent,
) -> Result<(), ProjectionError> {
    let res_id: i64 = event.stream.key.parse().map_err(|_| {
        ProjectionError::Invalid(format!("resource stream key `{}`", event.stream.key))
    })?;
    match ResourceEvent::decode(event)? {
        ResourceEvent::RevisionAdded(revision) => rows::revision(out, schema, &revision),
        ResourceEvent::RevisionsHidden { revs, hidden, .. } => {
            rows::hidden(out, schema, res_id, &revs, hidden)
        }
        ResourceEvent::ResourceWiped { .. } => rows::wiped(out, schema, res_id),
    }
    Ok(())
}
