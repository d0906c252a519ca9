//! The statements each event plans: every value comes from the event, none from a read.

use super::schema::REVISION_COLUMNS;
use base64::Engine;
use palimpsest_events::resources::{Revision, Stored};
use palimpsest_projections::ProjectionError;
use palimpsest_projections::statement::{Param, Statement};

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
pub fn revision(out: &mut Vec<Statement>, schema: &str, revision: &Revision) {
    let mut values: Vec<Param> = vec![Box::new(revision.resrev_id), Box::new(revision.res_id)];
    values.extend(revision_params(revision));
    out.push(Statement::row(
        format!("{schema}.resourcerevs (resrev_id, resrev_res_id, {REVISION_COLUMNS})"),
        values,
    ));
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
    out.push(Statement::dml(
        format!(
            "INSERT INTO {schema}.resources (res_id, res_headrev, res_type, res_deleted, \
             res_create_timestamp, res_update_timestamp, res_create_user_id, res_update_user_id, \
             {REVISION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $5, $6, $6, {}) \
             ON CONFLICT (res_id) DO UPDATE SET res_headrev = EXCLUDED.res_headrev, \
             res_deleted = EXCLUDED.res_deleted, res_update_timestamp = EXCLUDED.res_update_timestamp, \
             res_update_user_id = EXCLUDED.res_update_user_id, {mirror}",
            placeholders(7, 16)
        ),
        params,
    ));
}

/// Revisions hidden or shown.
pub fn hidden(out: &mut Vec<Statement>, schema: &str, res_id: i64, revs: &[i64], hidden: bool) {
    let revs: Vec<i32> = revs.iter().map(|r| *r as i32).collect();
    out.push(Statement::dml(
        format!(
            "UPDATE {schema}.resourcerevs SET resrev_is_hidden = $3 \
             WHERE resrev_res_id = $1 AND resrev_rev = ANY($2)"
        ),
        vec![
            Box::new(res_id),
            Box::new(revs),
            Box::new(i16::from(hidden)),
        ],
    ));
}

/// A wiped resource leaves `resources` and `resourcerevs`.
pub fn wiped(out: &mut Vec<Statement>, schema: &str, res_id: i64) {
    out.push(Statement::dml(
        format!("DELETE FROM {schema}.resourcerevs WHERE resrev_res_id = $1"),
        vec![Box::new(res_id)],
    ));
    out.push(Statement::dml(
        format!("DELETE FROM {schema}.resources WHERE res_id = $1"),
        vec![Box::new(res_id)],
    ));
}

/// A content stored for the first time: its `resourcecontents` row.
pub struct Content<'a> {
    /// The content's id.
    pub rescontent_id: i64,
    /// The resource it belongs to.
    pub res_id: i64,
    /// The revision of that resource it was stored for.
    pub res_rev: i64,
    /// Its size in bytes.
    pub size: i64,
    /// Its MIME type.
    pub mimetype: &'a str,
    /// Its bytes, inline, or where they are kept.
    pub stored: &'a Stored,
}

/// The row of a content stored for the first time.
pub fn content(
    out: &mut Vec<Statement>,
    schema: &str,
    c: Content<'_>,
) -> Result<(), ProjectionError> {
    let (value, location) = match c.stored {
        Stored::Inline { base64 } => (
            base64::engine::general_purpose::STANDARD
                .decode(base64)
                .map_err(|e| {
                    ProjectionError::Invalid(format!("content {}: {e}", c.rescontent_id))
                })?,
            None,
        ),
        Stored::Location { location } => (Vec::new(), Some(location.clone())),
    };
    out.push(Statement::row(
        format!(
            "{schema}.resourcecontents (rescontent_id, rescontent_res_id, rescontent_res_rev, \
             rescontent_value, rescontent_mimetype, rescontent_location, rescontent_size)"
        ),
        vec![
            Box::new(c.rescontent_id),
            Box::new(c.res_id),
            Box::new(c.res_rev as i32),
            Box::new(value),
            Box::new(c.mimetype.to_owned()),
            Box::new(location),
            Box::new(c.size),
        ],
    ));
    Ok(())
}
