//! Proofs and heads as the `/v1/log` routes serve them, made from the stored tree: every
//! subtree a proof needs is a node or the root of a few (the tree's ragged right edge), read in
//! one round trip with the tree's size: stored nodes, and the leaves under the low ones
//! ([`palimpsest_events::merkle`] says which nodes; [`super::nodes`] where each comes from).

use super::nodes::{read_nodes, tree_size};
use crate::LogError;
use deadpool_postgres::GenericClient;
use palimpsest_events::merkle::{self, Hash, NodeId, Range};
use palimpsest_events::tree_head::{SignedTreeHead, TreeHead};
use serde::Serialize;
use uuid::Uuid;

/// Why a proof cannot be given.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    /// The request asks for what the tree does not hold (yet): a 400 naming it.
    #[error("{0}")]
    OutOfRange(String),
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
}

/// An inclusion proof (RFC 9162 §2.1.3) of the event at `position` in the tree of `tree_size`.
#[derive(Debug, Clone, Serialize)]
pub struct InclusionProof {
    /// The event's position (leaf index + 1).
    pub position: u64,
    /// The tree the proof is for.
    pub tree_size: u64,
    /// The leaf, hex.
    pub leaf_hash: String,
    /// The sibling hashes, nearest the leaf first, hex.
    pub audit_path: Vec<String>,
}

/// A consistency proof (RFC 9162 §2.1.4) from the tree of `from` leaves to that of `to`.
#[derive(Debug, Clone, Serialize)]
pub struct ConsistencyProof {
    /// The older tree's size.
    pub from: u64,
    /// The newer tree's size.
    pub to: u64,
    /// The proof's hashes, hex.
    pub proof: Vec<String>,
}

/// The inclusion proof of `position` in the tree of `tree_size` leaves.
pub async fn inclusion(
    client: &impl GenericClient,
    position: u64,
    tree_size: u64,
) -> Result<InclusionProof, ProofError> {
    if position == 0 || position > tree_size {
        return Err(ProofError::OutOfRange(format!(
            "position must be between 1 and tree_size ({tree_size})"
        )));
    }
    let leaf = NodeId {
        level: 0,
        index: position - 1,
    };
    let ranges = merkle::inclusion_ranges(position - 1, tree_size);
    // The size check and the nodes' read go out together: one round trip. `biased` keeps them
    // in this order on the wire (plain `join!` takes turns), so the nodes are read in a
    // snapshot no older than the check's: the size and its nodes are stored in one statement.
    let (held, hashes) = tokio::join!(
        biased;
        within(client, tree_size),
        hashes(client, &ranges, Some(leaf))
    );
    held?;
    let mut hashes = hashes?;
    let leaf_hash = hashes.pop().unwrap_or_default();
    Ok(InclusionProof {
        position,
        tree_size,
        leaf_hash,
        audit_path: hashes,
    })
}

/// The consistency proof from the tree of `from` leaves to that of `to`.
pub async fn consistency(
    client: &impl GenericClient,
    from: u64,
    to: u64,
) -> Result<ConsistencyProof, ProofError> {
    if from > to {
        return Err(ProofError::OutOfRange(format!(
            "from ({from}) must not exceed to ({to})"
        )));
    }
    let ranges = merkle::consistency_ranges(from, to);
    // In this order, as for an inclusion proof.
    let (held, proof) = tokio::join!(
        biased;
        within(client, to),
        hashes(client, &ranges, None)
    );
    held?;
    let proof = proof?;
    Ok(ConsistencyProof { from, to, proof })
}

/// The root of the first `size` leaves, from the stored tree.
pub async fn root(client: &impl GenericClient, size: u64) -> Result<Hash, ProofError> {
    within(client, size).await?;
    if size == 0 {
        return Ok(merkle::empty_root());
    }
    let range = Range {
        start: 0,
        end: size,
    };
    let nodes = read_nodes(client, &range.nodes()).await?;
    range.hash(|id| nodes.get(&id).copied()).ok_or_else(|| {
        LogError::Tree(format!("a node of the first {size} leaves is missing")).into()
    })
}

/// Refuses a size beyond the tree.
async fn within(client: &impl GenericClient, size: u64) -> Result<(), ProofError> {
    let have = tree_size(client).await?;
    if size > have {
        return Err(ProofError::OutOfRange(format!(
            "the tree holds {have} leaves; {size} asked"
        )));
    }
    Ok(())
}

/// The hex hashes of `ranges` (then of `extra`, last), from one read of their nodes.
async fn hashes(
    client: &impl GenericClient,
    ranges: &[Range],
    extra: Option<NodeId>,
) -> Result<Vec<String>, ProofError> {
    let mut ids: Vec<NodeId> = ranges.iter().flat_map(|r| r.nodes()).collect();
    ids.extend(extra);
    let nodes = read_nodes(client, &ids).await?;
    let get = |id: NodeId| nodes.get(&id).copied();
    let mut out = Vec::with_capacity(ranges.len() + 1);
    for range in ranges {
        let hash = range.hash(get).ok_or_else(|| {
            LogError::Tree(format!(
                "a node of leaves {}..{} is missing",
                range.start, range.end
            ))
        })?;
        out.push(hex::encode(hash));
    }
    if let Some(id) = extra {
        let hash =
            get(id).ok_or_else(|| LogError::Tree(format!("leaf {} is missing", id.index)))?;
        out.push(hex::encode(hash));
    }
    Ok(out)
}

/// The latest signed head, or the one of `tree_size`; `None` if there is none.
pub async fn head(
    client: &impl GenericClient,
    log_id: Uuid,
    tree_size: Option<u64>,
) -> Result<Option<SignedTreeHead>, LogError> {
    let row = match tree_size {
        Some(size) => {
            client
                .query_opt(
                    "SELECT tree_size, timestamp_ms, root_hash, signature FROM log.tree_heads \
                     WHERE tree_size = $1",
                    &[&(size as i64)],
                )
                .await?
        }
        None => {
            client
                .query_opt(
                    "SELECT tree_size, timestamp_ms, root_hash, signature FROM log.tree_heads \
                     ORDER BY tree_size DESC LIMIT 1",
                    &[],
                )
                .await?
        }
    };
    Ok(row.map(|r| {
        let root: Vec<u8> = r.get(2);
        let signature: Vec<u8> = r.get(3);
        SignedTreeHead {
            head: TreeHead {
                log_id,
                tree_size: r.get::<_, i64>(0) as u64,
                timestamp: r.get::<_, i64>(1) as u64,
                root_hash: root.try_into().unwrap_or([0u8; 32]),
            },
            signature: signature.try_into().unwrap_or([0u8; 64]),
        }
    }))
}
