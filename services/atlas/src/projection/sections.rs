//! Section events into `sections`, `section_states`, `section_commits`, `section_submissions`.

use crate::projection::param;
use palimpsest_events::RecordedEvent;
use palimpsest_events::atlas::{CommitRecorded, SectionEvent, Timestamp};
use palimpsest_events::canonical::to_canonical_string;
use palimpsest_projections::ProjectionError;
use palimpsest_projections::statement::Statement;

/// Plans one section event; the section id is the stream key. Each event family has its own
/// writes below.
pub fn plan(
    out: &mut Vec<Statement>,
    schema: &str,
    event: &RecordedEvent,
    payload: &SectionEvent,
) -> Result<(), ProjectionError> {
    let id = event.stream.key.as_str();
    match payload {
        SectionEvent::SectionCreated { .. } => created(out, schema, payload)?,
        SectionEvent::SectionLocked {
            locked_by,
            locked_at,
            lock_expires_at,
        } => locked(out, schema, id, locked_by, locked_at, lock_expires_at),
        SectionEvent::SectionUnlocked { at, .. } => unlocked(out, schema, id, at),
        SectionEvent::SectionCommitted(recorded) => commit(out, schema, id, recorded, "manual"),
        SectionEvent::SectionRestored(recorded) => commit(out, schema, id, recorded, "restore"),
        SectionEvent::SectionSubmitted { .. } => submitted(out, schema, id, payload)?,
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
            review(out, schema, id, &verdict)
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
            review(out, schema, id, &verdict)
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
            review(out, schema, id, &verdict)
        }
    }
    Ok(())
}

/// A projector step given another event than its own: a bug, which stops the projector loudly.
fn not_the_event(expected: &str) -> ProjectionError {
    ProjectionError::Invalid(format!(
        "the {expected} step was given another section event"
    ))
}

/// `SectionCreated`: the section's row and its state, `editing` at version 0.
fn created(
    out: &mut Vec<Statement>,
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
    out.push(Statement::dml(
        format!(
            "INSERT INTO {schema}.sections (id, title, description, user_id, created_by, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $6)"
        ),
        vec![
            param(section_id.clone()),
            param(title.clone()),
            param(description.clone()),
            param(user_id.clone()),
            param(created_by.clone()),
            param(at.clone()),
        ],
    ));
    out.push(Statement::dml(
        format!(
            "INSERT INTO {schema}.section_states (section_id, status, version, updated_at) \
             VALUES ($1, 'editing', 0, $2)"
        ),
        vec![param(section_id.clone()), param(at)],
    ));
    Ok(())
}

/// `SectionLocked`: the lock's holder and times.
fn locked(
    out: &mut Vec<Statement>,
    schema: &str,
    id: &str,
    locked_by: &str,
    locked_at: &Timestamp,
    lock_expires_at: &Timestamp,
) {
    out.push(Statement::dml(
        format!(
            "UPDATE {schema}.section_states SET locked_by = $2, locked_at = $3, lock_expires_at = $4, \
             updated_at = $3 WHERE section_id = $1"
        ),
        vec![
            param(id.to_owned()),
            param(locked_by.to_owned()),
            param(locked_at.to_iso()),
            param(lock_expires_at.to_iso()),
        ],
    ));
}

/// `SectionUnlocked`: the lock cleared.
fn unlocked(out: &mut Vec<Statement>, schema: &str, id: &str, at: &Timestamp) {
    out.push(Statement::dml(
        format!(
            "UPDATE {schema}.section_states SET locked_by = NULL, locked_at = NULL, \
             lock_expires_at = NULL, updated_at = $2 WHERE section_id = $1"
        ),
        vec![param(id.to_owned()), param(at.to_iso())],
    ));
}

/// `SectionSubmitted`: a pending submission; the section `submitted` and unlocked.
fn submitted(
    out: &mut Vec<Statement>,
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
    out.push(Statement::dml(
        format!(
            "INSERT INTO {schema}.section_submissions (id, section_id, commit_id, submitted_by, \
             submitted_at, status, snapshot_json, snapshot_hash) \
             VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7)"
        ),
        vec![
            param(submission_id.clone()),
            param(id.to_owned()),
            param(commit_id.clone()),
            param(submitted_by.clone()),
            param(at.clone()),
            param(to_canonical_string(snapshot)),
            param(snapshot_hash.clone()),
        ],
    ));
    out.push(Statement::dml(
        format!(
            "UPDATE {schema}.section_states SET status = 'submitted', \
             locked_by = NULL, locked_at = NULL, lock_expires_at = NULL, updated_at = $2 \
             WHERE section_id = $1"
        ),
        vec![param(id.to_owned()), param(at)],
    ));
    touch_section(out, schema, id, submitted_at);
    Ok(())
}

/// `sections.updated_at`: the last workflow change.
fn touch_section(out: &mut Vec<Statement>, schema: &str, id: &str, at: &Timestamp) {
    out.push(Statement::dml(
        format!("UPDATE {schema}.sections SET updated_at = $2 WHERE id = $1"),
        vec![param(id.to_owned()), param(at.to_iso())],
    ));
}

/// `SectionCommitted` / `SectionRestored`: the commit's row; the section's new head.
fn commit(
    out: &mut Vec<Statement>,
    schema: &str,
    id: &str,
    recorded: &CommitRecorded,
    kind: &'static str,
) {
    let at = recorded.created_at.to_iso();
    out.push(Statement::dml(
        format!(
            "INSERT INTO {schema}.section_commits (id, section_id, parent_commit_id, commit_no, kind, \
             restored_from_commit_id, created_by, created_at, title, note, snapshot_json, snapshot_hash) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        ),
        vec![
            param(recorded.commit_id.clone()),
            param(id.to_owned()),
            param(recorded.parent_commit_id.clone()),
            param(recorded.commit_no),
            param(kind),
            param(recorded.restored_from_commit_id.clone()),
            param(recorded.created_by.clone()),
            param(at.clone()),
            param(recorded.title.clone()),
            param(recorded.note.clone()),
            param(to_canonical_string(&recorded.snapshot)),
            param(recorded.snapshot_hash.clone()),
        ],
    ));
    out.push(Statement::dml(
        format!(
            "UPDATE {schema}.section_states SET head_commit_id = $2, version = version + 1, \
             status = 'editing', updated_at = $3 WHERE section_id = $1"
        ),
        vec![
            param(id.to_owned()),
            param(recorded.commit_id.clone()),
            param(at),
        ],
    ));
    touch_section(out, schema, id, &recorded.created_at);
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
fn review(out: &mut Vec<Statement>, schema: &str, id: &str, verdict: &Verdict<'_>) {
    let at = verdict.reviewed_at.to_iso();
    out.push(Statement::dml(
        format!(
            "UPDATE {schema}.section_submissions SET status = $2, reviewed_by = $3, reviewed_at = $4, \
             review_note = $5 WHERE id = $1"
        ),
        vec![
            param(verdict.submission_id.to_owned()),
            param(verdict.status),
            param(verdict.reviewed_by.clone()),
            param(at.clone()),
            param(verdict.note.clone()),
        ],
    ));
    out.push(Statement::dml(
        format!(
            "UPDATE {schema}.section_states SET status = $2, updated_at = $3 \
             WHERE section_id = $1"
        ),
        vec![param(id.to_owned()), param(verdict.status), param(at)],
    ));
    touch_section(out, schema, id, verdict.reviewed_at);
}
