//! Which revisions of a document a caller may read, revision by revision (Sync Gateway checks
//! the channels of each revision it returns, not the winner's).
//!
//! The projector records every leaf's channels (`_sync.rev_channels`). A caller that sees
//! everything (the admin, a `*` user) reads every revision; any other reads a revision only
//! when one of its own channels is one of the caller's. A revision it may not read keeps its
//! place in the tree but not its body: it is answered as Sync Gateway answers a revision that
//! left the caller's channels, `{"_id", "_rev", "_removed": true}`, with no member, attachment
//! or ancestry of its own. Read routes build their tree with [`readable_tree`] (`GET ?rev=`,
//! `?open_revs=`, `_bulk_get`, `GET /{db}/{doc}/{attachment}?rev=`) and `_changes` lists a
//! leaf with [`listed`]; whether the document is visible at all stays the winner's question
//! ([`crate::access::auth::Caller::sees`]).

use crate::access::auth::Caller;
use crate::read::OldRevision;
use crate::rev::RevId;
use crate::stored::{StoredDoc, StoredError, SyncData};
use crate::tree::{History, Node, RevTree};

/// The body that stands in for a revision the caller may not read: rendered with `_id` and
/// `_rev` it is Sync Gateway's removal (`_removed` is never stored: it is dropped on input).
const WITHHELD: &str = r#"{"_removed":true}"#;

/// Whether `caller` may read revision `rev` of the document `sync` describes.
pub fn may_read(caller: &Caller, sync: &SyncData, rev: &str) -> bool {
    caller.sees_all()
        || sync
            .rev_channels
            .get(rev)
            .is_some_and(|own| own.iter().any(|channel| caller.channels.contains(channel)))
}

/// Whether a change feed filtered to `channels` (`None`: unfiltered) lists leaf `rev`: one of
/// its channels is among them.
pub fn listed(sync: &SyncData, rev: &str, channels: Option<&[String]>) -> bool {
    let Some(channels) = channels else {
        return true;
    };
    sync.rev_channels
        .get(rev)
        .is_some_and(|own| own.iter().any(|channel| channels.contains(channel)))
}

/// The document's tree as `caller` may read it: every revision in its place, those it may not
/// read with the removal body in place of theirs.
pub fn readable_tree(caller: &Caller, stored: &StoredDoc) -> Result<RevTree, StoredError> {
    let tree = stored.tree()?;
    if caller.sees_all() {
        return Ok(tree);
    }
    let mut history = History::from(&tree);
    for (rev, body) in history.revs.iter().zip(history.bodies.iter_mut()) {
        if body.is_some() && !may_read(caller, &stored.sync, rev) {
            *body = Some(WITHHELD.to_owned());
        }
    }
    RevTree::try_from(&history).map_err(|e| StoredError::Malformed(e.to_string()))
}

/// Puts back into a [`readable_tree`] the bodies of older revisions a read named (kept until
/// compaction): each as `caller` may read it, by the channels that revision was in (the
/// removal body otherwise), as for a leaf.
pub fn restore_old(caller: &Caller, tree: &mut RevTree, old: Vec<OldRevision>) {
    for revision in old {
        let Ok(rev) = RevId::parse(&revision.rev) else {
            tracing::error!(rev = %revision.rev, "a kept old revision's id does not parse; skipped");
            continue;
        };
        let readable = caller.sees_all()
            || revision
                .channels
                .iter()
                .any(|channel| caller.channels.contains(channel));
        let body = if readable {
            revision.body
        } else {
            WITHHELD.to_owned()
        };
        tree.restore_body(&rev, body);
    }
}

/// Whether a node of a [`readable_tree`] stands for a revision the caller may not read.
pub fn withheld(node: &Node) -> bool {
    node.body.as_deref() == Some(WITHHELD)
}

/// Whether a node of a [`readable_tree`] is readable (it has a body, its own).
pub fn readable(node: &Node) -> bool {
    node.body.is_some() && !withheld(node)
}

/// Whether the caller may read at least one revision of the tree (then `rev=` and
/// `open_revs` answer revision by revision even when the winner is not visible to it).
pub fn any_readable(tree: &RevTree) -> bool {
    tree.leaves().any(readable)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(text: &str) -> RevId {
        RevId::parse(text).expect("valid")
    }

    /// Bob's `2-b` (channel `ch-b`) and Alice's grafted `9-a` (channel `ch-a`), which wins.
    fn grafted() -> StoredDoc {
        let mut tree = RevTree::default();
        tree.insert(rev("1-r"), &[], r#"{"v":1}"#.into(), false);
        tree.insert(
            rev("2-b"),
            &[rev("1-r")],
            r#"{"secret":"bob"}"#.into(),
            false,
        );
        tree.insert(rev("9-a"), &[], r#"{"mine":"alice"}"#.into(), false);
        let mut stored = StoredDoc::of_tree(&tree, 5).expect("a winner");
        stored.sync.rev_channels = [
            ("2-b".to_owned(), vec!["ch-b".to_owned()]),
            ("9-a".to_owned(), vec!["ch-a".to_owned()]),
        ]
        .into();
        stored
    }

    fn user(channels: &[&str]) -> Caller {
        Caller {
            name: Some("u".into()),
            channels: channels.iter().map(|c| (*c).to_owned()).collect(),
            ..Caller::default()
        }
    }

    fn body_of(tree: &RevTree, text: &str) -> Option<String> {
        tree.get(&rev(text)).and_then(|node| node.body.clone())
    }

    #[test]
    fn a_user_reads_the_revisions_in_its_channels_and_not_the_others() {
        let stored = grafted();
        let alice = readable_tree(&user(&["ch-a", "!"]), &stored).expect("tree");
        assert_eq!(
            body_of(&alice, "9-a").as_deref(),
            Some(r#"{"mine":"alice"}"#)
        );
        assert_eq!(body_of(&alice, "2-b").as_deref(), Some(WITHHELD));
        let bob = readable_tree(&user(&["ch-b"]), &stored).expect("tree");
        assert_eq!(body_of(&bob, "2-b").as_deref(), Some(r#"{"secret":"bob"}"#));
        assert_eq!(body_of(&bob, "9-a").as_deref(), Some(WITHHELD));
        assert!(any_readable(&bob));
        assert!(!any_readable(
            &readable_tree(&user(&["ch-c"]), &stored).expect("tree")
        ));
    }

    #[test]
    fn the_admin_reads_every_revision() {
        let stored = grafted();
        let admin = Caller {
            admin: true,
            ..Caller::default()
        };
        let tree = readable_tree(&admin, &stored).expect("tree");
        assert!(tree.leaves().all(readable));
        assert!(may_read(&user(&["*"]), &stored.sync, "2-b"));
    }

    #[test]
    fn an_old_revision_is_restored_to_those_in_its_channels_and_withheld_from_others() {
        let stored = grafted();
        let old = || {
            vec![OldRevision {
                rev: "1-r".into(),
                body: r#"{"v":1}"#.into(),
                channels: vec!["ch-b".into()],
            }]
        };
        let mut bob = readable_tree(&user(&["ch-b"]), &stored).expect("tree");
        restore_old(&user(&["ch-b"]), &mut bob, old());
        assert_eq!(body_of(&bob, "1-r").as_deref(), Some(r#"{"v":1}"#));
        let mut alice = readable_tree(&user(&["ch-a"]), &stored).expect("tree");
        restore_old(&user(&["ch-a"]), &mut alice, old());
        assert_eq!(body_of(&alice, "1-r").as_deref(), Some(WITHHELD));
    }

    #[test]
    fn a_revision_without_recorded_channels_is_read_by_no_user() {
        let stored = grafted();
        assert!(!may_read(&user(&["ch-a", "ch-b"]), &stored.sync, "1-r"));
        assert!(!listed(&stored.sync, "7-x", Some(&["ch-a".to_owned()])));
        assert!(listed(&stored.sync, "7-x", None), "an unfiltered feed");
    }
}
