//! The atlas projector: builds the read model in schema `atlas` from the context's events.
//!
//! Deterministic: every value written comes from the event (its payload, stream key, version
//! and position), never from the clock, so a replay from position 0 writes the same rows. No
//! write depends on a value read back into Rust (what a write reads of earlier rows, e.g. a
//! history version copied from its live row, it reads inside its own SQL, which runs after every
//! statement planned before it), so the projection is planned ([`Planner`]): a live batch goes
//! out in one round trip with its checkpoint and `COMMIT`.

mod entities;
mod geometries;
mod history;
pub mod schema;
mod sections;
mod users;

#[cfg(test)]
mod tests;

use crate::streams::CONTEXT;
use deadpool_postgres::Transaction;
use palimpsest_events::DomainEvent;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{
    EntityEvent, GeometryEvent, PublicationEvent, SectionEvent, UserEvent,
};
use palimpsest_projections::statement::{Param, Statement};
use palimpsest_projections::{Planner, Projection, ProjectionError};
use std::sync::Arc;
use tokio_postgres::types::ToSql;

/// One value of a planned statement, owned: a plan outlives the events it was made from.
pub(crate) fn param(value: impl ToSql + Sync + Send + 'static) -> Param {
    Box::new(value)
}

/// The projection's name, also its Postgres schema.
pub const NAME: &str = "atlas";

/// The atlas read model.
pub struct AtlasProjection;

/// The atlas projector, for the runtime.
pub fn projection() -> Arc<dyn Projection> {
    Arc::new(AtlasProjection)
}

#[async_trait::async_trait]
impl Projection for AtlasProjection {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Every other context's events are ignored (see `plan`).
    fn context(&self) -> Option<&'static str> {
        Some(CONTEXT)
    }

    /// 2: the `users` table.
    fn version(&self) -> i32 {
        2
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

impl Planner for AtlasProjection {
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
        "section" => sections::plan(out, schema, event, &SectionEvent::decode(event)?),
        "entity" => {
            entities::plan(out, schema, event, &EntityEvent::decode(event)?);
            Ok(())
        }
        "geometry" => {
            geometries::plan(out, schema, event, &GeometryEvent::decode(event)?);
            Ok(())
        }
        "publication" => {
            let PublicationEvent::SubmissionPublished { .. } = PublicationEvent::decode(event)?;
            out.push(Statement::dml(
                format!("UPDATE {schema}.publication_head SET version = $1 WHERE id = 1"),
                vec![param(event.version)],
            ));
            Ok(())
        }
        "user" => {
            users::plan(out, schema, &UserEvent::decode(event)?);
            Ok(())
        }
        other => Err(ProjectionError::Invalid(format!(
            "unknown atlas stream category `{other}`"
        ))),
    }
}
