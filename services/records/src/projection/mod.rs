//! The records projector: the row tables in schema `records`, from the context's events.
//!
//! Deterministic: every value written comes from the event (the row it carries, its version),
//! never from the clock, so a replay from position 0 writes the same rows. `data` lands in
//! `bytea` exactly as sealed; the projector never holds the site key.

mod rows;
pub mod schema;
mod tasks;

use crate::streams::CONTEXT;
use deadpool_postgres::Transaction;
use palimpsest_events::records::{ClassEvent, DocumentEvent, FtpEvent, TaskEvent, TokenEvent};
use palimpsest_events::{DomainEvent, RecordedEvent};
use palimpsest_projections::{Projection, ProjectionError};
use std::sync::Arc;

/// The projection's name, also its Postgres schema.
pub const NAME: &str = "records";

/// The records read model.
pub struct RecordsProjection;

/// The records projector, for the runtime.
pub fn projection() -> Arc<dyn Projection> {
    Arc::new(RecordsProjection)
}

#[async_trait::async_trait]
impl Projection for RecordsProjection {
    fn name(&self) -> &'static str {
        NAME
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
            "class" => {
                let ClassEvent::ClassDeclared { declaration } = ClassEvent::decode(event)?;
                tx.batch_execute(&schema::class_ddl(schema, &declaration))
                    .await?;
                let json = serde_json::to_value(&declaration)
                    .map_err(|e| ProjectionError::Invalid(e.to_string()))?;
                tx.execute(
                    &format!(
                        "INSERT INTO {schema}.classes (clazz, declaration) VALUES ($1, $2) \
                         ON CONFLICT (clazz) DO UPDATE SET declaration = EXCLUDED.declaration"
                    ),
                    &[&declaration.clazz, &json],
                )
                .await?;
                Ok(())
            }
            "doc" => rows::apply(tx, schema, &DocumentEvent::decode(event)?).await,
            "token" => {
                let TokenEvent::OrgTokenIssued { org, hash } = TokenEvent::decode(event)?;
                tx.execute(
                    &format!("INSERT INTO {schema}.tokens (hash, org) VALUES ($1, $2)"),
                    &[&hash, &org],
                )
                .await?;
                Ok(())
            }
            "unique" => Ok(()),
            "task" => tasks::apply(tx, schema, &TaskEvent::decode(event)?).await,
            "ftp" => match FtpEvent::decode(event)? {
                FtpEvent::FtpSet { org, path, p } => {
                    tx.execute(
                        &format!(
                            "INSERT INTO {schema}.\"FTP\" (org, path, p) VALUES ($1, $2, $3) \
                             ON CONFLICT (org, path) DO UPDATE SET p = EXCLUDED.p"
                        ),
                        &[&org, &path, &p],
                    )
                    .await?;
                    Ok(())
                }
                FtpEvent::FtpPurged { org, path } => {
                    tx.execute(
                        &format!("DELETE FROM {schema}.\"FTP\" WHERE org = $1 AND path = $2"),
                        &[&org, &path],
                    )
                    .await?;
                    Ok(())
                }
            },
            other => Err(ProjectionError::Invalid(format!(
                "unknown records stream category `{other}`"
            ))),
        }
    }
}
