//! The admin `_purge` in the read model: `DocumentPurged` removes the document and its channel
//! rows and its old revisions' bodies; its grants end (kept as revoked, so their users learn
//! what they lost). Stored revisions and `_resync`'s reroutings are applied in runs (`documents.rs`).

use super::{invalid, revoke};
use deadpool_postgres::Transaction;
use palimpsest_events::docs::DocumentEvent;
use palimpsest_projections::ProjectionError;

/// Applies a document event that is not applied in a run: a purge.
pub(super) async fn document(
    tx: &Transaction<'_>,
    s: &str,
    payload: &DocumentEvent,
) -> Result<(), ProjectionError> {
    match payload {
        DocumentEvent::DocumentPurged { db, doc_id } => {
            tx.execute(
                &format!("DELETE FROM {s}.channels WHERE db = $1 AND key = $2"),
                &[db, doc_id],
            )
            .await?;
            // Its grants end, remembered as revoked (at the database's next sequence) so their
            // users learn what they lost. A database no longer there holds no grants.
            let counted = tx
                .query_opt(
                    &format!(
                        "UPDATE {s}.databases SET last_seq = last_seq + 1 WHERE name = $1 \
                         RETURNING last_seq"
                    ),
                    &[db],
                )
                .await?;
            if let Some(row) = counted {
                let seq: i64 = row.get(0);
                for table in ["access", "role_access"] {
                    revoke(tx, s, table, db, doc_id, seq).await?;
                }
            }
            tx.execute(
                &format!("DELETE FROM {s}.kv WHERE db = $1 AND key = $2 AND seq IS NOT NULL"),
                &[db, doc_id],
            )
            .await?;
            tx.execute(
                &format!("DELETE FROM {s}.old_revs WHERE db = $1 AND key = $2"),
                &[db, doc_id],
            )
            .await?;
            Ok(())
        }
        DocumentEvent::RevisionStored { .. } | DocumentEvent::DocumentResynced { .. } => {
            Err(invalid("a revision or a resync is applied in a run"))
        }
    }
}
