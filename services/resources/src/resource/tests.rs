//! Given these events, when this command, then these events / this refusal.

use super::*;
use chrono::{DateTime, Utc};
use palimpsest_events::resources::{
    ContentRef, Parent, ResourceEvent, ResourceType, Revision, mask,
};

fn t(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + seconds, 0).expect("time")
}

fn content(id: i64) -> ContentRef {
    ContentRef {
        rescontent_id: id,
        sha256: format!("{id:064x}"),
        size: id * 10,
    }
}

fn stamp(resrev_id: i64, at: i64) -> Stamp {
    Stamp {
        resrev_id,
        user_id: 7,
        timestamp: t(at),
        changeset_id: resrev_id,
        description: None,
    }
}

fn given(events: &[ResourceEvent]) -> ResourceState {
    events.iter().fold(ResourceState::default(), evolve)
}

fn then(
    state: &ResourceState,
    command: ResourceCommand,
) -> Result<Vec<ResourceEvent>, ResourceError> {
    decide(1, command, state)
}

fn revision(events: &[ResourceEvent]) -> &Revision {
    match events {
        [ResourceEvent::RevisionAdded(revision)] => revision,
        other => panic!("expected one revision, got {other:?}"),
    }
}

fn created() -> ResourceEvent {
    let events = then(
        &ResourceState::default(),
        ResourceCommand::Create(
            NewResource {
                res_id: 1,
                res_type: ResourceType::File,
                parent: Parent::Page(10),
                name: "a.png".into(),
                mimetype: "image/png".into(),
                content: content(1),
            },
            stamp(100, 0),
        ),
    )
    .expect("create");
    events[0].clone()
}

fn edited(edit: Edit, resrev_id: i64, at: i64, state: &ResourceState) -> ResourceEvent {
    then(
        state,
        ResourceCommand::Edit(edit, Expect::default(), stamp(resrev_id, at)),
    )
    .expect("edit")
    .remove(0)
}

fn deleted(state: &ResourceState, resrev_id: i64) -> ResourceEvent {
    then(
        state,
        ResourceCommand::Delete(Expect::default(), stamp(resrev_id, 9)),
    )
    .expect("delete")
    .remove(0)
}

#[test]
fn create_is_revision_one_with_name_content_and_parent() {
    let state = given(&[created()]);
    let head = state.head.as_ref().expect("head");
    assert_eq!(head.rev, 1);
    assert_eq!(head.resrev_id, 100);
    assert_eq!(head.change_mask, mask::NAME | mask::CONTENT | mask::PARENT);
    assert!(!head.deleted);
}

#[test]
fn create_refuses_a_used_id() {
    let state = given(&[created()]);
    let again = then(
        &state,
        ResourceCommand::Create(
            NewResource {
                res_id: 1,
                res_type: ResourceType::File,
                parent: Parent::Page(10),
                name: "b".into(),
                mimetype: "x/y".into(),
                content: content(2),
            },
            stamp(101, 1),
        ),
    );
    assert_eq!(again, Err(ResourceError::AlreadyExists(1)));
}

#[test]
fn every_new_revision_is_a_copy_of_the_head_with_the_change() {
    let state = given(&[created()]);
    let events = then(
        &state,
        ResourceCommand::Edit(
            Edit {
                content: Some((content(2), "image/png".into())),
                ..Edit::default()
            },
            Expect::default(),
            stamp(101, 5),
        ),
    )
    .expect("edit");
    let rev = revision(&events);
    let head = state.head.as_ref().expect("head");
    assert_eq!(rev.rev, 2);
    assert_eq!(rev.change_mask, mask::CONTENT);
    assert_eq!(rev.content, content(2));
    assert_eq!(
        (rev.name.as_str(), rev.parent),
        (head.name.as_str(), head.parent)
    );
    assert_eq!(rev.timestamp, t(5));
    assert_eq!(rev.resrev_id, 101);
}

#[test]
fn content_update_with_a_rename_sets_content_and_name() {
    let state = given(&[created()]);
    let events = then(
        &state,
        ResourceCommand::Edit(
            Edit {
                content: Some((content(2), "image/png".into())),
                name: Some("b.png".into()),
                parent: None,
            },
            Expect::default(),
            stamp(101, 5),
        ),
    )
    .expect("edit");
    assert_eq!(revision(&events).change_mask, mask::CONTENT | mask::NAME);
}

#[test]
fn a_move_sets_parent_and_a_rename_name() {
    let state = given(&[created()]);
    let moved = then(
        &state,
        ResourceCommand::Edit(
            Edit {
                parent: Some(Parent::Page(11)),
                name: Some("c.png".into()),
                content: None,
            },
            Expect::default(),
            stamp(101, 5),
        ),
    )
    .expect("move");
    assert_eq!(revision(&moved).change_mask, mask::PARENT | mask::NAME);
    assert_eq!(revision(&moved).parent, Parent::Page(11));
}

#[test]
fn an_edit_that_changes_nothing_makes_no_revision() {
    let state = given(&[created()]);
    let same = then(
        &state,
        ResourceCommand::Edit(
            Edit {
                content: Some((content(1), "image/png".into())),
                name: Some("a.png".into()),
                parent: Some(Parent::Page(10)),
            },
            Expect::default(),
            stamp(101, 5),
        ),
    );
    assert_eq!(same, Ok(Vec::new()));
}

#[test]
fn delete_sets_the_deleteflag_and_a_deleted_resource_accepts_only_a_restore() {
    let state = given(&[created()]);
    let delete = deleted(&state, 101);
    assert_eq!(
        revision(std::slice::from_ref(&delete)).change_mask,
        mask::DELETEFLAG
    );
    let state = given(&[created(), delete]);
    let edit = then(
        &state,
        ResourceCommand::Edit(
            Edit {
                name: Some("x".into()),
                ..Edit::default()
            },
            Expect::default(),
            stamp(102, 10),
        ),
    );
    assert_eq!(edit, Err(ResourceError::Deleted(1)));
    let again = then(
        &state,
        ResourceCommand::Delete(Expect::default(), stamp(102, 10)),
    );
    assert_eq!(again, Err(ResourceError::Deleted(1)));
}

#[test]
fn restore_clears_the_flag_and_may_move_and_rename() {
    let first = created();
    let delete = deleted(&given(std::slice::from_ref(&first)), 101);
    let state = given(&[first, delete]);
    let back = then(
        &state,
        ResourceCommand::Restore {
            parent: Parent::Page(12),
            name: "a(2).png".into(),
            stamp: stamp(102, 20),
        },
    )
    .expect("restore");
    let rev = revision(&back);
    assert!(!rev.deleted);
    assert_eq!(rev.rev, 3);
    assert_eq!(
        rev.change_mask,
        mask::DELETEFLAG | mask::PARENT | mask::NAME
    );
    let plain = then(
        &state,
        ResourceCommand::Restore {
            parent: Parent::Page(10),
            name: "a.png".into(),
            stamp: stamp(102, 20),
        },
    )
    .expect("restore");
    assert_eq!(revision(&plain).change_mask, mask::DELETEFLAG);
}

#[test]
fn restore_of_a_live_resource_is_refused() {
    let state = given(&[created()]);
    let restore = then(
        &state,
        ResourceCommand::Restore {
            parent: Parent::Page(10),
            name: "a.png".into(),
            stamp: stamp(101, 1),
        },
    );
    assert_eq!(restore, Err(ResourceError::NotDeleted(1)));
}

#[test]
fn a_write_based_on_a_stale_revision_or_etag_is_refused() {
    let first = created();
    let second = edited(
        Edit {
            name: Some("b.png".into()),
            ..Edit::default()
        },
        101,
        3,
        &given(std::slice::from_ref(&first)),
    );
    let state = given(&[first.clone(), second]);
    let old_etag = etag(given(&[first]).head.as_ref().expect("head"));
    let stale = then(
        &state,
        ResourceCommand::Delete(
            Expect {
                revision: Some(1),
                etag: None,
            },
            stamp(102, 5),
        ),
    );
    assert!(matches!(
        stale,
        Err(ResourceError::StaleRevision {
            head: 2,
            given: 1,
            ..
        })
    ));
    let stale = then(
        &state,
        ResourceCommand::Delete(
            Expect {
                revision: None,
                etag: Some(old_etag),
            },
            stamp(102, 5),
        ),
    );
    assert!(matches!(stale, Err(ResourceError::StaleEtag { .. })));
    let current = etag(state.head.as_ref().expect("head"));
    assert!(current.starts_with("\"1.r2_ts20"), "{current}");
    let fresh = then(
        &state,
        ResourceCommand::Delete(
            Expect {
                revision: Some(2),
                etag: Some(current),
            },
            stamp(102, 5),
        ),
    );
    assert!(fresh.is_ok());
}

#[test]
fn revisions_can_be_hidden_and_shown_but_not_the_head() {
    let first = created();
    let second = edited(
        Edit {
            name: Some("b.png".into()),
            ..Edit::default()
        },
        101,
        3,
        &given(std::slice::from_ref(&first)),
    );
    let state = given(&[first, second]);
    let hide = |revs: Vec<i64>, hidden: bool| ResourceCommand::Hide {
        revs,
        hidden,
        user_id: 1,
        timestamp: t(9),
    };
    assert_eq!(
        then(&state, hide(vec![2], true)),
        Err(ResourceError::HeadHidden(2))
    );
    assert_eq!(
        then(&state, hide(vec![3], true)),
        Err(ResourceError::NoSuchRevision { res_id: 1, rev: 3 })
    );
    let hidden = then(&state, hide(vec![1, 1], true)).expect("hide");
    let state = hidden.iter().fold(state, evolve);
    assert!(state.hidden.contains(&1));
    assert_eq!(then(&state, hide(vec![1], true)), Ok(Vec::new()));
    let shown = then(&state, hide(vec![1], false)).expect("show");
    assert!(shown.iter().fold(state, evolve).hidden.is_empty());
}

#[test]
fn only_a_deleted_resource_can_be_wiped_and_a_wiped_one_is_gone() {
    let first = created();
    let wipe = ResourceCommand::Wipe {
        user_id: 1,
        timestamp: t(9),
    };
    let state = given(std::slice::from_ref(&first));
    assert_eq!(
        then(&state, wipe.clone()),
        Err(ResourceError::NotArchived(1))
    );
    let delete = deleted(&state, 101);
    let state = given(&[first, delete]);
    let wiped = then(&state, wipe.clone()).expect("wipe");
    let state = wiped.iter().fold(state, evolve);
    assert_eq!(then(&state, wipe), Err(ResourceError::NotFound(1)));
}
