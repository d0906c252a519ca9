//! The revision-tree rules, one test per rule.

use super::*;

fn rev(text: &str) -> RevId {
    RevId::parse(text).expect("valid rev")
}

fn revs(texts: &[&str]) -> Vec<RevId> {
    texts.iter().map(|t| rev(t)).collect()
}

/// A tree holding a chain `1-a`, `2-b`, … as given.
fn chain(texts: &[&str]) -> RevTree {
    let mut tree = RevTree::default();
    for (i, text) in texts.iter().enumerate() {
        let ancestry: Vec<RevId> = texts[..i].iter().rev().map(|t| rev(t)).collect();
        tree.insert(rev(text), &ancestry, format!("{{\"n\":{i}}}"), false);
    }
    tree
}

fn winner(tree: &RevTree) -> String {
    tree.winner().map(|n| n.rev.to_string()).unwrap_or_default()
}

#[test]
fn the_highest_generation_wins_among_live_leaves() {
    let mut tree = chain(&["1-a", "2-b"]);
    tree.insert(rev("3-c"), &revs(&["2-b"]), "{}".into(), false);
    tree.insert(rev("2-z"), &revs(&["1-a"]), "{}".into(), false);
    assert_eq!(winner(&tree), "3-c");
    assert_eq!(tree.conflicts().len(), 1);
}

#[test]
fn the_highest_digest_breaks_a_generation_tie() {
    let mut tree = chain(&["1-a"]);
    tree.insert(rev("2-b"), &revs(&["1-a"]), "{}".into(), false);
    tree.insert(rev("2-c"), &revs(&["1-a"]), "{}".into(), false);
    assert_eq!(winner(&tree), "2-c");
    assert_eq!(tree.conflicts()[0].rev.to_string(), "2-b");
}

#[test]
fn a_live_leaf_beats_a_higher_deleted_leaf() {
    let mut tree = chain(&["1-a"]);
    tree.insert(rev("2-b"), &revs(&["1-a"]), "{}".into(), false);
    tree.insert(rev("2-c"), &revs(&["1-a"]), "{}".into(), false);
    tree.insert(rev("3-d"), &revs(&["2-c"]), "{}".into(), true);
    assert_eq!(winner(&tree), "2-b");
    assert!(tree.conflicts().is_empty());
    assert_eq!(tree.deleted_conflicts()[0].rev.to_string(), "3-d");
}

#[test]
fn when_every_leaf_is_deleted_the_highest_tombstone_wins() {
    let mut tree = chain(&["1-a"]);
    tree.insert(rev("2-b"), &revs(&["1-a"]), "{}".into(), true);
    tree.insert(rev("2-c"), &revs(&["1-a"]), "{}".into(), false);
    tree.insert(rev("3-d"), &revs(&["2-c"]), "{}".into(), true);
    assert_eq!(winner(&tree), "3-d");
    assert!(tree.winner().is_some_and(|w| w.deleted));
}

#[test]
fn replicated_ancestry_is_grafted_where_the_known_history_ends() {
    let mut tree = chain(&["1-a", "2-b"]);
    tree.insert(
        rev("5-e"),
        &revs(&["4-d", "3-c", "2-b", "1-a"]),
        "{}".into(),
        false,
    );
    let path: Vec<String> = tree
        .path(&rev("5-e"))
        .iter()
        .map(|n| n.rev.to_string())
        .collect();
    assert_eq!(path, ["5-e", "4-d", "3-c", "2-b", "1-a"]);
    assert_eq!(tree.leaves().count(), 1);
    assert_eq!(tree.nodes().len(), 5);
}

#[test]
fn unknown_ancestry_starts_a_new_root() {
    let mut tree = chain(&["1-a"]);
    tree.insert(rev("3-y"), &revs(&["2-x"]), "{}".into(), false);
    assert_eq!(tree.leaves().count(), 2);
    assert_eq!(tree.get(&rev("2-x")).and_then(|n| n.parent), None);
    assert_eq!(winner(&tree), "3-y");
}

#[test]
fn inserting_a_known_revision_changes_nothing() {
    let mut tree = chain(&["1-a", "2-b"]);
    let before = tree.clone();
    tree.insert(rev("2-b"), &revs(&["1-a"]), "{\"other\":1}".into(), true);
    assert_eq!(tree, before);
}

#[test]
fn only_leaves_keep_their_bodies() {
    let tree = chain(&["1-a", "2-b"]);
    assert_eq!(tree.get(&rev("1-a")).and_then(|n| n.body.clone()), None);
    assert_eq!(
        tree.get(&rev("2-b")).and_then(|n| n.body.clone()),
        Some("{\"n\":1}".into())
    );
}

#[test]
fn pruning_keeps_revs_limit_ancestors_of_every_leaf_and_every_conflicting_branch() {
    let mut tree = chain(&["1-a", "2-b", "3-c", "4-d", "5-e"]);
    tree.insert(rev("3-x"), &revs(&["2-b"]), "{}".into(), false);
    tree.prune(2);
    let kept: Vec<String> = tree.nodes().iter().map(|n| n.rev.to_string()).collect();
    assert_eq!(kept, ["2-b", "4-d", "5-e", "3-x"]);
    assert_eq!(winner(&tree), "5-e");
    assert_eq!(tree.conflicts()[0].rev.to_string(), "3-x");
    assert_eq!(tree.get(&rev("4-d")).and_then(|n| n.parent), None);
}

#[test]
fn deleting_the_losing_leaves_resolves_a_conflict() {
    let mut tree = chain(&["1-a"]);
    tree.insert(rev("2-b"), &revs(&["1-a"]), "{}".into(), false);
    tree.insert(rev("2-c"), &revs(&["1-a"]), "{}".into(), false);
    assert_eq!(tree.conflicts().len(), 1);
    tree.insert(rev("3-t"), &revs(&["2-b"]), "{}".into(), true);
    assert!(tree.conflicts().is_empty());
    assert_eq!(winner(&tree), "2-c");
}

#[test]
fn latest_finds_the_leaves_below_a_superseded_revision() {
    let mut tree = chain(&["1-a", "2-b"]);
    tree.insert(rev("2-c"), &revs(&["1-a"]), "{}".into(), false);
    let under: Vec<String> = tree
        .leaves_under(&rev("1-a"))
        .iter()
        .map(|n| n.rev.to_string())
        .collect();
    assert_eq!(under, ["2-c", "2-b"]);
    assert_eq!(tree.leaves_under(&rev("2-b")).len(), 1);
}

#[test]
fn the_stored_history_form_round_trips() {
    let mut tree = chain(&["1-a", "2-b"]);
    tree.insert(rev("3-c"), &revs(&["2-b"]), "{}".into(), true);
    tree.insert(
        rev("2-x"),
        &revs(&["1-a"]),
        "{\"k\":\"\\u0000\"}".into(),
        false,
    );
    let history = History::from(&tree);
    assert_eq!(history.revs, ["1-a", "2-b", "3-c", "2-x"]);
    assert_eq!(history.parents, [-1, 0, 1, 0]);
    assert_eq!(history.deleted, [2]);
    assert_eq!(RevTree::try_from(&history).expect("valid"), tree);
}
