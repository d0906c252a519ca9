//! Queries on the read model that several routes share.

use crate::attachments::AttachmentHasher;
use crate::http::error::CouchError;
use crate::stored::StoredDoc;
use deadpool_postgres::Object;
use palimpsest_web::AppState;
use palimpsest_web::content::{self, ContentStore, Verified};

/// A live database as the read model knows it.
pub struct DbRow {
    /// Its name.
    pub name: String,
    /// How many ancestors per leaf the read model keeps.
    pub revs_limit: i32,
    /// Which database of that name (a deleted and re-created one is another).
    pub incarnation: uuid::Uuid,
    /// Its sequence: moved by every change of one of its documents (a purge included).
    pub last_seq: i64,
    /// The newest sequence its tombstone purges removed (moved by `_purge` of tombstones).
    pub purged_seq: i64,
}

/// The stored documents among ids `$2` of database `$1`: one probe of the primary key per id
/// (`unnest … CROSS JOIN LATERAL … LIMIT 1`), whatever the table's statistics. Not `key =
/// ANY($2)`: the generic plan a connection caches for that while the table is small filters
/// every row of the database through its sequence index, and keeps doing so as it grows (7 ms
/// per `_revs_diff` of 100 ids at 10,000 documents in the replication bench). Public so a test
/// can check its plan.
pub const DOCUMENTS_BY_ID: &str = "SELECT k.key, k.value FROM unnest($2::text[]) AS u(key) \
     CROSS JOIN LATERAL (SELECT key, value FROM docs.kv \
       WHERE db = $1 AND key = u.key AND seq IS NOT NULL LIMIT 1) k";

/// A pooled read-model connection.
pub async fn client(state: &AppState) -> Result<Object, CouchError> {
    Ok(state.read.get().await?)
}

/// The database `name`, or CouchDB's 404.
pub async fn database(client: &Object, name: &str) -> Result<DbRow, CouchError> {
    if !storable(name) {
        return Err(CouchError::no_database());
    }
    // Prepared once per connection: every request to a database asks this first.
    let statement = client
        .prepare_cached(
            "SELECT name, revs_limit, incarnation, last_seq, purged_seq FROM docs.databases \
             WHERE name = $1",
        )
        .await?;
    let row = client
        .query_opt(&statement, &[&name])
        .await?
        .ok_or_else(CouchError::no_database)?;
    Ok(DbRow {
        name: row.get(0),
        revs_limit: row.get(1),
        incarnation: row.get(2),
        last_seq: row.get(3),
        purged_seq: row.get(4),
    })
}

/// Whether `text` can be a stored key: the log refuses U+0000 (Postgres text cannot hold it),
/// so a key with one names nothing and is not looked up (looking it up is a database error).
pub fn storable(text: &str) -> bool {
    !text.contains('\0')
}

/// A stored document, if the database has it.
pub async fn document(
    client: &Object,
    db: &str,
    doc_id: &str,
) -> Result<Option<StoredDoc>, CouchError> {
    if !storable(doc_id) {
        return Ok(None);
    }
    let statement = client
        .prepare_cached("SELECT value FROM docs.kv WHERE db = $1 AND key = $2 AND seq IS NOT NULL")
        .await?;
    let row = client.query_opt(&statement, &[&db, &doc_id]).await?;
    Ok(row.map(|r| StoredDoc::parse(r.get(0))).transpose()?)
}

/// The database's last sequence (0 when it has no document).
pub async fn update_seq(client: &Object, db: &str) -> Result<i64, CouchError> {
    let row = client
        .query_one(
            "SELECT coalesce(max(seq), 0) FROM docs.kv WHERE db = $1 AND seq IS NOT NULL",
            &[&db],
        )
        .await?;
    Ok(row.get(0))
}

/// The bytes of the attachments with these `md5-` digests, whether inline in the read model
/// or in the attachment folder (each is read whole: for bodies that carry them as base64; a
/// file is checked against its recorded SHA-1 first, and an altered one fails the answer).
pub async fn attachment_data(
    store: &ContentStore,
    client: &Object,
    digests: &[String],
) -> Result<crate::http::render::Atts, CouchError> {
    let mut out = crate::http::render::Atts::new();
    if digests.is_empty() {
        return Ok(out);
    }
    let rows = client
        .query(
            "SELECT DISTINCT ON (md5) md5, data, location, key FROM docs.attachments \
             WHERE md5 = ANY($1)",
            &[&digests],
        )
        .await?;
    for row in rows {
        let md5: String = row.get(0);
        let bytes = match (
            row.get::<_, Option<Vec<u8>>>(1),
            row.get::<_, Option<String>>(2),
        ) {
            (Some(bytes), _) => bytes,
            (None, Some(location)) => {
                let sha1 = recorded_sha1(&row.get::<_, String>(3))?;
                content::read_verified(store, &location, &sha1, AttachmentHasher::default(), "docs")
                    .await?
            }
            (None, None) => {
                return Err(CouchError::internal(format!(
                    "attachment {md5} has neither bytes nor a location"
                )));
            }
        };
        out.insert(md5, bytes);
    }
    Ok(out)
}

/// Where an attachment's bytes are: inline in the read model, or a file of the folder.
pub enum AttachmentContent {
    /// The bytes (small attachments).
    Inline(Vec<u8>),
    /// The file holding them, already checked against its recorded SHA-1.
    File(Verified),
}

/// The length and content of the attachment with this `md5-` digest, if stored (a file is
/// checked against its recorded SHA-1 before it is handed back: an altered one is an error).
pub async fn attachment_content(
    store: &ContentStore,
    client: &Object,
    md5: &str,
) -> Result<Option<(u64, AttachmentContent)>, CouchError> {
    let row = client
        .query_opt(
            "SELECT length, data, location, key FROM docs.attachments WHERE md5 = $1 LIMIT 1",
            &[&md5],
        )
        .await?;
    let Some(row) = row else { return Ok(None) };
    let length = u64::try_from(row.get::<_, i64>(0)).unwrap_or(0);
    let content = match (
        row.get::<_, Option<Vec<u8>>>(1),
        row.get::<_, Option<String>>(2),
    ) {
        (Some(bytes), _) => AttachmentContent::Inline(bytes),
        (None, Some(location)) => {
            let sha1 = recorded_sha1(&row.get::<_, String>(3))?;
            AttachmentContent::File(
                content::open_verified(
                    store,
                    &location,
                    &sha1,
                    AttachmentHasher::default(),
                    "docs",
                )
                .await?,
            )
        }
        (None, None) => {
            return Err(CouchError::internal(format!(
                "attachment {md5} has neither bytes nor a location"
            )));
        }
    };
    Ok(Some((length, content)))
}

/// The SHA-1 an attachment's event recorded, as hex (the store's key), from its row's key
/// (`_sync:att:sha1-<base64>`).
fn recorded_sha1(key: &str) -> Result<String, CouchError> {
    key.strip_prefix("_sync:att:sha1-")
        .and_then(|b64| crate::attachments::decode(b64).ok())
        .map(hex::encode)
        .ok_or_else(|| CouchError::internal(format!("attachment key `{key}` names no SHA-1")))
}

/// An older revision's body, kept in the read model from when it stopped being a leaf until
/// the database is compacted, with the channels it was in.
pub struct OldRevision {
    /// The revision.
    pub rev: String,
    /// Its body as JSON text.
    pub body: String,
    /// The channels the sync function gave it.
    pub channels: Vec<String>,
}

/// The older revisions among `revs` whose bodies the read model still keeps.
pub async fn old_revisions(
    client: &Object,
    db: &str,
    doc_id: &str,
    revs: &[String],
) -> Result<Vec<OldRevision>, CouchError> {
    if revs.is_empty() || !storable(doc_id) {
        return Ok(Vec::new());
    }
    let rows = client
        .query(
            "SELECT rev, body, channels FROM docs.old_revs WHERE db = $1 AND key = $2 \
             AND rev = ANY($3)",
            &[&db, &doc_id, &revs],
        )
        .await?;
    rows.iter()
        .map(|row| {
            let channels: String = row.get(2);
            Ok(OldRevision {
                rev: row.get(0),
                body: row.get(1),
                channels: serde_json::from_str(&channels).map_err(|e| {
                    CouchError::internal(format!("old revision channels are malformed: {e}"))
                })?,
            })
        })
        .collect()
}

/// The `md5-` digests of every attachment of the trees' revisions that have a body (the
/// leaves, and older revisions a read restored).
pub fn digests<'a>(trees: impl Iterator<Item = &'a crate::tree::RevTree>) -> Vec<String> {
    let mut out: Vec<String> = trees
        .flat_map(|tree| tree.nodes().iter().filter_map(|n| n.body.as_deref()))
        .filter(|body| body.contains("\"_attachments\""))
        .flat_map(|body| {
            crate::attachments::stubs(body)
                .into_values()
                .map(|s| s.digest)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_sha1_is_read_from_the_rows_key() {
        assert_eq!(
            recorded_sha1("_sync:att:sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=").expect("key"),
            "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"
        );
        assert!(recorded_sha1("_sync:att:md5-x").is_err());
    }
}
