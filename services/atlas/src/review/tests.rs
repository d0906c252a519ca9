//! Given a section with a pending submission and the published map, when approving, then
//! publish or conflict.

use super::*;
use crate::hashing::snapshot_hash;
use crate::published::{EntityState, PublishedView};
use crate::section::{SectionError, SubmissionStatus, evolve, fold};
use palimpsest_events::atlas::{
    CommitRecorded, EntityEvent, EntityRow, PublicationEvent, SectionEvent, Timestamp,
};
use serde_json::{Value, json};

fn t(minutes: i64) -> Timestamp {
    Timestamp::parse("2026-04-19T10:00:00Z")
        .expect("time")
        .plus_seconds(minutes * 60)
}

fn section_with(snapshot: Value, hash: String) -> Vec<SectionEvent> {
    vec![
        SectionEvent::SectionCreated {
            section_id: "s1".into(),
            title: "x".into(),
            description: None,
            user_id: None,
            created_by: None,
            created_at: t(0),
        },
        SectionEvent::SectionCommitted(CommitRecorded {
            commit_id: "c1".into(),
            commit_no: 1,
            parent_commit_id: None,
            restored_from_commit_id: None,
            created_by: "ann".into(),
            created_at: t(1),
            title: None,
            note: None,
            snapshot: snapshot.clone(),
            snapshot_hash: hash.clone(),
        }),
        SectionEvent::SectionSubmitted {
            submission_id: "sub1".into(),
            commit_id: "c1".into(),
            submitted_by: "ann".into(),
            submitted_at: t(2),
            snapshot,
            snapshot_hash: hash,
        },
    ]
}

fn approve() -> ApproveCommand {
    ApproveCommand {
        submission_id: "sub1".into(),
        reviewer: Some("rev".into()),
        note: Some("ok".into()),
        now: t(3),
    }
}

fn snapshot() -> Value {
    json!({"entities": [{"operation": "update", "id": "e1", "name": "new", "base_updated_at": t(0).to_iso()}]})
}

fn published(updated_at: Timestamp) -> PublishedView {
    let mut view = PublishedView::default();
    view.entities.insert(
        "e1".into(),
        EntityState {
            row: Some(EntityRow {
                id: "e1".into(),
                name: "old".into(),
                slug: None,
                description: None,
                type_id: "country".into(),
                status: Some(1),
                is_deleted: 0,
                created_at: t(0),
                updated_at,
            }),
        },
    );
    view
}

#[test]
fn approving_publishes_and_marks_the_submission_approved() {
    let state = fold(&section_with(snapshot(), snapshot_hash(&snapshot())));
    let decision = decide_approve(&approve(), &state, &published(t(0))).expect("decides");
    let ApprovalDecision::Published {
        section,
        publication,
        published,
    } = decision
    else {
        panic!("{decision:?}")
    };
    assert!(matches!(
        publication.entities["e1"].as_slice(),
        [EntityEvent::EntityUpdated { entity, source }]
            if entity.name == "new" && source.submission_id == "sub1" && source.reviewed_by.as_deref() == Some("rev")
    ));
    assert!(matches!(
        &published,
        PublicationEvent::SubmissionPublished { entity_ids, geometry_ids, .. }
            if entity_ids == &["e1"] && geometry_ids.is_empty()
    ));
    let after = section.iter().fold(state, evolve);
    assert_eq!(after.status, crate::section::SectionStatus::Approved);
    let sub = after.submission("sub1").expect("submission");
    assert_eq!(sub.status, SubmissionStatus::Approved);
    assert_eq!(sub.review_note.as_deref(), Some("ok"));
    assert_eq!(
        decide_approve(&approve(), &after, &PublishedView::default()),
        Err(SectionError::SubmissionNotPending { status: "approved" })
    );
}

#[test]
fn a_stale_base_marks_the_submission_conflicted_and_publishes_nothing() {
    let state = fold(&section_with(snapshot(), snapshot_hash(&snapshot())));
    let decision = decide_approve(&approve(), &state, &published(t(1))).expect("decides");
    let ApprovalDecision::Conflicted { section, message } = decision else {
        panic!("{decision:?}")
    };
    assert!(message.starts_with("Conflict: entity e1 changed since base_updated_at"));
    let after = section.iter().fold(state, evolve);
    assert_eq!(after.status, crate::section::SectionStatus::Conflicted);
    let sub = after.submission("sub1").expect("submission");
    assert_eq!(sub.status, SubmissionStatus::Conflicted);
    assert_eq!(sub.review_note.as_deref(), Some(message.as_str()));
}

#[test]
fn a_snapshot_whose_hash_does_not_match_is_conflicted() {
    let state = fold(&section_with(snapshot(), "sha256:0000".into()));
    let decision = decide_approve(&approve(), &state, &published(t(0))).expect("decides");
    assert!(matches!(
        decision,
        ApprovalDecision::Conflicted { message, .. } if message.starts_with("Conflict: snapshot hash is sha256:")
    ));
}

#[test]
fn only_pending_submissions_of_existing_sections() {
    assert_eq!(
        decide_approve(&approve(), &fold(&[]), &PublishedView::default()),
        Err(SectionError::SectionNotFound)
    );
    let state = fold(&section_with(snapshot(), snapshot_hash(&snapshot())));
    let other = ApproveCommand {
        submission_id: "zz".into(),
        ..approve()
    };
    assert_eq!(
        decide_approve(&other, &state, &PublishedView::default()),
        Err(SectionError::SubmissionNotFound)
    );
}
