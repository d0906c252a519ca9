//! The tree in Sync Gateway's stored form: the parallel arrays `revs`, `parents`, `bodies` and
//! the list of `deleted` indexes (`_sync.history` in the spec).

use super::RevTree;
use crate::rev::{BadRev, RevId};
use serde::{Deserialize, Serialize};

/// `_sync.history`: `revs[i]` with parent index `parents[i]` (-1 for a root), body
/// `bodies[i]` (JSON text, or null when not kept), and the indexes of deleted revisions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// The revision ids.
    pub revs: Vec<String>,
    /// Each revision's parent index, -1 for none.
    pub parents: Vec<i64>,
    /// Each revision's body as JSON text, when kept.
    pub bodies: Vec<Option<String>>,
    /// Indexes of the deleted revisions.
    pub deleted: Vec<usize>,
}

impl From<&RevTree> for History {
    fn from(tree: &RevTree) -> History {
        let mut history = History::default();
        for (i, node) in tree.nodes.iter().enumerate() {
            history.revs.push(node.rev.to_string());
            history.parents.push(node.parent.map_or(-1, |p| p as i64));
            history.bodies.push(node.body.clone());
            if node.deleted {
                history.deleted.push(i);
            }
        }
        history
    }
}

impl TryFrom<&History> for RevTree {
    type Error = BadRev;

    /// Rebuilds a tree from its stored form (parents must precede children, as stored).
    fn try_from(history: &History) -> Result<RevTree, BadRev> {
        let mut tree = RevTree::default();
        for (i, rev) in history.revs.iter().enumerate() {
            let rev = RevId::parse(rev)?;
            let parent = history
                .parents
                .get(i)
                .and_then(|p| usize::try_from(*p).ok())
                .filter(|p| *p < i);
            let body = history.bodies.get(i).cloned().flatten();
            let deleted = history.deleted.contains(&i);
            let index = tree.push(rev, parent, deleted, None);
            tree.nodes[index].body = body;
        }
        Ok(tree)
    }
}
