//! The tree's right edge: the complete subtrees that make up the tree so far, largest first.
//! Appending a leaf merges equal neighbours into their parent, so each append yields the new
//! leaf and every node it completes, of which the tree maker stores those from
//! [`super::nodes::STORED_LEVEL`] up.

use super::nodes::read_nodes;
use crate::LogError;
use deadpool_postgres::GenericClient;
use palimpsest_events::merkle::{self, Hash, NodeId, Range};

/// The complete subtrees of a tree of [`Frontier::size`] leaves.
#[derive(Debug, Clone, Default)]
pub struct Frontier {
    pieces: Vec<(NodeId, Hash)>,
    size: u64,
}

impl Frontier {
    /// Leaves so far.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Reads the right edge of the stored tree of `size` leaves (its nodes below the stored
    /// level made from their leaves).
    pub async fn load(client: &impl GenericClient, size: u64) -> Result<Frontier, LogError> {
        let ids = Range {
            start: 0,
            end: size,
        }
        .nodes();
        let nodes = read_nodes(client, &ids).await?;
        let mut pieces = Vec::with_capacity(ids.len());
        for id in ids {
            let hash = nodes.get(&id).copied().ok_or_else(|| missing(id))?;
            pieces.push((id, hash));
        }
        Ok(Frontier { pieces, size })
    }

    /// Appends `leaf`; pushes the leaf's node and every node it completes onto `new`.
    pub fn push(&mut self, leaf: Hash, new: &mut Vec<(NodeId, Hash)>) {
        let mut node = (
            NodeId {
                level: 0,
                index: self.size,
            },
            leaf,
        );
        self.size += 1;
        new.push(node);
        while let Some(&(left, left_hash)) = self.pieces.last() {
            if left.level != node.0.level {
                break;
            }
            self.pieces.pop();
            node = (
                NodeId {
                    level: left.level + 1,
                    index: left.index >> 1,
                },
                merkle::node_hash(&left_hash, &node.1),
            );
            new.push(node);
        }
        self.pieces.push(node);
    }

    /// The Merkle Tree Hash of every leaf so far.
    pub fn root(&self) -> Hash {
        let mut pieces = self.pieces.iter().rev();
        let Some(&(_, mut acc)) = pieces.next() else {
            return merkle::empty_root();
        };
        for (_, left) in pieces {
            acc = merkle::node_hash(left, &acc);
        }
        acc
    }
}

fn missing(id: NodeId) -> LogError {
    LogError::Tree(format!(
        "the tree's node at level {} index {} is missing",
        id.level, id.index
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_right_edge_roots_as_the_whole_tree_and_yields_every_complete_node() {
        let leaves: Vec<Hash> = (1..=37u64)
            .map(|p| merkle::event_leaf(p, &[3; 32]))
            .collect();
        let mut frontier = Frontier::default();
        let mut stored = Vec::new();
        for (n, leaf) in leaves.iter().enumerate() {
            frontier.push(*leaf, &mut stored);
            assert_eq!(frontier.root(), merkle::root(&leaves[..=n]));
        }
        // 37 leaves, 18 + 9 + 4 + 2 + 1 complete interior nodes.
        assert_eq!(stored.len(), 37 + 18 + 9 + 4 + 2 + 1);
    }
}
