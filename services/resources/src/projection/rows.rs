//! Rows written for each event.

use super::schema::REVISION_COLUMNS;
use base64::Engine;
use deadpool_postgres::Transaction;
use palimpsest_events::resources::{Revision, Stored};
use palimpsest_projections::ProjectionError;
use tokio_postgres::types::ToSql;

type Param = Box<dyn ToSql + Sync + Send>;

fn refs(params: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect()
}

/// The 16 revision column values, in [`REVISION_COLUMNS`] order.
fn revision_params(revision: &Revision) -> Vec<Param> {
    vec![
        Box::new(revision.rev as i32),
        Box::new(revision.user_id),
        Box::new(revision.parent.resource_id()),
        Box::new(revision.parent.page_id()),
        Box::new(revision.parent.user_id()),
        Box::new(i16::from(revision.change_mask)),
        Box::new(revision.name.clone()),
        Box::new(revision.change_description.clone()),
        Box::new(revision.timestamp.naive_utc()),
        Box::new(revision.content.rescontent_id),
        Box::new(i16::from(revision.deleted)),
        Box::new(revision.changeset_id),
        Box::new(revision.content.size),
        Box::new(revision.mimetype.clone()),
        Box::new(revision.language.clone()),
        Box::new(revision.meta.clone()),
    ]
}

fn placeholders(from: usize, count: usize) -> String {
    (from..from + count)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A new revision: its `resourcerevs` row, and the `resources` row mirroring the head.
pub async fn revision(
    tx: &Transaction<'_>,
    schema: &str,
    revision: &Revision,
) -> Result<(), ProjectionError> {
    let mut params: Vec<Param> = vec![Box::new(revision.resrev_id), Box::new(revision.res_id)];
    params.extend(revision_params(revision));
    tx.execute(
        &format!(
            "INSERT INTO {schema}.resourcerevs (resrev_id, resrev_res_id, {REVISION_COLUMNS}) \
             VALUES ($1, $2, {})",
            placeholders(3, 16)
        ),
        &refs(&params),
    )
    .await?;
    let mut params: Vec<Param> = vec![
        Box::new(revision.res_id),
        Box::new(revision.rev as i32),
        Box::new(revision.res_type.code()),
        Box::new(i16::from(revision.deleted)),
        Box::new(revision.timestamp.naive_utc()),
        Box::new(revision.user_id),
    ];
    params.extend(revision_params(revision));
    let mirror = REVISION_COLUMNS
        .split(", ")
        .map(|c| format!("{c} = EXCLUDED.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    tx.execute(
        &format!(
            "INSERT INTO {schema}.resources (res_id, res_headrev, res_type, res_deleted, \
             res_create_timestamp, res_update_timestamp, res_create_user_id, res_update_user_id, \
             {REVISION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $5, $6, $6, {}) \
             ON CONFLICT (res_id) DO UPDATE SET res_headrev = EXCLUDED.res_headrev, \
             res_deleted = EXCLUDED.res_deleted, res_update_timestamp = EXCLUDED.res_update_timestamp, \
             res_update_user_id = EXCLUDED.res_update_user_id, {mirror}",
            placeholders(7, 16)
        ),
        &refs(&params),
    )
    .await?;
    Ok(())
}

/// Revisions hidden or shown.
pub async fn hidden(
    tx: &Transaction<'_>,
    schema: &str,
    res_id: i64,
    revs: &[i64],
    hidden: bool,
) -> Result<(), ProjectionError> {
    let revs: Vec<i32> = revs.iter().map(|r| *r as i32).collect();
    tx.execute(
        &format!(
            "UPDATE {schema}.resourcerevs SET resrev_is_hidden = $3 \
             WHERE resrev_res_id = $1 AND resrev_rev = ANY($2)"
        ),
        &[&res_id, &revs, &i16::from(hidden)],
    )
    .await?;
    Ok(())
}

/// A wiped resource leaves `resources` and `resourcerevs`.
pub async fn wiped(tx: &Transaction<'_>, schema: &str, res_id: i64) -> Result<(), ProjectionError> {
    tx.execute(
        &format!("DELETE FROM {schema}.resourcerevs WHERE resrev_res_id = $1"),
        &[&res_id],
    )
    .await?;
    tx.execute(
        &format!("DELETE FROM {schema}.resources WHERE res_id = $1"),
        &[&res_id],
    )
    .await?;
    Ok(())
}

/// A content stored for the first time.
#[allow(clippy::too_many_arguments)]
pub async fn content(
    tx: &Transaction<'_>,
    schema: &str,
    rescontent_id: i64,
    res_id: i64,
    res_rev: i64,
    size: i64,
    mimetype: &str,
    stored: &Stored,
) -> Result<(), ProjectionError> {
    let (value, location) = match stored {
        Stored::Inline { base64 } => (
            base64::engine::general_purpose::STANDARD
                .decode(base64)
                .map_err(|e| ProjectionError::Invalid(format!("content {rescontent_id}: {e}")))?,
            None,
        ),
        Stored::Location { location } => (Vec::new(), Some(location.clone())),
    };
    tx.execute(
        &format!(
            "INSERT INTO {schema}.resourcecontents (rescontent_id, rescontent_res_id, \
             rescontent_res_rev, rescontent_value, rescontent_mimetype, rescontent_location, \
             rescontent_size) VALUES ($1, $2, $3, $4, $5, $6, $7)"
        ),
        &[
            &rescontent_id,
            &res_id,
            &(res_rev as i32),
            &value,
            &mimetype,
            &location,
            &size,
        ],
    )
    .await?;
    Ok(())
}
