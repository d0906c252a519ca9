//! The tree's hashes against the RFC's definitions, and proofs built from stored nodes checked
//! by the RFC's verification algorithms, for every size up to 70.

use super::*;
use std::collections::HashMap;

fn leaves(n: u64) -> Vec<Hash> {
    (1..=n).map(|p| event_leaf(p, &[p as u8; 32])).collect()
}

/// Every complete node of a tree of `leaves`, as the tree maker stores them.
fn complete_nodes(leaves: &[Hash]) -> HashMap<NodeId, Hash> {
    let mut nodes = HashMap::new();
    let mut level: Vec<Hash> = leaves.to_vec();
    let mut height = 0;
    while !level.is_empty() {
        for (i, h) in level.iter().enumerate() {
            nodes.insert(
                NodeId {
                    level: height,
                    index: i as u64,
                },
                *h,
            );
        }
        level = level
            .chunks_exact(2)
            .map(|pair| node_hash(&pair[0], &pair[1]))
            .collect();
        height += 1;
    }
    nodes
}

fn hashes(ranges: &[Range], nodes: &HashMap<NodeId, Hash>) -> Vec<Hash> {
    ranges
        .iter()
        .map(|r| r.hash(|id| nodes.get(&id).copied()).expect("stored node"))
        .collect()
}

#[test]
fn the_rfc_known_values_hold() {
    assert_eq!(root(&[]), empty_root());
    assert_eq!(
        hex::encode(empty_root()),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        hex::encode(leaf_hash(b"")),
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    );
    let two = leaves(2);
    assert_eq!(root(&two), node_hash(&two[0], &two[1]));
    let three = leaves(3);
    assert_eq!(
        root(&three),
        node_hash(&node_hash(&three[0], &three[1]), &three[2])
    );
}

#[test]
fn a_range_hashes_as_the_root_of_its_leaves() {
    let all = leaves(70);
    let nodes = complete_nodes(&all);
    for n in 1..=70u64 {
        let whole = Range { start: 0, end: n };
        assert_eq!(
            whole.hash(|id| nodes.get(&id).copied()),
            Some(root(&all[..n as usize]))
        );
    }
}

#[test]
fn every_inclusion_proof_verifies_and_no_altered_one_does() {
    let all = leaves(71);
    let nodes = complete_nodes(&all);
    for n in 1..=70u64 {
        let r = root(&all[..n as usize]);
        for m in 0..n {
            let proof = hashes(&inclusion_ranges(m, n), &nodes);
            let leaf = all[m as usize];
            assert!(verify_inclusion(m, n, &leaf, &proof, &r), "m={m} n={n}");
            assert!(!verify_inclusion(
                m,
                n,
                &all[(m as usize + 1) % 71],
                &proof,
                &r
            ));
            if n > 1 {
                assert!(!verify_inclusion((m + 1) % n, n, &leaf, &proof, &r));
                let mut bent = proof.clone();
                bent[0][0] ^= 1;
                assert!(!verify_inclusion(m, n, &leaf, &bent, &r));
            }
            assert!(!verify_inclusion(
                m,
                n,
                &leaf,
                &proof,
                &root(&all[..n as usize + 1])
            ));
        }
    }
}

#[test]
fn every_consistency_proof_verifies_and_no_altered_one_does() {
    let all = leaves(70);
    let nodes = complete_nodes(&all);
    for n in 1..=70u64 {
        let to_root = root(&all[..n as usize]);
        for m in 1..=n {
            let from_root = root(&all[..m as usize]);
            let proof = hashes(&consistency_ranges(m, n), &nodes);
            assert!(
                verify_consistency(m, n, &from_root, &to_root, &proof),
                "m={m} n={n}"
            );
            if m < n {
                let mut bent = proof.clone();
                bent[0][31] ^= 1;
                assert!(!verify_consistency(m, n, &from_root, &to_root, &bent));
                let other = root(&leaves(m)[..]);
                let mut forked = all[..m as usize].to_vec();
                forked[0][0] ^= 1;
                assert!(!verify_consistency(m, n, &root(&forked), &to_root, &proof));
                assert_eq!(other, from_root, "the same leaves make the same root");
            }
        }
    }
    assert!(verify_consistency(
        0,
        5,
        &empty_root(),
        &root(&all[..5]),
        &[]
    ));
    assert!(!verify_consistency(
        5,
        4,
        &root(&all[..5]),
        &root(&all[..4]),
        &[]
    ));
}

#[test]
fn a_proof_needs_logarithmically_many_nodes() {
    let n = 1_000_000u64;
    let inclusion: usize = inclusion_ranges(777_777, n)
        .iter()
        .map(|r| r.nodes().len())
        .sum();
    let consistency: usize = consistency_ranges(333_333, n)
        .iter()
        .map(|r| r.nodes().len())
        .sum();
    assert!(inclusion <= 2 * 20, "{inclusion}");
    assert!(consistency <= 2 * 20 + 20, "{consistency}");
}
