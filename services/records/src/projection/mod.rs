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
use palimpsest_projections::statement::Statement;
use palimpsest_projections::{Planner, Projection, ProjectionError};
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

    /// Every other context's events are ignored (see `apply`).
    fn context(&self) -> Option<&'static str> {
        Some(CONTEXT)
    }

    /// 2: a single-valued collection has its sync index (`schema::class_ddl`); a read model
    /// of version 1 is rebuilt to get it.
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

impl Planner for RecordsProjection {
    fn plan(
        &self,
        schema: &str,
        events: &[RecordedEvent],
        out: &mut Vec<Statement>,
    ) -> Result<(), ProjectionError> {
        events.iter().try_for_each(|event| plan(out, schema, event))
    }
}

/// The statements of one event, appended to `out` in the order they must run.
fn plan(
    out: &mut Vec<Statement>,
    schema: &str,
    event: &RecordedEvent,
) -> Result<(), ProjectionError> {
    if event.stream.context != CONTEXT {
        return Ok(());
    }
    match event.stream.category.as_str() {
        "class" => {
            let ClassEvent::ClassDeclared { declaration } = ClassEvent::decode(event)?;
            out.push(Statement::Ddl(schema::class_ddl(schema, &declaration)));
            let json = serde_json::to_value(&declaration)
                .map_err(|e| ProjectionError::Invalid(e.to_string()))?;
            out.push(Statement::dml(
                format!(
                    "INSERT INTO {schema}.classes (clazz, declaration) VALUES ($1, $2) \
                     ON CONFLICT (clazz) DO UPDATE SET declaration = EXCLUDED.declaration"
                ),
                vec![Box::new(declaration.clazz.clone()), Box::new(json)],
            ));
            Ok(())
        }
        "doc" => rows::plan(
            out,
            schema,
            &DocumentEvent::decode(event)?,
            rows::Place::at(event.version),
        ),
        "token" => {
            let TokenEvent::OrgTokenIssued { org, hash } = TokenEvent::decode(event)?;
            out.push(Statement::dml(
                format!("INSERT INTO {schema}.tokens (hash, org) VALUES ($1, $2)"),
                vec![Box::new(hash), Box::new(org)],
            ));
            Ok(())
        }
        "unique" => Ok(()),
        "task" => tasks::plan(out, schema, &TaskEvent::decode(event)?),
        "ftp" => {
            match FtpEvent::decode(event)? {
                FtpEvent::FtpSet { org, path, p } => out.push(Statement::dml(
                    format!(
                        "INSERT INTO {schema}.\"FTP\" (org, path, p) VALUES ($1, $2, $3) \
                         ON CONFLICT (org, path) DO UPDATE SET p = EXCLUDED.p"
                    ),
                    vec![Box::new(org), Box::new(path), Box::new(p)],
                )),
                FtpEvent::FtpPurged { org, path } => out.push(Statement::dml(
                    format!("DELETE FROM {schema}.\"FTP\" WHERE org = $1 AND path = $2"),
                    vec![Box::new(org), Box::new(path)],
                )),
            }
            Ok(())
        }
        other => Err(ProjectionError::Invalid(format!(
            "unknown records stream category `{other}`"
        ))),
    }
}
