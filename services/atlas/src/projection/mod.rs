//! The atlas projector: builds the read model in schema `atlas` from the context's events.
//!
//! Deterministic: every value written comes from the event (its payload, stream key, version
//! and position), never from the clock, so a replay from position 0 writes the same rows.

mod entities;
mod geometries;
mod history;
pub mod schema;
mod sections;
mod users;

use crate::streams::CONTEXT;
use deadpool_postgres::Transaction;
use palimpsest_events::DomainEvent;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{
    EntityEvent, GeometryEvent, PublicationEvent, SectionEvent, UserEvent,
};
use palimpsest_projections::{Projection, ProjectionError};
use std::sync::Arc;

/// A statement parameter built from an event, owned so a row's parameters can be listed once.
pub(crate) type Param = Box<dyn tokio_postgres::types::ToSql + Sync + Send>;

/// Borrows owned parameters the way `execute` takes them.
pub(crate) fn refs(params: &[Param]) -> Vec<&(dyn tokio_postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|p| &**p as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect()
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

    /// Every other context's events are ignored (see `apply`).
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
            "section" => sections::apply(tx, schema, event, &SectionEvent::decode(event)?).await,
            "entity" => entities::apply(tx, schema, event, &EntityEvent::decode(event)?).await,
            "geometry" => {
                geometries::apply(tx, schema, event, &GeometryEvent::decode(event)?).await
            }
            "publication" => {
                let PublicationEvent::SubmissionPublished { .. } = PublicationEvent::decode(event)?;
                tx.execute(
                    &format!("UPDATE {schema}.publication_head SET version = $1 WHERE id = 1"),
                    &[&event.version],
                )
                .await?;
                Ok(())
            }
            "user" => users::apply(tx, schema, &UserEvent::decode(event)?).await,
            other => Err(ProjectionError::Invalid(format!(
                "unknown atlas stream category `{other}`"
            ))),
        }
    }
}
