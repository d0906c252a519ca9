//! Entity queries: the live table, or the temporal history table as of a time.

use crate::hashing::entity_hash;
use crate::read::SCHEMA as S;
use chrono::{DateTime, Utc};
use palimpsest_events::atlas::{EntityRow, Timestamp};
use serde::{Deserialize, Serialize};
use tokio_postgres::{GenericClient, Row};

/// An entity as the read routes answer it: the `entities` columns, `geometry_count` (live
/// geometries linked to it) and `hash` (its `base_hash`, see [`crate::hashing`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityView {
    /// `id`.
    pub id: String,
    /// `name`.
    pub name: String,
    /// `slug`.
    pub slug: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `type_id`.
    pub type_id: String,
    /// `status`.
    pub status: Option<i64>,
    /// `is_deleted`.
    pub is_deleted: i64,
    /// `created_at`.
    pub created_at: Option<String>,
    /// `updated_at`: send it back as `base_updated_at`.
    pub updated_at: Option<String>,
    /// Live geometries linked to the entity.
    pub geometry_count: i64,
    /// The row's hash: send it back as `base_hash`.
    pub hash: String,
}

/// Which entities to list.
#[derive(Debug, Clone, Default)]
pub struct EntityFilter {
    /// Case-insensitive substring; matched on name and slug, or on name alone.
    pub q: Option<String>,
    /// Match `q` on the name only (`/entities/search`).
    pub name_only: bool,
    /// At most this many.
    pub limit: Option<i64>,
    /// Skip this many.
    pub offset: i64,
    /// The map as of this time (history) instead of now.
    pub as_of: Option<DateTime<Utc>>,
}

/// Reads a stored ISO time; the hash does not cover times, so an unreadable one (never written
/// by the projector) only affects that field's parse, not the answer.
fn stored_time(text: &Option<String>) -> Timestamp {
    text.as_deref()
        .and_then(Timestamp::parse)
        .unwrap_or_else(|| Timestamp::new(DateTime::<Utc>::UNIX_EPOCH))
}

fn view(row: &Row) -> EntityView {
    let created_at: Option<String> = row.get("created_at");
    let updated_at: Option<String> = row.get("updated_at");
    let status: Option<i64> = row.get("status");
    let entity = EntityRow {
        id: row.get("id"),
        name: row.get("name"),
        slug: row.get("slug"),
        description: row.get("description"),
        type_id: row.get("type_id"),
        status,
        is_deleted: row.get("is_deleted"),
        created_at: stored_time(&created_at),
        updated_at: stored_time(&updated_at),
    };
    EntityView {
        hash: entity_hash(&entity),
        id: entity.id,
        name: entity.name,
        slug: entity.slug,
        description: entity.description,
        type_id: entity.type_id,
        status,
        is_deleted: entity.is_deleted,
        created_at,
        updated_at,
        geometry_count: row.get("geometry_count"),
    }
}

fn select(as_of: bool) -> String {
    if as_of {
        format!(
            "SELECT e.entity_id AS id, e.name, e.slug, e.description, e.type_id, e.status, \
             e.is_deleted, e.created_at, e.updated_at, \
             (SELECT count(*) FROM {S}.geometry_history g WHERE g.entity_ids @> jsonb_build_array(e.entity_id) \
               AND g.is_deleted = 0 AND tstzrange(g.valid_from, g.valid_to) @> $1::timestamptz) AS geometry_count \
             FROM {S}.entity_history e \
             WHERE tstzrange(e.valid_from, e.valid_to) @> $1::timestamptz AND e.is_deleted = 0"
        )
    } else {
        format!(
            "SELECT e.id, e.name, e.slug, e.description, e.type_id, e.status, e.is_deleted, \
             e.created_at, e.updated_at, \
             (SELECT count(*) FROM {S}.entity_geometries eg JOIN {S}.geometries g \
               ON g.id = eg.geometry_id AND g.is_deleted = 0 WHERE eg.entity_id = e.id) AS geometry_count \
             FROM {S}.entities e WHERE e.is_deleted = 0 AND $1::timestamptz IS NULL"
        )
    }
}

/// Live (not deleted) entities matching the filter, by name.
pub async fn list(
    client: &impl GenericClient,
    filter: &EntityFilter,
) -> Result<Vec<EntityView>, tokio_postgres::Error> {
    let pattern = filter.q.as_deref().map(crate::read::like_pattern);
    let matcher = if filter.name_only {
        "e.name ILIKE $2"
    } else {
        "(e.name ILIKE $2 OR e.slug ILIKE $2)"
    };
    let sql = format!(
        "{} AND ($2::text IS NULL OR {matcher}) ORDER BY e.name, 1 LIMIT $3 OFFSET $4",
        select(filter.as_of.is_some())
    );
    let rows = client
        .query(
            &sql,
            &[&filter.as_of, &pattern, &filter.limit, &filter.offset],
        )
        .await?;
    Ok(rows.iter().map(view).collect())
}

/// One live entity.
pub async fn get(
    client: &impl GenericClient,
    id: &str,
    as_of: Option<DateTime<Utc>>,
) -> Result<Option<EntityView>, tokio_postgres::Error> {
    let key = if as_of.is_some() {
        "e.entity_id"
    } else {
        "e.id"
    };
    let sql = format!("{} AND {key} = $2", select(as_of.is_some()));
    let row = client.query_opt(&sql, &[&as_of, &id]).await?;
    Ok(row.as_ref().map(view))
}
