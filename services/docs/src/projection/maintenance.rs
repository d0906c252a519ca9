//! The admin API's document events in the read model: `DocumentResynced` reroutes a document
//! at a new sequence (so `_changes` shows it again, with `removed` where it left a channel),
//! `DocumentPurged` removes it and its channel rows; its grants end (kept as revoked).

use super::{Grants, index_access, index_channels, index_roles, invalid, revoke, route};
use crate::stored::StoredDoc;
use deadpool_postgres::Transaction;
use palimpsest_events::RecordedEvent;
use palimpsest_events::docs::DocumentEvent;
use palimpsest_projections::ProjectionError;

/// Applies a document event other than a stored revision.
pub(super) async fn document(
    tx: &Transaction<'_>,
    s: &str,
    event: &RecordedEvent,
    payload: &DocumentEvent,
) -> Result<(), ProjectionError> {
    match payload {
        DocumentEvent::DocumentResynced {
            db,
            doc_id,
            rev,
            channels,
            access,
            roles,
        } => {
            let Some(row) = tx
                .query_opt(
                    &format!(
                        "SELECT value FROM {s}.kv WHERE db = $1 AND key = $2 AND seq IS NOT NULL"
                    ),
                    &[db, doc_id],
                )
                .await?
            else {
                return Err(invalid(format!("resync of missing document `{doc_id}`")));
            };
            let mut stored = StoredDoc::parse(row.get(0)).map_err(invalid)?;
            if stored.sync.rev != *rev {
                return Err(invalid(format!(
                    "resync of `{doc_id}` ran on {rev}, the read model's winner is {}",
                    stored.sync.rev
                )));
            }
            let grants = Grants { access, roles };
            route(&mut stored.sync, channels, grants, false, event.position);
            stored.sync.sequence = event.position;
            let text = stored.to_text().map_err(invalid)?;
            tx.execute(
                &format!("UPDATE {s}.kv SET value = $3, seq = $4 WHERE db = $1 AND key = $2"),
                &[db, doc_id, &text, &event.position],
            )
            .await?;
            index_channels(tx, s, db, doc_id, &stored.sync, event.position).await?;
            index_access(tx, s, db, doc_id, &stored.sync, event.position).await?;
            index_roles(tx, s, db, doc_id, &stored.sync, event.position).await
        }
        DocumentEvent::DocumentPurged { db, doc_id } => {
            tx.execute(
                &format!("DELETE FROM {s}.channels WHERE db = $1 AND key = $2"),
                &[db, doc_id],
            )
            .await?;
            // Its grants end, remembered as revoked so their users learn what they lost.
            for table in ["access", "role_access"] {
                revoke(tx, s, table, db, doc_id, event.position).await?;
            }
            tx.execute(
                &format!("DELETE FROM {s}.kv WHERE db = $1 AND key = $2 AND seq IS NOT NULL"),
                &[db, doc_id],
            )
            .await?;
            Ok(())
        }
        DocumentEvent::RevisionStored { .. } => {
            Err(invalid("a stored revision is not maintenance"))
        }
    }
}
