//! What the tree keeps: its complete nodes from [`STORED_LEVEL`] up, and its size.
//!
//! A node below that level is the root of at most 2^[`STORED_LEVEL`] leaves, and a leaf is
//! made from an event's position and stored chain hash alone; so those nodes are made again
//! from `log.events` when a proof or the right edge needs them, instead of costing the log two
//! index inserts for every event it appends (decision 0024, "What the tree stores").

use crate::LogError;
use deadpool_postgres::GenericClient;
use palimpsest_events::merkle::{self, Hash, NodeId};
use std::collections::{BTreeMap, HashMap};

/// The lowest level kept in `log.tree_nodes`: nodes below are made from 16 or fewer leaves.
pub const STORED_LEVEL: u32 = 4;

/// Whether `id` is kept in `log.tree_nodes` (else it is made from its leaves).
pub fn is_stored(id: NodeId) -> bool {
    id.level >= STORED_LEVEL
}

/// The hashes of `ids`: the stored ones and the leaves under the others, read in one round
/// trip. A node whose rows are missing is absent from the answer; the caller names it.
pub(crate) async fn read_nodes(
    client: &impl GenericClient,
    ids: &[NodeId],
) -> Result<HashMap<NodeId, Hash>, LogError> {
    let (stored, made): (Vec<NodeId>, Vec<NodeId>) = ids.iter().partition(|id| is_stored(**id));
    let spans = leaf_spans(&made);
    let (nodes, leaves) = tokio::join!(stored_nodes(client, &stored), leaves(client, &spans));
    let (mut nodes, leaves) = (nodes?, leaves?);
    for id in made {
        let first = id.index << id.level;
        let under: Option<Vec<Hash>> = (first..first + (1 << id.level))
            .map(|i| leaves.get(&i).copied())
            .collect();
        if let Some(under) = under {
            nodes.insert(id, merkle::root(&under));
        }
    }
    Ok(nodes)
}

/// Stores `nodes` (those at [`STORED_LEVEL`] and up) and the tree's new `size` in one
/// statement, so a size is never kept without the nodes it completes. A node stored before
/// keeps its hash.
pub(crate) async fn store(
    client: &impl GenericClient,
    nodes: &[(NodeId, Hash)],
    size: u64,
) -> Result<(), LogError> {
    let kept = nodes.iter().filter(|(id, _)| is_stored(*id));
    let (levels, indexes, hashes): (Vec<i16>, Vec<i64>, Vec<Vec<u8>>) = kept.fold(
        (Vec::new(), Vec::new(), Vec::new()),
        |(mut l, mut i, mut h), (id, hash)| {
            l.push(id.level as i16);
            i.push(id.index as i64);
            h.push(hash.to_vec());
            (l, i, h)
        },
    );
    client
        .execute(
            "WITH kept AS (INSERT INTO log.tree_nodes (level, index, hash) \
                 SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::bytea[]) \
                 ON CONFLICT (level, index) DO NOTHING) \
             UPDATE log.tree_size SET size = $4",
            &[&levels, &indexes, &hashes, &(size as i64)],
        )
        .await?;
    Ok(())
}

/// Leaves in the tree.
pub async fn tree_size(client: &impl GenericClient) -> Result<u64, LogError> {
    let row = client
        .query_one("SELECT size FROM log.tree_size", &[])
        .await?;
    Ok(row.get::<_, i64>(0) as u64)
}

async fn stored_nodes(
    client: &impl GenericClient,
    ids: &[NodeId],
) -> Result<HashMap<NodeId, Hash>, LogError> {
    let levels: Vec<i16> = ids.iter().map(|n| n.level as i16).collect();
    let indexes: Vec<i64> = ids.iter().map(|n| n.index as i64).collect();
    let rows = client
        .query(
            "SELECT n.level, n.index, n.hash FROM unnest($1::smallint[], $2::bigint[]) AS w(l, i) \
             JOIN log.tree_nodes n ON n.level = w.l AND n.index = w.i",
            &[&levels, &indexes],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let id = NodeId {
                level: r.get::<_, i16>(0) as u32,
                index: r.get::<_, i64>(1) as u64,
            };
            (id, super::signer::to_hash(r.get(2)))
        })
        .collect())
}

/// The leaf indexes under `made`, as inclusive ranges of positions, overlapping ones merged.
fn leaf_spans(made: &[NodeId]) -> Vec<(i64, i64)> {
    let mut spans: Vec<(i64, i64)> = made
        .iter()
        .map(|id| {
            let first = (id.index << id.level) as i64;
            (first + 1, first + (1 << id.level))
        })
        .collect();
    spans.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 + 1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// The leaves (by index) of the positions in `spans`, from each event's stored hash. A hash
/// that is not 32 bytes makes no leaf: the node over it is then missing.
async fn leaves(
    client: &impl GenericClient,
    spans: &[(i64, i64)],
) -> Result<BTreeMap<u64, Hash>, LogError> {
    if spans.is_empty() {
        return Ok(BTreeMap::new());
    }
    let (starts, ends): (Vec<i64>, Vec<i64>) = spans.iter().copied().unzip();
    let rows = client
        .query(
            "SELECT e.position, e.hash FROM unnest($1::bigint[], $2::bigint[]) AS s(a, b) \
             JOIN log.events e ON e.position BETWEEN s.a AND s.b",
            &[&starts, &ends],
        )
        .await?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            let position = r.get::<_, i64>(0) as u64;
            let hash = <[u8; 32]>::try_from(r.get::<_, &[u8]>(1)).ok()?;
            Some((position - 1, merkle::event_leaf(position, &hash)))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leaves_under_nodes_below_the_stored_level_are_read_once() {
        let made = [
            NodeId { level: 0, index: 0 },
            NodeId { level: 2, index: 0 },
            NodeId { level: 1, index: 5 },
            NodeId { level: 3, index: 4 },
        ];
        // Positions 1..=4 (leaves 0..=3); 11..=12 (leaves 10, 11); 33..=40 (leaves 32..=39).
        assert_eq!(leaf_spans(&made), vec![(1, 4), (11, 12), (33, 40)]);
    }

    #[test]
    fn nodes_from_the_stored_level_up_are_kept_and_the_others_made() {
        assert!(!is_stored(NodeId { level: 3, index: 9 }));
        assert!(is_stored(NodeId {
            level: STORED_LEVEL,
            index: 0
        }));
    }
}
