//! Section events into `sections`, `section_states`, `section_commits`, `section_submissions`.

use deadpool_postgres::Transaction;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{CommitRecorded, SectionEvent, Timestamp};
use palimpsest_events::canonical::to_canonical_string;
use palimpsest_projections::ProjectionError;

/// Applies one section event; the section id is the stream key.
pub async fn apply(
    tx: &Transaction<'_>,
    s: &str,
    event: &RecordedEvent,
    payload: &SectionEvent,
) -> Result<(), ProjectionError> {
    let id = event.stream.key.as_str();
    match payload {
        SectionEvent::SectionCreated {
            section_id,
            title,
            description,
            user_id,
            created_by,
            created_at,
        } => {
            let at = created_at.to_iso();
            tx.execute(
                &format!(
                    "INSERT INTO {s}.sections (id, title, description, user_id, created_by, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $6)"
                ),
                &[section_id, title, description, user_id, created_by, &at],
            )
            .await?;
            tx.execute(
                &format!(
                    "INSERT INTO {s}.section_states (section_id, status, version, updated_at) \
                     VALUES ($1, 'editing', 0, $2)"
                ),
                &[section_id, &at],
            )
            .await?;
        }
        SectionEvent::SectionLocked {
            locked_by,
            locked_at,
            lock_expires_at,
        } => {
            tx.execute(
                &format!(
                    "UPDATE {s}.section_states SET locked_by = $2, locked_at = $3, lock_expires_at = $4, \
                     updated_at = $3 WHERE section_id = $1"
                ),
                &[&id, locked_by, &locked_at.to_iso(), &lock_expires_at.to_iso()],
            )
            .await?;
        }
        SectionEvent::SectionUnlocked { at, .. } => {
            tx.execute(
                &format!(
                    "UPDATE {s}.section_states SET locked_by = NULL, locked_at = NULL, \
                     lock_expires_at = NULL, updated_at = $2 WHERE section_id = $1"
                ),
                &[&id, &at.to_iso()],
            )
            .await?;
        }
        SectionEvent::SectionCommitted(c) => commit(tx, s, id, c, "manual").await?,
        SectionEvent::SectionRestored(c) => commit(tx, s, id, c, "restore").await?,
        SectionEvent::SectionSubmitted {
            submission_id,
            commit_id,
            submitted_by,
            submitted_at,
            snapshot,
            snapshot_hash,
        } => {
            let at = submitted_at.to_iso();
            tx.execute(
                &format!(
                    "INSERT INTO {s}.section_submissions (id, section_id, commit_id, submitted_by, \
                     submitted_at, status, snapshot_json, snapshot_hash) \
                     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7)"
                ),
                &[
                    submission_id,
                    &id,
                    commit_id,
                    submitted_by,
                    &at,
                    &to_canonical_string(snapshot),
                    snapshot_hash,
                ],
            )
            .await?;
            tx.execute(
                &format!(
                    "UPDATE {s}.section_states SET status = 'submitted', \
                     locked_by = NULL, locked_at = NULL, lock_expires_at = NULL, updated_at = $2 \
                     WHERE section_id = $1"
                ),
                &[&id, &at],
            )
            .await?;
            touch_section(tx, s, id, submitted_at).await?;
        }
        SectionEvent::SubmissionApproved {
            submission_id,
            reviewed_by,
            reviewed_at,
            review_note,
        } => {
            review(
                tx,
                s,
                id,
                submission_id,
                "approved",
                reviewed_by,
                reviewed_at,
                review_note,
            )
            .await?
        }
        SectionEvent::SubmissionRejected {
            submission_id,
            reviewed_by,
            reviewed_at,
            review_note,
        } => {
            review(
                tx,
                s,
                id,
                submission_id,
                "rejected",
                reviewed_by,
                reviewed_at,
                review_note,
            )
            .await?
        }
        SectionEvent::SubmissionConflicted {
            submission_id,
            reviewed_by,
            reviewed_at,
            message,
        } => {
            let note = Some(message.clone());
            review(
                tx,
                s,
                id,
                submission_id,
                "conflicted",
                reviewed_by,
                reviewed_at,
                &note,
            )
            .await?
        }
    }
    Ok(())
}

async fn touch_section(
    tx: &Transaction<'_>,
    s: &str,
    id: &str,
    at: &Timestamp,
) -> Result<(), ProjectionError> {
    tx.execute(
        &format!("UPDATE {s}.sections SET updated_at = $2 WHERE id = $1"),
        &[&id, &at.to_iso()],
    )
    .await?;
    Ok(())
}

async fn commit(
    tx: &Transaction<'_>,
    s: &str,
    id: &str,
    c: &CommitRecorded,
    kind: &str,
) -> Result<(), ProjectionError> {
    let at = c.created_at.to_iso();
    tx.execute(
        &format!(
            "INSERT INTO {s}.section_commits (id, section_id, parent_commit_id, commit_no, kind, \
             restored_from_commit_id, created_by, created_at, title, note, snapshot_json, snapshot_hash) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        ),
        &[
            &c.commit_id,
            &id,
            &c.parent_commit_id,
            &c.commit_no,
            &kind,
            &c.restored_from_commit_id,
            &c.created_by,
            &at,
            &c.title,
            &c.note,
            &to_canonical_string(&c.snapshot),
            &c.snapshot_hash,
        ],
    )
    .await?;
    tx.execute(
        &format!(
            "UPDATE {s}.section_states SET head_commit_id = $2, version = version + 1, \
             status = 'editing', updated_at = $3 WHERE section_id = $1"
        ),
        &[&id, &c.commit_id, &at],
    )
    .await?;
    touch_section(tx, s, id, &c.created_at).await
}

#[allow(clippy::too_many_arguments)]
async fn review(
    tx: &Transaction<'_>,
    s: &str,
    id: &str,
    submission_id: &str,
    status: &str,
    reviewed_by: &Option<String>,
    reviewed_at: &Timestamp,
    note: &Option<String>,
) -> Result<(), ProjectionError> {
    let at = reviewed_at.to_iso();
    tx.execute(
        &format!(
            "UPDATE {s}.section_submissions SET status = $2, reviewed_by = $3, reviewed_at = $4, \
             review_note = $5 WHERE id = $1"
        ),
        &[&submission_id, &status, reviewed_by, &at, note],
    )
    .await?;
    tx.execute(
        &format!(
            "UPDATE {s}.section_states SET status = $2, updated_at = $3 \
             WHERE section_id = $1"
        ),
        &[&id, &status, &at],
    )
    .await?;
    touch_section(tx, s, id, reviewed_at).await
}
