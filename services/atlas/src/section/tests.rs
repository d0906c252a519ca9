//! Given these events, when this command, then these events / this error.

use super::*;
use crate::section::state::LOCK_TTL_SECONDS;
use palimpsest_events::atlas::{CommitRecorded, SectionEvent, Timestamp};
use serde_json::{Value, json};

fn t(minutes: i64) -> Timestamp {
    Timestamp::parse("2026-04-19T10:00:00Z")
        .expect("time")
        .plus_seconds(minutes * 60)
}

fn given(events: &[SectionEvent]) -> SectionState {
    fold(events)
}

fn created() -> SectionEvent {
    SectionEvent::SectionCreated {
        section_id: "s1".into(),
        title: "Đông Á 1000".into(),
        description: None,
        user_id: Some("ann".into()),
        created_by: Some("ann".into()),
        created_at: t(0),
    }
}

fn locked(by: &str, at: i64) -> SectionEvent {
    SectionEvent::SectionLocked {
        locked_by: by.into(),
        locked_at: t(at),
        lock_expires_at: t(at).plus_seconds(LOCK_TTL_SECONDS),
    }
}

fn snapshot() -> Value {
    json!({"schema_version": 1, "entities": [{"operation": "create", "id": "e1", "name": "Đại Việt"}]})
}

fn committed(id: &str, no: i64, parent: Option<&str>, at: i64) -> SectionEvent {
    SectionEvent::SectionCommitted(CommitRecorded {
        commit_id: id.into(),
        commit_no: no,
        parent_commit_id: parent.map(Into::into),
        restored_from_commit_id: None,
        created_by: "ann".into(),
        created_at: t(at),
        title: None,
        note: None,
        snapshot: snapshot(),
        snapshot_hash: crate::hashing::snapshot_hash(&snapshot()),
    })
}

fn submitted(id: &str, commit: &str, at: i64) -> SectionEvent {
    SectionEvent::SectionSubmitted {
        submission_id: id.into(),
        commit_id: commit.into(),
        submitted_by: "ann".into(),
        submitted_at: t(at),
        snapshot: snapshot(),
        snapshot_hash: crate::hashing::snapshot_hash(&snapshot()),
    }
}

fn rejected(id: &str, at: i64) -> SectionEvent {
    SectionEvent::SubmissionRejected {
        submission_id: id.into(),
        reviewed_by: Some("rev".into()),
        reviewed_at: t(at),
        review_note: Some("no".into()),
    }
}

fn commit(actor: &str, at: i64, snapshot: Value) -> SectionCommand {
    SectionCommand::Commit {
        commit_id: "c-new".into(),
        actor: actor.into(),
        title: Some("t".into()),
        note: None,
        snapshot,
        expected: Expectations::default(),
        now: t(at),
    }
}

#[test]
fn create_starts_editing_and_needs_a_title() {
    let events = decide(
        SectionCommand::Create {
            section_id: "s1".into(),
            title: "Đông Á 1000".into(),
            description: None,
            user_id: Some("ann".into()),
            created_by: Some("ann".into()),
            now: t(0),
        },
        &SectionState::default(),
    )
    .expect("created");
    assert_eq!(events, vec![created()]);
    let state = given(&events);
    assert_eq!(state.status, SectionStatus::Editing);
    assert_eq!(state.version, 0);

    let blank = SectionCommand::Create {
        section_id: "s2".into(),
        title: "  ".into(),
        description: None,
        user_id: None,
        created_by: None,
        now: t(0),
    };
    assert!(matches!(
        decide(blank, &SectionState::default()),
        Err(SectionError::Invalid { field, .. }) if field == "title"
    ));
    let again = SectionCommand::Create {
        section_id: "s1".into(),
        title: "x".into(),
        description: None,
        user_id: None,
        created_by: None,
        now: t(1),
    };
    assert_eq!(decide(again, &state), Err(SectionError::SectionExists));
}

#[test]
fn commands_on_a_missing_section_are_not_found() {
    let cmd = SectionCommand::Lock {
        actor: "ann".into(),
        now: t(0),
    };
    assert_eq!(
        decide(cmd, &SectionState::default()),
        Err(SectionError::SectionNotFound)
    );
}

#[test]
fn a_free_own_or_lapsed_lock_can_be_taken_for_fifteen_minutes() {
    let lock = |actor: &str, at| SectionCommand::Lock {
        actor: actor.into(),
        now: t(at),
    };
    assert_eq!(
        decide(lock("ann", 1), &given(&[created()])),
        Ok(vec![locked("ann", 1)])
    );
    assert_eq!(
        decide(lock("ann", 5), &given(&[created(), locked("ann", 1)])),
        Ok(vec![locked("ann", 5)])
    );
    assert_eq!(
        decide(lock("bob", 5), &given(&[created(), locked("ann", 1)])),
        Err(SectionError::Locked {
            locked_by: "ann".into(),
            lock_expires_at: t(16)
        })
    );
    assert_eq!(
        decide(lock("bob", 16), &given(&[created(), locked("ann", 1)])),
        Ok(vec![locked("bob", 16)]),
        "a lock lapses exactly at its expiry"
    );
}

#[test]
fn unlock_releases_unless_another_actor_holds_the_lock() {
    let unlock = |actor: Option<&str>, at| SectionCommand::Unlock {
        actor: actor.map(Into::into),
        now: t(at),
    };
    let state = given(&[created(), locked("ann", 1)]);
    assert!(matches!(
        decide(unlock(Some("bob"), 2), &state),
        Err(SectionError::Locked { .. })
    ));
    assert!(matches!(
        decide(unlock(None, 2), &state),
        Err(SectionError::Locked { .. })
    ));
    let released = decide(unlock(Some("ann"), 2), &state).expect("own");
    assert_eq!(
        released,
        vec![SectionEvent::SectionUnlocked {
            unlocked_by: Some("ann".into()),
            at: t(2)
        }]
    );
    assert_eq!(
        decide(unlock(Some("bob"), 20), &state).map(|e| e.len()),
        Ok(1)
    );
    assert_eq!(
        decide(unlock(Some("bob"), 2), &given(&[created()])),
        Ok(vec![]),
        "nothing to release"
    );
    let after = state::evolve(state, &released[0]);
    assert_eq!(after.lock, None);
    assert_eq!(after.version, 0, "locks do not bump the version");
}

#[test]
fn commit_takes_the_lock_and_moves_head_version_and_status() {
    let events = decide(commit("ann", 2, snapshot()), &given(&[created()])).expect("commit");
    assert_eq!(events.len(), 2);
    assert_eq!(events[0], locked("ann", 2));
    let SectionEvent::SectionCommitted(c) = &events[1] else {
        panic!("not a commit: {:?}", events[1]);
    };
    assert_eq!(c.commit_no, 1);
    assert_eq!(c.parent_commit_id, None);
    assert_eq!(c.snapshot_hash, crate::hashing::snapshot_hash(&snapshot()));
    let state = given(&[created(), events[0].clone(), events[1].clone()]);
    assert_eq!(state.head_commit_id.as_deref(), Some("c-new"));
    assert_eq!(state.version, 1);
    assert_eq!(state.status, SectionStatus::Editing);

    let second = decide(
        commit("ann", 3, snapshot()),
        &given(&[created(), locked("ann", 1), committed("c1", 1, None, 2)]),
    )
    .expect("second commit");
    assert_eq!(second.len(), 1, "the lock is already held");
    let SectionEvent::SectionCommitted(c) = &second[0] else {
        panic!("not a commit");
    };
    assert_eq!(
        (c.commit_no, c.parent_commit_id.as_deref()),
        (2, Some("c1"))
    );
}

#[test]
fn commit_is_refused_while_another_holds_the_lock() {
    let state = given(&[created(), locked("bob", 1)]);
    assert!(matches!(
        decide(commit("ann", 2, snapshot()), &state),
        Err(SectionError::Locked { locked_by, .. }) if locked_by == "bob"
    ));
    assert!(decide(commit("ann", 17, snapshot()), &state).is_ok());
}

#[test]
fn commit_refuses_an_invalid_snapshot_naming_the_field() {
    let bad = json!({"entities": [{"operation": "create", "id": "e1"}]});
    assert_eq!(
        decide(commit("ann", 2, bad), &given(&[created()])).map_err(|e| e.to_string()),
        Err("Invalid snapshot: entities[0].name is required".into())
    );
}

#[test]
fn commit_checks_expected_version_and_head() {
    let state = given(&[created(), locked("ann", 1), committed("c1", 1, None, 2)]);
    let with = |version, head: Option<Option<&str>>| SectionCommand::Commit {
        commit_id: "c2".into(),
        actor: "ann".into(),
        title: None,
        note: None,
        snapshot: snapshot(),
        expected: Expectations {
            version,
            head_commit_id: head.map(|h| h.map(Into::into)),
        },
        now: t(3),
    };
    assert_eq!(
        decide(with(Some(0), None), &state),
        Err(SectionError::VersionMismatch {
            expected: 0,
            actual: 1
        })
    );
    assert!(matches!(
        decide(with(None, Some(None)), &state),
        Err(SectionError::HeadMismatch { .. })
    ));
    assert!(decide(with(Some(1), Some(Some("c1"))), &state).is_ok());
}

#[test]
fn restore_copies_the_source_snapshot_into_a_new_head() {
    let state = given(&[
        created(),
        locked("ann", 1),
        committed("c1", 1, None, 2),
        committed("c2", 2, Some("c1"), 3),
    ]);
    let events = decide(
        SectionCommand::Restore {
            commit_id: "c3".into(),
            actor: "ann".into(),
            source_commit_id: "c1".into(),
            title: None,
            note: Some("back".into()),
            expected: Expectations::default(),
            now: t(4),
        },
        &state,
    )
    .expect("restore");
    let [SectionEvent::SectionRestored(c)] = events.as_slice() else {
        panic!("{events:?}");
    };
    assert_eq!(c.commit_no, 3);
    assert_eq!(c.parent_commit_id.as_deref(), Some("c2"));
    assert_eq!(c.restored_from_commit_id.as_deref(), Some("c1"));
    assert_eq!(c.snapshot, snapshot());
    let after = state::evolve(state.clone(), &events[0]);
    assert_eq!(after.head().map(|h| h.kind), Some("restore"));
    assert_eq!(after.version, 3);

    let missing = SectionCommand::Restore {
        commit_id: "c3".into(),
        actor: "ann".into(),
        source_commit_id: "nope".into(),
        title: None,
        note: None,
        expected: Expectations::default(),
        now: t(4),
    };
    assert_eq!(
        decide(missing, &state),
        Err(SectionError::CommitNotFound("nope".into()))
    );
}

#[test]
fn submit_needs_editing_and_a_commit_and_releases_the_lock() {
    let submit = |commit: Option<&str>| SectionCommand::Submit {
        submission_id: "sub1".into(),
        actor: "ann".into(),
        commit_id: commit.map(Into::into),
        expected: Expectations::default(),
        now: t(5),
    };
    assert_eq!(
        decide(submit(None), &given(&[created()])),
        Err(SectionError::NoCommit)
    );
    let state = given(&[created(), locked("ann", 1), committed("c1", 1, None, 2)]);
    let events = decide(submit(None), &state).expect("submit");
    assert_eq!(events, vec![submitted("sub1", "c1", 5)]);
    let after = state::evolve(state.clone(), &events[0]);
    assert_eq!(after.status, SectionStatus::Submitted);
    assert_eq!(after.lock, None);
    assert_eq!(after.version, 1, "only commits move the version");
    assert_eq!(
        after.submission("sub1").map(|s| s.status),
        Some(SubmissionStatus::Pending)
    );
    assert!(matches!(
        decide(submit(None), &after),
        Err(SectionError::WrongStatus {
            action: "submit",
            status: SectionStatus::Submitted
        })
    ));
    assert!(matches!(
        decide(commit("ann", 6, snapshot()), &after),
        Err(SectionError::WrongStatus {
            action: "commit",
            ..
        })
    ));
    assert_eq!(
        decide(submit(Some("zz")), &state),
        Err(SectionError::CommitNotFound("zz".into()))
    );
}

#[test]
fn reject_takes_only_pending_submissions_and_reopens_editing() {
    let state = given(&[
        created(),
        committed("c1", 1, None, 2),
        submitted("sub1", "c1", 3),
    ]);
    let reject = |id: &str| SectionCommand::Reject {
        submission_id: id.into(),
        reviewer: Some("rev".into()),
        note: Some("no".into()),
        now: t(4),
    };
    assert_eq!(
        decide(reject("sub1"), &state),
        Ok(vec![rejected("sub1", 4)])
    );
    assert_eq!(
        decide(reject("other"), &state),
        Err(SectionError::SubmissionNotFound)
    );
    let after = state::evolve(state, &rejected("sub1", 4));
    assert_eq!(after.status, SectionStatus::Rejected);
    assert_eq!(
        decide(reject("sub1"), &after),
        Err(SectionError::SubmissionNotPending { status: "rejected" })
    );
    assert!(matches!(
        decide(
            SectionCommand::Submit {
                submission_id: "sub2".into(),
                actor: "ann".into(),
                commit_id: None,
                expected: Expectations::default(),
                now: t(5)
            },
            &after
        ),
        Err(SectionError::WrongStatus { .. })
    ));
    let events = decide(commit("ann", 5, snapshot()), &after).expect("commit after reject");
    let reopened = events.iter().fold(after, state::evolve);
    assert_eq!(reopened.status, SectionStatus::Editing);
}

#[test]
fn submit_is_refused_while_another_holds_a_live_lock() {
    let state = given(&[created(), locked("ann", 1), committed("c1", 1, None, 2)]);
    let submit = |actor: &str, at: i64| SectionCommand::Submit {
        submission_id: "sub1".into(),
        actor: actor.into(),
        commit_id: None,
        expected: Expectations::default(),
        now: t(at),
    };
    assert_eq!(
        decide(submit("bob", 5), &state),
        Err(SectionError::Locked {
            locked_by: "ann".into(),
            lock_expires_at: t(1).plus_seconds(LOCK_TTL_SECONDS),
        })
    );
    assert!(
        decide(submit("ann", 5), &state).is_ok(),
        "the holder submits"
    );
    assert!(
        decide(submit("bob", 17), &state).is_ok(),
        "a lapsed lock does not stop anyone"
    );
}

#[test]
fn only_commits_and_restores_move_the_version() {
    let state = given(&[
        created(),
        locked("ann", 1),
        committed("c1", 1, None, 2),
        submitted("sub1", "c1", 3),
        rejected("sub1", 4),
    ]);
    assert_eq!(state.version, 1);
    let events = decide(commit("ann", 5, snapshot()), &state).expect("commit after reject");
    assert_eq!(events.iter().fold(state, state::evolve).version, 2);
}

#[test]
fn a_status_filter_names_one_of_the_statuses_that_exist() {
    for status in SectionStatus::ALL {
        assert_eq!(SectionStatus::parse(status.as_str()), Ok(status));
    }
    assert_eq!(
        SectionStatus::parse("pending"),
        Err(SectionError::Invalid {
            field: "status".into(),
            reason: "must be one of editing, submitted, approved, rejected, conflicted".into(),
        })
    );
}
