//! Section queries on the read model.

use crate::read::SCHEMA as S;
use crate::read::error::{ReadError, stored_json};
use crate::read::rows::{CommitRow, EditorView, SectionRow, SectionStateRow, SubmissionRow};
use crate::section::SectionStatus;
use tokio_postgres::{GenericClient, Row};

const SECTION_COLUMNS: &str = "s.id, s.title, s.description, s.user_id, s.created_by, s.created_at, \
     s.updated_at, st.status, st.head_commit_id, st.version, st.locked_by, st.locked_at, \
     st.lock_expires_at, st.updated_at AS state_updated_at";

const COMMIT_COLUMNS: &str = "id, section_id, parent_commit_id, commit_no, kind, \
     restored_from_commit_id, created_by, created_at, title, note, snapshot_json, snapshot_hash";

const SUBMISSION_COLUMNS: &str = "id, section_id, commit_id, submitted_by, submitted_at, status, \
     reviewed_by, reviewed_at, review_note, snapshot_json, snapshot_hash";

fn section(row: &Row) -> SectionRow {
    let id: String = row.get("id");
    SectionRow {
        id: id.clone(),
        title: row.get("title"),
        description: row.get("description"),
        user_id: row.get("user_id"),
        created_by: row.get("created_by"),
        created_at: row.get("created_at"),
        updated_at: row.get("updated_at"),
        state: SectionStateRow {
            section_id: id,
            status: row.get("status"),
            head_commit_id: row.get("head_commit_id"),
            version: row.get("version"),
            locked_by: row.get("locked_by"),
            locked_at: row.get("locked_at"),
            lock_expires_at: row.get("lock_expires_at"),
            updated_at: row.get("state_updated_at"),
        },
    }
}

fn commit(row: &Row) -> CommitRow {
    CommitRow {
        id: row.get("id"),
        section_id: row.get("section_id"),
        parent_commit_id: row.get("parent_commit_id"),
        commit_no: row.get("commit_no"),
        kind: row.get("kind"),
        restored_from_commit_id: row.get("restored_from_commit_id"),
        created_by: row.get("created_by"),
        created_at: row.get("created_at"),
        title: row.get("title"),
        note: row.get("note"),
        snapshot_json: row.get("snapshot_json"),
        snapshot_hash: row.get("snapshot_hash"),
    }
}

fn submission(row: &Row) -> SubmissionRow {
    SubmissionRow {
        id: row.get("id"),
        section_id: row.get("section_id"),
        commit_id: row.get("commit_id"),
        submitted_by: row.get("submitted_by"),
        submitted_at: row.get("submitted_at"),
        status: row.get("status"),
        reviewed_by: row.get("reviewed_by"),
        reviewed_at: row.get("reviewed_at"),
        review_note: row.get("review_note"),
        snapshot_json: row.get("snapshot_json"),
        snapshot_hash: row.get("snapshot_hash"),
    }
}

/// Sections with their state, most recently changed first, optionally of one status.
pub async fn list(
    client: &impl GenericClient,
    status: Option<SectionStatus>,
) -> Result<Vec<SectionRow>, tokio_postgres::Error> {
    let status = status.map(SectionStatus::as_str);
    let rows = client
        .query(
            &format!(
                "SELECT {SECTION_COLUMNS} FROM {S}.sections s JOIN {S}.section_states st \
                 ON st.section_id = s.id WHERE ($1::text IS NULL OR st.status = $1) \
                 ORDER BY st.updated_at DESC, s.id"
            ),
            &[&status],
        )
        .await?;
    Ok(rows.iter().map(section).collect())
}

/// One section with its state.
pub async fn get(
    client: &impl GenericClient,
    id: &str,
) -> Result<Option<SectionRow>, tokio_postgres::Error> {
    let row = client
        .query_opt(
            &format!(
                "SELECT {SECTION_COLUMNS} FROM {S}.sections s JOIN {S}.section_states st \
                 ON st.section_id = s.id WHERE s.id = $1"
            ),
            &[&id],
        )
        .await?;
    Ok(row.as_ref().map(section))
}

/// The editor view: section, state, head commit and its snapshot.
pub async fn editor(
    client: &impl GenericClient,
    id: &str,
) -> Result<Option<EditorView>, ReadError> {
    let Some(section) = get(client, id).await? else {
        return Ok(None);
    };
    let head = match &section.state.head_commit_id {
        None => None,
        Some(head) => client
            .query_opt(
                &format!("SELECT {COMMIT_COLUMNS} FROM {S}.section_commits WHERE id = $1"),
                &[head],
            )
            .await?
            .as_ref()
            .map(commit),
    };
    let snapshot = match &head {
        Some(c) => stored_json(&c.snapshot_json, "section_commits.snapshot_json", &c.id)?,
        None => serde_json::Value::Null,
    };
    Ok(Some(EditorView {
        state: section.state.clone(),
        section,
        head_commit: head,
        snapshot,
    }))
}

/// A section's commits, by number.
pub async fn commits(
    client: &impl GenericClient,
    id: &str,
) -> Result<Vec<CommitRow>, tokio_postgres::Error> {
    let rows = client
        .query(
            &format!(
                "SELECT {COMMIT_COLUMNS} FROM {S}.section_commits WHERE section_id = $1 ORDER BY commit_no"
            ),
            &[&id],
        )
        .await?;
    Ok(rows.iter().map(commit).collect())
}

/// A section's submissions, newest first.
pub async fn submissions(
    client: &impl GenericClient,
    id: &str,
) -> Result<Vec<SubmissionRow>, tokio_postgres::Error> {
    let rows = client
        .query(
            &format!(
                "SELECT {SUBMISSION_COLUMNS} FROM {S}.section_submissions WHERE section_id = $1 \
                 ORDER BY submitted_at DESC, id"
            ),
            &[&id],
        )
        .await?;
    Ok(rows.iter().map(submission).collect())
}

/// The section a submission belongs to (never changes once submitted).
pub async fn submission_section(
    client: &impl GenericClient,
    submission_id: &str,
) -> Result<Option<String>, tokio_postgres::Error> {
    let row = client
        .query_opt(
            &format!("SELECT section_id FROM {S}.section_submissions WHERE id = $1"),
            &[&submission_id],
        )
        .await?;
    Ok(row.map(|r| r.get(0)))
}
