//! Given / when / then for the document decider.

use super::*;
use palimpsest_events::docs::DocumentEvent;

fn rev(text: &str) -> RevId {
    RevId::parse(text).expect("valid rev")
}

fn given(events: &[DocumentEvent]) -> DocState {
    events.iter().fold(DocState::default(), evolve)
}

fn stored(rev: &str, ancestry: &[&str], deleted: bool) -> DocumentEvent {
    DocumentEvent::RevisionStored {
        db: "db".into(),
        doc_id: "doc".into(),
        rev: rev.into(),
        ancestry: ancestry.iter().map(|a| (*a).to_owned()).collect(),
        body: "{}".into(),
        deleted,
        channels: vec![],
        access: Default::default(),
        roles: Default::default(),
    }
}

/// A revision routed to `channels`, granting `user` the role `role`.
fn granting(
    rev: &str,
    ancestry: &[&str],
    channels: &[&str],
    user: &str,
    role: &str,
) -> DocumentEvent {
    DocumentEvent::RevisionStored {
        db: "db".into(),
        doc_id: "doc".into(),
        rev: rev.into(),
        ancestry: ancestry.iter().map(|a| (*a).to_owned()).collect(),
        body: "{}".into(),
        deleted: false,
        channels: channels.iter().map(|c| (*c).to_owned()).collect(),
        access: Default::default(),
        roles: [(user.to_owned(), vec![role.to_owned()])].into(),
    }
}

fn routing(channels: &[&str], roles: &[(&str, &str)]) -> Routing {
    Routing {
        channels: channels.iter().map(|c| (*c).to_owned()).collect(),
        access: Default::default(),
        roles: roles
            .iter()
            .map(|(u, r)| ((*u).to_owned(), vec![(*r).to_owned()]))
            .collect(),
    }
}

fn edit(base: Option<&str>, body: &str, deleted: bool) -> DocCommand {
    DocCommand::Edit {
        db: "db".into(),
        doc_id: "doc".into(),
        base: base.map(rev),
        body: body.into(),
        deleted,
    }
}

fn replicate(rev_text: &str, ancestry: &[&str]) -> DocCommand {
    DocCommand::Replicate {
        db: "db".into(),
        doc_id: "doc".into(),
        rev: rev(rev_text),
        ancestry: ancestry.iter().map(|a| rev(a)).collect(),
        body: "{}".into(),
        deleted: false,
    }
}

fn the_rev(events: &[DocumentEvent]) -> (String, Vec<String>) {
    match &events[0] {
        DocumentEvent::RevisionStored { rev, ancestry, .. } => (rev.clone(), ancestry.clone()),
        other => panic!("expected a revision, got {other:?}"),
    }
}

#[test]
fn a_first_edit_makes_generation_one() {
    let events = decide(edit(None, "{\"a\":1}", false), &given(&[])).expect("accepted");
    let (rev, ancestry) = the_rev(&events);
    assert!(rev.starts_with("1-"));
    assert!(ancestry.is_empty());
}

#[test]
fn an_edit_of_the_current_leaf_extends_it() {
    let state = given(&[stored("1-a", &[], false)]);
    let events = decide(edit(Some("1-a"), "{}", false), &state).expect("accepted");
    let (rev, ancestry) = the_rev(&events);
    assert!(rev.starts_with("2-"));
    assert_eq!(ancestry, ["1-a"]);
}

#[test]
fn a_stale_rev_is_a_conflict() {
    let state = given(&[stored("1-a", &[], false), stored("2-b", &["1-a"], false)]);
    assert_eq!(
        decide(edit(Some("1-a"), "{}", false), &state),
        Err(DocError::Conflict)
    );
    assert_eq!(
        decide(edit(Some("9-z"), "{}", false), &state),
        Err(DocError::Conflict)
    );
}

#[test]
fn an_edit_without_rev_of_a_live_document_is_a_conflict() {
    let state = given(&[stored("1-a", &[], false)]);
    assert_eq!(
        decide(edit(None, "{}", false), &state),
        Err(DocError::Conflict)
    );
}

#[test]
fn an_edit_without_rev_recreates_a_deleted_document_on_its_tombstone() {
    let state = given(&[stored("1-a", &[], false), stored("2-b", &["1-a"], true)]);
    let events = decide(edit(None, "{}", false), &state).expect("accepted");
    let (rev, ancestry) = the_rev(&events);
    assert!(rev.starts_with("3-"));
    assert_eq!(ancestry, ["2-b"]);
}

#[test]
fn deleting_a_missing_document_without_rev_stores_a_tombstone() {
    let events = decide(edit(None, "{}", true), &given(&[])).expect("accepted");
    let (rev, ancestry) = the_rev(&events);
    assert!(rev.starts_with("1-"));
    assert!(ancestry.is_empty());
    assert!(matches!(
        events.as_slice(),
        [DocumentEvent::RevisionStored { deleted: true, .. }]
    ));
}

#[test]
fn deleting_a_deleted_document_without_rev_extends_its_tombstone() {
    let state = given(&[stored("1-a", &[], false), stored("2-b", &["1-a"], true)]);
    let events = decide(edit(None, "{}", true), &state).expect("accepted");
    let (rev, ancestry) = the_rev(&events);
    assert!(rev.starts_with("3-"));
    assert_eq!(ancestry, ["2-b"]);
}

#[test]
fn editing_a_losing_leaf_is_allowed_and_deleting_it_resolves_the_conflict() {
    let state = given(&[
        stored("1-a", &[], false),
        stored("2-b", &["1-a"], false),
        stored("2-c", &["1-a"], false),
    ]);
    let events = decide(edit(Some("2-b"), "{}", true), &state).expect("accepted");
    let after = events.iter().fold(state, evolve);
    assert!(after.tree.conflicts().is_empty());
    assert_eq!(
        after.tree.winner().map(|w| w.rev.to_string()),
        Some("2-c".into())
    );
}

#[test]
fn a_replicated_revision_is_grafted_with_only_the_ancestry_up_to_the_known_history() {
    let state = given(&[stored("1-a", &[], false), stored("2-b", &["1-a"], false)]);
    let events = decide(replicate("4-d", &["3-c", "2-b", "1-a"]), &state).expect("accepted");
    assert_eq!(
        the_rev(&events),
        ("4-d".into(), vec!["3-c".into(), "2-b".into()])
    );
}

#[test]
fn a_replicated_branch_beside_the_current_leaf_is_never_a_conflict() {
    let state = given(&[stored("1-a", &[], false), stored("2-b", &["1-a"], false)]);
    let events = decide(replicate("2-c", &["1-a"]), &state).expect("accepted");
    let after = events.iter().fold(state, evolve);
    assert_eq!(after.tree.leaves().count(), 2);
}

#[test]
fn a_replicated_revision_already_held_appends_nothing() {
    let state = given(&[stored("1-a", &[], false)]);
    assert_eq!(decide(replicate("1-a", &[]), &state), Ok(vec![]));
}

#[test]
fn the_winners_grants_route_the_document_and_a_tombstone_revokes_them_but_keeps_its_channels() {
    let state = given(&[granting("1-a", &[], &["c"], "ann", "editor")]);
    assert_eq!(state.routing, routing(&["c"], &[("ann", "editor")]));
    let deleted = given(&[
        granting("1-a", &[], &["c"], "ann", "editor"),
        stored("2-b", &["1-a"], true),
    ]);
    assert_eq!(deleted.routing, routing(&["c"], &[]));
}

#[test]
fn a_losing_branch_does_not_change_the_routing() {
    let state = given(&[
        granting("2-z", &["1-a"], &["c"], "ann", "editor"),
        stored("2-b", &["1-a"], false),
    ]);
    assert_eq!(state.routing, routing(&["c"], &[("ann", "editor")]));
}

#[test]
fn resync_appends_only_when_the_rerun_routes_the_live_winner_differently() {
    let state = given(&[granting("1-a", &[], &["c"], "ann", "editor")]);
    assert!(resync("db", "doc", &state, routing(&["c"], &[("ann", "editor")])).is_empty());
    let events = resync("db", "doc", &state, routing(&["d"], &[]));
    assert!(
        matches!(&events[..], [DocumentEvent::DocumentResynced { rev, channels, roles, .. }]
        if rev == "1-a" && channels == &["d"] && roles.is_empty())
    );
    assert_eq!(given_after(&state, &events).routing, routing(&["d"], &[]));
    let tombstone = given(&[stored("1-a", &[], false), stored("2-b", &["1-a"], true)]);
    assert!(resync("db", "doc", &tombstone, routing(&["x"], &[])).is_empty());
}

fn given_after(state: &DocState, events: &[DocumentEvent]) -> DocState {
    events.iter().fold(state.clone(), evolve)
}

#[test]
fn a_purged_document_is_gone_and_a_new_write_starts_a_new_tree() {
    let state = given(&[stored("1-a", &[], false), stored("2-b", &["1-a"], false)]);
    let events = purge("db", "doc", &state).expect("purged");
    let after = given_after(&state, &events);
    assert_eq!(after, DocState::default());
    assert_eq!(purge("db", "doc", &after), Err(DocError::NotFound));
    let recreated = decide(edit(None, "{}", false), &after).expect("a fresh document");
    assert!(the_rev(&recreated).0.starts_with("1-"));
}
