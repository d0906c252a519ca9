//! The docs projector: Sync Gateway's key-value form in schema `docs`.
//!
//! Deterministic: every value comes from the event (payload and position) and the rows written
//! before (each database's sequence counts its documents' changes in log order), so a replay
//! from position 0 writes the same rows. The read model prunes each tree
//! to the database's `revs_limit`; the log keeps every revision.

mod documents;
mod maintenance;
mod principals;
pub mod schema;

pub use documents::stored_documents_query;

use crate::stored::local_text;
use crate::streams::CONTEXT;
use deadpool_postgres::Transaction;
use palimpsest_events::docs::{
    AttachmentEvent, DatabaseEvent, DocumentEvent, LocalEvent, RoleEvent, UserEvent,
};
use palimpsest_events::{DomainEvent, RecordedEvent};
use palimpsest_projections::{Projection, ProjectionError};
use std::sync::Arc;

/// The projection's name, also its Postgres schema.
pub const NAME: &str = "docs";

/// The docs read model.
pub struct DocsProjection;

/// The docs projector, for the runtime.
pub fn projection() -> Arc<dyn Projection> {
    Arc::new(DocsProjection)
}

#[async_trait::async_trait]
impl Projection for DocsProjection {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Every other context's events are ignored (see `apply`).
    fn context(&self) -> Option<&'static str> {
        Some(CONTEXT)
    }

    /// 2: attachments may be a location in the attachment folder instead of bytes.
    /// 3: each leaf revision's channels in `_sync.rev_channels`.
    /// 4: the bodies of revisions that stopped being leaves, in `old_revs` until compaction;
    /// sequences counted per database (`databases.last_seq`), `kv.position` for the purge.
    fn version(&self) -> i32 {
        4
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
            "database" => database(tx, schema, event, &DatabaseEvent::decode(event)?).await,
            "document" => match DocumentEvent::decode(event)? {
                payload if documents::in_run(&payload) => {
                    documents::apply(tx, schema, &[(event, payload)]).await
                }
                payload => maintenance::document(tx, schema, &payload).await,
            },
            "local" => local(tx, schema, &LocalEvent::decode(event)?).await,
            "attachment" => attachment(tx, schema, &AttachmentEvent::decode(event)?).await,
            "user" => principals::user(tx, schema, &UserEvent::decode(event)?).await,
            "role" => principals::role(tx, schema, &RoleEvent::decode(event)?).await,
            other => Err(ProjectionError::Invalid(format!(
                "unknown docs stream category `{other}`"
            ))),
        }
    }

    /// Runs of stored revisions (and `_resync` reroutings) are written together
    /// (`documents.rs`); every other event, a purge included, is applied on its own, in its place.
    async fn apply_batch(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
        events: &[RecordedEvent],
    ) -> Result<(), ProjectionError> {
        let mut run = Vec::new();
        for event in events {
            if event.stream.context == CONTEXT && event.stream.category == "document" {
                let payload = DocumentEvent::decode(event)?;
                if documents::in_run(&payload) {
                    run.push((event, payload));
                } else {
                    documents::apply(tx, schema, &std::mem::take(&mut run)).await?;
                    maintenance::document(tx, schema, &payload).await?;
                }
                continue;
            }
            documents::apply(tx, schema, &std::mem::take(&mut run)).await?;
            self.apply(tx, schema, event).await?;
        }
        documents::apply(tx, schema, &run).await
    }
}

async fn database(
    tx: &Transaction<'_>,
    s: &str,
    event: &RecordedEvent,
    payload: &DatabaseEvent,
) -> Result<(), ProjectionError> {
    match payload {
        DatabaseEvent::DatabaseCreated {
            name,
            incarnation,
            revs_limit,
            sync,
            guest,
        } => {
            let limit = i32::try_from(*revs_limit).unwrap_or(i32::MAX);
            let guest = guest
                .as_ref()
                .map(serde_json::to_string)
                .transpose()
                .map_err(invalid)?;
            tx.execute(
                &format!(
                    "INSERT INTO {s}.databases (name, incarnation, revs_limit, created_seq, sync, guest) \
                     VALUES ($1, $2, $3, $4, $5, $6)"
                ),
                &[name, incarnation, &limit, &event.position, sync, &guest],
            )
            .await?;
        }
        DatabaseEvent::TombstonesPurged {
            incarnation,
            up_to_seq,
        } => purge(tx, s, *incarnation, *up_to_seq).await?,
        DatabaseEvent::RevisionBodiesCompacted { incarnation } => {
            tx.execute(
                &format!(
                    "DELETE FROM {s}.old_revs WHERE db = \
                     (SELECT name FROM {s}.databases WHERE incarnation = $1)"
                ),
                &[incarnation],
            )
            .await?;
        }
        // The read model keeps the design document itself; its validator lives in the
        // database's stream for the write commands.
        DatabaseEvent::ValidatorSet { .. } => {}
        DatabaseEvent::SyncFunctionSet { incarnation, sync } => {
            tx.execute(
                &format!("UPDATE {s}.databases SET sync = $2 WHERE incarnation = $1"),
                &[incarnation, sync],
            )
            .await?;
        }
        DatabaseEvent::DatabaseDeleted { incarnation } => {
            let gone = tx
                .query_opt(
                    &format!("DELETE FROM {s}.databases WHERE incarnation = $1 RETURNING name"),
                    &[incarnation],
                )
                .await?;
            if let Some(row) = gone {
                let name: String = row.get(0);
                tx.execute(&format!("DELETE FROM {s}.kv WHERE db = $1"), &[&name])
                    .await?;
                tx.execute(&format!("DELETE FROM {s}.channels WHERE db = $1"), &[&name])
                    .await?;
                tx.execute(&format!("DELETE FROM {s}.access WHERE db = $1"), &[&name])
                    .await?;
                tx.execute(
                    &format!("DELETE FROM {s}.role_access WHERE db = $1"),
                    &[&name],
                )
                .await?;
                tx.execute(&format!("DELETE FROM {s}.old_revs WHERE db = $1"), &[&name])
                    .await?;
            }
        }
    }
    Ok(())
}

/// Removes the tombstones last changed at or before log position `up_to`, remembering the
/// sequence of the newest one removed so `_changes` can tell an older checkpoint to start over.
async fn purge(
    tx: &Transaction<'_>,
    s: &str,
    incarnation: uuid::Uuid,
    up_to: i64,
) -> Result<(), ProjectionError> {
    let Some(row) = tx
        .query_opt(
            &format!("SELECT name FROM {s}.databases WHERE incarnation = $1"),
            &[&incarnation],
        )
        .await?
    else {
        return Ok(());
    };
    let db: String = row.get(0);
    let purged = tx
        .query_one(
            &format!(
                "WITH gone AS (DELETE FROM {s}.kv WHERE db = $1 AND deleted AND position <= $2 \
                 RETURNING key, seq), \
                 c AS (DELETE FROM {s}.channels WHERE db = $1 AND key IN (SELECT key FROM gone)), \
                 a AS (DELETE FROM {s}.access WHERE db = $1 AND key IN (SELECT key FROM gone)), \
                 r AS (DELETE FROM {s}.role_access WHERE db = $1 AND key IN (SELECT key FROM gone)), \
                 o AS (DELETE FROM {s}.old_revs WHERE db = $1 AND key IN (SELECT key FROM gone)) \
                 SELECT coalesce(max(seq), 0) FROM gone"
            ),
            &[&db, &up_to],
        )
        .await?;
    let newest: i64 = purged.get(0);
    tx.execute(
        &format!("UPDATE {s}.databases SET purged_seq = greatest(purged_seq, $2) WHERE name = $1"),
        &[&db, &newest],
    )
    .await?;
    Ok(())
}

fn invalid(e: impl std::fmt::Display) -> ProjectionError {
    ProjectionError::Invalid(e.to_string())
}

/// Marks every live grant of the document in `table` revoked at `seq`; the grants it still
/// makes are then written back live.
pub(super) async fn revoke(
    tx: &Transaction<'_>,
    s: &str,
    table: &str,
    db: &str,
    doc_id: &str,
    seq: i64,
) -> Result<(), ProjectionError> {
    tx.execute(
        &format!(
            "UPDATE {s}.{table} SET revoked_seq = $3 \
             WHERE db = $1 AND key = $2 AND revoked_seq IS NULL"
        ),
        &[&db, &doc_id, &seq],
    )
    .await?;
    Ok(())
}

/// The key of a local document.
pub fn local_key(doc_id: &str) -> String {
    format!("_sync:local:{doc_id}")
}

async fn local(tx: &Transaction<'_>, s: &str, payload: &LocalEvent) -> Result<(), ProjectionError> {
    match payload {
        LocalEvent::LocalSaved {
            db,
            doc_id,
            number,
            body,
        } => {
            let text = local_text(body, &crate::local::local_rev(*number));
            // Prepared once per connection: a replicator saves its checkpoint every batch.
            let save = tx
                .prepare_cached(&format!(
                    "INSERT INTO {s}.kv (db, key, value) VALUES ($1, $2, $3) \
                     ON CONFLICT (db, key) DO UPDATE SET value = $3"
                ))
                .await?;
            tx.execute(&save, &[db, &local_key(doc_id), &text]).await?;
        }
        LocalEvent::LocalDeleted { db, doc_id } => {
            tx.execute(
                &format!("DELETE FROM {s}.kv WHERE db = $1 AND key = $2"),
                &[db, &local_key(doc_id)],
            )
            .await?;
        }
    }
    Ok(())
}

async fn attachment(
    tx: &Transaction<'_>,
    s: &str,
    payload: &AttachmentEvent,
) -> Result<(), ProjectionError> {
    let AttachmentEvent::AttachmentStored {
        sha1,
        md5,
        length,
        data,
        location,
    } = payload;
    let bytes = data
        .as_deref()
        .map(crate::attachments::decode)
        .transpose()
        .map_err(invalid)?;
    if bytes.is_none() && location.is_none() {
        return Err(ProjectionError::Invalid(format!(
            "attachment {sha1} has neither data nor a location"
        )));
    }
    let length = i64::try_from(*length).map_err(invalid)?;
    tx.execute(
        &format!(
            "INSERT INTO {s}.attachments (key, md5, length, data, location) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING"
        ),
        &[&format!("_sync:att:{sha1}"), md5, &length, &bytes, location],
    )
    .await?;
    Ok(())
}

/// What a revision grants: `access()` and `role()`.
pub(crate) struct Grants<'a> {
    /// User (or `role:` name) → channels.
    pub access: &'a std::collections::BTreeMap<String, Vec<String>>,
    /// User → roles.
    pub roles: &'a std::collections::BTreeMap<String, Vec<String>>,
}

/// Moves the document's channel map to the new winner's channels: channels it left get
/// `{rev, seq}` (Sync Gateway's removal entry), channels it is in are null. A tombstone stays in
/// its channels so that their readers learn of the deletion, but its grants replace the
/// document's: deleting the granting document revokes them.
pub(crate) fn route(
    sync: &mut crate::stored::SyncData,
    channels: &[String],
    grants: Grants<'_>,
    deleted: bool,
    seq: i64,
) {
    sync.access = grants.access.clone();
    sync.role_access = grants.roles.clone();
    if deleted {
        return;
    }
    for (name, state) in sync.channels.iter_mut() {
        if state.is_none() && !channels.contains(name) {
            *state = Some(crate::stored::Removal {
                rev: sync.rev.clone(),
                seq,
            });
        }
    }
    for name in channels {
        sync.channels.insert(name.clone(), None);
    }
}
