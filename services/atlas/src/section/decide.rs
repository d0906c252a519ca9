//! The section decider: a command and the folded state in, the events to append (or why not) out.

use crate::hashing::snapshot_hash;
use crate::section::command::{Expectations, SectionCommand};
use crate::section::error::SectionError;
use crate::section::state::{LOCK_TTL_SECONDS, SectionState, SectionStatus, SubmissionStatus};
use crate::validation::parse_snapshot;
use palimpsest_events::atlas::{CommitRecorded, SectionEvent, Timestamp};
use serde_json::Value;

/// Decides a section command against the section's state: each command family has its own
/// rule below.
pub fn decide(
    command: SectionCommand,
    state: &SectionState,
) -> Result<Vec<SectionEvent>, SectionError> {
    match command {
        SectionCommand::Create {
            section_id,
            title,
            description,
            user_id,
            created_by,
            now,
        } => create(
            state,
            section_id,
            title,
            description,
            user_id,
            created_by,
            now,
        ),
        SectionCommand::Lock { actor, now } => lock(state, actor, now),
        SectionCommand::Unlock { actor, now } => unlock(state, actor, now),
        SectionCommand::Commit {
            commit_id,
            actor,
            title,
            note,
            snapshot,
            expected,
            now,
        } => {
            let head = NewHead {
                commit_id,
                actor,
                title,
                note,
                expected,
                now,
            };
            commit(state, head, snapshot)
        }
        SectionCommand::Restore {
            commit_id,
            actor,
            source_commit_id,
            title,
            note,
            expected,
            now,
        } => {
            let head = NewHead {
                commit_id,
                actor,
                title,
                note,
                expected,
                now,
            };
            restore(state, head, source_commit_id)
        }
        SectionCommand::Submit {
            submission_id,
            actor,
            commit_id,
            expected,
            now,
        } => submit(state, submission_id, actor, commit_id, expected, now),
        SectionCommand::Reject {
            submission_id,
            reviewer,
            note,
            now,
        } => reject(state, submission_id, reviewer, note, now),
    }
}

/// A section is created once, with a title.
fn create(
    state: &SectionState,
    section_id: String,
    title: String,
    description: Option<String>,
    user_id: Option<String>,
    created_by: Option<String>,
    now: Timestamp,
) -> Result<Vec<SectionEvent>, SectionError> {
    if state.info.is_some() {
        return Err(SectionError::SectionExists);
    }
    if title.trim().is_empty() {
        return Err(SectionError::Invalid {
            field: "title".into(),
            reason: "is required".into(),
        });
    }
    Ok(vec![SectionEvent::SectionCreated {
        section_id,
        title,
        description,
        user_id,
        created_by,
        created_at: now,
    }])
}

/// The lock is taken (or renewed) when free, the actor's own, or lapsed.
fn lock(
    state: &SectionState,
    actor: String,
    now: Timestamp,
) -> Result<Vec<SectionEvent>, SectionError> {
    existing(state)?;
    check_lock(state, &actor, now)?;
    Ok(vec![lock_event(actor, now)])
}

/// The lock is released unless another actor holds it live; a section never locked stays so.
fn unlock(
    state: &SectionState,
    actor: Option<String>,
    now: Timestamp,
) -> Result<Vec<SectionEvent>, SectionError> {
    existing(state)?;
    match state.live_lock(now) {
        None if state.lock.is_none() => Ok(vec![]),
        Some(lock) if Some(&lock.by) != actor.as_ref() => Err(SectionError::Locked {
            locked_by: lock.by.clone(),
            lock_expires_at: lock.expires_at,
        }),
        _ => Ok(vec![SectionEvent::SectionUnlocked {
            unlocked_by: actor,
            at: now,
        }]),
    }
}

/// What a commit or a restore names of the new head it records; the decider adds its number,
/// its parent and its snapshot.
struct NewHead {
    commit_id: String,
    actor: String,
    title: Option<String>,
    note: Option<String>,
    expected: Expectations,
    now: Timestamp,
}

/// A commit records a valid snapshot as the new head.
fn commit(
    state: &SectionState,
    head: NewHead,
    snapshot: Value,
) -> Result<Vec<SectionEvent>, SectionError> {
    existing(state)?;
    parse_snapshot(&snapshot)?;
    may_commit(state, "commit", &head)?;
    let hash = snapshot_hash(&snapshot);
    Ok(record_head(
        state,
        head,
        None,
        snapshot,
        hash,
        SectionEvent::SectionCommitted,
    ))
}

/// A restore records one of the section's commits' snapshot as the new head.
fn restore(
    state: &SectionState,
    head: NewHead,
    source_commit_id: String,
) -> Result<Vec<SectionEvent>, SectionError> {
    existing(state)?;
    let source = state
        .commit(&source_commit_id)
        .ok_or_else(|| SectionError::CommitNotFound(source_commit_id.clone()))?;
    may_commit(state, "restore", &head)?;
    let snapshot = source.recorded.snapshot.clone();
    let hash = source.recorded.snapshot_hash.clone();
    Ok(record_head(
        state,
        head,
        Some(source_commit_id),
        snapshot,
        hash,
        SectionEvent::SectionRestored,
    ))
}

/// The events of a new head: the lock taken first if the actor does not hold it, then the
/// commit (`recorded` makes it a commit or a restore).
fn record_head(
    state: &SectionState,
    head: NewHead,
    restored_from_commit_id: Option<String>,
    snapshot: Value,
    snapshot_hash: String,
    recorded: fn(CommitRecorded) -> SectionEvent,
) -> Vec<SectionEvent> {
    let mut events = relock(state, &head.actor, head.now);
    events.push(recorded(CommitRecorded {
        commit_id: head.commit_id,
        commit_no: next_commit_no(state),
        parent_commit_id: state.head_commit_id.clone(),
        restored_from_commit_id,
        created_by: head.actor,
        created_at: head.now,
        title: head.title,
        note: head.note,
        snapshot,
        snapshot_hash,
    }));
    events
}

/// A submission puts the head (or the named commit) of an `editing` section up for review.
fn submit(
    state: &SectionState,
    submission_id: String,
    actor: String,
    commit_id: Option<String>,
    expected: Expectations,
    now: Timestamp,
) -> Result<Vec<SectionEvent>, SectionError> {
    existing(state)?;
    if state.status != SectionStatus::Editing {
        return Err(SectionError::WrongStatus {
            action: "submit",
            status: state.status,
        });
    }
    check_expectations(state, &expected)?;
    check_lock(state, &actor, now)?;
    let commit = match commit_id {
        Some(id) => state
            .commit(&id)
            .ok_or(SectionError::CommitNotFound(id.clone()))?,
        None => state.head().ok_or(SectionError::NoCommit)?,
    };
    Ok(vec![SectionEvent::SectionSubmitted {
        submission_id,
        commit_id: commit.recorded.commit_id.clone(),
        submitted_by: actor,
        submitted_at: now,
        snapshot: commit.recorded.snapshot.clone(),
        snapshot_hash: commit.recorded.snapshot_hash.clone(),
    }])
}

/// A rejection closes a pending submission.
fn reject(
    state: &SectionState,
    submission_id: String,
    reviewer: Option<String>,
    note: Option<String>,
    now: Timestamp,
) -> Result<Vec<SectionEvent>, SectionError> {
    existing(state)?;
    pending(state, &submission_id)?;
    Ok(vec![SectionEvent::SubmissionRejected {
        submission_id,
        reviewed_by: reviewer,
        reviewed_at: now,
        review_note: note,
    }])
}

fn existing(state: &SectionState) -> Result<(), SectionError> {
    state
        .info
        .as_ref()
        .map(|_| ())
        .ok_or(SectionError::SectionNotFound)
}

/// Checks that `submission_id` is a pending submission of the section.
pub fn pending(state: &SectionState, submission_id: &str) -> Result<(), SectionError> {
    let submission = state
        .submission(submission_id)
        .ok_or(SectionError::SubmissionNotFound)?;
    if submission.status != SubmissionStatus::Pending {
        return Err(SectionError::SubmissionNotPending {
            status: submission.status.as_str(),
        });
    }
    Ok(())
}

/// A lock may be taken by `actor` when it is free, already `actor`'s, or lapsed.
fn check_lock(state: &SectionState, actor: &str, now: Timestamp) -> Result<(), SectionError> {
    match state.live_lock(now) {
        Some(lock) if lock.by != actor => Err(SectionError::Locked {
            locked_by: lock.by.clone(),
            lock_expires_at: lock.expires_at,
        }),
        _ => Ok(()),
    }
}

fn lock_event(actor: String, now: Timestamp) -> SectionEvent {
    SectionEvent::SectionLocked {
        locked_by: actor,
        locked_at: now,
        lock_expires_at: now.plus_seconds(LOCK_TTL_SECONDS),
    }
}

/// A commit by someone who does not hold a live lock takes it first.
fn relock(state: &SectionState, actor: &str, now: Timestamp) -> Vec<SectionEvent> {
    match state.live_lock(now) {
        Some(lock) if lock.by == actor => vec![],
        _ => vec![lock_event(actor.to_owned(), now)],
    }
}

/// A new head needs a status that takes commits, the client's expectations met, and the lock.
fn may_commit(
    state: &SectionState,
    action: &'static str,
    head: &NewHead,
) -> Result<(), SectionError> {
    if !state.status.accepts_commits() {
        return Err(SectionError::WrongStatus {
            action,
            status: state.status,
        });
    }
    check_expectations(state, &head.expected)?;
    check_lock(state, &head.actor, head.now)
}

fn check_expectations(state: &SectionState, expected: &Expectations) -> Result<(), SectionError> {
    if let Some(version) = expected.version
        && version != state.version
    {
        return Err(SectionError::VersionMismatch {
            expected: version,
            actual: state.version,
        });
    }
    if let Some(head) = &expected.head_commit_id
        && *head != state.head_commit_id
    {
        return Err(SectionError::HeadMismatch {
            expected: head.clone(),
            actual: state.head_commit_id.clone(),
        });
    }
    Ok(())
}

fn next_commit_no(state: &SectionState) -> i64 {
    state
        .commits
        .iter()
        .map(|commit| commit.recorded.commit_no)
        .max()
        .unwrap_or(0)
        + 1
}
