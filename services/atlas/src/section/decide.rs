//! The section decider: a command and the folded state in, the events to append (or why not) out.

use crate::hashing::snapshot_hash;
use crate::section::command::{Expectations, SectionCommand};
use crate::section::error::SectionError;
use crate::section::state::{LOCK_TTL_SECONDS, SectionState, SectionStatus, SubmissionStatus};
use crate::validation::parse_snapshot;
use palimpsest_events::atlas::{CommitRecorded, SectionEvent, Timestamp};

/// Decides a section command against the section's state.
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
        } => {
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
        SectionCommand::Lock { actor, now } => {
            existing(state)?;
            check_lock(state, &actor, now)?;
            Ok(vec![lock_event(actor, now)])
        }
        SectionCommand::Unlock { actor, now } => {
            existing(state)?;
            match state.live_lock(now) {
                None if state.lock.is_none() => Ok(vec![]),
                Some(l) if Some(&l.by) != actor.as_ref() => Err(SectionError::Locked {
                    locked_by: l.by.clone(),
                    lock_expires_at: l.expires_at,
                }),
                _ => Ok(vec![SectionEvent::SectionUnlocked {
                    unlocked_by: actor,
                    at: now,
                }]),
            }
        }
        SectionCommand::Commit {
            commit_id,
            actor,
            title,
            note,
            snapshot,
            expected,
            now,
        } => {
            existing(state)?;
            parse_snapshot(&snapshot)?;
            may_commit(state, "commit", &actor, &expected, now)?;
            let hash = snapshot_hash(&snapshot);
            let mut events = relock(state, &actor, now);
            events.push(SectionEvent::SectionCommitted(CommitRecorded {
                commit_id,
                commit_no: next_commit_no(state),
                parent_commit_id: state.head_commit_id.clone(),
                restored_from_commit_id: None,
                created_by: actor,
                created_at: now,
                title,
                note,
                snapshot,
                snapshot_hash: hash,
            }));
            Ok(events)
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
            existing(state)?;
            let source = state
                .commit(&source_commit_id)
                .ok_or_else(|| SectionError::CommitNotFound(source_commit_id.clone()))?;
            may_commit(state, "restore", &actor, &expected, now)?;
            let mut events = relock(state, &actor, now);
            events.push(SectionEvent::SectionRestored(CommitRecorded {
                commit_id,
                commit_no: next_commit_no(state),
                parent_commit_id: state.head_commit_id.clone(),
                restored_from_commit_id: Some(source_commit_id),
                created_by: actor,
                created_at: now,
                title,
                note,
                snapshot: source.recorded.snapshot.clone(),
                snapshot_hash: source.recorded.snapshot_hash.clone(),
            }));
            Ok(events)
        }
        SectionCommand::Submit {
            submission_id,
            actor,
            commit_id,
            expected,
            now,
        } => {
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
        SectionCommand::Reject {
            submission_id,
            reviewer,
            note,
            now,
        } => {
            existing(state)?;
            pending(state, &submission_id)?;
            Ok(vec![SectionEvent::SubmissionRejected {
                submission_id,
                reviewed_by: reviewer,
                reviewed_at: now,
                review_note: note,
            }])
        }
    }
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
        Some(l) if l.by != actor => Err(SectionError::Locked {
            locked_by: l.by.clone(),
            lock_expires_at: l.expires_at,
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
        Some(l) if l.by == actor => vec![],
        _ => vec![lock_event(actor.to_owned(), now)],
    }
}

fn may_commit(
    state: &SectionState,
    action: &'static str,
    actor: &str,
    expected: &Expectations,
    now: Timestamp,
) -> Result<(), SectionError> {
    if !state.status.accepts_commits() {
        return Err(SectionError::WrongStatus {
            action,
            status: state.status,
        });
    }
    check_expectations(state, expected)?;
    check_lock(state, actor, now)
}

fn check_expectations(state: &SectionState, expected: &Expectations) -> Result<(), SectionError> {
    if let Some(v) = expected.version
        && v != state.version
    {
        return Err(SectionError::VersionMismatch {
            expected: v,
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
        .map(|c| c.recorded.commit_no)
        .max()
        .unwrap_or(0)
        + 1
}
