//! The revision tree of one document: every revision with its parent, deleted flag and (for
//! leaves) body; CouchDB's winner rule; grafting replicated ancestry; pruning.
//!
//! Invariants: a revision appears once; a node's parent is inserted before it (indexes only
//! point backwards); leaves keep their bodies, a revision that gains a child forgets its body
//! (CouchDB keeps only leaf bodies after compaction; replicators only ask for leaves).

mod history;
#[cfg(test)]
mod tests;

pub use history::History;

use crate::rev::RevId;
use std::collections::HashMap;

/// One revision in the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its id.
    pub rev: RevId,
    /// The index of its parent; `None` for a root (or where pruning cut the ancestry).
    pub parent: Option<usize>,
    /// Whether it is a deletion.
    pub deleted: bool,
    /// Its body as JSON text, while it is a leaf.
    pub body: Option<String>,
    /// How many children it has (a leaf has none).
    pub children: usize,
}

/// Every revision of one document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RevTree {
    nodes: Vec<Node>,
    index: HashMap<RevId, usize>,
}

impl RevTree {
    /// Whether the tree has no revision (the document was never written).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Every node, parents before children.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The node of `rev`, if the tree holds it.
    pub fn get(&self, rev: &RevId) -> Option<&Node> {
        self.index.get(rev).map(|&i| &self.nodes[i])
    }

    /// Whether the tree holds `rev`.
    pub fn contains(&self, rev: &RevId) -> bool {
        self.index.contains_key(rev)
    }

    /// Whether `rev` is a leaf of the tree.
    pub fn is_leaf(&self, rev: &RevId) -> bool {
        self.get(rev).is_some_and(|n| n.children == 0)
    }

    /// The leaves, in tree order.
    pub fn leaves(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.children == 0)
    }

    /// CouchDB's winning revision: non-deleted leaves before deleted ones, then the highest
    /// generation, then the highest digest.
    pub fn winner(&self) -> Option<&Node> {
        self.leaves()
            .max_by(|a, b| (!a.deleted, &a.rev).cmp(&(!b.deleted, &b.rev)))
    }

    /// The leaves other than the winner that are not deleted: CouchDB's `_conflicts`.
    pub fn conflicts(&self) -> Vec<&Node> {
        let winner = self.winner().map(|w| w.rev.clone());
        let mut out: Vec<&Node> = self
            .leaves()
            .filter(|n| !n.deleted && Some(&n.rev) != winner.as_ref())
            .collect();
        out.sort_by(|a, b| b.rev.cmp(&a.rev));
        out
    }

    /// The deleted leaves other than the winner: CouchDB's `_deleted_conflicts`.
    pub fn deleted_conflicts(&self) -> Vec<&Node> {
        let winner = self.winner().map(|w| w.rev.clone());
        let mut out: Vec<&Node> = self
            .leaves()
            .filter(|n| n.deleted && Some(&n.rev) != winner.as_ref())
            .collect();
        out.sort_by(|a, b| b.rev.cmp(&a.rev));
        out
    }

    /// The revisions from `rev` up to the oldest ancestor the tree holds, `rev` first.
    pub fn path(&self, rev: &RevId) -> Vec<&Node> {
        let mut out = Vec::new();
        let mut at = self.index.get(rev).copied();
        while let Some(i) = at {
            out.push(&self.nodes[i]);
            at = self.nodes[i].parent;
        }
        out
    }

    /// The leaves that descend from `rev` (itself when it is a leaf), highest first: what
    /// `latest=true` answers for a revision that was superseded.
    pub fn leaves_under(&self, rev: &RevId) -> Vec<&Node> {
        let mut out: Vec<&Node> = self
            .leaves()
            .filter(|leaf| self.path(&leaf.rev).iter().any(|n| &n.rev == rev))
            .collect();
        out.sort_by(|a, b| b.rev.cmp(&a.rev));
        out
    }

    /// Gives `rev`, a revision that is no longer a leaf (so without its body in the tree), the
    /// body kept for it until compaction, for a read that names it. A revision with a body, or
    /// one the tree does not hold, is left as it is.
    pub fn restore_body(&mut self, rev: &RevId, body: String) {
        if let Some(&i) = self.index.get(rev)
            && self.nodes[i].body.is_none()
        {
            self.nodes[i].body = Some(body);
        }
    }

    /// Adds `rev` with its `ancestry` (parent first): the ancestors the tree does not hold are
    /// grafted below the first one it holds (or as a new root when it holds none). Adding a
    /// revision the tree already holds changes nothing.
    pub fn insert(&mut self, rev: RevId, ancestry: &[RevId], body: String, deleted: bool) {
        if self.contains(&rev) {
            return;
        }
        let known = ancestry.iter().position(|a| self.contains(a));
        let missing = &ancestry[..known.unwrap_or(ancestry.len())];
        let mut parent = known.and_then(|k| self.index.get(&ancestry[k]).copied());
        for ancestor in missing.iter().rev() {
            parent = Some(self.push(ancestor.clone(), parent, false, None));
        }
        self.push(rev, parent, deleted, Some(body));
    }

    fn push(
        &mut self,
        rev: RevId,
        parent: Option<usize>,
        deleted: bool,
        body: Option<String>,
    ) -> usize {
        if let Some(p) = parent {
            let node = &mut self.nodes[p];
            node.children += 1;
            node.body = None;
        }
        let index = self.nodes.len();
        self.index.insert(rev.clone(), index);
        self.nodes.push(Node {
            rev,
            parent,
            deleted,
            body,
            children: 0,
        });
        index
    }

    /// Keeps, for every leaf, the leaf and its nearest `limit - 1` ancestors; drops the rest.
    /// Conflicting branches survive (each leaf keeps its own path); a kept node whose parent is
    /// dropped becomes a root.
    pub fn prune(&mut self, limit: usize) {
        let limit = limit.max(1);
        let mut keep = vec![false; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            if node.children != 0 {
                continue;
            }
            let mut at = Some(i);
            for _ in 0..limit {
                let Some(j) = at else { break };
                keep[j] = true;
                at = self.nodes[j].parent;
            }
        }
        if keep.iter().all(|k| *k) {
            return;
        }
        let old = std::mem::take(&mut self.nodes);
        let mut new_index = vec![None; old.len()];
        self.index.clear();
        for (i, mut node) in old.into_iter().enumerate() {
            if !keep[i] {
                continue;
            }
            node.parent = node.parent.and_then(|p| new_index[p]);
            new_index[i] = Some(self.nodes.len());
            self.index.insert(node.rev.clone(), self.nodes.len());
            self.nodes.push(node);
        }
    }
}
