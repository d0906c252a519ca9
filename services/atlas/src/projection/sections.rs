//! Section events into `sections`, `section_states`, `section_commits`, `section_submissions`.

use deadpool_postgres::Transaction;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{CommitRecorded, SectionEvent, Timestamp};
use palimpsest_events::canonical::to_canonical_string;
use palimpsest_projections::ProjectionError;

/// Applies one section event; the section id is the stream key. Each event family has its own
/// writes below.
pub async fn apply(
    tx: &Transaction<'_>,
    schema: &str,
    event: &RecordedEvent,
    payload: &SectionEvent,
) -> Result<(), ProjectionError> {
    let id = event.stream.key.as_str();
    match payload {
        SectionEvent::SectionCreated { .. } => created(tx, schema, payload).await,
        SectionEvent::SectionLocked {
            locked_by,
            locked_at,
            lock_expires_at,
        } => locked(tx, schema, id, locked_by, locked_at, lock_expires_at).await,
        SectionEvent::SectionUnlocked { at, .. } => unlocked(tx, schema, id, at).await,
        SectionEvent::SectionCommitted(recorded) => {
            commit(tx, schema, id, recorded, "manual").await
        }
        SectionEvent::SectionRestored(recorded) => {
            commit(tx, schema, id, recorded, "restore").await
        }
        SectionEvent::SectionSubmitted { .. } => submitted(tx, schema, id, payload).await,
        SectionEvent::SubmissionApproved {
            submission_id,
            reviewed_by,
            reviewed_at,
            review_note,
        } => {
            let verdict = Verdict {
                submission_id,
                status: "approved",
                reviewed_by,
                reviewed_at,
                note: review_note,
            };
            review(tx, schema, id, &verdict).await
        }
        SectionEvent::SubmissionRejected {
            submission_id,
            reviewed_by,
            reviewed_at,
            review_note,
        } => {
            let verdict = Verdict {
                submission_id,
                status: "rejected",
                reviewed_by,
                reviewed_at,
                note: review_note,
            };
            review(tx, schema, id, &verdict).await
        }
        SectionEvent::SubmissionConflicted {
            submission_id,
            reviewed_by,
            reviewed_at,
            message,
        } => {
            let verdict = Verdict {
                submission_id,
                status: "conflicted",
                reviewed_by,
                reviewed_at,
                note: &Some(message.clone()),
            };
            review(tx, schema, id, &verdict).await
        }
    }
}

/// A projector step given another event than its own: a bug, which stops the projector loudly.
fn not_the_event(expected: &str) -> ProjectionError {
    ProjectionError::Invalid(format!(
        "the {expected} step was given another section event"
    ))
}

/// `SectionCreated`: the section's row and its state, `editing` at version 0.
async fn created(
    tx: &Transaction<'_>,
    schema: &str,
    payload: &SectionEvent,
) -> Result<(), ProjectionError> {
    let SectionEvent::SectionCreated {
        section_id,
        title,
        description,
        user_id,
        created_by,
        created_at,
    } = payload
    else {
        return Err(not_the_event("SectionCreated"));
    };
    let at = created_at.to_iso();
    tx.execute(
        &format!(
            "INSERT INTO {schema}.sections (id, title, description, user_id, created_by, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $6)"
        ),
        &[section_id, title, description, user_id, created_by, &at],
    )
    .await?;
    tx.execute(
        &format!(
            "INSERT INTO {schema}.section_states (section_id, status, version, updated_at) \
             VALUES ($1, 'editing', 0, $2)"
        ),
        &[section_id, &at],
    )
    .await?;
    Ok(())
}

/// `SectionLocked`: the lock's holder and times.
async fn locked(
    tx: &Transaction<'_>,
    schema: &str,
    id: &str,
    locked_by: &String,
    locked_at: &Timestamp,
    lock_expires_at: &Timestamp,
) -> Result<(), ProjectionError> {
    tx.execute(
        &format!(
            "UPDATE {schema}.section_states SET locked_by = $2, locked_at = $3, lock_expires_at = $4, \
             updated_at = $3 WHERE section_id = $1"
        ),
        &[&id, locked_by, &locked_at.to_iso(), &lock_expires_at.to_iso()],
    )
    .await?;
    Ok(())
}

/// `SectionUnlocked`: the lock cleared.
async fn unlocked(
    tx: &Transaction<'_>,
    schema: &str,
    id: &str,
    at: &Timestamp,
) -> Result<(), ProjectionError> {
    tx.execute(
        &format!(
            "UPDATE {schema}.section_states SET locked_by = NULL, locked_at = NULL, \
             lock_expires_at = NULL, updated_at = $2 WHERE section_id = $1"
        ),
        &[&id, &at.to_iso()],
    )
    .await?;
    Ok(())
}

/// `SectionSubmitted`: a pending submission; the section `submitted` and unlocked.
async fn submitted(
    tx: &Transaction<'_>,
    schema: &str,
    id: &str,
    payload: &SectionEvent,
) -> Result<(), ProjectionError> {
    let SectionEvent::SectionSubmitted {
        submission_id,
        commit_id,
        submitted_by,
        submitted_at,
        snapshot,
        snapshot_hash,
    } = payload
    else {
        return Err(not_the_event("SectionSubmitted"));
    };
    let at = submitted_at.to_iso();
    tx.execute(
        &format!(
            "INSERT INTO {schema}.section_submissions (id, section_id, commit_id, submitted_by, \
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
            "UPDATE {schema}.section_states SET status = 'submitted', \
             locked_by = NULL, locked_at = NULL, lock_expires_at = NULL, updated_at = $2 \
             WHERE section_id = $1"
        ),
        &[&id, &at],
    )
    .await?;
    touch_section(tx, schema, id, submitted_at).await
}

/// `sections.updated_at`: the last workflow change.
async fn touch_section(
    tx: &Transaction<'_>,
    schema: &str,
    id: &str,
    at: &Timestamp,
) -> Result<(), ProjectionError> {
    tx.execute(
        &format!("UPDATE {schema}.sections SET updated_at = $2 WHERE id = $1"),
        &[&id, &at.to_iso()],
    )
    .await?;
    Ok(())
}

/// `SectionCommitted` / `SectionRestored`: the commit's row; the section's new head.
async fn commit(
    tx: &Transaction<'_>,
    schema: &str,
    id: &str,
    recorded: &CommitRecorded,
    kind: &str,
) -> Result<(), ProjectionError> {
    let at = recorded.created_at.to_iso();
    tx.execute(
        &format!(
            "INSERT INTO {schema}.section_commits (id, section_id, parent_commit_id, commit_no, kind, \
             restored_from_commit_id, created_by, created_at, title, note, snapshot_json, snapshot_hash) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        ),
        &[
            &recorded.commit_id,
            &id,
            &recorded.parent_commit_id,
            &recorded.commit_no,
            &kind,
            &recorded.restored_from_commit_id,
            &recorded.created_by,
            &at,
            &recorded.title,
            &recorded.note,
            &to_canonical_string(&recorded.snapshot),
            &recorded.snapshot_hash,
        ],
    )
    .await?;
    tx.execute(
        &format!(
            "UPDATE {schema}.section_states SET head_commit_id = $2, version = version + 1, \
             status = 'editing', updated_at = $3 WHERE section_id = $1"
        ),
        &[&id, &recorded.commit_id, &at],
    )
    .await?;
    touch_section(tx, schema, id, &recorded.created_at).await
}

/// A reviewer's verdict on a submission (a conflict's message stands as its note).
struct Verdict<'a> {
    submission_id: &'a str,
    status: &'static str,
    reviewed_by: &'a Option<String>,
    reviewed_at: &'a Timestamp,
    note: &'a Option<String>,
}

/// A verdict: the submission closed, the section's status following it.
async fn review(
    tx: &Transaction<'_>,
    schema: &str,
    id: &str,
    verdict: &Verdict<'_>,
) -> Result<(), ProjectionError> {
    let at = verdict.reviewed_at.to_iso();
    tx.execute(
        &format!(
            "UPDATE {schema}.section_submissions SET status = $2, reviewed_by = $3, reviewed_at = $4, \
             review_note = $5 WHERE id = $1"
        ),
        &[
            &verdict.submission_id,
            &verdict.status,
            verdict.reviewed_by,
            &at,
            verdict.note,
        ],
    )
    .await?;
    tx.execute(
        &format!(
            "UPDATE {schema}.section_states SET status = $2, updated_at = $3 \
             WHERE section_id = $1"
        ),
        &[&id, &verdict.status, &at],
    )
    .await?;
    touch_section(tx, schema, id, verdict.reviewed_at).await
}
