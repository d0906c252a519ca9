//! Queries on the read model that several routes share.

use crate::http::error::CouchError;
use crate::stored::StoredDoc;
use deadpool_postgres::Object;
use palimpsest_web::AppState;
use palimpsest_web::content::ContentStore;

/// A live database as the read model knows it.
pub struct DbRow {
    /// Its name.
    pub name: String,
    /// How many ancestors per leaf the read model keeps.
    pub revs_limit: i32,
}

/// A pooled read-model connection.
pub async fn client(state: &AppState) -> Result<Object, CouchError> {
    Ok(state.read.get().await?)
}

/// The database `name`, or CouchDB's 404.
pub async fn database(client: &Object, name: &str) -> Result<DbRow, CouchError> {
    if !storable(name) {
        return Err(CouchError::no_database());
    }
    let row = client
        .query_opt(
            "SELECT name, revs_limit FROM docs.databases WHERE name = $1",
            &[&name],
        )
        .await?
        .ok_or_else(CouchError::no_database)?;
    Ok(DbRow {
        name: row.get(0),
        revs_limit: row.get(1),
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
    let row = client
        .query_opt(
            "SELECT value FROM docs.kv WHERE db = $1 AND key = $2 AND seq IS NOT NULL",
            &[&db, &doc_id],
        )
        .await?;
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
/// or in the attachment folder (each is read whole: for bodies that carry them as base64).
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
            "SELECT DISTINCT ON (md5) md5, data, location FROM docs.attachments WHERE md5 = ANY($1)",
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
                let path = stored_file(store, &location)?;
                tokio::fs::read(&path).await.map_err(|e| {
                    CouchError::internal(format!("attachment {md5} at {}: {e}", path.display()))
                })?
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
    /// The file holding them.
    File(std::path::PathBuf),
}

/// The length and content of the attachment with this `md5-` digest, if stored.
pub async fn attachment_content(
    store: &ContentStore,
    client: &Object,
    md5: &str,
) -> Result<Option<(u64, AttachmentContent)>, CouchError> {
    let row = client
        .query_opt(
            "SELECT length, data, location FROM docs.attachments WHERE md5 = $1 LIMIT 1",
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
        (None, Some(location)) => AttachmentContent::File(stored_file(store, &location)?),
        (None, None) => {
            return Err(CouchError::internal(format!(
                "attachment {md5} has neither bytes nor a location"
            )));
        }
    };
    Ok(Some((length, content)))
}

/// The file of a stored location (a location leaving the folder is an internal error: only
/// the store writes them).
fn stored_file(store: &ContentStore, location: &str) -> Result<std::path::PathBuf, CouchError> {
    store
        .path_of(location)
        .ok_or_else(|| CouchError::internal(format!("attachment location `{location}` is invalid")))
}

/// The `md5-` digests of every attachment of the trees' leaves.
pub fn digests<'a>(trees: impl Iterator<Item = &'a crate::tree::RevTree>) -> Vec<String> {
    let mut out: Vec<String> = trees
        .flat_map(|tree| tree.leaves().filter_map(|n| n.body.as_deref()))
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
