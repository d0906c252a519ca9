//! The docs projector: Sync Gateway's key-value form in schema `docs`.
//!
//! Deterministic: every value comes from the event (payload and position) and the rows written
//! before, so a replay from position 0 writes the same rows. The read model prunes each tree
//! to the database's `revs_limit`; the log keeps every revision.

mod principals;
pub mod schema;

use crate::rev::RevId;
use crate::stored::{StoredDoc, local_text};
use crate::streams::CONTEXT;
use crate::tree::RevTree;
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

    /// 2: attachments may be a location in the attachment folder instead of bytes.
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
            "database" => database(tx, schema, event, &DatabaseEvent::decode(event)?).await,
            "document" => document(tx, schema, event, &DocumentEvent::decode(event)?).await,
            "local" => local(tx, schema, &LocalEvent::decode(event)?).await,
            "attachment" => attachment(tx, schema, &AttachmentEvent::decode(event)?).await,
            "user" => principals::user(tx, schema, &UserEvent::decode(event)?).await,
            "role" => principals::role(tx, schema, &RoleEvent::decode(event)?).await,
            other => Err(ProjectionError::Invalid(format!(
                "unknown docs stream category `{other}`"
            ))),
        }
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
            }
        }
    }
    Ok(())
}

/// Removes the tombstones last changed at or before `up_to`, remembering the newest one
/// removed so `_changes` can tell an older checkpoint to start over.
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
                "WITH gone AS (DELETE FROM {s}.kv WHERE db = $1 AND deleted AND seq <= $2 \
                 RETURNING key, seq), \
                 c AS (DELETE FROM {s}.channels WHERE db = $1 AND key IN (SELECT key FROM gone)), \
                 a AS (DELETE FROM {s}.access WHERE db = $1 AND key IN (SELECT key FROM gone)) \
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

async fn document(
    tx: &Transaction<'_>,
    s: &str,
    event: &RecordedEvent,
    payload: &DocumentEvent,
) -> Result<(), ProjectionError> {
    let DocumentEvent::RevisionStored {
        db,
        doc_id,
        rev,
        ancestry,
        body,
        deleted,
        channels,
        access,
    } = payload;
    let limit: i32 = tx
        .query_opt(
            &format!("SELECT revs_limit FROM {s}.databases WHERE name = $1"),
            &[db],
        )
        .await?
        .map(|row| row.get(0))
        .ok_or_else(|| invalid(format!("revision for missing database `{db}`")))?;
    let current = tx
        .query_opt(
            &format!("SELECT value FROM {s}.kv WHERE db = $1 AND key = $2"),
            &[db, doc_id],
        )
        .await?;
    let before = current
        .map(|row| StoredDoc::parse(row.get(0)))
        .transpose()
        .map_err(invalid)?;
    let mut tree = match &before {
        Some(doc) => doc.tree().map_err(invalid)?,
        None => RevTree::default(),
    };
    let rev_text = rev.clone();
    let rev = RevId::parse(rev).map_err(invalid)?;
    let ancestry = ancestry
        .iter()
        .map(|a| RevId::parse(a))
        .collect::<Result<Vec<_>, _>>()
        .map_err(invalid)?;
    tree.insert(rev, &ancestry, body.clone(), *deleted);
    tree.prune(usize::try_from(limit).unwrap_or(1));
    let mut stored = StoredDoc::of_tree(&tree, event.position)
        .ok_or_else(|| invalid("a document without revisions"))?;
    let previous = before.map(|d| d.sync).unwrap_or_default();
    stored.sync.channels = previous.channels.clone();
    stored.sync.access = previous.access.clone();
    if stored.sync.rev == rev_text {
        route(&mut stored.sync, channels, access, *deleted, event.position);
    }
    let text = stored.to_text().map_err(invalid)?;
    tx.execute(
        &format!(
            "INSERT INTO {s}.kv (db, key, value, seq, rev, deleted) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (db, key) DO UPDATE SET value = $3, seq = $4, rev = $5, deleted = $6"
        ),
        &[
            db,
            doc_id,
            &text,
            &event.position,
            &stored.sync.rev,
            &stored.sync.deleted,
        ],
    )
    .await?;
    index_channels(tx, s, db, doc_id, &stored.sync, event.position).await?;
    index_access(tx, s, db, doc_id, &stored.sync).await
}

/// Replaces the document's grants in `access`.
async fn index_access(
    tx: &Transaction<'_>,
    s: &str,
    db: &str,
    doc_id: &str,
    sync: &crate::stored::SyncData,
) -> Result<(), ProjectionError> {
    tx.execute(
        &format!("DELETE FROM {s}.access WHERE db = $1 AND key = $2"),
        &[&db, &doc_id],
    )
    .await?;
    for (grantee, channels) in &sync.access {
        for channel in channels {
            tx.execute(
                &format!(
                    "INSERT INTO {s}.access (db, grantee, channel, key) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT DO NOTHING"
                ),
                &[&db, grantee, channel, &doc_id],
            )
            .await?;
        }
    }
    Ok(())
}

/// Indexes the channels that changed at `seq`: ones the document is in, ones it just left.
async fn index_channels(
    tx: &Transaction<'_>,
    s: &str,
    db: &str,
    doc_id: &str,
    sync: &crate::stored::SyncData,
    seq: i64,
) -> Result<(), ProjectionError> {
    for (channel, removal) in &sync.channels {
        let removed = match removal {
            None => false,
            Some(r) if r.seq == seq => true,
            Some(_) => continue,
        };
        tx.execute(
            &format!(
                "INSERT INTO {s}.channels (db, channel, key, seq, removed) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (db, channel, key) DO UPDATE SET seq = $4, removed = $5"
            ),
            &[&db, channel, &doc_id, &seq, &removed],
        )
        .await?;
    }
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
            tx.execute(
                &format!(
                    "INSERT INTO {s}.kv (db, key, value) VALUES ($1, $2, $3) \
                     ON CONFLICT (db, key) DO UPDATE SET value = $3"
                ),
                &[db, &local_key(doc_id), &text],
            )
            .await?;
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

/// Moves the document's channel map to the new winner's channels: channels it left get
/// `{rev, seq}` (Sync Gateway's removal entry), channels it is in are null. A tombstone stays in
/// its channels so that their readers learn of the deletion.
fn route(
    sync: &mut crate::stored::SyncData,
    channels: &[String],
    access: &std::collections::BTreeMap<String, Vec<String>>,
    deleted: bool,
    seq: i64,
) {
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
    sync.access = access.clone();
}
