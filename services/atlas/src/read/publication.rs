//! What an approval asks the read model: which rows hang on the rows it deletes, and who holds
//! the slugs it writes — answered only when the read model stands exactly at the publication
//! stream's version the approval decides against (all published rows change only through
//! approvals, and every approval appends to that stream), so the answer is the published state
//! at that version, not a guess.

use crate::read::SCHEMA as S;
use std::collections::{BTreeMap, BTreeSet};
use tokio_postgres::IsolationLevel;

/// The rows an approval must load besides those its snapshot names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates {
    /// Geometries linked to an entity being deleted, and geometries whose binding holds a
    /// geometry being deleted.
    pub geometries: BTreeSet<String>,
    /// For each slug written, the entity holding it now.
    pub slug_owners: BTreeMap<String, String>,
}

/// Where the read model stood when asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// At the expected publication version: the candidates.
    Exact(Candidates),
    /// At another version (behind: not caught up yet; ahead: another approval published since).
    Elsewhere(i64),
}

/// Asks, in one repeatable-read snapshot of the read model.
pub async fn candidates(
    client: &mut deadpool_postgres::Client,
    publication_version: i64,
    deleted_entities: &[String],
    deleted_geometries: &[String],
    slugs: &[String],
) -> Result<Answer, tokio_postgres::Error> {
    let tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await?;
    let at: i64 = tx
        .query_one(
            &format!("SELECT version FROM {S}.publication_head WHERE id = 1"),
            &[],
        )
        .await?
        .get(0);
    if at != publication_version {
        return Ok(Answer::Elsewhere(at));
    }
    let mut found = Candidates::default();
    if !deleted_entities.is_empty() {
        for row in tx
            .query(
                &format!(
                    "SELECT DISTINCT geometry_id FROM {S}.entity_geometries WHERE entity_id = ANY($1)"
                ),
                &[&deleted_entities],
            )
            .await?
        {
            found.geometries.insert(row.get(0));
        }
    }
    for id in deleted_geometries {
        for row in tx
            .query(
                &format!(
                    "SELECT id FROM {S}.geometries WHERE binding IS NOT NULL AND is_deleted = 0 \
                     AND binding::jsonb @> jsonb_build_array($1::text)"
                ),
                &[id],
            )
            .await?
        {
            found.geometries.insert(row.get(0));
        }
    }
    if !slugs.is_empty() {
        for row in tx
            .query(
                &format!("SELECT slug, id FROM {S}.entities WHERE slug = ANY($1)"),
                &[&slugs],
            )
            .await?
        {
            found.slug_owners.insert(row.get(0), row.get(1));
        }
    }
    tx.commit().await?;
    Ok(Answer::Exact(found))
}
