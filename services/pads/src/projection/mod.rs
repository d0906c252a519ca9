//! The projector that builds Etherpad's key-value store from the log: the table
//! `pads.store (key varchar(100) primary key, value text)` exactly as ueberDB's PostgreSQL driver
//! creates it, with every key and value Etherpad writes, so an Etherpad server pointed at it
//! (with `search_path` set to `pads`) opens our pads.
//!
//! Beside it, `pads.pad_stream_versions (pad_id, version)` records up to which version of each
//! pad stream the store is built, so a process can start a pad's state from its store record
//! instead of folding its whole history.

mod author_rows;
mod batch;
mod group_rows;
mod overlay;
pub mod pad_rows;
mod session_rows;

use batch::Batch;
use deadpool_postgres::Transaction;
use overlay::Overlay;
use palimpsest_events::pads::{
    self, AuthorEvent, AuthorMapperEvent, GroupEvent, GroupMapperEvent, PadEvent, SessionEvent,
    TokenEvent,
};
use palimpsest_events::{DomainEvent, RecordedEvent};
use palimpsest_projections::statement::Statement;
use palimpsest_projections::{Projection, ProjectionError, ReadingPlanner, Reads};
use std::sync::Arc;

/// The projection's name, also its schema.
pub const NAME: &str = "pads";

/// The pads store projector.
#[derive(Debug, Clone, Copy, Default)]
pub struct PadsStore;

/// The pads store projector, as the runtime takes it.
pub fn projection() -> Arc<dyn Projection> {
    Arc::new(PadsStore)
}

/// Applies one event of the pads context to the batch.
async fn apply_one(batch: &mut Batch<'_>, event: &RecordedEvent) -> Result<(), ProjectionError> {
    if event.stream.context != pads::CONTEXT {
        return Ok(());
    }
    let category = event.stream.category.as_str();
    let key = crate::streams::decode(category, event.stream.key.as_str());
    match category {
        pads::PAD => {
            pad_rows::apply(batch, key, &PadEvent::decode(event)?).await?;
            batch.rows.pad_version(key, event.version);
        }
        pads::GROUP => group_rows::apply(batch, key, &GroupEvent::decode(event)?).await?,
        pads::AUTHOR => author_rows::apply(batch, key, &AuthorEvent::decode(event)?).await?,
        pads::SESSION => session_rows::apply_session(batch, key, &SessionEvent::decode(event)?)?,
        pads::TOKEN => session_rows::apply_token(batch, key, &TokenEvent::decode(event)?)?,
        pads::AUTHOR_MAPPER => {
            session_rows::apply_author_mapper(batch, key, &AuthorMapperEvent::decode(event)?)?
        }
        pads::GROUP_MAPPER => {
            session_rows::apply_group_mapper(batch, key, &GroupMapperEvent::decode(event)?)?
        }
        other => tracing::warn!(category = other, "unknown pads stream category; ignored"),
    }
    Ok(())
}

#[async_trait::async_trait]
impl Projection for PadsStore {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Every other context's events are ignored (see `apply`).
    fn context(&self) -> Option<&'static str> {
        Some(pads::CONTEXT)
    }

    async fn create_tables(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
    ) -> Result<(), ProjectionError> {
        tx.batch_execute(&format!(
            "CREATE TABLE {schema}.store (\
                 \"key\" character varying(100) NOT NULL, \
                 \"value\" text NOT NULL, \
                 CONSTRAINT store_pkey PRIMARY KEY (key));
             CREATE TABLE {schema}.pad_stream_versions (\
                 pad_id text PRIMARY KEY, \
                 version bigint NOT NULL);"
        ))
        .await?;
        Ok(())
    }

    fn reading_planner(&self) -> Option<&dyn ReadingPlanner> {
        Some(self)
    }
}

/// A batch reads each pad record (and the few other rows it changes) once, changes them in
/// memory, and plans each changed row's write once.
#[async_trait::async_trait]
impl ReadingPlanner for PadsStore {
    async fn plan(
        &self,
        reads: Reads<'_>,
        schema: &str,
        events: &[RecordedEvent],
        out: &mut Vec<Statement>,
    ) -> Result<(), ProjectionError> {
        let mut batch = Batch::new(Overlay::new(reads, schema));
        for event in events {
            apply_one(&mut batch, event).await?;
        }
        batch.finish(out)
    }
}
