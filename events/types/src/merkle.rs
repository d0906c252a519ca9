//! The Merkle tree over the whole log, in RFC 9162 §2.1 form (Certificate Transparency 2.0).
//!
//! One leaf per position: the entry of position `p` is `u64be(p) ‖ hash`, the event's chain
//! hash (which covers its content and its stream's previous hash), so a leaf changes when an
//! event is edited, moved or renumbered. Everything here is pure: the tree's hashes, which
//! stored nodes a proof needs ([`inclusion_ranges`], [`consistency_ranges`], [`Range::nodes`]),
//! and the RFC's verification algorithms, which a consumer runs on proofs served by
//! `/v1/log/proof/*` without trusting the server.

use sha2::{Digest, Sha256};

/// A SHA-256 hash: a leaf, a node, a root.
pub type Hash = [u8; 32];

/// The 40 bytes a position's leaf hashes: `u64be(position) ‖ event hash`.
pub fn entry(position: u64, event_hash: &Hash) -> [u8; 40] {
    let mut out = [0u8; 40];
    out[..8].copy_from_slice(&position.to_be_bytes());
    out[8..].copy_from_slice(event_hash);
    out
}

/// `SHA-256(0x00 ‖ entry)`: the leaf hash of RFC 9162 §2.1.1.
pub fn leaf_hash(entry: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(entry);
    h.finalize().into()
}

/// The leaf of the event at `position` whose chain hash is `event_hash`.
pub fn event_leaf(position: u64, event_hash: &Hash) -> Hash {
    leaf_hash(&entry(position, event_hash))
}

/// `SHA-256(0x01 ‖ left ‖ right)`: an interior node.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The root of the empty tree: `SHA-256()` of nothing.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// The Merkle Tree Hash of `leaves` (leaf hashes, in order).
pub fn root(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => empty_root(),
        1 => leaves[0],
        n => {
            let k = split(n as u64) as usize;
            node_hash(&root(&leaves[..k]), &root(&leaves[k..]))
        }
    }
}

/// The largest power of two smaller than `n` (`n ≥ 2`): where the RFC splits a tree.
fn split(n: u64) -> u64 {
    1 << (63 - (n - 1).leading_zeros())
}

/// A complete subtree: the node at `level` and `index` is the root of leaves
/// `[index·2^level, (index+1)·2^level)`. Level 0 is the leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId {
    /// Height above the leaves.
    pub level: u32,
    /// Position among the nodes of that level, from 0.
    pub index: u64,
}

/// The leaves `[start, end)` of the tree, as a proof names a subtree by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// First leaf index.
    pub start: u64,
    /// One past the last leaf index.
    pub end: u64,
}

impl Range {
    /// The complete subtrees that make up this range, largest first: the binary decomposition
    /// of its size from its start. A range that the RFC's recursion produces always starts
    /// aligned, so each piece is a stored node.
    pub fn nodes(&self) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut start = self.start;
        let mut left = self.end - self.start;
        while left > 0 {
            let level = 63 - left.leading_zeros();
            out.push(NodeId {
                level,
                index: start >> level,
            });
            start += 1 << level;
            left -= 1 << level;
        }
        out
    }

    /// The Merkle Tree Hash of this range from the hashes of its [`Range::nodes`], folded from
    /// the right as the RFC's split does; `None` when a node is missing.
    pub fn hash(&self, node: impl Fn(NodeId) -> Option<Hash>) -> Option<Hash> {
        let mut pieces = self.nodes().into_iter().rev();
        let mut acc = node(pieces.next()?)?;
        for piece in pieces {
            acc = node_hash(&node(piece)?, &acc);
        }
        Some(acc)
    }
}

/// The subtrees whose roots form the inclusion proof of leaf `index` in a tree of `size`
/// leaves (RFC 9162 §2.1.3.1, PATH), in the proof's order: nearest the leaf first.
pub fn inclusion_ranges(index: u64, size: u64) -> Vec<Range> {
    let mut out = Vec::new();
    path(index, 0, size, &mut out);
    out
}

fn path(m: u64, start: u64, n: u64, out: &mut Vec<Range>) {
    if n <= 1 {
        return;
    }
    let k = split(n);
    if m < k {
        path(m, start, k, out);
        out.push(Range {
            start: start + k,
            end: start + n,
        });
    } else {
        path(m - k, start + k, n - k, out);
        out.push(Range {
            start,
            end: start + k,
        });
    }
}

/// The subtrees whose roots form the consistency proof from a tree of `from` leaves to one of
/// `to` (RFC 9162 §2.1.4.1, PROOF and SUBPROOF), in the proof's order. Empty when
/// `from` is 0 or equals `to`.
pub fn consistency_ranges(from: u64, to: u64) -> Vec<Range> {
    let mut out = Vec::new();
    if from > 0 && from < to {
        subproof(from, 0, to, true, &mut out);
    }
    out
}

fn subproof(m: u64, start: u64, n: u64, whole: bool, out: &mut Vec<Range>) {
    if m == n {
        if !whole {
            out.push(Range {
                start,
                end: start + n,
            });
        }
        return;
    }
    let k = split(n);
    if m <= k {
        subproof(m, start, k, whole, out);
        out.push(Range {
            start: start + k,
            end: start + n,
        });
    } else {
        subproof(m - k, start + k, n - k, false, out);
        out.push(Range {
            start,
            end: start + k,
        });
    }
}

/// Checks an inclusion proof (RFC 9162 §2.1.3.2): that `leaf` is leaf `index` of the tree of
/// `size` leaves whose root is `root`.
pub fn verify_inclusion(index: u64, size: u64, leaf: &Hash, proof: &[Hash], root: &Hash) -> bool {
    if index >= size {
        return false;
    }
    let (mut f, mut s) = (index, size - 1);
    let mut r = *leaf;
    for p in proof {
        if s == 0 {
            return false;
        }
        if f & 1 == 1 || f == s {
            r = node_hash(p, &r);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = node_hash(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    s == 0 && r == *root
}

/// Checks a consistency proof (RFC 9162 §2.1.4.2): that the tree of `from` leaves with root
/// `from_root` is a prefix of the tree of `to` leaves with root `to_root`.
pub fn verify_consistency(
    from: u64,
    to: u64,
    from_root: &Hash,
    to_root: &Hash,
    proof: &[Hash],
) -> bool {
    if from > to {
        return false;
    }
    if from == to {
        return proof.is_empty() && from_root == to_root;
    }
    if from == 0 {
        return proof.is_empty() && *from_root == empty_root();
    }
    let mut path: Vec<Hash> = Vec::with_capacity(proof.len() + 1);
    if from.is_power_of_two() {
        path.push(*from_root);
    }
    path.extend_from_slice(proof);
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    let (mut f, mut s) = (from - 1, to - 1);
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    let (mut fr, mut sr) = (*first, *first);
    for c in rest {
        if s == 0 {
            return false;
        }
        if f & 1 == 1 || f == s {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            sr = node_hash(&sr, c);
        }
        f >>= 1;
        s >>= 1;
    }
    fr == *from_root && sr == *to_root && s == 0
}

#[cfg(test)]
mod tests;
